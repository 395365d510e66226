//! `rostrace demo`: runs the demo ROS 2 system (two processes, seven nodes, ros2-client over
//! RustDDS) under an embedded-tracer session, then analyzes and reports the trace.

use crate::out::fail;
use crate::out::{out, outln};
use crate::record::{RecordOptions, Recording};
use crate::text::{say, summary};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rostrace_demo::{Role, Tally};
use std::ffi::OsString;
use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// File of the session directory with what each demo process counted.
pub const COUNTS_FILE: &str = "demo-counts.json";

/// Arguments of `rostrace demo`.
#[derive(clap::Args)]
pub struct Args {
    /// How long the system runs, in seconds.
    #[arg(long, default_value_t = 5.0, value_name = "SECS")]
    duration: f64,
    /// Trace directory (default: the session's, demo-YYYYMMDDHHMMSS in $ROS_TRACE_DIR, else
    /// $ROS_HOME/tracing, else ~/.ros/tracing); not `-`: a directory cannot go to standard output.
    #[arg(short, long, value_name = "DIR")]
    output: Option<PathBuf>,
    #[command(flatten)]
    record: RecordOptions,
    /// DDS domain (default: $ROS_DOMAIN_ID, else 0). Nodes on the same domain see each other.
    #[arg(long, value_name = "ID")]
    domain: Option<u16>,
    /// Also write the analysis as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Rows of each table in the report (0: all).
    #[arg(long, default_value_t = 25)]
    top: usize,
    /// Multiply one callback's simulated work by FACTOR (default 2), e.g. to try `rostrace diff`
    /// on a known regression: `NODE:TOPIC` for a subscription or service, `NODE:timer` for a
    /// timer, e.g. `/localization/fusion:/sensing/points_filtered=2`. Repeatable.
    #[arg(long, value_name = "CALLBACK[=FACTOR]", value_parser = rostrace_demo::work::parse_slow)]
    slow: Vec<(String, f64)>,
    /// Shift every timer of the demo by MS milliseconds (below 10). The demo's timers tick at
    /// fixed phases on the monotonic clock, the same in every run; two demos run side by side
    /// (e.g. a base and a `--slow` run, to compare them under the same load) would otherwise wake
    /// at the same instants and contend for the CPU.
    #[arg(long, value_name = "MS", value_parser = rostrace_demo::work::parse_phase, default_value = "0")]
    phase: Duration,
    /// Run one process of the demo (used by `rostrace demo` itself).
    #[arg(long, hide = true, value_name = "ROLE")]
    process: Option<String>,
    /// A program of your own to run beside the demo's processes, traced in the same session
    /// (libtracetools.so preloaded, as `rostrace record` does) on the same DDS domain
    /// (ROS_DOMAIN_ID set): e.g. an rclpy node that talks to the demo's Rust nodes. It gets
    /// SIGINT when the demo's time is up. A line of its stdout that is a demo count
    /// (`{"process": ..., "published": {...}, "received": {...}}`) joins the demo's counts.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// One process of the demo: runs, then prints its counts as one JSON line.
fn child(role: &str, domain: u16, duration: Duration, a: Args) -> std::io::Result<ExitCode> {
    rostrace_demo::work::set_slow(a.slow);
    rostrace_demo::work::set_phase(a.phase);
    let Some(role) = Role::from_name(role) else { return fail(format!("unknown demo process {role:?}")) };
    let name = std::ffi::CString::new(role.name()).unwrap_or_default();
    // SAFETY: PR_SET_NAME reads a NUL-terminated string (truncated to 15 bytes); the handler only stores an atomic.
    unsafe {
        libc::prctl(libc::PR_SET_NAME, name.as_ptr());
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
    match rostrace_demo::run(role, domain, duration, &STOP) {
        Ok(t) => {
            outln!("{}", serde_json::to_string(&t).map_err(std::io::Error::other)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => fail(format!("demo process {}: {e}", role.name())),
    }
}

fn spawn(role: Role, rec: &Recording, domain: u16, a: &Args) -> std::io::Result<Child> {
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.args([
        "demo",
        "--process",
        role.name(),
        "--domain",
        &domain.to_string(),
        "--duration",
        &a.duration.to_string(),
    ]);
    cmd.arg(format!("--phase={}", a.phase.as_secs_f64() * 1e3));
    for (label, factor) in &a.slow {
        cmd.arg(format!("--slow={label}={factor}"));
    }
    cmd.env_remove(tracetools::env::BACKEND).stdout(Stdio::piped());
    // They link rostrace's tracer: what a preload would add is for the command beside them.
    for (k, v) in rec.env().iter().filter(|(k, _)| k != "LD_PRELOAD" && k != "LD_LIBRARY_PATH") {
        cmd.env(k, v);
    }
    cmd.spawn()
}

/// The user's command beside the demo: its process, and what its stdout said.
struct Beside {
    name: String,
    child: Child,
    output: std::thread::JoinHandle<Vec<Tally>>,
}

impl Beside {
    fn spawn(command: &[OsString], rec: &Recording, domain: u16) -> std::io::Result<Beside> {
        let mut cmd = Command::new(&command[0]);
        cmd.args(&command[1..]).env("ROS_DOMAIN_ID", domain.to_string()).stdout(Stdio::piped());
        for (k, v) in rec.env() {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn()?;
        let stdout = child.stdout.take();
        // Its stdout goes on to ours as it comes, but for the lines that are demo counts.
        let output = std::thread::spawn(move || {
            use std::io::{BufRead, Write};
            let mut tallies = Vec::new();
            let Some(out) = stdout else { return tallies };
            for line in std::io::BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                match serde_json::from_str::<Tally>(&line) {
                    Ok(t) if !t.process.is_empty() => tallies.push(t),
                    _ => {
                        let _ = writeln!(std::io::stdout().lock(), "{line}");
                    }
                }
            }
            tallies
        });
        let name = command.iter().map(|c| c.to_string_lossy()).collect::<Vec<_>>().join(" ");
        Ok(Beside { name, child, output })
    }

    /// Stops the command when it still runs (SIGINT, then SIGKILL after 10 s), and returns what it
    /// counted, and why it failed: it fails when it ends with an error of its own (a code other
    /// than 0, or 130 and SIGINT after the SIGINT the demo sent).
    fn finish(mut self) -> (Vec<Tally>, Result<(), String>) {
        let mut signalled = false;
        if matches!(self.child.try_wait(), Ok(None)) {
            signalled = true;
            // SAFETY: kill(2) with our own child's pid and a valid signal.
            unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGINT) };
            let deadline = Instant::now() + Duration::from_secs(10);
            while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            if matches!(self.child.try_wait(), Ok(None)) {
                crate::out::errln!("rostrace: `{}` did not stop 10 s after SIGINT: killed", self.name);
                let _ = self.child.kill();
            }
        }
        let status = self.child.wait();
        let tallies = self.output.join().unwrap_or_default();
        let status = match status {
            Ok(s) => s,
            Err(e) => return (tallies, Err(format!("`{}`: {e}", self.name))),
        };
        let code = crate::record::exit_code_of(status);
        let interrupted = signalled || crate::record::interrupted();
        if code == 0 || (interrupted && code == crate::record::INTERRUPTED_EXIT) {
            (tallies, Ok(()))
        } else {
            (tallies, Err(format!("`{}` ended with {status}", self.name)))
        }
    }
}

/// Waits for the processes; shows the time left on a terminal.
fn wait(children: Vec<(Role, Child)>, duration: f64) -> Vec<(Role, Result<Tally, String>)> {
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = ProgressBar::with_draw_target(Some((duration * 10.0) as u64), ProgressDrawTarget::stderr_with_hz(5));
        b.set_style(
            ProgressStyle::with_template("demo running [{bar:40}] {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b
    });
    let start = Instant::now();
    let mut out = Vec::new();
    let mut pending = children;
    while !pending.is_empty() {
        let mut still = Vec::new();
        for (role, mut c) in pending {
            match c.try_wait() {
                Ok(Some(status)) => {
                    let mut s = String::new();
                    if let Some(mut o) = c.stdout.take() {
                        let _ = o.read_to_string(&mut s);
                    }
                    let tally = match s.lines().rev().find_map(|l| serde_json::from_str::<Tally>(l).ok()) {
                        Some(t) if status.success() => Ok(t),
                        _ => Err(format!("demo process {} ended with {status}", role.name())),
                    };
                    out.push((role, tally));
                }
                Ok(None) => still.push((role, c)),
                Err(e) => out.push((role, Err(format!("demo process {}: {e}", role.name())))),
            }
        }
        pending = still;
        if let Some(b) = &bar {
            b.set_position((start.elapsed().as_secs_f64() * 10.0) as u64);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if let Some(b) = bar {
        if crate::record::interrupted() {
            b.set_style(
                ProgressStyle::with_template("demo interrupted [{bar:40}] {elapsed}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.abandon();
        } else {
            b.finish_and_clear();
        }
    }
    out
}

fn counts_table(tallies: &[Tally]) -> String {
    use std::fmt::Write as _;
    let mut s = String::from("\nWhat the demo's nodes counted\n");
    let w = tallies.iter().map(|t| t.process.len()).max().unwrap_or(8).max(8);
    for t in tallies {
        for (topic, n) in &t.published {
            let _ = writeln!(s, "  {:<w$} published {n:>6}  {topic}", t.process);
        }
        for (topic, n) in &t.received {
            let _ = writeln!(s, "  {:<w$} received  {n:>6}  {topic}", t.process);
        }
        for (svc, n) in &t.requests_sent {
            let _ = writeln!(
                s,
                "  {:<w$} requests  {n:>6}  {svc} (responses {})",
                t.process,
                t.responses_received.get(svc).unwrap_or(&0)
            );
        }
        for (svc, n) in &t.requests_served {
            let _ = writeln!(s, "  {:<w$} served    {n:>6}  {svc}", t.process);
        }
        for (what, n) in &t.read_errors {
            let _ = writeln!(s, "  {:<w$} read errors {n} on {what}", t.process);
        }
    }
    s
}

/// `rostrace demo`.
pub fn run(a: Args) -> std::io::Result<ExitCode> {
    if !(a.duration > 0.0 && a.duration <= 3600.0) {
        return fail(format!("invalid --duration {}: give seconds, above 0 and at most 3600", a.duration));
    }
    if a.output.as_deref().is_some_and(crate::out::is_stdout) {
        return crate::out::stdout_is_not_a_directory("--output", "the trace and the report");
    }
    let domain = match crate::record::ros_domain(a.domain) {
        Ok(d) => d,
        Err(e) => return fail(e),
    };
    if let Some(role) = &a.process {
        let role = role.clone();
        return child(&role, domain, Duration::from_secs_f64(a.duration), a);
    }
    // The demo's processes link rostrace's tracer: the library is preloaded into the user's command only.
    let lib = match a.command.is_empty() {
        true => None,
        false => match crate::record::find_library() {
            Ok(l) => Some(l),
            Err(e) => return fail(format!("the command cannot be traced: {e}")),
        },
    };
    let mut rec = match Recording::begin(&a.record.to_options(), "demo", a.output.clone(), lib.as_deref()) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    say(rec.take_messages());
    // The clock recorder (with --record-clock) is this program's `clock-recorder`.
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("rostrace"));
    if let Err(e) = rec.start_clock(&exe, domain) {
        say(rec.abort());
        return fail(e);
    }
    let dir = rec.dir().to_path_buf();
    let beside = match a.command.first() {
        Some(c) => format!(" and `{}`", c.to_string_lossy()),
        None => String::new(),
    };
    crate::out::errln!(
        "rostrace: running the demo system (2 processes, 7 nodes){beside} for {} s on DDS domain {domain}, tracing into {} ({} backend)",
        a.duration,
        dir.display(),
        rec.backend()
    );
    // Ctrl-C reaches the demo's processes (same process group), which stop and write their traces.
    crate::record::catch_ctrl_c();
    let mut children = Vec::new();
    for role in Role::ALL {
        match spawn(role, &rec, domain, &a) {
            Ok(c) => children.push((role, c)),
            Err(e) => {
                for (_, mut c) in children {
                    let _ = c.kill();
                    let _ = c.wait();
                }
                say(rec.abort());
                return fail(format!("cannot start the demo process {}: {e}", role.name()));
            }
        }
    }
    let command = match a.command.is_empty() {
        true => None,
        false => match Beside::spawn(&a.command, &rec, domain) {
            Ok(b) => Some(b),
            Err(e) => {
                crate::out::errln!("rostrace: error: cannot run {:?}: {e}", a.command[0]);
                None
            }
        },
    };
    let command_failed = !a.command.is_empty() && command.is_none();
    let results = wait(children, a.duration);
    let command = command.map(Beside::finish);
    let (recorded, said) = rec.finish("rostrace demo");
    say(said);
    if !recorded {
        return Ok(ExitCode::from(1));
    }
    let mut tallies = Vec::new();
    let mut failed = command_failed;
    for (_, r) in results {
        match r {
            Ok(t) => tallies.push(t),
            Err(e) => {
                crate::out::errln!("rostrace: error: {e}");
                failed = true;
            }
        }
    }
    if let Some((counted, r)) = command {
        // What it counted is kept even when it failed afterwards.
        tallies.extend(counted);
        if let Err(e) = r {
            crate::out::errln!("rostrace: error: {e}");
            failed = true;
        }
    }
    let counts = dir.join(COUNTS_FILE);
    std::fs::write(&counts, serde_json::to_string_pretty(&tallies).map_err(std::io::Error::other)?)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", counts.display())))?;
    // The analysis and the summary on standard output; the report is written whatever becomes
    // of them (a closed pipe, a full disk), and an error writing them is returned after it.
    let printed = (|| -> std::io::Result<ExitCode> {
        outln!()?;
        let code = crate::analyze::run(crate::analyze::Args::new(vec![dir.clone()], a.json.clone(), a.top))?;
        out!("{}", counts_table(&tallies))?;
        outln!()?;
        summary(&dir)?;
        outln!("  what each process counted: {}", counts.display())?;
        outln!("  look again: rostrace analyze {}", dir.display())?;
        Ok(code)
    })();
    let html = dir.join("report.html");
    // A file, not standard output: no error of standard output's comes from it.
    let report = crate::report::write(
        std::slice::from_ref(&dir),
        &html,
        Some("rostrace demo"),
        None,
        0,
        &Default::default(),
        &Default::default(),
    )
    .unwrap_or_else(|e| Err(e.to_string()));
    if let Err(e) = &report {
        crate::out::errln!("rostrace: error: {e}");
        failed = true;
    }
    let code = printed?;
    if report.is_ok() {
        outln!("  the report, with plots: {} (open it in a browser)", html.display())?;
    }
    Ok(if failed {
        ExitCode::from(1)
    } else if crate::record::interrupted() {
        ExitCode::from(crate::record::INTERRUPTED_EXIT)
    } else {
        code
    })
}
