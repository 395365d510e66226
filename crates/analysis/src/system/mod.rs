//! System analyses, each a [`Handler`](crate::Handler): CPU time per thread and scheduling
//! during callback runs (kernel scheduling events), message age (CARET's dispatch events).
//! They report when the trace has their events.

pub mod cpu_time;
pub mod message_age;
pub mod scheduling;

pub use cpu_time::{CpuTime, ThreadCpu};
pub use message_age::MessageAge;
pub use scheduling::{RunSched, Scheduling};

use crate::report::CallbackReport;
use crate::stats::Stats;
use serde::Serialize;
use std::collections::HashMap;

/// Registers the system handlers of `rostrace analyze`.
pub fn add_standard(p: &mut crate::Processor) {
    p.add(CpuTime::default());
    p.add(Scheduling::default());
    p.add(MessageAge::default());
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
    /// The results of the system handlers registered with `p`; `run_keys[i]` is the callback
    /// (trace, vpid, address) of run `i`, `callbacks` the report's callbacks (for names).
    pub fn of(p: &crate::Processor, run_keys: &[(u32, i64, u64)], callbacks: &[CallbackReport]) -> SystemReport {
        let names: HashMap<(u32, i64, u64), &CallbackReport> =
            callbacks.iter().map(|c| ((c.trace, c.vpid, c.address), c)).collect();
        let id = |k: (u32, i64, u64)| CallbackId {
            trace: k.0,
            vpid: k.1,
            address: k.2,
            node: names.get(&k).map(|c| c.node.clone()).unwrap_or_default(),
            symbol: names.get(&k).map(|c| c.symbol.clone()).unwrap_or_default(),
        };
        let scheduling = p.get::<Scheduling>().filter(|s| s.has_kernel()).map(|s| {
            let mut per: HashMap<(u32, i64, u64), Vec<&RunSched>> = HashMap::new();
            for r in &s.runs {
                if let Some(k) = run_keys.get(r.run as usize) {
                    per.entry(*k).or_default().push(r);
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
            SchedulingReport { callbacks, wakeup_latency }
        });
        let mut message_age: Vec<CallbackStats> = p
            .get::<MessageAge>()
            .map(|m| {
                m.ages.iter().map(|(k, v)| CallbackStats { callback: id(*k), ns: Stats::of(&mut v.clone()) }).collect()
            })
            .unwrap_or_default();
        message_age.sort_by(|a, b| b.ns.mean.total_cmp(&a.ns.mean).then(a.callback.address.cmp(&b.callback.address)));
        let cpu_time = p.get::<CpuTime>().filter(|c| c.traces > 0).map(|c| CpuTimeReport {
            threads: c.threads(),
            processes: c
                .processes()
                .into_iter()
                .map(|(host, pid, name, cpu_ns, threads)| ProcessCpu { host, pid, name, cpu_ns, threads })
                .collect(),
        });
        SystemReport { cpu_time, scheduling, message_age }
    }
}
