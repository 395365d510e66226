//! Whole analysis of a trace: wall time and peak memory, next to tracetools_analysis's
//! documented figures for the same trace (`../shared/reference/tracetools_analysis/timings.md`).
//!
//! `cargo bench -p rostrace-analysis --bench analyze [-- TRACE]` (default: tum-autoware-carla).

use std::path::PathBuf;
use std::time::Instant;

/// A `/proc/self/status` value in MB.
fn status_mb(key: &str) -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(key))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// (wall s, peak RSS MB) of tracetools_analysis for `trace`, from the reference table.
fn reference(trace: &str) -> Option<(f64, f64)> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference/tracetools_analysis/timings.md");
    let text = std::fs::read_to_string(p).ok()?;
    for line in text.lines() {
        let cols: Vec<&str> = line.split('|').map(|c| c.trim()).collect();
        if cols.len() >= 7 && cols[1] == trace {
            let wall: f64 = cols[5].parse().ok()?;
            let rss: f64 = cols[6].trim_end_matches(" MB").trim().parse().ok()?;
            return Some((wall, rss));
        }
    }
    None
}

fn main() {
    let trace =
        std::env::args().skip(1).find(|a| !a.starts_with('-')).map(PathBuf::from).unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/tum-autoware-carla")
        });
    let name = trace.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let size: u64 = walk_size(&trace);
    let mut best = f64::MAX;
    let mut events = 0;
    let mut callbacks = 0;
    let mut anon: f64 = 0.0;
    for _ in 0..5 {
        let t = Instant::now();
        let (set, errors) = rostrace_ctf::TraceSet::open(&[&trace]);
        assert!(errors.is_empty(), "{errors:?}");
        let a = rostrace_analysis::analyze_traces(&set, |_, _| {});
        best = best.min(t.elapsed().as_secs_f64());
        events = a.report.events;
        callbacks = a.report.callbacks.len();
        // Heap (anonymous) memory while the whole analysis is held, the trace still mapped,
        // after the first run (later runs would count what the allocator keeps from earlier ones).
        if anon == 0.0 {
            anon = status_mb("RssAnon:").unwrap_or(f64::NAN);
        }
        std::hint::black_box(&a);
    }
    let rss = status_mb("VmHWM:").unwrap_or(f64::NAN);
    println!("trace: {} ({:.1} MB of CTF, {events} events, {callbacks} callbacks)", trace.display(), size as f64 / 1e6);
    println!(
        "rostrace analyze:    {:.3} s wall (best of 5), peak RSS {rss:.0} MB (of which heap {anon:.0} MB; the rest is the mapped trace and the program)",
        best
    );
    match reference(&name) {
        Some((wall, mem)) => {
            println!("tracetools_analysis: {wall:.2} s wall, peak RSS {mem:.0} MB (documented, same trace)");
            println!("ratio:               {:.0}x faster, {:.1}x less memory", wall / best, mem / rss);
        }
        None => println!("tracetools_analysis: no documented figure for {name}"),
    }
}

fn walk_size(p: &std::path::Path) -> u64 {
    match std::fs::read_dir(p) {
        Ok(rd) => rd.flatten().map(|e| walk_size(&e.path())).sum(),
        Err(_) => std::fs::metadata(p).map(|m| m.len()).unwrap_or(0),
    }
}
