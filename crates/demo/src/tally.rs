//! What a demo process counted: messages published and received per topic, service calls.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The counts of one process, printed by it when it ends (as one JSON line; a field left out is
/// empty, so that a program of another language prints only what it counts).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default)]
pub struct Tally {
    /// The process name.
    pub process: String,
    /// Messages published, per topic.
    pub published: BTreeMap<String, u64>,
    /// Messages received by subscriptions, per topic.
    pub received: BTreeMap<String, u64>,
    /// Service requests sent, per service.
    pub requests_sent: BTreeMap<String, u64>,
    /// Service requests answered, per service.
    pub requests_served: BTreeMap<String, u64>,
    /// Service responses received, per service.
    pub responses_received: BTreeMap<String, u64>,
    /// Samples the middleware could not deliver or decode, per entity.
    pub read_errors: BTreeMap<String, u64>,
}

/// A counter's kind, what it counts, and its value.
type Entry = (&'static str, String, Arc<AtomicU64>);

/// Counters shared by the callbacks of one process.
#[derive(Clone, Default)]
pub(crate) struct Counters {
    all: Arc<Mutex<Vec<Entry>>>,
}

/// One counter.
#[derive(Clone)]
pub(crate) struct Counter(Arc<AtomicU64>);

impl Counter {
    pub(crate) fn add(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

impl Counters {
    /// A counter of `kind` (`published`, `received`, `sent`, `served`, `responses`) for `name`.
    pub(crate) fn counter(&self, kind: &'static str, name: &str) -> Counter {
        let c = Arc::new(AtomicU64::new(0));
        self.all.lock().unwrap_or_else(|p| p.into_inner()).push((kind, name.to_string(), c.clone()));
        Counter(c)
    }

    /// The counts so far.
    pub(crate) fn tally(&self, process: &str, errors: Vec<(String, u64)>) -> Tally {
        let mut t = Tally { process: process.to_string(), ..Default::default() };
        for (kind, name, c) in self.all.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            let map = match *kind {
                "published" => &mut t.published,
                "received" => &mut t.received,
                "sent" => &mut t.requests_sent,
                "served" => &mut t.requests_served,
                _ => &mut t.responses_received,
            };
            *map.entry(name.clone()).or_default() += c.load(Ordering::Relaxed);
        }
        t.read_errors = errors.into_iter().collect();
        t
    }
}
