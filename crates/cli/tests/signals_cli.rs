//! The signals that stop a recording front end, for `record` and `live -- COMMAND` alike:
//! SIGTERM, SIGHUP and SIGQUIT are passed on to the traced command, which ends; the recording
//! is finished (its session no longer recording) and rostrace exits as the command ended.
//! Further signals stop a command that ignores them harder: SIGTERM, then SIGKILL.

mod common;

use common::*;
use std::path::Path;
use std::time::Duration;

fn tmp(name: &str) -> TempDir {
    TempDir::new(&format!("signals-{name}"))
}

/// What `rostrace list -p DIR` says of session `name`.
fn listed_state(dir: &Path, name: &str) -> String {
    let out = rostrace().args(["list", "-p"]).arg(dir).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines().find(|l| l.split_whitespace().next() == Some(name)).unwrap_or_default().to_string()
}

/// Starts `rostrace ARGS -s NAME -p DIR -- PROG OUT 1 0 run 30` (the flow program, running
/// 30 s), waits until its process traces, and returns the job and the traced process.
fn start(args: &[&str], dir: &Path, name: &str, prog: &Path) -> (Job, i32) {
    let job = spawn_job(
        rostrace()
            .args(args)
            .args(["-s", name, "-p"])
            .arg(dir)
            .arg("--")
            .arg(prog)
            .arg(dir.join(format!("{name}.txt")))
            .args(["1", "0", "run", "30"]),
        dir,
        name,
    );
    let session = dir.join(name);
    wait_for_path(&session.join("ust/pid"));
    std::thread::sleep(Duration::from_millis(300));
    let pids = traced_pids(&session);
    assert_eq!(pids.len(), 1, "{name}: {pids:?}");
    (job, pids[0])
}

/// Asserts that the traced process `pid` no longer runs (killing it when it does).
fn assert_ended(pid: i32, what: &str, err: &str) {
    let command_runs = runs(pid);
    if command_runs {
        // SAFETY: the traced command this test started, left running.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    assert!(!command_runs, "{what}: the traced command still runs: {err}");
}

/// The session's trace is finished and complete: stopped, readable, its callbacks there.
fn assert_finished(dir: &Path, name: &str) {
    let session = dir.join(name);
    assert_eq!(tracetools::tracer::control_state(Some(&session)), tracetools::tracer::Control::Stopped, "{name}");
    assert!(!listed_state(dir, name).contains("recording"), "{name}: {}", listed_state(dir, name));
    let (set, errors) = rostrace_ctf::TraceSet::open(&[&session]);
    assert!(errors.is_empty(), "{name}: {errors:?}");
    let mut n = 0;
    let mut evs = set.events();
    while let Some(e) = evs.next() {
        n += (e.unwrap().name() == "ros2:callback_start") as usize;
    }
    assert_eq!(evs.discarded_events(), 0, "{name}");
    assert!(n > 50, "{name}: {n} callbacks");
}

/// SIGHUP (a closed terminal) and SIGQUIT (Ctrl-\) to `rostrace record`: passed on to the
/// command as SIGTERM is, the trace finished, exit 128 + the signal. (Before, rostrace died at
/// once, the command went on running, and `list` showed the session recording.)
#[test]
fn record_passes_sighup_and_sigquit_on_and_finishes_the_session() {
    let dir = tmp("record");
    let prog = flows(&dir);
    for (name, sig) in [("hup", libc::SIGHUP), ("quit", libc::SIGQUIT)] {
        let (job, pid) = start(&["record"], &dir, name, &prog);
        // SAFETY: a signal to the rostrace process this test started.
        unsafe { libc::kill(job.child.id() as i32, sig) };
        let (status, _, err) = wait_at_most(job, 20, &format!("rostrace record after {name}"));
        assert_ended(pid, name, &err);
        assert_eq!(status.code(), Some(128 + sig), "{name}: {status:?}: {err}");
        assert!(err.contains("sent on to the command"), "{name}: {err}");
        assert_finished(&dir, name);
    }
}

/// SIGTERM to `rostrace live -- COMMAND` does what it does to `record`: the command ends, the
/// recording is finished, `live` ends with the command's status. (Before, `live` died at once
/// and left the command running under PID 1, its recording never finished.)
#[test]
fn live_passes_sigterm_on_and_finishes_the_recording() {
    let dir = tmp("live-term");
    let prog = flows(&dir);
    let (job, pid) = start(&["live", "--plain", "--interval", "0.2"], &dir, "term", &prog);
    // SAFETY: a signal to the rostrace process this test started.
    unsafe { libc::kill(job.child.id() as i32, libc::SIGTERM) };
    let (status, out, err) = wait_at_most(job, 20, "rostrace live after SIGTERM");
    assert_ended(pid, "live", &err);
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{status:?}: {err}");
    assert!(out.contains("-- whole recording"), "the final snapshot: {out}");
    assert_finished(&dir, "term");
}

/// Ctrl-C to `live -- COMMAND` with a command that ignores SIGINT and SIGTERM: the first is left
/// to the command, the second sends it SIGTERM, the third SIGKILL; the recording is finished.
/// (Before, no number of Ctrl-Cs ended it.)
#[test]
fn live_escalates_repeated_ctrl_c() {
    let dir = tmp("live-int");
    let prog = flows(&dir);
    let script = "trap '' INT TERM; exec \"$0\" \"$1\" 1 0 run 60";
    let job = spawn_job(
        rostrace()
            .args(["live", "--plain", "-s", "int", "-p"])
            .arg(&dir)
            .args(["--", "sh", "-c", script])
            .arg(&prog)
            .arg(dir.join("int.txt")),
        &dir,
        "int",
    );
    let session = dir.join("int");
    wait_for_path(&session.join("ust/pid"));
    std::thread::sleep(Duration::from_millis(300));
    let pid = traced_pids(&session)[0];
    let group = -(job.child.id() as i32);
    for _ in 0..2 {
        // SAFETY: Ctrl-C to the process group this test created.
        unsafe { libc::kill(group, libc::SIGINT) };
        std::thread::sleep(Duration::from_millis(500));
        assert!(runs(pid), "the command ignores SIGINT and SIGTERM");
    }
    // SAFETY: kill touches no memory; the group is the one this test created.
    unsafe { libc::kill(group, libc::SIGINT) };
    let (status, _, err) = wait_at_most(job, 20, "rostrace live after a third Ctrl-C");
    assert_ended(pid, "live", &err);
    assert_eq!(status.code(), Some(128 + libc::SIGKILL), "{status:?}: {err}");
    assert!(err.contains("SIGKILL sent"), "{err}");
    assert_finished(&dir, "int");
}

/// `live`'s standard output failing: on a full disk it says so and exits 1 (before: 0, every
/// snapshot lost in silence); closed by its reader (`| head -c1`) it ends quietly as every
/// command does, and the recorded command runs to its end (before: "Broken pipe", exit 1).
#[test]
fn live_output_errors_are_those_of_every_command() {
    let dir = tmp("live-out");
    let prog = flows(&dir);
    let full = rostrace()
        .args(["live", "--plain", "--interval", "0.2", "-s", "full", "-p"])
        .arg(&dir)
        .arg("--")
        .arg(&prog)
        .arg(dir.join("full.txt"))
        .args(["1", "0", "run", "1"])
        .stdout(std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&full.stderr);
    assert_eq!(full.status.code(), Some(1), "{err}");
    assert!(err.contains("standard output") && err.contains("No space left"), "{err}");
    let mut child = rostrace()
        .args(["live", "--jsonl", "-", "--interval", "0.2", "-s", "closed", "-p"])
        .arg(&dir)
        .arg("--")
        .arg(&prog)
        .arg(dir.join("closed.txt"))
        .args(["1", "0", "run", "2"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut one = [0u8; 1];
    std::io::Read::read_exact(&mut stdout, &mut one).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.to_lowercase().contains("broken pipe") && !err.contains("error"), "{err}");
    assert_finished(&dir, "closed");
}
