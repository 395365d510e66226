//! From collected instances to results: callbacks with their statistics, message flows matched
//! publish → take → callback, topics with latency statistics, time per process, node, thread.

use crate::hash::{HashMap, HashSet};
use crate::model::*;
use crate::pass::{Collected, Publication, Run, Take};
use crate::stats::Stats;
use serde::Serialize;
use std::collections::BTreeMap;

/// How a flow's publication and take were matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchBy {
    /// Same topic and DDS source timestamp on both sides.
    SourceTimestamp,
    /// Publisher side has no source timestamp (older tracetools without DDS events): the take's
    /// source timestamp falls inside the one `rmw_publish` call on that topic that contains it.
    PublishWindow,
    /// Intra-process: ring buffer slot or message address.
    IntraProcess,
}

/// A message from its publication to its take (and the callback that handled it).
#[derive(Debug, Clone, Serialize)]
pub struct Flow {
    /// Index in [`Analysis::pubs`].
    pub publication: u32,
    /// Index in [`Analysis::takes`].
    pub take: u32,
    /// Topic.
    pub topic: String,
    /// How they were matched.
    pub by: MatchBy,
    /// publish → take (ns).
    pub pub_to_take_ns: i64,
    /// publish → callback start (ns), when the callback run is known.
    pub pub_to_callback_ns: Option<i64>,
}

/// One callback's results.
#[derive(Debug, Clone, Serialize)]
pub struct CallbackReport {
    /// Trace index.
    pub trace: u32,
    /// Process.
    pub vpid: i64,
    /// Process name.
    pub procname: String,
    /// Address of the callback object.
    pub address: u64,
    /// Symbol.
    pub symbol: String,
    /// Owning node, `/ns/name`.
    pub node: String,
    /// `subscription`, `timer`, `service` or `unknown`.
    pub kind: String,
    /// Why the kind is `unknown`: which initialization event is not in the trace.
    pub unknown_reason: Option<String>,
    /// Topic (subscription) or service name.
    pub topic: Option<String>,
    /// Timer period (ns).
    pub timer_period_ns: Option<i64>,
    /// Completed runs.
    pub count: u64,
    /// Runs that started and did not end before the trace did.
    pub unfinished: u64,
    /// Runs flagged intra-process.
    pub intra_process: u64,
    /// Durations.
    pub duration_ns: Stats,
    /// Time between starts.
    pub period_ns: Stats,
    /// Time between starts minus the timer period (timers only).
    pub jitter_ns: Option<Stats>,
    /// Total run time.
    pub total_ns: i64,
    /// Share of all callback time.
    pub share: f64,
}

/// A reason and how many times it applied.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ReasonCount {
    /// The reason.
    pub reason: String,
    /// How many.
    pub count: u64,
}

/// Latency statistics of one publisher → subscription pair.
#[derive(Debug, Clone, Serialize)]
pub struct PairReport {
    /// Publishing node.
    pub publisher_node: String,
    /// Publisher process.
    pub publisher_vpid: i64,
    /// Subscribing node.
    pub subscription_node: String,
    /// Subscriber process.
    pub subscription_vpid: i64,
    /// Matched messages.
    pub count: u64,
    /// publish → take.
    pub pub_to_take_ns: Stats,
    /// publish → callback start.
    pub pub_to_callback_ns: Stats,
}

/// One topic's results.
#[derive(Debug, Clone, Serialize)]
pub struct TopicReport {
    /// Name.
    pub name: String,
    /// Publishing nodes.
    pub publishers: Vec<String>,
    /// Subscribing nodes.
    pub subscribers: Vec<String>,
    /// Publications seen.
    pub publishes: u64,
    /// Takes that took a message.
    pub takes: u64,
    /// Takes matched to their publication.
    pub matched: u64,
    /// Takes that could not be matched (counted, never guessed).
    pub unmatched: u64,
    /// Why they could not be matched, with counts (most frequent first).
    pub unmatched_reasons: Vec<ReasonCount>,
    /// Messages dropped: publications of this topic (by a traced publisher, identifiable by
    /// source timestamp or publish window, not intra-process) that a subscription of the topic
    /// never took although they were published between the first message it took and its
    /// last take; summed over the subscriptions that took messages (by `rmw_take` or CARET's
    /// dispatch). `None` when no subscription of the topic has a matched take, so that drops
    /// cannot be known.
    pub dropped: Option<u64>,
    /// Matched by source timestamp.
    pub by_source_timestamp: u64,
    /// Matched by publish window.
    pub by_publish_window: u64,
    /// Matched intra-process.
    pub intra_process: u64,
    /// publish → take.
    pub pub_to_take_ns: Stats,
    /// publish → callback start.
    pub pub_to_callback_ns: Stats,
    /// take → callback start.
    pub take_to_callback_ns: Stats,
    /// Per publisher/subscription pair.
    pub pairs: Vec<PairReport>,
}

/// Callback time of one process, node or thread.
#[derive(Debug, Clone, Serialize)]
pub struct TimeShare {
    /// Trace index.
    pub trace: u32,
    /// Process.
    pub vpid: i64,
    /// Thread, node or process name.
    pub name: String,
    /// Thread id (threads only).
    pub vtid: Option<i64>,
    /// Callback runs.
    pub runs: u64,
    /// Callback time (ns).
    pub callback_ns: i64,
    /// Share of all callback time.
    pub share: f64,
    /// Callback time over the trace duration (or the window's); above 1 when callbacks ran on
    /// several threads at once.
    pub busy: f64,
    /// Threads that ran these callbacks.
    pub threads: u64,
}

/// A node as reported.
#[derive(Debug, Clone, Serialize)]
pub struct NodeReport {
    /// Trace index.
    pub trace: u32,
    /// Process.
    pub vpid: i64,
    /// `/ns/name`.
    pub name: String,
    /// Topics published.
    pub publishes: Vec<String>,
    /// Topics subscribed.
    pub subscribes: Vec<String>,
    /// Timer periods (ns).
    pub timers_ns: Vec<i64>,
    /// Services offered.
    pub services: Vec<String>,
    /// Services called.
    pub clients: Vec<String>,
}

/// An executor or callback group as reported (CARET traces).
#[derive(Debug, Clone, Serialize)]
pub struct ExecutorReport {
    /// Process.
    pub vpid: i64,
    /// Executor type.
    pub kind: String,
    /// Address.
    pub address: u64,
    /// Callback groups: (type, address, members count).
    pub groups: Vec<(String, u64, usize)>,
}

/// One service's requests and responses (from Kilted's rmw events).
#[derive(Debug, Clone, Serialize)]
pub struct ServiceReport {
    /// Service name.
    pub name: String,
    /// Server node.
    pub server_node: String,
    /// Server process.
    pub server_vpid: i64,
    /// Requests clients sent.
    pub requests_sent: u64,
    /// Requests the server took.
    pub requests_served: u64,
    /// Responses clients took.
    pub responses_received: u64,
    /// Requests matched client → server (client GID and sequence number).
    pub requests_matched: u64,
    /// Responses matched server → client (source timestamp and sequence number).
    pub responses_matched: u64,
    /// Client send → server take.
    pub request_ns: Stats,
    /// Server take → response sent.
    pub service_ns: Stats,
    /// Response sent → client take.
    pub response_ns: Stats,
    /// Client send → client take of the response.
    pub round_trip_ns: Stats,
}

/// Time a thread's executor spent per phase (`rclcpp_executor_*` events).
#[derive(Debug, Clone, Serialize)]
pub struct ExecutorThread {
    /// Process.
    pub vpid: i64,
    /// Thread.
    pub vtid: i64,
    /// Process name.
    pub procname: String,
    /// Getting the next ready executable (ns).
    pub get_next_ns: i64,
    /// Waiting for work (ns).
    pub wait_ns: i64,
    /// Executing (ns).
    pub execute_ns: i64,
    /// Executions.
    pub executions: u64,
}

/// A lifecycle transition.
#[derive(Debug, Clone, Serialize)]
pub struct TransitionReport {
    /// Node.
    pub node: String,
    /// Time (ns).
    pub ts: i64,
    /// From.
    pub start: String,
    /// To.
    pub goal: String,
}

/// The whole result, for the terminal report and JSON.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// Events read.
    pub events: u64,
    /// ROS 2 events used.
    pub ros_events: u64,
    /// First event (ns).
    pub begin_ns: Option<i64>,
    /// Last event (ns).
    pub end_ns: Option<i64>,
    /// The time window analyzed (ns since the epoch), when one was given.
    pub window_ns: Option<(i64, i64)>,
    /// The time base of the times since the epoch when it is not the trace's clock: `sim` after
    /// [`Report::map_times`] to sim time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<&'static str>,
    /// What the trace cannot show, and why.
    pub notes: Vec<crate::notes::Note>,
    /// Errors met while reading (also among the warnings).
    pub read_errors: Vec<String>,
    /// Processes.
    pub processes: Vec<Process>,
    /// Nodes.
    pub nodes: Vec<NodeReport>,
    /// Topics.
    pub topics: Vec<TopicReport>,
    /// Callbacks, by total time.
    pub callbacks: Vec<CallbackReport>,
    /// Callback time per process.
    pub per_process: Vec<TimeShare>,
    /// Callback time per node.
    pub per_node: Vec<TimeShare>,
    /// Callback time per thread.
    pub per_thread: Vec<TimeShare>,
    /// Executors and callback groups.
    pub executors: Vec<ExecutorReport>,
    /// Executor phases per thread.
    pub executor_threads: Vec<ExecutorThread>,
    /// Services with request/response instances.
    pub services: Vec<ServiceReport>,
    /// Lifecycle transitions.
    pub lifecycle_transitions: Vec<TransitionReport>,
    /// Messages matched in all.
    pub flows_matched: u64,
    /// Takes not matched in all.
    pub flows_unmatched: u64,
    /// `callback_end` without a start.
    pub unmatched_callback_ends: u64,
    /// Discarded events.
    pub discarded_events: u64,
    /// Warnings.
    pub warnings: Vec<String>,
    /// System analyses (kernel and userspace events beside the ROS 2 ones), when the trace has
    /// their events.
    pub system: crate::system::SystemReport,
    /// The longest end-to-end paths between sources and sinks, when asked for
    /// ([`crate::paths::longest_paths`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub longest_paths: Option<crate::paths::LongestPaths>,
}

impl Report {
    /// Maps the times since the epoch (span, window, memory peaks and timelines) with `f` into
    /// the time base `base` (e.g. `sim`); durations and latencies stay as they are. Open ends
    /// of a window (`i64::MIN`, `i64::MAX`) stay open.
    pub fn map_times(&mut self, base: &'static str, f: impl Fn(i64) -> i64) {
        let g = |t: i64| if t == i64::MIN || t == i64::MAX { t } else { f(t) };
        self.begin_ns = self.begin_ns.map(g);
        self.end_ns = self.end_ns.map(g);
        self.window_ns = self.window_ns.map(|(a, b)| (g(a), g(b)));
        if let Some(m) = &mut self.system.memory {
            for p in &mut m.processes {
                p.max_at_ns = g(p.max_at_ns);
                for point in &mut p.timeline {
                    point.0 = g(point.0);
                }
            }
        }
        self.time = Some(base);
    }
}

/// Collected data, resolved: the tables behind the report, for exports.
pub struct Analysis {
    /// The model.
    pub model: Model,
    /// Callback runs, with the callback object each belongs to (None: no initialization event).
    pub runs: Vec<(crate::pass::Run, Option<u32>)>,
    /// Callback handles of the runs (see `Run::slot`).
    pub slots: Vec<Key>,
    /// Publications, with their topic.
    pub pubs: Vec<(Publication, Option<String>)>,
    /// Takes, with their subscription.
    pub takes: Vec<(Take, Option<u32>)>,
    /// Matched flows.
    pub flows: Vec<Flow>,
    /// The report.
    pub report: Report,
}

fn pub_topic(m: &Model, p: &Publication) -> Option<String> {
    if p.publisher != 0 {
        if let Some(id) = m.publishers.at((p.trace, p.vpid, p.publisher), p.ts) {
            return Some(m.publishers.get(id).topic.clone());
        }
    }
    if p.rmw_publisher != 0 {
        if let Some(id) = m.publishers_by_rmw.at((p.trace, p.vpid, p.rmw_publisher), p.ts) {
            return Some(m.publishers.get(*m.publishers_by_rmw.get(id)).topic.clone());
        }
    }
    if p.writer != 0 {
        return m.writer_topics.get(&(p.trace, p.vpid, p.writer)).cloned();
    }
    None
}

/// The publisher (id in `m.publishers`) of a publication, by its rcl handle or else its rmw handle.
pub(crate) fn pub_id(m: &Model, p: &Publication) -> Option<u32> {
    if p.publisher != 0 {
        if let Some(id) = m.publishers.at((p.trace, p.vpid, p.publisher), p.ts) {
            return Some(id);
        }
    }
    if p.rmw_publisher != 0 {
        if let Some(id) = m.publishers_by_rmw.at((p.trace, p.vpid, p.rmw_publisher), p.ts) {
            return Some(*m.publishers_by_rmw.get(id));
        }
    }
    None
}

fn pub_node(m: &Model, p: &Publication) -> Option<u32> {
    if p.publisher != 0 {
        if let Some(id) = m.publishers.at((p.trace, p.vpid, p.publisher), p.ts) {
            return m.publishers.get(id).node;
        }
    }
    if p.rmw_publisher != 0 {
        if let Some(id) = m.publishers_by_rmw.at((p.trace, p.vpid, p.rmw_publisher), p.ts) {
            return m.publishers.get(*m.publishers_by_rmw.get(id)).node;
        }
    }
    None
}

/// Resolves the collected data and computes every metric.
pub fn analyze(c: Collected, p: &crate::Processor) -> Analysis {
    let (mut a, rest) = link(c, 1);
    a.report = report(&a, rest, p);
    a
}

/// What the report needs besides the linked tables of [`link`].
pub(crate) struct Rest {
    unmatched_ends: HashMap<(u32, i64), u64>,
    events: u64,
    ros_events: u64,
    range: Option<(i64, i64)>,
    errors: Vec<String>,
    discarded: u64,
    window: Option<(i64, i64)>,
    unused_events: Vec<(String, u64)>,
    warnings: Vec<String>,
    pub_count: HashMap<String, u64>,
    takes_by_topic: HashMap<String, u64>,
    unmatched_by_topic: HashMap<String, u64>,
    reasons_by_topic: HashMap<String, BTreeMap<&'static str, u64>>,
    dropped_by_topic: HashMap<String, u64>,
}

/// The collected instances linked: callback runs to their callbacks, takes to their
/// subscriptions, publications to their topics, and takes matched to their publications (the
/// flows). The report is empty: [`report`] makes it from these tables and the rest. With
/// `threads` > 1, the runs and the publications are linked at the same time.
pub(crate) fn link(c: Collected, threads: usize) -> (Analysis, Rest) {
    let Collected {
        model: m,
        runs,
        slots,
        pubs,
        takes,
        unmatched_ends,
        events,
        ros_events,
        range,
        errors,
        losses,
        discarded,
        window,
        unused_events,
        ..
    } = c;
    let mut warnings: Vec<String> = errors.iter().map(|e| format!("read error: {e}")).collect();
    warnings.extend(losses.iter().cloned());

    // Callback runs → callback objects; publications → topics (on two threads, when there are).
    let versions: Vec<&[(i64, u32)]> = slots.iter().map(|k| m.callbacks.versions(*k).unwrap_or(&[])).collect();
    let link_runs = |runs: Vec<crate::pass::Run>| -> Vec<(crate::pass::Run, Option<u32>)> {
        runs.into_iter()
            .map(|r| {
                let id = version_at(versions[r.slot()], r.start);
                (r, id)
            })
            .collect()
    };
    let link_pubs = |pubs: Vec<Publication>| -> Vec<(Publication, Option<String>)> {
        pubs.into_iter()
            .map(|p| {
                let topic = pub_topic(&m, &p);
                (p, topic)
            })
            .collect()
    };
    let (runs, pubs) = if threads > 1 {
        std::thread::scope(|s| {
            let h = ctf::spawn_off(s, 1, || link_pubs(pubs));
            ctf::let_started_move();
            let runs = link_runs(runs);
            (runs, h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
        })
    } else {
        (link_runs(runs), link_pubs(pubs))
    };

    // Takes → subscriptions.
    let takes: Vec<(Take, Option<u32>)> = takes
        .into_iter()
        .map(|t| {
            let sub = if t.rmw_subscription != 0 {
                m.subscriptions_by_rmw
                    .at((t.trace, t.vpid, t.rmw_subscription), t.ts)
                    .map(|i| *m.subscriptions_by_rmw.get(i))
            } else {
                None
            };
            let sub = sub.or_else(|| {
                let cb = if t.callback != 0 {
                    m.callbacks.at((t.trace, t.vpid, t.callback), t.ts)
                } else {
                    t.run.and_then(|r| runs[r as usize].1)
                };
                match cb.and_then(|c| m.callbacks.get(c).owner) {
                    Some(Owner::Subscription(s)) => Some(s),
                    _ => None,
                }
            });
            (t, sub)
        })
        .collect();
    // Flows.
    let mut by_source: HashMap<(&str, i64), u32> = HashMap::default();
    let mut windows: HashMap<&str, Vec<(i64, i64, u32)>> = HashMap::default();
    // Publications a take can be matched to, per topic, and the range of their source times.
    let mut matchable: HashMap<&str, Vec<u32>> = HashMap::default();
    let mut source_range: HashMap<&str, (i64, i64)> = HashMap::default();
    let mut pub_count: HashMap<&str, u64> = HashMap::default();
    for (i, (p, topic)) in pubs.iter().enumerate() {
        let Some(topic) = topic else { continue };
        *pub_count.entry(topic.as_str()).or_default() += 1;
        if p.intra {
            continue;
        }
        let span = match p.source_ts {
            Some(s) if s != 0 => {
                by_source.entry((topic.as_str(), s)).or_insert(i as u32);
                Some((s, s))
            }
            _ => match (p.ts_rmw, p.ts_after) {
                (Some(a), Some(b)) => {
                    windows.entry(topic.as_str()).or_default().push((a, b, i as u32));
                    Some((a, b))
                }
                _ => None,
            },
        };
        if let Some((a, b)) = span {
            matchable.entry(topic.as_str()).or_default().push(i as u32);
            let r = source_range.entry(topic.as_str()).or_insert((a, b));
            r.0 = r.0.min(a);
            r.1 = r.1.max(b);
        }
    }
    let published_topics: HashSet<&str> = m.publishers.items.iter().map(|p| p.topic.as_str()).collect();
    for w in windows.values_mut() {
        w.sort_unstable();
    }
    let mut flows = Vec::new();
    let mut unmatched_by_topic: HashMap<String, u64> = HashMap::default();
    let mut reasons_by_topic: HashMap<String, BTreeMap<&'static str, u64>> = HashMap::default();
    let mut takes_by_topic: HashMap<String, u64> = HashMap::default();
    for (ti, (t, sub)) in takes.iter().enumerate() {
        if !t.taken {
            continue;
        }
        let topic = sub.map(|s| m.subscriptions.get(s).topic.clone());
        let Some(topic) = topic else { continue };
        *takes_by_topic.entry(topic.clone()).or_default() += 1;
        let found = if t.intra {
            // Same message object, and it was published on this subscription's topic.
            t.intra_pub
                .filter(|p| pubs[*p as usize].1.as_deref() == Some(topic.as_str()))
                .map(|p| (p, MatchBy::IntraProcess))
        } else if t.source_ts != 0 {
            by_source.get(&(topic.as_str(), t.source_ts)).map(|p| (*p, MatchBy::SourceTimestamp)).or_else(|| {
                let w = windows.get(topic.as_str())?;
                let k = w.partition_point(|(a, _, _)| *a <= t.source_ts);
                let (a, b, p) = *w.get(k.checked_sub(1)?)?;
                (a <= t.source_ts && t.source_ts <= b).then_some((p, MatchBy::PublishWindow))
            })
        } else {
            None
        };
        match found {
            Some((p, by)) => {
                let pt = pubs[p as usize].0.ts;
                flows.push(Flow {
                    publication: p,
                    take: ti as u32,
                    topic,
                    by,
                    pub_to_take_ns: t.ts - pt,
                    pub_to_callback_ns: t.run.map(|r| runs[r as usize].0.start - pt),
                });
            }
            None => {
                let reason = unmatched_reason(
                    t,
                    pub_count.get(topic.as_str()).copied().unwrap_or(0),
                    published_topics.contains(topic.as_str()),
                    source_range.get(topic.as_str()).copied(),
                );
                *reasons_by_topic.entry(topic.clone()).or_default().entry(reason).or_default() += 1;
                *unmatched_by_topic.entry(topic).or_default() += 1;
            }
        }
    }
    let dropped_by_topic: HashMap<String, u64> =
        dropped(&pubs, &takes, &flows, &matchable, &m).into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let pub_count: HashMap<String, u64> = pub_count.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let rest = Rest {
        unmatched_ends,
        events,
        ros_events,
        range,
        errors,
        discarded,
        window,
        unused_events,
        warnings,
        pub_count,
        takes_by_topic,
        unmatched_by_topic,
        reasons_by_topic,
        dropped_by_topic,
    };
    (Analysis { model: m, runs, slots, pubs, takes, flows, report: Report::default() }, rest)
}

/// The report of linked tables (see [`link`]) and of the standard handlers of `p`.
pub(crate) fn report(a: &Analysis, rest: Rest, p: &crate::Processor) -> Report {
    let Rest {
        unmatched_ends,
        events,
        ros_events,
        range,
        errors,
        discarded,
        window,
        unused_events,
        mut warnings,
        pub_count,
        takes_by_topic,
        unmatched_by_topic,
        reasons_by_topic,
        dropped_by_topic,
    } = rest;
    let (m, runs, slots, pubs, takes, flows) = (&a.model, &a.runs, &a.slots, &a.pubs, &a.takes, &a.flows);
    let duration = range.map(|(a, b)| (b - a).max(1)).unwrap_or(1);

    // Callbacks.
    // Runs by callback handle and callback, in the order of (handle, callback).
    let mut by_slot: Vec<Vec<(Option<u32>, Vec<u32>)>> = vec![Vec::new(); slots.len()];
    for (i, (r, id)) in runs.iter().enumerate() {
        let Some(of_slot) = by_slot.get_mut(r.slot()) else { continue };
        match of_slot.iter_mut().find(|(k, _)| k == id) {
            Some((_, v)) => v.push(i as u32),
            None => of_slot.push((*id, vec![i as u32])),
        }
    }
    type Group = ((Key, Option<u32>), Vec<u32>);
    let mut groups: Vec<Group> = by_slot
        .into_iter()
        .enumerate()
        .flat_map(|(slot, v)| v.into_iter().map(move |(id, runs)| ((slots[slot], id), runs)))
        .collect();
    groups.sort_unstable_by_key(|(k, _)| *k);
    let total_cb: i64 = runs.iter().filter_map(|(r, _)| r.duration()).sum::<i64>().max(1);
    let procname = |t: u32, vpid: i64| m.processes.get(&(t, vpid)).map(|p| p.procname.clone()).unwrap_or_default();
    let mut callbacks = Vec::new();
    let mut per_node: HashMap<(u32, i64, String), (u64, i64)> = HashMap::default();
    // The threads each node's callbacks ran on.
    let mut node_threads: HashMap<(u32, i64, String), HashSet<i32>> = HashMap::default();
    let mut unknown_callbacks: BTreeMap<(u32, i64), u64> = BTreeMap::new();
    // Runs still open when the trace (or window) ended, per process.
    let mut open_runs: HashMap<(u32, i64), u64> = HashMap::default();
    let mut service_runs: HashSet<(u32, i64)> = HashSet::default();
    let mut per_thread: HashMap<(u32, i64, i64), (u64, i64)> = HashMap::default();
    let mut per_proc: HashMap<(u32, i64), (u64, i64)> = HashMap::default();
    for ((key, id), idx) in &groups {
        let idx: Vec<Run> = idx.iter().map(|&i| runs[i as usize].0).collect();
        let cb = id.map(|i| m.callbacks.get(i));
        let mut durations: Vec<i64> = idx.iter().filter_map(|r| r.duration()).collect();
        let mut starts: Vec<i64> = idx.iter().map(|r| r.start).collect();
        starts.sort_unstable();
        let mut periods: Vec<i64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
        let (kind, topic, timer_period) = match cb.and_then(|c| c.owner) {
            Some(Owner::Subscription(s)) => ("subscription", Some(m.subscriptions.get(s).topic.clone()), None),
            Some(Owner::Timer(t)) => ("timer", None, Some(m.timers.get(t).period_ns)),
            Some(Owner::Service(s)) => ("service", Some(m.services.get(s).name.clone()), None),
            Some(Owner::Client(c)) => ("client", Some(m.clients.get(c).name.clone()), None),
            None => ("unknown", None, None),
        };
        let unknown_reason = match cb {
            _ if kind != "unknown" => None,
            None => Some(
                "no rclcpp_callback_register nor rclcpp_*_callback_added for it: created before tracing started"
                    .to_string(),
            ),
            Some(c) => Some(
                match c.owner_ref {
                    None => {
                        "registered, but not added to a subscription, timer or service (no \
                             rclcpp_*_callback_added)"
                    }
                    Some(OwnerRef::Subscription(_)) => {
                        "its subscription's initialization (rcl_subscription_init, rclcpp_subscription_init) is \
                         not in the trace"
                    }
                    Some(OwnerRef::Timer(_)) => "its timer's initialization (rcl_timer_init) is not in the trace",
                    Some(OwnerRef::Service(_)) => "its service's initialization (rcl_service_init) is not in the trace",
                }
                .to_string(),
            ),
        };
        let open = idx.iter().filter(|r| r.duration().is_none()).count() as u64;
        if open > 0 {
            *open_runs.entry((key.0, key.1)).or_default() += open;
        }
        match kind {
            "unknown" if !idx.is_empty() => *unknown_callbacks.entry((key.0, key.1)).or_default() += 1,
            "service" if !idx.is_empty() => {
                service_runs.insert((key.0, key.1));
            }
            _ => {}
        }
        let jitter = timer_period.map(|tp| Stats::of(&mut periods.iter().map(|p| p - tp).collect::<Vec<_>>()));
        let node = cb.and_then(|c| m.callback_node(c));
        let total: i64 = durations.iter().sum();
        let node_name = m.node_name(node);
        let e = per_node.entry((key.0, key.1, node_name.clone())).or_default();
        e.0 += durations.len() as u64;
        e.1 += total;
        // The threads its runs were on (a few): runs that ended and their time on each.
        let mut on: Vec<(i32, u64, i64)> = Vec::new();
        for r in &idx {
            let d = r.duration();
            let (n, ns) = (u64::from(d.is_some()), d.unwrap_or(0));
            match on.iter_mut().find(|x| x.0 == r.vtid) {
                Some(x) => (x.1, x.2) = (x.1 + n, x.2 + ns),
                None => on.push((r.vtid, n, ns)),
            }
        }
        node_threads.entry((key.0, key.1, node_name.clone())).or_default().extend(on.iter().map(|x| x.0));
        for &(vtid, n, ns) in on.iter().filter(|x| x.1 > 0) {
            let x = per_thread.entry((key.0, key.1, vtid as i64)).or_default();
            (x.0, x.1) = (x.0 + n, x.1 + ns);
            let y = per_proc.entry((key.0, key.1)).or_default();
            (y.0, y.1) = (y.0 + n, y.1 + ns);
        }
        callbacks.push(CallbackReport {
            trace: key.0,
            vpid: key.1,
            procname: procname(key.0, key.1),
            address: key.2,
            symbol: cb.map(|c| c.symbol.clone()).unwrap_or_default(),
            node: node_name,
            kind: kind.to_string(),
            unknown_reason,
            topic,
            timer_period_ns: timer_period,
            count: durations.len() as u64,
            unfinished: idx.iter().filter(|r| r.end().is_none()).count() as u64,
            intra_process: idx.iter().filter(|r| r.intra()).count() as u64,
            duration_ns: Stats::of(&mut durations),
            period_ns: Stats::of(&mut periods),
            jitter_ns: jitter,
            total_ns: total,
            share: total as f64 / total_cb as f64,
        });
    }
    callbacks.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.vpid.cmp(&b.vpid)).then(a.address.cmp(&b.address)));
    for cb in &callbacks {
        if cb.unfinished > 0 {
            warnings.push(format!(
                "callback {:#x} of process {} ({}) started {} time(s) without ending before the trace did",
                cb.address, cb.vpid, cb.symbol, cb.unfinished
            ));
        }
    }
    let unmatched_total: u64 = unmatched_ends.values().sum();
    if unmatched_total > 0 {
        warnings.push(format!(
            "{unmatched_total} callback_end event(s) without a callback_start ({} started mid-callback)",
            if window.is_some() { "the window" } else { "the trace" }
        ));
    }

    // Time shares (per thread and process, summed with the callbacks above).
    let mut proc_threads: HashMap<(u32, i64), u64> = HashMap::default();
    for (t, p, _) in per_thread.keys() {
        *proc_threads.entry((*t, *p)).or_default() += 1;
    }
    let share =
        |trace: u32, vpid: i64, name: String, vtid: Option<i64>, threads: u64, (runs, ns): (u64, i64)| TimeShare {
            trace,
            vpid,
            name,
            vtid,
            runs,
            callback_ns: ns,
            share: ns as f64 / total_cb as f64,
            busy: ns as f64 / duration as f64,
            threads,
        };
    let mut per_thread: Vec<TimeShare> =
        per_thread.into_iter().map(|((t, p, tid), v)| share(t, p, procname(t, p), Some(tid), 1, v)).collect();
    let mut per_process: Vec<TimeShare> = per_proc
        .into_iter()
        .map(|((t, p), v)| share(t, p, procname(t, p), None, proc_threads.get(&(t, p)).copied().unwrap_or(0), v))
        .collect();
    let mut per_node: Vec<TimeShare> = per_node
        .into_iter()
        .map(|((t, p, n), v)| {
            let k = node_threads.get(&(t, p, n.clone())).map_or(0, |s| s.len() as u64);
            share(t, p, n, None, k, v)
        })
        .collect();
    for v in [&mut per_thread, &mut per_process, &mut per_node] {
        v.sort_by(|a, b| {
            let by_time = b.callback_ns.cmp(&a.callback_ns).then(a.trace.cmp(&b.trace)).then(a.vpid.cmp(&b.vpid));
            // (Ties on to the thread and the node, not left in a hash map's order.)
            by_time.then(a.vtid.cmp(&b.vtid)).then_with(|| a.name.cmp(&b.name))
        });
    }

    // Topics.
    let mut topic_names: BTreeMap<String, ()> = BTreeMap::new();
    for p in &m.publishers.items {
        topic_names.insert(p.topic.clone(), ());
    }
    for s in &m.subscriptions.items {
        topic_names.insert(s.topic.clone(), ());
    }
    let mut flows_by_topic: HashMap<&str, Vec<&Flow>> = HashMap::default();
    for f in flows {
        flows_by_topic.entry(f.topic.as_str()).or_default().push(f);
    }
    // Each topic's publishers and subscriptions, in creation order.
    fn by_topic(items: &[Endpoint]) -> HashMap<&str, Vec<Option<u32>>> {
        let mut by: HashMap<&str, Vec<Option<u32>>> = HashMap::default();
        for p in items {
            by.entry(p.topic.as_str()).or_default().push(p.node);
        }
        by
    }
    let (publishers_of, subscribers_of) = (by_topic(&m.publishers.items), by_topic(&m.subscriptions.items));
    let mut topics = Vec::new();
    for name in topic_names.keys() {
        let fl = flows_by_topic.get(name.as_str()).map(|v| v.as_slice()).unwrap_or(&[]);
        let nodes_of = |pubs: bool| {
            let of = if pubs { &publishers_of } else { &subscribers_of };
            let mut v: Vec<String> = of.get(name.as_str()).into_iter().flatten().map(|n| m.node_name(*n)).collect();
            v.sort();
            v.dedup();
            v
        };
        let publishers = nodes_of(true);
        let subscribers = nodes_of(false);
        type PairKey = (i64, String, i64, String);
        let mut pair_map: BTreeMap<PairKey, (Vec<i64>, Vec<i64>)> = BTreeMap::new();
        for f in fl {
            let p = &pubs[f.publication as usize].0;
            let (t, sub) = &takes[f.take as usize];
            let pk = (
                p.vpid,
                m.node_name(pub_node(m, p)),
                t.vpid,
                m.node_name(sub.and_then(|s| m.subscriptions.get(s).node)),
            );
            let e = pair_map.entry(pk).or_default();
            e.0.push(f.pub_to_take_ns);
            if let Some(x) = f.pub_to_callback_ns {
                e.1.push(x);
            }
        }
        let pairs = pair_map
            .into_iter()
            .map(|((pv, pn, sv, sn), (mut a, mut b))| PairReport {
                publisher_node: pn,
                publisher_vpid: pv,
                subscription_node: sn,
                subscription_vpid: sv,
                count: a.len() as u64,
                pub_to_take_ns: Stats::of(&mut a),
                pub_to_callback_ns: Stats::of(&mut b),
            })
            .collect();
        let count = |by: MatchBy| fl.iter().filter(|f| f.by == by).count() as u64;
        topics.push(TopicReport {
            name: name.clone(),
            publishers,
            subscribers,
            publishes: pub_count.get(name.as_str()).copied().unwrap_or(0),
            takes: takes_by_topic.get(name).copied().unwrap_or(0),
            matched: fl.len() as u64,
            unmatched: unmatched_by_topic.get(name).copied().unwrap_or(0),
            unmatched_reasons: {
                let mut v: Vec<ReasonCount> = reasons_by_topic
                    .get(name)
                    .map(|r| r.iter().map(|(k, n)| ReasonCount { reason: k.to_string(), count: *n }).collect())
                    .unwrap_or_default();
                v.sort_by(|a, b| b.count.cmp(&a.count).then(a.reason.cmp(&b.reason)));
                v
            },
            dropped: dropped_by_topic.get(name.as_str()).copied(),
            by_source_timestamp: count(MatchBy::SourceTimestamp),
            by_publish_window: count(MatchBy::PublishWindow),
            intra_process: count(MatchBy::IntraProcess),
            pub_to_take_ns: Stats::of(&mut fl.iter().map(|f| f.pub_to_take_ns).collect::<Vec<_>>()),
            pub_to_callback_ns: Stats::of(&mut fl.iter().filter_map(|f| f.pub_to_callback_ns).collect::<Vec<_>>()),
            take_to_callback_ns: Stats::of(
                &mut fl
                    .iter()
                    .filter_map(|f| {
                        let t = &takes[f.take as usize].0;
                        t.run.map(|r| runs[r as usize].0.start - t.ts)
                    })
                    .collect::<Vec<_>>(),
            ),
            pairs,
        });
    }
    let flows_unmatched: u64 = unmatched_by_topic.values().sum();
    if flows_unmatched > 0 {
        warnings.push(format!("{flows_unmatched} taken message(s) could not be matched to their publication"));
    }

    // Nodes, with what each owns (in creation order).
    fn by_node<T>(n: usize, items: &[T], node: impl Fn(&T) -> Option<u32>) -> Vec<Vec<&T>> {
        let mut by: Vec<Vec<&T>> = (0..n).map(|_| Vec::new()).collect();
        for x in items {
            if let Some(v) = node(x).and_then(|i| by.get_mut(i as usize)) {
                v.push(x);
            }
        }
        by
    }
    let n = m.nodes.items.len();
    let mut publishes_of = by_node(n, &m.publishers.items, |p| p.node);
    let mut subscribes_of = by_node(n, &m.subscriptions.items, |p| p.node);
    let mut timers_of = by_node(n, &m.timers.items, |p| p.node);
    let mut services_of = by_node(n, &m.services.items, |p| p.node);
    let mut clients_of = by_node(n, &m.clients.items, |p| p.node);
    let mut nodes: Vec<NodeReport> = m
        .nodes
        .items
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let take =
                |v: &mut Vec<Vec<&Endpoint>>| std::mem::take(&mut v[i]).into_iter().map(|p| p.topic.clone()).collect();
            let names =
                |v: &mut Vec<Vec<&Service>>| std::mem::take(&mut v[i]).into_iter().map(|p| p.name.clone()).collect();
            let mut r = NodeReport {
                trace: n.key.0,
                vpid: n.key.1,
                name: n.full_name(),
                publishes: take(&mut publishes_of),
                subscribes: take(&mut subscribes_of),
                timers_ns: std::mem::take(&mut timers_of[i]).into_iter().map(|p| p.period_ns).collect(),
                services: names(&mut services_of),
                clients: names(&mut clients_of),
            };
            for v in [&mut r.publishes, &mut r.subscribes, &mut r.services, &mut r.clients] {
                v.sort();
                v.dedup();
            }
            r
        })
        .collect();
    nodes.sort_by(|a, b| a.name.cmp(&b.name).then(a.trace.cmp(&b.trace)).then(a.vpid.cmp(&b.vpid)));

    let executors = m
        .executors
        .items
        .iter()
        .map(|e| ExecutorReport {
            vpid: e.key.1,
            kind: e.kind.clone(),
            address: e.key.2,
            groups: m
                .groups
                .items
                .iter()
                .filter(|g| {
                    g.key.0 == e.key.0
                        && g.key.1 == e.key.1
                        && (g.executor == e.key.2 || (e.collector != 0 && g.executor == e.collector))
                })
                .map(|g| (g.kind.clone(), g.key.2, g.members.len()))
                .collect(),
        })
        .collect();
    let lifecycle_transitions = m
        .lifecycles
        .items
        .iter()
        .flat_map(|l| {
            let node = m.node_name(l.node);
            l.transitions.iter().map(move |(ts, a, b)| TransitionReport {
                node: node.clone(),
                ts: *ts,
                start: a.clone(),
                goal: b.clone(),
            })
        })
        .collect();
    let no_services = crate::services::ServiceHandler::default();
    let calls = p.get::<crate::services::ServiceHandler>().unwrap_or(&no_services);
    let services = services(m, &calls.client_calls, &calls.server_calls);
    let no_executor = HashMap::default();
    let executor = p.get::<crate::executor::ExecutorHandler>().map_or(&no_executor, |e| &e.threads);
    // By process and thread, then trace (the order does not depend on the map's).
    let mut threads: Vec<_> = executor.iter().collect();
    threads.sort_unstable_by_key(|((t, p, tid), _)| (*p, *tid, *t));
    let mut executor_threads: Vec<ExecutorThread> = threads
        .into_iter()
        .map(|((t, p, tid), ph)| ExecutorThread {
            vpid: *p,
            vtid: *tid,
            procname: procname(*t, *p),
            get_next_ns: ph.get_next_ns,
            wait_ns: ph.wait_ns,
            execute_ns: ph.execute_ns,
            executions: ph.executions,
        })
        .collect();
    executor_threads.sort_by_key(|e| (e.vpid, e.vtid));
    let notes = crate::notes::notes(
        m,
        &crate::notes::Inputs {
            unused_events: &unused_events,
            unknown_callbacks: &unknown_callbacks,
            open_runs: &open_runs,
            unmatched_ends: &unmatched_ends,
            service_runs: &service_runs,
        },
    );
    let mut processes: Vec<Process> = m.processes.values().cloned().collect();
    processes.sort_by_key(|p| (p.trace, p.vpid));
    let run_key = |i: u32| runs.get(i as usize).and_then(|(r, _)| slots.get(r.slot())).copied();
    let system = crate::system::SystemReport::of(p, run_key, &callbacks);
    Report {
        system,
        longest_paths: None,
        events,
        ros_events,
        begin_ns: range.map(|r| r.0),
        end_ns: range.map(|r| r.1),
        window_ns: window,
        time: None,
        notes,
        read_errors: errors,
        processes,
        nodes,
        flows_matched: flows.len() as u64,
        flows_unmatched,
        topics,
        callbacks,
        per_process,
        per_node,
        per_thread,
        executors,
        executor_threads,
        services,
        lifecycle_transitions,
        unmatched_callback_ends: unmatched_total,
        discarded_events: discarded,
        warnings,
    }
}

/// Matches requests client → server by (client GID, sequence number) and responses server →
/// client by (source timestamp, sequence number), per service.
fn services(m: &Model, clients: &[crate::pass::ClientCall], servers: &[crate::pass::ServerCall]) -> Vec<ServiceReport> {
    let by_rmw = |reg: &Registry<Service>, k: Key| reg.items.iter().position(|s| (s.key.0, s.key.1, s.rmw) == k);
    // Client calls by (client GID, seq), and by (response source timestamp, seq).
    let mut by_gid: HashMap<(Vec<u8>, i64), usize> = HashMap::default();
    for (i, c) in clients.iter().enumerate() {
        if let Some(g) = m.gids.get(&c.client) {
            by_gid.insert((g.clone(), c.seq), i);
        }
    }
    // Without a client GID, a response is found by its source timestamp (when the middleware gave one).
    let mut by_source: HashMap<(i64, i64), usize> = HashMap::default();
    for (i, c) in clients.iter().enumerate() {
        if let Some((_, src)) = c.response.filter(|r| r.1 != 0) {
            by_source.insert((src, c.seq), i);
        }
    }
    #[derive(Default)]
    struct Acc {
        sent: u64,
        served: u64,
        received: u64,
        req_matched: u64,
        resp_matched: u64,
        request: Vec<i64>,
        service: Vec<i64>,
        response: Vec<i64>,
        round: Vec<i64>,
    }
    let mut acc: BTreeMap<(String, i64, String), Acc> = BTreeMap::new();
    let name_of_server = |s: &crate::pass::ServerCall| match by_rmw(&m.services, s.service) {
        Some(i) => {
            let sv = &m.services.items[i];
            (sv.name.clone(), sv.key.1, m.node_name(sv.node))
        }
        None => (format!("{:#x}", s.service.2), s.service.1, String::new()),
    };
    for s in servers {
        let key = name_of_server(s);
        let a = acc.entry(key).or_default();
        a.served += 1;
        if let Some((t, _)) = s.response {
            a.service.push(t - s.ts_take);
        }
        let by_client = by_gid.get(&(s.client_gid.clone(), s.seq)).copied();
        if let Some(ci) = by_client {
            a.req_matched += 1;
            a.request.push(s.ts_take - clients[ci].ts_send);
        }
        if let Some((t_send, src)) = s.response {
            let ci = by_client.or_else(|| if src != 0 { by_source.get(&(src, s.seq)).copied() } else { None });
            if let Some((t_take, _)) = ci.and_then(|ci| clients[ci].response) {
                a.resp_matched += 1;
                a.response.push(t_take - t_send);
            }
        }
    }
    for c in clients {
        let name = match by_rmw(&m.clients, c.client) {
            Some(i) => m.clients.items[i].name.clone(),
            None => continue,
        };
        // Attribute the client's numbers to the server entry of that service name, if any.
        let key = acc.keys().find(|k| k.0 == name).cloned().unwrap_or((name, 0, String::new()));
        let a = acc.entry(key).or_default();
        a.sent += 1;
        if let Some((t, _)) = c.response {
            a.received += 1;
            a.round.push(t - c.ts_send);
        }
    }
    acc.into_iter()
        .map(|((name, vpid, node), mut a)| ServiceReport {
            name,
            server_node: node,
            server_vpid: vpid,
            requests_sent: a.sent,
            requests_served: a.served,
            responses_received: a.received,
            requests_matched: a.req_matched,
            responses_matched: a.resp_matched,
            request_ns: Stats::of(&mut a.request),
            service_ns: Stats::of(&mut a.service),
            response_ns: Stats::of(&mut a.response),
            round_trip_ns: Stats::of(&mut a.round),
        })
        .collect()
}

/// Why a take of a topic found no publication: `published` publications of the topic are in
/// the trace, the topic has a traced publisher (`has_publisher`), and the matchable ones span
/// `range` (source timestamps, or publish windows).
fn unmatched_reason(t: &Take, published: u64, has_publisher: bool, range: Option<(i64, i64)>) -> &'static str {
    if t.intra {
        return "intra-process message whose publication is not in the trace";
    }
    if t.source_ts == 0 {
        return "the take has no source timestamp";
    }
    if published == 0 {
        return if has_publisher {
            "the traced publishers of the topic recorded no publication"
        } else {
            "publisher not traced (its process is not in the trace: a rosbag2 player, a bridge, another host)"
        };
    }
    match range {
        None => "the publishers' events carry no source timestamp (no rmw_publish or DDS write events)",
        Some((a, _)) if t.source_ts < a => "published before the trace (or window) began",
        Some((_, b)) if t.source_ts > b => {
            "published after the last traced publication of the topic (trace end, lost events)"
        }
        Some(_) => "no traced publication has its source timestamp (an untraced publisher, or lost events)",
    }
}

/// Messages dropped per topic (see [`TopicReport::dropped`]).
fn dropped<'a>(
    pubs: &[(Publication, Option<String>)],
    takes: &[(Take, Option<u32>)],
    flows: &[Flow],
    matchable: &HashMap<&'a str, Vec<u32>>,
    m: &Model,
) -> HashMap<&'a str, u64> {
    // Per subscription: the publications it took, the first one's time and its last take.
    struct Acc {
        took: HashSet<u32>,
        first_pub: i64,
        last_take: i64,
    }
    let mut acc: HashMap<u32, Acc> = HashMap::default();
    for f in flows {
        if f.by == MatchBy::IntraProcess {
            continue;
        }
        let (t, Some(sub)) = &takes[f.take as usize] else { continue };
        let pt = pubs[f.publication as usize].0.ts;
        let a = acc.entry(*sub).or_insert(Acc { took: HashSet::default(), first_pub: pt, last_take: t.ts });
        a.took.insert(f.publication);
        a.first_pub = a.first_pub.min(pt);
        a.last_take = a.last_take.max(t.ts);
    }
    let mut out: HashMap<&str, u64> = HashMap::default();
    let mut subs: Vec<(&u32, &Acc)> = acc.iter().collect();
    subs.sort_by_key(|(s, _)| **s);
    for (sub, a) in subs {
        let topic = m.subscriptions.get(*sub).topic.as_str();
        let Some((name, list)) = matchable.get_key_value(topic) else { continue };
        let n = list
            .iter()
            .filter(|&&p| {
                let ts = pubs[p as usize].0.ts;
                a.first_pub <= ts && ts <= a.last_take && !a.took.contains(&p)
            })
            .count() as u64;
        *out.entry(name).or_default() += n;
    }
    out
}
