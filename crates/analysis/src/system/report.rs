//! The system analyses' results, as reported.

use super::cpu_time::ThreadCpu;
use super::memory::ThreadMemory;
use super::profile::FunctionProfile;
use super::sim_time::SimTimeReport;
use crate::stats::Stats;
use serde::Serialize;

/// The system analyses' results, as reported (absent when the trace lacks their events).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct SystemReport {
    /// CPU time per thread and process (kernel `sched_switch`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_time: Option<CpuTimeReport>,
    /// Scheduling during callback runs, per callback (kernel and ROS 2 events of one host).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduling: Option<SchedulingReport>,
    /// Message age per callback (CARET's `message_timestamp`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub message_age: Vec<CallbackStats>,
    /// Memory per thread and process over time (libc wrapper, kernel page allocations).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryReport>,
    /// Function profile per thread (cyg-profile).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileReport>,
    /// System time → sim time (CARET's `sim_time` events: `record --record-clock`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sim_time: Option<SimTimeReport>,
}

/// Memory per thread and process.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MemoryReport {
    /// Per thread, highest peak first.
    pub threads: Vec<ThreadMemory>,
    /// Per process and kind, highest peak first.
    pub processes: Vec<ProcessMemory>,
}

/// Memory of one process over time.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ProcessMemory {
    /// Trace index.
    pub trace: u32,
    /// Process (0 when the trace has no vpid context).
    pub vpid: i64,
    /// `userspace` or `kernel`.
    pub kind: &'static str,
    /// Changes counted.
    pub changes: u64,
    /// Usage at the end (bytes).
    pub final_bytes: i64,
    /// Highest usage (bytes).
    pub max_bytes: i64,
    /// When the highest usage was reached (ns since the epoch).
    pub max_at_ns: i64,
    /// Usage over time: (ns since the epoch, bytes) at most 200 points, each the usage at the end
    /// of its slice of time, with the peak among them.
    pub timeline: Vec<(i64, i64)>,
}

/// Function profile.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ProfileReport {
    /// Per thread and function, highest total first.
    pub functions: Vec<FunctionProfile>,
    /// Caller → callee edges: (trace, vpid, tid, caller, callee, calls).
    pub edges: Vec<(u32, i64, i64, u64, u64, u64)>,
    /// Exits without their entry.
    pub unmatched_exits: u64,
    /// Calls not returned at the end of the trace.
    pub unfinished: u64,
}

/// Which callback (as in the report's callbacks).
#[derive(Debug, Clone, Default, Serialize)]
pub struct CallbackId {
    /// Trace index.
    pub trace: u32,
    /// Process.
    pub vpid: i64,
    /// Callback address.
    pub address: u64,
    /// Node, when known.
    pub node: String,
    /// Symbol, when known.
    pub symbol: String,
}

/// Statistics of one value per callback.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CallbackStats {
    /// The callback.
    pub callback: CallbackId,
    /// Per run or message (ns).
    pub ns: Stats,
}

/// Scheduling during callback runs.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SchedulingReport {
    /// Per callback, most time off CPU first.
    pub callbacks: Vec<CallbackSched>,
    /// Wake-up latency of each thread that ran callbacks.
    pub wakeup_latency: Vec<ThreadWakeups>,
    /// CPU time of each node's callback runs, most first.
    pub nodes: Vec<NodeCpu>,
}

/// CPU time of one node: the sum over its callbacks' runs.
#[derive(Debug, Clone, Default, Serialize)]
pub struct NodeCpu {
    /// Trace index.
    pub trace: u32,
    /// Process.
    pub vpid: i64,
    /// Node (empty: callbacks of no known node).
    pub node: String,
    /// Callbacks that ran.
    pub callbacks: u64,
    /// Runs measured.
    pub runs: u64,
    /// Time on a CPU during the runs (ns).
    pub on_cpu_ns: i64,
    /// Time off CPU during the runs (ns).
    pub off_cpu_ns: i64,
    /// Preemptions during the runs.
    pub preemptions: u64,
}

/// Scheduling of one callback's runs.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CallbackSched {
    /// The callback.
    pub callback: CallbackId,
    /// Runs measured (begun and ended while the kernel was traced).
    pub runs: u64,
    /// Time on a CPU per run (ns).
    pub on_cpu_ns: Stats,
    /// Time off CPU per run (ns).
    pub off_cpu_ns: Stats,
    /// Preemptions (switched out while runnable), all runs.
    pub preemptions: u64,
    /// Switches out while blocked, all runs.
    pub blocked: u64,
    /// Runs with at least one switch out.
    pub runs_interrupted: u64,
}

/// Wake-up latencies of one thread.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ThreadWakeups {
    /// Host.
    pub host: String,
    /// Thread id.
    pub tid: i64,
    /// Wake-up to on-CPU (ns).
    pub latency_ns: Stats,
}

/// CPU time per thread and process.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CpuTimeReport {
    /// Per thread, most CPU time first.
    pub threads: Vec<ThreadCpu>,
    /// Per process whose threads' process is known, most CPU time first.
    pub processes: Vec<ProcessCpu>,
}

/// CPU time of one process.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ProcessCpu {
    /// Host.
    pub host: String,
    /// Process id.
    pub pid: i64,
    /// Name (its main thread's command).
    pub name: String,
    /// Time on CPU (ns), all its threads.
    pub cpu_ns: i64,
    /// Threads seen on CPU.
    pub threads: u64,
}
