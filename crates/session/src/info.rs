//! What ROS 2 traces hold: the reader's summary ([`rostrace_ctf::summary`]) with the tracetools
//! versions that `rcl_init` recorded and the distributions they belong to (CARET's `caret_init`
//! names it; else the ABI table of `tracetools::distro` tells it from the version). As
//! `rostrace info --json` writes it, and Python's `rostrace.info` returns it.

use rostrace_ctf::summary::{LossOut, Process};
use rostrace_ctf::TraceSet;
use serde::Serialize;

/// The summary of ROS 2 traces.
#[derive(Serialize, Clone, Debug)]
pub struct Info {
    /// CTF traces found.
    pub traces: Vec<String>,
    /// First event time, ns since the Unix epoch.
    pub begin_ns: Option<i64>,
    /// Last event time.
    pub end_ns: Option<i64>,
    /// end - begin, ns.
    pub duration_ns: Option<i64>,
    /// Events in all.
    pub event_count: u64,
    /// Events per name, most frequent first.
    pub events_per_name: Vec<(String, u64)>,
    /// Data stream files.
    pub streams: usize,
    /// Processes, by trace and vpid.
    pub processes: Vec<Process>,
    /// Discarded events in all.
    pub discarded_events: u64,
    /// Lost packets in all.
    pub lost_packets: u64,
    /// Each loss.
    pub losses: Vec<LossOut>,
    /// tracetools versions from `rcl_init`, in the order first seen.
    pub tracetools_versions: Vec<String>,
    /// ROS 2 distributions (from `caret_init`, or told by the tracetools versions).
    pub ros_distros: Vec<String>,
    /// The distributions rostrace's tracer guessed, the traced processes' environment naming
    /// none (`ros_distro_assumed` in a trace's metadata): the label is then not the processes'.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ros_distros_assumed: Vec<String>,
    /// Tracers (from the metadata environment).
    pub tracers: Vec<String>,
    /// Errors met while reading (the `errors` given first).
    pub errors: Vec<String>,
}

/// Reads the traces once (`jobs` threads, 0: one per core) and summarizes them; `errors` (of
/// opening them) come first in the summary's; `progress` is told the bytes read so far.
pub fn collect(set: &TraceSet, errors: Vec<String>, jobs: usize, progress: &(dyn Fn(u64) + Sync)) -> Info {
    let s = rostrace_ctf::summary::summarize(
        set,
        &[(":rcl_init", "version"), (":caret_init", "distribution")],
        jobs,
        progress,
    );
    let mut values = s.values.into_iter();
    let versions = values.next().unwrap_or_default();
    let mut distros = values.next().unwrap_or_default();
    if distros.is_empty() {
        for d in versions.iter().filter_map(|v| tracetools::distro::of_version(v)) {
            if !distros.iter().any(|x| x == d) {
                distros.push(d.to_string());
            }
        }
    }
    Info {
        traces: s.traces,
        begin_ns: s.begin_ns,
        end_ns: s.end_ns,
        duration_ns: s.duration_ns,
        event_count: s.event_count,
        events_per_name: s.events_per_name,
        streams: s.streams,
        processes: s.processes,
        discarded_events: s.discarded_events,
        lost_packets: s.lost_packets,
        losses: s.losses,
        tracetools_versions: versions,
        ros_distros: distros,
        ros_distros_assumed: assumed(set),
        tracers: s.tracers,
        errors: errors.into_iter().chain(s.errors).collect(),
    }
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
