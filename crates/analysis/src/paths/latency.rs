//! End-to-end latency along a path, message by message, as caret_analyze defines it (v0.7.3):
//! the path's communications and node paths joined in order into records, one per message of
//! the first topic (more when a node republishes the latest input), then latency and response
//! time from the records' first and last columns.
//!
//! - A **communication** record: a publication's `rclcpp_publish`, `rcl_publish`, `dds_write`
//!   and the `callback_start` of the subscriber's callback run that took it (matched by DDS
//!   source timestamp or intra-process, see [`crate::Flow`]); a message never taken there ends
//!   the record (a drop).
//! - A **node path** record pairs an input `callback_start` with an output `rclcpp_publish`,
//!   per [`Context`]: `callback_chain`, the publications made during that run on its thread;
//!   `use_latest_message`, every publication of the output paired with the latest run start of
//!   the input's subscription callback before it.
//! - Records are joined communication → node path on `callback_start`, node path → next
//!   communication on `rclcpp_publish` (left joins: an input with no output ends there).
//! - With `include_first_callback`, the record starts at the latest callback start on the
//!   publishing thread before the first publication; with `include_last_callback`, it ends at
//!   the sink callback's end.

use super::arch::{Architecture, Context};
use super::spec::{PathOptions, PathSpec};
use crate::collections::HashMap;
use crate::link::View;
use crate::stats::Stats;
use serde::Serialize;

/// One segment of a path: a communication (its topic) or a node path (`node/callback`).
#[derive(Debug, Clone, Serialize)]
pub struct Segment {
    /// Topic, or `<node>/<callback>` for a node path.
    pub name: String,
    /// `communication` (publish → callback start), `node` (callback start → publish) or
    /// `callback` (the last callback, start → end).
    pub kind: &'static str,
    /// First and last column of the segment in the records.
    pub columns: (usize, usize),
}

/// The records of a path: one row per message, a column per event along it; `None` where the
/// message did not get (dropped, or the trace ended).
#[derive(Debug, Clone, Default, Serialize)]
pub struct PathRecords {
    /// Column names, CARET's (`/topic1/rclcpp_publish_timestamp/0`, ...).
    pub columns: Vec<String>,
    /// Rows, sorted by their first column.
    pub rows: Vec<Vec<Option<i64>>>,
    /// Segments, in path order.
    pub segments: Vec<Segment>,
    /// How far (in cells) a record gets when it stops at the input of a node that publishes the
    /// latest message it took (CARET's `use_latest_message`): stopping there, it was superseded
    /// by a newer input, not lost.
    #[serde(skip)]
    pub superseded_at: Vec<usize>,
}

/// Records that did not go the whole way, by why (see [`PathRecords::incomplete`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Incomplete {
    /// Stopped at the input of a node that publishes the latest message it took, while a later
    /// record got further: a newer message was used in its place (use latest message).
    pub superseded: usize,
    /// Stopped elsewhere while a later record got further: not taken, or not forwarded.
    pub lost: usize,
    /// Still on the way when the trace ended.
    pub in_flight: usize,
}

impl Incomplete {
    /// Of `reach` (per record in time order: cells up to its last one) and the records'
    /// `width`, with the reaches that mean superseded.
    fn of(reach: impl DoubleEndedIterator<Item = usize>, width: usize, superseded_at: &[usize]) -> Incomplete {
        let mut out = Incomplete::default();
        let mut best_later = 0;
        for k in reach.rev() {
            if k < width {
                if best_later > k {
                    if superseded_at.contains(&k) {
                        out.superseded += 1;
                    } else {
                        out.lost += 1;
                    }
                } else {
                    out.in_flight += 1;
                }
            }
            best_later = best_later.max(k);
        }
        out
    }

    /// Superseded and lost.
    pub fn dropped(&self) -> usize {
        self.superseded + self.lost
    }
}

/// Response-time cases (CARET's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Case {
    /// For each input, the earliest output that follows it.
    All,
    /// For each output, from its newest input.
    Best,
    /// For each output, from its oldest input.
    Worst,
    /// For each output, from the input before its oldest one.
    WorstWithExternalLatency,
}

impl Case {
    /// Every case.
    pub const ALL: [Case; 4] = [Case::All, Case::Best, Case::Worst, Case::WorstWithExternalLatency];

    /// CARET's name.
    pub fn name(self) -> &'static str {
        match self {
            Case::All => "all",
            Case::Best => "best",
            Case::Worst => "worst",
            Case::WorstWithExternalLatency => "worst-with-external-latency",
        }
    }

    /// From CARET's name.
    pub fn from_name(s: &str) -> Option<Case> {
        Case::ALL.into_iter().find(|c| c.name() == s)
    }
}

/// Values grouped by key in one table: the keys sorted, each with the end of its values, so
/// that an index of a system of many nodes is three tables, not a heap block per key.
struct Groups<K, V> {
    keys: Vec<K>,
    ends: Vec<u32>,
    values: Vec<V>,
}

impl<K: Ord, V> Groups<K, V> {
    /// `values`, sorted by `key`, grouped by it (each group in the order of `values`).
    fn of_sorted(values: Vec<V>, key: impl Fn(&V) -> K) -> Groups<K, V> {
        let (mut keys, mut ends) = (Vec::new(), Vec::new());
        for (i, v) in values.iter().enumerate() {
            let k = key(v);
            if keys.last() != Some(&k) {
                if i > 0 {
                    ends.push(i as u32);
                }
                keys.push(k);
            }
        }
        if !values.is_empty() {
            ends.push(values.len() as u32);
        }
        Groups { keys, ends, values }
    }

    /// The values of `k` (none when absent).
    fn get(&self, k: &K) -> &[V] {
        match self.keys.binary_search(k) {
            Ok(g) => &self.values[self.start(g)..self.ends[g] as usize],
            Err(_) => &[],
        }
    }

    fn start(&self, g: usize) -> usize {
        g.checked_sub(1).map_or(0, |p| self.ends[p] as usize)
    }

    /// Calls `f` with each group's values.
    fn each_mut(&mut self, mut f: impl FnMut(&mut [V])) {
        for g in 0..self.keys.len() {
            let (from, to) = (self.start(g), self.ends[g] as usize);
            f(&mut self.values[from..to]);
        }
    }
}

/// Indexes of an analysis to follow paths fast.
pub struct PathIndex<'a> {
    a: View<'a>,
    /// Publications per (node, topic), in time order.
    pubs: Groups<(u32, &'a str), u32>,
    /// Node full names, and their index.
    names: HashMap<String, u32>,
    /// Callback runs (index in `a.runs`) per callback object (by index), in time order.
    runs_of: Groups<u32, u32>,
    /// Runs per thread, in time order.
    runs_on: HashMap<(u32, i64, i64), Vec<u32>>,
    /// Per publication, the runs of subscription callbacks that took it: (publication,
    /// subscribing node, run).
    taken_by: Groups<u32, (u32, u32, u32)>,
    /// Threads following paths in [`crate::paths::rank`] (0: one per core).
    pub(crate) jobs: usize,
}

impl<'a> PathIndex<'a> {
    /// Follows paths on `jobs` threads in [`crate::paths::rank`] (0, the default: one per core;
    /// the results are the same whatever the number).
    pub fn set_jobs(&mut self, jobs: usize) -> &mut Self {
        self.jobs = jobs;
        self
    }

    /// Indexes `a`.
    pub fn new(a: impl Into<View<'a>>) -> PathIndex<'a> {
        let a = a.into();
        let m = &a.model;
        // Per model node, the index of its full name (nodes of one name in several processes,
        // or re-created, are one node of the architecture).
        let mut names: HashMap<String, u32> = HashMap::default();
        let name_of: Vec<u32> = m
            .nodes
            .items
            .iter()
            .map(|n| {
                let k = names.len() as u32;
                *names.entry(n.full_name()).or_insert(k)
            })
            .collect();
        // Each publication's node (u32::MAX: none, or no topic), then the publications sorted by
        // node, topic and time.
        let node_of: Vec<u32> = a
            .pubs
            .iter()
            .map(|(p, topic)| {
                let node =
                    topic.as_ref().and_then(|_| crate::link::pub_id(m, p)).and_then(|id| m.publishers.get(id).node);
                node.map_or(u32::MAX, |n| name_of[n as usize])
            })
            .collect();
        let topic = |i: u32| a.pubs[i as usize].1.as_deref().unwrap_or("");
        let mut order: Vec<u32> = (0..a.pubs.len() as u32).filter(|&i| node_of[i as usize] != u32::MAX).collect();
        order.sort_unstable_by(|&x, &y| {
            let key = |i: u32| {
                let p = &a.pubs[i as usize].0;
                (node_of[i as usize], topic(i), p.ts_rclcpp().unwrap_or(p.ts), i)
            };
            key(x).cmp(&key(y))
        });
        let pubs = Groups::of_sorted(order, |&i| (node_of[i as usize], topic(i)));
        drop(node_of);
        // (The sort is stable: a callback's runs stay in index order.)
        let mut of_callbacks: Vec<u32> = (0..a.runs.len() as u32).filter(|&i| a.runs[i as usize].1.is_some()).collect();
        of_callbacks.sort_by_key(|&i| a.runs[i as usize].1);
        let mut runs_of = Groups::of_sorted(of_callbacks, |&i| a.runs[i as usize].1.unwrap_or(0));
        // The runs on each thread: each callback handle's threads (a few) with their lists, so
        // that a run finds its list without hashing.
        let mut threads_of: Vec<Vec<(i32, u32)>> = vec![Vec::new(); a.slots.len()];
        let mut lists: Vec<Vec<u32>> = Vec::new();
        let mut list_of: HashMap<(u32, i64, i64), u32> = HashMap::default();
        for (i, (r, _)) in a.runs.iter().enumerate() {
            let Some(of_slot) = threads_of.get_mut(r.slot()) else { continue };
            let l = match of_slot.iter().find(|x| x.0 == r.vtid) {
                Some(x) => x.1,
                None => {
                    let k = a.slots[r.slot()];
                    let l = *list_of.entry((k.0, k.1, r.vtid as i64)).or_insert_with(|| {
                        lists.push(Vec::new());
                        lists.len() as u32 - 1
                    });
                    of_slot.push((r.vtid, l));
                    l
                }
            };
            lists[l as usize].push(i as u32);
        }
        let mut runs_on: HashMap<(u32, i64, i64), Vec<u32>> = HashMap::default();
        for (k, l) in list_of {
            runs_on.insert(k, std::mem::take(&mut lists[l as usize]));
        }
        // The pass records runs in time order: each list, in index order, is then in time order
        // already.
        if !a.runs.windows(2).all(|w| w[0].0.start <= w[1].0.start) {
            let start = |i: &u32| (a.runs[*i as usize].0.start, *i);
            runs_of.each_mut(|v| v.sort_by_key(start));
            for v in runs_on.values_mut() {
                v.sort_by_key(start);
            }
        }
        let mut taken: Vec<(u32, u32, u32)> = Vec::new();
        for f in a.flows {
            let (t, sub) = &a.takes[f.take as usize];
            let (Some(run), Some(sub)) = (t.run, sub) else { continue };
            if let Some(n) = m.subscriptions.get(*sub).node {
                taken.push((f.publication, name_of[n as usize], run));
            }
        }
        // (Stable: a publication's takes stay in the flows' order.)
        taken.sort_by_key(|t| t.0);
        let taken_by = Groups::of_sorted(taken, |t| t.0);
        PathIndex { a, pubs, names, runs_of, runs_on, taken_by, jobs: 0 }
    }

    fn run_start(&self, run: u32) -> i64 {
        self.a.runs[run as usize].0.start
    }

    /// The runs of the callback objects `ids`, in time order.
    fn runs(&self, ids: &[u32]) -> Vec<u32> {
        let mut v: Vec<u32> = ids.iter().flat_map(|id| self.runs_of.get(id).iter().copied()).collect();
        // One callback's runs are in time order already (and by index among equal starts).
        if ids.len() > 1 {
            v.sort_by_key(|&r| (self.run_start(r), r));
        }
        v
    }

    /// The records of `path` in `arch`.
    pub fn records(&self, arch: &Architecture, path: &PathSpec, opt: PathOptions) -> Result<PathRecords, String> {
        let mut ch = self.chains(arch, path, opt)?;
        let (columns, segments) = std::mem::take(&mut ch.columns);
        let width = columns.len();
        let mut out: Vec<Vec<Option<i64>>> = (0..ch.rows.len()).map(|i| ch.row(i, width)).collect();
        out.sort_by_key(|r| r[0].unwrap_or(i64::MAX));
        Ok(PathRecords { columns, rows: out, segments, superseded_at: ch.superseded_at })
    }

    /// What [`PathIndex::records`] tells of `path` without writing its rows out: the records,
    /// those complete, dropped and in flight, and the latency of the complete ones.
    pub fn summary(&self, arch: &Architecture, path: &PathSpec, opt: PathOptions) -> Result<RecordsSummary, String> {
        let ch = self.chains(arch, path, opt)?;
        let width = ch.columns.0.len();
        // Per record: first cell, last cell, how far it got (cells up to its last one).
        let mut rows: Vec<(Option<i64>, Option<i64>, usize)> = (0..ch.rows.len()).map(|i| ch.ends(i, width)).collect();
        rows.sort_by_key(|r| r.0.unwrap_or(i64::MAX));
        let mut latencies: Vec<i64> = rows
            .iter()
            .filter_map(|r| match (r.0, r.1) {
                (Some(a), Some(b)) if b >= a => Some(b - a),
                _ => None,
            })
            .collect();
        let complete = rows.iter().filter(|r| r.0.is_some() && r.1.is_some()).count();
        let inc = Incomplete::of(rows.iter().map(|r| r.2), width, &ch.superseded_at);
        Ok(RecordsSummary {
            records: rows.len(),
            complete,
            dropped: inc.dropped(),
            superseded: inc.superseded,
            lost: inc.lost,
            in_flight: inc.in_flight,
            latency: Stats::of(&mut latencies),
        })
    }

    /// The records of `path` as chains of hops, with the columns and segments.
    fn chains(&self, arch: &Architecture, path: &PathSpec, opt: PathOptions) -> Result<Chains, String> {
        let n = path.nodes.len();
        if n < 2 || path.topics.len() != n - 1 {
            return Err("a path needs at least two nodes and a topic between each".into());
        }
        let mut nodes = Vec::new();
        for name in &path.nodes {
            nodes.push(&arch.nodes[arch.node(name).ok_or_else(|| format!("no node {name} in the trace"))?]);
        }
        // Per communication: the sink node's subscription callback for the topic.
        let mut sub_cbs = Vec::new();
        for k in 0..n - 1 {
            let topic = &path.topics[k];
            let cb = nodes[k + 1]
                .subscription_callback(topic)
                .ok_or_else(|| format!("{} has no subscription callback for {topic}", nodes[k + 1].name))?;
            if !nodes[k].publishes.iter().any(|p| &p.topic == topic) {
                return Err(format!("{} does not publish {topic}", nodes[k].name));
            }
            sub_cbs.push(cb);
        }
        let a = self.a;
        // Column names, with CARET's /0, /1 suffixes for repeated names.
        let mut columns: Vec<String> = Vec::new();
        let mut segments = Vec::new();
        let mut superseded_at = Vec::new();
        let push = |columns: &mut Vec<String>, base: String| {
            let k = columns.iter().filter(|c| c.rsplit_once('/').map(|x| x.0) == Some(base.as_str())).count();
            columns.push(format!("{base}/{k}"));
        };
        if opt.include_first_callback {
            push(&mut columns, format!("{}/callback_x/callback_start_timestamp", nodes[0].name));
            segments.push(Segment { name: format!("{}/callback_x", nodes[0].name), kind: "node", columns: (0, 1) });
        }
        for (k, (t, sub_cb)) in path.topics.iter().zip(&sub_cbs).enumerate().take(n - 1) {
            let first = columns.len();
            for c in ["rclcpp_publish", "rcl_publish", "dds_write"] {
                push(&mut columns, format!("{t}/{c}_timestamp"));
            }
            push(&mut columns, format!("{}/callback_start_timestamp", sub_cb.name));
            segments.push(Segment { name: t.clone(), kind: "communication", columns: (first, columns.len() - 1) });
            // A record that stops at this callback's start, where the node publishes the latest
            // message it took, was superseded.
            let latest = k + 1 < n - 1
                && nodes[k + 1].path(t, &path.topics[k + 1]).is_none_or(|p| p.context == Context::UseLatestMessage);
            if latest {
                superseded_at.push(columns.len());
            }
            if k + 1 < n - 1 {
                segments.push(Segment {
                    name: sub_cb.name.clone(),
                    kind: "node",
                    columns: (columns.len() - 1, columns.len()),
                });
            }
        }
        if opt.include_last_callback {
            push(&mut columns, format!("{}/callback_end_timestamp", sub_cbs[n - 2].name));
            segments.push(Segment {
                name: sub_cbs[n - 2].name.clone(),
                kind: "callback",
                columns: (columns.len() - 2, columns.len() - 1),
            });
        }

        let node_ids: Vec<u32> = path.nodes.iter().map(|n| self.names.get(n).copied().unwrap_or(u32::MAX)).collect();
        // Communication cells of publication p towards node k+1's callback: 4 cells, and the run.
        let comm = |k: usize, p: u32| -> ([Option<i64>; 4], Option<u32>) {
            let pb = &a.pubs[p as usize].0;
            let run = self
                .taken_by
                .get(&p)
                .iter()
                .filter(|&&(_, node, r)| {
                    node == node_ids[k + 1] && a.runs[r as usize].1.is_some_and(|c| sub_cbs[k].ids.contains(&c))
                })
                .map(|&(_, _, r)| r)
                .min_by_key(|r| self.run_start(*r));
            ([Some(pb.ts_rclcpp().unwrap_or(pb.ts)), pb.ts_rcl(), pb.ts_dds(), run.map(|r| self.run_start(r))], run)
        };
        let pubs_of = |k: usize| -> &[u32] { self.pubs.get(&(node_ids[k], path.topics[k].as_str())) };
        // Records as chains of hops (a communication's 4 cells each, linked to the hop
        // before), so that following a message one hop further costs the same at any depth;
        // rows are written out once at the end.
        let mut hops: Vec<Hop> = Vec::new();
        // Per first hop, the first callback's start (with include_first_callback).
        let mut firsts: Vec<Option<i64>> = Vec::new();
        // The last hop of each record, and the run of the last communication reached.
        let mut rows: Vec<(u32, Option<u32>)> = Vec::new();
        for &p in pubs_of(0) {
            let (cells, run) = comm(0, p);
            if opt.include_first_callback {
                let pb = &a.pubs[p as usize].0;
                let at = pb.ts_rclcpp().unwrap_or(pb.ts);
                let first = self.runs_on.get(&(pb.trace, pb.vpid, pb.vtid)).and_then(|v| {
                    let i = v.partition_point(|&r| self.run_start(r) <= at);
                    v.get(i.checked_sub(1)?).map(|&r| self.run_start(r))
                });
                firsts.push(first);
            }
            rows.push((hops.len() as u32, run));
            hops.push(Hop { parent: u32::MAX, cells });
        }
        for k in 1..n - 1 {
            if rows.iter().all(|r| r.1.is_none()) {
                // Every record stopped: none goes further.
                break;
            }
            // Node k: input callback runs → output publications, by run (not by its start time:
            // runs of one start, as a clock too slow or a damaged one gives, would each take the
            // outputs of all).
            let input = sub_cbs[k - 1];
            let mut outputs: HashMap<u32, Vec<u32>> = HashMap::default();
            let context = nodes[k]
                .path(&path.topics[k - 1], &path.topics[k])
                .map(|p| p.context)
                .unwrap_or(Context::UseLatestMessage);
            match context {
                Context::CallbackChain => {
                    for &q in pubs_of(k) {
                        let pb = &a.pubs[q as usize].0;
                        if let Some(r) = pb.in_run() {
                            if a.runs[r as usize].1.is_some_and(|c| input.ids.contains(&c)) {
                                outputs.entry(r).or_default().push(q);
                            }
                        }
                    }
                }
                Context::UseLatestMessage => {
                    let runs = self.runs(&input.ids);
                    let starts: Vec<i64> = runs.iter().map(|&r| self.run_start(r)).collect();
                    for &q in pubs_of(k) {
                        let pb = &a.pubs[q as usize].0;
                        let at = pb.ts_rclcpp().unwrap_or(pb.ts);
                        let i = starts.partition_point(|&s| s <= at);
                        if let Some(&r) = i.checked_sub(1).and_then(|i| runs.get(i)) {
                            outputs.entry(r).or_default().push(q);
                        }
                    }
                }
            }
            // A run handles one message: one record goes on from it, the newest that reached
            // it (records are in the order of their first publication), the others stop there.
            // Then no output is in two records, and a path has at most as many records as
            // publications, whatever the times.
            let mut newest: HashMap<u32, usize> = HashMap::default();
            for (j, (_, run)) in rows.iter().enumerate() {
                if let Some(r) = run {
                    newest.insert(*r, j);
                }
            }
            let mut next = Vec::with_capacity(rows.len());
            for (j, (hop, run)) in rows.into_iter().enumerate() {
                // A record that stopped before has no run.
                match run.filter(|r| newest.get(r) == Some(&j)).and_then(|r| outputs.get(&r)) {
                    Some(qs) => {
                        for &q in qs {
                            let (cells, run) = comm(k, q);
                            next.push((hops.len() as u32, run));
                            hops.push(Hop { parent: hop, cells });
                        }
                    }
                    None => {
                        next.push((hop, None));
                    }
                }
            }
            rows = next;
        }
        let rows = rows.into_iter().map(|(last, run)| (last, run.and_then(|r| a.runs[r as usize].0.end()))).collect();
        Ok(Chains { columns: (columns, segments), superseded_at, hops, firsts, rows, opt })
    }
}

/// A path's records as chains of hops (see [`PathIndex::records`]).
struct Chains {
    columns: (Vec<String>, Vec<Segment>),
    /// See [`PathRecords::superseded_at`].
    superseded_at: Vec<usize>,
    hops: Vec<Hop>,
    /// Per first hop, the first callback's start (with `include_first_callback`).
    firsts: Vec<Option<i64>>,
    /// Per record: its last hop, and the end of the run of the last communication reached.
    rows: Vec<(u32, Option<i64>)>,
    opt: PathOptions,
}

/// One communication of a record: its 4 cells, linked to the hop before.
struct Hop {
    parent: u32,
    cells: [Option<i64>; 4],
}

impl Chains {
    /// Record `i`'s hops, first to last.
    fn chain(&self, i: usize) -> Vec<u32> {
        let mut chain = Vec::new();
        let mut h = self.rows[i].0;
        while h != u32::MAX {
            chain.push(h);
            h = self.hops[h as usize].parent;
        }
        chain.reverse();
        chain
    }

    /// Record `i`'s row of `width` cells.
    fn row(&self, i: usize, width: usize) -> Vec<Option<i64>> {
        let chain = self.chain(i);
        let mut row = Vec::with_capacity(width);
        if self.opt.include_first_callback {
            row.push(chain.first().and_then(|&root| self.firsts.get(root as usize).copied().flatten()));
        }
        for &h in &chain {
            row.extend(self.hops[h as usize].cells);
        }
        if self.opt.include_last_callback && row.len() == width - 1 {
            row.push(self.rows[i].1);
        }
        row.resize(width, None);
        row
    }

    /// Record `i`'s first and last cells and how many cells it has up to its last one, as
    /// [`Chains::row`] would write them.
    fn ends(&self, i: usize, width: usize) -> (Option<i64>, Option<i64>, usize) {
        let chain = self.chain(i);
        let lead = usize::from(self.opt.include_first_callback);
        let first = if self.opt.include_first_callback {
            chain.first().and_then(|&root| self.firsts.get(root as usize).copied().flatten())
        } else {
            chain.first().and_then(|&h| self.hops[h as usize].cells[0])
        };
        let len = lead + 4 * chain.len();
        let end = (self.opt.include_last_callback && len == width - 1).then_some(self.rows[i].1).flatten();
        let last = if len >= width { chain.last().and_then(|&h| self.hops[h as usize].cells[3]) } else { end };
        let reach = if end.is_some() {
            len + 1
        } else {
            let in_hops = chain.iter().enumerate().rev().find_map(|(j, &h)| {
                self.hops[h as usize].cells.iter().rposition(Option::is_some).map(|k| lead + 4 * j + k + 1)
            });
            in_hops.unwrap_or(usize::from(first.is_some() && lead == 1))
        };
        (first, last, reach)
    }
}

/// What [`PathIndex::summary`] tells of a path.
#[derive(Debug, Clone, Default)]
pub struct RecordsSummary {
    /// Records (rows of [`PathIndex::records`]).
    pub records: usize,
    /// Records that went the whole way.
    pub complete: usize,
    /// Records dropped on the way: superseded and lost.
    pub dropped: usize,
    /// Of those, superseded by a newer message (see [`Incomplete::superseded`]).
    pub superseded: usize,
    /// Of those, lost (see [`Incomplete::lost`]).
    pub lost: usize,
    /// Records still on the way when the trace ended.
    pub in_flight: usize,
    /// Latency of the complete records (ns).
    pub latency: Stats,
}

impl PathRecords {
    /// (first column, last − first) of every record that has both, in order; negative ones
    /// (reordered clocks) left out.
    pub fn latencies(&self) -> Vec<(i64, i64)> {
        self.rows
            .iter()
            .filter_map(|r| match (r.first().copied().flatten(), r.last().copied().flatten()) {
                (Some(a), Some(b)) if b >= a => Some((a, b - a)),
                _ => None,
            })
            .collect()
    }

    /// Whether record `r` reached the end (an intra-process hop has no `rcl_publish` and
    /// `dds_write` cells: only the first and last cells count).
    pub fn is_complete(r: &[Option<i64>]) -> bool {
        r.first().is_some_and(Option::is_some) && r.last().is_some_and(Option::is_some)
    }

    /// Records that reached the end.
    pub fn complete(&self) -> usize {
        self.rows.iter().filter(|r| PathRecords::is_complete(r)).count()
    }

    /// Records that did not reach the end: (dropped, in flight). A record is dropped where it
    /// stops when a later record (a later input) got further than it; otherwise it was still
    /// in flight when the trace ended. [`PathRecords::incomplete_by_kind`] tells superseded
    /// from lost.
    pub fn incomplete(&self) -> (usize, usize) {
        let i = self.incomplete_by_kind();
        (i.dropped(), i.in_flight)
    }

    /// Records that did not reach the end: superseded, lost, in flight.
    pub fn incomplete_by_kind(&self) -> Incomplete {
        let reach = |r: &Vec<Option<i64>>| r.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
        Incomplete::of(self.rows.iter().map(reach), self.columns.len(), &self.superseded_at)
    }

    /// Segment statistics: per segment, the statistics of its latency over the complete
    /// records (their means add up to the mean of the complete records' latency).
    pub fn segment_stats(&self) -> Vec<(Segment, Stats)> {
        self.segment_latencies()
            .into_iter()
            .zip(&self.segments)
            .map(|((_, mut v), s)| (s.clone(), Stats::of(&mut v)))
            .collect()
    }

    /// Response time per `case`: (input time, response time), by input time. O(n log n).
    pub fn response_time(&self, case: Case) -> Vec<(i64, i64)> {
        // Per distinct input (first column), the earliest output; an input whose record ends
        // early takes the earliest output of the later records.
        let mut starts: Vec<i64> = Vec::new();
        let mut ends: Vec<i64> = Vec::new();
        let mut at: HashMap<i64, usize> = HashMap::default();
        let mut min_end: Option<i64> = None;
        for r in self.rows.iter().rev() {
            let end = match r.last().copied().flatten() {
                Some(e) => e,
                None => match min_end {
                    Some(e) => e,
                    None => continue,
                },
            };
            let Some(start) = r.first().copied().flatten() else { continue };
            if end < start {
                continue;
            }
            match at.get(&start) {
                None => {
                    at.insert(start, starts.len());
                    starts.push(start);
                    ends.push(end);
                    min_end = Some(min_end.map_or(end, |m| m.min(end)));
                }
                Some(&i) => {
                    if end < ends[i] {
                        ends[i] = end;
                        min_end = Some(min_end.map_or(end, |m| m.min(end)));
                    }
                }
            }
        }
        starts.reverse();
        ends.reverse();
        // As caret_analyze v0.7.3: the inputs of the earliest output are left out (the first
        // output may follow inputs from before the trace began).
        if let Some(&first) = ends.iter().min() {
            let keep: Vec<bool> = ends.iter().map(|&e| e != first).collect();
            let mut k = keep.iter();
            starts.retain(|_| *k.next().unwrap_or(&true));
            let mut k = keep.iter();
            ends.retain(|_| *k.next().unwrap_or(&true));
        }
        let mut out: Vec<(i64, i64)> = match case {
            Case::All => starts.iter().zip(&ends).map(|(s, e)| (*s, e - s)).collect(),
            Case::Best | Case::Worst => {
                let mut per_end: HashMap<i64, usize> = HashMap::default();
                let mut v: Vec<(i64, i64)> = Vec::new();
                for (s, e) in starts.iter().zip(&ends) {
                    match per_end.get(e) {
                        None => {
                            per_end.insert(*e, v.len());
                            v.push((*s, *e));
                        }
                        Some(&i) => {
                            let better = if case == Case::Best { *s > v[i].0 } else { *s < v[i].0 };
                            if better {
                                v[i].0 = *s;
                            }
                        }
                    }
                }
                v.into_iter().map(|(s, e)| (s, e - s)).collect()
            }
            Case::WorstWithExternalLatency => {
                let mut per_end: HashMap<i64, usize> = HashMap::default();
                // (start, end, previous start)
                let mut v: Vec<(i64, i64, i64)> = Vec::new();
                for i in 1..starts.len() {
                    let (s, e, prev) = (starts[i], ends[i], starts[i - 1]);
                    match per_end.get(&e) {
                        None => {
                            per_end.insert(e, v.len());
                            v.push((s, e, prev));
                        }
                        Some(&j) => {
                            if s < v[j].0 {
                                v[j] = (s, e, prev);
                            }
                        }
                    }
                }
                v.sort_by_key(|x| x.0);
                return v.into_iter().map(|(_, e, prev)| (prev, e - prev)).collect();
            }
        };
        out.sort_by_key(|x| x.0);
        out
    }

    /// Per segment, the latency of each complete record (ns).
    pub fn segment_latencies(&self) -> Vec<(String, Vec<i64>)> {
        self.segments
            .iter()
            .map(|s| {
                let v = self
                    .rows
                    .iter()
                    .filter(|r| PathRecords::is_complete(r))
                    .map(|r| r[s.columns.1].unwrap_or(0) - r[s.columns.0].unwrap_or(0))
                    .collect();
                (s.name.clone(), v)
            })
            .collect()
    }

    /// Statistics of the latencies.
    pub fn stats(&self) -> Stats {
        let mut v: Vec<i64> = self.latencies().into_iter().map(|x| x.1).collect();
        Stats::of(&mut v)
    }
}

/// A path's records summed up (`rostrace e2e`'s JSON): segments, latency, drops, every
/// complete record, response times, and CARET's records table.
#[derive(Debug, Serialize)]
pub struct E2eSummary<'a> {
    /// The path.
    pub path: &'a PathSpec,
    /// CARET's form of the path.
    pub label: String,
    /// Whether the first node's callback is part of the path.
    pub include_first_callback: bool,
    /// Whether the last node's callback is part of the path.
    pub include_last_callback: bool,
    /// Segment names and kinds, in order.
    pub segments: Vec<SegmentOut>,
    /// Latency of the records that went the whole way (ns).
    pub latency: Stats,
    /// Records.
    pub records: usize,
    /// Records that went the whole way.
    pub complete: usize,
    /// Records dropped on the way: superseded and lost.
    pub dropped: usize,
    /// Of those, superseded by a newer message at a node that publishes the latest it took.
    pub superseded: usize,
    /// Of those, lost: not taken, or not forwarded.
    pub lost: usize,
    /// Records still on the way when the trace ended.
    pub in_flight: usize,
    /// Every record that went the whole way.
    pub instances: Vec<Instance>,
    /// Per case: (input ns, response time ns).
    pub response_time: Vec<ResponseOut>,
    /// CARET's records: column names and every row (null where a message did not get).
    pub columns: &'a [String],
    /// The rows, a value (ns) per column.
    pub rows: &'a [Vec<Option<i64>>],
}

/// A segment of the path and its latency.
#[derive(Debug, Serialize)]
pub struct SegmentOut {
    /// Name.
    pub name: String,
    /// `communication`, `node` or `callback` (see [`Segment::kind`]).
    pub kind: &'static str,
    /// Latency (ns).
    pub latency: Stats,
}

/// A record that went the whole way.
#[derive(Debug, Serialize)]
pub struct Instance {
    /// When it started.
    pub start_ns: i64,
    /// When it ended.
    pub end_ns: i64,
    /// End − start.
    pub latency_ns: i64,
    /// Time in each segment.
    pub segments_ns: Vec<i64>,
}

/// Response time in one of CARET's cases.
#[derive(Debug, Serialize)]
pub struct ResponseOut {
    /// The case's name.
    pub case: &'static str,
    /// Response time (ns).
    pub stats: Stats,
    /// (input ns, response time ns) per record.
    pub instances: Vec<(i64, i64)>,
}

/// The summary of the records `r` of path `spec`, with the response time in each of `cases`.
pub fn e2e_summary<'a>(spec: &'a PathSpec, r: &'a PathRecords, opt: PathOptions, cases: &[Case]) -> E2eSummary<'a> {
    let inc = r.incomplete_by_kind();
    let instances = r
        .rows
        .iter()
        .filter(|row| PathRecords::is_complete(row))
        .map(|row| {
            let (s, e) = (row[0].unwrap_or(0), row[row.len() - 1].unwrap_or(0));
            Instance {
                start_ns: s,
                end_ns: e,
                latency_ns: e - s,
                segments_ns: r
                    .segments
                    .iter()
                    .map(|g| row[g.columns.1].unwrap_or(0) - row[g.columns.0].unwrap_or(0))
                    .collect(),
            }
        })
        .collect();
    E2eSummary {
        path: spec,
        label: spec.label(),
        include_first_callback: opt.include_first_callback,
        include_last_callback: opt.include_last_callback,
        segments: r
            .segment_stats()
            .into_iter()
            .map(|(s, st)| SegmentOut { name: s.name, kind: s.kind, latency: st })
            .collect(),
        latency: r.stats(),
        records: r.rows.len(),
        complete: r.complete(),
        dropped: inc.dropped(),
        superseded: inc.superseded,
        lost: inc.lost,
        in_flight: inc.in_flight,
        instances,
        response_time: cases
            .iter()
            .map(|&c| {
                let v = r.response_time(c);
                let mut ns: Vec<i64> = v.iter().map(|x| x.1).collect();
                ResponseOut { case: c.name(), stats: Stats::of(&mut ns), instances: v }
            })
            .collect(),
        columns: &r.columns,
        rows: &r.rows,
    }
}
