//! Two runs of a system compared (`rostrace diff BASE NEW`): per callback (durations), per
//! topic (publish → callback latency), per publisher → subscriber pair of nodes of a topic (the
//! same latencies, not pooled) and per end-to-end path (the longest paths of either run,
//! followed in both: the latency of each message that went the whole way), the change of p50,
//! p99, max and rate, with a Mann–Whitney U test on the per-run samples and an effect size, so
//! that noise and big-sample trivial shifts are not called a change.
//!
//! Callbacks are matched across runs by name (node, kind, topic or timer period, symbol), topics
//! by topic name, pairs and paths by their nodes' and topics' names: addresses and process ids differ
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
use crate::samples::callback_name;
pub use crate::samples::Samples;
use crate::stats::Stats;
use crate::Analysis;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// When a change counts: all three must hold.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// `callback` (duration), `topic` (publish → callback start latency), `pair` (the same, of
    /// one publisher node → subscriber node pair of a topic) or `path` (end-to-end latency of
    /// the messages that went the whole way).
    pub kind: &'static str,
    /// What it is, by name: `node timer 100ms symbol`, `node subscription /topic symbol`, `/topic`,
    /// `/pub_node -/topic-> /sub_node` (a pair), `/node -/topic-> /node ...` (a path's label).
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
    /// `callback`, `topic`, `pair` or `path`.
    pub kind: &'static str,
    /// Its name (as in [`Change::name`]).
    pub name: String,
    /// Samples in the run it is in.
    pub count: u64,
}

/// The comparison of two runs.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Diff {
    /// The thresholds applied.
    pub thresholds: Thresholds,
    /// The matched callbacks, topics and paths, significant ones first, then by |Cliff's delta|.
    pub changes: Vec<Change>,
    /// In the base run only (gone).
    pub removed: Vec<OnlyIn>,
    /// In the new run only (appeared).
    pub added: Vec<OnlyIn>,
    /// Paths of one run not followed in the other (saved without them): not compared.
    pub not_compared: Vec<OnlyIn>,
}

/// The kinds of samples, in the order they are listed.
const KINDS: [&str; 4] = ["callback", "topic", "pair", "path"];

impl Samples {
    /// The samples of `a`: its callbacks and topics, and its own longest paths (those of its
    /// report) and `also` followed in it.
    pub fn of(a: &Analysis, also: &[PathSpec]) -> Samples {
        if let Some(chosen) = &a.streamed_samples {
            // A streamed analysis keeps no run or message: its samples were chosen as its
            // slices went by, and its paths are its own longest ones, followed only when asked
            // for (`also` cannot be). As in memory, the callbacks and paths are those of the
            // report (narrowed to the nodes or topics asked for).
            let mut s = Samples { seconds: seconds(a), ..chosen.clone() };
            let names: BTreeSet<String> = a.report.callbacks.iter().map(crate::samples::callback_name).collect();
            s.callback.retain(|n, _| names.contains(n));
            if let Some(whole) = s.whole.get_mut("callback") {
                whole.retain(|n, _| names.contains(n));
            }
            let own = own_paths(a);
            s.paths_followed.retain(|p| own.contains(p));
            let labels: BTreeSet<String> = s.paths_followed.iter().map(PathSpec::label).collect();
            s.path.retain(|l, _| labels.contains(l));
            if let Some(whole) = s.whole.get_mut("path") {
                whole.retain(|l, _| labels.contains(l));
            }
            return s;
        }
        let mut s = Samples { seconds: seconds(a), ..Default::default() };
        callback_and_topic_samples(a, &mut s);
        let mut seen = BTreeSet::new();
        let paths: Vec<PathSpec> =
            own_paths(a).into_iter().chain(also.iter().cloned()).filter(|p| seen.insert(p.label())).collect();
        path_samples(a, &paths, &mut s.path);
        s.paths_followed = paths;
        s
    }

    /// Whether samples read from a file are as [`Samples::of`] makes them: `seconds` a finite
    /// length above 0 (rates divide by it), each followed path one topic fewer than nodes, and
    /// each path's samples those of a path followed. The error names the field.
    pub fn check(&self) -> Result<(), String> {
        if !(self.seconds.is_finite() && self.seconds > 0.0) {
            return Err(format!(
                "`seconds`: {} is not a length of time (a finite number of seconds above 0)",
                self.seconds
            ));
        }
        for (i, p) in self.paths_followed.iter().enumerate() {
            if p.nodes.is_empty() || p.topics.len() + 1 != p.nodes.len() {
                return Err(format!(
                    "`paths_followed[{i}]`: {} node(s) and {} topic(s); a path has one topic fewer than nodes",
                    p.nodes.len(),
                    p.topics.len()
                ));
            }
        }
        if let Some(label) = self.path.keys().find(|l| !self.followed(l)) {
            return Err(format!("`path` {label:?}: not the label of a path in `paths_followed`"));
        }
        Ok(())
    }

    fn of_kind(&self, kind: &str) -> &BTreeMap<String, Vec<i64>> {
        match kind {
            "callback" => &self.callback,
            "topic" => &self.topic,
            "pair" => &self.pair,
            _ => &self.path,
        }
    }

    /// The statistics of the values of `name` of `kind`, whose samples are `v`: those of every
    /// value when the samples are a choice of them ([`Samples::whole`]).
    fn stats(&self, kind: &str, name: &str, v: &[i64]) -> Stats {
        match self.whole.get(kind).and_then(|w| w.get(name)) {
            Some(s) => s.clone(),
            None => Stats::of(&mut v.to_vec()),
        }
    }

    fn followed(&self, label: &str) -> bool {
        self.paths_followed.iter().any(|p| p.label() == label)
    }
}

/// One run to compare: its analysis, or samples saved from one.
#[derive(Clone, Copy)]
pub enum Run<'a> {
    /// A trace's analysis: the other run's paths can be followed in it.
    Trace(&'a Analysis),
    /// Samples saved from an analysis: only its own paths were followed in it.
    Saved(&'a Samples),
}

impl Run<'_> {
    /// The paths the run contributes: its own longest paths.
    fn paths(&self) -> Vec<PathSpec> {
        match self {
            Run::Trace(a) => own_paths(a),
            Run::Saved(s) => s.paths_followed.clone(),
        }
    }

    /// Its samples, with `other`'s paths followed in it when it is a trace.
    fn samples(&self, other: &Run) -> std::borrow::Cow<'_, Samples> {
        match self {
            Run::Trace(a) => std::borrow::Cow::Owned(Samples::of(a, &other.paths())),
            Run::Saved(s) => std::borrow::Cow::Borrowed(*s),
        }
    }
}

/// The callback durations and topic latencies of `a`, by name, into `s`.
fn callback_and_topic_samples(a: &Analysis, s: &mut Samples) {
    // The report's callbacks are keyed by (trace, vpid, address), as the runs' slots are; the
    // first report of a key names it (an address reused by another callback keeps the first).
    let mut names: BTreeMap<(u32, i64, u64), String> = BTreeMap::new();
    for c in &a.report.callbacks {
        names.entry((c.trace, c.vpid, c.address)).or_insert_with(|| callback_name(c));
    }
    for crate::link::LinkedRun { run: r, .. } in &a.runs {
        let (Some(d), Some(k)) = (r.duration(), a.slots.get(r.slot())) else { continue };
        if let Some(n) = names.get(&(k.0, k.1, k.2)) {
            s.callback.entry(n.clone()).or_default().push(d);
        }
    }
    let m = &a.model;
    for f in &a.flows {
        let Some(l) = f.pub_to_callback_ns else { continue };
        s.topic.entry(f.topic.to_string()).or_default().push(l);
        let publisher = crate::link::pub_id(m, &a.pubs[f.publication as usize].publication)
            .and_then(|id| m.publishers.get(id).node);
        let subscriber = a.takes[f.take as usize].subscription.and_then(|id| m.subscriptions.get(id).node);
        if let (Some(p), Some(q)) = (publisher, subscriber) {
            let name = format!("{} -{}-> {}", m.node_name(Some(p)), f.topic, m.node_name(Some(q)));
            s.pair.entry(name).or_default().push(l);
        }
    }
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

/// The report's longest end-to-end paths of `a`, in its order.
fn own_paths(a: &Analysis) -> Vec<PathSpec> {
    a.report.longest_paths.iter().flat_map(|lp| lp.paths.iter().map(|p| p.path.clone())).collect()
}

/// The latencies of the records of `paths` that went the whole way in `a`, by label: the
/// analysis's own records of its longest paths, and those it did not rank among them followed
/// in it the same way; a path `a` cannot follow has none.
fn path_samples(a: &Analysis, paths: &[PathSpec], out: &mut BTreeMap<String, Vec<i64>>) {
    let own: Vec<&PathSpec> = a.report.longest_paths.iter().flat_map(|lp| lp.paths.iter().map(|p| &p.path)).collect();
    let (mut index, mut arch) = (None, None);
    for p in paths {
        let followed;
        let rec = match own.iter().position(|o| *o == p) {
            Some(i) => a.longest_path_records().get(i).and_then(Option::as_ref),
            None => {
                let arch = arch.get_or_insert_with(|| a.architecture());
                let index = index.get_or_insert_with(|| PathIndex::new(a));
                followed = index.records(arch, p, Default::default()).ok();
                followed.as_ref()
            }
        };
        if let Some(rec) = rec.filter(|r| r.complete() > 0) {
            out.insert(p.label(), rec.latencies().into_iter().map(|(_, l)| l).collect());
        }
    }
}

/// Compares the run `new` with the run `base`, both traces' analyses.
pub fn diff(base: &Analysis, new: &Analysis, t: &Thresholds) -> Diff {
    diff_runs(Run::Trace(base), Run::Trace(new), t)
}

/// Compares the run `new` with the run `base`, each a trace's analysis or saved samples: a trace
/// follows the other run's paths too; saved samples hold their own paths only.
pub fn diff_runs(base: Run, new: Run, t: &Thresholds) -> Diff {
    compare(&base.samples(&new), &new.samples(&base), t)
}

/// Compares the samples `new` with the samples `base`.
pub fn compare(base: &Samples, new: &Samples, t: &Thresholds) -> Diff {
    let mut d = Diff { thresholds: t.clone(), ..Default::default() };
    for kind in KINDS {
        let (sa, sb) = (base.of_kind(kind), new.of_kind(kind));
        for (name, x) in sa {
            let bx = base.stats(kind, name, x);
            match sb.get(name) {
                Some(y) => d.changes.push(change(
                    kind,
                    name,
                    [x, y],
                    [bx, new.stats(kind, name, y)],
                    (base.seconds, new.seconds),
                    t,
                )),
                None if kind == "path" && !new.followed(name) => d.not_compared.push(only(kind, name, &bx)),
                None => d.removed.push(only(kind, name, &bx)),
            }
        }
        for (name, y) in sb.iter().filter(|(n, _)| !sa.contains_key(*n)) {
            let ny = new.stats(kind, name, y);
            if kind == "path" && !base.followed(name) {
                d.not_compared.push(only(kind, name, &ny));
            } else {
                d.added.push(only(kind, name, &ny));
            }
        }
    }
    d.changes.sort_by(|a, b| {
        b.significant
            .cmp(&a.significant)
            .then(b.cliff_delta.abs().total_cmp(&a.cliff_delta.abs()))
            .then(a.name.cmp(&b.name))
    });
    d
}

fn only(kind: &'static str, name: &str, s: &Stats) -> OnlyIn {
    OnlyIn { kind, name: name.to_string(), count: s.count }
}

/// The change of one matched item, from its samples in the two runs, their statistics and the
/// runs' lengths (s).
fn change(
    kind: &'static str,
    name: &str,
    [x, y]: [&[i64]; 2],
    [bs, ns]: [Stats; 2],
    secs: (f64, f64),
    t: &Thresholds,
) -> Change {
    let test = mann_whitney(x, y);
    let median_ratio = if bs.p50 > 0 { ns.p50 as f64 / bs.p50 as f64 } else { f64::NAN };
    let practical = median_ratio.is_finite() && (median_ratio - 1.0).abs() >= t.min_change;
    let significant = test.p_value < t.alpha && test.cliff_delta.abs() >= t.min_delta && practical;
    Change {
        kind,
        name: name.to_string(),
        base_rate_hz: bs.count as f64 / secs.0,
        new_rate_hz: ns.count as f64 / secs.1,
        base: bs,
        new: ns,
        median_ratio,
        p_value: test.p_value,
        cliff_delta: test.cliff_delta,
        test,
        significant,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(nodes: &[&str], topics: &[&str]) -> PathSpec {
        PathSpec {
            nodes: nodes.iter().map(|s| s.to_string()).collect(),
            topics: topics.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// A path in one run only is gone or appeared when the other run was searched for it, and
    /// not compared when it was not (a run saved with its own paths only).
    #[test]
    fn a_path_not_followed_in_the_other_run_is_not_compared() {
        let (p, q) = (path(&["/a", "/b"], &["/x"]), path(&["/b", "/c"], &["/y"]));
        let mut base = Samples { seconds: 1.0, ..Default::default() };
        base.path.insert(p.label(), vec![1, 2, 3]);
        base.paths_followed = vec![p.clone()];
        let mut new = Samples { seconds: 1.0, ..Default::default() };
        new.path.insert(q.label(), vec![4, 5]);
        new.paths_followed = vec![q.clone()];
        let d = compare(&base, &new, &Thresholds::default());
        let names = |v: &[OnlyIn]| v.iter().map(|o| o.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&d.not_compared), [p.label(), q.label()]);
        assert!(d.removed.is_empty() && d.added.is_empty() && d.changes.is_empty());
        new.paths_followed.push(p.clone());
        let d = compare(&base, &new, &Thresholds::default());
        assert_eq!((names(&d.removed), names(&d.not_compared)), (vec![p.label()], vec![q.label()]));
    }

    /// Samples as [`Samples::of`] makes them pass; a length of time that is not one, a path
    /// whose topics do not fit between its nodes, samples of a path not followed are errors
    /// naming the field.
    #[test]
    fn saved_samples_are_checked() {
        let p = path(&["/a", "/b"], &["/x"]);
        let mut s = Samples { seconds: 2.5, ..Default::default() };
        s.callback.insert("/a timer 100ms cb".into(), vec![1, 2]);
        s.path.insert(p.label(), vec![5]);
        s.paths_followed = vec![p.clone()];
        assert_eq!(s.check(), Ok(()));
        for seconds in [0.0, -1.0, f64::INFINITY, f64::NAN] {
            let bad = Samples { seconds, ..s.clone() };
            assert!(bad.check().is_err_and(|e| e.starts_with("`seconds`: ")), "{seconds}: {:?}", bad.check());
        }
        let mut bad = s.clone();
        bad.paths_followed.push(path(&["/a", "/b", "/c"], &["/x"]));
        assert_eq!(
            bad.check(),
            Err("`paths_followed[1]`: 3 node(s) and 1 topic(s); a path has one topic fewer than nodes".into())
        );
        let mut bad = s.clone();
        bad.paths_followed.clear();
        assert_eq!(bad.check(), Err("`path` \"/a -/x-> /b\": not the label of a path in `paths_followed`".into()));
    }
}
