//! `rostrace diff BASE NEW`: two runs compared per callback, topic and end-to-end path (see
//! `rostrace_analysis::diff`), significant changes first; exit 1 when any is significant, so
//! that CI can fail on a regression.

use crate::args::ThresholdArgs;
use crate::format::{dur, name as esc};
use crate::out::{emit, fail};
use rostrace_analysis::diff::{self, Change, Diff};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `rostrace diff`.
#[derive(clap::Args)]
pub struct Args {
    /// The base run: a trace directory (searched recursively) or metadata file, or a JSON file
    /// saved with `rostrace analyze TRACE --json FILE --samples`.
    #[arg(value_name = "BASE")]
    base: PathBuf,
    /// The new run (the same forms), compared with the base.
    #[arg(value_name = "NEW")]
    new: PathBuf,
    #[command(flatten)]
    thresholds: ThresholdArgs,
    /// Show every matched callback and topic, not only the significant changes.
    #[arg(long)]
    all: bool,
    /// Also write the comparison as JSON to FILE (`-`: standard output, instead of the text).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Threads (0: one per core).
    #[arg(short = 'j', long = "jobs", value_name = "N", default_value_t = 0)]
    jobs: usize,
    /// (A streamed run is compared on a uniform random choice of 10,000 values of each
    /// callback, topic, pair and, with `--longest-paths`, longest path, docs/streaming.md.)
    #[command(flatten)]
    stream: crate::args::StreamArgs,
    #[command(flatten)]
    longest: crate::args::LongestArgs,
}

/// Runs the command.
pub fn run(a: Args) -> std::io::Result<ExitCode> {
    let t = match a.thresholds.thresholds() {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let mut loaded = Vec::new();
    for (arg, p) in [("BASE", &a.base), ("NEW", &a.new)] {
        match crate::load::run(arg, p, a.jobs, |o| {
            a.stream.apply(o);
            a.longest.apply(o);
        }) {
            Ok(r) => loaded.push(r),
            Err(e) => return fail(e),
        }
    }
    let d = diff::diff_runs(loaded[0].as_diff_run(), loaded[1].as_diff_run(), &t);
    let clean = loaded.iter().all(|l| l.clean());
    if let Err(e) = emit(a.json.as_deref(), &d, || render(&d, a.all))? {
        return fail(e);
    }
    let changed = d.changes.iter().any(|c| c.significant);
    Ok(if clean && !changed { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn line(s: &mut String, c: &Change) {
    let what = if c.kind == "callback" { "duration" } else { "latency" };
    let _ = writeln!(
        s,
        "{} {} {} {what}: p50 {} → {} (x{:.2}), p99 {} → {}, max {} → {}, rate {:.1} → {:.1} Hz; p={:.2e}, Cliff's δ={:+.2}",
        if c.significant { "CHANGED" } else { "same   " },
        c.kind,
        esc(&c.name),
        dur(c.base.p50 as f64),
        dur(c.new.p50 as f64),
        c.median_ratio,
        dur(c.base.p99 as f64),
        dur(c.new.p99 as f64),
        dur(c.base.max as f64),
        dur(c.new.max as f64),
        c.base_rate_hz,
        c.new_rate_hz,
        c.p_value,
        c.cliff_delta,
    );
}

/// The text: significant changes (or all with `all`), then what appeared and disappeared.
fn render(d: &Diff, all: bool) -> String {
    let mut s = String::new();
    let n = d.changes.iter().filter(|c| c.significant).count();
    let _ = writeln!(
        s,
        "{n} significant change(s) of {} matched (p < {}, |Cliff's δ| ≥ {}, median changed ≥ {}%)",
        d.changes.len(),
        d.thresholds.alpha,
        d.thresholds.min_delta,
        d.thresholds.min_change * 100.0
    );
    for c in d.changes.iter().filter(|c| all || c.significant) {
        line(&mut s, c);
    }
    for (title, v) in [("only in BASE (gone)", &d.removed), ("only in NEW (appeared)", &d.added)] {
        for o in v.iter() {
            let _ = writeln!(s, "{title}: {} {} ({} samples)", o.kind, esc(&o.name), o.count);
        }
    }
    for o in &d.not_compared {
        let _ = writeln!(s, "not compared (not followed in the saved run): path {}", esc(&o.name));
    }
    s
}
