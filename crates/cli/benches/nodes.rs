//! Systems of very many nodes: time and peak memory of `rostrace analyze` and `rostrace
//! report`, and the report's size, against the trace's size and against babeltrace2 reading the
//! same trace, in the same run.
//!
//! `cargo bench -p rostrace --bench nodes [-- N...]` (default 10000 100000; `-- --generate DIR
//! N` writes the trace alone): a generated system
//! of N nodes in chains of ten (a timer-driven source, eight relays, a sink), every chain passing
//! three messages from its source to its sink (one process, Jazzy's events). Each command runs
//! once in a process of its own (peak memory is per process). With `ROSTRACE_BENCH_BASELINE`
//! set to another build's `rostrace`, its `analyze` is measured on the same trace too.

#[path = "measure.rs"]
mod measure;
#[path = "../../analysis/tests/support/system.rs"]
mod system;

use measure::measure;
use std::path::Path;
use std::process::Command;
use system::{Sys, MS};

const CHAIN: usize = 10;

fn generate(dir: &Path, nodes: usize) {
    let mut s = Sys::new();
    let chains = nodes / CHAIN;
    let links: Vec<_> = (0..chains).map(|c| s.chain(&format!("c{c}"), CHAIN, 100 * MS)).collect();
    // A chain's messages take 200 µs on its thread; a thread passes at most 400 chains' in a
    // round of 100 ms, one after the other (a thread never runs two callbacks at once).
    let threads = chains.div_ceil(400).max(64);
    for round in 0..3u64 {
        for (c, chain) in links.iter().enumerate() {
            let tid = 1000 + (c % threads) as i32;
            s.pass(chain, 10 * MS + round * 100 * MS + (c / threads) as u64 * 200_000, |_| tid);
        }
    }
    s.write(dir);
}

fn size_mb(p: &Path) -> f64 {
    let mut total = 0u64;
    if p.is_dir() {
        for e in std::fs::read_dir(p).unwrap().flatten() {
            total += e.metadata().map_or(0, |m| m.len());
        }
    } else {
        total = std::fs::metadata(p).map_or(0, |m| m.len());
    }
    total as f64 / 1e6
}

fn main() {
    // `-- --generate DIR N`: writes the trace of N nodes to DIR and stops.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, dir, n, ..] = args.as_slice() {
        if flag == "--generate" {
            generate(Path::new(dir), n.parse().expect("a node count"));
            return;
        }
    }
    let counts: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let counts = if counts.is_empty() { vec![10_000, 100_000] } else { counts };
    let bt2 = Command::new("babeltrace2").arg("--version").output().is_ok_and(|o| o.status.success());
    let exe = env!("CARGO_BIN_EXE_rostrace");
    println!(
        "{:>8} {:>9} | {:>22} {:>8} | {:>22} {:>10} | {:>16}",
        "nodes", "trace", "analyze --json", "/trace", "report", "file", "babeltrace2"
    );
    for n in counts {
        let dir = std::env::temp_dir().join(format!("rostrace-bench-nodes-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let trace = dir.join("trace");
        generate(&trace, n);
        let trace_mb = size_mb(&trace);
        let (a_s, a_mb, a_ok) = measure(Command::new(exe).arg("analyze").arg(&trace).args(["--json", "-"]));
        if let Some(base) = std::env::var_os("ROSTRACE_BENCH_BASELINE") {
            let (s, mb, ok) = measure(Command::new(base).arg("analyze").arg(&trace).args(["--json", "-"]));
            println!("{:>20} baseline analyze: {s:.2} s {mb:.0} MB{}", "", if ok { "" } else { " FAILED" });
        }
        let html = dir.join("report.html");
        let (r_s, r_mb, r_ok) = measure(Command::new(exe).arg("report").arg(&trace).arg("-o").arg(&html));
        let peer = if bt2 {
            let (s, mb, ok) = measure(Command::new("babeltrace2").arg(&trace).args(["-o", "dummy"]));
            if ok {
                format!("{s:.2} s {mb:.0} MB")
            } else {
                "failed".into()
            }
        } else {
            "(not installed)".into()
        };
        let ok = |b: bool| if b { "" } else { " FAILED" };
        println!(
            "{n:>8} {trace_mb:>6.1} MB | {a_s:>8.2} s {a_mb:>7.0} MB{} {:>7.1}x | {r_s:>8.2} s {r_mb:>7.0} MB{} {:>7.1} MB | {peer:>16}",
            ok(a_ok),
            a_mb / trace_mb,
            ok(r_ok),
            size_mb(&html),
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
