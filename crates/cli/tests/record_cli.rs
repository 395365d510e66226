//! `rostrace record` and session control, end to end, with a traced C program using the C ABI.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn tmp(name: &str) -> TempDir {
    TempDir::new(&format!("record-{name}"))
}

fn now_ns() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as i64
}

/// (name, ts) of the session's events of the `ros2` provider: those the traced program emits
/// (the library adds CARET's once-per-process `ros2_caret` events at `rcl_init`).
fn events(dir: &Path) -> Vec<(String, i64)> {
    let mut v = all_events(dir);
    v.retain(|(n, _)| n.starts_with("ros2:"));
    v
}

/// (name, ts) of every event of the session.
fn all_events(dir: &Path) -> Vec<(String, i64)> {
    let (set, errors) = rostrace_ctf::TraceSet::open(&[dir]);
    assert!(errors.is_empty(), "{errors:?}");
    let mut v = Vec::new();
    let mut evs = set.events();
    while let Some(e) = evs.next() {
        let e = e.unwrap();
        v.push((e.name().to_string(), e.timestamp().unwrap()));
    }
    v
}

/// Runs `record` (the `rostrace` command given, with its options) of the flow program with
/// `args` into session `name` under `dir`, checks that it succeeded and that the trace holds every
/// event the program emitted; returns its output and that number.
fn record_flows(
    mut record: Command,
    dir: &Path,
    name: &str,
    prog: &Path,
    args: &[&str],
) -> (std::process::Output, usize) {
    let expected = dir.join(format!("{name}.txt"));
    let out = record.args(["-s", name, "-p"]).arg(dir).arg("--").arg(prog).arg(&expected).args(args).output().unwrap();
    assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    let emitted = std::fs::read_to_string(&expected).unwrap().lines().count();
    assert_eq!(events(&dir.join(name)).len(), emitted, "{name}");
    // And CARET's caret_init once per process, at its first rcl_init.
    let all = all_events(&dir.join(name));
    let count = |what: &str| all.iter().filter(|(n, _)| n == what).count();
    let (caret, rcl) = (count("ros2_caret:caret_init"), count("ros2:rcl_init"));
    assert!(rcl == 0 || (1..=rcl).contains(&caret), "{name}: {caret} caret_init for {rcl} rcl_init");
    (out, emitted)
}

/// `rostrace record` with these options.
fn record(opts: &[&str]) -> Command {
    let mut c = rostrace();
    c.arg("record").args(opts);
    c
}

fn babeltrace2_reads(dir: &Path) {
    if !require(have_babeltrace2(), "babeltrace2") {
        return;
    }
    let out = Command::new("babeltrace2").arg(dir).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !err.contains("WARNING") && !err.contains("ERROR"), "{err}");
}

#[test]
fn record_embedded() {
    let dir = tmp("embedded");
    let prog = flows(&dir);
    let (out, emitted) = record_flows(record(&[]), &dir, "s1", &prog, &["2", "3"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    // With CARET's caret_init, once for the process.
    assert!(stdout.contains(&format!("{} events, 1 process, 0 events discarded", emitted + 1)), "{stdout}");
    babeltrace2_reads(&dir.join("s1"));
    // Errors: existing directory, kernel events without LTTng, unknown session, stopping twice.
    let again = rostrace().args(["record", "-s", "s1", "-p"]).arg(&dir).args(["--", "true"]).output().unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
    let k = rostrace()
        .args(["record", "-k", "sched_switch", "-s", "s2", "-p"])
        .arg(&dir)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(k.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&k.stderr).contains("--backend lttng"));
    let unknown = rostrace().args(["stop", "nope", "-p"]).arg(&dir).output().unwrap();
    assert_eq!(unknown.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("unknown session"));
    let twice = rostrace().args(["stop", "s1", "-p"]).arg(&dir).output().unwrap();
    assert_eq!(twice.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&twice.stderr).contains("already stopped"));
    let list = rostrace().args(["list", "-p"]).arg(&dir).output().unwrap();
    assert!(String::from_utf8_lossy(&list.stdout).contains("s1"));
}

#[rostrace_testkit::needs(lttng)]
#[test]
fn record_lttng() {
    if !require(have_lttng(), "LTTng (lttng-tools)") {
        return;
    }
    let _lttng = lttng_lock();
    let dir = tmp("lttng");
    let prog = flows(&dir);
    let name = format!("rostrace-rec-{}", std::process::id());
    let _session = LttngSession(name.clone());
    record_flows(record(&["--backend", "lttng"]), &dir, &name, &prog, &["2", "3"]);
    babeltrace2_reads(&dir.join(&name));
}

/// Creates the session `name` under `root` (not recording) and launches the flow program under
/// it for 3 s; returns the session directory and the program.
fn create_and_launch(root: &Path, name: &str, prog: &Path, expected: &Path) -> (PathBuf, std::process::Child) {
    let st = rostrace().args(["create", name, "-p"]).arg(root).output().unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let session = root.join(name);
    let child = Command::new(prog)
        .arg(expected)
        .args(["1", "0", "run", "3"])
        .env("ROSTRACE_SESSION_DIR", &session)
        .spawn()
        .unwrap();
    (session, child)
}

/// A process launched under a created session records nothing until `start`; its
/// initialization events still appear (once), and runtime events only inside the windows
/// `start`–`pause` and `resume`–`stop`.
#[test]
fn start_pause_resume_stop_with_late_start() {
    let dir = tmp("control");
    let prog = flows(&dir);
    let (session, mut child) = create_and_launch(&dir, "late", &prog, &dir.join("e.txt"));
    let step = |verb: &str, wait: u64| {
        std::thread::sleep(Duration::from_millis(wait));
        let t = now_ns();
        let o = rostrace().args([verb, "late", "-p"]).arg(&dir).output().unwrap();
        assert!(o.status.success(), "{verb}: {}", String::from_utf8_lossy(&o.stderr));
        t
    };
    let t_start = step("start", 600);
    let t_pause = step("pause", 500);
    let t_resume = step("resume", 500);
    let t_stop = step("stop", 500);
    assert!(child.wait().unwrap().success());
    let evs = events(&session);
    // Traced processes poll the control file every 20 ms; allow for a loaded CI machine.
    let slack = 250_000_000;
    let runtime: Vec<i64> = evs.iter().filter(|(n, _)| n == "ros2:callback_start").map(|(_, t)| *t).collect();
    assert!(runtime.len() > 100, "{} runtime events", runtime.len());
    for t in &runtime {
        let in_first = *t >= t_start && *t <= t_pause + slack;
        let in_second = *t >= t_resume && *t <= t_stop + slack;
        assert!(in_first || in_second, "runtime event at {t} outside the recorded windows");
    }
    let lag =
        |after: i64| runtime.iter().filter(|t| **t >= after && **t < after + slack).max().map_or(0, |t| t - after);
    eprintln!("last event after pause: {} ms, after stop: {} ms", lag(t_pause) / 1_000_000, lag(t_stop) / 1_000_000);
    assert!(runtime.iter().any(|t| *t > t_resume), "nothing recorded after resume");
    // Initialization happened before `start`, and is in the trace once, with its original time.
    for name in ["ros2:rcl_init", "ros2:rcl_node_init", "ros2:rcl_timer_init", "ros2:rcl_service_init"] {
        let v: Vec<i64> = evs.iter().filter(|(n, _)| n == name).map(|(_, t)| *t).collect();
        assert_eq!(v.len(), 1, "{name}: {v:?}");
        assert!(v[0] < t_start, "{name} keeps its original time");
    }
    babeltrace2_reads(&session);
}

/// Runs the flow program under `rostrace record` with `opts`; returns event names with their
/// callback/handle field, and the number of events.
fn record_filtered(dir: &Path, prog: &Path, name: &str, opts: &[&str], env: &[(&str, &str)]) -> Vec<(String, u64)> {
    let mut c = rostrace();
    c.args(["record", "-s", name, "-p"])
        .arg(dir)
        .args(opts)
        .arg("--")
        .arg(prog)
        .arg(dir.join(format!("{name}.txt")))
        .args(["1", "2"]);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let session = dir.join(name);
    if rostrace_ctf::find_traces(&session).is_err() {
        // Nothing recorded: said, exit 1.
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.code() == Some(1) && err.contains("filters"), "{err}");
        return Vec::new();
    }
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (set, errors) = rostrace_ctf::TraceSet::open(&[&session]);
    assert!(errors.is_empty(), "{errors:?}");
    let mut v = Vec::new();
    let mut evs = set.events();
    while let Some(e) = evs.next() {
        let e = e.unwrap();
        let h = ["callback", "publisher_handle", "rmw_publisher_handle", "rmw_subscription_handle"]
            .iter()
            .find_map(|f| e.field(f).and_then(|x| x.as_u64()))
            .unwrap_or(0);
        v.push((e.name().to_string(), h));
    }
    v
}

#[test]
fn filters_by_node_topic_and_process() {
    let dir = tmp("filters");
    let prog = flows(&dir);
    let count = |v: &[(String, u64)], n: &str| v.iter().filter(|(x, _)| x == n).count();
    let all = record_filtered(&dir, &prog, "all", &[], &[]);
    assert_eq!(count(&all, "ros2:callback_start"), 2 * 5);
    assert_eq!(count(&all, "ros2:rmw_publish"), 2);
    // The topic /chatter: its publications, takes and subscription callbacks go; the timer stays.
    let no_topic = record_filtered(&dir, &prog, "notopic", &["--ignore-topics", "chat"], &[]);
    for n in
        ["ros2:rclcpp_publish", "ros2:rcl_publish", "ros2:rmw_publish", "ros2:rmw_take", "ros2:rclcpp_intra_publish"]
    {
        assert_eq!(count(&no_topic, n), 0, "{n}");
    }
    let cbs: Vec<u64> = no_topic.iter().filter(|(n, _)| n == "ros2:callback_start").map(|(_, h)| h & 0xff).collect();
    assert!(cbs.contains(&0x71) && !cbs.contains(&0x33) && !cbs.contains(&0x43), "{cbs:x?}");
    // Initialization events stay, so the trace still describes the whole system.
    assert_eq!(count(&no_topic, "ros2:rcl_publisher_init"), 1);
    // The node /ns/my_node (CARET's variable, select wins over ignore): no callbacks of it remain.
    let no_node = record_filtered(
        &dir,
        &prog,
        "nonode",
        &["--ignore-nodes", "nothing_matches"],
        &[("CARET_SELECT_NODES", "/other_node")],
    );
    let remaining: Vec<u64> =
        no_node.iter().filter(|(n, _)| n == "ros2:callback_start").map(|(_, h)| h & 0xff).collect();
    assert_eq!(remaining, [0x99, 0x99], "only the callback no initialization event describes");
    assert_eq!(count(&no_node, "ros2:rmw_take"), 0);
    // The process: nothing at all.
    let no_proc = record_filtered(&dir, &prog, "noproc", &["--ignore-processes", "^flo"], &[]);
    assert!(no_proc.is_empty(), "{no_proc:?}");
}

/// Flight recorder: only the latest events are written, on `snapshot` and at exit, each time
/// with the initialization events.
#[test]
fn snapshot_mode_keeps_the_latest_events() {
    let dir = tmp("snapshot");
    let prog = flows(&dir);
    let st = rostrace()
        .args(["start", "snap", "--snapshot-mode", "--snapshot-size", "64K", "-p"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let session = dir.join("snap");
    let t0 = now_ns();
    let mut child = Command::new(&prog)
        .arg(dir.join("e.txt"))
        .args(["1", "0", "run", "1.5"])
        .env("ROSTRACE_SESSION_DIR", &session)
        .env("ROSTRACE_SNAPSHOT", "64K")
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    let o = rostrace().args(["snapshot", "snap", "-p"]).arg(&dir).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(child.wait().unwrap().success());
    let evs = events(&session);
    let first_runtime = evs.iter().filter(|(n, _)| n == "ros2:callback_start").map(|(_, t)| *t).min().unwrap();
    assert!(
        first_runtime > t0 + 400_000_000,
        "the oldest events were not evicted ({} ms after launch)",
        (first_runtime - t0) / 1_000_000
    );
    // Two snapshots (the request and the exit), each with the initialization events.
    assert_eq!(evs.iter().filter(|(n, _)| n == "ros2:rcl_node_init").count(), 2);
    babeltrace2_reads(&session);
}

/// The session verbs drive LTTng sessions too.
#[rostrace_testkit::needs(lttng)]
#[test]
fn lttng_session_verbs() {
    if !require(have_lttng(), "LTTng (lttng-tools)") {
        return;
    }
    let _lttng = lttng_lock();
    let dir = tmp("lttng-verbs");
    let prog = flows(&dir);
    let name = format!("rostrace-verbs-{}", std::process::id());
    let _session = LttngSession(name.clone());
    let st = rostrace().args(["start", &name, "--backend", "lttng", "-p"]).arg(&dir).output().unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let lib = PathBuf::from(env!("CARGO_BIN_EXE_rostrace")).parent().unwrap().join("deps");
    let run = Command::new(&prog)
        .arg(dir.join("e.txt"))
        .args(["2", "2"])
        .env("ROSTRACE_BACKEND", "lttng")
        .env("ROSTRACE_LTTNG_PROVIDER", tracetools::LTTNG_PROVIDER_DIR)
        .env("LD_LIBRARY_PATH", &lib)
        .status()
        .unwrap();
    assert!(run.success());
    for verb in ["pause", "resume", "stop"] {
        let o = rostrace().args([verb, &name, "-p"]).arg(&dir).output().unwrap();
        assert!(o.status.success(), "{verb}: {}", String::from_utf8_lossy(&o.stderr));
    }
    let emitted = std::fs::read_to_string(dir.join("e.txt")).unwrap().lines().count();
    assert_eq!(events(&dir.join(&name)).len(), emitted);
}

/// A command that emits no ROS 2 event: a clear error, exit 1, nothing left behind (the same
/// session name works again).
#[test]
fn record_of_a_command_without_ros2_events() {
    let dir = tmp("nothing");
    for _ in 0..2 {
        let out = rostrace()
            .args(["record", "-s", "none", "-p"])
            .arg(&dir)
            .args(["--", "sh", "-c", "true"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("nothing was recorded") && err.contains("sh -c true"), "{err}");
        assert!(!String::from_utf8_lossy(&out.stdout).contains("trace written"));
        assert!(!dir.join("none").exists(), "the session directory is left behind");
    }
}

/// `record` exits as the traced command did: its code, or 128 + N when signal N killed it; the
/// trace is written either way.
#[test]
fn record_passes_on_how_the_command_ended() {
    let dir = tmp("status");
    let prog = flows(&dir);
    let code = rostrace()
        .args(["record", "-s", "code", "-p"])
        .arg(&dir)
        .args(["--", "sh", "-c", "\"$0\" \"$1\" 1 1; exit 7"])
        .arg(&prog)
        .arg(dir.join("e.txt"))
        .output()
        .unwrap();
    assert_eq!(code.status.code(), Some(7), "{}", String::from_utf8_lossy(&code.stderr));
    let emitted = std::fs::read_to_string(dir.join("e.txt")).unwrap().lines().count();
    assert_eq!(events(&dir.join("code")).len(), emitted);
    let crash = rostrace()
        .args(["record", "-s", "crash", "-p"])
        .arg(&dir)
        .arg("--")
        .arg(&prog)
        .arg(dir.join("c.txt"))
        .args(["1", "1000", "crash"])
        .output()
        .unwrap();
    assert_eq!(crash.status.code(), Some(128 + libc::SIGSEGV), "{}", String::from_utf8_lossy(&crash.stderr));
    assert_eq!(events(&dir.join("crash")).len(), 1000);
}

/// `record`'s summary on a standard output that cannot be written: the trace is written; on a
/// closed pipe nothing is said and the command's exit code stays; on a full disk one line names
/// the error, and a command that succeeded ends in 1.
#[test]
fn record_summary_on_a_closed_or_full_standard_output() {
    let dir = tmp("stdout");
    let prog = flows(&dir);
    for (name, full, tail, code) in [
        ("pipe", false, "exit 0", 0),
        ("pipe3", false, "exit 3", 3),
        ("full", true, "exit 0", 1),
        ("full3", true, "exit 3", 3),
    ] {
        let mut cmd = rostrace();
        cmd.args(["record", "-s", name, "-p"])
            .arg(&dir)
            .args(["--", "sh", "-c", &format!("\"$0\" \"$1\" 1 1; {tail}")])
            .arg(&prog)
            .arg(dir.join(format!("{name}.txt")));
        let out = if full {
            let f = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
            cmd.stdout(f).stderr(std::process::Stdio::piped()).output().unwrap()
        } else {
            let mut child =
                cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
            drop(child.stdout.take());
            child.wait_with_output().unwrap()
        };
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
        let about_stdout: Vec<&str> = err.lines().filter(|l| l.contains("standard output")).collect();
        if full {
            assert_eq!(about_stdout, ["rostrace: writing to standard output: No space left on device (os error 28)"]);
        } else {
            assert!(about_stdout.is_empty(), "{name}: {err}");
        }
        let emitted = std::fs::read_to_string(dir.join(format!("{name}.txt"))).unwrap().lines().count();
        assert_eq!(events(&dir.join(name)).len(), emitted, "{name}");
    }
}

/// Ctrl-C (SIGINT to the terminal's process group) reaches the traced command; rostrace
/// finishes the trace and exits with 130.
#[test]
fn ctrl_c_finishes_the_trace_and_exits_130() {
    let dir = tmp("ctrlc");
    let prog = flows(&dir);
    // The command marks its own completion: Ctrl-C must stop it before.
    let done = dir.join("done");
    let trace = dir.join("int/ust");
    let out = ctrl_c_when(
        rostrace()
            .args(["record", "-s", "int", "-p"])
            .arg(&dir)
            .args(["--", "sh", "-c", "\"$0\" \"$1\" 1 0 run 20 && touch \"$2\""])
            .arg(&prog)
            .arg(dir.join("e.txt"))
            .arg(&done),
        // Once the command records (its trace appears).
        || trace.exists(),
    );
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!done.exists(), "Ctrl-C did not stop the command");
    assert!(String::from_utf8_lossy(&out.stdout).contains("trace written"));
    let evs = events(&dir.join("int"));
    assert!(evs.iter().filter(|(n, _)| n == "ros2:callback_start").count() > 10, "{} events", evs.len());
}

/// Two recordings into one session at once (`--append`, as a launch with several recorders):
/// the one that ends first leaves the session recording for the other, which records to its
/// end; the last one stops the session. (Before, the first to end stopped the session: the
/// other lost its events from then on, both exiting 0.)
#[test]
fn concurrent_append_recordings_share_the_session() {
    let dir = tmp("append");
    let prog = flows(&dir);
    let session = dir.join("shared");
    let recording = |expected: &str, seconds: &str| {
        let mut c = rostrace();
        c.args(["record", "--append", "-s", "shared", "-p"])
            .arg(&dir)
            .arg("--")
            .arg(&prog)
            .arg(dir.join(expected))
            .args(["1", "0", "run", seconds])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        c
    };
    let long = recording("long.txt", "2").spawn().unwrap();
    std::thread::sleep(Duration::from_millis(400));
    let short = recording("short.txt", "0.3").output().unwrap();
    let err = String::from_utf8_lossy(&short.stderr);
    assert!(short.status.success(), "{err}");
    assert!(err.contains("goes on recording"), "{err}");
    assert_eq!(tracetools::tracer::control_state(Some(&session)), tracetools::tracer::Control::Recording);
    let long = long.wait_with_output().unwrap();
    assert!(long.status.success(), "{}", String::from_utf8_lossy(&long.stderr));
    assert_eq!(tracetools::tracer::control_state(Some(&session)), tracetools::tracer::Control::Stopped);
    let lines = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap().lines().count();
    let (long_emitted, short_emitted) = (lines("long.txt"), lines("short.txt"));
    assert!(long_emitted > 1000 && short_emitted > 100, "{long_emitted} {short_emitted}");
    assert_eq!(events(&session).len(), long_emitted + short_emitted, "every event of both recordings");
    babeltrace2_reads(&session);
    let marks: Vec<_> = std::fs::read_dir(&session)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".rostrace-recorder"))
        .collect();
    assert!(marks.is_empty(), "{marks:?}");
}

/// SIGTERM to `rostrace record` (a supervisor stopping it, `docker stop`): it passes the signal
/// on to the traced command, waits for it, finishes the trace, and exits with 143. (Before,
/// rostrace died at once, and the command went on running and recording.)
#[test]
fn sigterm_stops_the_command_and_finishes_the_trace() {
    let dir = tmp("sigterm");
    let prog = flows(&dir);
    let session = dir.join("term");
    let job = spawn_job(
        rostrace()
            .args(["record", "-s", "term", "-p"])
            .arg(&dir)
            .arg("--")
            .arg(&prog)
            .arg(dir.join("e.txt"))
            .args(["1", "0", "run", "30"]),
        &dir,
        "term",
    );
    wait_for_path(&session.join("ust/pid"));
    std::thread::sleep(Duration::from_millis(300));
    let pids = traced_pids(&session);
    assert_eq!(pids.len(), 1, "{pids:?}");
    let t_signal = now_ns();
    // SAFETY: a signal to the rostrace process this test started.
    unsafe { libc::kill(job.child.id() as i32, libc::SIGTERM) };
    let (status, out, err) = wait_at_most(job, 20, "rostrace record after SIGTERM");
    let command_runs = runs(pids[0]);
    if command_runs {
        // SAFETY: the traced command this test started, left running.
        unsafe { libc::kill(pids[0], libc::SIGKILL) };
    }
    assert!(!command_runs, "the traced command still runs: {status:?}: {err}");
    assert_eq!(status.code(), Some(143), "{status:?}: {err}");
    assert!(out.contains("trace written"), "{err}");
    assert_eq!(tracetools::tracer::control_state(Some(&session)), tracetools::tracer::Control::Stopped);
    // Complete and readable: every event up to the signal, none discarded.
    let (set, errors) = rostrace_ctf::TraceSet::open(&[&session]);
    assert!(errors.is_empty(), "{errors:?}");
    let mut last = 0;
    let mut n = 0;
    let mut evs = set.events();
    while let Some(e) = evs.next() {
        let e = e.unwrap();
        if e.name() == "ros2:callback_start" {
            n += 1;
            last = last.max(e.timestamp().unwrap());
        }
    }
    assert_eq!(evs.discarded_events(), 0);
    drop(evs);
    assert!(n > 100, "{n} callbacks");
    assert!(last > t_signal - 100_000_000, "the last event {} ms before the signal", (t_signal - last) / 1_000_000);
    babeltrace2_reads(&session);
}

/// A command that ignores SIGINT: the first Ctrl-C leaves it running; the second makes rostrace
/// send it SIGTERM (it ends, its trace written); one that ignores SIGTERM too is killed
/// (SIGKILL) after a grace period. rostrace finishes the trace either way and exits as the
/// command ended. (Before, further Ctrl-Cs did nothing: rostrace waited for the command's end.)
#[test]
fn a_second_ctrl_c_stops_a_command_that_ignores_sigint() {
    let dir = tmp("ctrlc2");
    let prog = flows(&dir);
    // (session, signals the command ignores, how it ends, within how many seconds)
    let cases = [("int", "INT", 128 + libc::SIGTERM, 10), ("intterm", "INT TERM", 128 + libc::SIGKILL, 20)];
    for (name, ignored, code, within) in cases {
        let session = dir.join(name);
        let script = format!("trap '' {ignored}; exec \"$0\" \"$1\" 1 0 run 60");
        let job = spawn_job(
            rostrace()
                .args(["record", "-s", name, "-p"])
                .arg(&dir)
                .args(["--", "sh", "-c", &script])
                .arg(&prog)
                .arg(dir.join(format!("{name}.txt"))),
            &dir,
            name,
        );
        wait_for_path(&session.join("ust/pid"));
        std::thread::sleep(Duration::from_millis(300));
        let pids = traced_pids(&session);
        let group = -(job.child.id() as i32);
        // SAFETY: signals to the process group this test created.
        unsafe { libc::kill(group, libc::SIGINT) };
        std::thread::sleep(Duration::from_millis(500));
        assert!(runs(pids[0]), "{name}: the command ignores SIGINT");
        // SAFETY: kill touches no memory; the group is the one this test created.
        unsafe { libc::kill(group, libc::SIGINT) };
        let (status, out, err) = wait_at_most(job, within, &format!("{name}: rostrace record after a second Ctrl-C"));
        let command_runs = runs(pids[0]);
        if command_runs {
            // SAFETY: the traced command this test started, left running.
            unsafe { libc::kill(pids[0], libc::SIGKILL) };
        }
        assert!(!command_runs, "{name}: the traced command still runs: {err}");
        assert_eq!(status.code(), Some(code), "{name}: {status:?}: {err}");
        assert!(err.contains("SIGTERM"), "{name}: {err}");
        assert!(out.contains("trace written"), "{name}: {err}");
        let evs = events(&session);
        assert!(evs.iter().filter(|(n, _)| n == "ros2:callback_start").count() > 100, "{name}: {} events", evs.len());
        babeltrace2_reads(&session);
    }
}

/// A small file system of its own (tmpfs), unmounted on drop.
struct Mount(PathBuf);

impl Mount {
    fn tmpfs(at: PathBuf, size: &str) -> Option<Mount> {
        std::fs::create_dir_all(&at).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&at)
            .output()
            .is_ok_and(|o| o.status.success());
        ok.then_some(Mount(at))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).output();
    }
}

/// Fills the file system of `dir` up (what is free now, the filler kept).
fn fill(dir: &Path) {
    use std::io::Write as _;
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("filler")).unwrap();
    let block = vec![0u8; 4096];
    while f.write_all(&block).is_ok() {}
    let _ = f.sync_all();
}

/// On a full disk, `stop` stops the session (the state is rewritten in place) and says the
/// disk is full; `record` cannot start and says why, leaving nothing behind.
#[rostrace_testkit::needs(tmpfs)]
#[test]
fn session_control_on_a_full_disk() {
    let dir = tmp("fulldisk");
    let Some(mnt) = Mount::tmpfs(dir.join("mnt"), "1M") else {
        require(false, "a tmpfs mount (root)");
        return;
    };
    let root = mnt.0.clone();
    let prog = flows(&dir);
    let (session, mut child) = create_and_launch(&root, "full", &prog, &dir.join("e.txt"));
    let start = rostrace().args(["start", "full", "-p"]).arg(&root).output().unwrap();
    assert!(start.status.success(), "{}", String::from_utf8_lossy(&start.stderr));
    std::thread::sleep(Duration::from_millis(300));
    fill(&root);
    // Each stream's writer, at its next write (every 20 ms), meets the full disk, gives back the
    // space of its partial packet and stops writing: take that space too, so that the disk is
    // still full when `stop` writes the session's state.
    std::thread::sleep(Duration::from_millis(200));
    fill(&root);
    let stop = rostrace().args(["stop", "full", "-p"]).arg(&root).output().unwrap();
    let err = String::from_utf8_lossy(&stop.stderr);
    assert!(stop.status.success(), "{err}");
    assert!(err.contains("is full"), "{err}");
    let state = std::fs::read_to_string(session.join(tracetools::tracer::CONTROL_FILE)).unwrap();
    assert_eq!(state.split_whitespace().next(), Some("stopped"));
    assert!(!session.join(format!("{}.tmp", tracetools::tracer::CONTROL_FILE)).exists());
    assert_eq!(tracetools::tracer::control_state(Some(&session)), tracetools::tracer::Control::Stopped);
    let again = rostrace().args(["stop", "full", "-p"]).arg(&root).output().unwrap();
    assert_eq!(again.status.code(), Some(1), "a stopped session stays stopped");
    assert!(child.wait().unwrap().success());
    // A new recording on the full disk (again full: `stop` gave back the room the session kept
    // for processes that would start on a full disk): one clear error, nothing left behind.
    fill(&root);
    let rec = rostrace()
        .args(["record", "-s", "more", "-p"])
        .arg(&root)
        .arg("--")
        .arg(&prog)
        .args(["/dev/null", "1", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&rec.stderr);
    assert_eq!(rec.status.code(), Some(1), "{err}");
    assert!(err.contains("No space left") && err.lines().count() == 1, "{err}");
    assert!(!root.join("more").exists());
    drop(mnt);
}

/// An installed rostrace is the binary alone (`cargo install` copies nothing else): it records
/// with the libtracetools.so and LTTng provider embedded in it, written into the user's cache.
#[test]
fn installed_binary_records_alone() {
    let dir = tmp("installed");
    let prog = flows(&dir);
    let bin = dir.join("root/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_rostrace"), bin.join("rostrace")).unwrap();
    let cache = dir.join("cache");
    let installed = || {
        let mut c = Command::new(bin.join("rostrace"));
        c.env("XDG_CACHE_HOME", &cache).env_remove("ROSTRACE_LIB");
        c
    };
    // The first run of the fresh copy: again while it is busy (ETXTBSY: a child another test
    // thread forked while the copy was open for writing holds it until that child's exec).
    let mut first = installed();
    first.arg("lib");
    let lib = (0..100)
        .find_map(|_| match first.output() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                std::thread::sleep(Duration::from_millis(20));
                None
            }
            r => Some(r.unwrap()),
        })
        .expect("the copied rostrace stays busy");
    let path = PathBuf::from(String::from_utf8_lossy(&lib.stdout).trim());
    assert!(lib.status.success() && path.starts_with(&cache), "{}", String::from_utf8_lossy(&lib.stderr));
    let mut backends = vec!["embedded"];
    if require(have_lttng(), "LTTng (lttng-tools)") {
        backends.push("lttng");
    }
    for backend in backends {
        let _lttng = (backend == "lttng").then(lttng_lock);
        let name = format!("inst-{backend}-{}", std::process::id());
        let _session = LttngSession(name.clone());
        let mut cmd = installed();
        cmd.args(["record", "--backend", backend]);
        record_flows(cmd, &dir, &name, &prog, &["1", "2"]);
    }
}

/// A program linked to libtracetools by its full path, without a library path or rpath, starts
/// under `record --backend lttng` (the preloaded library's SONAME satisfies its `NEEDED`).
#[rostrace_testkit::needs(lttng)]
#[test]
fn lttng_record_starts_a_program_linked_to_tracetools() {
    if !require(have_lttng(), "LTTng (lttng-tools)") {
        return;
    }
    let dir = tmp("linked");
    let lib = PathBuf::from(env!("CARGO_BIN_EXE_rostrace")).parent().unwrap().join("deps/libtracetools.so");
    let prog = dir.join("flows-linked");
    let cc = Command::new("cc")
        .args(["-O1", "-std=c11", "-pthread", "-I", tracetools::INCLUDE_DIR])
        .arg(repo().join("crates/tracetools/tests/c/flows.c"))
        .arg("-o")
        .arg(&prog)
        .arg(&lib)
        .output()
        .unwrap();
    assert!(cc.status.success(), "{}", String::from_utf8_lossy(&cc.stderr));
    let _lttng = lttng_lock();
    let name = format!("rostrace-linked-{}", std::process::id());
    let _session = LttngSession(name.clone());
    let mut cmd = record(&["--backend", "lttng"]);
    cmd.env_remove("LD_LIBRARY_PATH");
    record_flows(cmd, &dir, &name, &prog, &["1", "2"]);
}

/// `--with-memory` and `--with-profile` (LTTng backend): LTTng-UST's libc wrapper and
/// cyg-profile helper are preloaded, their events recorded, and `analyze` reports the memory
/// and the call tree of a program built with -finstrument-functions. With the embedded backend
/// they are refused; `--with-kernel` needs LTTng's kernel tracer and says so when it is missing.
#[rostrace_testkit::needs(lttng)]
#[test]
fn record_with_memory_and_profile() {
    if !require(have_lttng(), "LTTng (lttng-tools)") {
        return;
    }
    let dir = tmp("with");
    let src = dir.join("prog.c");
    std::fs::write(
        &src,
        r#"#include <stdlib.h>
#include <string.h>
static void *kept[7];
__attribute__((noinline)) static void inner(char *p, int k) { memset(p, k, 64); }
__attribute__((noinline)) static void work(int i) {
    kept[i] = malloc(123457);
    for (int k = 0; k < 3; k++) inner(kept[i], k);
}
int main(void) {
    for (int i = 0; i < 7; i++) work(i);
    void *gone = malloc(7654321);
    free(gone);
    return 0;
}
"#,
    )
    .unwrap();
    let prog = dir.join("prog");
    let cc =
        Command::new("gcc").args(["-O0", "-g", "-finstrument-functions", "-o"]).arg(&prog).arg(&src).output().unwrap();
    assert!(cc.status.success(), "{}", String::from_utf8_lossy(&cc.stderr));

    // Refused with the embedded backend, before anything runs.
    for opt in ["--with-memory", "--with-profile", "--with-kernel"] {
        let out =
            rostrace().args(["record", opt, "-p"]).arg(&dir).args(["-s", "refused", "--"]).arg(&prog).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{opt}: {err}");
        assert!(err.contains("--backend lttng"), "{opt}: {err}");
        assert!(!dir.join("refused").exists());
    }

    let _lttng = lttng_lock();
    let name = format!("rostrace-with-{}", std::process::id());
    let _session = LttngSession(name.clone());
    let out = rostrace()
        .args(["record", "--backend", "lttng", "--with-memory", "--with-profile", "-s", &name, "-p"])
        .arg(&dir)
        .arg("--")
        .arg(&prog)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json = dir.join("a.json");
    let an = rostrace().arg("analyze").arg(dir.join(&name)).arg("--json").arg(&json).output().unwrap();
    let text = String::from_utf8_lossy(&an.stdout);
    assert!(an.status.success(), "{}", String::from_utf8_lossy(&an.stderr));
    assert!(text.contains("Memory per process") && text.contains("Function profile"), "{text}");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();

    // The main thread kept 7 x 123457 bytes, and briefly held 7654321 more.
    let threads = r["system"]["memory"]["threads"].as_array().unwrap();
    let main = threads.iter().max_by_key(|t| t["max_bytes"].as_i64().unwrap()).unwrap();
    let (peak, end) = (main["max_bytes"].as_i64().unwrap(), main["final_bytes"].as_i64().unwrap());
    assert!(peak >= 7 * 123_457 + 7_654_321, "{main}");
    assert!((7 * 123_457..7 * 123_457 + 7_654_321).contains(&end), "{main}");

    // work() ran 7 times and called inner() 21 times.
    let funcs = r["system"]["profile"]["functions"].as_array().unwrap();
    let edges = r["system"]["profile"]["edges"].as_array().unwrap();
    let edge = edges.iter().find(|e| e[5].as_u64() == Some(21)).unwrap_or_else(|| panic!("no 21-call edge: {edges:?}"));
    let (caller, callee) = (edge[3].as_u64().unwrap(), edge[4].as_u64().unwrap());
    let calls = |a: u64| funcs.iter().find(|f| f["address"].as_u64() == Some(a)).map(|f| f["calls"].as_u64().unwrap());
    assert_eq!((calls(caller), calls(callee)), (Some(7), Some(21)));
    // Named from the program's symbol table, through the statedump's mapping of it.
    let named = |a: u64| funcs.iter().find(|f| f["address"].as_u64() == Some(a)).unwrap();
    assert_eq!((named(caller)["symbol"].as_str(), named(callee)["symbol"].as_str()), (Some("work"), Some("inner")));
    assert_eq!(named(caller)["binary"].as_str(), Some(prog.to_str().unwrap()));
    assert!(funcs.iter().any(|f| f["symbol"] == "main" && f["calls"] == 1), "{funcs:?}");
    assert!(text.contains("work (prog)"), "{text}");
    assert_eq!(r["system"]["profile"]["unmatched_exits"].as_u64(), Some(0));

    // The kernel preset: recorded where LTTng's kernel tracer is available, else a clear error.
    let kname = format!("rostrace-withk-{}", std::process::id());
    let _ksession = LttngSession(kname.clone());
    let out = rostrace()
        .args(["record", "--backend", "lttng", "--with-kernel", "-s", &kname, "-p"])
        .arg(&dir)
        .args(["--", "true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        let (set, _) = rostrace_ctf::TraceSet::open(&[dir.join(&kname)]);
        assert!(set.traces.iter().any(|t| t.schema.event_classes().any(|c| c.name == "sched_switch")));
    } else {
        assert!(err.contains("kernel tracer") && err.lines().count() == 1, "{err}");
        assert!(!dir.join(&kname).exists(), "{err}");
    }
}

/// The disk fills while 4 threads emit as fast as they can; then a thread starts in that process,
/// and, once the disk is filled to the last byte, another process with a late thread of its own:
/// every stream ends at a whole packet (rostrace and babeltrace2 read the trace without error),
/// every event emitted is recorded or counted as discarded, exactly, also those of the writers
/// that started after the disk filled (in a trace of their own, for the late process), the
/// programs run to their end, and `rostrace record` says once that the trace could not be
/// written whole.
#[rostrace_testkit::needs(tmpfs)]
#[test]
fn a_full_disk_ends_the_streams_cleanly_and_counts_every_event() {
    let dir = tmp("disk-full");
    let prog = flows(&dir);
    let Some(disk) = Mount::tmpfs(dir.join("disk"), "3M") else {
        require(false, "root, to mount a small tmpfs (the full-disk test)");
        return;
    };
    let (count, late_count) = (dir.join("count.txt"), dir.join("late.txt"));
    let out = rostrace()
        .args(["record", "--buffer-size", "256K", "-s", "full", "-p"])
        .arg(&disk.0)
        .arg("--")
        .args([
            "sh",
            "-c",
            // The disk fills at once; after 1 s it is filled to its last byte; after 1.5 s a thread
            // starts in the process; then another process starts.
            "\"$0\" \"$1\" 4 0 stress 1.5 1000 & sleep 1; cat /dev/zero > \"$3/filler\" 2>/dev/null; wait; \
             \"$0\" \"$2\" 2 0 stress 0.2 1000",
        ])
        .arg(&prog)
        .arg(&count)
        .arg(&late_count)
        .arg(&disk.0)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(err.matches("could not be written whole").count(), 1, "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    let emitted: u64 =
        [&count, &late_count].iter().map(|c| std::fs::read_to_string(c).unwrap().trim().parse::<u64>().unwrap()).sum();
    let session = disk.0.join("full");
    // The late process has a trace of its own, and both count the losses of their late threads
    // (whose stream files could not be created) in their loss file.
    let traces = rostrace_ctf::find_traces(&session).unwrap();
    assert_eq!(traces.len(), 2);
    for t in &traces {
        let loss = std::fs::metadata(t.join(tracetools::tracer::LOSS_FILE)).map_or(0, |m| m.len());
        assert!(loss > 0, "{}: no losses counted in its loss file", t.display());
    }
    let (set, errors) = rostrace_ctf::TraceSet::open(&[&session]);
    assert!(errors.is_empty(), "{errors:?}");
    let (mut recorded, mut read_errors) = (0u64, Vec::new());
    let mut evs = set.events();
    while let Some(e) = evs.next() {
        match e {
            Ok(e) if e.name() == "ros2:callback_start" => recorded += 1,
            Ok(_) => {}
            Err(e) => read_errors.push(e.to_string()),
        }
    }
    let discarded = evs.discarded_events();
    drop(evs);
    eprintln!("full disk: {emitted} events emitted, {recorded} recorded, {discarded} discarded");
    assert!(read_errors.is_empty(), "{read_errors:?}");
    assert!(recorded > 0 && discarded > 0, "the disk should fill: {recorded} recorded, {discarded} discarded");
    assert_eq!(recorded + discarded, emitted);
    let info = rostrace().arg("info").arg(&session).output().unwrap();
    assert!(info.status.success(), "{}", String::from_utf8_lossy(&info.stderr));
    // babeltrace2 reads it whole, and counts the same losses.
    if require(have_babeltrace2(), "babeltrace2") {
        let out = Command::new("babeltrace2").arg(&session).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && !err.contains("ERROR"), "{err}");
        let lines = String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.contains("ros2:callback_start")).count();
        assert_eq!(lines as u64, recorded);
        // "WARNING: Tracer discarded N events between [...] and [...] in trace ..."
        let said: u64 = err
            .split("discarded ")
            .skip(1)
            .filter_map(|t| t.split_whitespace().next().and_then(|n| n.parse::<u64>().ok()))
            .sum();
        assert_eq!(said, discarded, "babeltrace2's count of discarded events");
    }
}

/// `create` prints the traced processes' environment as lines a shell runs as they are (a
/// directory with a space, the events' glob), the rclpy instrumentation on `PYTHONPATH`.
#[test]
fn create_prints_the_environment_for_a_shell() {
    let dir = tmp("create-env");
    let root = dir.join("with space");
    let out = rostrace().args(["create", "s", "-p"]).arg(&root).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let exports: Vec<&str> = text.lines().map(str::trim).filter(|l| l.starts_with("export ")).collect();
    assert!(exports.len() >= 5, "{text}");
    // In a directory where `ros2:*` would match a file if it were globbed.
    std::fs::write(dir.join("ros2:x,ros2_caret:y"), "").unwrap();
    let script = format!(
        "{}\nprintf '%s\\n' \"$ROSTRACE_SESSION_DIR\" \"$ROSTRACE_EVENTS\" \"$PYTHONPATH\"",
        exports.join("\n")
    );
    let sh = Command::new("sh").arg("-c").arg(script).current_dir(&dir).env_remove("PYTHONPATH").output().unwrap();
    let seen = String::from_utf8(sh.stdout).unwrap();
    let seen: Vec<&str> = seen.lines().collect();
    assert_eq!(seen[0], root.join("s").to_str().unwrap());
    assert_eq!(seen[1], "ros2:*,ros2_caret:*");
    assert!(Path::new(seen[2].split(':').next().unwrap()).join("sitecustomize.py").exists(), "{seen:?}");
}

/// A command given without `--` before it gets clap's error and a hint saying where `--` goes.
#[test]
fn a_command_without_dashes_gets_a_hint() {
    for sub in ["record", "live"] {
        let out = rostrace().args([sub, "python3", "my_node.py"]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{sub}: {err}");
        assert!(
            err.contains(&format!("put `--` before the command to trace: rostrace {sub} [OPTIONS] -- COMMAND")),
            "{err}"
        );
    }
}

/// A process whose environment names no distribution traces with the default ABI, and the
/// recording says that its distribution was assumed; one that names it is not so labelled.
#[test]
fn a_distribution_guessed_is_said_to_be_assumed() {
    let dir = tmp("assumed");
    let prog = flows(&dir);
    for (name, distro) in [("guessed", None), ("named", Some("rolling"))] {
        let mut cmd = record(&[]);
        cmd.env_remove("ROS_DISTRO").env_remove("ROSTRACE_DISTRO");
        if let Some(d) = distro {
            cmd.env("ROS_DISTRO", d);
        }
        record_flows(cmd, &dir, name, &prog, &["1", "2"]);
        let info = rostrace().arg("info").arg(dir.join(name)).output().unwrap();
        let text = String::from_utf8_lossy(&info.stdout);
        assert_eq!(text.contains("assumed for some processes: rolling"), distro.is_none(), "{name}: {text}");
        let analysis = analyze_json(&[], &[dir.join(name)]);
        let assumed = analysis["processes"].as_array().unwrap().iter().any(|p| p["distro_assumed"] == true);
        assert_eq!(assumed, distro.is_none(), "{name}");
    }
}

/// What an analysis says the system is: its nodes, and its callbacks by owner.
fn system_of(a: &serde_json::Value) -> (Vec<String>, Vec<String>) {
    let names = |k: &str, f: &dyn Fn(&serde_json::Value) -> String| {
        let mut v: Vec<String> = a[k].as_array().unwrap().iter().map(f).collect();
        v.sort();
        v
    };
    (
        names("nodes", &|n| n["name"].to_string()),
        names("callbacks", &|c| format!("{} {} {} {}", c["node"], c["kind"], c["topic"], c["timer_period_ns"])),
    )
}

/// Always-on recording: `record --rotate` writes chunks; each one analyses alone (it starts with
/// the initialization events) and describes the whole system; read together they are the whole
/// recording, every event the program emitted once, none lost or doubled at the boundaries.
#[test]
fn rotated_chunks_each_analyse_alone_and_together_are_the_whole_recording() {
    let dir = tmp("rotate");
    let prog = flows(&dir);
    let expected = dir.join("e.txt");
    let out = record(&["--rotate", "1s", "-s", "r", "-p"])
        .arg(&dir)
        .arg("--")
        .arg(&prog)
        .arg(&expected)
        .args(["1", "0", "run", "3.5"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let session = dir.join("r");
    let chunks = rostrace_session::chunks(&session);
    assert!((3..=5).contains(&chunks.len()), "{} chunks: {chunks:?}", chunks.len());
    let text = format!("{}{stderr}", String::from_utf8_lossy(&out.stdout));
    assert!(text.contains(&format!("recorded in {} chunks", chunks.len())), "{text}");
    let emitted = std::fs::read_to_string(&expected).unwrap().lines().count();
    let whole = analyze_json(&[], std::slice::from_ref(&session));
    // Read together, every event the program emitted, once; and CARET's caret_init.
    assert_eq!(whole["events"].as_u64().unwrap() as usize, emitted + 1, "{}", whole["events"]);
    assert_eq!(whole["discarded_events"], 0);
    let system = system_of(&whole);
    assert!(!system.0.is_empty() && !system.1.is_empty(), "{system:?}");
    let mut runtime = 0;
    for c in &chunks {
        // Each chunk alone: the whole system, and the events of its own time.
        let a = analyze_json(&[], std::slice::from_ref(c));
        assert_eq!(system_of(&a), system, "{}", c.display());
        let ros2 = events(c);
        let inits = ros2.iter().filter(|(n, _)| n.ends_with("_init") || n.contains("callback_added")).count();
        assert!(inits > 0, "{}: no initialization events", c.display());
        let (begin, end) = (a["begin_ns"].as_i64().unwrap(), a["end_ns"].as_i64().unwrap());
        assert!(end - begin < 2_500_000_000, "{}: spans {} ms", c.display(), (end - begin) / 1_000_000);
        runtime += ros2.iter().filter(|(n, _)| n == "ros2:callback_start").count();
        babeltrace2_reads(c);
    }
    let started =
        std::fs::read_to_string(&expected).unwrap().lines().filter(|l| l.contains("\tros2:callback_start\t")).count();
    assert_eq!(runtime, started, "callback starts over the chunks");
    // Any run of chunks is a recording too: the last two.
    let last_two = analyze_json(&[], &chunks[chunks.len() - 2..]);
    assert_eq!(system_of(&last_two), system);
    // Streamed in slices shorter than a chunk, the chunks' initialization events, written again
    // at each one's start, declare their objects once: every figure is the one in memory.
    let args = ["--stream", "always", "--slice-size", "8K", "--longest-paths"];
    let streamed = analyze_json(&args, std::slice::from_ref(&session));
    assert!(streamed["streamed"]["slices"].as_u64().unwrap() > 2 * chunks.len() as u64, "{}", streamed["streamed"]);
    let mut out = Vec::new();
    differences(&whole, &streamed, "", &mut out);
    assert!(out.is_empty(), "streamed over the chunks: {} differences:\n{}", out.len(), out.join("\n"));
    // babeltrace2 reads the chunks together as rostrace does, event for event.
    if require(have_babeltrace2(), "babeltrace2") {
        let theirs = Command::new("babeltrace2").arg(&session).output().unwrap();
        let ours = rostrace().arg("events").arg(&session).output().unwrap();
        assert!(theirs.status.success() && ours.status.success());
        assert!(theirs.stdout == ours.stdout, "babeltrace2 and rostrace events differ on the chunks");
    }
}

/// `--keep N` keeps the newest N chunks and says how many went; what rotation does not go with
/// is refused with the reason.
#[test]
fn rotation_keeps_the_newest_chunks() {
    let dir = tmp("rotate-keep");
    let prog = flows(&dir);
    let out = record(&["--rotate", "1s", "--keep", "2", "-s", "k", "-p"])
        .arg(&dir)
        .arg("--")
        .arg(&prog)
        .arg(dir.join("e.txt"))
        .args(["1", "0", "run", "4.5"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let chunks = rostrace_session::chunks(&dir.join("k"));
    assert_eq!(chunks.len(), 2, "{chunks:?}");
    let text = format!("{}{stderr}", String::from_utf8_lossy(&out.stdout));
    assert!(text.contains("oldest deleted (--keep 2)"), "{text}");
    // The oldest kept is not the first.
    assert!(!chunks[0].file_name().unwrap().to_string_lossy().starts_with("chunk-000000"), "{chunks:?}");
    let kept = analyze_json(&[], &[dir.join("k")]);
    assert!(kept["callbacks"].as_array().is_some_and(|c| !c.is_empty()), "{kept}");
    for (args, says) in [
        (&["--rotate", "10m"][..], "10min"),
        (&["--keep", "2"][..], "--rotate"),
        (&["--rotate", "1s", "--keep", "0"][..], "--keep 0"),
        (&["--rotate", "1s", "--backend", "lttng"][..], "--backend embedded"),
        (&["--rotate", "1s", "--snapshot-mode"][..], "choose one"),
    ] {
        let o = record(args).args(["-p"]).arg(&dir).args(["--", "true"]).output().unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && e.contains(says), "{args:?}: {e}");
    }
    let o = rostrace().args(["start", "s", "--rotate", "1s", "-p"]).arg(&dir).output().unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("rostrace record --rotate"), "{e}");
}
