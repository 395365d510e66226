//! The report narrowed to some nodes or topics.

use super::Report;
use regex_lite::Regex;
use std::collections::HashSet;

impl Report {
    /// Keeps the nodes matching `nodes` and the topics matching `topics`, with what belongs to
    /// them: callbacks, time shares, services.
    pub fn filter(&mut self, nodes: Option<&Regex>, topics: Option<&Regex>) {
        let r = self;
        if let Some(re) = nodes {
            r.nodes.retain(|n| re.is_match(&n.name));
            r.callbacks.retain(|c| re.is_match(&c.node));
            r.per_node.retain(|n| re.is_match(&n.name));
            r.topics.retain(|t| t.publishers.iter().chain(&t.subscribers).any(|n| re.is_match(n)));
            r.services.retain(|s| re.is_match(&s.server_node));
            // Processes are (trace, vpid): two traces may reuse a pid.
            let pids: HashSet<(u32, i64)> = r.nodes.iter().map(|n| (n.trace, n.vpid)).collect();
            r.per_process.retain(|p| pids.contains(&(p.trace, p.vpid)));
            r.per_thread.retain(|p| pids.contains(&(p.trace, p.vpid)));
        }
        if let Some(re) = topics {
            r.topics.retain(|t| re.is_match(&t.name));
            r.callbacks.retain(|c| c.kind == "subscription" && c.topic.as_deref().is_some_and(|t| re.is_match(t)));
            r.nodes.retain(|n| n.publishes.iter().chain(&n.subscribes).any(|t| re.is_match(t)));
            let names: HashSet<(u32, i64, &str)> = r.nodes.iter().map(|n| (n.trace, n.vpid, &*n.name)).collect();
            r.per_node.retain(|n| names.contains(&(n.trace, n.vpid, &*n.name)));
            let pids: HashSet<(u32, i64)> = r.nodes.iter().map(|n| (n.trace, n.vpid)).collect();
            r.per_process.retain(|p| pids.contains(&(p.trace, p.vpid)));
            r.per_thread.retain(|p| pids.contains(&(p.trace, p.vpid)));
        }
    }
}
