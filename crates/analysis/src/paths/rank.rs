//! Paths ranked by their latency, and the longest paths between a system's sources (nodes
//! whose timers publish) and sinks (subscriptions whose callbacks publish nothing).

use super::arch::Architecture;
use super::latency::{PathIndex, PathOptions, PathSpec};
use super::search::{Endpoint, SearchLimits};
use crate::stats::Stats;
use serde::Serialize;

/// A path and how its messages went along it.
#[derive(Debug, Clone, Serialize)]
pub struct RankedPath {
    /// The path.
    pub path: PathSpec,
    /// CARET's form of the path.
    pub label: String,
    /// Latency of the messages that went the whole way (ns).
    pub latency: Stats,
    /// Records (messages of the first topic, more where a node republishes).
    pub records: usize,
    /// Records that went the whole way.
    pub complete: usize,
    /// Records dropped on the way.
    pub dropped: usize,
    /// Records still on the way when the trace ended.
    pub in_flight: usize,
}

/// The paths, each followed message by message, by mean latency (longest first; paths no
/// message went the whole way last, the one with more hops first). A path the trace cannot
/// follow is left out. The paths are followed on the index's threads ([`PathIndex::set_jobs`]).
pub fn rank(index: &PathIndex, arch: &Architecture, paths: Vec<PathSpec>, opt: PathOptions) -> Vec<RankedPath> {
    let follow = |p: PathSpec| {
        let r = index.summary(arch, &p, opt).ok()?;
        Some(RankedPath {
            label: p.label(),
            path: p,
            latency: r.latency,
            records: r.records,
            complete: r.complete,
            dropped: r.dropped,
            in_flight: r.in_flight,
        })
    };
    let mut out: Vec<RankedPath> = ctf::map_in_order(index.jobs, paths, follow).into_iter().flatten().collect();
    out.sort_by(|a, b| {
        (b.latency.count > 0)
            .cmp(&(a.latency.count > 0))
            .then(b.latency.mean.total_cmp(&a.latency.mean))
            .then(b.path.nodes.len().cmp(&a.path.nodes.len()))
    });
    out
}

/// What [`longest_paths`] searched.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LongestPaths {
    /// The paths found, longest first (at most the number asked for).
    pub paths: Vec<RankedPath>,
    /// Source nodes.
    pub sources: usize,
    /// Sink nodes.
    pub sinks: usize,
    /// Paths followed.
    pub searched: usize,
    /// Some searches stopped at their limits.
    pub truncated: bool,
}

impl Architecture {
    /// Sources: nodes with a timer callback that publishes, and the topics it publishes.
    pub fn sources(&self) -> Vec<(usize, Vec<String>)> {
        let mut v = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            let timers: Vec<&str> =
                n.callbacks.iter().filter(|c| c.kind == "timer_callback").map(|c| c.name.as_str()).collect();
            let topics: Vec<String> = n
                .publishes
                .iter()
                .filter(|p| p.callbacks.iter().any(|c| timers.contains(&c.as_str())))
                .map(|p| p.topic.clone())
                .collect();
            if !topics.is_empty() {
                v.push((i, topics));
            }
        }
        v
    }

    /// Sinks: nodes with a subscription whose callback publishes nothing, and those topics.
    pub fn sinks(&self) -> Vec<(usize, Vec<String>)> {
        let mut v = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            let topics: Vec<String> = n
                .subscribes
                .iter()
                .filter(|s| s.callback.as_ref().is_some_and(|c| !n.publishes.iter().any(|p| p.callbacks.contains(c))))
                .map(|s| s.topic.clone())
                .collect();
            if !topics.is_empty() {
                v.push((i, topics));
            }
        }
        v
    }
}

/// The `top` longest paths from a source's timer-published topic to a sink's subscription,
/// following at most `per_pair` paths per (source, sink) and `budget` in all.
pub fn longest_paths(
    index: &PathIndex,
    arch: &Architecture,
    limits: SearchLimits,
    budget: usize,
    top: usize,
    opt: PathOptions,
) -> LongestPaths {
    let (sources, sinks) = (arch.sources(), arch.sinks());
    let mut out = LongestPaths { sources: sources.len(), sinks: sinks.len(), ..Default::default() };
    let mut found: Vec<PathSpec> = Vec::new();
    let edges = arch.out_edges();
    'all: for (src, first_topics) in &sources {
        for (dst, last_topics) in &sinks {
            if src == dst {
                continue;
            }
            let outcome = arch.search_on(&edges, &Endpoint::Node(*src), &[], &Endpoint::Node(*dst), limits, |p| {
                let first_ok = p.topics.first().is_some_and(|t| first_topics.contains(t));
                let last_ok = p.topics.last().is_some_and(|t| last_topics.contains(t));
                if first_ok && last_ok {
                    found.push(p);
                }
                found.len() < budget
            });
            out.truncated |= outcome.truncated_paths || outcome.truncated_depth;
            if found.len() >= budget {
                out.truncated = true;
                break 'all;
            }
        }
    }
    out.searched = found.len();
    let mut ranked = rank(index, arch, found, opt);
    ranked.truncate(top);
    out.paths = ranked;
    out
}

/// The ten longest paths of an analysis as `rostrace analyze` reports them: between its
/// sources and sinks, keeping those `keep` accepts, with bounded work (at most 20 paths per
/// (source, sink) and 300 in all are followed), on `jobs` threads (0: one per core).
pub fn longest_of(an: &crate::Analysis, keep: impl Fn(&PathSpec) -> bool, jobs: usize) -> LongestPaths {
    let arch = Architecture::from_analysis(an);
    let mut index = PathIndex::new(an);
    index.set_jobs(jobs);
    let limits = SearchLimits { max_depth: 15, max_paths: 20 };
    let mut lp = longest_paths(&index, &arch, limits, 300, usize::MAX, Default::default());
    lp.paths.retain(|p| keep(&p.path));
    lp.paths.truncate(10);
    lp
}
