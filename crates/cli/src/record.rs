//! `rostrace record` and session control (`create`, `start`, `stop`, `pause`, `resume`, `list`):
//! the arguments, the signals of the process running rostrace and exit codes, and the text
//! shown; the sessions themselves are the `session` crate's.

use crate::out::{fail, outln};
use crate::text::{say, summary};
use rostrace_session::{Message, Verb};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Child, ExitCode, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};

pub use rostrace_session::{exit_code_of, find_library, Recording};

/// Tracing backends.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum Backend {
    /// rostrace's tracer in each process: no daemon.
    Embedded,
    /// LTTng-UST (and the kernel tracer), through an LTTng session.
    Lttng,
}

impl From<Backend> for rostrace_session::Backend {
    fn from(b: Backend) -> Self {
        match b {
            Backend::Embedded => rostrace_session::Backend::Embedded,
            Backend::Lttng => rostrace_session::Backend::Lttng,
        }
    }
}

pub use crate::signals::{catch_ctrl_c, interrupted, INTERRUPTED_EXIT};

/// Where sessions live and what they are called.
#[derive(clap::Args, Clone)]
pub struct SessionArgs {
    /// Session name (default: session-YYYYMMDDHHMMSS; demo-YYYYMMDDHHMMSS for `rostrace demo`).
    #[arg(short = 's', long = "session-name")]
    pub name: Option<String>,
    /// Directory of sessions (default: $ROS_TRACE_DIR, else $ROS_HOME/tracing, else ~/.ros/tracing).
    #[arg(short = 'p', long)]
    pub path: Option<PathBuf>,
}

/// Options of a recording.
#[derive(clap::Args, Clone)]
pub struct RecordOptions {
    #[command(flatten)]
    session: SessionArgs,
    /// Userspace events to record (`*` wildcards).
    #[arg(short = 'u', long = "ust", num_args = 1.., default_values_t = ["ros2:*".to_string(), "ros2_caret:*".to_string()])]
    ust: Vec<String>,
    /// Kernel events to record (LTTng backend only).
    #[arg(short = 'k', long = "kernel", num_args = 1..)]
    kernel: Vec<String>,
    /// Record all system calls (LTTng backend only).
    #[arg(long)]
    syscall: bool,
    /// Context fields (the embedded tracer always records procname, vpid, vtid).
    #[arg(short = 'c', long = "context", num_args = 1.., default_values_t = ["procname".to_string(), "vpid".to_string(), "vtid".to_string()])]
    context: Vec<String>,
    /// Tracing backend.
    #[arg(long, value_enum, default_value = "embedded")]
    backend: Backend,
    /// Write into an existing session directory.
    #[arg(long)]
    append: bool,
    /// Buffer per thread (embedded) or sub-buffer size (LTTng), e.g. 1M.
    #[arg(long, value_name = "SIZE")]
    buffer_size: Option<String>,
    /// Number of sub-buffers per buffer (LTTng).
    #[arg(long, value_name = "N")]
    num_subbuf: Option<u32>,
    /// LTTng backend: write the sub-buffers out every SECONDS however full (the channel's
    /// switch timer), so that `rostrace live` following the recording sees each event within
    /// about that long (default: when full; `live -- COMMAND` sets a quarter of its interval).
    /// The embedded tracer writes its buffers every 20 ms.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    flush_interval: Option<std::time::Duration>,
    /// Flight recorder: keep only the last events in memory (see --snapshot-size) and write them
    /// on `rostrace snapshot NAME` and at exit.
    #[arg(long)]
    snapshot_mode: bool,
    /// Memory of the flight recorder per process (embedded backend).
    #[arg(long, value_name = "SIZE", default_value = "64M")]
    snapshot_size: String,
    /// Record only these nodes (colon-separated regular expressions, partial match; wins over --ignore-nodes).
    #[arg(long, value_name = "REGEXES")]
    select_nodes: Option<String>,
    /// Do not record these nodes' callbacks, publications and takes.
    #[arg(long, value_name = "REGEXES")]
    ignore_nodes: Option<String>,
    /// Record only these topics (wins over --ignore-topics).
    #[arg(long, value_name = "REGEXES")]
    select_topics: Option<String>,
    /// Do not record these topics' publications, takes and subscription callbacks.
    #[arg(long, value_name = "REGEXES")]
    ignore_topics: Option<String>,
    /// Do not record these processes at all (by process name).
    #[arg(long, value_name = "REGEXES")]
    ignore_processes: Option<String>,
    /// The ROS 2 distribution whose tracetools ABI the traced processes use (humble, iron,
    /// jazzy, kilted, rolling; default: their $ROS_DISTRO, else rolling).
    #[arg(long, value_name = "DISTRO", value_parser = parse_distro)]
    distro: Option<&'static tracetools::distro::Abi>,
    /// Also record the kernel's scheduling events (CPU time, scheduling during callbacks,
    /// wake-up latency) and page allocations: the LTTng backend with its kernel tracer.
    #[arg(long)]
    with_kernel: bool,
    /// Also record userspace memory: LTTng-UST's libc wrapper (malloc, free, ...) preloaded into
    /// the command (LTTng backend).
    #[arg(long)]
    with_memory: bool,
    /// Also record function entries and exits of code built with -finstrument-functions:
    /// LTTng-UST's cyg-profile helper preloaded into the command (LTTng backend).
    #[arg(long)]
    with_profile: bool,
    /// Record CARET's light event list (`ros2 caret record --light`): callbacks, dispatch, takes,
    /// rclcpp and rmw events, executors and callback groups, initialization, caret_init and
    /// sim_time (and rcl_publish from Iron on) instead of all `ros2:*` and `ros2_caret:*`.
    #[arg(long, conflicts_with = "ust")]
    light: bool,
    /// Also record sim time (`ros2_caret:sim_time`, as CARET's clock_recorder): a process of its
    /// own follows `/clock` on the traced programs' DDS domain and records the ROS time every
    /// second of wall time, from the start of the recording to its end (`rostrace analyze --time sim`).
    #[arg(long)]
    record_clock: bool,
    /// Always-on recording: write the recording in chunks, a new one when the last reached
    /// SIZE (100M, 2G) or lasted DURATION (30s, 10min, 1h). Each chunk starts with the
    /// processes' initialization events: each one, or several together, is a complete recording
    /// (embedded backend, `record` and `demo`).
    #[arg(long, value_name = "SIZE|DURATION", value_parser = rostrace_session::Rotate::parse)]
    rotate: Option<rostrace_session::Rotate>,
    /// With --rotate: keep only the newest N chunks (the one being written included); the
    /// oldest are deleted as new ones begin.
    #[arg(long, value_name = "N", requires = "rotate")]
    keep: Option<usize>,
}

impl RecordOptions {
    /// The options as the session library takes them.
    pub fn to_options(&self) -> rostrace_session::Options {
        rostrace_session::Options {
            name: self.session.name.clone(),
            path: self.session.path.clone(),
            ust: self.ust.clone(),
            kernel: self.kernel.clone(),
            syscall: self.syscall,
            context: self.context.clone(),
            backend: self.backend.into(),
            append: self.append,
            buffer_size: self.buffer_size.clone(),
            num_subbuf: self.num_subbuf,
            flush_interval: self.flush_interval,
            snapshot_mode: self.snapshot_mode,
            snapshot_size: self.snapshot_size.clone(),
            select_nodes: self.select_nodes.clone(),
            ignore_nodes: self.ignore_nodes.clone(),
            select_topics: self.select_topics.clone(),
            ignore_topics: self.ignore_topics.clone(),
            ignore_processes: self.ignore_processes.clone(),
            distro: self.distro,
            with_kernel: self.with_kernel,
            with_memory: self.with_memory,
            with_profile: self.with_profile,
            light: self.light,
            record_clock: self.record_clock,
            rclpy: true,
            rotate: self.rotate,
            keep: self.keep,
        }
    }
}

/// Seconds, above 0.
fn parse_seconds(s: &str) -> Result<std::time::Duration, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 3600.0 => Ok(std::time::Duration::from_secs_f64(v)),
        _ => Err(format!("{s:?}: give seconds, above 0 and at most 3600")),
    }
}

/// A distribution name of `--distro`.
fn parse_distro(s: &str) -> Result<&'static tracetools::distro::Abi, String> {
    tracetools::distro::by_name(s)
}

/// Arguments of `rostrace record`.
#[derive(clap::Args)]
pub struct RecordArgs {
    #[command(flatten)]
    opts: RecordOptions,
    /// The command to trace, and its arguments.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// Arguments of `rostrace create` and `rostrace start`.
#[derive(clap::Args)]
pub struct StartArgs {
    /// Session name.
    name: String,
    #[command(flatten)]
    opts: RecordOptions,
}

/// Arguments of `stop`, `pause`, `resume`.
#[derive(clap::Args)]
pub struct NameArgs {
    /// Session name.
    name: String,
    /// Directory of sessions.
    #[arg(short = 'p', long)]
    path: Option<PathBuf>,
}

/// Arguments of `rostrace list`.
#[derive(clap::Args)]
pub struct ListArgs {
    /// Directory of sessions.
    #[arg(short = 'p', long)]
    path: Option<PathBuf>,
}

/// Arguments of `rostrace lib`.
#[derive(clap::Args)]
pub struct LibArgs {
    /// The LTTng-UST provider of the distribution (see --distro of record) instead.
    #[arg(long)]
    provider: bool,
    /// The distribution whose provider to print (default: $ROSTRACE_DISTRO, $ROS_DISTRO, rolling).
    #[arg(long, value_parser = parse_distro)]
    distro: Option<&'static tracetools::distro::Abi>,
}

/// `rostrace lib`: where the library is, for `LD_PRELOAD=$(rostrace lib)`.
pub fn lib(a: LibArgs) -> std::io::Result<ExitCode> {
    let abi = match rostrace_session::distro_or_env(a.distro) {
        Ok(abi) => abi,
        Err(e) => return fail(e),
    };
    let found = if a.provider {
        rostrace_session::lttng_provider_dir(abi)
            .map(|d| d.join(tracetools::lttng_provider_name(abi)))
            .ok_or_else(|| rostrace_session::lttng_provider_check(abi).err().unwrap_or_default())
    } else {
        find_library()
    };
    match found {
        Ok(p) => {
            outln!("{}", p.display())?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => fail(e),
    }
}

/// What `rostrace record` does along the recording: catches the signals that would stop it,
/// says where it records, passes the signals on while it waits, tells the session's messages.
struct Cli;

impl rostrace_session::Observer for Cli {
    fn say(&mut self, m: Message) {
        say([m]);
    }
    fn spawning(&mut self) {
        // Ctrl-C reaches the traced command (same process group), SIGTERM, SIGHUP and SIGQUIT
        // are passed on to it; rostrace waits for it to finish (caught before it starts: no
        // window in which they would stop rostrace alone; the command starts with their
        // default actions).
        crate::signals::catch_stop_signals();
    }
    fn started(&mut self, rec: &Recording) {
        crate::out::errln!(
            "rostrace: recording session {} into {} ({} backend); Ctrl-C stops",
            rec.name(),
            rec.dir().display(),
            rec.backend()
        );
    }
    fn wait(&mut self, child: &mut Child) -> std::io::Result<ExitStatus> {
        rostrace_session::wait_passing_signals(child, crate::signals::received, &mut |m| say([m]))
    }
}

/// `rostrace record`.
pub fn record(a: RecordArgs) -> std::io::Result<ExitCode> {
    // The clock recorder's domain, checked before anything is recorded.
    let clock_domain = match a.opts.record_clock.then(|| ros_domain(None)).transpose() {
        Ok(d) => d.unwrap_or(0),
        Err(e) => return fail(format!("--record-clock: {e}")),
    };
    let lib = match find_library() {
        Ok(l) => l,
        Err(e) => return fail(e),
    };
    let exe = match a.opts.record_clock.then(std::env::current_exe).transpose() {
        Ok(exe) => exe,
        Err(e) => return fail(format!("--record-clock: {e}")),
    };
    let clock = exe.as_deref().map(|exe| (exe, clock_domain));
    let rec = match rostrace_session::record(&a.opts.to_options(), None, &a.command, &lib, clock, &mut Cli) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    // The summary on standard output comes after the command and its trace: when it cannot be
    // written, the exit code stays the command's; on a closed pipe nothing is said, any other
    // error is, and a command that succeeded then ends in 1.
    let printed = if rec.recorded { summary(&rec.dir) } else { Ok(()) };
    let unprinted = match printed {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            crate::out::errln!("rostrace: {e}");
            true
        }
        _ => false,
    };
    // How the command ended decides, then SIGTERM (or SIGHUP, SIGQUIT), then Ctrl-C, then
    // whether anything was recorded.
    let code = rec.status.map_or(1, exit_code_of);
    Ok(ExitCode::from(if code != 0 {
        code
    } else if let Some(code) = crate::signals::terminated_exit() {
        code
    } else if interrupted() {
        INTERRUPTED_EXIT
    } else if !rec.recorded || unprinted {
        1
    } else {
        0
    }))
}

/// `rostrace create` (`recording`: `rostrace start` of a new session): a session processes can
/// be launched under, and how to launch them.
pub fn create(a: StartArgs, recording: bool) -> std::io::Result<ExitCode> {
    let c = match rostrace_session::create(&a.name, &a.opts.to_options(), recording) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    if c.backend == rostrace_session::Backend::Lttng {
        outln!("LTTng session {} {} in {}", a.name, if recording { "recording" } else { "created" }, c.dir.display())?;
        outln!("launch the processes to trace with:")?;
        if let Ok(lib) = &c.lib {
            let helpers: String = c.helpers.iter().map(|h| format!(":{}", h.display())).collect();
            let backend = format!("{}={}", tracetools::env::BACKEND, tracetools::env::BACKEND_LTTNG);
            outln!("  export {backend} LD_PRELOAD={}{helpers}", lib.display())?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "session {} {} in {}",
        a.name,
        if recording { "recording" } else { "created (not recording)" },
        c.dir.display()
    )?;
    outln!("launch the processes to trace with:")?;
    match &c.lib {
        Ok(_) => {
            for (k, v) in &c.env {
                outln!("  export {k}={}", shell_quoted(&v.to_string_lossy()))?;
            }
        }
        Err(why) => {
            outln!("  export {}={}", tracetools::env::SESSION_DIR, c.dir.display())?;
            outln!("  and LD_PRELOAD=<path of rostrace's libtracetools.so> ({why})")?;
        }
    }
    if a.opts.to_options().distro.is_none() {
        outln!(
            "processes whose environment sets no ROS_DISTRO (a pip virtualenv) use {}'s tracetools ABI, and their \
             distribution is shown as assumed: give --distro",
            tracetools::distro::DEFAULT
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `v` as one shell word: as it is when it holds only characters no shell treats specially,
/// else in single quotes (`ros2:*` would be a glob).
fn shell_quoted(v: &str) -> String {
    if !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || "/._-:,=+@%".contains(c)) {
        v.to_string()
    } else {
        format!("'{}'", v.replace('\'', "'\\''"))
    }
}

/// `start`, `stop`, `pause`, `resume` on an existing session.
pub fn control(a: NameArgs, verb: Verb) -> std::io::Result<ExitCode> {
    let r = rostrace_session::session_dir(a.path.as_deref(), &a.name)
        .and_then(|dir| rostrace_session::control(&dir, &a.name, verb).map(|c| (dir, c)));
    let (dir, c) = match r {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    outln!("session {}: {}", a.name, c.state)?;
    if c.disk_full {
        crate::out::errln!(
            "rostrace: warning: the file system of {} is full: the session is {}, but traced processes \
             could not write all their events (they count what they drop as discarded)",
            dir.display(),
            c.state
        );
    }
    if c.state == "stopped" {
        summary(&dir)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `rostrace start NAME`: starts an existing session, or creates one recording.
pub fn start(a: StartArgs) -> std::io::Result<ExitCode> {
    let dir = a.opts.session.path.clone().unwrap_or_else(rostrace_session::default_path).join(&a.name);
    if dir.join(tracetools::tracer::CONTROL_FILE).exists() && !a.opts.append {
        return control(NameArgs { name: a.name, path: a.opts.session.path.clone() }, Verb::Start);
    }
    create(a, true)
}

/// `rostrace snapshot NAME`: flight-recorder sessions write what they hold.
pub fn snapshot(a: NameArgs) -> std::io::Result<ExitCode> {
    let r = rostrace_session::session_dir(a.path.as_deref(), &a.name)
        .and_then(|dir| rostrace_session::snapshot(&dir).map(|n| (dir, n)));
    let (dir, n) = match r {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    outln!("session {}: snapshot {n} written", a.name)?;
    summary(&dir)?;
    Ok(ExitCode::SUCCESS)
}

/// `rostrace list`.
pub fn list(a: ListArgs) -> std::io::Result<ExitCode> {
    let root = a.path.unwrap_or_else(rostrace_session::default_path);
    let rows = rostrace_session::list(&root);
    if rows.is_empty() {
        outln!("no sessions in {}", root.display())?;
    }
    for r in rows {
        outln!("{:<32} {:<10} {}", r.name, r.state, r.dir.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Arguments of `rostrace clock-recorder` (hidden: `record --record-clock` runs it).
#[derive(clap::Args)]
pub struct ClockArgs {
    /// DDS domain (default: $ROS_DOMAIN_ID, else 0).
    #[arg(long, value_name = "ID")]
    domain: Option<u16>,
    /// Wall time between two sim_time samples, in seconds (CARET: 1).
    #[arg(long, default_value_t = 1.0, value_name = "SECS")]
    period: f64,
}

/// The DDS domain: `given` (`--domain`), else `ROS_DOMAIN_ID`'s (else 0), as the ROS 2 programs read it.
pub(crate) fn ros_domain(given: Option<u16>) -> Result<u16, String> {
    match given {
        Some(d) if d > rostrace_ros2::MAX_DOMAIN_ID => {
            Err(format!("invalid --domain {d}: DDS domains are 0 to {}", rostrace_ros2::MAX_DOMAIN_ID))
        }
        Some(d) => Ok(d),
        None => rostrace_ros2::env_domain(),
    }
}

static CLOCK_STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_clock_stop(_: libc::c_int) {
    CLOCK_STOP.store(true, Ordering::Relaxed);
}

/// `rostrace clock-recorder`: CARET's clock_recorder (node `clock_recorder`, `/clock` → a
/// `ros2_caret:sim_time` event every second of wall time), traced in the session of its
/// environment, until SIGTERM (or its parent's end). Ctrl-C is left to the traced command:
/// `record` stops the recorder once the command has ended.
pub fn clock_recorder(a: ClockArgs) -> std::io::Result<ExitCode> {
    if !(a.period > 0.0 && a.period <= 3600.0) {
        return fail(format!("invalid --period {}", a.period));
    }
    let domain = match ros_domain(a.domain) {
        Ok(d) => d,
        Err(e) => return fail(e),
    };
    // SAFETY: PR_SET_NAME reads a NUL-terminated string; PR_SET_PDEATHSIG takes a signal number;
    // the handler only stores an atomic.
    unsafe {
        libc::prctl(libc::PR_SET_NAME, c"clock_recorder".as_ptr());
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
        libc::signal(libc::SIGTERM, on_clock_stop as *const () as libc::sighandler_t);
        libc::signal(libc::SIGHUP, on_clock_stop as *const () as libc::sighandler_t);
        libc::signal(libc::SIGINT, libc::SIG_IGN);
    }
    match rostrace_ros2::run_clock_recorder(domain, std::time::Duration::from_secs_f64(a.period), &CLOCK_STOP) {
        Ok(s) => {
            crate::out::errln!(
                "rostrace: clock recorder: {} sim_time samples recorded ({} /clock messages received on domain {domain})",
                s.recorded, s.received
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => fail(format!("clock recorder: {e}")),
    }
}
