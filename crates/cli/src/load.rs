//! What the analysing subcommands share: opening the traces and analysing them, with progress
//! on a terminal and every error printed.

use crate::progress::Progress;
use rostrace_analysis::{Analysis, Options, Processor};
use rostrace_ctf::TraceSet;
use std::path::PathBuf;

/// A trace set analysed.
pub struct Loaded {
    /// The traces (left to the caller, which may leave them to the process's end).
    pub set: TraceSet,
    /// The analysis.
    pub analysis: Analysis,
    /// Whether every trace was opened and read without error.
    pub clean: bool,
}

/// Opens `traces` and analyses them with `options` on `jobs` threads (the standard handlers),
/// the errors of opening and reading printed as they are met; `None` when no trace opened.
pub fn analyze(traces: &[PathBuf], jobs: usize, options: &Options) -> Option<Loaded> {
    let (set, errors) = TraceSet::open_jobs(traces, jobs);
    for e in &errors {
        eprintln!("rostrace: error: {e}");
    }
    if set.traces.is_empty() {
        return None;
    }
    let mut progress = Progress::new(set.total_bytes(), "analyzing");
    let mut p = Processor::standard();
    p.set_jobs(jobs);
    let analysis = p.run(&set, options, |d, _| progress.tick(|| d));
    progress.finish();
    for e in &analysis.report.read_errors {
        eprintln!("rostrace: error: {e}");
    }
    let clean = errors.is_empty() && analysis.report.read_errors.is_empty();
    Some(Loaded { set, analysis, clean })
}
