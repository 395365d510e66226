//! A C program compiled against the generated `tracetools/tracetools.h` replays every flow of
//! the ROS 2 instrumentation design through the C ABI, in several threads and two processes.
//! The traces written by the embedded tracer and by LTTng-UST (a real `lttng-sessiond`) read
//! back, with rostrace's reader and with babeltrace2, to exactly the events and field values
//! emitted, in order per thread.

mod common;

use common::{lib_dir, read_rostrace, PerThread};
use rostrace_testkit::{have, have_lttng, lttng_lock, require, LttngSession, TempDir};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn tmp(name: &str) -> TempDir {
    TempDir::new(&format!("cabi-{name}"))
}

/// Compiles tests/c/flows.c against the generated header and libtracetools.so.
fn compile(dir: &Path) -> PathBuf {
    let lib = lib_dir();
    assert!(lib.join("libtracetools.so").exists(), "libtracetools.so not built in {}", lib.display());
    let out = dir.join("flows");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/flows.c");
    tracetools::compile_c(&src, &out, &lib).expect("a C compiler (cc)");
    out
}

fn expected(files: &[PathBuf]) -> PerThread {
    let mut m = PerThread::new();
    for f in files {
        for line in std::fs::read_to_string(f).unwrap().lines() {
            let mut it = line.splitn(3, '\t');
            let tid: i64 = it.next().unwrap().parse().unwrap();
            let name = it.next().unwrap().to_string();
            let v: Value = serde_json::from_str(it.next().unwrap()).unwrap_or_else(|e| panic!("{line}: {e}"));
            m.entry(tid).or_default().push((name, v));
        }
    }
    m
}

fn read_babeltrace2(dir: &Path) -> PerThread {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/bt2_jsonl.py");
    let out = Command::new("/usr/bin/python3").arg(script).arg(dir).output().unwrap();
    assert!(out.status.success(), "babeltrace2: {}", String::from_utf8_lossy(&out.stderr));
    let mut m = PerThread::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let name = v["name"].as_str().unwrap().to_string();
        if !name.starts_with("ros2:") {
            continue;
        }
        let tid = v["context"]["vtid"].as_i64().unwrap();
        m.entry(tid).or_default().push((name, v["fields"].clone()));
    }
    m
}

fn assert_same(what: &str, got: &PerThread, want: &PerThread) {
    assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>(), "{what}: threads");
    for (tid, w) in want {
        let g = &got[tid];
        assert_eq!(g.len(), w.len(), "{what}: thread {tid}: {} events, {} emitted", g.len(), w.len());
        for (k, (a, b)) in g.iter().zip(w).enumerate() {
            assert_eq!(a, b, "{what}: thread {tid}, event #{k}");
        }
    }
}

/// The trace in `dir` reads back as `want` with rostrace's reader and with babeltrace2 (no warning).
fn check_both_readers(what: &str, dir: &Path, want: &PerThread) {
    let (got, discarded) = read_rostrace(dir);
    assert_eq!(discarded, 0, "{what}");
    assert_same(&format!("{what}, rostrace reader"), &got, want);
    let bt2 = have("babeltrace2", "--version")
        && Command::new("/usr/bin/python3").args(["-c", "import bt2"]).output().is_ok_and(|o| o.status.success());
    if !require(bt2, "babeltrace2 and python3-bt2 (the babeltrace2 comparison)") {
        return;
    }
    assert_same(&format!("{what}, babeltrace2"), &read_babeltrace2(dir), want);
    let out = Command::new("babeltrace2").arg(dir).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !err.contains("WARNING"), "{what}: {err}");
}

/// Runs `prog` with `args` and `env` (ROSTRACE_SESSION_DIR removed unless given); waits for it.
fn run(
    prog: &Path,
    args: &[&dyn AsRef<std::ffi::OsStr>],
    env: &[(&str, &dyn AsRef<std::ffi::OsStr>)],
) -> std::process::ExitStatus {
    let mut c = Command::new(prog);
    c.env_remove("ROSTRACE_SESSION_DIR");
    for a in args {
        c.arg(a);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.status().unwrap()
}

/// Runs two processes of `prog` (3 threads, 5 iterations each) with `env`; returns their expected files.
fn run_two(prog: &Path, dir: &Path, env: &[(&str, String)]) -> Vec<PathBuf> {
    let files: Vec<PathBuf> = (0..2).map(|i| dir.join(format!("expected-{i}.txt"))).collect();
    let children: Vec<_> = files
        .iter()
        .map(|f| {
            let mut c = Command::new(prog);
            c.arg(f).args(["3", "5"]);
            for (k, v) in env {
                c.env(k, v);
            }
            c.spawn().unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    files
}

#[test]
fn embedded_tracer_records_every_flow_exactly() {
    let dir = tmp("embedded");
    let prog = compile(&dir);
    let session = dir.join("session");
    let files = run_two(&prog, &dir, &[("ROSTRACE_SESSION_DIR", session.display().to_string())]);
    let want = expected(&files);
    assert_eq!(want.len(), 6, "3 threads in each of 2 processes");
    // LTTng's per-process layout, one trace per process.
    let traces = rostrace_ctf::find_traces(&session).unwrap();
    assert_eq!(traces.len(), 2);
    assert!(traces.iter().all(|t| t.to_string_lossy().contains("/ust/pid/flows-")));
    check_both_readers("embedded trace", &session, &want);
    // Every one of the 42 tracepoints was emitted.
    let names: std::collections::BTreeSet<&str> = want.values().flatten().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.len(), 42, "{names:?}");
}

#[test]
fn disabled_without_a_session_and_with_runtime_disable() {
    let dir = tmp("disabled");
    let prog = compile(&dir);
    let session = dir.join("session");
    // No ROSTRACE_SESSION_DIR: nothing is written, the program runs.
    let e = dir.join("e.txt");
    assert!(run(&prog, &[&e, &"2", &"2"], &[]).success());
    // TRACETOOLS_RUNTIME_DISABLE=1 wins over a session.
    assert!(run(&prog, &[&e, &"2", &"2"], &[("ROSTRACE_SESSION_DIR", &session), ("TRACETOOLS_RUNTIME_DISABLE", &"1")])
        .success());
    assert!(!session.exists());
}

/// 8 threads emit as fast as they can with small buffers: every event is in the trace or
/// counted as discarded, and the process is not blocked by tracing.
#[test]
fn stress_every_event_recorded_or_counted() {
    let dir = tmp("stress");
    let prog = compile(&dir);
    let session = dir.join("session");
    let count = dir.join("count.txt");
    let t = std::time::Instant::now();
    let st = run(
        &prog,
        &[&count, &"8", &"0", &"stress", &"2"],
        &[("ROSTRACE_SESSION_DIR", &session), ("ROSTRACE_BUFFER_SIZE", &"64K")],
    );
    assert!(st.success());
    let elapsed = t.elapsed().as_secs_f64();
    let emitted: u64 = std::fs::read_to_string(&count).unwrap().trim().parse().unwrap();
    let (set, errors) = rostrace_ctf::TraceSet::open(&[&session]);
    assert!(errors.is_empty(), "{errors:?}");
    let mut recorded = 0u64;
    let mut events = set.events();
    while let Some(ev) = events.next() {
        if ev.unwrap().name() == "ros2:callback_start" {
            recorded += 1;
        }
    }
    let discarded: u64 = events.discarded_events();
    eprintln!(
        "stress: {emitted} events emitted by 8 threads in 2 s: {recorded} recorded, {discarded} discarded ({:.1}%), process ran {elapsed:.2} s",
        100.0 * discarded as f64 / emitted as f64
    );
    assert_eq!(recorded + discarded, emitted);
    assert!(recorded > 0 && discarded > 0, "the small buffers should both record and drop");
    assert!(elapsed < 10.0, "the process took {elapsed:.1} s for 2 s of work");
}

/// The same flows through the LTTng-UST backend, recorded by a real LTTng session.
#[rostrace_testkit::needs(lttng)]
#[test]
fn lttng_backend_records_every_flow_exactly() {
    if !require(have_lttng(), "LTTng (lttng-tools, liblttng-ust-dev)") {
        return;
    }
    let _lttng = lttng_lock();
    let provider = tracetools::lttng_provider(tracetools::distro::current());
    assert!(provider.exists(), "the LTTng-UST provider was not built: {}", provider.display());
    let dir = tmp("lttng");
    let prog = compile(&dir);
    let out = dir.join("trace");
    let name = format!("rostrace-test-{}", std::process::id());
    let session = LttngSession::start(&name, &out);
    let files = run_two(
        &prog,
        &dir,
        &[
            ("ROSTRACE_BACKEND", "lttng".to_string()),
            ("ROSTRACE_LTTNG_PROVIDER", tracetools::LTTNG_PROVIDER_DIR.to_string()),
        ],
    );
    session.stop();
    let want = expected(&files);
    check_both_readers("LTTng trace", &out, &want);
}

/// The `callback` field of every `callback_end` of a one-thread trace, in order.
fn callback_ends(m: &PerThread) -> Vec<u64> {
    assert!(m.len() <= 1, "one thread: {:?}", m.keys());
    m.values()
        .flatten()
        .filter(|(name, _)| name == "ros2:callback_end")
        .map(|(_, v)| v["callback"].as_u64().unwrap())
        .collect()
}

/// SIGKILL runs no handler: the trace holds what the writer wrote on its periodic flushes. A
/// process that recorded and then idled (more than a flush period) loses nothing, and the
/// partial packets read with both readers.
#[test]
fn events_survive_sigkill_after_the_flush_period() {
    use std::io::BufRead;
    let dir = tmp("sigkill");
    let prog = compile(&dir);
    let session = dir.join("session");
    let mut child = Command::new(&prog)
        .arg(dir.join("e.txt"))
        .args(["1", "204", "idle"])
        .env("ROSTRACE_SESSION_DIR", &session)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "recorded");
    std::thread::sleep(std::time::Duration::from_millis(300)); // 15 flush periods
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let want: Vec<u64> = (1..=204).collect();
    let (got, discarded) = read_rostrace(&session);
    assert_eq!(discarded, 0);
    assert_eq!(callback_ends(&got), want, "rostrace reader");
    if require(have("babeltrace2", "--version"), "babeltrace2") {
        assert_eq!(callback_ends(&read_babeltrace2(&session)), want, "babeltrace2");
    }
}

/// A process's first events are written at once, not after a flush period: a process that
/// records a burst and then idles, killed (SIGKILL) a few ms later, keeps its burst. (Before, its
/// trace directory and files were made by the writer's first flush, 20 ms after its start, later
/// on a busy machine: a process killed 35 ms after its only burst lost it all.)
#[test]
fn a_first_burst_survives_sigkill_shortly_after() {
    use std::io::BufRead;
    let dir = tmp("sigkill-burst");
    let prog = compile(&dir);
    // The writer is woken by a thread's first event and polls every ms for a while after it:
    // 10 ms leave it room, and are half the flush period. It writes as soon as it gets a CPU: the
    // program runs at a higher priority than the machine's other work (where allowed: as root),
    // so that what is tested is the writer's timing, not the scheduler's under another load.
    const KILL_AFTER_MS: u64 = 10;
    for run in 0..3 {
        let session = dir.join(format!("session-{run}"));
        let mut cmd = Command::new(&prog);
        // SAFETY: setpriority is async-signal-safe and touches no memory of the parent; its
        // failure (not root) leaves the priority as it was.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                libc::setpriority(libc::PRIO_PROCESS, 0, -10);
                Ok(())
            });
        }
        let mut child = cmd
            .arg(dir.join("e.txt"))
            .args(["1", "300", "idle"])
            .env("ROSTRACE_SESSION_DIR", &session)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "recorded");
        std::thread::sleep(std::time::Duration::from_millis(KILL_AFTER_MS));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let got = if rostrace_ctf::find_traces(&session).is_ok() {
            callback_ends(&read_rostrace(&session).0)
        } else {
            Vec::new()
        };
        assert!(
            got == (1..=300).collect::<Vec<u64>>(),
            "run {run}: {} of 300 events kept by a process killed {KILL_AFTER_MS} ms after its burst",
            got.len()
        );
    }
}

/// The initialization events a process keeps for start-any-time replay are bounded by
/// `ROSTRACE_MEMORY_BUDGET` (half of it): a process that initializes a million nodes before the
/// session starts keeps what fits, the replay writes those and counts the others as discarded
/// (kept + discarded = initialized), and the process's memory stays small. (Before, the store
/// grew without bound: 1.1 GB for a million nodes of a real system.)
#[test]
fn the_store_of_initialization_events_is_bounded() {
    use std::io::BufRead;
    let dir = tmp("init-store");
    let prog = compile(&dir);
    let session = dir.join("session");
    std::fs::create_dir_all(&session).unwrap();
    std::fs::write(session.join(tracetools::tracer::CONTROL_FILE), "created\n").unwrap();
    const NODES: u64 = 1_000_000;
    let hwm_file = dir.join("hwm.txt");
    let mut child = Command::new(&prog)
        .arg(&hwm_file)
        .args(["1", &NODES.to_string(), "inits"])
        .env("ROSTRACE_SESSION_DIR", &session)
        .env("ROSTRACE_MEMORY_BUDGET", "16M")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "initialized");
    // Start: the process writes its initialization events, then ends.
    std::fs::write(session.join(tracetools::tracer::CONTROL_FILE), "recording\n").unwrap();
    let replayed = || {
        rostrace_ctf::find_traces(&session).ok().and_then(|t| t.first().cloned()).is_some_and(|t| {
            std::fs::read_dir(t).unwrap().any(|e| e.unwrap().file_name().to_string_lossy().starts_with("channel0_init"))
        })
    };
    let t = std::time::Instant::now();
    while !replayed() && t.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    let hwm_kb: u64 = std::fs::read_to_string(&hwm_file).unwrap().trim().parse().unwrap();
    let (set, errors) = rostrace_ctf::TraceSet::open(&[&session]);
    assert!(errors.is_empty(), "{errors:?}");
    let mut kept = 0u64;
    let mut events = set.events();
    while let Some(ev) = events.next() {
        kept += (ev.unwrap().name() == "ros2:rcl_node_init") as u64;
    }
    let discarded = events.discarded_events();
    eprintln!(
        "{NODES} nodes initialized: {kept} replayed, {discarded} counted as discarded; peak memory {} MiB",
        hwm_kb >> 10
    );
    assert_eq!(kept + discarded, NODES);
    assert!(kept > 10_000 && discarded > 0, "{kept} kept");
    if require(have("babeltrace2", "--version"), "babeltrace2") {
        let out = Command::new("babeltrace2").arg(&session).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && !err.contains("ERROR"), "{err}");
        assert!(err.contains(&format!("discarded {discarded} events")), "{err}");
    }
    // The program itself, its 1 MiB ring, the store (8 MiB): far from the hundreds of MiB of a
    // million events kept.
    assert!(hwm_kb < 48 << 10, "peak resident memory {} MiB", hwm_kb >> 10);
}

/// Flight recorder: events no stream can hold (here, every thread is beyond the memory budget)
/// are counted in the process's loss file across snapshots, not only until the first one.
#[test]
fn losses_are_counted_across_snapshots() {
    let dir = tmp("snapshot-losses");
    let prog = compile(&dir);
    let session = dir.join("session");
    std::fs::create_dir_all(&session).unwrap();
    // A snapshot asked for at once: the writer takes it at its first flush.
    std::fs::write(session.join(tracetools::tracer::SNAPSHOT_FILE), "1\n").unwrap();
    let e = dir.join("e.txt");
    let env: [(&str, &dyn AsRef<std::ffi::OsStr>); 3] =
        [("ROSTRACE_SESSION_DIR", &session), ("ROSTRACE_SNAPSHOT", &"64K"), ("ROSTRACE_MEMORY_BUDGET", &"0")];
    assert!(run(&prog, &[&e, &"1", &"0", &"run", &"0.5"], &env).success());
    let emitted = std::fs::read_to_string(&e).unwrap().lines().count() as u64;
    let (got, discarded) = read_rostrace(&session);
    assert!(got.is_empty(), "{got:?}");
    // Every event, and the initialization events each snapshot misses (not kept: no budget).
    assert!(discarded >= emitted, "{discarded} counted of {emitted} emitted");
}

/// A crash while every core is busy (the writer thread holds its lock longer) still writes
/// every event recorded before it: the crash handler waits for the writer.
#[test]
fn a_crash_on_a_busy_machine_loses_nothing() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = tmp("crash-busy");
    let prog = compile(&dir);
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let spinners: Vec<_> = (0..2 * cores)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
            })
        })
        .collect();
    // Enough events (20 MB) that the writer is still writing them when the program crashes.
    const N: usize = 500_000;
    // Before the handler waited for the writer, 7 of 20 such runs lost 30-50% of their events.
    let mut lost = Vec::new();
    for k in 0..12 {
        let session = dir.join(format!("session-{k}"));
        let env: [(&str, &dyn AsRef<std::ffi::OsStr>); 2] =
            [("ROSTRACE_SESSION_DIR", &session), ("ROSTRACE_BUFFER_SIZE", &"64M")];
        let st = run(&prog, &[&dir.join("e.txt"), &"1", &N.to_string(), &"crash"], &env);
        assert!(!st.success(), "the program should have crashed");
        let (got, discarded) = read_rostrace(&session);
        let n = callback_ends(&got).len();
        if n != N || discarded != 0 {
            lost.push((k, n, discarded));
        }
        let _ = std::fs::remove_dir_all(&session);
    }
    stop.store(true, Ordering::Relaxed);
    for t in spinners {
        t.join().unwrap();
    }
    assert!(lost.is_empty(), "runs that lost events (run, events recorded, discarded): {lost:?}");
}

/// A process that dies of SIGSEGV still leaves the events it recorded, readable.
#[test]
fn events_survive_a_crash() {
    let dir = tmp("crash");
    let prog = compile(&dir);
    let session = dir.join("session");
    let st = run(&prog, &[&dir.join("e.txt"), &"1", &"1000", &"crash"], &[("ROSTRACE_SESSION_DIR", &session)]);
    assert!(!st.success(), "the program should have crashed");
    let (got, _) = read_rostrace(&session);
    let n: usize = got.values().map(|v| v.len()).sum();
    assert_eq!(n, 1000);
}

/// Event times are CLOCK_MONOTONIC ns whether the tracepoint reads the TSC (where the kernel's
/// clocksource is `tsc`) or the clock itself (`ROSTRACE_CLOCK=monotonic`): each `rmw_take`
/// carries the clock read just before it, and its time lies between that read and the next
/// one (to the calibration's error, at most 2 µs, over pauses that span many calibration
/// periods), in order, in every thread.
#[test]
fn event_times_are_the_monotonic_clock() {
    let dir = tmp("clock");
    let prog = compile(&dir);
    let tsc = tracetools::tracer::tsc_usable();
    eprintln!("this machine's clocksource {} the TSC", if tsc { "is" } else { "is not" });
    for clock in ["default", "monotonic"] {
        let session = dir.join(clock);
        let st = run(
            &prog,
            &[&dir.join("e.txt"), &"2", &"3000", &"clock"],
            &[("ROSTRACE_SESSION_DIR", &session), ("ROSTRACE_CLOCK", &clock), ("ROSTRACE_BUFFER_SIZE", &"4M")],
        );
        assert!(st.success());
        let (set, errors) = rostrace_ctf::TraceSet::open(&[&session]);
        assert!(errors.is_empty(), "{errors:?}");
        // Per thread: (event time, clock read before it).
        let mut per: std::collections::BTreeMap<i64, Vec<(i64, i64)>> = Default::default();
        let mut events = set.events();
        while let Some(ev) = events.next() {
            let ev = ev.unwrap();
            if ev.name() != "ros2:rmw_take" {
                continue;
            }
            let tid = ev.context_field("vtid").and_then(|v| v.as_i64()).unwrap();
            let before = ev.field("source_timestamp").and_then(|v| v.as_i64()).unwrap();
            // The clock counts ns (frequency 1 GHz): its cycles are CLOCK_MONOTONIC.
            per.entry(tid).or_default().push((ev.cycles() as i64, before));
        }
        assert_eq!(events.discarded_events(), 0);
        assert_eq!(per.len(), 2, "{clock}: threads");
        let (mut early, mut late) = (0i64, 0i64);
        for (tid, evs) in &per {
            assert_eq!(evs.len(), 3001, "{clock}: thread {tid}");
            for (k, w) in evs.windows(2).enumerate() {
                assert!(w[1].0 >= w[0].0, "{clock}: thread {tid}, event {k}: time goes back: {w:?}");
                early = early.max(w[0].1 - w[0].0);
                late = late.max(w[0].0 - w[1].1);
            }
        }
        eprintln!("{clock} clock: events at most {early} ns before their clock read, {late} ns after the next one");
        if clock == "monotonic" || !tsc {
            assert!(early <= 0 && late <= 0, "{clock}: {early} {late}");
        } else {
            assert!(early <= 2_000 && late <= 2_000, "{clock}: {early} {late}");
        }
    }
}

/// Compiles the C program `source` (against the generated header and libtracetools.so) in `dir`.
fn compile_source(dir: &Path, name: &str, source: &str) -> PathBuf {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, source).unwrap();
    let out = dir.join(name);
    tracetools::compile_c(&src, &out, &lib_dir()).expect("a C compiler (cc)");
    out
}

/// A process that names itself `../../../x` (prctl(PR_SET_NAME)) writes its trace inside the
/// session directory, under a name that is one path component, and its events say its name.
#[test]
fn a_process_name_cannot_climb_out_of_the_session() {
    let dir = tmp("procname");
    let prog = compile_source(
        &dir,
        "rename",
        r#"#include <sys/prctl.h>
#include "tracetools/tracetools.h"
int main(int argc, char ** argv)
{
  (void) argc;
  prctl(PR_SET_NAME, argv[1]);
  TRACETOOLS_TRACEPOINT(callback_end, (const void *) 7);
  return 0;
}
"#,
    );
    let session = dir.join("a/session");
    for name in ["../../../x", "..", ".hidden", "a/b\nc", "talker"] {
        let st = run(&prog, &[&name], &[("ROSTRACE_SESSION_DIR", &session)]);
        assert!(st.success(), "{name:?}");
    }
    // Nothing beside the session, nor above it.
    let entries = |d: &Path| -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    };
    assert_eq!(entries(&dir), ["a", "rename", "rename.c"]);
    assert_eq!(entries(&dir.join("a")), ["session"]);
    assert_eq!(entries(&session), [tracetools::tracer::RESERVE_DIR, "ust"]);
    assert_eq!(entries(&session.join("ust")), ["pid"]);
    let traces = entries(&session.join("ust/pid"));
    assert_eq!(traces.len(), 5, "{traces:?}");
    for t in &traces {
        assert!(!t.starts_with('.') && !t.contains('/') && !t.contains('\n'), "{t:?}");
    }
    // An ordinary name keeps LTTng's layout.
    assert!(traces.iter().any(|t| t.starts_with("talker-")), "{traces:?}");
    assert!(traces.iter().any(|t| t.starts_with("_._.._.._x-")), "{traces:?}");
    // Every trace is found and read, its events with the name the process gave itself.
    assert_eq!(rostrace_ctf::find_traces(&session).unwrap().len(), 5);
    let (set, errors) = rostrace_ctf::TraceSet::open(&[&session]);
    assert!(errors.is_empty(), "{errors:?}");
    let mut names = Vec::new();
    let mut events = set.events();
    while let Some(ev) = events.next() {
        let ev = ev.unwrap();
        if ev.name() == "ros2:callback_end" {
            names.push(ev.context_field("procname").and_then(|v| v.as_str().map(|s| s.into_owned())).unwrap());
        }
    }
    names.sort();
    assert_eq!(names, ["..", "../../../x", ".hidden", "a/b\nc", "talker"]);
    if require(have("babeltrace2", "--version"), "babeltrace2") {
        let out = Command::new("babeltrace2").arg(&session).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && !err.contains("WARNING") && !err.contains("ERROR"), "{err}");
        assert_eq!(String::from_utf8_lossy(&out.stdout).matches("ros2:callback_end").count(), 5);
    }
}
