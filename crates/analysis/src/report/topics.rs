//! The topics section: each topic's publishers and subscribers, messages matched and not (with
//! why), drops, and latencies, also per publisher → subscription pair.

use super::names::{sorted_unique, Names};
use crate::collections::HashMap;
use crate::link::{pub_node, Flow, MatchBy, TopicCount, TopicTally};
use crate::link::{LinkedTake, View};
use crate::model::Model;
use crate::stats::Stats;
use serde::Serialize;
use std::sync::Arc;

/// A reason and how many times it applied.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ReasonCount {
    /// The reason.
    pub reason: &'static str,
    /// How many.
    pub count: u64,
}

/// Latency statistics of one publisher → subscription pair.
#[derive(Debug, Clone, Serialize)]
pub struct PairReport {
    /// Publishing node.
    pub publisher_node: Arc<str>,
    /// Publisher process.
    pub publisher_vpid: i64,
    /// Publisher's host ([`crate::Process::host`]).
    pub publisher_host: Arc<str>,
    /// Subscribing node.
    pub subscription_node: Arc<str>,
    /// Subscriber process.
    pub subscription_vpid: i64,
    /// Subscriber's host.
    pub subscription_host: Arc<str>,
    /// Matched messages.
    pub count: u64,
    /// publish → take.
    pub pub_to_take_ns: Stats,
    /// publish → callback start.
    pub pub_to_callback_ns: Stats,
}

/// One topic's results.
#[derive(Debug, Clone, Serialize)]
pub struct TopicReport {
    /// Name.
    pub name: Arc<str>,
    /// Publishing nodes.
    pub publishers: Vec<Arc<str>>,
    /// Subscribing nodes.
    pub subscribers: Vec<Arc<str>>,
    /// Publications seen.
    pub publishes: u64,
    /// Takes that took a message.
    pub takes: u64,
    /// Takes matched to their publication.
    pub matched: u64,
    /// Takes that could not be matched (counted, never guessed).
    pub unmatched: u64,
    /// Why they could not be matched, with counts (most frequent first).
    pub unmatched_reasons: Vec<ReasonCount>,
    /// Messages dropped: publications of this topic (by a traced publisher, identifiable by
    /// source timestamp or publish window, not intra-process) that a subscription of the topic
    /// never took although they were published between the first message it took and its
    /// last take; summed over the subscriptions that took messages (by `rmw_take` or CARET's
    /// dispatch). `None` when no subscription of the topic has a matched take, so that drops
    /// cannot be known.
    pub dropped: Option<u64>,
    /// Matched by source timestamp.
    pub by_source_timestamp: u64,
    /// Matched by publish window.
    pub by_publish_window: u64,
    /// Matched intra-process.
    pub intra_process: u64,
    /// publish → take.
    pub pub_to_take_ns: Stats,
    /// publish → callback start.
    pub pub_to_callback_ns: Stats,
    /// take → callback start.
    pub take_to_callback_ns: Stats,
    /// Per publisher/subscription pair.
    pub pairs: Vec<PairReport>,
}

/// Every topic a publisher or subscription of the model `m` names, by name, with `a`'s flows
/// (`a`'s model is `m`).
pub(super) fn section<'m>(m: &'m Model, a: &View<'_>, tally: &TopicTally, names: &Names<'m>) -> Vec<TopicReport> {
    // The publishers and subscriptions (whether it publishes, its node), and the flows, each
    // sorted by topic and walked topic by topic: lists, rather than a map per topic of each
    // (a system of many nodes has about as many topics as nodes).
    let mut ends: Vec<(&str, bool, Option<u32>)> = m
        .publishers
        .items
        .iter()
        .map(|e| (e.topic.as_str(), true, e.node))
        .chain(m.subscriptions.items.iter().map(|e| (e.topic.as_str(), false, e.node)))
        .collect();
    ends.sort_unstable_by(|x, y| x.0.cmp(y.0));
    // By the topic's rank among the names, then the flow's index: a topic's flows stay in order.
    let rank = crate::collections::ranks(a.flows.iter().map(|f| &*f.topic));
    let mut keyed: Vec<(u32, u32)> = a.flows.iter().enumerate().map(|(i, f)| (rank[&*f.topic], i as u32)).collect();
    keyed.sort_unstable();
    drop(rank);
    let flows: Vec<&Flow> = keyed.into_iter().map(|(_, i)| &a.flows[i as usize]).collect();
    let mut topics = Vec::with_capacity(ends.chunk_by(|x, y| x.0 == y.0).count());
    let mut rest = flows.as_slice();
    for of_topic in ends.chunk_by(|x, y| x.0 == y.0) {
        let name = of_topic[0].0;
        let skip = rest.partition_point(|f| &*f.topic < name);
        let n = rest[skip..].partition_point(|f| &*f.topic == name);
        let fl = &rest[skip..skip + n];
        rest = &rest[skip + n..];
        let nodes_of = |publishing: bool| {
            sorted_unique(of_topic.iter().filter(|e| e.1 == publishing).map(|e| names.node(e.2)).collect())
        };
        let count = |by: MatchBy| fl.iter().filter(|f| f.by == by).count() as u64;
        let tally = tally.get(name);
        topics.push(TopicReport {
            name: names.text(name),
            publishers: nodes_of(true),
            subscribers: nodes_of(false),
            publishes: tally.map_or(0, |t| t.pubs),
            takes: tally.map_or(0, |t| t.takes),
            matched: fl.len() as u64,
            unmatched: tally.map_or(0, |t| t.unmatched),
            unmatched_reasons: tally.map(reasons).unwrap_or_default(),
            dropped: tally.and_then(|t| t.dropped),
            by_source_timestamp: count(MatchBy::SourceTimestamp),
            by_publish_window: count(MatchBy::PublishWindow),
            intra_process: count(MatchBy::IntraProcess),
            pub_to_take_ns: Stats::of(&mut fl.iter().map(|f| f.pub_to_take_ns).collect::<Vec<_>>()),
            pub_to_callback_ns: Stats::of(&mut fl.iter().filter_map(|f| f.pub_to_callback_ns).collect::<Vec<_>>()),
            take_to_callback_ns: Stats::of(
                &mut fl
                    .iter()
                    .filter_map(|f| {
                        let t = &a.takes[f.take as usize].take;
                        t.run.map(|r| a.runs[r as usize].run.start - t.ts)
                    })
                    .collect::<Vec<_>>(),
            ),
            pairs: pairs(a, m, fl, names),
        });
    }
    topics
}

/// Why a topic's takes were not matched, the most frequent first.
fn reasons(tally: &TopicCount) -> Vec<ReasonCount> {
    let mut v: Vec<ReasonCount> = tally.reasons.iter().map(|&(reason, count)| ReasonCount { reason, count }).collect();
    v.sort_by(|a, b| b.count.cmp(&a.count).then(a.reason.cmp(b.reason)));
    v
}

/// The latencies of a topic's flows `fl` per publisher → subscription pair (by process and node
/// name: the flows are grouped by node first, and each group's names made once).
fn pairs(a: &View<'_>, m: &Model, fl: &[&Flow], names: &Names<'_>) -> Vec<PairReport> {
    type Latencies = (Vec<i64>, Vec<i64>);
    type Key = ((u32, i64), Option<u32>, (u32, i64), Option<u32>);
    let mut by_node: HashMap<Key, Latencies> = HashMap::default();
    for f in fl {
        let p = &a.pubs[f.publication as usize].publication;
        let LinkedTake { take: t, subscription: sub } = &a.takes[f.take as usize];
        let e = by_node
            .entry((
                (p.trace, p.vpid),
                pub_node(m, p),
                (t.trace, t.vpid),
                sub.and_then(|s| m.subscriptions.get(s).node),
            ))
            .or_default();
        e.0.push(f.pub_to_take_ns);
        if let Some(x) = f.pub_to_callback_ns {
            e.1.push(x);
        }
    }
    type Named = ((Arc<str>, i64), Arc<str>, (Arc<str>, i64), Arc<str>);
    let host = |(t, v): (u32, i64)| (names.host(t, v), v);
    let mut named: Vec<(Named, Latencies)> = by_node
        .into_iter()
        .map(|((pp, pn, sp, sn), l)| ((host(pp), names.node(pn), host(sp), names.node(sn)), l))
        .collect();
    named.sort_unstable_by(|x, y| x.0.cmp(&y.0));
    // Nodes of the same name (one created again) are one pair.
    named.dedup_by(|next, kept| {
        let same = next.0 == kept.0;
        if same {
            kept.1 .0.append(&mut next.1 .0);
            kept.1 .1.append(&mut next.1 .1);
        }
        same
    });
    named
        .into_iter()
        .map(|(((ph, pv), pn, (sh, sv), sn), (mut a, mut b))| {
            PairReport::of((ph, pv, pn, sh, sv, sn), a.len() as u64, Stats::of(&mut a), Stats::of(&mut b))
        })
        .collect()
}

/// A pair: publisher's host, process and node, then the subscription's.
pub(super) type PairKey = (Arc<str>, i64, Arc<str>, Arc<str>, i64, Arc<str>);

impl PairReport {
    /// The pair `key`'s `count` messages, with their latencies.
    pub(super) fn of(key: PairKey, count: u64, pub_to_take_ns: Stats, pub_to_callback_ns: Stats) -> PairReport {
        let (publisher_host, publisher_vpid, publisher_node, subscription_host, subscription_vpid, subscription_node) =
            key;
        PairReport {
            publisher_node,
            publisher_vpid,
            publisher_host,
            subscription_node,
            subscription_vpid,
            subscription_host,
            count,
            pub_to_take_ns,
            pub_to_callback_ns,
        }
    }
}

/// Why a latency that comes out below zero does: said for every one, never shown without it.
pub(super) const NEGATIVE_WHY: &str = "on one host, an event recorded after the call it times (its tracepoint's \
     placement) or a message paired with the wrong one; across hosts, clocks that differ";

/// A warning per topic some of whose messages were taken (or handled) before they were
/// published.
pub(super) fn negative_latencies(topics: &[TopicReport]) -> Vec<String> {
    let mut w = Vec::new();
    for t in topics {
        for (what, s) in [("publish → take", &t.pub_to_take_ns), ("publish → callback", &t.pub_to_callback_ns)] {
            if s.count > 0 && s.min < 0 {
                w.push(format!(
                    "topic {}: {what} latency down to {:.1} us, below zero: {NEGATIVE_WHY}",
                    t.name,
                    s.min as f64 / 1e3
                ));
            }
        }
    }
    w
}
