//! A path as asked for: its nodes and the topics between them ([`PathSpec`]), where a search
//! for paths starts, passes and ends ([`Endpoint`]), and where in its first and last nodes a
//! path is measured from and to ([`PathOptions`]).

use serde::Serialize;

/// A path: nodes, and the topic from each to the next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct PathSpec {
    /// Node names, source first.
    pub nodes: Vec<String>,
    /// Topics between consecutive nodes (one fewer than nodes).
    pub topics: Vec<String>,
}

impl PathSpec {
    /// CARET's string form: `[node]-[topic]-[node]-...`.
    pub fn label(&self) -> String {
        let mut s = String::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if i > 0 {
                s.push_str(&format!(" -{}-> ", self.topics[i - 1]));
            }
            s.push_str(n);
        }
        s
    }
}

/// Path options (CARET's `include_first_callback` / `include_last_callback`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct PathOptions {
    /// Start at the source callback's start instead of the first publication.
    pub include_first_callback: bool,
    /// End at the sink callback's end instead of its start.
    pub include_last_callback: bool,
}

/// Where a path starts, passes or ends: a node, or a topic (the path takes that topic: it
/// starts at a publisher of it, or ends at a subscriber of it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A node (index in [`Architecture::nodes`](super::Architecture::nodes)).
    Node(usize),
    /// A topic.
    Topic(String),
}
