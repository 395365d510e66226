//! The system analyses' results added up: once, from the handlers of an analysis in memory, or
//! slice after slice in a streamed one, whose handlers are emptied of what was added
//! ([`clear`]) so that memory does not grow with the recording. Per-run and per-message values
//! are kept as [`Latencies`]: every value in memory, a sketch when streamed.

use super::cpu_time::CpuTime;
use super::memory::Memory;
use super::message_age::MessageAge;
use super::profile::Profile;
use super::report::{
    CallbackId, CallbackSched, CallbackStats, CpuTimeReport, MemoryReport, NodeCpu, ProcessCpu, ProcessMemory,
    ProfileReport, SchedulingReport, SystemReport, ThreadWakeups,
};
use super::scheduling::Scheduling;
use super::sim_time::{SimTime, SimTimeReport};
use crate::collections::HashMap;
use crate::handler::Handlers;
use crate::model::Key;
use crate::stats::Latencies;

/// Points of a process's memory timeline.
const TIMELINE_POINTS: usize = 200;

/// One callback's scheduling during its runs, added up.
#[derive(Default)]
struct SchedAcc<L> {
    runs: u64,
    on: L,
    off: L,
    preemptions: u64,
    blocked: u64,
    interrupted: u64,
}

/// The system analyses' per-run and per-message results added up.
pub(crate) struct SystemTotals<L> {
    /// The time a memory timeline spreads its points over: the recording's (streamed), or
    /// `None`, each process's from its first change to its last (in memory, added once).
    span: Option<(i64, i64)>,
    sched: HashMap<Key, SchedAcc<L>>,
    wakeups: HashMap<(String, i64), L>,
    ages: HashMap<Key, L>,
    memory: HashMap<(u32, i64, bool), Timeline>,
    sim: Vec<(i64, i64)>,
}

impl<L: Latencies> SystemTotals<L> {
    /// Totals whose memory timelines spread over `span` (see [`SystemTotals::span`]).
    pub(crate) fn new(span: Option<(i64, i64)>) -> Self {
        SystemTotals {
            span,
            sched: HashMap::default(),
            wakeups: HashMap::default(),
            ages: HashMap::default(),
            memory: HashMap::default(),
            sim: Vec::new(),
        }
    }

    /// Adds the results `p`'s system handlers hold (those [`clear`] empties).
    pub(crate) fn add(&mut self, p: &Handlers) {
        if let Some(s) = p.get::<Scheduling>() {
            for r in &s.runs {
                let a = self.sched.entry(r.callback).or_default();
                a.runs += 1;
                a.on.add(r.on_cpu_ns);
                a.off.add(r.off_cpu_ns);
                a.preemptions += r.preemptions;
                a.blocked += r.blocked;
                a.interrupted += u64::from(r.preemptions + r.blocked > 0);
            }
            for (k, v) in &s.wakeups {
                let l = self.wakeups.entry(k.clone()).or_default();
                v.iter().for_each(|&x| l.add(x));
            }
        }
        if let Some(m) = p.get::<MessageAge>() {
            for (k, v) in &m.ages {
                let l = self.ages.entry(*k).or_default();
                v.iter().for_each(|&x| l.add(x));
            }
        }
        if let Some(m) = p.get::<Memory>() {
            for (k, ch) in &m.changes {
                let span = self.span.unwrap_or((ch.first().map_or(0, |c| c.0), ch.last().map_or(0, |c| c.0)));
                let t = self.memory.entry(*k).or_insert_with(|| Timeline::new(span, TIMELINE_POINTS));
                ch.iter().for_each(|&(ts, d)| t.push(ts, d));
            }
        }
        if let Some(s) = p.get::<SimTime>() {
            self.sim.extend_from_slice(&s.samples);
        }
    }

    /// The report: scheduling, message ages and memory timelines from the totals; CPU time,
    /// memory per thread and the profile from `p`'s handlers, which hold them whole.
    pub(crate) fn report(self, p: &Handlers, names: &HashMap<Key, (&str, &str)>) -> SystemReport {
        let id = |k: Key| CallbackId {
            trace: k.0,
            vpid: k.1,
            address: k.2,
            node: names.get(&k).map(|c| c.0.to_string()).unwrap_or_default(),
            symbol: names.get(&k).map(|c| c.1.to_string()).unwrap_or_default(),
        };
        let SystemTotals { sched, wakeups, ages, memory, sim, .. } = self;
        let scheduling = p.get::<Scheduling>().filter(|s| s.has_kernel()).map(|_| {
            let mut callbacks: Vec<CallbackSched> = sched
                .into_iter()
                .map(|(k, a)| CallbackSched {
                    callback: id(k),
                    runs: a.runs,
                    on_cpu_ns: a.on.into_stats(),
                    off_cpu_ns: a.off.into_stats(),
                    preemptions: a.preemptions,
                    blocked: a.blocked,
                    runs_interrupted: a.interrupted,
                })
                .collect();
            callbacks.sort_by(|a, b| {
                b.off_cpu_ns.sum.cmp(&a.off_cpu_ns.sum).then(a.callback.address.cmp(&b.callback.address))
            });
            let mut wakeup_latency: Vec<ThreadWakeups> = wakeups
                .into_iter()
                .map(|((host, tid), v)| ThreadWakeups { host, tid, latency_ns: v.into_stats() })
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
        let mut message_age: Vec<CallbackStats> =
            ages.into_iter().map(|(k, v)| CallbackStats { callback: id(k), ns: v.into_stats() }).collect();
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
        let memory = p.get::<Memory>().filter(|_| !memory.is_empty()).map(|m| {
            let mut processes: Vec<ProcessMemory> = memory
                .into_iter()
                .map(|((trace, vpid, kernel), t)| {
                    let (changes, final_bytes, max_bytes, max_at_ns, timeline) = t.finish();
                    ProcessMemory {
                        trace,
                        vpid,
                        kind: if kernel { "kernel" } else { "userspace" },
                        changes,
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
        let sim_time = SimTimeReport::of(&sim);
        SystemReport { cpu_time, scheduling, message_age, memory, profile, sim_time }
    }
}

impl SystemReport {
    /// The results of the system handlers registered with `p` (an analysis in memory); `names`
    /// holds each callback's node and symbol.
    pub fn of(p: &Handlers, names: &HashMap<Key, (&str, &str)>) -> SystemReport {
        let mut t = SystemTotals::<Vec<i64>>::new(None);
        t.add(p);
        t.report(p, names)
    }
}

/// Empties the results of `p`'s system handlers that [`SystemTotals::add`] took (a streamed
/// analysis's, after each slice), keeping the state they carry to the next slice.
pub(crate) fn clear(p: &mut Handlers) {
    if let Some(s) = p.get_mut::<Scheduling>() {
        s.runs.clear();
        s.wakeups.values_mut().for_each(Vec::clear);
    }
    if let Some(m) = p.get_mut::<MessageAge>() {
        m.ages.clear();
    }
    if let Some(m) = p.get_mut::<Memory>() {
        m.changes.values_mut().for_each(Vec::clear);
    }
    if let Some(s) = p.get_mut::<SimTime>() {
        s.samples.clear();
    }
}

/// A process's memory usage over time, from its changes in time order: the final and peak
/// usage, and a timeline of at most `points` points over its span (each the usage at the end
/// of its part of the span), with the peak among them.
struct Timeline {
    first: i64,
    span: i128,
    points: usize,
    changes: u64,
    cur: i64,
    max: i64,
    max_at: i64,
    out: Vec<(i64, i64)>,
    bin_of_last: usize,
}

impl Timeline {
    fn new((first, last): (i64, i64), points: usize) -> Timeline {
        Timeline {
            first,
            span: (last - first).max(1) as i128,
            points,
            changes: 0,
            cur: 0,
            max: i64::MIN,
            max_at: 0,
            out: Vec::new(),
            bin_of_last: usize::MAX,
        }
    }

    fn push(&mut self, ts: i64, d: i64) {
        self.changes += 1;
        self.cur += d;
        if self.cur > self.max {
            self.max = self.cur;
            self.max_at = ts;
        }
        let bin = (((ts - self.first) as i128 * (self.points.max(2) - 1) as i128) / self.span) as usize;
        if bin == self.bin_of_last {
            if let Some(p) = self.out.last_mut() {
                *p = (ts, self.cur);
            }
        } else {
            self.out.push((ts, self.cur));
            self.bin_of_last = bin;
        }
    }

    /// (changes, final, peak, time of the peak, timeline).
    fn finish(mut self) -> (u64, i64, i64, i64, Vec<(i64, i64)>) {
        let (max, max_at) = (self.max, self.max_at);
        if max != i64::MIN && !self.out.iter().any(|p| p.0 == max_at && p.1 == max) {
            let k = self.out.partition_point(|p| p.0 < max_at);
            self.out.insert(k, (max_at, max));
        }
        (self.changes, self.cur, max, max_at, self.out)
    }
}
