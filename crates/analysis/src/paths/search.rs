//! Path search: every simple path between two nodes through the communications, depth-first,
//! up to a depth and a number of paths, streamed; memory bounded by the depth (the current
//! path and, per node on it, where the search stands), not by the number of paths.

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

impl Architecture {
    /// Every simple path from `from` through each of `through` (in order) to `to`, given to
    /// `found` as it is found; `found` returns false to stop. Node indices in
    /// [`Architecture::nodes`].
    pub fn search_paths(
        &self,
        from: usize,
        through: &[usize],
        to: usize,
        limits: SearchLimits,
        mut found: impl FnMut(PathSpec) -> bool,
    ) -> SearchOutcome {
        // Out-edges per node: (topic, node), sorted for a stable order.
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
        let mut outcome = SearchOutcome::default();
        let mut on_path = vec![false; self.nodes.len()];
        // Stack of (node, next edge to try), and the communications taken.
        let mut stack: Vec<(usize, usize)> = vec![(from, 0)];
        let mut comms: Vec<usize> = Vec::new();
        on_path[from] = true;
        while let Some(&(u, next0)) = stack.last() {
            let at_goal = u == to && stack.len() > 1 && {
                // The waypoints in order.
                let nodes: Vec<usize> = stack.iter().map(|s| s.0).collect();
                let mut k = 0;
                for &n in &nodes {
                    if k < through.len() && n == through[k] {
                        k += 1;
                    }
                }
                k == through.len()
            };
            if at_goal && next0 == 0 {
                if let Some(top) = stack.last_mut() {
                    top.1 = usize::MAX;
                }
                if outcome.paths >= limits.max_paths {
                    outcome.truncated_paths = true;
                    break;
                }
                outcome.paths += 1;
                let spec = PathSpec {
                    nodes: stack.iter().map(|s| self.nodes[s.0].name.clone()).collect(),
                    topics: comms.iter().map(|&c| self.communications[c].topic.clone()).collect(),
                };
                if !found(spec) {
                    break;
                }
            }
            if u == to || next0 >= out[u].len() {
                on_path[u] = false;
                stack.pop();
                comms.pop();
                continue;
            }
            let (v, c) = out[u][next0];
            if let Some(top) = stack.last_mut() {
                top.1 += 1;
            }
            if on_path[v] {
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
        outcome
    }
}
