//! The collected instances linked: callback runs to their callbacks, takes to their
//! subscriptions, publications to their topics, and takes matched to their publications (the
//! flows).

use crate::clocks::ClockShift;
use crate::collections::{push_small, HashMap, HashSet};
use crate::model::*;
use crate::tables::{Collected, Publication, Run, Take};
use serde::Serialize;
use std::sync::Arc;

/// How a flow's publication and take were matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchBy {
    /// Same topic and DDS source timestamp on both sides.
    SourceTimestamp,
    /// Publisher side has no source timestamp (older tracetools without DDS events): the take's
    /// source timestamp falls inside the one `rmw_publish` call on that topic that contains it.
    PublishWindow,
    /// Intra-process: ring buffer slot or message address.
    IntraProcess,
}

/// A message from its publication to its take (and the callback that handled it).
#[derive(Debug, Clone, Serialize)]
pub struct Flow {
    /// Index in [`crate::Analysis::pubs`].
    pub publication: u32,
    /// Index in [`crate::Analysis::takes`].
    pub take: u32,
    /// Topic (its name shared by the flows of the topic).
    #[serde(serialize_with = "shared_str")]
    pub topic: Arc<str>,
    /// How they were matched.
    pub by: MatchBy,
    /// publish → take (ns).
    pub pub_to_take_ns: i64,
    /// publish → callback start (ns), when the callback run is known.
    pub pub_to_callback_ns: Option<i64>,
}

/// The model's topic names, each held once and shared: by the publications and the flows of a
/// topic, and the tallies, rather than a copy per message (a long trace has far more messages
/// than topics).
struct TopicNames {
    /// By publisher id.
    of_publisher: Vec<Arc<str>>,
    /// By subscription id.
    of_subscription: Vec<Arc<str>>,
    /// Those of the DDS writers, by name.
    of_writers: HashMap<String, Arc<str>>,
}

impl TopicNames {
    fn of<'m>(m: &'m Model) -> TopicNames {
        let mut names: HashMap<&'m str, Arc<str>> = HashMap::default();
        let mut name = |t: &'m str| names.entry(t).or_insert_with(|| Arc::from(t)).clone();
        let of_publisher = m.publishers.items.iter().map(|p| name(&p.topic)).collect();
        let of_subscription = m.subscriptions.items.iter().map(|s| name(&s.topic)).collect();
        let of_writers = m.writer_topics.values().map(|t| (t.clone(), name(t))).collect();
        TopicNames { of_publisher, of_subscription, of_writers }
    }
}

fn shared_str<S: serde::Serializer>(s: &Arc<str>, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(s)
}

fn pub_topic(m: &Model, names: &TopicNames, p: &Publication) -> Option<Arc<str>> {
    if let Some(id) = pub_id(m, p) {
        return Some(names.of_publisher[id as usize].clone());
    }
    if p.writer != 0 {
        return m.writer_topics.get(&(p.trace, p.vpid, p.writer)).map(|t| names.of_writers[t].clone());
    }
    None
}

/// The publisher (id in `m.publishers`) of a publication, by its rcl handle or else its rmw handle.
pub(crate) fn pub_id(m: &Model, p: &Publication) -> Option<u32> {
    if p.publisher != 0 {
        if let Some(id) = m.publishers.at((p.trace, p.vpid, p.publisher), p.ts) {
            return Some(id);
        }
    }
    if p.rmw_publisher != 0 {
        if let Some(id) = m.publishers_by_rmw.at((p.trace, p.vpid, p.rmw_publisher), p.ts) {
            return Some(*m.publishers_by_rmw.get(id));
        }
    }
    None
}

pub(crate) fn pub_node(m: &Model, p: &Publication) -> Option<u32> {
    pub_id(m, p).and_then(|id| m.publishers.get(id).node)
}

/// A callback run with the callback object it is a run of.
#[derive(Debug, Clone, Copy)]
pub struct LinkedRun {
    /// The run.
    pub run: Run,
    /// Its callback object, by id in the model's callbacks (None: no initialization event
    /// declared its callback).
    pub callback: Option<u32>,
}

/// A publication with the name of its topic.
#[derive(Debug, Clone)]
pub struct LinkedPublication {
    /// The publication.
    pub publication: Publication,
    /// Its topic (None: its publisher is unknown).
    pub topic: Option<Arc<str>>,
}

/// A take with the subscription that took it.
#[derive(Debug, Clone)]
pub struct LinkedTake {
    /// The take.
    pub take: Take,
    /// Its subscription, by id in the model's subscriptions (None: neither its rmw handle nor
    /// its callback tells it).
    pub subscription: Option<u32>,
}

/// The linked tables (see [`crate::Analysis`], which holds them).
pub(crate) struct Tables {
    pub(crate) model: Model,
    pub(crate) traces: Vec<(std::path::PathBuf, String)>,
    pub(crate) runs: Vec<LinkedRun>,
    pub(crate) slots: Vec<Key>,
    pub(crate) pubs: Vec<LinkedPublication>,
    pub(crate) takes: Vec<LinkedTake>,
    pub(crate) flows: Vec<Flow>,
}

/// The linked tables of an analysis and its handlers, borrowed: what the report and the path
/// search read (from a [`crate::Analysis`]: `View::from(&analysis)`).
#[derive(Clone, Copy)]
pub struct View<'a> {
    /// The model.
    pub model: &'a Model,
    /// Callback runs, with their callback objects.
    pub runs: &'a [LinkedRun],
    /// Callback handles of the runs.
    pub slots: &'a [Key],
    /// Publications, with their topics.
    pub pubs: &'a [LinkedPublication],
    /// Takes, with their subscriptions.
    pub takes: &'a [LinkedTake],
    /// Matched flows.
    pub flows: &'a [Flow],
    /// The handlers of the pass, with their results.
    pub handlers: &'a crate::handler::Handlers,
}

impl View<'_> {
    /// The first handler of type `H` that ran in the pass, with its results.
    pub fn get<H: crate::Handler>(&self) -> Option<&H> {
        self.handlers.get()
    }
}

/// What the report needs besides the linked tables of [`link`]: the pass's counts and the
/// flows' tallies per topic.
pub(crate) struct Linked {
    pub(crate) unmatched_ends: HashMap<(u32, i64), u64>,
    /// See [`Collected::ends_alone`].
    pub(crate) ends_alone: Vec<(u32, i64, i64, u64, i64)>,
    pub(crate) events: u64,
    pub(crate) ros_events: u64,
    pub(crate) range: Option<(i64, i64)>,
    /// Each trace's first and last event time (see [`Collected`]).
    pub(crate) ranges: Vec<(i64, i64)>,
    pub(crate) errors: Vec<crate::tables::ReadError>,
    pub(crate) discarded: u64,
    pub(crate) window: Option<(i64, i64)>,
    pub(crate) unused_events: Vec<(String, u64)>,
    pub(crate) warnings: Vec<String>,
    pub(crate) topics: TopicTally,
}

/// Per topic (by its shared name): publications, takes, unmatched takes (with their reasons)
/// and drops.
pub(crate) type TopicTally = HashMap<Arc<str>, TopicCount>;

/// One topic's counts of [`TopicTally`].
#[derive(Default)]
pub(crate) struct TopicCount {
    pub(crate) pubs: u64,
    pub(crate) takes: u64,
    pub(crate) unmatched: u64,
    /// Each reason with its count (a few: a list, not a map of its own each).
    pub(crate) reasons: Vec<(&'static str, u64)>,
    /// See [`crate::TopicReport::dropped`].
    pub(crate) dropped: Option<u64>,
}

/// The collected instances linked: callback runs to their callbacks, takes to their
/// subscriptions, publications to their topics, and takes matched to their publications (the
/// flows). The report is made of these tables and the rest. With `threads` > 1, the runs and the publications are linked at the same time.
pub(crate) fn link(c: Collected, threads: usize) -> (Tables, Linked) {
    let Collected {
        model: m,
        runs,
        slots,
        pubs,
        takes,
        unmatched_ends,
        events,
        ros_events,
        range,
        ranges,
        errors,
        losses,
        discarded,
        window,
        unused_events,
        traces,
        counted,
        ends_alone,
        ..
    } = c;
    let mut warnings: Vec<String> = errors.iter().map(|e| format!("read error: {e}")).collect();
    warnings.extend(losses.iter().cloned());
    let names = TopicNames::of(&m);
    // A slice's tables are given back whole before long, and their blocks reused by the next
    // slice's: they are not given back as they are linked.
    let give_back = counted.is_none();
    let (runs, pubs) = link_runs_and_pubs(&m, &names, &slots, runs, pubs, threads, give_back);
    let takes = link_takes(&m, &runs, takes, give_back);
    let (flows, topics) = match_flows(&m, &names, &runs, &pubs, &takes, counted);
    let linked = Linked {
        unmatched_ends,
        ends_alone,
        events,
        ros_events,
        range,
        ranges,
        errors,
        discarded,
        window,
        unused_events,
        warnings,
        topics,
    };
    (Tables { model: m, traces, runs, slots, pubs, takes, flows }, linked)
}

impl Tables {
    /// The tables as a [`View`], with `handlers`.
    pub(crate) fn view<'a>(&'a self, handlers: &'a crate::handler::Handlers) -> View<'a> {
        let t = self;
        View {
            model: &t.model,
            runs: &t.runs,
            slots: &t.slots,
            pubs: &t.pubs,
            takes: &t.takes,
            flows: &t.flows,
            handlers,
        }
    }

    /// Every time of the tables moved to other clocks ([`ClockShift`]): the model's, the runs',
    /// the publications' and the takes' (but the DDS source timestamps, which are payload: the
    /// publishing host's clock as recorded, which the takes were matched by), and the flows'
    /// latencies made again of the moved times. Nothing the tables were linked by changes: each
    /// correction keeps its trace's order of times, and a message is matched by its source
    /// timestamp, not by when it was taken.
    pub(crate) fn shift(&mut self, by: &ClockShift) {
        self.model.shift(by);
        let slots = &self.slots;
        for r in &mut self.runs {
            let t = slots[r.run.slot()].0;
            if by.moves(t) {
                r.run.shift(|ts| by.time(t, ts));
            }
        }
        for p in &mut self.pubs {
            let t = p.publication.trace;
            if by.moves(t) {
                p.publication.shift(|ts| by.time(t, ts));
            }
        }
        for x in &mut self.takes {
            x.take.ts = by.time(x.take.trace, x.take.ts);
        }
        let (pubs, takes, runs) = (&self.pubs, &self.takes, &self.runs);
        for f in &mut self.flows {
            let pt = pubs[f.publication as usize].publication.ts;
            let t = &takes[f.take as usize].take;
            f.pub_to_take_ns = t.ts - pt;
            f.pub_to_callback_ns = t.run.map(|r| runs[r as usize].run.start - pt);
        }
    }
}

impl Linked {
    /// The first and last event time moved to other clocks, and the drops counted again on
    /// them (a drop is a publication between a subscription's first and last takes that it did
    /// not take: times of two hosts compared), with `t`, the tables moved ([`Tables::shift`]).
    pub(crate) fn shift(&mut self, t: &Tables, by: &ClockShift) {
        self.range = crate::tables::range_of(&self.ranges, |t, ts| by.time(t, ts));
        // The publications takes can be matched to, per topic ([`Matchable`]'s).
        let mut lists: HashMap<&str, Vec<u32>> = HashMap::default();
        for (i, LinkedPublication { publication: p, topic }) in t.pubs.iter().enumerate() {
            let Some(topic) = topic else { continue };
            let matchable = match p.source_ts() {
                Some(s) if s != 0 => true,
                _ => p.ts_rmw().is_some() && p.ts_after().is_some(),
            };
            if !p.intra && matchable {
                lists.entry(&**topic).or_default().push(i as u32);
            }
        }
        let lists: HashMap<&str, &[u32]> = lists.iter().map(|(k, v)| (*k, v.as_slice())).collect();
        count_dropped(&mut self.topics, dropped(&t.pubs, &t.takes, &t.flows, &lists, &t.model, None));
    }
}

/// Callback runs → callback objects; publications → topics (on two threads, when there are).
#[allow(clippy::type_complexity)]
fn link_runs_and_pubs(
    m: &Model,
    names: &TopicNames,
    slots: &[Key],
    runs: Vec<Run>,
    pubs: Vec<Publication>,
    threads: usize,
    give_back: bool,
) -> (Vec<LinkedRun>, Vec<LinkedPublication>) {
    let versions: Vec<Option<&crate::model::Versions>> = slots.iter().map(|k| m.callbacks.versions(*k)).collect();
    let link_runs = |runs: Vec<Run>| -> Vec<LinkedRun> {
        map_from_end(runs, give_back, |r| {
            let callback = versions[r.slot()].and_then(|v| v.at(r.start));
            LinkedRun { run: r, callback }
        })
    };
    let link_pubs = |pubs: Vec<Publication>| -> Vec<LinkedPublication> {
        map_from_end(pubs, give_back, |p| {
            let topic = pub_topic(m, names, &p);
            LinkedPublication { publication: p, topic }
        })
    };
    if threads > 1 {
        std::thread::scope(|s| {
            let h = rostrace_threads::spawn_off(s, 1, || link_pubs(pubs));
            rostrace_threads::let_started_move();
            let runs = link_runs(runs);
            (runs, h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
        })
    } else {
        (link_runs(runs), link_pubs(pubs))
    }
}

/// Takes → subscriptions: by the rmw handle, or else by the callback that took the message.
fn link_takes(m: &Model, runs: &[LinkedRun], takes: Vec<Take>, give_back: bool) -> Vec<LinkedTake> {
    map_from_end(takes, give_back, |t| {
        let sub = if t.rmw_subscription != 0 {
            m.subscriptions_by_rmw
                .at((t.trace, t.vpid, t.rmw_subscription), t.ts)
                .map(|i| *m.subscriptions_by_rmw.get(i))
        } else {
            None
        };
        let sub = sub.or_else(|| {
            let cb = if t.callback != 0 {
                m.callbacks.at((t.trace, t.vpid, t.callback), t.ts)
            } else {
                t.run.and_then(|r| runs[r as usize].callback)
            };
            match cb.and_then(|c| m.callbacks.get(c).owner) {
                Some(Owner::Subscription(s)) => Some(s),
                _ => None,
            }
        });
        LinkedTake { take: t, subscription: sub }
    })
}

/// `v` mapped by `f`, in order. With `give_back`, without holding both whole: the input is taken
/// from its end a block at a time (`f` called from the last item to the first) and each block's
/// room given back, so that a table of a long trace is not held twice while it is linked.
fn map_from_end<A, B>(mut v: Vec<A>, give_back: bool, mut f: impl FnMut(A) -> B) -> Vec<B> {
    const BLOCK: usize = 1 << 16;
    if !give_back {
        return v.into_iter().map(f).collect();
    }
    let mut out = Vec::with_capacity(v.len());
    while !v.is_empty() {
        let from = v.len().saturating_sub(BLOCK);
        out.extend(v.drain(from..).rev().map(&mut f));
        v.shrink_to_fit();
    }
    out.reverse();
    out
}

/// The publications takes can be matched to, per topic: by source timestamp, by publish window,
/// the matchable ones and the range of their source times. A topic is known by its shared name's
/// address (one per name, see [`TopicNames`]): a million publications hash an address each, not
/// their topic's name three times.
#[derive(Default)]
struct Matchable<'a> {
    /// Each topic's index below, by the address of its shared name.
    index: HashMap<usize, u32>,
    /// Per topic: its name, its publications by publish window (sorted), the matchable ones,
    /// and the range of their source times.
    names: Vec<&'a str>,
    windows: Vec<Vec<(i64, i64, u32)>>,
    matchable: Vec<Vec<u32>>,
    source_range: Vec<Option<(i64, i64)>>,
    /// Per topic: (source timestamp, publication), sorted, the first publication of each
    /// source timestamp only. (A sorted list, not a map: publications come nearly in the order
    /// of their source times, and so do the takes looked up in it.)
    by_source: Vec<Vec<(i64, u32)>>,
    /// Per topic: where in `by_source` the last take was looked up, where the next one's search
    /// starts.
    cursor: Vec<std::cell::Cell<usize>>,
}

/// The first index of `v` (sorted by source time) whose source time is not below `key`, as
/// [`slice::partition_point`] finds it, searched from `hint` outwards in steps that double: a
/// step or two, not a search of the whole list, when the keys come nearly in order.
fn partition_from(v: &[(i64, u32)], hint: usize, key: i64) -> usize {
    let below = |x: &(i64, u32)| x.0 < key;
    let hint = hint.min(v.len());
    if hint < v.len() && below(&v[hint]) {
        // Everything before `lo` is below the key.
        let (mut lo, mut bound, mut step) = (hint + 1, hint + 1, 1);
        while bound < v.len() && below(&v[bound]) {
            lo = bound + 1;
            bound += step;
            step *= 2;
        }
        let hi = bound.min(v.len());
        lo + v[lo..hi].partition_point(below)
    } else {
        // Everything from `hi` on is not below the key.
        let (mut hi, mut bound, mut step) = (hint, hint, 1);
        while bound > 0 && !below(&v[bound - 1]) {
            hi = bound - 1;
            bound = bound.saturating_sub(step);
            step *= 2;
        }
        bound + v[bound..hi].partition_point(below)
    }
}

/// The address that stands for a shared topic name.
fn address(topic: &Arc<str>) -> usize {
    Arc::as_ptr(topic) as *const u8 as usize
}

impl<'a> Matchable<'a> {
    fn of(pubs: &'a [LinkedPublication]) -> Matchable<'a> {
        let mut x = Matchable::default();
        for (i, LinkedPublication { publication: p, topic }) in pubs.iter().enumerate() {
            let Some(topic) = topic else { continue };
            if p.intra {
                continue;
            }
            let k = *x.index.entry(address(topic)).or_insert_with(|| {
                x.names.push(&**topic);
                x.windows.push(Vec::new());
                x.matchable.push(Vec::new());
                x.source_range.push(None);
                x.by_source.push(Vec::new());
                x.cursor.push(Default::default());
                x.names.len() as u32 - 1
            });
            let span = match p.source_ts() {
                Some(s) if s != 0 => {
                    x.by_source[k as usize].push((s, i as u32));
                    Some((s, s))
                }
                _ => match (p.ts_rmw(), p.ts_after()) {
                    (Some(a), Some(b)) => {
                        x.windows[k as usize].push((a, b, i as u32));
                        Some((a, b))
                    }
                    _ => None,
                },
            };
            if let Some((a, b)) = span {
                x.matchable[k as usize].push(i as u32);
                let r = x.source_range[k as usize].get_or_insert((a, b));
                r.0 = r.0.min(a);
                r.1 = r.1.max(b);
            }
        }
        for w in &mut x.windows {
            w.sort_unstable();
        }
        for v in &mut x.by_source {
            // (Stable: of equal source times, the first publication stays first, and is kept.)
            v.sort_by_key(|&(s, _)| s);
            v.dedup_by_key(|&mut (s, _)| s);
        }
        x
    }

    /// The index of `topic` (none when no publication of it can be matched).
    fn topic(&self, topic: &Arc<str>) -> Option<u32> {
        self.index.get(&address(topic)).copied()
    }

    /// The publication a take of `topic` took, and how it was found.
    fn find(&self, t: &Take, topic: &Arc<str>, pubs: &[LinkedPublication]) -> Option<(u32, MatchBy)> {
        if t.intra {
            // Same message object, and it was published on this subscription's topic.
            t.intra_pub
                .filter(|p| pubs[*p as usize].topic.as_deref() == Some(&**topic))
                .map(|p| (p, MatchBy::IntraProcess))
        } else if t.source_ts != 0 {
            let k = self.topic(topic)?;
            let v = &self.by_source[k as usize];
            let cursor = &self.cursor[k as usize];
            let at = partition_from(v, cursor.get(), t.source_ts);
            cursor.set(at);
            let same = v.get(at).filter(|&&(s, _)| s == t.source_ts);
            same.map(|&(_, p)| (p, MatchBy::SourceTimestamp)).or_else(|| {
                let w = &self.windows[k as usize];
                let i = w.partition_point(|(a, _, _)| *a <= t.source_ts);
                let (a, b, p) = *w.get(i.checked_sub(1)?)?;
                (a <= t.source_ts && t.source_ts <= b).then_some((p, MatchBy::PublishWindow))
            })
        } else {
            None
        }
    }

    /// The matchable publications of each topic that has some, by name.
    fn matchable_by_name(&self) -> HashMap<&'a str, &[u32]> {
        self.names.iter().zip(&self.matchable).filter(|(_, v)| !v.is_empty()).map(|(n, v)| (*n, v.as_slice())).collect()
    }
}

/// Takes matched to their publications (the flows), and the tallies per topic.
fn match_flows(
    m: &Model,
    names: &TopicNames,
    runs: &[LinkedRun],
    pubs: &[LinkedPublication],
    takes: &[LinkedTake],
    counted: Option<(i64, i64)>,
) -> (Vec<Flow>, TopicTally) {
    // Every take is matched; those of a slice's time are counted ([`Collected::counted`]).
    let counts = |ts: i64| counted.is_none_or(|(a, b)| a <= ts && ts < b);
    let x = Matchable::of(pubs);
    let published_topics: HashSet<&str> = m.publishers.items.iter().map(|p| p.topic.as_str()).collect();
    let mut flows = Vec::new();
    // Counted per topic, known by its shared name's address, then by name: a name is hashed and
    // cloned once per topic, not per publication or take.
    let mut by_topic: HashMap<usize, (&Arc<str>, TopicCount)> = HashMap::default();
    for topic in pubs.iter().filter(|p| counts(p.publication.ts)).filter_map(|p| p.topic.as_ref()) {
        by_topic.entry(address(topic)).or_insert_with(|| (topic, TopicCount::default())).1.pubs += 1;
    }
    for (ti, LinkedTake { take: t, subscription: sub }) in takes.iter().enumerate() {
        if !t.taken {
            continue;
        }
        let Some(topic) = sub.map(|s| &names.of_subscription[s as usize]) else { continue };
        let found = x.find(t, topic, pubs);
        if let Some((p, by)) = found {
            let pt = pubs[p as usize].publication.ts;
            flows.push(Flow {
                publication: p,
                take: ti as u32,
                topic: topic.clone(),
                by,
                pub_to_take_ns: t.ts - pt,
                pub_to_callback_ns: t.run.map(|r| runs[r as usize].run.start - pt),
            });
        }
        if !counts(t.ts) {
            continue;
        }
        let (_, count) = by_topic.entry(address(topic)).or_insert_with(|| (topic, TopicCount::default()));
        count.takes += 1;
        if found.is_none() {
            let reason = unmatched_reason(
                t,
                count.pubs,
                published_topics.contains(&**topic),
                x.topic(topic).and_then(|k| x.source_range[k as usize]),
            );
            match count.reasons.iter_mut().find(|r| r.0 == reason) {
                Some(r) => r.1 += 1,
                None => push_small(&mut count.reasons, (reason, 1)),
            }
            count.unmatched += 1;
        }
    }
    let mut tally = TopicTally::default();
    for (topic, c) in by_topic.into_values() {
        let t = tally.entry(topic.clone()).or_default();
        t.pubs += c.pubs;
        t.takes += c.takes;
        t.unmatched += c.unmatched;
        for (reason, n) in c.reasons {
            match t.reasons.iter_mut().find(|r| r.0 == reason) {
                Some(r) => r.1 += n,
                None => push_small(&mut t.reasons, (reason, n)),
            }
        }
    }
    // Grown by doubling: the table is kept to the end, its spare room need not be.
    flows.shrink_to_fit();
    count_dropped(&mut tally, dropped(pubs, takes, &flows, &x.matchable_by_name(), m, counted));
    (flows, tally)
}

/// Each topic's drops (see [`dropped`]) into the tally.
fn count_dropped(tally: &mut TopicTally, drops: HashMap<&str, u64>) {
    for (name, n) in drops {
        match tally.get_mut(name) {
            Some(c) => c.dropped = Some(n),
            None => {
                tally.insert(name.into(), TopicCount { dropped: Some(n), ..TopicCount::default() });
            }
        }
    }
}

/// Why a take of a topic found no publication: `published` publications of the topic are in
/// the trace, the topic has a traced publisher (`has_publisher`), and the matchable ones span
/// `range` (source timestamps, or publish windows).
fn unmatched_reason(t: &Take, published: u64, has_publisher: bool, range: Option<(i64, i64)>) -> &'static str {
    if t.intra {
        return "intra-process message whose publication is not in the trace";
    }
    if t.source_ts == 0 {
        return "the take has no source timestamp";
    }
    if published == 0 {
        return if has_publisher {
            "the traced publishers of the topic recorded no publication"
        } else {
            "publisher not traced (its process is not in the trace: a rosbag2 player, a bridge, another host)"
        };
    }
    match range {
        None => "the publishers' events carry no source timestamp (no rmw_publish or DDS write events)",
        Some((a, _)) if t.source_ts < a => "published before the trace (or window) began",
        Some((_, b)) if t.source_ts > b => {
            "published after the last traced publication of the topic (trace end, lost events)"
        }
        Some(_) => "no traced publication has its source timestamp (an untraced publisher, or lost events)",
    }
}

/// Messages dropped per topic (see [`crate::TopicReport::dropped`]).
fn dropped<'a>(
    pubs: &[LinkedPublication],
    takes: &[LinkedTake],
    flows: &[Flow],
    matchable: &HashMap<&'a str, &[u32]>,
    m: &Model,
    counted: Option<(i64, i64)>,
) -> HashMap<&'a str, u64> {
    // Per subscription: the publications it took, the first one's time and its last take.
    struct Acc {
        /// (Sorted once all are in: the flows come nearly in the order of their publications.)
        took: Vec<u32>,
        first_pub: i64,
        last_take: i64,
    }
    let mut acc: HashMap<u32, Acc> = HashMap::default();
    for f in flows {
        if f.by == MatchBy::IntraProcess {
            continue;
        }
        let LinkedTake { take: t, subscription: Some(sub) } = &takes[f.take as usize] else { continue };
        let pt = pubs[f.publication as usize].publication.ts;
        let a = acc.entry(*sub).or_insert(Acc { took: Vec::new(), first_pub: pt, last_take: t.ts });
        a.took.push(f.publication);
        a.first_pub = a.first_pub.min(pt);
        a.last_take = a.last_take.max(t.ts);
    }
    let mut out: HashMap<&str, u64> = HashMap::default();
    let mut subs: Vec<(&u32, &mut Acc)> = acc.iter_mut().collect();
    subs.sort_by_key(|(s, _)| **s);
    for (sub, a) in subs {
        let topic = m.subscriptions.get(*sub).topic.as_str();
        let Some((name, list)) = matchable.get_key_value(topic) else { continue };
        a.took.sort_unstable();
        // (A topic's matchable publications are in their order: the ones taken are passed
        // alongside.)
        let mut took = a.took.iter().peekable();
        let n = list
            .iter()
            .filter(|&&p| {
                while took.next_if(|&&q| q < p).is_some() {}
                let ts = pubs[p as usize].publication.ts;
                a.first_pub <= ts
                    && ts <= a.last_take
                    && took.peek() != Some(&&p)
                    && counted.is_none_or(|(from, to)| from <= ts && ts < to)
            })
            .count() as u64;
        *out.entry(name).or_default() += n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::partition_from;

    /// From any start, the search finds what a search of the whole list finds: in lists with
    /// runs of equal keys, for keys in them, between them and beyond both ends.
    #[test]
    fn a_search_from_a_start_finds_what_a_whole_search_finds() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for len in [0usize, 1, 2, 3, 7, 64, 1000] {
            let mut v: Vec<(i64, u32)> = (0..len).map(|i| ((next() % 300) as i64 * 2, i as u32)).collect();
            v.sort_by_key(|x| x.0);
            for _ in 0..500 {
                let key = (next() % 620) as i64 - 10;
                let hint = (next() % (len as u64 + 3)) as usize;
                let want = v.partition_point(|x| x.0 < key);
                assert_eq!(partition_from(&v, hint, key), want, "len {len}, key {key}, from {hint}");
            }
        }
    }
}
