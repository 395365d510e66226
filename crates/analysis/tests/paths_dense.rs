//! The path search where many nodes share topics (`/tf`, `/diagnostics`: cliques), whose simple
//! paths grow exponentially with the nodes: branches that cannot end within the depth are not
//! entered, a search stops at its work budget and says so, and the paths found are those of the
//! plain depth-first enumeration (written out here as it was, and compared on random systems).
//! The work is asserted as states expanded, never as time: the plain search expands about
//! e * 13! (1.7e10) states to learn that a 14-node clique does not reach a sink.

#[path = "support/system.rs"]
mod system;

#[path = "support/dense.rs"]
mod dense;

use dense::Dense;
use rostrace_analysis::paths::arch::{ArchNode, ArchPublish, ArchSubscribe};
use rostrace_analysis::paths::{
    longest_of, longest_paths, rank, search, Architecture, Endpoint, PathIndex, PathOptions, PathSpec, SearchLimits,
};

/// The search as it was before branches were pruned: every simple path, depth-first, edges in
/// (node name, topic) order; the paths in order, whether it stopped at `max_paths`, whether it
/// cut a branch at `max_depth`, and the states it expanded.
fn plain(
    arch: &Architecture,
    from: &Endpoint,
    through: &[Endpoint],
    to: &Endpoint,
    max_depth: usize,
    max_paths: usize,
) -> (Vec<PathSpec>, bool, bool, usize) {
    let mut out: Vec<Vec<(usize, usize)>> = vec![Vec::new(); arch.nodes.len()];
    for (ci, c) in arch.communications.iter().enumerate() {
        out[c.from].push((c.to, ci));
    }
    for v in &mut out {
        v.sort_by(|a, b| {
            (arch.nodes[a.0].name.as_str(), arch.communications[a.1].topic.as_str())
                .cmp(&(arch.nodes[b.0].name.as_str(), arch.communications[b.1].topic.as_str()))
        });
    }
    let passes = |stack: &[(usize, usize)], comms: &[usize]| {
        let mut k = 0;
        for (i, s) in stack.iter().enumerate() {
            if i > 0 {
                if let Some(Endpoint::Topic(t)) = through.get(k) {
                    if &arch.communications[comms[i - 1]].topic == t {
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
    };
    let starts: Vec<(usize, Option<&str>)> = match from {
        Endpoint::Node(n) => vec![(*n, None)],
        Endpoint::Topic(t) => {
            let mut v: Vec<usize> = arch.communications.iter().filter(|c| &c.topic == t).map(|c| c.from).collect();
            v.sort_by(|a, b| arch.nodes[*a].name.cmp(&arch.nodes[*b].name));
            v.dedup();
            v.into_iter().map(|n| (n, Some(t.as_str()))).collect()
        }
    };
    let (mut paths, mut truncated, mut depth, mut expanded) = (Vec::new(), false, false, 0);
    let mut on_path = vec![false; arch.nodes.len()];
    'starts: for (start, first_topic) in starts {
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        let mut comms: Vec<usize> = Vec::new();
        on_path[start] = true;
        expanded += 1;
        while let Some(&(u, next0)) = stack.last() {
            let at_end = stack.len() > 1
                && match to {
                    Endpoint::Node(n) => u == *n,
                    Endpoint::Topic(t) => comms.last().is_some_and(|&c| &arch.communications[c].topic == t),
                };
            if at_end && next0 == 0 && passes(&stack, &comms) {
                if paths.len() >= max_paths {
                    truncated = true;
                    break 'starts;
                }
                paths.push(PathSpec {
                    nodes: stack.iter().map(|s| arch.nodes[s.0].name.clone()).collect(),
                    topics: comms.iter().map(|&c| arch.communications[c].topic.clone()).collect(),
                });
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
            if on_path[v] || (stack.len() == 1 && first_topic.is_some_and(|t| arch.communications[c].topic != t)) {
                continue;
            }
            if stack.len() >= max_depth {
                depth = true;
                continue;
            }
            on_path[v] = true;
            stack.push((v, 0));
            comms.push(c);
            expanded += 1;
        }
        on_path.iter_mut().for_each(|x| *x = false);
    }
    (paths, truncated, depth, expanded)
}

/// A small random number generator (xorshift), for reproducible random systems.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// An architecture of nodes publishing and subscribing to the given topics.
fn arch_of(nodes: &[(String, Vec<String>, Vec<String>)]) -> Architecture {
    let mut arch = Architecture::default();
    for (name, publishes, subscribes) in nodes {
        arch.nodes.push(ArchNode {
            name: name.clone(),
            callbacks: Vec::new(),
            groups: Vec::new(),
            publishes: publishes
                .iter()
                .map(|t| ArchPublish { topic: t.clone(), callbacks: Vec::new(), publishers: Vec::new() })
                .collect(),
            subscribes: subscribes.iter().map(|t| ArchSubscribe { topic: t.clone(), callback: None }).collect(),
            paths: Vec::new(),
        });
    }
    arch.connect();
    arch
}

/// On random systems (up to 10 nodes, several topics between two nodes, self-loops, cycles),
/// from and to nodes or topics, through up to two waypoints, at random depths, path counts
/// and work budgets: the paths found are the plain search's, in its order, with its
/// `truncated_paths` and `truncated_depth`, never expanding more; under a work budget, the
/// first of them.
#[test]
fn pruned_search_finds_the_plain_search_s_paths() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let names = ["/q", "/b", "/k", "/a", "/z", "/m", "/c", "/x", "/d", "/p"];
    let (mut compared, mut with_paths, mut cut_at_depth, mut budget_cut) = (0, 0, 0, 0);
    for _ in 0..3000 {
        let n = 2 + rng.below(9);
        let topics = 1 + rng.below(5);
        let t = |i: usize| format!("/t{i}");
        let nodes: Vec<(String, Vec<String>, Vec<String>)> = (0..n)
            .map(|i| {
                let p = (0..topics).filter(|_| rng.chance(35)).map(t).collect();
                let s = (0..topics).filter(|_| rng.chance(45)).map(t).collect();
                (names[i].to_string(), p, s)
            })
            .collect();
        let arch = arch_of(&nodes);
        let endpoint = |rng: &mut Rng| {
            if rng.chance(70) {
                Endpoint::Node(rng.below(n))
            } else {
                Endpoint::Topic(t(rng.below(topics + 1)))
            }
        };
        let from = endpoint(&mut rng);
        let to = endpoint(&mut rng);
        let through: Vec<Endpoint> = (0..rng.below(3)).map(|_| endpoint(&mut rng)).collect();
        let max_depth = 2 + rng.below(7);
        let max_paths = 1 + rng.below(60);
        let (want, want_truncated, want_depth, plain_expanded) =
            plain(&arch, &from, &through, &to, max_depth, max_paths);
        let what =
            format!("{nodes:?} from {from:?} through {through:?} to {to:?}, depth {max_depth}, {max_paths} paths");
        let limits = SearchLimits { max_depth, max_paths, max_expansions: usize::MAX };
        let mut got = Vec::new();
        let out = search(&arch, &from, &through, &to, limits, |p| {
            got.push(p);
            true
        });
        assert_eq!(got, want, "{what}");
        assert_eq!(
            (out.paths, out.truncated_paths, out.truncated_depth, out.truncated_work),
            (want.len(), want_truncated, want_depth, false),
            "{what}"
        );
        assert!(out.expanded <= plain_expanded, "{what}: {} > {plain_expanded}", out.expanded);
        compared += 1;
        with_paths += usize::from(!want.is_empty());
        cut_at_depth += usize::from(want_depth);
        // A work budget gives the first paths, and says when it stopped the search.
        let budget = 1 + rng.below(8);
        let mut cut = Vec::new();
        let out = search(&arch, &from, &through, &to, SearchLimits { max_expansions: budget, ..limits }, |p| {
            cut.push(p);
            true
        });
        assert!(out.expanded <= budget, "{what}");
        assert_eq!(cut[..], want[..cut.len()], "{what}");
        if out.truncated_work {
            assert_eq!(out.expanded, budget, "{what}");
            budget_cut += 1;
        } else {
            assert_eq!((cut.len(), out.truncated_paths), (want.len(), want_truncated), "{what}");
        }
    }
    assert!(
        with_paths > 500 && cut_at_depth > 300 && budget_cut > 300,
        "{compared} compared, {with_paths} with paths, {cut_at_depth} cut at the depth, {budget_cut} at the budget"
    );
}

/// A 14-node clique (each node subscribing to every other's topic) between a source and a
/// sink, with a sink nothing in it reaches; analysed from its trace.
fn clique() -> (Dense, rostrace_analysis::Analysis) {
    let d = Dense { nodes: 14, fan_in: 13, sources: 1, sinks: 1, lonely: true, rounds: 16 };
    let tmp = rostrace_testkit::TempDir::new("paths-dense");
    let root = tmp.join("trace");
    d.write(&root);
    let (set, errors) = rostrace_ctf::TraceSet::open(&[&root]);
    assert!(errors.is_empty(), "{errors:?}");
    (d, rostrace_analysis::analyze_traces(&set, |_, _| {}))
}

/// Longest paths through a 14-node clique (the plain search takes minutes at 12 nodes): the
/// analysis expands a few hundred states, finds the plain search's 20 paths from the source to
/// the sink (which it finds quickly) and ranks them as it would; the sink the clique does not
/// reach costs one state.
#[test]
fn longest_paths_through_a_clique() {
    let (d, a) = clique();
    let arch = Architecture::from_analysis(&a);
    let name = |i: usize| arch.nodes[i].name.as_str();
    let sources: Vec<&str> = arch.sources().iter().map(|s| name(s.0)).collect();
    let sinks: Vec<&str> = arch.sinks().iter().map(|s| name(s.0)).collect();
    assert_eq!((sources, sinks), (vec!["/src0"], vec!["/lonely", "/sink0"]));
    assert_eq!(arch.communications.len(), 14 * 13 + 3);
    let (src, sink, lonely) =
        (arch.node("/src0").unwrap(), arch.node("/sink0").unwrap(), arch.node("/lonely").unwrap());
    assert_eq!(Dense::node(d.feeding(0)), "/n013");

    // The sink the clique does not reach: nothing entered past the source. The plain search
    // went down the clique, cutting branches at the depth (a node 15 deep has /sink0 off the
    // path): a few states tell that.
    let limits = SearchLimits { max_depth: 15, max_paths: 20, ..SearchLimits::default() };
    let out = search(&arch, &Endpoint::Node(src), &[], &Endpoint::Node(lonely), limits, |_| true);
    assert_eq!((out.paths, out.expanded, out.truncated_depth, out.truncated_work), (0, 1, true, false));
    assert!(out.probed < 100, "{} states probed", out.probed);

    // The sink it reaches: the plain search's first 20 paths, each entered node on one.
    let (want, _, want_depth, _) = plain(&arch, &Endpoint::Node(src), &[], &Endpoint::Node(sink), 15, 20);
    assert_eq!(want.len(), 20);
    assert_eq!(want[0].nodes.len(), 15);
    let mut got = Vec::new();
    let out = search(&arch, &Endpoint::Node(src), &[], &Endpoint::Node(sink), limits, |p| {
        got.push(p);
        true
    });
    assert_eq!(got, want);
    assert_eq!((out.truncated_paths, out.truncated_depth, out.truncated_work), (true, want_depth, false));
    assert!(out.expanded + out.probed <= 21 * 15, "{} + {} states", out.expanded, out.probed);

    // As `rostrace analyze` searches: every source to every sink, the paths ranked.
    let lp = longest_of(&a, |_| true, 1);
    assert_eq!((lp.sources, lp.sinks, lp.searched), (1, 2, 20));
    assert!(lp.truncated, "20 paths a pair, more there");
    assert!(lp.expanded <= 100 + 21 * 15, "{} states", lp.expanded);
    let mut ranked = rank(&PathIndex::new(&a), &arch, want, PathOptions::default());
    ranked.truncate(10);
    let labels = |v: &[rostrace_analysis::paths::RankedPath]| v.iter().map(|p| p.label.clone()).collect::<Vec<_>>();
    assert_eq!(labels(&lp.paths), labels(&ranked));
    assert_eq!(lp.paths.len(), 10);
    assert!(lp.paths.iter().all(|p| p.path.nodes[0] == "/src0" && p.path.nodes.last().unwrap() == "/sink0"));
    assert!(lp.paths.iter().all(|p| p.counts.records > 0), "the paths are followed message by message");
}

/// The route to the sink goes through a node that is already on the path (the clique's exit,
/// entered first): the distances from the sink, blind to the path, let every clique node in;
/// the search must see that none of them leads anywhere now rather than enumerate the
/// clique's simple paths, and finds the one path.
#[test]
fn a_route_through_the_path_itself_is_no_route() {
    // /src -/s-> /x; /x publishes /tf (taken by 13 other nodes, which publish it too) and
    // /out (taken by /zz_sink only, after the clique's nodes in name order).
    let mut nodes = vec![
        ("/src".to_string(), vec!["/s".to_string()], vec![]),
        ("/x".to_string(), vec!["/tf".to_string(), "/out".to_string()], vec!["/s".to_string(), "/tf".to_string()]),
        ("/zz_sink".to_string(), vec![], vec!["/out".to_string()]),
    ];
    for i in 0..13 {
        nodes.push((format!("/c{i:02}"), vec!["/tf".to_string()], vec!["/tf".to_string()]));
    }
    let arch = arch_of(&nodes);
    let (src, sink) = (arch.node("/src").unwrap(), arch.node("/zz_sink").unwrap());
    let mut got = Vec::new();
    let out = search(&arch, &Endpoint::Node(src), &[], &Endpoint::Node(sink), SearchLimits::default(), |p| {
        got.push(p.label());
        true
    });
    assert_eq!(got, ["/src -/s-> /x -/out-> /zz_sink"]);
    // No branch reached 15 nodes with one more off the path (the clique and /x are 14).
    assert_eq!((out.expanded, out.truncated_depth, out.truncated_work), (3, false, false));
    assert!(out.probed <= 13 * 13, "{} states probed", out.probed);
    // Through a topic waypoint and to a topic: the same.
    let (through, to) = ([Endpoint::Topic("/s".into())], Endpoint::Topic("/out".into()));
    let out = search(&arch, &Endpoint::Node(src), &through, &to, SearchLimits::default(), |_| true);
    assert_eq!((out.paths, out.expanded, out.truncated_depth, out.truncated_work), (1, 3, false, false));
}

/// A work budget stops a search with more to explore, and says so; `longest_paths` reports
/// it as truncated.
#[test]
fn the_work_budget_stops_a_search_and_says_so() {
    let (_, a) = clique();
    let arch = Architecture::from_analysis(&a);
    let (src, sink) = (arch.node("/src0").unwrap(), arch.node("/sink0").unwrap());
    let limits = SearchLimits { max_depth: 15, max_paths: 20, max_expansions: 10 };
    let out = search(&arch, &Endpoint::Node(src), &[], &Endpoint::Node(sink), limits, |_| true);
    assert_eq!((out.expanded, out.truncated_work, out.truncated_paths), (10, true, false));
    let index = PathIndex::new(&a);
    let lp = longest_paths(&index, &arch, limits, 300, 10, PathOptions::default());
    assert!(lp.truncated);
    assert!(lp.expanded <= 10 + 100, "{} states", lp.expanded);
}
