//! A message-heavy recording: `rostrace analyze` against `rostrace info` (reading alone) on the
//! same trace, in the same run, with their peak memory.
//!
//! `cargo bench -p rostrace --bench messages [-- ROUNDS]` (default 100000; `-- --generate DIR
//! ROUNDS` writes the trace alone): a generated chain of ten nodes (a timer-driven source, eight
//! relays, a sink), each on a thread of its own, passing one message from the source to the sink
//! every millisecond, ROUNDS times: 56 events a round, every message taken and every callback
//! run (one process, Jazzy's events). Each command runs in a process of its own, five times, the
//! commands taken in turn; medians. With `ROSTRACE_BENCH_BASELINE` set to another build's
//! `rostrace`, its `analyze` is measured in the same turns.

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
    let chain = s.chain("chain", CHAIN, MS);
    for round in 0..rounds {
        s.pass(&chain, 10 * MS + round * MS, |k| 1000 + k as i32);
    }
    s.write(dir);
}

/// Runs each command in turn, five times: the medians of each one's wall time (s) and peak
/// memory (MB), and whether every run succeeded.
fn in_turn(cmds: &[&dyn Fn() -> Command]) -> Vec<(f64, f64, bool)> {
    let mut runs: Vec<Vec<(f64, f64, bool)>> = vec![Vec::new(); cmds.len()];
    for _ in 0..5 {
        for (cmd, r) in cmds.iter().zip(&mut runs) {
            r.push(measure(&mut cmd()));
        }
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    runs.into_iter()
        .map(|r| {
            (median(r.iter().map(|x| x.0).collect()), median(r.iter().map(|x| x.1).collect()), r.iter().all(|x| x.2))
        })
        .collect()
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
    let command = |exe: &std::ffi::OsStr, args: &[&str]| {
        let mut c = Command::new(exe);
        c.arg(args[0]).arg(&trace).args(&args[1..]);
        c
    };
    let info = || command(exe.as_ref(), &["info"]);
    let analyze = || command(exe.as_ref(), &["analyze", "--json", "-"]);
    let base = std::env::var_os("ROSTRACE_BENCH_BASELINE");
    let baseline = || command(base.as_deref().unwrap_or_default(), &["analyze", "--json", "-"]);
    let mut cmds: Vec<&dyn Fn() -> Command> = vec![&info, &analyze];
    if base.is_some() {
        cmds.push(&baseline);
    }
    let r = in_turn(&cmds);
    let ok = |b: bool| if b { "" } else { " FAILED" };
    let row = |name: &str, (s, mb, good): (f64, f64, bool)| {
        println!("{name:<24} {s:>7.2} s {mb:>6.0} MB{}  {:.1}x info", ok(good), s / r[0].0);
    };
    println!("medians of 5 runs, the commands taken in turn");
    row("info", r[0]);
    row("analyze --json", r[1]);
    if let Some(&b) = r.get(2) {
        row("baseline analyze --json", b);
        println!("this build: {:.2}x the baseline's time, {:.2}x its memory", r[1].0 / b.0, r[1].1 / b.1);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
