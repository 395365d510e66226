//! A path's records made from an analysis, as caret_analyze defines them (v0.7.3): the path's
//! communications and node paths joined in order into records, one per message of the first
//! topic (more when a node republishes the latest input); latency and response time are then
//! read from the records' first and last columns ([`super::records`]).
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
//! - A node path through a **service call** (see [`super::arch::ServiceHop`]): from the input's
//!   run to each request of the service its node sends during it, the start of the server's
//!   callback run that took the request, the response it sent, and the response taken (4
//!   cells, as a communication has); the output is what the node publishes on that thread
//!   after it: in the response's callback run (rclpy's), else before the thread's next run
//!   (rclcpp's and `rostrace_ros2`'s, which trace none).
//! - With `include_first_callback`, the record starts at the latest callback start on the
//!   publishing thread before the first publication; with `include_last_callback`, it ends at
//!   the sink callback's end.

use super::arch::{Architecture, Context, ServiceHop};
use super::records::{PathCounts, PathRecords, RecordsSummary, Segment};
use super::spec::{PathOptions, PathSpec};
use super::threads::RunsOnThreads;
use crate::collections::HashMap;
use crate::link::{LinkedPublication, LinkedTake, View};
use crate::model::LinkKind;
use crate::stats::Stats;

/// Values grouped by key in one table: the keys sorted, each with the end of its values, so
/// that an index of a system of many nodes is three tables, not a heap block per key.
struct Groups<K, V> {
    keys: Vec<K>,
    ends: Vec<u32>,
    values: Vec<V>,
}

impl Groups<u32, u32> {
    /// The indices of `keys` grouped by their key, dense and small (a callback's index in the
    /// model), each group in index order; those of no key left out. A counting sort: one
    /// reading of the keys, not a comparison sort of the indices by a key read through them.
    fn of_dense(keys: impl Iterator<Item = Option<u32>> + Clone) -> Groups<u32, u32> {
        let mut count: Vec<u32> = Vec::new();
        for k in keys.clone().flatten() {
            let k = k as usize;
            if k >= count.len() {
                count.resize(k + 1, 0);
            }
            count[k] += 1;
        }
        let (mut group_keys, mut ends, mut next) = (Vec::new(), Vec::new(), vec![0u32; count.len()]);
        let mut end = 0u32;
        for (k, &n) in count.iter().enumerate() {
            if n > 0 {
                next[k] = end;
                end += n;
                group_keys.push(k as u32);
                ends.push(end);
            }
        }
        drop(count);
        let mut values = vec![0u32; end as usize];
        for (i, k) in keys.enumerate() {
            if let Some(k) = k {
                let at = &mut next[k as usize];
                values[*at as usize] = i as u32;
                *at += 1;
            }
        }
        Groups { keys: group_keys, ends, values }
    }
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
        &self.values[self.range(k)]
    }

    /// Where the values of `k` are among all (empty when absent).
    fn range(&self, k: &K) -> std::ops::Range<usize> {
        match self.keys.binary_search(k) {
            Ok(g) => self.start(g)..self.ends[g] as usize,
            Err(_) => 0..0,
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

/// A path's records as [`PathIndex::ends`] gives them.
pub(crate) struct PathEnds {
    /// Cells of a record written out ([`PathRecords::columns`]).
    pub(crate) width: usize,
    /// See [`PathRecords::superseded_at`].
    pub(crate) superseded_at: Vec<usize>,
    /// Per record: its first cell, its last cell (the path's end), and how many cells it has up
    /// to its last one.
    pub(crate) rows: Vec<(Option<i64>, Option<i64>, usize)>,
}

/// A service request as a path follows it: the client (id in the model's clients) and the
/// run it was sent during, its 4 cells (sent, the server's callback start, the response sent,
/// the response taken), and where the response was taken: the thread, and from when to when
/// what it publishes follows it.
struct Call {
    client: u32,
    sent_in: u32,
    cells: [Option<i64>; 4],
    then: Option<((u32, i64, i64), i64, i64)>,
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
    runs_on: RunsOnThreads,
    /// Service requests, by the run they were sent during.
    calls: Groups<u32, Call>,
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
            .map(|LinkedPublication { publication: p, topic }| {
                let node =
                    topic.as_ref().and_then(|_| crate::link::pub_id(m, p)).and_then(|id| m.publishers.get(id).node);
                node.map_or(u32::MAX, |n| name_of[n as usize])
            })
            .collect();
        let topic = |i: u32| a.pubs[i as usize].topic.as_deref().unwrap_or("");
        // Sorted by integers: the topic's rank among the topics' names stands for the name.
        let rank = crate::collections::ranks(a.pubs.iter().map(|p| p.topic.as_deref().unwrap_or("")));
        let mut keyed: Vec<(u32, u32, i64, u32)> = (0..a.pubs.len() as u32)
            .filter(|&i| node_of[i as usize] != u32::MAX)
            .map(|i| {
                let p = &a.pubs[i as usize].publication;
                (node_of[i as usize], rank[topic(i)], p.ts_rclcpp().unwrap_or(p.ts), i)
            })
            .collect();
        keyed.sort_unstable();
        drop(rank);
        let order: Vec<u32> = keyed.into_iter().map(|k| k.3).collect();
        let pubs = Groups::of_sorted(order, |&i| (node_of[i as usize], topic(i)));
        drop(node_of);
        let mut runs_of = Groups::of_dense(a.runs.iter().map(|r| r.callback));
        if !a.runs.windows(2).all(|w| w[0].run.start <= w[1].run.start) {
            let start = |i: &u32| (a.runs[*i as usize].run.start, *i);
            runs_of.each_mut(|v| v.sort_by_key(start));
        }
        let runs_on = RunsOnThreads::new(&a);
        let calls = Groups::of_sorted(Self::calls(&a, &runs_on), |c| c.sent_in);
        let mut taken: Vec<(u32, u32, u32)> = Vec::new();
        for f in a.flows {
            let LinkedTake { take: t, subscription: sub } = &a.takes[f.take as usize];
            let (Some(run), Some(sub)) = (t.run, sub) else { continue };
            if let Some(n) = m.subscriptions.get(*sub).node {
                taken.push((f.publication, name_of[n as usize], run));
            }
        }
        // (Stable: a publication's takes stay in the flows' order.)
        taken.sort_by_key(|t| t.0);
        let taken_by = Groups::of_sorted(taken, |t| t.0);
        PathIndex { a, pubs, names, runs_of, runs_on, calls, taken_by, jobs: 0 }
    }

    /// The service requests of `a` sent during a callback run, sorted by that run.
    fn calls(a: &View<'_>, runs_on: &RunsOnThreads) -> Vec<Call> {
        let Some(h) = a.get::<crate::ServiceHandler>() else { return Vec::new() };
        if h.client_calls.is_empty() {
            return Vec::new();
        }
        let m = a.model;
        let client_of = super::threads::clients_by_rmw(m);
        // Each client's response callbacks.
        let mut callbacks_of: HashMap<u32, Vec<u32>> = HashMap::default();
        for (id, cb) in m.callbacks.items.iter().enumerate() {
            if let Some(crate::model::Owner::Client(c)) = cb.owner {
                callbacks_of.entry(c).or_default().push(id as u32);
            }
        }
        let servers = crate::report::services::servers_of(m, h);
        let takes = super::threads::responses_by_thread(h, &client_of);
        let start = |r: u32| a.runs[r as usize].run.start;
        let mut out = Vec::new();
        for (c, server) in h.client_calls.iter().zip(servers) {
            let Some(&client) = client_of.get(&c.client) else { continue };
            let Some(sent_in) = runs_on.during(a, (c.client.0, c.client.1, c.vtid), c.ts_send) else { continue };
            let server = server.map(|i| &h.server_calls[i]);
            let served = server.and_then(|s| s.run).filter(|&r| (r as usize) < a.runs.len()).map(start);
            let answered = server.and_then(|s| s.response).map(|r| r.0);
            // What follows the response on its thread, up to the thread's next run of another
            // callback or its next response: the run of the client's callback that took it
            // (rclpy's, whose futures' callbacks then run outside any), or nothing around it
            // (rclcpp's, `rostrace_ros2`'s).
            let then = c.response.map(|(taken, _)| {
                let thread = (c.client.0, c.client.1, c.response_vtid);
                let on = runs_on.of(thread);
                let own = |r: u32| {
                    a.runs[r as usize]
                        .callback
                        .is_some_and(|cb| callbacks_of.get(&client).is_some_and(|v| v.contains(&cb)))
                };
                let next = on[on.partition_point(|&r| start(r) < taken)..].iter().copied().find(|&r| !own(r));
                let v = takes.get(&thread).map_or(&[][..], |v| v.as_slice());
                let after = v.get(v.partition_point(|x| x.0 <= taken)).map_or(i64::MAX, |x| x.0 - 1);
                (thread, taken, next.map_or(i64::MAX, start).min(after))
            });
            let cells = [Some(c.ts_send), served, answered, c.response.map(|r| r.0)];
            out.push(Call { client, sent_in, cells, then });
        }
        out.sort_by_key(|c| c.sent_in);
        out
    }

    fn run_start(&self, run: u32) -> i64 {
        self.a.runs[run as usize].run.start
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

    /// The records of each path written as [`Architecture::parse_path`] takes it (`paths`), then
    /// of each named path of the architecture (`named`), in that order; a path that cannot be
    /// found or followed is its error, starting with `what[0]` (a written path) or `what[1]` (a
    /// named one).
    pub fn follow(
        &self,
        arch: &Architecture,
        paths: &[String],
        named: &[String],
        opt: PathOptions,
        what: [&str; 2],
    ) -> Vec<Result<(PathSpec, PathRecords), String>> {
        let specs = arch.paths_asked(paths, named, what);
        specs.into_iter().map(|s| s.and_then(|s| self.records(arch, &s, opt).map(|r| (s, r)))).collect()
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

    /// The records of `path` in `arch` without their rows written out: each record's first and
    /// last cells and how far it got, sorted by the first cell.
    pub(crate) fn ends(&self, arch: &Architecture, path: &PathSpec, opt: PathOptions) -> Result<PathEnds, String> {
        let ch = self.chains(arch, path, opt)?;
        let width = ch.columns.0.len();
        let mut rows: Vec<(Option<i64>, Option<i64>, usize)> = (0..ch.rows.len()).map(|i| ch.ends(i, width)).collect();
        rows.sort_by_key(|r| r.0.unwrap_or(i64::MAX));
        Ok(PathEnds { width, superseded_at: ch.superseded_at, rows })
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
        let counts = PathCounts::of(rows.len(), complete, rows.iter().map(|r| r.2), width, &ch.superseded_at);
        Ok(RecordsSummary { counts, latency: Stats::of(&mut latencies) })
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
        // Per node, the service call its path goes through, if it does.
        let services: Vec<Option<&ServiceHop>> = (0..n)
            .map(|k| {
                let (sub, publish) = (path.topics.get(k.checked_sub(1)?)?, path.topics.get(k)?);
                nodes[k].path(sub, publish).and_then(|p| p.service.as_ref())
            })
            .collect();
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
                if let Some(hop) = services[k + 1] {
                    // The service call: request, the server's run, response, the node's run
                    // taking it (then what that run publishes).
                    let server = hop
                        .servers
                        .iter()
                        .filter_map(|s| arch.node(s))
                        .find_map(|i| {
                            arch.nodes[i]
                                .callbacks
                                .iter()
                                .find(|c| c.kind == "service_callback" && c.topic.as_deref() == Some(&hop.service))
                        })
                        .map_or_else(|| format!("{}/server", hop.service), |c| c.name.clone());
                    let c0 = columns.len();
                    push(&mut columns, format!("{}/send_request_timestamp", hop.service));
                    push(&mut columns, format!("{server}/callback_start_timestamp"));
                    push(&mut columns, format!("{}/send_response_timestamp", hop.service));
                    push(&mut columns, format!("{}/take_response_timestamp", hop.service));
                    segments.push(Segment {
                        name: format!("{} request", hop.service),
                        kind: "service",
                        columns: (c0, c0 + 1),
                    });
                    segments.push(Segment { name: server, kind: "node", columns: (c0 + 1, c0 + 2) });
                    segments.push(Segment {
                        name: format!("{} response", hop.service),
                        kind: "service",
                        columns: (c0 + 2, c0 + 3),
                    });
                    segments.push(Segment {
                        name: format!("{} after {}", path.nodes[k + 1], hop.service),
                        kind: "node",
                        columns: (c0 + 3, c0 + 4),
                    });
                }
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
            let pb = &a.pubs[p as usize].publication;
            let run = self
                .taken_by
                .get(&p)
                .iter()
                .filter(|&&(_, node, r)| {
                    node == node_ids[k + 1] && a.runs[r as usize].callback.is_some_and(|c| sub_cbs[k].ids.contains(&c))
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
                let pb = &a.pubs[p as usize].publication;
                let at = pb.ts_rclcpp().unwrap_or(pb.ts);
                let first = self.runs_on.latest(&a, (pb.trace, pb.vpid, pb.vtid), at).map(|r| self.run_start(r));
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
            // (Pairs sorted by run rather than a map of lists: no allocation per run.)
            let mut outputs: Vec<(u32, u32)> = Vec::new();
            let (context, link) = nodes[k]
                .path(&path.topics[k - 1], &path.topics[k])
                .map_or((Context::UseLatestMessage, None), |p| (p.context, p.link));
            if let Some(hop) = services[k] {
                rows = self.through_service(rows, &mut hops, hop, node_ids[k]);
            }
            match context {
                Context::CallbackChain if services[k].is_some() => {
                    // What follows each response on its thread (the records hold the calls now).
                    let pubs = pubs_of(k);
                    for (i, c) in self.calls.values.iter().enumerate() {
                        let Some((thread, from, to)) = c.then else { continue };
                        let at = |q: u32| {
                            let pb = &a.pubs[q as usize].publication;
                            pb.ts_rclcpp().unwrap_or(pb.ts)
                        };
                        let lo = pubs.partition_point(|&q| at(q) < from);
                        for &q in pubs[lo..].iter().take_while(|&&q| at(q) <= to) {
                            let pb = &a.pubs[q as usize].publication;
                            if (pb.trace, pb.vpid, pb.vtid) == thread {
                                outputs.push((i as u32, q));
                            }
                        }
                    }
                }
                Context::CallbackChain => {
                    for &q in pubs_of(k) {
                        let pb = &a.pubs[q as usize].publication;
                        if let Some(r) = pb.in_run() {
                            if a.runs[r as usize].callback.is_some_and(|c| input.ids.contains(&c)) {
                                outputs.push((r, q));
                            }
                        }
                    }
                }
                Context::UseLatestMessage => {
                    let runs = self.runs(&input.ids);
                    let starts: Vec<i64> = runs.iter().map(|&r| self.run_start(r)).collect();
                    for &q in pubs_of(k) {
                        let pb = &a.pubs[q as usize].publication;
                        let at = pb.ts_rclcpp().unwrap_or(pb.ts);
                        let i = starts.partition_point(|&s| s <= at);
                        if let Some(&r) = i.checked_sub(1).and_then(|i| runs.get(i)) {
                            outputs.push((r, q));
                        }
                    }
                }
            }
            // (Stable: a run's outputs stay in the order of their publications.)
            outputs.sort_by_key(|o| o.0);
            if link == Some(LinkKind::PartialSync) {
                // A synchronizer publishes a message once: its first output.
                outputs.dedup_by_key(|o| o.0);
            }
            let outputs_of = |r: u32| -> &[(u32, u32)] {
                let lo = outputs.partition_point(|o| o.0 < r);
                let hi = lo + outputs[lo..].partition_point(|o| o.0 == r);
                &outputs[lo..hi]
            };
            // A run handles one message: one record goes on from it, the newest that reached
            // it (records are in the order of their first publication), the others stop there.
            // Then no output is in two records, and a path has at most as many records as
            // publications, whatever the times.
            let mut reached: Vec<(u32, usize)> =
                rows.iter().enumerate().filter_map(|(j, (_, run))| run.map(|r| (r, j))).collect();
            // (Stable: the newest record of a run is the last of its run's.)
            reached.sort_by_key(|x| x.0);
            let newest = |r: u32| -> Option<usize> {
                let i = reached.partition_point(|x| x.0 <= r);
                i.checked_sub(1).map(|i| reached[i]).filter(|x| x.0 == r).map(|x| x.1)
            };
            let mut next = Vec::with_capacity(rows.len());
            for (j, (hop, run)) in rows.into_iter().enumerate() {
                // A record that stopped before has no run.
                match run.filter(|&r| newest(r) == Some(j)).map(outputs_of).filter(|qs| !qs.is_empty()) {
                    Some(qs) => {
                        for &(_, q) in qs {
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
        let rows = rows.into_iter().map(|(last, run)| (last, run.and_then(|r| a.runs[r as usize].run.end()))).collect();
        Ok(Chains { columns: (columns, segments), superseded_at, hops, firsts, rows, opt })
    }

    /// Records (`rows`: last hop, run reached) taken on through the service call `hop` of node
    /// `node`: a record that reached a run goes on to each request of the service the node's
    /// clients sent during it (one record each), then to the run that took its response; one
    /// that reached none, or whose run sent none, stops. As in a node path, one record goes on
    /// from a run: the newest that reached it.
    fn through_service(
        &self,
        rows: Vec<(u32, Option<u32>)>,
        hops: &mut Vec<Hop>,
        hop: &ServiceHop,
        node: u32,
    ) -> Vec<(u32, Option<u32>)> {
        let m = self.a.model;
        // The node's clients of the service.
        let clients: Vec<u32> = (0..m.clients.items.len() as u32)
            .filter(|&i| {
                let c = m.clients.get(i);
                c.name == hop.service
                    && c.node.is_some_and(|n| self.names.get(&m.nodes.get(n).full_name()) == Some(&node))
            })
            .collect();
        let of_node = |client: u32| clients.contains(&client);
        let mut newest: HashMap<u32, usize> = HashMap::default();
        for (j, (_, run)) in rows.iter().enumerate() {
            if let Some(r) = run {
                newest.insert(*r, j);
            }
        }
        let mut next = Vec::with_capacity(rows.len());
        for (j, (last, run)) in rows.into_iter().enumerate() {
            let calls = run.filter(|r| newest.get(r) == Some(&j)).map_or(0..0, |r| self.calls.range(&r));
            let mut went = false;
            for i in calls.filter(|&i| of_node(self.calls.values[i].client)) {
                // (The records hold the call, by its index, as they held the run.)
                next.push((hops.len() as u32, Some(i as u32)));
                hops.push(Hop { parent: last, cells: self.calls.values[i].cells });
                went = true;
            }
            if !went {
                next.push((last, None));
            }
        }
        next
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

#[cfg(test)]
mod tests {
    use super::Groups;

    /// The counting sort groups as a stable sort by key does: keys in order, each group's
    /// indices in index order, the indices of no key left out.
    #[test]
    fn dense_keys_group_as_a_stable_sort_does() {
        let keys: Vec<Option<u32>> =
            (0..5000u32).map(|i| (i % 7 != 3).then_some((i.wrapping_mul(2_654_435_761) >> 7) % 40)).collect();
        let g = Groups::of_dense(keys.iter().copied());
        let mut sorted: Vec<u32> = (0..keys.len() as u32).filter(|&i| keys[i as usize].is_some()).collect();
        sorted.sort_by_key(|&i| keys[i as usize]);
        let want = Groups::of_sorted(sorted, |&i| keys[i as usize].unwrap_or(0));
        assert_eq!((&g.keys, &g.ends, &g.values), (&want.keys, &want.ends, &want.values));
        let none = Groups::of_dense([None, None].into_iter());
        assert!(none.keys.is_empty() && none.values.is_empty() && none.get(&0).is_empty());
    }
}
