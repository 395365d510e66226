//! What a recording holds, as `rostrace record` sums it up at its end: events, processes,
//! losses, and the stream files the tracers could not write.

use rostrace_ctf::TraceSet;
use std::path::{Path, PathBuf};

/// The summary of a session directory.
#[derive(Clone, Debug, Default)]
pub struct SessionSummary {
    /// The session directory.
    pub dir: PathBuf,
    /// Whether it holds a trace at all.
    pub recorded: bool,
    /// The errors of opening its traces.
    pub warnings: Vec<String>,
    /// Events in all.
    pub events: u64,
    /// Processes (by trace and vpid).
    pub processes: u64,
    /// Events the tracers discarded.
    pub discarded_events: u64,
    /// Packets lost.
    pub lost_packets: u64,
    /// What the tracers said of the stream files they could not write whole (a full disk).
    pub write_failures: Vec<String>,
}

/// Sums up the recording in `dir`; `progress` is told the bytes to read and those read so far.
pub fn summarize(dir: &Path, progress: &(dyn Fn(u64, u64) + Sync)) -> SessionSummary {
    let mut s = SessionSummary { dir: dir.to_path_buf(), ..Default::default() };
    if rostrace_ctf::find_traces(dir).is_err() {
        return s;
    }
    let (set, errors) = TraceSet::open(&[dir]);
    s.recorded = true;
    s.warnings = errors.iter().map(|e| e.to_string()).collect();
    let info = rostrace_ctf::summary::summarize(&set, &[], 0, &|done| progress(set.total_bytes(), done));
    s.events = info.event_count;
    s.processes = info.processes.len() as u64;
    s.discarded_events = info.discarded_events;
    s.lost_packets = info.lost_packets;
    s.write_failures = write_failures(dir, 0);
    s
}

/// What the tracers said of the stream files they could not write, below `dir`.
fn write_failures(dir: &Path, depth: usize) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else { return out };
    let mut entries: Vec<_> = rd.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(errno) = name.strip_prefix(tracetools::tracer::WRITE_FAILED_FILE).and_then(|n| n.strip_prefix('-'))
        {
            let said = std::fs::read_to_string(&p).unwrap_or_default();
            out.push(if said.trim().is_empty() {
                let error = std::io::Error::from_raw_os_error(errno.parse().unwrap_or(0));
                format!("{}: {error}", dir.display())
            } else {
                said.trim().to_string()
            });
        } else if depth < 8 && e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(write_failures(&p, depth + 1));
        }
    }
    out
}
