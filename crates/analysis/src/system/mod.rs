//! System analyses, each a [`Handler`](crate::Handler): CPU time per thread and scheduling
//! during callback runs (kernel scheduling events), message age (CARET's dispatch events).
//! They report when the trace has their events.

pub mod cpu_time;
pub mod memory;
pub mod message_age;
pub mod profile;
pub mod scheduling;
pub mod sim_time;
pub mod symbols;

pub use cpu_time::{CpuTime, ThreadCpu};
pub use memory::{Memory, ThreadMemory};
pub use message_age::MessageAge;
pub use profile::{FunctionProfile, Profile};
pub use scheduling::{RunSched, Scheduling};
pub use sim_time::{SimClock, SimTime, SimTimeReport};

use crate::collections::HashMap;
use crate::handler::Handlers;
use crate::stats::Stats;
use serde::Serialize;

/// Adds the system handlers of `rostrace analyze` ([`crate::Processor::standard`]).
pub(crate) fn add_standard(h: &mut Handlers) {
    h.add(CpuTime::default());
    h.add(Scheduling::default());
    h.add(MessageAge::default());
    h.add(Memory::default());
    h.add(Profile::default());
    h.add(SimTime::default());
}

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

/// Usage over time from changes in time order: the final and peak usage and a timeline of at
/// most `points` points.
fn timeline(changes: &[(i64, i64)], points: usize) -> (i64, i64, i64, Vec<(i64, i64)>) {
    let (mut cur, mut max, mut max_at) = (0i64, i64::MIN, 0i64);
    let (first, last) = (changes.first().map_or(0, |c| c.0), changes.last().map_or(0, |c| c.0));
    let span = (last - first).max(1) as i128;
    let mut out: Vec<(i64, i64)> = Vec::new();
    let mut bin_of_last = usize::MAX;
    for &(ts, d) in changes {
        cur += d;
        if cur > max {
            max = cur;
            max_at = ts;
        }
        let bin = (((ts - first) as i128 * (points.max(2) - 1) as i128) / span) as usize;
        if bin == bin_of_last {
            if let Some(p) = out.last_mut() {
                *p = (ts, cur);
            }
        } else {
            out.push((ts, cur));
            bin_of_last = bin;
        }
    }
    if max != i64::MIN && !out.iter().any(|p| p.0 == max_at && p.1 == max) {
        let k = out.partition_point(|p| p.0 < max_at);
        out.insert(k, (max_at, max));
    }
    (cur, max, max_at, out)
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

impl SystemReport {
    /// The results of the system handlers registered with `p`; `run_key(i)` is the callback
    /// (trace, vpid, address) of run `i`, `names` each callback's node and symbol.
    pub fn of(
        p: &Handlers,
        run_key: impl Fn(u32) -> Option<(u32, i64, u64)>,
        names: &HashMap<(u32, i64, u64), (&str, &str)>,
    ) -> SystemReport {
        let id = |k: (u32, i64, u64)| CallbackId {
            trace: k.0,
            vpid: k.1,
            address: k.2,
            node: names.get(&k).map(|c| c.0.to_string()).unwrap_or_default(),
            symbol: names.get(&k).map(|c| c.1.to_string()).unwrap_or_default(),
        };
        let scheduling = p.get::<Scheduling>().filter(|s| s.has_kernel()).map(|s| {
            let mut per: HashMap<(u32, i64, u64), Vec<&RunSched>> = HashMap::default();
            for r in &s.runs {
                if let Some(k) = run_key(r.run) {
                    per.entry(k).or_default().push(r);
                }
            }
            let mut callbacks: Vec<CallbackSched> = per
                .into_iter()
                .map(|(k, rs)| {
                    let mut on: Vec<i64> = rs.iter().map(|r| r.on_cpu_ns).collect();
                    let mut off: Vec<i64> = rs.iter().map(|r| r.off_cpu_ns).collect();
                    CallbackSched {
                        callback: id(k),
                        runs: rs.len() as u64,
                        on_cpu_ns: Stats::of(&mut on),
                        off_cpu_ns: Stats::of(&mut off),
                        preemptions: rs.iter().map(|r| r.preemptions).sum(),
                        blocked: rs.iter().map(|r| r.blocked).sum(),
                        runs_interrupted: rs.iter().filter(|r| r.preemptions + r.blocked > 0).count() as u64,
                    }
                })
                .collect();
            callbacks.sort_by(|a, b| {
                b.off_cpu_ns.sum.cmp(&a.off_cpu_ns.sum).then(a.callback.address.cmp(&b.callback.address))
            });
            let mut wakeup_latency: Vec<ThreadWakeups> = s
                .wakeups
                .iter()
                .map(|((host, tid), v)| ThreadWakeups {
                    host: host.clone(),
                    tid: *tid,
                    latency_ns: Stats::of(&mut v.clone()),
                })
                .collect();
            wakeup_latency.sort_by(|a, b| b.latency_ns.max.cmp(&a.latency_ns.max).then(a.tid.cmp(&b.tid)));
            let mut per_node: HashMap<(u32, i64, &str), NodeCpu> = HashMap::default();
            for c in &callbacks {
                let id = &c.callback;
                let n = per_node.entry((id.trace, id.vpid, id.node.as_str())).or_insert_with(|| NodeCpu {
                    trace: id.trace,
                    vpid: id.vpid,
                    node: id.node.clone(),
                    ..Default::default()
                });
                n.callbacks += 1;
                n.runs += c.runs;
                n.on_cpu_ns += c.on_cpu_ns.sum as i64;
                n.off_cpu_ns += c.off_cpu_ns.sum as i64;
                n.preemptions += c.preemptions;
            }
            let mut nodes: Vec<NodeCpu> = per_node.into_values().collect();
            nodes.sort_by(|a, b| b.on_cpu_ns.cmp(&a.on_cpu_ns).then(a.node.cmp(&b.node)).then(a.vpid.cmp(&b.vpid)));
            SchedulingReport { callbacks, wakeup_latency, nodes }
        });
        let mut message_age: Vec<CallbackStats> = p
            .get::<MessageAge>()
            .map(|m| {
                m.ages.iter().map(|(k, v)| CallbackStats { callback: id(*k), ns: Stats::of(&mut v.clone()) }).collect()
            })
            .unwrap_or_default();
        message_age.sort_by(|a, b| {
            (b.ns.mean.total_cmp(&a.ns.mean).then(a.callback.address.cmp(&b.callback.address)))
                .then((a.callback.trace, a.callback.vpid).cmp(&(b.callback.trace, b.callback.vpid)))
        });
        let cpu_time = p.get::<CpuTime>().filter(|c| c.traces > 0).map(|c| CpuTimeReport {
            threads: c.threads(),
            processes: c
                .processes()
                .into_iter()
                .map(|(host, pid, name, cpu_ns, threads)| ProcessCpu { host, pid, name, cpu_ns, threads })
                .collect(),
        });
        let memory = p.get::<Memory>().filter(|m| !m.changes.is_empty()).map(|m| {
            let mut processes: Vec<ProcessMemory> = m
                .changes
                .iter()
                .map(|(&(trace, vpid, kernel), ch)| {
                    let (final_bytes, max_bytes, max_at_ns, timeline) = timeline(ch, 200);
                    ProcessMemory {
                        trace,
                        vpid,
                        kind: if kernel { "kernel" } else { "userspace" },
                        changes: ch.len() as u64,
                        final_bytes,
                        max_bytes,
                        max_at_ns,
                        timeline,
                    }
                })
                .collect();
            processes.sort_by(|a, b| {
                (b.max_bytes.cmp(&a.max_bytes).then(a.vpid.cmp(&b.vpid)))
                    .then((a.trace, a.kind).cmp(&(b.trace, b.kind)))
            });
            MemoryReport { threads: m.threads(), processes }
        });
        let profile = p.get::<Profile>().filter(|p| !p.functions().is_empty() || p.unmatched_exits > 0).map(|p| {
            let mut edges: Vec<_> = p.edges.iter().map(|(&(t, v, tid, a, b), &n)| (t, v, tid, a, b, n)).collect();
            edges.sort();
            ProfileReport {
                functions: p.functions(),
                edges,
                unmatched_exits: p.unmatched_exits,
                unfinished: p.unfinished(),
            }
        });
        let sim_time = p.get::<SimTime>().and_then(|s| SimTimeReport::of(&s.samples));
        SystemReport { cpu_time, scheduling, message_age, memory, profile, sim_time }
    }
}
