//! The arguments the commands that read traces share.

use std::path::PathBuf;

/// Paths of traces as given on the command line.
#[derive(clap::Args, Clone)]
pub struct TraceArgs {
    /// Trace directories (searched recursively for CTF traces) or metadata files.
    #[arg(required = true, value_name = "TRACE")]
    pub traces: Vec<PathBuf>,
    /// Threads (0: one per core): reading the traces; for the analyses, the pass over the events
    /// (shared out by trace, or, on one trace, reading on a second thread while this one handles
    /// the events) and the work beside it (path search, report). The output is the same whatever
    /// the number.
    #[arg(short = 'j', long = "jobs", value_name = "N", default_value_t = 0)]
    pub jobs: usize,
}
