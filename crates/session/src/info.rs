//! What ROS 2 traces hold: the reader's summary ([`rostrace_ctf::summary`]) with the tracetools
//! versions that `rcl_init` recorded and the distributions they belong to (CARET's `caret_init`
//! names it; else the ABI table of `tracetools::distro` tells it from the version). As
//! `rostrace info --json` writes it, and Python's `rostrace.info` returns it.

use rostrace_ctf::summary::Summary;
use rostrace_ctf::TraceSet;
use serde::ser::{Serialize, SerializeStruct as _, Serializer};

/// The summary of ROS 2 traces: the reader's, and the ROS 2 versions its traces recorded.
#[derive(Clone, Debug)]
pub struct Info {
    /// The reader's summary. Its `values` are taken out (they are the two lists below) and its
    /// `errors` begin with those of opening the traces.
    pub summary: Summary,
    /// tracetools versions from `rcl_init`, in the order first seen.
    pub tracetools_versions: Vec<String>,
    /// ROS 2 distributions (from `caret_init`, or told by the tracetools versions).
    pub ros_distros: Vec<String>,
    /// The distributions rostrace's tracer guessed, the traced processes' environment naming
    /// none (`ros_distro_assumed` in a trace's metadata): the label is then not the processes'.
    /// Not written when empty.
    pub ros_distros_assumed: Vec<String>,
}

impl Serialize for Info {
    /// The summary's fields with the ROS 2 ones between its losses and its tracers, the order of
    /// `rostrace info --json` and Python's `rostrace.info`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let x = &self.summary;
        let mut o = s.serialize_struct("Info", 16)?;
        o.serialize_field("traces", &x.traces)?;
        o.serialize_field("begin_ns", &x.begin_ns)?;
        o.serialize_field("end_ns", &x.end_ns)?;
        o.serialize_field("duration_ns", &x.duration_ns)?;
        o.serialize_field("event_count", &x.event_count)?;
        o.serialize_field("events_per_name", &x.events_per_name)?;
        o.serialize_field("streams", &x.streams)?;
        o.serialize_field("processes", &x.processes)?;
        o.serialize_field("discarded_events", &x.discarded_events)?;
        o.serialize_field("lost_packets", &x.lost_packets)?;
        o.serialize_field("losses", &x.losses)?;
        o.serialize_field("tracetools_versions", &self.tracetools_versions)?;
        o.serialize_field("ros_distros", &self.ros_distros)?;
        if self.ros_distros_assumed.is_empty() {
            o.skip_field("ros_distros_assumed")?;
        } else {
            o.serialize_field("ros_distros_assumed", &self.ros_distros_assumed)?;
        }
        o.serialize_field("tracers", &x.tracers)?;
        o.serialize_field("errors", &x.errors)?;
        o.end()
    }
}

/// Reads the traces once (`jobs` threads, 0: one per core) and summarizes them; `errors` (of
/// opening them) come first in the summary's; `progress` is told the bytes read so far.
pub fn collect(set: &TraceSet, errors: Vec<String>, jobs: usize, progress: &(dyn Fn(u64) + Sync)) -> Info {
    let mut summary = rostrace_ctf::summary::summarize(
        set,
        &[(":rcl_init", "version"), (":caret_init", "distribution")],
        jobs,
        progress,
    );
    let mut values = std::mem::take(&mut summary.values).into_iter();
    let versions = values.next().unwrap_or_default();
    let mut distros = values.next().unwrap_or_default();
    if distros.is_empty() {
        for d in versions.iter().filter_map(|v| tracetools::distro::of_version(v)) {
            if !distros.iter().any(|x| x == d) {
                distros.push(d.to_string());
            }
        }
    }
    summary.errors = errors.into_iter().chain(std::mem::take(&mut summary.errors)).collect();
    Info { summary, tracetools_versions: versions, ros_distros: distros, ros_distros_assumed: assumed(set) }
}

/// The distributions the tracer of some trace of `set` guessed, each once.
fn assumed(set: &TraceSet) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for t in &set.traces {
        let d = match t.schema.env("ros_distro_assumed") {
            Some(rostrace_ctf::EnvValue::Str(s)) => s.clone(),
            Some(rostrace_ctf::EnvValue::Int(i)) => i.to_string(),
            None => continue,
        };
        if !v.contains(&d) {
            v.push(d);
        }
    }
    v
}

/// The traces at `paths` (directories searched for CTF traces, or metadata files) summarized;
/// the errors of opening them are in the summary's. When none could be opened and there were
/// errors (a summary of nothing but zeros), the errors.
pub fn open_and_collect<P: AsRef<std::path::Path>>(
    paths: &[P],
    jobs: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Info, Vec<String>> {
    let (set, errors) = TraceSet::open_jobs(paths, jobs);
    let errors: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    if set.traces.is_empty() && !errors.is_empty() {
        return Err(errors);
    }
    Ok(collect(&set, errors, jobs, progress))
}
