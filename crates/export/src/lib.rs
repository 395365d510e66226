//! Exports of a ROS 2 trace analysis for the tools people already use: the analysis tables and
//! the raw events as Parquet or CSV (one directory per table, one file per recording, so that
//! many recordings exported into one directory are queried together), and the callback runs
//! and message flows as a Perfetto trace.
//!
//! ```no_run
//! let (set, _errors) = rostrace_ctf::TraceSet::open(&["trace/"]);
//! let a = rostrace_analysis::Processor::standard().analyze(&set, rostrace_analysis::Window::default(), |_, _| {});
//! let mut sink = rostrace_export::parquet::ParquetSink::new("out".as_ref(), "robot1");
//! rostrace_export::write_tables(&a, "robot1", &mut sink).unwrap();
//! rostrace_export::events::write(&set, "robot1", &|_| true, &mut sink, &mut |_, _| {}, 0).unwrap();
//! let f = std::fs::File::create("trace.pftrace").unwrap();
//! rostrace_export::perfetto::write(&a, std::io::BufWriter::new(f)).unwrap();
//! ```

#![deny(missing_docs)]

#[cfg(feature = "arrow")]
pub mod arrow;
pub mod csv;
pub mod events;
pub mod names;
pub mod parquet;
pub mod perfetto;
pub mod schema;
pub mod tables;

use rostrace_analysis::Analysis;
use rostrace_analysis::ExecutorHandler;
use rostrace_analysis::ServiceHandler;
use std::io;
pub use tables::{write_paths, StreamedPaths};

/// Writes the analysis tables of [`schema::tables`] (those of the handlers, service calls and
/// executor threads, from the analysis's handlers).
pub fn write_tables(a: &Analysis, recording: &str, sink: &mut dyn tables::Sink) -> io::Result<tables::Counts> {
    let traces: Vec<(String, String)> = a.traces.iter().map(|(d, h)| (d.display().to_string(), h.clone())).collect();
    tables::write(a, a.get::<ServiceHandler>(), a.get::<ExecutorHandler>(), &traces, recording, sink, None)
}

/// [`write_tables`] of a streamed analysis, whose runs, publications, takes and flows were
/// written slice by slice as it went (`instances`, given every slice by
/// [`rostrace_analysis::Open::on_slice`]).
pub fn write_streamed_tables(
    a: &Analysis,
    recording: &str,
    sink: &mut dyn tables::Sink,
    instances: tables::StreamedInstances,
) -> io::Result<tables::Counts> {
    let traces: Vec<(String, String)> = a.traces.iter().map(|(d, h)| (d.display().to_string(), h.clone())).collect();
    tables::write(a, a.get::<ServiceHandler>(), a.get::<ExecutorHandler>(), &traces, recording, sink, Some(instances))
}
