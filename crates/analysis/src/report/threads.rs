//! Callback time per process, node and thread, and the executor phases per thread.

use super::callbacks::Tally;
use super::names::Names;
use crate::collections::HashMap;
use crate::link::View;
use serde::Serialize;
use std::sync::Arc;

/// Callback time of one process, node or thread.
#[derive(Debug, Clone, Serialize)]
pub struct TimeShare {
    /// Trace index.
    pub trace: u32,
    /// Process.
    pub vpid: i64,
    /// Host of the process ([`crate::Process::host`]).
    pub host: Arc<str>,
    /// Thread, node or process name.
    pub name: Arc<str>,
    /// Thread id (threads only).
    pub vtid: Option<i64>,
    /// Callback runs.
    pub runs: u64,
    /// Callback time (ns).
    pub callback_ns: i64,
    /// Share of all callback time.
    pub share: f64,
    /// Callback time over the trace duration (or the window's); above 1 when callbacks ran on
    /// several threads at once.
    pub busy: f64,
    /// Threads that ran these callbacks.
    pub threads: u64,
}

/// Time a thread's executor spent per phase (`rclcpp_executor_*` events).
#[derive(Debug, Clone, Serialize)]
pub struct ExecutorThread {
    /// Process.
    pub vpid: i64,
    /// Host of the process ([`crate::Process::host`]).
    pub host: Arc<str>,
    /// Thread.
    pub vtid: i64,
    /// Process name.
    pub procname: Arc<str>,
    /// Getting the next ready executable (ns).
    pub get_next_ns: i64,
    /// Waiting for work (ns).
    pub wait_ns: i64,
    /// Executing (ns).
    pub execute_ns: i64,
    /// Executions.
    pub executions: u64,
}

/// The time shares, each by callback time.
pub(super) struct Shares {
    pub(super) per_thread: Vec<TimeShare>,
    pub(super) per_process: Vec<TimeShare>,
    pub(super) per_node: Vec<TimeShare>,
}

/// The time shares of the callbacks' tallies; `total_cb`: all callback time, `duration`: the
/// trace's (or window's).
pub(super) fn time_shares(tally: &Tally, total_cb: i64, duration: i64, names: &Names<'_>) -> Shares {
    let mut proc_threads: HashMap<(u32, i64), u64> = HashMap::default();
    for (t, p, _) in tally.per_thread.keys() {
        *proc_threads.entry((*t, *p)).or_default() += 1;
    }
    let share =
        |trace: u32, vpid: i64, name: Arc<str>, vtid: Option<i64>, threads: u64, (runs, ns): (u64, i64)| TimeShare {
            trace,
            vpid,
            host: names.host(trace, vpid),
            name,
            vtid,
            runs,
            callback_ns: ns,
            share: ns as f64 / total_cb as f64,
            busy: ns as f64 / duration as f64,
            threads,
        };
    let mut per_thread: Vec<TimeShare> =
        tally.per_thread.iter().map(|(&(t, p, tid), &v)| share(t, p, names.process(t, p), Some(tid), 1, v)).collect();
    let mut per_process: Vec<TimeShare> = tally
        .per_proc
        .iter()
        .map(|(&(t, p), &v)| share(t, p, names.process(t, p), None, proc_threads.get(&(t, p)).copied().unwrap_or(0), v))
        .collect();
    let mut per_node: Vec<TimeShare> = tally
        .per_node
        .iter()
        .map(|((t, p, n), &v)| {
            let k = tally.node_threads.get(&(*t, *p, n.clone())).map_or(0, |s| s.len() as u64);
            share(*t, *p, n.clone(), None, k, v)
        })
        .collect();
    for v in [&mut per_thread, &mut per_process, &mut per_node] {
        v.sort_by(|a, b| {
            let by_time = b.callback_ns.cmp(&a.callback_ns).then(a.trace.cmp(&b.trace)).then(a.vpid.cmp(&b.vpid));
            // (Ties on to the thread and the node, not left in a hash map's order.)
            by_time.then(a.vtid.cmp(&b.vtid)).then_with(|| a.name.cmp(&b.name))
        });
    }
    Shares { per_thread, per_process, per_node }
}

/// Time each thread's executor spent per phase, by process and thread.
pub(super) fn executor_threads(a: &View<'_>, names: &Names<'_>) -> Vec<ExecutorThread> {
    let no_executor = HashMap::default();
    let executor = a.get::<crate::executor::ExecutorHandler>().map_or(&no_executor, |e| &e.threads);
    executor_threads_of(executor, names)
}

/// The rows of `executor`'s threads.
pub(super) fn executor_threads_of(
    executor: &HashMap<(u32, i64, i64), crate::executor::ExecutorPhases>,
    names: &Names<'_>,
) -> Vec<ExecutorThread> {
    // By process and thread, then trace (the order does not depend on the map's).
    let mut threads: Vec<_> = executor.iter().collect();
    threads.sort_unstable_by_key(|((t, p, tid), _)| (*p, *tid, *t));
    let mut executor_threads: Vec<ExecutorThread> = threads
        .into_iter()
        .map(|((t, p, tid), ph)| ExecutorThread {
            vpid: *p,
            host: names.host(*t, *p),
            vtid: *tid,
            procname: names.process(*t, *p),
            get_next_ns: ph.get_next_ns,
            wait_ns: ph.wait_ns,
            execute_ns: ph.execute_ns,
            executions: ph.executions,
        })
        .collect();
    executor_threads.sort_by_key(|e| (e.vpid, e.vtid));
    executor_threads
}
