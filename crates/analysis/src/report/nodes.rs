//! Nodes with what each owns, executors with their callback groups, lifecycle transitions.

use super::names::{sorted_unique, Names};
use crate::collections::push_small;
use crate::model::{Endpoint, Model, Service};
use serde::Serialize;
use std::sync::Arc;

/// A node as reported.
#[derive(Debug, Clone, Serialize)]
pub struct NodeReport {
    /// Trace index.
    pub trace: u32,
    /// Process.
    pub vpid: i64,
    /// Host ([`crate::Process::host`]).
    pub host: Arc<str>,
    /// `/ns/name`.
    pub name: Arc<str>,
    /// Topics published.
    pub publishes: Vec<Arc<str>>,
    /// Topics subscribed.
    pub subscribes: Vec<Arc<str>>,
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
pub(super) fn section<'m>(m: &'m Model, names: &Names<'m>) -> Vec<NodeReport> {
    fn by_node<T>(n: usize, items: &[T], node: impl Fn(&T) -> Option<u32>) -> Vec<Vec<&T>> {
        let mut by: Vec<Vec<&T>> = (0..n).map(|_| Vec::new()).collect();
        for x in items {
            if let Some(v) = node(x).and_then(|i| by.get_mut(i as usize)) {
                push_small(v, x);
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
    // In order of name, trace and process (then creation), sorted before the rows are made:
    // sorting the rows would need room for half of them again.
    let mut order: Vec<(Arc<str>, u32)> = (0..m.nodes.items.len() as u32).map(|i| (names.node(Some(i)), i)).collect();
    order.sort_unstable_by(|(a, i), (b, j)| {
        let (x, y) = (&m.nodes.items[*i as usize].key, &m.nodes.items[*j as usize].key);
        a.cmp(b).then(x.0.cmp(&y.0)).then(x.1.cmp(&y.1)).then(i.cmp(j))
    });
    order
        .into_iter()
        .map(|(name, i)| {
            let (i, n) = (i as usize, &m.nodes.items[i as usize]);
            let take = |v: &mut Vec<Vec<&'m Endpoint>>| {
                std::mem::take(&mut v[i]).into_iter().map(|p| names.text(&p.topic)).collect()
            };
            let services =
                |v: &mut Vec<Vec<&Service>>| std::mem::take(&mut v[i]).into_iter().map(|p| p.name.clone()).collect();
            NodeReport {
                trace: n.key.0,
                vpid: n.key.1,
                host: names.host(n.key.0, n.key.1),
                name,
                publishes: sorted_unique(take(&mut publishes_of)),
                subscribes: sorted_unique(take(&mut subscribes_of)),
                timers_ns: std::mem::take(&mut timers_of[i]).into_iter().map(|p| p.period_ns).collect(),
                services: sorted_unique(services(&mut services_of)),
                clients: sorted_unique(services(&mut clients_of)),
            }
        })
        .collect()
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
