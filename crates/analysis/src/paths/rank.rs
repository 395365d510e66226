//! Paths ranked by their latency, and the longest paths between a system's sources (nodes
//! whose timers publish) and sinks (subscriptions whose callbacks publish nothing).

use super::arch::{Architecture, Crossing};
use super::index::PathIndex;
use super::records::PathCounts;
use super::search::{search, search_on, Graph, Reach, SearchLimits, SearchOutcome};
use super::spec::{Endpoint, PathOptions, PathSpec};
use crate::link::View;
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
    /// How the records went (in the JSON, its fields beside these).
    #[serde(flatten)]
    pub counts: PathCounts,
    /// The nodes along the path that declared the link it follows through them (message links).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub declared: Vec<Crossing>,
    /// The nodes along the path that it crosses through a service call.
    pub services: Vec<Crossing>,
}

/// The paths, each followed message by message, by mean latency (longest first; paths no
/// message went the whole way last, the one with more hops first). A path the trace cannot
/// follow is left out. The paths are followed on the index's threads ([`PathIndex::set_jobs`]).
pub fn rank(index: &PathIndex, arch: &Architecture, paths: Vec<PathSpec>, opt: PathOptions) -> Vec<RankedPath> {
    let follow = |p: PathSpec| {
        let r = index.summary(arch, &p, opt).ok()?;
        let (declared, services) = notable(arch, &p);
        Some(RankedPath { label: p.label(), path: p, latency: r.latency, counts: r.counts, declared, services })
    };
    let mut out: Vec<RankedPath> =
        rostrace_threads::map_in_order(index.jobs, paths, follow).into_iter().flatten().collect();
    by_latency(&mut out);
    out
}

/// The paths followed over a streamed analysis ([`super::PathStream`]) in `arch`, ranked as
/// [`rank`] ranks them.
pub fn rank_streamed(arch: &Architecture, paths: Vec<(PathSpec, super::StreamedPath)>) -> Vec<RankedPath> {
    let mut out: Vec<RankedPath> = paths
        .into_iter()
        .map(|(p, s)| {
            let (declared, services) = notable(arch, &p);
            RankedPath { label: p.label(), path: p, latency: s.latency, counts: s.counts, declared, services }
        })
        .collect();
    by_latency(&mut out);
    out
}

/// Longest mean latency first; paths no message went the whole way last, the one with more
/// hops first.
fn by_latency(out: &mut [RankedPath]) {
    out.sort_by(|a, b| {
        (b.latency.count > 0)
            .cmp(&(a.latency.count > 0))
            .then(b.latency.mean.total_cmp(&a.latency.mean))
            .then(b.path.nodes.len().cmp(&a.path.nodes.len()))
    });
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
    /// Some searches stopped at their limits (paths, depth, or work: states expanded).
    pub truncated: bool,
    /// States expanded by the searches ([`SearchOutcome::expanded`] and `probed`), in all.
    #[serde(skip)]
    pub expanded: usize,
}

/// The `top` longest paths from a source's timer-published topic to a sink's subscription,
/// following at most `limits.max_paths` paths per (source, sink) and `budget` in all, each
/// search expanding at most `limits.max_expansions` states.
pub fn longest_paths(
    index: &PathIndex,
    arch: &Architecture,
    limits: SearchLimits,
    budget: usize,
    top: usize,
    opt: PathOptions,
) -> LongestPaths {
    longest_paths_within(index, arch, limits, budget, usize::MAX, top, opt)
}

/// [`longest_paths`], its searches expanding at most `expansions` states in all (then it
/// stops, `truncated`): bounded work however many (source, sink) pairs the system has.
pub fn longest_paths_within(
    index: &PathIndex,
    arch: &Architecture,
    limits: SearchLimits,
    budget: usize,
    expansions: usize,
    top: usize,
    opt: PathOptions,
) -> LongestPaths {
    let (found, mut out) = longest_candidates(arch, limits, budget, expansions);
    let mut ranked = rank(index, arch, found, opt);
    ranked.truncate(top);
    out.paths = ranked;
    out
}

/// The paths [`longest_paths_within`] follows: those its searches find between the sources
/// and sinks of `arch`, and what was searched (its `paths` empty).
pub(crate) fn longest_candidates(
    arch: &Architecture,
    limits: SearchLimits,
    budget: usize,
    expansions: usize,
) -> (Vec<PathSpec>, LongestPaths) {
    let (sources, sinks) = (arch.sources(), arch.sinks());
    let mut out = LongestPaths { sources: sources.len(), sinks: sinks.len(), ..Default::default() };
    let mut found: Vec<PathSpec> = Vec::new();
    let graph = Graph::of(arch);
    // A source reaches only the sinks of its part of the system: the others are never searched.
    let parts = graph.parts();
    let mut sinks_of: std::collections::HashMap<u32, Vec<usize>> = Default::default();
    for (j, (dst, _)) in sinks.iter().enumerate() {
        sinks_of.entry(parts[*dst]).or_default().push(j);
    }
    // How near each node is to each sink, made at the sink's first search and dropped once
    // the last source of its part was searched (memory: the sinks of the parts being searched,
    // not of the whole system).
    let mut sources_left: std::collections::HashMap<u32, usize> = Default::default();
    for (src, _) in &sources {
        *sources_left.entry(parts[*src]).or_default() += 1;
    }
    let mut reach: Vec<Option<Reach>> = vec![None; sinks.len()];
    let none = Vec::new();
    'all: for (src, first_topics) in &sources {
        let part = parts[*src];
        let in_part = sinks_of.get(&part).unwrap_or(&none);
        let left = sources_left.get_mut(&part).expect("counted");
        *left -= 1;
        let last_of_part = *left == 0;
        for &j in in_part {
            let (dst, last_topics) = &sinks[j];
            if src == dst {
                continue;
            }
            if out.expanded >= expansions {
                out.truncated = true;
                break 'all;
            }
            let reach = reach[j].get_or_insert_with(|| Reach::new(arch, &graph, &[], &Endpoint::Node(*dst)));
            let limits =
                SearchLimits { max_expansions: limits.max_expansions.min(expansions - out.expanded), ..limits };
            // Whether a branch was cut at the depth matters only while nothing else stopped.
            let depth_flag = !out.truncated;
            let from = Endpoint::Node(*src);
            let outcome: SearchOutcome = search_on(arch, &graph, reach, &from, limits, depth_flag, |p| {
                let first_ok = p.topics.first().is_some_and(|t| first_topics.contains(t));
                let last_ok = p.topics.last().is_some_and(|t| last_topics.contains(t));
                if first_ok && last_ok {
                    found.push(p);
                }
                found.len() < budget
            });
            out.expanded += outcome.expanded + outcome.probed;
            out.truncated |= outcome.truncated_paths || outcome.truncated_depth || outcome.truncated_work;
            if found.len() >= budget {
                out.truncated = true;
                break 'all;
            }
        }
        if last_of_part {
            for &j in in_part {
                reach[j] = None;
            }
        }
    }
    out.searched = found.len();
    (found, out)
}

/// The ten longest paths of an analysis as `rostrace analyze` reports them: between its
/// sources and sinks, keeping those `keep` accepts, with bounded work (at most 20 paths per
/// (source, sink) and 300 in all are followed; each search expands at most 100,000 states and
/// all of them 2,000,000), on `jobs` threads (0: one per core).
pub fn longest_of<'a>(an: impl Into<View<'a>>, keep: impl Fn(&PathSpec) -> bool, jobs: usize) -> LongestPaths {
    longest_with_architecture(an, keep, jobs).0
}

/// [`longest_of`], and the architecture it searched (kept in the analysis).
pub fn longest_with_architecture<'a>(
    an: impl Into<View<'a>>,
    keep: impl Fn(&PathSpec) -> bool,
    jobs: usize,
) -> (LongestPaths, Architecture) {
    let an = an.into();
    let arch = Architecture::from_analysis(an);
    let mut index = PathIndex::new(an);
    index.set_jobs(jobs);
    let (found, mut lp) = analyze_candidates(&arch);
    lp.paths = rank(&index, &arch, found, PathOptions::default());
    (analyze_top(lp, keep), arch)
}

/// The paths `rostrace analyze` follows for its longest paths ([`longest_of`]), and what was
/// searched.
pub(crate) fn analyze_candidates(arch: &Architecture) -> (Vec<PathSpec>, LongestPaths) {
    let limits = SearchLimits { max_depth: 15, max_paths: 20, max_expansions: 100_000 };
    longest_candidates(arch, limits, 300, 2_000_000)
}

/// The ten longest of `lp`'s ranked paths that `keep` accepts: `rostrace analyze`'s.
pub(crate) fn analyze_top(mut lp: LongestPaths, keep: impl Fn(&PathSpec) -> bool) -> LongestPaths {
    lp.paths.retain(|p| keep(&p.path));
    lp.paths.truncate(10);
    lp
}

/// A search for the paths between two nodes or topics ([`find`]).
#[derive(Debug, Clone)]
pub struct Query<'a> {
    /// Where the paths start: a node or a topic.
    pub from: &'a str,
    /// Nodes or topics each path goes through, in order.
    pub through: &'a [String],
    /// Where the paths end.
    pub to: &'a str,
    /// How the three are named in an error (`--from`, `--through`, `--to` on the command line).
    pub labels: [&'a str; 3],
    /// The search's limits.
    pub limits: SearchLimits,
    /// Where each path starts and ends in its first and last node.
    pub options: PathOptions,
}

/// The paths a [`Query`] found, ranked by mean latency, and where the search stopped.
#[derive(Debug, Clone)]
pub struct Found {
    /// The paths, longest mean latency first.
    pub ranked: Vec<RankedPath>,
    /// Whether the search stopped at a limit.
    pub outcome: SearchOutcome,
}

/// The one path search of `rostrace paths` and Python's `Paths.paths`: the paths of `q` in
/// `arch` (the architecture of `an`, possibly completed from a file), each followed through the
/// analysis's messages on `jobs` threads (0: one per core) and ranked. An error when a name of
/// `q` is not in the architecture.
pub fn find<'a>(an: impl Into<View<'a>>, arch: &Architecture, q: &Query<'_>, jobs: usize) -> Result<Found, String> {
    let (found, outcome) = search_query(arch, q)?;
    let mut index = PathIndex::new(an);
    index.set_jobs(jobs);
    Ok(Found { ranked: rank(&index, arch, found, q.options), outcome })
}

/// The paths of `q` in `arch`, not followed yet (what [`find`] follows and ranks).
pub fn search_query(arch: &Architecture, q: &Query<'_>) -> Result<(Vec<PathSpec>, SearchOutcome), String> {
    let [from_label, through_label, to_label] = q.labels;
    let from = arch.resolve(q.from, from_label)?;
    let to = arch.resolve(q.to, to_label)?;
    let through = q.through.iter().map(|t| arch.resolve(t, through_label)).collect::<Result<Vec<_>, _>>()?;
    let mut found = Vec::new();
    let outcome = search(arch, &from, &through, &to, q.limits, |p| {
        found.push(p);
        true
    });
    Ok((found, outcome))
}

/// The crossings of `p` a ranking names: through a declared link, and through a service call.
fn notable(arch: &Architecture, p: &PathSpec) -> (Vec<Crossing>, Vec<Crossing>) {
    arch.crossings(p)
        .into_iter()
        .filter(|c| c.path.link.is_some() || c.path.service.is_some())
        .partition(|c| c.path.link.is_some())
}
