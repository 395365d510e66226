//! Exports of a ROS 2 trace analysis for the tools people already use: the analysis tables and
//! the raw events as Parquet or CSV (one directory per table, one file per recording, so that
//! many recordings exported into one directory are queried together), and the callback runs
//! and message flows as a Perfetto trace.
//!
//! ```no_run
//! let (set, _errors) = ctf::TraceSet::open(&["trace/"]);
//! let mut p = analysis::Processor::standard();
//! let a = p.analyze(&set, analysis::Window::default(), |_, _| {});
//! let mut sink = export::parquet::ParquetSink::new("out".as_ref(), "robot1");
//! export::write_tables(&set, &p, &a, "robot1", &mut sink).unwrap();
//! export::events::write(&set, "robot1", &|_| true, &mut sink, &mut |_, _| {}, 0).unwrap();
//! let f = std::fs::File::create("trace.pftrace").unwrap();
//! export::perfetto::write(&a, std::io::BufWriter::new(f)).unwrap();
//! ```

pub mod arrow;
pub mod csv;
pub mod events;
pub mod parquet;
pub mod perfetto;
pub mod schema;
pub mod tables;

use analysis::executor::ExecutorHandler;
use analysis::services::ServiceHandler;
use analysis::{Analysis, Processor};
use ctf::TraceSet;
use std::io;

/// Writes the analysis tables of [`schema::tables`] (the handlers' tables, service calls and
/// executor threads, come from `p`, the processor that made `a`).
pub fn write_tables(
    set: &TraceSet,
    p: &Processor,
    a: &Analysis,
    recording: &str,
    sink: &mut dyn tables::Sink,
) -> io::Result<tables::Counts> {
    let traces: Vec<(String, String)> =
        set.traces.iter().map(|t| (t.dir.display().to_string(), t.hostname())).collect();
    tables::write(a, p.get::<ServiceHandler>(), p.get::<ExecutorHandler>(), &traces, recording, sink)
}
