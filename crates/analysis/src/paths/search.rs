//! Path search: every simple path between two nodes (or topics) through the communications,
//! depth-first, up to a depth and a number of paths, streamed; memory bounded by the depth (the
//! current path and, per node on it, where the search stands), not by the number of paths.
//!
//! Where many nodes share topics (`/tf`, `/diagnostics`: cliques) the simple paths grow
//! exponentially with the nodes, so a branch is followed only while it can still end within the
//! depth: a breadth-first pass backwards from the end gives each node the fewest nodes still to
//! add to reach it through the waypoints left ([`Reach`]), and a node is entered only if a
//! route that short avoids the nodes already on the path (one found greedily, else by the same
//! pass leaving them out). The paths found, and their order, are those of the plain depth-first
//! enumeration: only branches that hold none are skipped. Without waypoints every node entered
//! leads to a path, so the work grows with the paths found (`max_depth` states each at most),
//! not with the graph's simple paths. `truncated_depth` keeps the plain enumeration's meaning
//! (some branch, leading to the end or not, was cut at the depth): the branches skipped are
//! probed for one. A search also stops after `max_expansions` states, and probes as many at
//! most: bounded work, whatever the graph.

use super::arch::{Architecture, Communication};
use super::spec::{Endpoint, PathSpec};
use std::collections::VecDeque;

/// Limits of a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchLimits {
    /// Most nodes on a path (CARET's `max_node_depth`, default 15).
    pub max_depth: usize,
    /// Most paths to find.
    pub max_paths: usize,
    /// Most states to expand (nodes put on the path being built, the start included; default
    /// [`SearchLimits::DEFAULT_MAX_EXPANSIONS`]), and to probe for `truncated_depth`: the
    /// work of one search, whatever the graph.
    pub max_expansions: usize,
}

impl SearchLimits {
    /// The default of `max_expansions`: far more than a search of a real system needs (the
    /// most on Autoware's 192 nodes, from any node to any other, is a few thousand), and a
    /// fraction of a second of work.
    pub const DEFAULT_MAX_EXPANSIONS: usize = 1_000_000;
}

impl Default for SearchLimits {
    fn default() -> SearchLimits {
        SearchLimits { max_depth: 15, max_paths: 1000, max_expansions: SearchLimits::DEFAULT_MAX_EXPANSIONS }
    }
}

/// What a search found beside its paths.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SearchOutcome {
    /// Paths found (given to the callback).
    pub paths: usize,
    /// The search stopped at `max_paths` with more to explore.
    pub truncated_paths: bool,
    /// Some branches were cut at `max_depth` (leading to the end or not, as the plain
    /// depth-first enumeration cut them; also when telling that took more than
    /// `max_expansions` states of its own).
    pub truncated_depth: bool,
    /// The search stopped at `max_expansions` with more to explore.
    pub truncated_work: bool,
    /// States expanded: nodes put on the path being built, the starts included.
    pub expanded: usize,
    /// States expanded, beside, in branches that lead nowhere, to tell `truncated_depth` (at
    /// most `max_expansions` too).
    pub probed: usize,
}

/// Every simple path from `from` through each of `through` (in order) to `to`, given to
/// `found` as it is found; `found` returns false to stop. Node indices in
/// [`Architecture::nodes`].
pub fn search_paths(
    arch: &Architecture,
    from: usize,
    through: &[usize],
    to: usize,
    limits: SearchLimits,
    found: impl FnMut(PathSpec) -> bool,
) -> SearchOutcome {
    let through: Vec<Endpoint> = through.iter().map(|&n| Endpoint::Node(n)).collect();
    search(arch, &Endpoint::Node(from), &through, &Endpoint::Node(to), limits, found)
}

/// Every simple path from `from` through each of `through` (in order) to `to`, nodes or
/// topics, given to `found` as it is found; `found` returns false to stop.
pub fn search(
    arch: &Architecture,
    from: &Endpoint,
    through: &[Endpoint],
    to: &Endpoint,
    limits: SearchLimits,
    found: impl FnMut(PathSpec) -> bool,
) -> SearchOutcome {
    let graph = Graph::of(arch);
    let reach = Reach::new(arch, &graph, through, to);
    search_on(arch, &graph, &reach, from, limits, true, found)
}

/// [`search`] over `graph` ([`Graph::of`]) to the end and through the waypoints of `reach`
/// ([`Reach::new`]), for many searches over one architecture; `depth_flag`: whether to tell
/// `truncated_depth` (work spent only for it).
///
/// A candidate node is entered only if the path can still end from it within the depth: by
/// `reach` (which ignores the nodes already on the path; exact when none is in the node's
/// strongly connected component, as a route from it can meet them only there), else along
/// a route that avoids them: one found greedily (the `reach` distance going down by one at
/// each step), else the distances of a search backwards from the end that leaves the path's
/// nodes out, made once for that path's prefix. Without waypoints every node entered then leads to a
/// path (a route avoiding the path is a simple path), so the work grows with the paths
/// found, not with the graph's simple paths.
///
/// `truncated_depth` is what the plain enumeration said: some branch, leading to the end or
/// not, was cut at `max_depth`. A branch left out leads nowhere, but the plain enumeration
/// went down it, so it is probed ([`Probe`]) until one reaches the depth.
pub(crate) fn search_on(
    arch: &Architecture,
    graph: &Graph,
    reach: &Reach,
    from: &Endpoint,
    limits: SearchLimits,
    depth_flag: bool,
    mut found: impl FnMut(PathSpec) -> bool,
) -> SearchOutcome {
    // Starts: the node, or each publisher of the topic with its first edge fixed.
    let starts: Vec<(usize, Option<&str>)> = match from {
        Endpoint::Node(n) => vec![(*n, None)],
        Endpoint::Topic(t) => {
            let mut v: Vec<usize> = arch.communications.iter().filter(|c| &c.topic == t).map(|c| c.from).collect();
            v.sort_by(|a, b| arch.nodes[*a].name.cmp(&arch.nodes[*b].name));
            v.dedup();
            v.into_iter().map(|n| (n, Some(t.as_str()))).collect()
        }
    };
    let mut outcome = SearchOutcome::default();
    let n = arch.nodes.len();
    let mut on_path = vec![false; n];
    let all = reach.waypoints.len();
    let mut route = Route { mark: vec![0; n], stamp: 0 };
    // Nodes of the path per component: none in v's, and reach's distance from v is exact.
    let mut on_component = vec![0u32; n];
    let mut probe = Probe {
        left: limits.max_expansions,
        done: !depth_flag,
        seen: Vec::new(),
        touched: Vec::new(),
        queue: VecDeque::new(),
    };
    // Distances avoiding the path's nodes, per prefix that needed them (reused buffers).
    let mut tables: Vec<Vec<u32>> = Vec::new();
    let mut spare: Vec<Vec<u32>> = Vec::new();
    let mut queue = VecDeque::new();
    'starts: for (start, first_topic) in starts {
        if outcome.expanded >= limits.max_expansions {
            outcome.truncated_work = true;
            break;
        }
        outcome.expanded += 1;
        // The path: (node, next edge to try, waypoints passed, its table of distances
        // avoiding the path up to it if made), and the communications taken.
        let mut stack: Vec<(usize, usize, usize, Option<usize>)> = vec![(start, 0, reach.advance_node(0, start), None)];
        let mut comms: Vec<usize> = Vec::new();
        on_path[start] = true;
        on_component[graph.component[start] as usize] += 1;
        // A simple path cannot come back to its start: every branch leads nowhere.
        let dead_start = reach.end_node == Some(start);
        while let Some(&(u, next0, k, table)) = stack.last() {
            let at_end = comms.last().is_some_and(|&c| reach.ends(u, c));
            if at_end && next0 == 0 && k == all {
                if outcome.paths >= limits.max_paths {
                    outcome.truncated_paths = true;
                    break 'starts;
                }
                outcome.paths += 1;
                let spec = PathSpec {
                    nodes: stack.iter().map(|s| arch.nodes[s.0].name.clone()).collect(),
                    topics: comms.iter().map(|&c| arch.communications[c].topic.clone()).collect(),
                };
                if !found(spec) {
                    break 'starts;
                }
            }
            if at_end || next0 >= graph.out(u).len() {
                if let Some(t) = table {
                    spare.push(std::mem::take(&mut tables[t]));
                }
                on_path[u] = false;
                on_component[graph.component[u] as usize] -= 1;
                stack.pop();
                comms.pop();
                continue;
            }
            let (v, c) = graph.out(u)[next0];
            if let Some(top) = stack.last_mut() {
                top.1 += 1;
            }
            if on_path[v] || (stack.len() == 1 && first_topic.is_some_and(|t| arch.communications[c].topic != t)) {
                continue;
            }
            if stack.len() >= limits.max_depth {
                outcome.truncated_depth = true;
                continue;
            }
            // An edge that ends the path: a path if every waypoint is passed, else nothing
            // (the path stops there). Else v is entered if the path can still end from it
            // within the depth; if not, it leads nowhere.
            let k2 = reach.advance(k, c, v);
            if reach.ends(v, c) {
                if k2 != all {
                    continue;
                }
            } else {
                let room = limits.max_depth - (stack.len() + 1);
                let leads = !dead_start
                    && match reach.need(v, k2) {
                        None => false,
                        Some(d) if d > room => false,
                        Some(_) if on_component[graph.component[v] as usize] == 0 => true,
                        Some(d) => {
                            let d = match table {
                                Some(t) => tables[t][k2 * n + v],
                                None if route.exists(graph, reach, &on_path, v, k2, d) => d as u32,
                                None => {
                                    // Distances avoiding this path, kept while its last node stays.
                                    let mut t = spare.pop().unwrap_or_default();
                                    reach.distances(graph, Some(&on_path), &mut t, &mut queue);
                                    let d = t[k2 * n + v];
                                    let i = match tables.iter().position(Vec::is_empty) {
                                        Some(i) => {
                                            tables[i] = t;
                                            i
                                        }
                                        None => {
                                            tables.push(t);
                                            tables.len() - 1
                                        }
                                    };
                                    if let Some(top) = stack.last_mut() {
                                        top.3 = Some(i);
                                    }
                                    d
                                }
                            };
                            d != Reach::NONE && d as usize <= room
                        }
                    };
                if !leads {
                    if !outcome.truncated_depth && !probe.done {
                        outcome.truncated_depth =
                            probe.cut(graph, reach, &mut on_path, v, stack.len() + 1, limits.max_depth);
                    }
                    continue;
                }
            }
            if outcome.expanded >= limits.max_expansions {
                outcome.truncated_work = true;
                break 'starts;
            }
            outcome.expanded += 1;
            on_path[v] = true;
            on_component[graph.component[v] as usize] += 1;
            stack.push((v, 0, k2, None));
            comms.push(c);
        }
        // Every node entered was left again (the loop ends with the stack empty): nothing to
        // reset, and a search costs what it visits, not the system's size.
        debug_assert!(stack.is_empty() && comms.is_empty());
    }
    outcome.probed = limits.max_expansions - probe.left;
    outcome
}

/// Whether the plain enumeration cut a branch at the depth in a part the search leaves out
/// (it holds no path): a depth-first search there for a simple path down to `max_depth`
/// nodes whose last node has a neighbor off the path, within its own budget of states.
struct Probe {
    /// States it may still expand.
    left: usize,
    /// No more probing: not asked for, or out of budget.
    done: bool,
    /// Nodes seen by the reach count (buffer), and those set in it (reset one by one: a probe
    /// costs what it visits, not the system's size).
    seen: Vec<bool>,
    touched: Vec<usize>,
    queue: VecDeque<usize>,
}

impl Probe {
    /// Whether the plain enumeration, entering `v` at position `depth` (over an edge that does
    /// not end the path) after the nodes `on_path`, cut a branch at `max_depth` below it (true
    /// too when that takes more than the budget left: it may have). `on_path` is as given on
    /// return.
    fn cut(
        &mut self,
        graph: &Graph,
        reach: &Reach,
        on_path: &mut [bool],
        v: usize,
        depth: usize,
        max_depth: usize,
    ) -> bool {
        // Down to max_depth and one more node off the path: that many nodes reachable from v.
        let wanted = max_depth - depth + 1;
        for &x in &self.touched {
            self.seen[x] = false;
        }
        self.touched.clear();
        if self.seen.len() < on_path.len() {
            self.seen.resize(on_path.len(), false);
        }
        self.seen[v] = true;
        self.touched.push(v);
        self.queue.clear();
        self.queue.push_back(v);
        let mut reached = 0;
        while let Some(x) = self.queue.pop_front() {
            for &(w, _) in graph.out(x) {
                if !on_path[w] && !self.seen[w] {
                    self.seen[w] = true;
                    self.touched.push(w);
                    reached += 1;
                    self.queue.push_back(w);
                }
            }
            if reached >= wanted {
                break;
            }
        }
        // (At most max_depth nodes counted: a state each.)
        if reached >= self.left {
            self.done = true;
            return true;
        }
        self.left -= reached;
        if reached < wanted {
            return false;
        }
        // The plain enumeration below v (no path there): every simple path on, stopping where
        // it ends (an edge into the end leads nowhere), cut at max_depth.
        let mut stack: Vec<(usize, usize)> = vec![(v, 0)];
        on_path[v] = true;
        let mut cut = false;
        while let Some(&(x, next)) = stack.last() {
            if depth + stack.len() > max_depth {
                if graph.out(x).iter().any(|&(w, _)| !on_path[w]) {
                    cut = true;
                    break;
                }
            } else if let Some(&(w, c)) = graph.out(x).get(next) {
                if let Some(top) = stack.last_mut() {
                    top.1 += 1;
                }
                if on_path[w] || reach.ends(w, c) {
                    continue;
                }
                if self.left == 0 {
                    self.done = true;
                    cut = true;
                    break;
                }
                self.left -= 1;
                on_path[w] = true;
                stack.push((w, 0));
                continue;
            }
            on_path[x] = false;
            stack.pop();
        }
        for &(x, _) in &stack {
            on_path[x] = false;
        }
        cut
    }
}

/// The communications as edges: what every search over one architecture shares.
#[derive(Debug, Clone)]
pub(crate) struct Graph {
    /// Out-edges, node after node: (node, communication), each node's sorted by (node name,
    /// topic) for a stable order; node v's from `out_at[v]` to `out_at[v + 1]`.
    out: Vec<(usize, usize)>,
    out_at: Vec<usize>,
    /// In-edges, node after node: (node, communication).
    into: Vec<(usize, usize)>,
    into_at: Vec<usize>,
    /// The strongly connected component of each node: a route from a node can meet a node of
    /// the path that leads to it only in its component.
    component: Vec<u32>,
}

impl Graph {
    /// The communications as edges, for many searches over one architecture.
    pub(crate) fn of(arch: &Architecture) -> Graph {
        let n = arch.nodes.len();
        // Each node's rank by name (equal names, equal ranks): the out-edges in (node name,
        // topic) order, names compared once.
        let mut by_name: Vec<usize> = (0..n).collect();
        by_name.sort_by(|a, b| arch.nodes[*a].name.cmp(&arch.nodes[*b].name));
        let mut rank = vec![0; n];
        for (i, w) in by_name.windows(2).enumerate() {
            rank[w[1]] = if arch.nodes[w[1]].name == arch.nodes[w[0]].name { rank[w[0]] } else { i + 1 };
        }
        let edges = |end: fn(&Communication) -> usize, other: fn(&Communication) -> usize| {
            let mut at = vec![0; n + 1];
            for c in &arch.communications {
                at[end(c) + 1] += 1;
            }
            for v in 0..n {
                at[v + 1] += at[v];
            }
            let mut fill = at.clone();
            let mut list = vec![(0, 0); arch.communications.len()];
            for (ci, c) in arch.communications.iter().enumerate() {
                list[fill[end(c)]] = (other(c), ci);
                fill[end(c)] += 1;
            }
            (list, at)
        };
        let (mut out, out_at) = edges(|c| c.from, |c| c.to);
        let (into, into_at) = edges(|c| c.to, |c| c.from);
        for v in 0..n {
            out[out_at[v]..out_at[v + 1]].sort_by(|a, b| {
                rank[a.0]
                    .cmp(&rank[b.0])
                    .then_with(|| arch.communications[a.1].topic.cmp(&arch.communications[b.1].topic))
            });
        }
        let mut g = Graph { out, out_at, into, into_at, component: Vec::new() };
        g.component = g.components();
        g
    }

    /// The part of the system each node is in: nodes joined by communications, whatever their
    /// direction, are in one part (a path never leaves its part).
    pub(crate) fn parts(&self) -> Vec<u32> {
        let n = self.out_at.len() - 1;
        let mut parent: Vec<u32> = (0..n as u32).collect();
        fn root(parent: &mut [u32], mut v: u32) -> u32 {
            while parent[v as usize] != v {
                parent[v as usize] = parent[parent[v as usize] as usize];
                v = parent[v as usize];
            }
            v
        }
        for v in 0..n {
            for &(w, _) in self.out(v) {
                let (a, b) = (root(&mut parent, v as u32), root(&mut parent, w as u32));
                if a != b {
                    parent[a.max(b) as usize] = a.min(b);
                }
            }
        }
        (0..n as u32).map(|v| root(&mut parent, v)).collect()
    }

    /// The strongly connected component of each node (Tarjan's algorithm, iterative).
    fn components(&self) -> Vec<u32> {
        const NONE: u32 = u32::MAX;
        let n = self.out_at.len() - 1;
        let (mut index, mut low, mut component) = (vec![NONE; n], vec![0u32; n], vec![NONE; n]);
        let (mut on_stack, mut stack) = (vec![false; n], Vec::new());
        let (mut next_index, mut next_component) = (0u32, 0u32);
        let mut calls: Vec<(usize, usize)> = Vec::new();
        for root in 0..n {
            if index[root] != NONE {
                continue;
            }
            calls.push((root, 0));
            while let Some(&(v, i)) = calls.last() {
                if i == 0 {
                    (index[v], low[v]) = (next_index, next_index);
                    next_index += 1;
                    stack.push(v);
                    on_stack[v] = true;
                }
                if let Some(&(w, _)) = self.out(v).get(i) {
                    if let Some(top) = calls.last_mut() {
                        top.1 += 1;
                    }
                    if index[w] == NONE {
                        calls.push((w, 0));
                    } else if on_stack[w] {
                        low[v] = low[v].min(index[w]);
                    }
                    continue;
                }
                calls.pop();
                if let Some(&(u, _)) = calls.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        component[w] = next_component;
                        if w == v {
                            break;
                        }
                    }
                    next_component += 1;
                }
            }
        }
        component
    }

    /// The out-edges of `v`: (node, communication).
    fn out(&self, v: usize) -> &[(usize, usize)] {
        &self.out[self.out_at[v]..self.out_at[v + 1]]
    }

    /// The in-edges of `v`: (node, communication).
    fn into(&self, v: usize) -> &[(usize, usize)] {
        &self.into[self.into_at[v]..self.into_at[v + 1]]
    }
}

/// A waypoint: a node, or a topic as a flag per communication.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Waypoint {
    Node(usize),
    Topic(Vec<bool>),
}

/// How near each node is to the end of a search: per (node, waypoints passed), the fewest
/// nodes still to add to end the path with every waypoint passed, by a search backwards from
/// the end (a lower bound for a simple path, which cannot go back through its own nodes).
/// Also the end and the waypoints, topics as flags per communication, to test them cheaply.
#[derive(Debug, Clone)]
pub(crate) struct Reach {
    n: usize,
    waypoints: Vec<Waypoint>,
    end_node: Option<usize>,
    /// The end topic: a flag per communication.
    end_topic: Option<Vec<bool>>,
    /// The edges that end a path: (from, to, communication).
    ending: Vec<(usize, usize, usize)>,
    /// Per waypoints passed k and node v, at `k * n + v`: nodes still to add, at least 1
    /// ([`Reach::NONE`], 0: the end cannot be reached; zero, so that a fresh table is memory
    /// the system gives zeroed, touched only where the search backwards goes).
    need: Vec<u32>,
}

impl Reach {
    const NONE: u32 = 0;

    /// How near each node is to the end `to` through the waypoints `through` ([`Reach`]), for
    /// every search with that end and those waypoints.
    pub(crate) fn new(arch: &Architecture, graph: &Graph, through: &[Endpoint], to: &Endpoint) -> Reach {
        // A topic as a flag per communication.
        let on = |t: &str| arch.communications.iter().map(|c| c.topic == t).collect::<Vec<bool>>();
        let waypoints = through
            .iter()
            .map(|w| match w {
                Endpoint::Node(v) => Waypoint::Node(*v),
                Endpoint::Topic(t) => Waypoint::Topic(on(t)),
            })
            .collect();
        let (end_node, end_topic) = match to {
            Endpoint::Node(v) => (Some(*v), None),
            Endpoint::Topic(t) => (None, Some(on(t))),
        };
        // The edges that end a path: into the end node, or on the end topic.
        let ending = match (end_node, &end_topic) {
            (Some(v), _) => graph.into(v).iter().map(|&(u, c)| (u, v, c)).collect(),
            (_, Some(on)) => (0..arch.communications.len())
                .filter(|&c| on[c])
                .map(|c| (arch.communications[c].from, arch.communications[c].to, c))
                .collect(),
            _ => Vec::new(),
        };
        let mut r = Reach { n: arch.nodes.len(), waypoints, end_node, end_topic, ending, need: Vec::new() };
        let mut need = Vec::new();
        r.distances(graph, None, &mut need, &mut VecDeque::new());
        r.need = need;
        r
    }

    /// Whether arriving at `v` over communication `c` ends the path (the end node, or the last
    /// hop on the end topic).
    fn ends(&self, v: usize, c: usize) -> bool {
        self.end_node == Some(v) || self.end_topic.as_ref().is_some_and(|on| on[c])
    }

    /// Waypoints passed after `k` on being at node `v` (a node waypoint).
    fn advance_node(&self, mut k: usize, v: usize) -> usize {
        if matches!(self.waypoints.get(k), Some(Waypoint::Node(w)) if *w == v) {
            k += 1;
        }
        k
    }

    /// Waypoints passed after `k` on arriving at `v` over communication `c`: the topic
    /// waypoint next, then the node waypoint next (each where the path first can pass it).
    fn advance(&self, mut k: usize, c: usize, v: usize) -> usize {
        if matches!(self.waypoints.get(k), Some(Waypoint::Topic(on)) if on[c]) {
            k += 1;
        }
        self.advance_node(k, v)
    }

    /// The fewest nodes still to add from `v`, `k` waypoints passed; None: the end cannot be
    /// reached.
    fn need(&self, v: usize, k: usize) -> Option<usize> {
        let d = self.need[k * self.n + v];
        (d != Reach::NONE).then_some(d as usize)
    }

    /// Breadth-first backwards over the states (node, waypoints passed) from the edges that
    /// end the path with every waypoint passed: into `need`, the fewest nodes still to add
    /// from each state, leaving out the nodes `blocked` marks. An edge into the end with
    /// waypoints left leads nowhere (the path stops there).
    fn distances(
        &self,
        graph: &Graph,
        blocked: Option<&[bool]>,
        need: &mut Vec<u32>,
        queue: &mut VecDeque<(usize, usize)>,
    ) {
        let (n, stages) = (self.n, self.waypoints.len() + 1);
        let free = |v: usize| blocked.is_none_or(|b| !b[v]);
        if need.capacity() == 0 {
            *need = vec![Reach::NONE; stages * n];
        } else {
            need.clear();
            need.resize(stages * n, Reach::NONE);
        }
        queue.clear();
        for &(u, v, c) in &self.ending {
            if !free(u) || !free(v) {
                continue;
            }
            for k in 0..stages {
                if self.advance(k, c, v) == stages - 1 && need[k * n + u] == Reach::NONE {
                    need[k * n + u] = 1;
                    queue.push_back((u, k));
                }
            }
        }
        while let Some((v, k2)) = queue.pop_front() {
            let d = need[k2 * n + v] + 1;
            for &(u, c) in graph.into(v) {
                if !free(u) || self.ends(v, c) {
                    continue;
                }
                for k in 0..=k2 {
                    if self.advance(k, c, v) == k2 && need[k * n + u] == Reach::NONE {
                        need[k * n + u] = d;
                        queue.push_back((u, k));
                    }
                }
            }
        }
    }
}

/// A route from a node to the end that avoids the path, found greedily.
struct Route {
    /// The nodes of the route being tried (those equal to `stamp`).
    mark: Vec<u32>,
    stamp: u32,
}

impl Route {
    /// Whether, from `v` with `k` waypoints passed and `d` nodes still to add by `reach`, a
    /// route of exactly `d` more nodes ends the path avoiding `on_path` and itself: each step
    /// to the first node whose distance is one less. Then the path has a simple continuation
    /// that short; if not found, there may still be a longer one.
    fn exists(&mut self, graph: &Graph, reach: &Reach, on_path: &[bool], v: usize, k: usize, d: usize) -> bool {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.mark.iter_mut().for_each(|m| *m = 0);
            self.stamp = 1;
        }
        let (mut u, mut k, mut d) = (v, k, d);
        self.mark[u] = self.stamp;
        let all = reach.waypoints.len();
        'steps: loop {
            for &(w, c) in graph.out(u) {
                if on_path[w] || self.mark[w] == self.stamp {
                    continue;
                }
                let k2 = reach.advance(k, c, w);
                if reach.ends(w, c) {
                    if d == 1 && k2 == all {
                        return true;
                    }
                    continue;
                }
                if d > 1 && reach.need(w, k2) == Some(d - 1) {
                    self.mark[w] = self.stamp;
                    (u, k, d) = (w, k2, d - 1);
                    continue 'steps;
                }
            }
            return false;
        }
    }
}
