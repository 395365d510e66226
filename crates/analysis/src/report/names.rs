//! The names the report's rows show, each made once and shared by every row that shows it.

use crate::collections::HashMap;
use crate::model::Model;
use std::cell::RefCell;
use std::sync::Arc;

/// A node's name is shown by its callbacks, its topics' rows, its pairs and its time share, a
/// process's by its callbacks and threads, a topic's by its nodes: one string each, shared,
/// rather than one per row (a system of many nodes has as many rows as nodes, several times).
/// Names are made when first asked for, so that a report of a few callbacks (a slice of time)
/// names only theirs.
pub(super) struct Names<'m> {
    m: &'m Model,
    /// By node id, once named.
    nodes: RefCell<Vec<Option<Arc<str>>>>,
    text: RefCell<HashMap<&'m str, Arc<str>>>,
    processes: RefCell<HashMap<(u32, i64), Arc<str>>>,
    hosts: RefCell<HashMap<(u32, i64), Arc<str>>>,
    empty: Arc<str>,
}

impl<'m> Names<'m> {
    pub(super) fn new(m: &'m Model) -> Names<'m> {
        Names {
            m,
            nodes: RefCell::default(),
            text: RefCell::default(),
            processes: RefCell::default(),
            hosts: RefCell::default(),
            empty: Arc::from(""),
        }
    }

    /// A node's `/ns/name` (empty when unknown).
    pub(super) fn node(&self, id: Option<u32>) -> Arc<str> {
        let Some(id) = id else { return self.empty.clone() };
        let mut nodes = self.nodes.borrow_mut();
        if nodes.is_empty() {
            nodes.resize(self.m.nodes.items.len(), None);
        }
        nodes[id as usize].get_or_insert_with(|| self.m.nodes.get(id).full_name().into()).clone()
    }

    /// A name of the model (a topic, a symbol), shared.
    pub(super) fn text(&self, s: &'m str) -> Arc<str> {
        self.text.borrow_mut().entry(s).or_insert_with(|| s.into()).clone()
    }

    /// The name of a process by trace and vpid (empty when unknown).
    pub(super) fn process(&self, trace: u32, vpid: i64) -> Arc<str> {
        self.processes
            .borrow_mut()
            .entry((trace, vpid))
            .or_insert_with(|| {
                self.m.processes.get(&(trace, vpid)).map_or_else(|| self.empty.clone(), |p| p.procname.as_str().into())
            })
            .clone()
    }

    /// The host of a process by trace and vpid (empty when unknown).
    pub(super) fn host(&self, trace: u32, vpid: i64) -> Arc<str> {
        let mut hosts = self.hosts.borrow_mut();
        if let Some(h) = hosts.get(&(trace, vpid)) {
            return h.clone();
        }
        let name = self.m.processes.get(&(trace, vpid)).map_or("", |p| p.host.as_str());
        // One string per host, whatever its processes.
        let h = hosts.values().find(|h| &***h == name).cloned().unwrap_or_else(|| name.into());
        hosts.insert((trace, vpid), h.clone());
        h
    }
}

/// `v` sorted, each item once (a row's list of names).
pub(super) fn sorted_unique<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v.dedup();
    v
}
