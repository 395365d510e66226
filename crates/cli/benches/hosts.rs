//! Several hosts: `rostrace analyze` of two hosts' recordings with their clocks aligned, against
//! the same without alignment (`--no-align`), in the same run, with their peak memory.
//!
//! `cargo bench -p rostrace --bench hosts [-- SECS]` (default 30): the demo runs SECS seconds;
//! its two processes' traces become two hosts' recordings (`sensing` on hostA with a clock 37 ms
//! ahead, `control` on hostB: their metadata's host name and clock offset rewritten, as the
//! multi-host tests do). Each command runs in a process of its own, seven times, the commands
//! taken in turn; medians. With `ROSTRACE_BENCH_BASELINE` set to another build's `rostrace`, its
//! aligned `analyze` is measured in the same turns.

#[path = "../tests/common/clock.rs"]
mod clock;
#[path = "measure.rs"]
mod measure;

use measure::measure;
use std::path::Path;
use std::process::Command;

fn main() {
    let secs: u64 = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(30);
    let exe = env!("CARGO_BIN_EXE_rostrace");
    let dir = std::env::temp_dir().join(format!("rostrace-bench-hosts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let demo = dir.join("demo");
    let st = Command::new(exe)
        .args(["demo", "--duration", &secs.to_string(), "-o"])
        .arg(&demo)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("the demo");
    assert!(st.success(), "the demo failed");
    let traces = rostrace_ctf::find_traces(&demo).unwrap();
    let of = |process: &str| traces.iter().find(|t| t.to_string_lossy().contains(process)).expect(process).clone();
    let (a, b) = (dir.join("hostA"), dir.join("hostB"));
    clock::as_host(&of("sensing"), &a, Some("hostA"), 37_000_000, 0.0);
    clock::as_host(&of("control"), &b, Some("hostB"), 0, 0.0);
    let bytes: u64 = [&a, &b].iter().map(|d| size(d)).sum();
    println!("two hosts' recordings of a {secs} s demo: {:.1} MB", bytes as f64 / 1e6);
    let command = |exe: &std::ffi::OsStr, extra: &[&str]| {
        let mut c = Command::new(exe);
        c.args(["analyze", "--json", "-"]).args(extra).arg(&a).arg(&b);
        c
    };
    let aligned = || command(exe.as_ref(), &[]);
    let unaligned = || command(exe.as_ref(), &["--no-align"]);
    let base = std::env::var_os("ROSTRACE_BENCH_BASELINE");
    let baseline = || command(base.as_deref().unwrap_or_default(), &[]);
    let mut cmds: Vec<&dyn Fn() -> Command> = vec![&unaligned, &aligned];
    if base.is_some() {
        cmds.push(&baseline);
    }
    let mut runs: Vec<Vec<(f64, f64, bool)>> = vec![Vec::new(); cmds.len()];
    for _ in 0..7 {
        for (cmd, r) in cmds.iter().zip(&mut runs) {
            r.push(measure(&mut cmd()));
        }
    }
    let median = |v: &[(f64, f64, bool)], f: fn(&(f64, f64, bool)) -> f64| {
        let mut x: Vec<f64> = v.iter().map(f).collect();
        x.sort_by(f64::total_cmp);
        x[x.len() / 2]
    };
    let r: Vec<(f64, f64, bool)> =
        runs.iter().map(|v| (median(v, |x| x.0), median(v, |x| x.1), v.iter().all(|x| x.2))).collect();
    let ok = |b: bool| if b { "" } else { " FAILED" };
    println!("medians of 7 runs, the commands taken in turn");
    for (name, x) in ["analyze --no-align", "analyze (aligned)", "baseline analyze (aligned)"].iter().zip(&r) {
        println!("{name:<28} {:>8.1} ms {:>6.0} MB{}  {:.2}x --no-align", x.0 * 1e3, x.1, ok(x.2), x.0 / r[0].0);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bytes of the files below `d`.
fn size(d: &Path) -> u64 {
    std::fs::read_dir(d)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => size(&e.path()),
            _ => e.metadata().map_or(0, |m| m.len()),
        })
        .sum()
}
