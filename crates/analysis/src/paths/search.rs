//! Path search: every simple path between two nodes (or topics) through the communications,
//! depth-first, up to a depth and a number of paths, streamed; memory bounded by the depth (the
//! current path and, per node on it, where the search stands), not by the number of paths.

use super::arch::Architecture;
use super::latency::PathSpec;

/// Limits of a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchLimits {
    /// Most nodes on a path (CARET's `max_node_depth`, default 15).
    pub max_depth: usize,
    /// Most paths to find.
    pub max_paths: usize,
}

impl Default for SearchLimits {
    fn default() -> SearchLimits {
        SearchLimits { max_depth: 15, max_paths: 1000 }
    }
}

/// What a search found beside its paths.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SearchOutcome {
    /// Paths found (given to the callback).
    pub paths: usize,
    /// The search stopped at `max_paths` with more to explore.
    pub truncated_paths: bool,
    /// Some branches were cut at `max_depth`.
    pub truncated_depth: bool,
}

/// Where a path starts, passes or ends: a node, or a topic (the path takes that topic: it
/// starts at a publisher of it, or ends at a subscriber of it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A node (index in [`Architecture::nodes`]).
    Node(usize),
    /// A topic.
    Topic(String),
}

impl Architecture {
    /// A node or topic named by a user: as given, or with a leading `/` added. The error
    /// (starting with `what`, the argument's name) suggests names that contain it.
    pub fn resolve(&self, name: &str, what: &str) -> Result<Endpoint, String> {
        let arch = self;
        let slashed = format!("/{name}");
        if let Some(e) =
            arch.endpoint(name).or_else(|| (!name.starts_with('/')).then(|| arch.endpoint(&slashed)).flatten())
        {
            return Ok(e);
        }
        let key = name.trim_start_matches('/');
        let mut near: Vec<&str> = arch.nodes.iter().map(|n| n.name.as_str()).filter(|n| n.contains(key)).collect();
        near.extend(arch.communications.iter().map(|c| c.topic.as_str()).filter(|t| t.contains(key)));
        near.sort();
        near.dedup();
        let hint = if near.is_empty() {
            format!("the trace has {} nodes (see `rostrace architecture`)", arch.nodes.len())
        } else {
            let n = near.len();
            let shown: Vec<&str> = near.into_iter().take(8).collect();
            format!(
                "did you mean {}{}?",
                shown.join(", "),
                if n > 8 { format!(" (+{} more)", n - 8) } else { String::new() }
            )
        };
        Err(format!("{what} {name:?}: no such node or topic (with publishers and subscribers) in the trace; {hint}"))
    }

    /// The path written `NODE,NODE,...` with topics between where two nodes communicate over
    /// several (a topic left out is the only one between its nodes). Errors start with `what`.
    pub fn parse_path(&self, s: &str, what: &str) -> Result<PathSpec, String> {
        let arch = self;
        let mut nodes: Vec<usize> = Vec::new();
        let mut topics: Vec<Option<String>> = Vec::new();
        for item in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
            match arch.resolve(item, what)? {
                Endpoint::Node(n) => {
                    if !nodes.is_empty() && topics.len() < nodes.len() {
                        topics.push(None);
                    }
                    nodes.push(n);
                }
                Endpoint::Topic(t) => {
                    if nodes.is_empty() || topics.len() == nodes.len() {
                        return Err(format!("{what}: topic {t} must come between two nodes"));
                    }
                    topics.push(Some(t));
                }
            }
        }
        if nodes.len() < 2 || topics.len() != nodes.len() - 1 {
            return Err(format!(
                "{what}: a path needs two nodes or more (NODE,NODE,... with topics between where needed)"
            ));
        }
        let mut spec =
            PathSpec { nodes: nodes.iter().map(|&n| arch.nodes[n].name.clone()).collect(), topics: Vec::new() };
        for (k, t) in topics.into_iter().enumerate() {
            let (u, v) = (nodes[k], nodes[k + 1]);
            let mut between: Vec<&str> =
                arch.communications.iter().filter(|c| c.from == u && c.to == v).map(|c| c.topic.as_str()).collect();
            between.sort();
            between.dedup();
            let (un, vn) = (&arch.nodes[u].name, &arch.nodes[v].name);
            let topic = match t {
                Some(t) if between.contains(&t.as_str()) => t,
                Some(t) => return Err(format!("{what}: {un} does not send {t} to {vn} in the trace")),
                None => match between.as_slice() {
                    [one] => one.to_string(),
                    [] => return Err(format!("{what}: {un} sends nothing to {vn} in the trace")),
                    many => {
                        return Err(format!(
                            "--path: {un} sends {} topics to {vn} ({}): name the one between them",
                            many.len(),
                            many.join(", ")
                        ))
                    }
                },
            };
            spec.topics.push(topic);
        }
        Ok(spec)
    }

    /// The node named `name`, or else the topic, if any node publishes or subscribes to it.
    pub fn endpoint(&self, name: &str) -> Option<Endpoint> {
        if let Some(i) = self.node(name) {
            return Some(Endpoint::Node(i));
        }
        self.communications.iter().any(|c| c.topic == name).then(|| Endpoint::Topic(name.to_string()))
    }

    /// Every simple path from `from` through each of `through` (in order) to `to`, given to
    /// `found` as it is found; `found` returns false to stop. Node indices in
    /// [`Architecture::nodes`].
    pub fn search_paths(
        &self,
        from: usize,
        through: &[usize],
        to: usize,
        limits: SearchLimits,
        found: impl FnMut(PathSpec) -> bool,
    ) -> SearchOutcome {
        let through: Vec<Endpoint> = through.iter().map(|&n| Endpoint::Node(n)).collect();
        self.search(&Endpoint::Node(from), &through, &Endpoint::Node(to), limits, found)
    }

    /// Every simple path from `from` through each of `through` (in order) to `to`, nodes or
    /// topics, given to `found` as it is found; `found` returns false to stop.
    pub fn search(
        &self,
        from: &Endpoint,
        through: &[Endpoint],
        to: &Endpoint,
        limits: SearchLimits,
        found: impl FnMut(PathSpec) -> bool,
    ) -> SearchOutcome {
        self.search_on(&self.out_edges(), from, through, to, limits, found)
    }

    /// Out-edges per node: (node, communication), sorted for a stable order.
    pub(crate) fn out_edges(&self) -> Vec<Vec<(usize, usize)>> {
        let mut out: Vec<Vec<(usize, usize)>> = vec![Vec::new(); self.nodes.len()];
        for (ci, c) in self.communications.iter().enumerate() {
            out[c.from].push((c.to, ci));
        }
        for v in &mut out {
            v.sort_by(|a, b| {
                (self.nodes[a.0].name.as_str(), self.communications[a.1].topic.as_str())
                    .cmp(&(self.nodes[b.0].name.as_str(), self.communications[b.1].topic.as_str()))
            });
        }
        out
    }

    /// [`search`](Self::search) over the edges `out` ([`out_edges`](Self::out_edges)), for many
    /// searches over one architecture.
    pub(crate) fn search_on(
        &self,
        out: &[Vec<(usize, usize)>],
        from: &Endpoint,
        through: &[Endpoint],
        to: &Endpoint,
        limits: SearchLimits,
        mut found: impl FnMut(PathSpec) -> bool,
    ) -> SearchOutcome {
        // Starts: the node, or each publisher of the topic with its first edge fixed.
        let starts: Vec<(usize, Option<&str>)> = match from {
            Endpoint::Node(n) => vec![(*n, None)],
            Endpoint::Topic(t) => {
                let mut v: Vec<usize> = self.communications.iter().filter(|c| &c.topic == t).map(|c| c.from).collect();
                v.sort_by(|a, b| self.nodes[*a].name.cmp(&self.nodes[*b].name));
                v.dedup();
                v.into_iter().map(|n| (n, Some(t.as_str()))).collect()
            }
        };
        let mut outcome = SearchOutcome::default();
        let mut on_path = vec![false; self.nodes.len()];
        'starts: for (start, first_topic) in starts {
            // Stack of (node, next edge to try), and the communications taken.
            let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
            let mut comms: Vec<usize> = Vec::new();
            on_path[start] = true;
            while let Some(&(u, next0)) = stack.last() {
                let at_end = stack.len() > 1
                    && match to {
                        Endpoint::Node(n) => u == *n,
                        Endpoint::Topic(t) => comms.last().is_some_and(|&c| &self.communications[c].topic == t),
                    };
                if at_end && next0 == 0 && self.passes(&stack, &comms, through) {
                    if outcome.paths >= limits.max_paths {
                        outcome.truncated_paths = true;
                        break 'starts;
                    }
                    outcome.paths += 1;
                    let spec = PathSpec {
                        nodes: stack.iter().map(|s| self.nodes[s.0].name.clone()).collect(),
                        topics: comms.iter().map(|&c| self.communications[c].topic.clone()).collect(),
                    };
                    if !found(spec) {
                        break 'starts;
                    }
                }
                if at_end || next0 >= out[u].len() {
                    on_path[u] = false;
                    stack.pop();
                    comms.pop();
                    continue;
                }
                let (v, c) = out[u][next0];
                if let Some(top) = stack.last_mut() {
                    top.1 += 1;
                }
                if on_path[v] || (stack.len() == 1 && first_topic.is_some_and(|t| self.communications[c].topic != t)) {
                    continue;
                }
                if stack.len() >= limits.max_depth {
                    outcome.truncated_depth = true;
                    continue;
                }
                on_path[v] = true;
                stack.push((v, 0));
                comms.push(c);
            }
            on_path.iter_mut().for_each(|x| *x = false);
        }
        outcome
    }

    /// Whether the path (nodes on `stack`, `comms` between them) passes the waypoints in order.
    fn passes(&self, stack: &[(usize, usize)], comms: &[usize], through: &[Endpoint]) -> bool {
        let mut k = 0;
        for (i, s) in stack.iter().enumerate() {
            if i > 0 {
                if let Some(Endpoint::Topic(t)) = through.get(k) {
                    if &self.communications[comms[i - 1]].topic == t {
                        k += 1;
                    }
                }
            }
            if let Some(Endpoint::Node(n)) = through.get(k) {
                if s.0 == *n {
                    k += 1;
                }
            }
        }
        k == through.len()
    }
}
