//! A message-heavy recording: `rostrace analyze` against `rostrace info` (reading alone) on the
//! same trace, in the same run, with their peak memory.
//!
//! `cargo bench -p rostrace --bench messages [-- ROUNDS]` (default 100000; `-- --generate DIR
//! ROUNDS` writes the trace alone): a generated chain of ten nodes (a timer-driven source, eight
//! relays, a sink), each on a thread of its own, passing one message from the source to the sink
//! every millisecond, ROUNDS times: 56 events a round, every message taken and every callback
//! run (one process, Jazzy's events). Each command runs in a process of its own, best of three.
//! With `ROSTRACE_BENCH_BASELINE` set to another build's `rostrace`, its `analyze` is measured
//! on the same trace too.

#[path = "measure.rs"]
mod measure;
#[path = "../../analysis/tests/support/system.rs"]
mod system;

use measure::measure;
use std::path::Path;
use std::process::Command;
use system::{Sys, MS};

const CHAIN: usize = 10;

fn generate(dir: &Path, rounds: u64) {
    let mut s = Sys::new();
    let mut chain = Vec::with_capacity(CHAIN);
    for k in 0..CHAIN {
        let n = s.node(&format!("chain/n{k}"));
        let sub = (k > 0).then(|| s.subscription(n, &format!("/chain/t{}", k - 1)));
        let timer = (k == 0).then(|| s.timer(n, MS));
        let publ = (k + 1 < CHAIN).then(|| s.publisher(n, &format!("/chain/t{k}")));
        chain.push((timer, sub, publ));
    }
    for round in 0..rounds {
        let mut t = 10 * MS + round * MS;
        let mut src = 0;
        for (k, (timer, sub, publ)) in chain.iter().enumerate() {
            let tid = 1000 + k as i32;
            if let Some(cb) = timer {
                s.run(tid, *cb, t, t + 20_000);
            }
            if let Some(sub) = sub {
                s.deliver(tid, *sub, src, t, 10_000);
            }
            if let Some(p) = publ {
                src = s.publish(tid, *p, t + 1_000);
            }
            t += 20_000;
        }
    }
    s.write(dir);
}

/// The best of three runs: (s, MB, ok).
fn best(cmd: impl Fn() -> Command) -> (f64, f64, bool) {
    (0..3).map(|_| measure(&mut cmd())).fold((f64::MAX, 0.0, true), |a, r| (a.0.min(r.0), a.1.max(r.1), a.2 && r.2))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, dir, n, ..] = args.as_slice() {
        if flag == "--generate" {
            generate(Path::new(dir), n.parse().expect("a round count"));
            return;
        }
    }
    let rounds = args.iter().find_map(|a| a.parse().ok()).unwrap_or(100_000u64);
    let exe = env!("CARGO_BIN_EXE_rostrace");
    let dir = std::env::temp_dir().join(format!("rostrace-bench-messages-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let trace = dir.join("trace");
    // In a process of its own: this one stays small, and so do the commands it starts (a child's
    // peak memory counts what it shared with its parent before its exec).
    let made = Command::new(std::env::current_exe().unwrap())
        .arg("--generate")
        .arg(&trace)
        .arg(rounds.to_string())
        .status()
        .expect("the generator");
    assert!(made.success(), "the generator failed");
    let mb = std::fs::read_dir(&trace).unwrap().flatten().map(|e| e.metadata().map_or(0, |m| m.len())).sum::<u64>()
        as f64
        / 1e6;
    println!("{rounds} rounds of a 10-node chain: {} events, {mb:.0} MB", rounds * 56);
    let run = |exe: &std::ffi::OsStr, args: &[&str]| {
        let (exe, trace) = (exe.to_owned(), trace.clone());
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        best(move || {
            let mut c = Command::new(&exe);
            c.arg(args[0].as_str()).arg(&trace).args(&args[1..]);
            c
        })
    };
    let ok = |b: bool| if b { "" } else { " FAILED" };
    let (i_s, i_mb, i_ok) = run(exe.as_ref(), &["info"]);
    let (a_s, a_mb, a_ok) = run(exe.as_ref(), &["analyze", "--json", "-"]);
    println!("{:<24} {i_s:>7.2} s {i_mb:>6.0} MB{}", "info", ok(i_ok));
    println!("{:<24} {a_s:>7.2} s {a_mb:>6.0} MB{}  {:.1}x info", "analyze --json", ok(a_ok), a_s / i_s);
    if let Some(base) = std::env::var_os("ROSTRACE_BENCH_BASELINE") {
        let (b_s, b_mb, b_ok) = run(&base, &["analyze", "--json", "-"]);
        println!(
            "{:<24} {b_s:>7.2} s {b_mb:>6.0} MB{}  {:.1}x info; this build {:.2}x its time",
            "baseline analyze --json",
            ok(b_ok),
            b_s / i_s,
            a_s / b_s
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
