//! Two runs of a system compared (`rostrace diff BASE NEW`): per callback (durations), per
//! topic (publish → callback latency) and per end-to-end path (the longest paths of either run,
//! followed in both: the latency of each message that went the whole way), the change of p50,
//! p99, max and rate, with a Mann–Whitney U test on the per-run samples and an effect size, so
//! that noise and big-sample trivial shifts are not called a change.
//!
//! Callbacks are matched across runs by name (node, kind, topic or timer period, symbol), topics
//! by topic name, paths by their nodes' and topics' names: addresses and process ids differ
//! from run to run.
//!
//! ```no_run
//! let (base, _) = rostrace_ctf::TraceSet::open(&["base/"]);
//! let (new, _) = rostrace_ctf::TraceSet::open(&["new/"]);
//! let (a, b) = (rostrace_analysis::analyze_traces(&base, |_, _| {}), rostrace_analysis::analyze_traces(&new, |_, _| {}));
//! let d = rostrace_analysis::diff::diff(&a, &b, &rostrace_analysis::diff::Thresholds::default());
//! for c in d.changes.iter().filter(|c| c.significant) {
//!     println!("{} {} x{:.2} p={:.1e}", c.kind, c.name, c.median_ratio, c.p_value);
//! }
//! ```

mod mwu;

pub use mwu::{mann_whitney, MannWhitney};

use crate::paths::{PathIndex, PathSpec};
use crate::stats::Stats;
use crate::Analysis;
use serde::Serialize;
use std::collections::BTreeMap;

/// When a change counts: all three must hold.
#[derive(Debug, Clone, Serialize)]
pub struct Thresholds {
    /// The Mann–Whitney p-value below which the two samples differ (two-sided).
    pub alpha: f64,
    /// The least |Cliff's delta| (the share of pairs one way minus the other) that counts: a
    /// small p-value on big samples alone can be a trivial shift.
    pub min_delta: f64,
    /// The least relative change of the median that counts (0.1: 10 %).
    pub min_change: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds { alpha: 0.001, min_delta: 0.33, min_change: 0.1 }
    }
}

/// One matched callback, topic or path, in the two runs.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// `callback` (duration), `topic` (publish → callback start latency) or `path` (end-to-end
    /// latency of the messages that went the whole way).
    pub kind: &'static str,
    /// What it is, by name: `node timer 100ms symbol`, `node subscription /topic symbol`, `/topic`,
    /// `/node -/topic-> /node ...` (a path's label).
    pub name: String,
    /// The statistics in the base run.
    pub base: Stats,
    /// The statistics in the new run.
    pub new: Stats,
    /// Samples per second of trace in the base run.
    pub base_rate_hz: f64,
    /// Samples per second of trace in the new run.
    pub new_rate_hz: f64,
    /// New median over base median (1: no change).
    pub median_ratio: f64,
    /// The Mann–Whitney test of new against base.
    pub test: MannWhitney,
    /// Two-sided p-value (of `test`, repeated for readers of the JSON).
    pub p_value: f64,
    /// Cliff's delta: P(new > base) − P(new < base), in [−1, 1].
    pub cliff_delta: f64,
    /// Whether the change passes all of [`Thresholds`].
    pub significant: bool,
}

/// What is in one run only.
#[derive(Debug, Clone, Serialize)]
pub struct OnlyIn {
    /// `callback`, `topic` or `path`.
    pub kind: &'static str,
    /// Its name (as in [`Change::name`]).
    pub name: String,
    /// Samples in the run it is in.
    pub count: u64,
}

/// The comparison of two runs.
#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    /// The thresholds applied.
    pub thresholds: Thresholds,
    /// The matched callbacks, topics and paths, significant ones first, then by |Cliff's delta|.
    pub changes: Vec<Change>,
    /// In the base run only (gone).
    pub removed: Vec<OnlyIn>,
    /// In the new run only (appeared).
    pub added: Vec<OnlyIn>,
}

/// The samples of one analysis, by name: callback durations and topic latencies (paths are
/// followed in both runs apart, by [`path_samples`]).
fn samples(a: &Analysis) -> BTreeMap<(&'static str, String), Vec<i64>> {
    let mut out: BTreeMap<(&'static str, String), Vec<i64>> = BTreeMap::new();
    // The report's callbacks are keyed by (trace, vpid, address), as the runs' slots are; the
    // first report of a key names it (an address reused by another callback keeps the first).
    let mut names: BTreeMap<(u32, i64, u64), String> = BTreeMap::new();
    for c in &a.report.callbacks {
        names.entry((c.trace, c.vpid, c.address)).or_insert_with(|| callback_name(c));
    }
    for (r, _) in &a.runs {
        let (Some(d), Some(k)) = (r.duration(), a.slots.get(r.slot())) else { continue };
        if let Some(n) = names.get(&(k.0, k.1, k.2)) {
            out.entry(("callback", n.clone())).or_default().push(d);
        }
    }
    for f in &a.flows {
        if let Some(l) = f.pub_to_callback_ns {
            out.entry(("topic", f.topic.clone())).or_default().push(l);
        }
    }
    out
}

/// A callback's name across runs: node, kind, topic or timer period, symbol.
fn callback_name(c: &crate::CallbackReport) -> String {
    let what = match (&c.topic, c.timer_period_ns) {
        (Some(t), _) => t.clone(),
        (None, Some(p)) => format!("{}ms", p as f64 / 1e6),
        (None, None) => String::new(),
    };
    [c.node.as_str(), c.kind.as_str(), what.as_str(), c.symbol.as_str()]
        .iter()
        .filter(|s| !s.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The trace's length in seconds (at least 1 ns), for rates.
fn seconds(a: &Analysis) -> f64 {
    let r = &a.report;
    let (b, e) = match r.window_ns {
        Some((b, e)) if b != i64::MIN && e != i64::MAX => (b, e),
        _ => (r.begin_ns.unwrap_or(0), r.end_ns.unwrap_or(0)),
    };
    (e - b).max(1) as f64 / 1e9
}

/// The report's longest end-to-end paths of either run, by label, in the first run's order.
fn path_specs(runs: [&Analysis; 2]) -> Vec<&PathSpec> {
    let mut seen = std::collections::BTreeSet::new();
    let found = runs.into_iter().flat_map(|a| a.report.longest_paths.iter().flat_map(|lp| &lp.paths));
    found.filter(|p| seen.insert(p.label.clone())).map(|p| &p.path).collect()
}

/// The latencies of the records of `paths` that went the whole way in `a`, by label: the
/// analysis's own records of its longest paths, and those it did not rank among them followed
/// in it the same way; a path `a` cannot follow has none.
fn path_samples(a: &Analysis, paths: &[&PathSpec], out: &mut BTreeMap<(&'static str, String), Vec<i64>>) {
    let own: Vec<&PathSpec> = a.report.longest_paths.iter().flat_map(|lp| lp.paths.iter().map(|p| &p.path)).collect();
    let (mut index, mut arch) = (None, None);
    for p in paths {
        let followed;
        let rec = match own.iter().position(|o| o == p) {
            Some(i) => a.longest_path_records().get(i).and_then(Option::as_ref),
            None => {
                let arch = arch.get_or_insert_with(|| a.architecture());
                let index = index.get_or_insert_with(|| PathIndex::new(a));
                followed = index.records(arch, p, Default::default()).ok();
                followed.as_ref()
            }
        };
        if let Some(rec) = rec.filter(|r| r.complete() > 0) {
            out.insert(("path", p.label()), rec.latencies().into_iter().map(|(_, l)| l).collect());
        }
    }
}

/// Compares the run `new` with the run `base`.
pub fn diff(base: &Analysis, new: &Analysis, t: &Thresholds) -> Diff {
    let (mut sa, mut sb) = (samples(base), samples(new));
    let paths = path_specs([base, new]);
    path_samples(base, &paths, &mut sa);
    path_samples(new, &paths, &mut sb);
    let (ta, tb) = (seconds(base), seconds(new));
    let mut changes = Vec::new();
    let mut removed = Vec::new();
    for (key, mut x) in std::mem::take(&mut sa) {
        let Some(mut y) = sb.remove(&key) else {
            removed.push(OnlyIn { kind: key.0, name: key.1, count: x.len() as u64 });
            continue;
        };
        let test = mann_whitney(&x, &y);
        let (bs, ns) = (Stats::of(&mut x), Stats::of(&mut y));
        let median_ratio = if bs.p50 > 0 { ns.p50 as f64 / bs.p50 as f64 } else { f64::NAN };
        let practical = median_ratio.is_finite() && (median_ratio - 1.0).abs() >= t.min_change;
        let significant = test.p_value < t.alpha && test.cliff_delta.abs() >= t.min_delta && practical;
        changes.push(Change {
            kind: key.0,
            name: key.1,
            base_rate_hz: bs.count as f64 / ta,
            new_rate_hz: ns.count as f64 / tb,
            base: bs,
            new: ns,
            median_ratio,
            p_value: test.p_value,
            cliff_delta: test.cliff_delta,
            test,
            significant,
        });
    }
    let added = sb.into_iter().map(|(k, v)| OnlyIn { kind: k.0, name: k.1, count: v.len() as u64 }).collect();
    changes.sort_by(|a, b| {
        b.significant
            .cmp(&a.significant)
            .then(b.cliff_delta.abs().total_cmp(&a.cliff_delta.abs()))
            .then(a.name.cmp(&b.name))
    });
    Diff { thresholds: t.clone(), changes, removed, added }
}
