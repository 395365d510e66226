//! Nodes with what each owns, executors with their callback groups, lifecycle transitions.

use crate::model::{Endpoint, Model, Service};
use serde::Serialize;

/// A node as reported.
#[derive(Debug, Clone, Serialize)]
pub struct NodeReport {
    /// Trace index.
    pub trace: u32,
    /// Process.
    pub vpid: i64,
    /// `/ns/name`.
    pub name: String,
    /// Topics published.
    pub publishes: Vec<String>,
    /// Topics subscribed.
    pub subscribes: Vec<String>,
    /// Timer periods (ns).
    pub timers_ns: Vec<i64>,
    /// Services offered.
    pub services: Vec<String>,
    /// Services called.
    pub clients: Vec<String>,
}

/// An executor or callback group as reported (CARET traces).
#[derive(Debug, Clone, Serialize)]
pub struct ExecutorReport {
    /// Process.
    pub vpid: i64,
    /// Executor type.
    pub kind: String,
    /// Address.
    pub address: u64,
    /// Callback groups: (type, address, members count).
    pub groups: Vec<(String, u64, usize)>,
}

/// A lifecycle transition.
#[derive(Debug, Clone, Serialize)]
pub struct TransitionReport {
    /// Node.
    pub node: String,
    /// Time (ns).
    pub ts: i64,
    /// From.
    pub start: String,
    /// To.
    pub goal: String,
}

/// The nodes, with what each owns (in creation order), by name.
pub(super) fn section(m: &Model) -> Vec<NodeReport> {
    fn by_node<T>(n: usize, items: &[T], node: impl Fn(&T) -> Option<u32>) -> Vec<Vec<&T>> {
        let mut by: Vec<Vec<&T>> = (0..n).map(|_| Vec::new()).collect();
        for x in items {
            if let Some(v) = node(x).and_then(|i| by.get_mut(i as usize)) {
                crate::push_small(v, x);
            }
        }
        by
    }
    let n = m.nodes.items.len();
    let mut publishes_of = by_node(n, &m.publishers.items, |p| p.node);
    let mut subscribes_of = by_node(n, &m.subscriptions.items, |p| p.node);
    let mut timers_of = by_node(n, &m.timers.items, |p| p.node);
    let mut services_of = by_node(n, &m.services.items, |p| p.node);
    let mut clients_of = by_node(n, &m.clients.items, |p| p.node);
    let mut nodes: Vec<NodeReport> = m
        .nodes
        .items
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let take =
                |v: &mut Vec<Vec<&Endpoint>>| std::mem::take(&mut v[i]).into_iter().map(|p| p.topic.clone()).collect();
            let names =
                |v: &mut Vec<Vec<&Service>>| std::mem::take(&mut v[i]).into_iter().map(|p| p.name.clone()).collect();
            let mut r = NodeReport {
                trace: n.key.0,
                vpid: n.key.1,
                name: n.full_name(),
                publishes: take(&mut publishes_of),
                subscribes: take(&mut subscribes_of),
                timers_ns: std::mem::take(&mut timers_of[i]).into_iter().map(|p| p.period_ns).collect(),
                services: names(&mut services_of),
                clients: names(&mut clients_of),
            };
            for v in [&mut r.publishes, &mut r.subscribes, &mut r.services, &mut r.clients] {
                v.sort();
                v.dedup();
            }
            r
        })
        .collect();
    nodes.sort_by(|a, b| a.name.cmp(&b.name).then(a.trace.cmp(&b.trace)).then(a.vpid.cmp(&b.vpid)));
    nodes
}

/// The executors, each with its callback groups.
pub(super) fn executors(m: &Model) -> Vec<ExecutorReport> {
    m.executors
        .items
        .iter()
        .map(|e| ExecutorReport {
            vpid: e.key.1,
            kind: e.kind.clone(),
            address: e.key.2,
            groups: m
                .groups
                .items
                .iter()
                .filter(|g| {
                    g.key.0 == e.key.0
                        && g.key.1 == e.key.1
                        && (g.executor == e.key.2 || (e.collector != 0 && g.executor == e.collector))
                })
                .map(|g| (g.kind.clone(), g.key.2, g.members.len()))
                .collect(),
        })
        .collect()
}

/// The lifecycle nodes' transitions.
pub(super) fn lifecycle_transitions(m: &Model) -> Vec<TransitionReport> {
    m.lifecycles
        .items
        .iter()
        .flat_map(|l| {
            let node = m.node_name(l.node);
            l.transitions.iter().map(move |(ts, a, b)| TransitionReport {
                node: node.clone(),
                ts: *ts,
                start: a.clone(),
                goal: b.clone(),
            })
        })
        .collect()
}
