//! The callbacks section: each callback's runs, durations, periods and owner, and the tallies
//! per node, thread and process that the time shares and the notes are made of.

use super::names::Names;
use crate::collections::{push_small, HashMap, HashSet};
use crate::link::{LinkedRun, View};
use crate::model::{Callback, Key, Model, Owner, OwnerRef};
use crate::stats::Stats;
use crate::tables::Run;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One callback's results.
#[derive(Debug, Clone, Serialize)]
pub struct CallbackReport {
    /// Trace index.
    pub trace: u32,
    /// Process.
    pub vpid: i64,
    /// Host of the process ([`crate::Process::host`]).
    pub host: Arc<str>,
    /// Process name.
    pub procname: Arc<str>,
    /// Address of the callback object.
    pub address: u64,
    /// Symbol.
    pub symbol: Arc<str>,
    /// Owning node, `/ns/name`.
    pub node: Arc<str>,
    /// `subscription`, `timer`, `service`, `client` or `unknown`.
    pub kind: &'static str,
    /// Why the kind is `unknown`: which initialization event is not in the trace.
    pub unknown_reason: Option<&'static str>,
    /// Topic (subscription) or service name.
    pub topic: Option<Arc<str>>,
    /// Timer period (ns).
    pub timer_period_ns: Option<i64>,
    /// Completed runs.
    pub count: u64,
    /// Runs that started and did not end before the trace did.
    pub unfinished: u64,
    /// Runs flagged intra-process.
    pub intra_process: u64,
    /// Durations.
    pub duration_ns: Stats,
    /// Time between starts.
    pub period_ns: Stats,
    /// Time between starts minus the timer period (timers only).
    pub jitter_ns: Option<Stats>,
    /// Total run time.
    pub total_ns: i64,
    /// Share of all callback time.
    pub share: f64,
}

/// Callback time per node, thread and process, and what the notes tell about.
#[derive(Default)]
pub(super) struct Tally {
    /// (runs, ns) per (trace, vpid, node name).
    pub(super) per_node: HashMap<(u32, i64, Arc<str>), (u64, i64)>,
    /// The threads each node's callbacks ran on (a few: a list, not a set of its own each).
    pub(super) node_threads: HashMap<(u32, i64, Arc<str>), Vec<i32>>,
    /// (runs, ns) per (trace, vpid, vtid).
    pub(super) per_thread: HashMap<(u32, i64, i64), (u64, i64)>,
    /// (runs, ns) per (trace, vpid).
    pub(super) per_proc: HashMap<(u32, i64), (u64, i64)>,
    pub(super) unknown_callbacks: BTreeMap<(u32, i64), u64>,
    /// Runs still open when the trace (or window) ended, per process.
    pub(super) open_runs: HashMap<(u32, i64), u64>,
    pub(super) service_runs: HashSet<(u32, i64)>,
}

/// The callbacks, by total time, with the tallies.
pub(super) struct Section {
    pub(super) callbacks: Vec<CallbackReport>,
    pub(super) tally: Tally,
    /// All callback time (at least 1 ns).
    pub(super) total_ns: i64,
}

/// Runs grouped by callback handle and callback, in the order of (handle, callback).
/// A callback's runs: (handle, callback object), run indices.
type Group = ((Key, Option<u32>), Vec<u32>);

pub(super) fn groups(a: &View<'_>) -> Vec<Group> {
    let mut by_slot: Vec<Vec<(Option<u32>, Vec<u32>)>> = vec![Vec::new(); a.slots.len()];
    for (i, LinkedRun { run: r, callback: id }) in a.runs.iter().enumerate() {
        let Some(of_slot) = by_slot.get_mut(r.slot()) else { continue };
        match of_slot.iter_mut().find(|(k, _)| k == id) {
            Some((_, v)) => v.push(i as u32),
            None => push_small(of_slot, (*id, vec![i as u32])),
        }
    }
    let slots = &a.slots;
    let mut groups: Vec<_> = by_slot
        .into_iter()
        .enumerate()
        .flat_map(|(slot, v)| v.into_iter().map(move |(id, runs)| ((slots[slot], id), runs)))
        .collect();
    groups.sort_unstable_by_key(|(k, _)| *k);
    groups
}

pub(super) fn section<'m>(a: &View<'m>, names: &Names<'m>) -> Section {
    let m = &a.model;
    let total_ns: i64 = a.runs.iter().filter_map(|r| r.run.duration()).sum::<i64>().max(1);
    let groups = groups(a);
    let mut callbacks = Vec::with_capacity(groups.len());
    let mut tally = Tally::default();
    for ((key, id), idx) in &groups {
        let idx: Vec<Run> = idx.iter().map(|&i| a.runs[i as usize].run).collect();
        let cb = id.map(|i| m.callbacks.get(i));
        callbacks.push(callback(m, *key, cb, &idx, Some(total_ns), names, &mut tally));
    }
    callbacks.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.vpid.cmp(&b.vpid)).then(a.address.cmp(&b.address)));
    Section { callbacks, tally, total_ns }
}

/// Why a callback's kind is unknown: which initialization event is not in the trace.
fn unknown_reason(cb: Option<&Callback>) -> &'static str {
    match cb {
        None => "no rclcpp_callback_register nor rclcpp_*_callback_added for it: created before tracing started",
        Some(c) => match c.owner_ref {
            None => {
                "registered, but not added to a subscription, timer or service (no \
                     rclcpp_*_callback_added)"
            }
            Some(OwnerRef::Subscription(_)) => {
                "its subscription's initialization (rcl_subscription_init, rclcpp_subscription_init) is \
                 not in the trace"
            }
            Some(OwnerRef::Timer(_)) => "its timer's initialization (rcl_timer_init) is not in the trace",
            Some(OwnerRef::Service(_)) => "its service's initialization (rcl_service_init) is not in the trace",
        },
    }
}

/// One callback's report from its runs `idx`, tallied into `tally`; its share of `total_cb`, the
/// time of all callbacks. Without `total_cb`, its statistics (duration, period, jitter) and
/// share are left empty: a streamed analysis makes them of its samples.
pub(super) fn callback<'m>(
    m: &'m Model,
    key: Key,
    cb: Option<&'m Callback>,
    idx: &[Run],
    total_cb: Option<i64>,
    names: &Names<'m>,
    tally: &mut Tally,
) -> CallbackReport {
    let mut durations: Vec<i64> = idx.iter().filter_map(|r| r.duration()).collect();
    let (kind, topic, timer_period) = match cb.and_then(|c| c.owner) {
        Some(Owner::Subscription(s)) => ("subscription", Some(names.text(&m.subscriptions.get(s).topic)), None),
        Some(Owner::Timer(t)) => ("timer", None, Some(m.timers.get(t).period_ns)),
        Some(Owner::Service(s)) => ("service", Some(names.text(&m.services.get(s).name)), None),
        Some(Owner::Client(c)) => ("client", Some(names.text(&m.clients.get(c).name)), None),
        None => ("unknown", None, None),
    };
    let unknown_reason = (kind == "unknown").then(|| unknown_reason(cb));
    let open = idx.iter().filter(|r| r.duration().is_none()).count() as u64;
    if open > 0 {
        *tally.open_runs.entry((key.0, key.1)).or_default() += open;
    }
    match kind {
        "unknown" if !idx.is_empty() => *tally.unknown_callbacks.entry((key.0, key.1)).or_default() += 1,
        "service" if !idx.is_empty() => {
            tally.service_runs.insert((key.0, key.1));
        }
        _ => {}
    }
    let node = cb.and_then(|c| m.callback_node(c));
    let total: i64 = durations.iter().sum();
    let node_name = names.node(node);
    let e = tally.per_node.entry((key.0, key.1, node_name.clone())).or_default();
    e.0 += durations.len() as u64;
    e.1 += total;
    // The threads its runs were on (a few): runs that ended and their time on each.
    let mut on: Vec<(i32, u64, i64)> = Vec::new();
    for r in idx {
        let d = r.duration();
        let (n, ns) = (u64::from(d.is_some()), d.unwrap_or(0));
        match on.iter_mut().find(|x| x.0 == r.vtid) {
            Some(x) => (x.1, x.2) = (x.1 + n, x.2 + ns),
            None => on.push((r.vtid, n, ns)),
        }
    }
    let threads = tally.node_threads.entry((key.0, key.1, node_name.clone())).or_default();
    for &(vtid, _, _) in &on {
        if !threads.contains(&vtid) {
            push_small(threads, vtid);
        }
    }
    for &(vtid, n, ns) in on.iter().filter(|x| x.1 > 0) {
        let x = tally.per_thread.entry((key.0, key.1, vtid as i64)).or_default();
        (x.0, x.1) = (x.0 + n, x.1 + ns);
        let y = tally.per_proc.entry((key.0, key.1)).or_default();
        (y.0, y.1) = (y.0 + n, y.1 + ns);
    }
    let (duration_ns, period_ns, jitter_ns, share) = match total_cb {
        Some(total_cb) => {
            let mut starts: Vec<i64> = idx.iter().map(|r| r.start).collect();
            starts.sort_unstable();
            let mut periods: Vec<i64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
            let jitter = timer_period.map(|tp| Stats::of(&mut periods.iter().map(|p| p - tp).collect::<Vec<_>>()));
            (Stats::of(&mut durations), Stats::of(&mut periods), jitter, total as f64 / total_cb as f64)
        }
        None => (Stats::default(), Stats::default(), None, 0.0),
    };
    CallbackReport {
        trace: key.0,
        vpid: key.1,
        host: names.host(key.0, key.1),
        procname: names.process(key.0, key.1),
        address: key.2,
        symbol: names.text(cb.map_or("", |c| &c.symbol)),
        node: node_name,
        kind,
        unknown_reason,
        topic,
        timer_period_ns: timer_period,
        count: durations.len() as u64,
        unfinished: idx.iter().filter(|r| r.end().is_none()).count() as u64,
        intra_process: idx.iter().filter(|r| r.intra()).count() as u64,
        duration_ns,
        period_ns,
        jitter_ns,
        total_ns: total,
        share,
    }
}
