//! The report of a streamed analysis ([`crate::stream`]), added up slice of time by slice of
//! time: each slice's linked tables are folded into totals per callback, topic, pair, thread,
//! node and process, then given back; the report is made of the totals and the last slice's
//! model. Counts, sums, means, minima and maxima equal those of one analysis of the whole
//! recording; percentiles come from [`Sample`] (exact up to its first values, then within its
//! relative accuracy).

use super::callbacks::{self, Tally};
use super::names::Names;
use super::topics::PairKey;
use super::{nodes, threads, topics, CallbackReport, PairReport, ReasonCount, Report, TopicReport, TransitionReport};
use crate::collections::HashMap;
use crate::executor::ExecutorPhases;
use crate::link::{pub_node, Linked, LinkedTake, MatchBy, View};
use crate::model::{Key, Model};
use crate::stats::Sample;
use crate::tables::{ReadError, Run};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A callback: trace, process, handle address, symbol.
type CallbackKey = (u32, i64, u64, Arc<str>);

/// A publisher → subscriber pair by ids, before it is named ([`PairKey`]): the publisher's trace,
/// process and node, the subscriber's trace, process and node.
type PairIds = (u32, i64, Option<u32>, u32, i64, Option<u32>);

struct CallbackTotal {
    /// The report of the last slice it ran in (names, kind, topic, timer period).
    row: CallbackReport,
    unfinished: u64,
    intra: u64,
    durations: Sample,
    periods: Sample,
    jitter: Option<Sample>,
    /// The last start seen, for the period across two slices.
    last_start: Option<i64>,
}

#[derive(Default)]
struct PairTotal {
    count: u64,
    pub_to_take: Sample,
    pub_to_callback: Sample,
}

struct TopicTotal {
    /// The report of the last slice that had it (names of its publishers and subscribers).
    row: TopicReport,
    publishes: u64,
    takes: u64,
    matched: u64,
    unmatched: u64,
    reasons: BTreeMap<&'static str, u64>,
    dropped: Option<u64>,
    by: [u64; 3],
    pub_to_take: Sample,
    pub_to_callback: Sample,
    take_to_callback: Sample,
    pairs: BTreeMap<PairKey, PairTotal>,
}

/// A run that started in a slice and did not end in what that slice read: ended by a later one.
struct Carried {
    key: CallbackKey,
    vtid: i64,
    start: i64,
    node: Arc<str>,
}

/// The slices: the first one's start, their length and number, and the margin read around each.
#[derive(Default, Clone, Copy)]
pub(crate) struct Grid {
    pub(crate) first: i64,
    pub(crate) slice_ns: i64,
    pub(crate) slices: i64,
    pub(crate) margin_ns: i64,
}

impl Grid {
    /// The slice holding time `t`.
    fn slice_of(&self, t: i64) -> i64 {
        (t.saturating_sub(self.first) / self.slice_ns.max(1)).clamp(0, (self.slices - 1).max(0))
    }

    /// The end of what the slice holding time `t` reads.
    fn read_until(&self, t: i64) -> i64 {
        let k = self.slice_of(t);
        if k >= self.slices - 1 {
            i64::MAX
        } else {
            self.first.saturating_add((k + 1) * self.slice_ns).saturating_add(self.margin_ns)
        }
    }

    /// The start of what the slice holding time `t` reads.
    fn read_from(&self, t: i64) -> i64 {
        match self.slice_of(t) {
            0 => i64::MIN,
            k => self.first.saturating_add(k * self.slice_ns).saturating_sub(self.margin_ns),
        }
    }
}

/// What a slice added of its own: each callback handle's node and kind, as the report names
/// them; the runs of earlier slices that ended in it: (handle, thread, start, end).
pub(crate) struct Added {
    pub(crate) callbacks: HashMap<Key, (Arc<str>, &'static str)>,
    pub(crate) ended: Vec<(Key, i64, i64, i64)>,
}

/// What the slices added up to so far.
#[derive(Default)]
pub(crate) struct Totals {
    grid: Grid,
    carried: Vec<Carried>,
    /// Runs carried that ended in the slice being added: (handle, thread, start, end).
    ended: Vec<(Key, i64, i64, i64)>,
    /// Runs counted whole by their slice whose end a later slice reads without their start
    /// (an end alone there, already counted): (handle, end).
    ended_ahead: Vec<(Key, i64)>,
    /// Every process seen, as the last slice that had it knows it.
    procs: HashMap<(u32, i64), crate::model::Process>,
    /// Per process: the ROS 2 event kinds seen.
    kinds: HashMap<(u32, i64), u64>,
    callbacks: HashMap<CallbackKey, CallbackTotal>,
    tally: Tally,
    unknown: BTreeSet<(u32, i64, u64)>,
    topics: BTreeMap<Arc<str>, TopicTotal>,
    events: u64,
    ros_events: u64,
    /// Per process: events, ROS 2 events.
    processes: HashMap<(u32, i64), (u64, u64)>,
    unmatched_ends: HashMap<(u32, i64), u64>,
    unused: BTreeMap<String, u64>,
    flows_matched: u64,
    flows_unmatched: u64,
    range: Option<(i64, i64)>,
    transitions: Vec<TransitionReport>,
    errors: Vec<ReadError>,
    warnings: Vec<String>,
    pub(crate) discarded: u64,
    /// Whether the durations and latencies the comparison of runs takes ([`crate::diff`]) keep
    /// a uniform random choice of their values ([`Sample::with_reservoir`]).
    reservoirs: bool,
    /// Executor phases per thread, of the slices so far.
    executor: HashMap<(u32, i64, i64), ExecutorPhases>,
    /// Service calls of the slices so far.
    services: super::ServiceTotals<Sample>,
}

impl Totals {
    /// Nothing added yet, over the slices of `grid`.
    pub(crate) fn new(grid: Grid, reservoirs: bool) -> Totals {
        Totals { grid, reservoirs, ..Totals::default() }
    }

    /// The samples [`crate::diff`] compares: each callback's durations, each topic's and each
    /// publisher → subscriber pair's publish → callback latencies, a uniform random choice of
    /// them when there are more than [`crate::stats::RESERVOIR`], with the statistics of every
    /// value (empty without reservoirs). Named as [`crate::samples::Samples::of`] names them.
    pub(crate) fn diff_samples(&self) -> crate::samples::Samples {
        // Several of one name (a process restarted, two processes of one node name): one
        // sample of them all.
        let mut named: BTreeMap<(&str, String), Sample> = BTreeMap::new();
        let mut add = |kind: &'static str, name: String, sample: &Sample| {
            if sample.chosen().is_none() {
                return;
            }
            match named.entry((kind, name)) {
                std::collections::btree_map::Entry::Vacant(e) => {
                    e.insert(sample.clone());
                }
                std::collections::btree_map::Entry::Occupied(mut e) => e.get_mut().merge(sample),
            }
        };
        let mut callbacks: Vec<_> = self.callbacks.iter().collect();
        callbacks.sort_by(|a, b| a.0.cmp(b.0));
        for (_, c) in callbacks {
            if c.durations.count() > 0 {
                add("callback", crate::samples::callback_name(&c.row), &c.durations);
            }
        }
        for (topic, t) in &self.topics {
            if t.pub_to_callback.count() > 0 {
                add("topic", topic.to_string(), &t.pub_to_callback);
            }
            for (k, p) in &t.pairs {
                if !k.2.is_empty() && !k.5.is_empty() && p.pub_to_callback.count() > 0 {
                    add("pair", format!("{} -{}-> {}", k.2, topic, k.5), &p.pub_to_callback);
                }
            }
        }
        let mut s = crate::samples::Samples::default();
        for ((kind, name), sample) in named {
            let list = match kind {
                "callback" => &mut s.callback,
                "topic" => &mut s.topic,
                _ => &mut s.pair,
            };
            list.insert(name.clone(), sample.chosen().unwrap_or_default().to_vec());
            s.whole.entry(kind.to_string()).or_default().insert(name, sample.stats());
        }
        s
    }

    /// The executor phases per thread of the slices added.
    pub(crate) fn executor(&self) -> &HashMap<(u32, i64, i64), ExecutorPhases> {
        &self.executor
    }

    /// Adds a slice's executor phases (those of its own time), in the order of the slices.
    pub(crate) fn add_executor(&mut self, threads: &HashMap<(u32, i64, i64), ExecutorPhases>) {
        for (k, ph) in threads {
            self.executor.entry(*k).or_default().then(ph);
        }
    }

    /// Adds a slice's service calls (`calls`, of what it read, named by its model `m`): those
    /// taken by their server in `[from, to)`, and those sent by their client in it.
    pub(crate) fn add_services(&mut self, m: &Model, calls: &crate::ServiceHandler, from: i64, to: i64) {
        let inside = |t: i64| from <= t && t < to;
        self.services.add(m, &calls.client_calls, &calls.server_calls, |s| inside(s.ts_take), |c| inside(c.ts_send));
    }

    /// A carried run of callback (`trace`, `vpid`, `cb`) ended at `end`: the first of `found`.
    fn complete(&mut self, found: Option<usize>, end: i64) -> bool {
        let Some(i) = found else { return false };
        let c = self.carried.remove(i);
        self.ended.push(((c.key.0, c.key.1, c.key.2), c.vtid, c.start, end));
        let d = end - c.start;
        let (t, vpid) = (c.key.0, c.key.1);
        if let Some(total) = self.callbacks.get_mut(&c.key) {
            total.durations.add(d);
        }
        let tally = &mut self.tally;
        for e in [
            tally.per_node.entry((t, vpid, c.node)).or_default(),
            tally.per_thread.entry((t, vpid, c.vtid)).or_default(),
            tally.per_proc.entry((t, vpid)).or_default(),
        ] {
            (e.0, e.1) = (e.0 + 1, e.1 + d);
        }
        true
    }

    /// Adds what starts in `[from, to)` in a slice's linked tables `a`, whose pass counted
    /// that time ([`crate::engine::Plan::slice`]).
    pub(crate) fn add(&mut self, a: &View<'_>, linked: Linked, from: i64, to: i64) -> Added {
        let mut kinds = HashMap::default();
        let inside = |t: i64| from <= t && t < to;
        let m = a.model;
        let names = Names::new(m);
        // Callbacks: the runs that started in the slice.
        let runs: Vec<_> = a.runs.iter().filter(|r| inside(r.run.start)).copied().collect();
        let view = View { runs: &runs, ..*a };
        for ((key, id), idx) in callbacks::groups(&view) {
            let idx: Vec<Run> = idx.iter().map(|&i| runs[i as usize].run).collect();
            let cb = id.map(|i| m.callbacks.get(i));
            let row = callbacks::callback(m, key, cb, &idx, None, &names, &mut self.tally);
            kinds.insert(key, (row.node.clone(), row.kind));
            if row.kind == "unknown" {
                self.unknown.insert((key.0, key.1, key.2));
            }
            let timer = row.timer_period_ns;
            let keep = self.reservoirs;
            let t = self.callbacks.entry((key.0, key.1, key.2, row.symbol.clone())).or_insert_with(|| CallbackTotal {
                row: row.clone(),
                unfinished: 0,
                intra: 0,
                durations: Sample::with_reservoir(keep),
                periods: Sample::new(),
                jitter: timer.map(|_| Sample::new()),
                last_start: None,
            });
            // A run still running where the slice's reading ends is carried to the slice where
            // it ends (unfinished if none does).
            for r in idx.iter().filter(|r| r.end().is_none()) {
                let node = row.node.clone();
                self.carried.push(Carried {
                    key: (key.0, key.1, key.2, row.symbol.clone()),
                    vtid: r.vtid as i64,
                    start: r.start,
                    node,
                });
            }
            if row.unfinished > 0 {
                if let Some(n) = self.tally.open_runs.get_mut(&(key.0, key.1)) {
                    *n -= row.unfinished;
                    if *n == 0 {
                        self.tally.open_runs.remove(&(key.0, key.1));
                    }
                }
            }
            t.intra += row.intra_process;
            // A run that ends in a later slice which does not read its start: that slice sees
            // its end alone.
            for r in &idx {
                if let Some(end) = r.end().filter(|&e| e >= to && r.start < self.grid.read_from(e)) {
                    self.ended_ahead.push((key, end));
                }
            }
            idx.iter().filter_map(|r| r.duration()).for_each(|d| t.durations.add(d));
            let mut starts: Vec<i64> = idx.iter().map(|r| r.start).collect();
            starts.sort_unstable();
            for &s in &starts {
                if let Some(prev) = t.last_start {
                    t.periods.add(s - prev);
                    if let (Some(j), Some(tp)) = (&mut t.jitter, timer) {
                        j.add(s - prev - tp);
                    }
                }
                t.last_start = Some(s);
            }
            t.row = CallbackReport { ..row };
        }
        // Runs carried from earlier slices that end in this one: seen whole (the start was read
        // again in the margin), or as an end alone.
        for r in a.runs.iter().map(|r| r.run) {
            let Some(end) = r.end().filter(|&e| r.start < from && inside(e) && e > self.grid.read_until(r.start))
            else {
                continue;
            };
            let (t, vpid, cb) = a.slots[r.slot()];
            let found = self
                .carried
                .iter()
                .position(|c| (c.key.0, c.key.1, c.key.2, c.vtid, c.start) == (t, vpid, cb, r.vtid as i64, r.start));
            self.complete(found, end);
        }
        for (k, n) in linked.unmatched_ends {
            *self.unmatched_ends.entry(k).or_default() += n;
        }
        for &(t, vpid, vtid, cb, end) in &linked.ends_alone {
            // The end of a run its own slice counted whole; else of a run carried: the innermost
            // of the callback on the thread, or the oldest in the process (as the pass closes
            // them).
            let ahead = self.ended_ahead.iter().position(|&x| x == ((t, vpid, cb), end));
            let of = |c: &Carried| (c.key.0, c.key.1, c.key.2) == (t, vpid, cb);
            let found =
                self.carried.iter().rposition(|c| of(c) && c.vtid == vtid).or_else(|| self.carried.iter().position(of));
            let known = match ahead {
                Some(i) => {
                    self.ended_ahead.swap_remove(i);
                    true
                }
                None => self.complete(found, end),
            };
            if known {
                if let Some(n) = self.unmatched_ends.get_mut(&(t, vpid)) {
                    *n -= 1;
                    if *n == 0 {
                        self.unmatched_ends.remove(&(t, vpid));
                    }
                }
            }
        }
        // Topics: their counts as the link counted them in the slice; the messages taken in it
        // (where their takes are counted).
        // Grouped by topic, each topic's in their order: its samples are given its messages'
        // values in that order, and its name is looked up once, not per message.
        // (By the address of the topic's name, which the slice's flows of a topic share: an
        // address hashes faster than the name.)
        let mut by_topic: HashMap<usize, (&str, Vec<u32>)> = HashMap::default();
        let mut flows_matched = 0u64;
        for (i, f) in a.flows.iter().enumerate() {
            if inside(a.takes[f.take as usize].take.ts) {
                let at = Arc::as_ptr(&f.topic) as *const u8 as usize;
                by_topic.entry(at).or_insert_with(|| (&*f.topic, Vec::new())).1.push(i as u32);
                flows_matched += 1;
            }
        }
        let slice_topics = topics::section(m, &View { flows: &[], ..*a }, &linked.topics, &names);
        let keep = self.reservoirs;
        for row in slice_topics {
            let t = self.topics.entry(row.name.clone()).or_insert_with(|| TopicTotal {
                row: row.clone(),
                publishes: 0,
                takes: 0,
                matched: 0,
                unmatched: 0,
                reasons: BTreeMap::new(),
                dropped: None,
                by: [0; 3],
                pub_to_take: Sample::new(),
                pub_to_callback: Sample::with_reservoir(keep),
                take_to_callback: Sample::new(),
                pairs: BTreeMap::new(),
            });
            t.publishes += row.publishes;
            t.takes += row.takes;
            t.unmatched += row.unmatched;
            for r in &row.unmatched_reasons {
                *t.reasons.entry(r.reason).or_default() += r.count;
            }
            if let Some(d) = row.dropped {
                t.dropped = Some(t.dropped.unwrap_or(0) + d);
            }
            t.row = row;
        }
        for (topic, idx) in by_topic.into_values() {
            let Some(t) = self.topics.get_mut(topic) else { continue };
            // The topic's messages by publisher → subscriber pair, each pair's in their order.
            let mut pairs: Vec<(PairIds, Vec<u32>)> = Vec::new();
            let mut index: HashMap<PairIds, usize> = HashMap::default();
            let mut last: Option<(PairIds, usize)> = None;
            for i in idx {
                let f = &a.flows[i as usize];
                let p = &a.pubs[f.publication as usize].publication;
                let LinkedTake { take, subscription } = &a.takes[f.take as usize];
                t.matched += 1;
                t.by[match f.by {
                    MatchBy::SourceTimestamp => 0,
                    MatchBy::PublishWindow => 1,
                    MatchBy::IntraProcess => 2,
                }] += 1;
                // (Else made of its pairs' at the report: each message is one pair's.)
                if keep {
                    t.pub_to_take.add(f.pub_to_take_ns);
                    if let Some(x) = f.pub_to_callback_ns {
                        t.pub_to_callback.add(x);
                    }
                }
                if let Some(r) = take.run {
                    t.take_to_callback.add(a.runs[r as usize].run.start - take.ts);
                }
                let sub_node = subscription.and_then(|s| m.subscriptions.get(s).node);
                let key = (p.trace, p.vpid, pub_node(m, p), take.trace, take.vpid, sub_node);
                // (A topic's messages come in runs of one pair: its list is looked up when the
                // pair changes.)
                match last.filter(|l| l.0 == key) {
                    Some((_, at)) => pairs[at].1.push(i),
                    None => {
                        let at = *index.entry(key).or_insert_with(|| {
                            pairs.push((key, Vec::new()));
                            pairs.len() - 1
                        });
                        pairs[at].1.push(i);
                        last = Some((key, at));
                    }
                }
            }
            // Named once per pair; pairs of one name (two nodes of one name in a process) are
            // one, their messages in their order.
            let mut named: Vec<(PairKey, Vec<u32>)> = pairs
                .into_iter()
                .map(|((pt, pv, pn, st, sv, sn), v)| {
                    ((names.host(pt, pv), pv, names.node(pn), names.host(st, sv), sv, names.node(sn)), v)
                })
                .collect();
            named.sort_by(|x, y| x.0.cmp(&y.0));
            let mut merged: Vec<(PairKey, Vec<u32>)> = Vec::with_capacity(named.len());
            for (k, v) in named {
                match merged.last_mut() {
                    Some((last, list)) if *last == k => {
                        list.extend(v);
                        list.sort_unstable();
                    }
                    _ => merged.push((k, v)),
                }
            }
            for (key, v) in merged {
                let pair = t.pairs.entry(key).or_insert_with(|| PairTotal {
                    pub_to_callback: Sample::with_reservoir(keep),
                    ..PairTotal::default()
                });
                for i in v {
                    let f = &a.flows[i as usize];
                    pair.count += 1;
                    pair.pub_to_take.add(f.pub_to_take_ns);
                    if let Some(x) = f.pub_to_callback_ns {
                        pair.pub_to_callback.add(x);
                    }
                }
            }
        }
        self.flows_matched += flows_matched;
        self.flows_unmatched += linked.topics.values().map(|t| t.unmatched).sum::<u64>();
        // The pass's counts, of the slice.
        self.events += linked.events;
        self.ros_events += linked.ros_events;
        for p in m.processes.values() {
            let e = self.processes.entry((p.trace, p.vpid)).or_default();
            (e.0, e.1) = (e.0 + p.events, e.1 + p.ros_events);
            *self.kinds.entry((p.trace, p.vpid)).or_default() |= p.kinds;
            self.procs.insert((p.trace, p.vpid), p.clone());
        }
        for (name, n) in linked.unused_events {
            *self.unused.entry(name).or_default() += n;
        }
        if let Some((a, b)) = linked.range {
            self.range = Some(self.range.map_or((a, b), |(x, y)| (x.min(a), y.max(b))));
        }
        self.transitions.extend(nodes::lifecycle_transitions(m).into_iter().filter(|t| inside(t.ts)));
        // Read errors and lost events are found again by each slice that reads their packets.
        for e in linked.errors {
            if !self.errors.contains(&e) {
                self.errors.push(e);
            }
        }
        for w in linked.warnings {
            if !self.warnings.contains(&w) {
                self.warnings.push(w);
            }
        }
        self.discarded = linked.discarded;
        Added { callbacks: kinds, ended: std::mem::take(&mut self.ended) }
    }

    /// The report of the totals, with the sections of the model `m` (the last slice's, which
    /// declares every object of the recording; its processes' counts become the totals').
    pub(crate) fn report(mut self, m: &mut Model) -> Report {
        for c in std::mem::take(&mut self.carried) {
            if let Some(t) = self.callbacks.get_mut(&c.key) {
                t.unfinished += 1;
            }
            *self.tally.open_runs.entry((c.key.0, c.key.1)).or_default() += 1;
        }
        // A process the last slice's model does not have (its events all came before, and it
        // declared nothing) is the report's too.
        for (k, p) in std::mem::take(&mut self.procs) {
            m.processes.entry(k).or_insert(p);
        }
        for p in m.processes.values_mut() {
            let (events, ros_events) = self.processes.get(&(p.trace, p.vpid)).copied().unwrap_or_default();
            (p.events, p.ros_events) = (events, ros_events);
            p.kinds = self.kinds.get(&(p.trace, p.vpid)).copied().unwrap_or(p.kinds);
        }
        let m = &*m;
        let names = Names::new(m);
        let Totals {
            grid: _,
            carried: _,
            ended: _,
            ended_ahead: _,
            procs: _,
            kinds: _,
            callbacks,
            tally,
            unknown,
            topics,
            events,
            ros_events,
            processes,
            unmatched_ends,
            unused,
            flows_matched,
            flows_unmatched,
            range,
            transitions,
            errors,
            mut warnings,
            discarded,
            reservoirs,
            executor,
            services,
        } = self;
        let total_cb: i64 = callbacks.values().map(|c| c.durations.stats().sum as i64).sum::<i64>().max(1);
        let mut rows: Vec<CallbackReport> = callbacks
            .into_values()
            .map(|c| {
                let durations = c.durations.stats();
                let total = durations.sum as i64;
                CallbackReport {
                    count: durations.count,
                    unfinished: c.unfinished,
                    intra_process: c.intra,
                    period_ns: c.periods.stats(),
                    jitter_ns: c.jitter.map(|j| j.stats()),
                    total_ns: total,
                    share: total as f64 / total_cb as f64,
                    duration_ns: durations,
                    ..c.row
                }
            })
            .collect();
        rows.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.vpid.cmp(&b.vpid)).then(a.address.cmp(&b.address)));
        for c in rows.iter().filter(|c| c.unfinished > 0) {
            warnings.push(format!(
                "callback {:#x} of process {} ({}) started {} time(s) without ending before the trace did",
                c.address, c.vpid, c.symbol, c.unfinished
            ));
        }
        let mut unknown_callbacks = BTreeMap::new();
        for (t, p, _) in unknown {
            *unknown_callbacks.entry((t, p)).or_default() += 1;
        }
        let tally = Tally { unknown_callbacks, ..tally };
        let duration = range.map(|(a, b)| (b - a).max(1)).unwrap_or(1);
        let shares = threads::time_shares(&tally, total_cb, duration, &names);
        let unused: Vec<(String, u64)> = unused.into_iter().collect();
        let notes = crate::notes::notes(
            m,
            &crate::notes::Inputs {
                unused_events: &unused,
                unknown_callbacks: &tally.unknown_callbacks,
                open_runs: &tally.open_runs,
                unmatched_ends: &unmatched_ends,
                service_runs: &tally.service_runs,
            },
        );
        let unmatched_total: u64 = unmatched_ends.values().sum();
        if unmatched_total > 0 {
            warnings.push(format!(
                "{unmatched_total} callback_end event(s) without a callback_start (the trace started mid-callback)"
            ));
        }
        if flows_unmatched > 0 {
            warnings.push(format!("{flows_unmatched} taken message(s) could not be matched to their publication"));
        }
        let topics: Vec<TopicReport> = topics.into_values().map(|t| topic(t, reservoirs)).collect();
        warnings.extend(topics::negative_latencies(&topics));
        let services = services.report();
        warnings.extend(super::services::negative_latencies(&services));
        drop(processes);
        let mut procs: Vec<crate::model::Process> = m.processes.values().cloned().collect();
        procs.sort_by_key(|p| (p.trace, p.vpid));
        let mut lifecycle_transitions = transitions;
        lifecycle_transitions.sort_by(|a, b| a.ts.cmp(&b.ts).then_with(|| a.node.cmp(&b.node)));
        Report {
            events,
            ros_events,
            begin_ns: range.map(|r| r.0),
            end_ns: range.map(|r| r.1),
            notes,
            read_errors: errors,
            processes: procs,
            nodes: nodes::section(m, &names),
            topics,
            callbacks: rows,
            per_process: shares.per_process,
            per_node: shares.per_node,
            per_thread: shares.per_thread,
            executors: nodes::executors(m),
            executor_threads: threads::executor_threads_of(&executor, &names),
            lifecycle_transitions,
            flows_matched,
            flows_unmatched,
            unmatched_callback_ends: unmatched_total,
            discarded_events: discarded,
            warnings,
            services,
            ..Report::default()
        }
    }
}

/// A topic's report of its totals; its publish → take and publish → callback latencies made of
/// its pairs' unless added message by message (with `reservoirs`: see [`Totals::add`]).
fn topic(mut t: TopicTotal, reservoirs: bool) -> TopicReport {
    if !reservoirs {
        for p in t.pairs.values() {
            t.pub_to_take.merge(&p.pub_to_take);
            t.pub_to_callback.merge(&p.pub_to_callback);
        }
    }
    let mut reasons: Vec<ReasonCount> =
        t.reasons.into_iter().map(|(reason, count)| ReasonCount { reason, count }).collect();
    reasons.sort_by(|a, b| b.count.cmp(&a.count).then(a.reason.cmp(b.reason)));
    let pairs = t
        .pairs
        .into_iter()
        .map(|(k, p)| PairReport::of(k, p.count, p.pub_to_take.stats(), p.pub_to_callback.stats()))
        .collect();
    TopicReport {
        publishes: t.publishes,
        takes: t.takes,
        matched: t.matched,
        unmatched: t.unmatched,
        unmatched_reasons: reasons,
        dropped: t.dropped,
        by_source_timestamp: t.by[0],
        by_publish_window: t.by[1],
        intra_process: t.by[2],
        pub_to_take_ns: t.pub_to_take.stats(),
        pub_to_callback_ns: t.pub_to_callback.stats(),
        take_to_callback_ns: t.take_to_callback.stats(),
        pairs,
        ..t.row
    }
}
