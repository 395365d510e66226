//! Long recordings: `rostrace analyze` (streamed, as it is by default from 1 GiB; and with its
//! longest paths followed) against `rostrace info` (reading alone) on recordings of 1 h and
//! 24 h at the demo's rate, in the same run, with each command's peak memory; and the analysis
//! in memory of the shortest one (a day's would need about 40 GB). Then `report`, `diff` (the
//! recording with itself) and `e2e` (the chain, source to sink), streamed, and in memory on the
//! shortest one.
//!
//! `cargo bench -p rostrace --bench long [-- HOURS...]` (default `1 24`; a day is about 27 GB,
//! written to the temporary directory and removed afterwards; `-- --generate DIR HOURS` writes
//! one alone). The recording: a chain of ten nodes (a timer-driven source, eight relays, a sink)
//! passing a message from the source to the sink every 9 ms, 56 events a message, every message
//! taken and every callback run (one process, Jazzy's events, 64 KiB packets as rostrace's
//! tracer writes them): about 6,200 events and 310 KB a second, the demo's rate. Each command
//! runs once per recording (a day's analysis takes minutes), but `info` and the streamed
//! `analyze` on recordings of up to an hour: [`RUNS`] times each, one after the other, their
//! median times and memory compared (one run of each varies by a tenth on 2 cores).

#[path = "measure.rs"]
mod measure;
#[path = "../../analysis/tests/support/system.rs"]
mod system;

use measure::measure;
use std::path::Path;
use std::process::Command;
use system::{Sys, MS};

/// How many times `info` and the streamed `analyze` run, alternately, on a recording of up to
/// an hour.
const RUNS: usize = 5;

/// The median time and memory of `runs` (each a success).
fn median(mut runs: Vec<(f64, f64, bool)>) -> (f64, f64, bool) {
    let ok = runs.iter().all(|r| r.2);
    let mid = runs.len() / 2;
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let t = runs[mid].0;
    runs.sort_by(|a, b| a.1.total_cmp(&b.1));
    (t, runs[mid].1, ok)
}

/// Time between two messages through the chain.
const PERIOD: u64 = 9 * MS;

fn generate(dir: &Path, hours: f64) {
    let mut s = Sys::new();
    let chain = s.chain("chain", 10, PERIOD);
    let rounds = (hours * 3600e9 / PERIOD as f64) as u64;
    // A thousand messages a batch: about 9 s of recording in memory at once.
    let mut round = 0;
    s.write_batches(dir, 1 << 16, |s| {
        for _ in 0..1000 {
            if round == rounds {
                return false;
            }
            s.pass(&chain, 10 * MS + round * PERIOD, |k| 1000 + k as i32);
            round += 1;
        }
        true
    });
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, dir, h, ..] = args.as_slice() {
        if flag == "--generate" {
            generate(Path::new(dir), h.parse().expect("hours"));
            return;
        }
    }
    let mut hours: Vec<f64> = args.iter().filter_map(|a| a.parse().ok()).collect();
    if hours.is_empty() {
        hours = vec![1.0, 24.0];
    }
    let exe = env!("CARGO_BIN_EXE_rostrace");
    println!(
        "| recording | size | events | `info` | `analyze` (streamed) | ratio to `info` \
         | `analyze --longest-paths` (streamed) | `analyze --stream never` |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let first = hours.iter().copied().fold(f64::INFINITY, f64::min);
    let mut others = Vec::new();
    for h in hours {
        let dir = std::env::temp_dir().join(format!("rostrace-bench-long-{}-{h}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let trace = dir.join("trace");
        // In a process of its own, so that the commands measured start from a small parent.
        let made = Command::new(std::env::current_exe().unwrap())
            .arg("--generate")
            .arg(&trace)
            .arg(h.to_string())
            .status()
            .expect("the generator");
        assert!(made.success(), "the generator failed");
        // Written to disk before anything is measured: the kernel writing the recording back
        // meanwhile slows the commands measured first.
        // SAFETY: sync has no preconditions.
        unsafe { libc::sync() };
        let bytes: u64 =
            std::fs::read_dir(&trace).unwrap().flatten().map(|e| e.metadata().map_or(0, |m| m.len())).sum();
        let events = (h * 3600e9 / PERIOD as f64) as u64 * 56;
        let run = |args: &[&str]| measure(Command::new(exe).arg(args[0]).arg(&trace).args(&args[1..]));
        let (mut infos, mut analyses) = (Vec::new(), Vec::new());
        for _ in 0..if h <= 1.0 { RUNS } else { 1 } {
            infos.push(run(&["info"]));
            analyses.push(run(&["analyze", "--json", "-", "--stream", "always"]));
        }
        let (info, streamed) = (median(infos), median(analyses));
        let longest = run(&["analyze", "--json", "-", "--stream", "always", "--longest-paths"]);
        let in_memory = (h == first).then(|| run(&["analyze", "--json", "-", "--stream", "never"]));
        let cell = |(s, mb, ok): (f64, f64, bool)| format!("{s:.1} s, {mb:.0} MB{}", if ok { "" } else { " FAILED" });
        println!(
            "| {h} h | {:.2} GB | {:.0} M | {} | {} | {:.1}x | {} | {} |",
            bytes as f64 / 1e9,
            events as f64 / 1e6,
            cell(info),
            cell(streamed),
            streamed.0 / info.0,
            cell(longest),
            in_memory.map_or("not run".into(), cell)
        );
        // The report (its page's size too) and the comparison of the recording with itself.
        let page = dir.join("report.html");
        let report = |stream: &str| {
            let m = measure(Command::new(exe).arg("report").arg(&trace).args(["--stream", stream, "-o"]).arg(&page));
            let mb = std::fs::metadata(&page).map_or(0.0, |m| m.len() as f64 / 1e6);
            format!("{}, page {mb:.1} MB", cell(m))
        };
        let diff = |stream: &str| {
            cell(measure(Command::new(exe).arg("diff").arg(&trace).arg(&trace).args(["--stream", stream])))
        };
        // The chain's end-to-end latency, source to sink (its summary: the JSON of a day's
        // records would be about 6 GB).
        let e2e = |stream: &str| {
            let path: Vec<String> = (0..10).map(|k| format!("/chain/n{k}")).collect();
            let mut c = Command::new(exe);
            c.arg("e2e").arg(&trace).args(["--path", &path.join(","), "--stream", stream]);
            cell(measure(&mut c))
        };
        others.push(format!(
            "| {h} h | {} | {} | {} | {} | {} | {} |",
            report("always"),
            if h == first { report("never") } else { "not run".into() },
            diff("always"),
            if h == first { diff("never") } else { "not run".into() },
            e2e("always"),
            if h == first { e2e("never") } else { "not run".into() },
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }
    println!();
    println!(
        "| recording | `report` (streamed) | `report` in memory | `diff` with itself (streamed) | `diff` in memory \
         | `e2e` source to sink (streamed) | `e2e` in memory |"
    );
    println!("|---|---|---|---|---|---|---|");
    for r in &others {
        println!("{r}");
    }
}
