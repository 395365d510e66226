//! The samples of one run that a comparison of runs ([`crate::diff`]) takes, by name: a type
//! of its own, below both the analysis that carries them and the comparison that reads them.

use crate::paths::PathSpec;
use crate::stats::Stats;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The samples of one run that a comparison needs, by name (what `rostrace analyze --samples`
/// saves in its JSON, so that a run can be compared without its trace).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Samples {
    /// The length of the trace (or of its window) in seconds, for rates.
    pub seconds: f64,
    /// Run durations (ns), by callback name (see [`Change::name`]).
    pub callback: BTreeMap<String, Vec<i64>>,
    /// Publish → subscription callback start latencies (ns), by topic.
    pub topic: BTreeMap<String, Vec<i64>>,
    /// The same latencies per publisher → subscriber pair of nodes, by `PUB -/topic-> SUB`
    /// (the messages whose two nodes are known).
    #[serde(default)]
    pub pair: BTreeMap<String, Vec<i64>>,
    /// End-to-end latencies (ns) of the messages that went the whole way, by path label.
    pub path: BTreeMap<String, Vec<i64>>,
    /// The paths followed in the run: those of `path`, and those it cannot follow or that no
    /// message went the whole way through. A path of the other run that was not followed in
    /// this one is not compared (not called gone or appeared).
    pub paths_followed: Vec<PathSpec>,
    /// The statistics of every value, by kind (`callback`, `topic`, `pair`) and name, where
    /// the samples are a uniform random choice of the values (a streamed analysis's: at most
    /// [`RESERVOIR`](crate::stats::RESERVOIR) of each): the comparison's figures and rates are
    /// these; its test is made on the values chosen.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub whole: BTreeMap<String, BTreeMap<String, Stats>>,
}

/// A callback's name across runs: node, kind, topic or timer period, symbol.
pub(crate) fn callback_name(c: &crate::CallbackReport) -> String {
    let what = match (&c.topic, c.timer_period_ns) {
        (Some(t), _) => t.to_string(),
        (None, Some(p)) => format!("{}ms", p as f64 / 1e6),
        (None, None) => String::new(),
    };
    [&*c.node, c.kind, what.as_str(), &*c.symbol]
        .iter()
        .filter(|s| !s.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
}
