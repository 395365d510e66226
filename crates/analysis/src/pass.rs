//! The single streaming pass over a trace set: initialization events build the [`Model`],
//! runtime events become compact instance records (callback runs, publications, takes),
//! linked to each other along each thread. Resolution against the model happens afterwards.

use crate::events::{ClassInfo, Kind, F};
use crate::hash::HashMap;
use crate::model::*;
use ctf::{Event, TraceSet};

/// One execution of a callback; compact, as there is one per callback run of the trace.
#[derive(Debug, Clone, Copy)]
pub struct Run {
    /// Index of the callback handle in [`Collected::slots`].
    pub slot: u32,
    /// Thread.
    pub vtid: i32,
    /// `is_intra_process` of `callback_start`.
    pub intra: bool,
    /// Start (ns).
    pub start: i64,
    end: i64,
}

const NO_END: i64 = i64::MIN;

impl Run {
    /// End (ns), if the trace has it.
    #[inline]
    pub fn end(&self) -> Option<i64> {
        (self.end != NO_END).then_some(self.end)
    }

    /// Duration (ns), if the run ended.
    #[inline]
    pub fn duration(&self) -> Option<i64> {
        self.end().map(|e| e - self.start)
    }
}

/// One publication of a message, across the rclcpp/rcl/rmw/DDS layers of one thread.
#[derive(Debug, Clone, Default)]
pub struct Publication {
    /// Trace.
    pub trace: u32,
    /// Process.
    pub vpid: i64,
    /// Thread.
    pub vtid: i64,
    /// rcl publisher handle (0 when unknown).
    pub publisher: u64,
    /// rmw publisher handle (0 when unknown).
    pub rmw_publisher: u64,
    /// DDS writer (0 when unknown).
    pub writer: u64,
    /// Message address.
    pub message: u64,
    /// Time of the first layer's event.
    pub ts: i64,
    /// Time of `rclcpp_publish`.
    pub ts_rclcpp: Option<i64>,
    /// Time of `rcl_publish`.
    pub ts_rcl: Option<i64>,
    /// Time of `rmw_publish`.
    pub ts_rmw: Option<i64>,
    /// Time of the DDS write event.
    pub ts_dds: Option<i64>,
    /// DDS source timestamp of the sample.
    pub source_ts: Option<i64>,
    /// Time of the publishing thread's next event after `rmw_publish` (bounds the DDS write).
    pub ts_after: Option<i64>,
    /// Intra-process publication.
    pub intra: bool,
    /// Ring buffer and index of an intra-process publication.
    pub ring: Option<(u64, u64)>,
    /// Callback run on this thread during which it was published.
    pub in_run: Option<u32>,
}

pub use crate::services::{ClientCall, ServerCall};

/// One take of a message by a subscription (or a CARET dispatch).
#[derive(Debug, Clone, Default)]
pub struct Take {
    /// Trace.
    pub trace: u32,
    /// Process.
    pub vpid: i64,
    /// Thread.
    pub vtid: i64,
    /// rmw subscription handle (0 for CARET dispatches).
    pub rmw_subscription: u64,
    /// Callback handle, when the event names it (CARET dispatch).
    pub callback: u64,
    /// Message address.
    pub message: u64,
    /// Time.
    pub ts: i64,
    /// Source timestamp (0 when absent).
    pub source_ts: i64,
    /// Whether a message was taken.
    pub taken: bool,
    /// Intra-process delivery: the publication it carries, when known.
    pub intra_pub: Option<u32>,
    /// Intra-process.
    pub intra: bool,
    /// The callback run it led to.
    pub run: Option<u32>,
}

#[derive(Default)]
pub(crate) struct ThreadState {
    open: Vec<(u64, u32)>,
    last_pub: Option<u32>,
    pub(crate) awaiting_next: Option<u32>,
    pending_take: Option<u32>,
    running: Vec<u32>,
}

/// Everything one pass collects.
#[derive(Default)]
pub struct Collected {
    /// The model.
    pub model: Model,
    /// Callback runs.
    pub runs: Vec<Run>,
    /// Callback handles of the runs (see [`Run::slot`]).
    pub slots: Vec<Key>,
    slot_of: HashMap<Key, u32>,
    /// Publications.
    pub pubs: Vec<Publication>,
    /// Takes.
    pub takes: Vec<Take>,
    /// `callback_end` events without a start.
    pub unmatched_ends: u64,
    /// Events read (inside the window).
    pub events: u64,
    /// ROS 2 events inside the window.
    pub ros_events: u64,
    /// The window (ns since the epoch) when one was given.
    pub window: Option<(i64, i64)>,
    /// Events the analysis does not use: (name, count), by name. Kernel events are named
    /// `kernel:<name>`.
    pub unused_events: Vec<(String, u64)>,
    /// First and last event time.
    pub range: Option<(i64, i64)>,
    /// Errors met while reading.
    pub errors: Vec<String>,
    /// Losses (discarded events, lost packets), as text.
    pub losses: Vec<String>,
    /// Discarded events in all.
    pub discarded: u64,
    pub(crate) threads: HashMap<(u32, i64, i64), ThreadState>,
    intra_by_message: HashMap<Key, u32>,
    ring_slots: HashMap<(u32, i64, u64, u64), u32>,
}

impl Collected {
    /// The callback run thread `vtid` of process (`trace`, `vpid`) is in now (the innermost),
    /// as an index in [`Collected::runs`].
    pub fn running(&self, trace: u32, vpid: i64, vtid: i64) -> Option<u32> {
        self.threads.get(&(trace, vpid, vtid)).and_then(|s| s.running.last().copied())
    }
}

/// A bound of the analysis window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// Nanoseconds after the first event of the traces.
    Relative(i64),
    /// Nanoseconds since the Unix epoch.
    Absolute(i64),
}

/// The time window whose runtime events (callback runs, publications, takes, ...) are
/// analyzed. Initialization events are read whatever their time: they declare the objects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Window {
    /// From (inclusive); the start of the traces when `None`.
    pub begin: Option<Bound>,
    /// To (inclusive); the end of the traces when `None`.
    pub end: Option<Bound>,
}

impl Window {
    /// Whether the window is the whole trace.
    pub fn is_all(&self) -> bool {
        self.begin.is_none() && self.end.is_none()
    }

    /// The window in ns since the epoch, for traces that start at `start`.
    pub fn resolve(&self, start: i64) -> (i64, i64) {
        let at = |b: Bound| match b {
            Bound::Relative(d) => start.saturating_add(d),
            Bound::Absolute(t) => t,
        };
        (self.begin.map_or(i64::MIN, at), self.end.map_or(i64::MAX, at))
    }
}

/// Reads every event once and collects the model and the instances (no handler but the ROS 2
/// pass; [`crate::Processor`] adds others).
pub fn collect(set: &TraceSet, progress: impl FnMut(u64, u64)) -> Collected {
    collect_window(set, Window::default(), progress)
}

/// [`collect`], keeping only the runtime events inside `window`.
pub fn collect_window(set: &TraceSet, window: Window, progress: impl FnMut(u64, u64)) -> Collected {
    crate::Processor::new().collect(set, window, progress)
}

/// Positions of `vpid` and `vtid` in a context structure, cached by the structure's address.
#[derive(Default)]
pub(crate) struct CtxCache(Vec<(usize, Option<usize>, Option<usize>)>);

pub(crate) fn ids(ev: &Event, cache: &mut CtxCache) -> (i64, i64) {
    let Some(ctx) = ev.stream_context() else {
        let vpid = ev.context_field("vpid").and_then(|v| v.as_i64()).unwrap_or(0);
        let vtid = ev.context_field("vtid").and_then(|v| v.as_i64()).unwrap_or(vpid);
        return (vpid, vtid);
    };
    let ptr = ctx.ty() as *const _ as usize;
    let (pi, ti) = match cache.0.iter().find(|(p, _, _)| *p == ptr) {
        Some(&(_, a, b)) => (a, b),
        None => {
            let e = (ptr, ctx.ty().index_of("vpid"), ctx.ty().index_of("vtid"));
            cache.0.push(e);
            (e.1, e.2)
        }
    };
    let vpid = pi.and_then(|i| ctx.field_at(i)).and_then(|v| v.as_i64()).unwrap_or(0);
    let vtid = ti.and_then(|i| ctx.field_at(i)).and_then(|v| v.as_i64()).unwrap_or(vpid);
    (vpid, vtid)
}

fn same_node(a: &Node, b: &Node) -> bool {
    a.name == b.name && a.namespace == b.namespace
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn handle(c: &mut Collected, info: &ClassInfo, ev: &Event, t: u32, vpid: i64, vtid: i64, ts: i64) {
    let key = |a: u64| (t, vpid, a);
    // CARET records when an initialization really happened; corrected at the end.
    let init_ts =
        info.i(ev, F::InitTimestamp).map(|it| match c.model.processes.get(&(t, vpid)).and_then(|p| p.caret_offset) {
            Some(off) => it + off,
            None => ts,
        });
    let created = init_ts.unwrap_or(ts);
    let m = &mut c.model;
    match info.kind {
        Kind::RclInit => {
            let v = info.s(ev, F::Version);
            if let Some(p) = m.processes.get_mut(&(t, vpid)) {
                if !v.is_empty() {
                    p.tracetools_version = Some(v);
                }
            }
        }
        Kind::CaretInit => {
            if let Some(p) = m.processes.get_mut(&(t, vpid)) {
                p.distribution = Some(info.s(ev, F::Distribution));
                if let Some(off) = info.i(ev, F::ClockOffset) {
                    p.caret_offset = Some(ts - off);
                }
            }
        }
        Kind::NodeInit => {
            let node = Node {
                key: key(info.u(ev, F::NodeHandle)),
                name: info.s(ev, F::NodeName),
                namespace: info.s(ev, F::Namespace),
                created_ns: created,
            };
            m.nodes.insert(node.key, created, node, same_node);
        }
        Kind::RmwPublisherInit => {
            m.gids.insert(key(info.u(ev, F::RmwPublisherHandle)), info.bytes(ev, F::Gid));
        }
        Kind::RmwClientInit => {
            m.gids.insert(key(info.u(ev, F::RmwClientHandle)), info.bytes(ev, F::Gid));
        }
        Kind::RmwSubscriptionInit => {
            m.gids.insert(key(info.u(ev, F::RmwSubscriptionHandle)), info.bytes(ev, F::Gid));
        }
        Kind::PublisherInit | Kind::SubscriptionInit => {
            let publisher = info.kind == Kind::PublisherInit;
            let (handle, rmw) = if publisher {
                (info.u(ev, F::PublisherHandle), info.u(ev, F::RmwPublisherHandle))
            } else {
                (info.u(ev, F::SubscriptionHandle), info.u(ev, F::RmwSubscriptionHandle))
            };
            let e = Endpoint {
                key: key(handle),
                node: None,
                node_handle: info.u(ev, F::NodeHandle),
                topic: info.s(ev, F::TopicName),
                depth: info.u(ev, F::QueueDepth),
                rmw,
                gid: m.gids.get(&key(rmw)).cloned().unwrap_or_default(),
                created_ns: created,
            };
            let (reg, by_rmw) = if publisher {
                (&mut m.publishers, &mut m.publishers_by_rmw)
            } else {
                (&mut m.subscriptions, &mut m.subscriptions_by_rmw)
            };
            let id = reg.insert(e.key, created, e, Endpoint::same);
            by_rmw.insert(key(rmw), created, id, |a, b| a == b);
        }
        Kind::RclcppSubscriptionInit => {
            if let Some(id) = m.subscriptions.at(key(info.u(ev, F::SubscriptionHandle)), created) {
                m.subscriptions_by_rclcpp.insert(key(info.u(ev, F::Subscription)), created, id, |a, b| a == b);
            }
        }
        Kind::SubscriptionCallbackAdded => {
            let owner = Some(OwnerRef::Subscription(info.u(ev, F::Subscription)));
            add_callback(m, key(info.u(ev, F::Callback)), created, owner, None);
        }
        Kind::ServiceInit => {
            let s = Service {
                key: key(info.u(ev, F::ServiceHandle)),
                node: None,
                node_handle: info.u(ev, F::NodeHandle),
                name: info.s(ev, F::ServiceName),
                rmw: info.u(ev, F::RmwServiceHandle),
                created_ns: created,
            };
            m.services.insert(s.key, created, s, |a, b| a.name == b.name && a.node_handle == b.node_handle);
        }
        Kind::ServiceCallbackAdded => {
            let owner = Some(OwnerRef::Service(info.u(ev, F::ServiceHandle)));
            add_callback(m, key(info.u(ev, F::Callback)), created, owner, None);
        }
        Kind::ClientInit => {
            let s = Service {
                key: key(info.u(ev, F::ClientHandle)),
                node: None,
                node_handle: info.u(ev, F::NodeHandle),
                name: info.s(ev, F::ServiceName),
                rmw: info.u(ev, F::RmwClientHandle),
                created_ns: created,
            };
            m.clients.insert(s.key, created, s, |a, b| a.name == b.name && a.node_handle == b.node_handle);
        }
        Kind::TimerInit => {
            let tm = Timer {
                key: key(info.u(ev, F::TimerHandle)),
                period_ns: info.i(ev, F::Period).unwrap_or(0),
                node: None,
                node_handle: 0,
                created_ns: created,
            };
            m.timers.insert(tm.key, created, tm, |a, b| a.period_ns == b.period_ns);
        }
        Kind::TimerLinkNode => {
            let node = info.u(ev, F::NodeHandle);
            if let Some(id) = m.timers.at(key(info.u(ev, F::TimerHandle)), created) {
                m.timers.get_mut(id).node_handle = node;
            }
        }
        Kind::TimerCallbackAdded => {
            let owner = Some(OwnerRef::Timer(info.u(ev, F::TimerHandle)));
            add_callback(m, key(info.u(ev, F::Callback)), created, owner, None);
        }
        Kind::CallbackRegister => {
            add_callback(m, key(info.u(ev, F::Callback)), created, None, Some(info.s(ev, F::Symbol)));
        }
        Kind::LifecycleInit => {
            let l = Lifecycle {
                key: key(info.u(ev, F::StateMachine)),
                node: None,
                node_handle: info.u(ev, F::NodeHandle),
                transitions: Vec::new(),
            };
            m.lifecycles.insert(l.key, created, l, |a, b| a.node_handle == b.node_handle);
        }
        Kind::LifecycleTransition => {
            if let Some(id) = m.lifecycles.at(key(info.u(ev, F::StateMachine)), ts) {
                let tr = (ts, info.s(ev, F::StartLabel), info.s(ev, F::GoalLabel));
                m.lifecycles.get_mut(id).transitions.push(tr);
            }
        }
        Kind::IpbToSubscription => {
            m.ipb_to_subscription.insert(key(info.u(ev, F::Ipb)), info.u(ev, F::Subscription));
        }
        Kind::BufferToIpb => {
            m.buffer_to_ipb.insert(key(info.u(ev, F::Buffer)), info.u(ev, F::Ipb));
        }
        Kind::ConstructRingBuffer => {}
        Kind::DdsCreateWriter => {
            let topic = info.s(ev, F::TopicName);
            m.writer_topics.insert(key(info.u(ev, F::Writer)), topic.strip_prefix("rt").unwrap_or(&topic).to_string());
        }
        Kind::ConstructExecutor => {
            let e = Executor {
                key: key(info.u(ev, F::ExecutorAddr)),
                kind: info.s(ev, F::ExecutorTypeName),
                collector: info.u(ev, F::EntitiesCollectorAddr),
            };
            m.executors.insert(e.key, created, e, |a, b| a.kind == b.kind && a.collector == b.collector);
        }
        Kind::CollectorToExecutor => {
            let ex = info.u(ev, F::ExecutorAddr);
            let coll = info.u(ev, F::EntitiesCollectorAddr);
            if let Some(id) = m.executors.latest(key(ex)) {
                m.executors.get_mut(id).collector = coll;
            }
        }
        Kind::AddCallbackGroup => {
            let exec = if info.has(F::ExecutorAddr) {
                info.u(ev, F::ExecutorAddr)
            } else {
                info.u(ev, F::EntitiesCollectorAddr)
            };
            let g = CallbackGroup {
                key: key(info.u(ev, F::CallbackGroupAddr)),
                kind: info.s(ev, F::GroupTypeName),
                executor: exec,
                members: Vec::new(),
            };
            match m.groups.latest(g.key) {
                Some(id) if m.groups.get(id).executor == 0 || m.groups.get(id).executor == exec => {
                    let gg = m.groups.get_mut(id);
                    gg.executor = exec;
                    gg.kind = g.kind;
                }
                _ => {
                    m.groups.insert(g.key, created, g, |_, _| false);
                }
            }
        }
        Kind::CallbackGroupAdd => {
            let gk = key(info.u(ev, F::CallbackGroupAddr));
            let (what, h) = match info.short.as_str() {
                "callback_group_add_timer" => ("timer", info.u(ev, F::TimerHandle)),
                "callback_group_add_subscription" => ("subscription", info.u(ev, F::SubscriptionHandle)),
                "callback_group_add_service" => ("service", info.u(ev, F::ServiceHandle)),
                _ => ("client", info.u(ev, F::ClientHandle)),
            };
            let id = match m.groups.latest(gk) {
                Some(id) => id,
                None => m.groups.insert(
                    gk,
                    created,
                    CallbackGroup { key: gk, kind: String::new(), executor: 0, members: Vec::new() },
                    |_, _| false,
                ),
            };
            let members = &mut m.groups.get_mut(id).members;
            if !members.iter().any(|(w, x)| w == what && *x == h) {
                members.push((what.to_string(), h));
            }
        }
        Kind::CallbackStart => {
            let cb = info.u(ev, F::Callback);
            let intra = info.u(ev, F::IsIntraProcess) != 0;
            let id = c.runs.len() as u32;
            let n = c.slots.len() as u32;
            let slot = *c.slot_of.entry(key(cb)).or_insert(n);
            if slot == n {
                c.slots.push(key(cb));
            }
            c.runs.push(Run { slot, vtid: vtid as i32, intra, start: ts, end: NO_END });
            let st = c.threads.entry((t, vpid, vtid)).or_default();
            st.open.push((cb, id));
            st.running.push(id);
            if let Some(tk) = st.pending_take.take() {
                let take = &mut c.takes[tk as usize];
                if take.callback == 0 || take.callback == cb {
                    take.run = Some(id);
                }
            }
        }
        Kind::CallbackEnd => {
            let cb = info.u(ev, F::Callback);
            let st = c.threads.entry((t, vpid, vtid)).or_default();
            match st.open.iter().rposition(|(a, _)| *a == cb) {
                Some(k) => {
                    let (_, id) = st.open.remove(k);
                    c.runs[id as usize].end = ts;
                    if let Some(r) = st.running.iter().rposition(|x| *x == id) {
                        st.running.remove(r);
                    }
                }
                None => c.unmatched_ends += 1,
            }
        }
        Kind::RclcppPublish | Kind::RclcppIntraPublish => {
            let intra = info.kind == Kind::RclcppIntraPublish;
            let p = Publication {
                publisher: info.u(ev, F::PublisherHandle),
                message: info.u(ev, F::Message),
                ts_rclcpp: Some(ts),
                intra,
                ..new_pub(t, vpid, vtid, ts)
            };
            let id = push_pub(c, p);
            if intra {
                c.intra_by_message.insert(key(info.u(ev, F::Message)), id);
            }
        }
        Kind::RclPublish => {
            let publisher = info.u(ev, F::PublisherHandle);
            let msg = info.u(ev, F::Message);
            match last_pub(c, t, vpid, vtid, |p| {
                p.ts_rcl.is_none() && !p.intra && p.ts_rmw.is_none() && p.ts_dds.is_none()
            }) {
                Some(id) => {
                    let p = &mut c.pubs[id as usize];
                    p.ts_rcl = Some(ts);
                    p.publisher = publisher;
                }
                None => {
                    push_pub(
                        c,
                        Publication { publisher, message: msg, ts_rcl: Some(ts), ..new_pub(t, vpid, vtid, ts) },
                    );
                }
            }
        }
        Kind::RmwPublish => {
            let rmw = info.u(ev, F::RmwPublisherHandle);
            let source = info.i(ev, F::Timestamp);
            let id = match last_pub(c, t, vpid, vtid, |p| p.ts_rmw.is_none() && !p.intra && p.ts_dds.is_none()) {
                Some(id) => id,
                None => push_pub(c, Publication { message: info.u(ev, F::Message), ..new_pub(t, vpid, vtid, ts) }),
            };
            let p = &mut c.pubs[id as usize];
            p.ts_rmw = Some(ts);
            if rmw != 0 {
                p.rmw_publisher = rmw;
            }
            if let Some(s) = source {
                p.source_ts = Some(s);
            }
            c.threads.entry((t, vpid, vtid)).or_default().awaiting_next = Some(id);
        }
        Kind::DdsWrite => {
            // dds:write(writer, data, timestamp), CARET dds_write(message [, rmw_publisher_handle, timestamp]).
            let writer = info.u(ev, F::Writer);
            let source = info.i(ev, F::Timestamp);
            let id = match last_pub(c, t, vpid, vtid, |p| p.ts_dds.is_none() && !p.intra) {
                Some(id) => id,
                None => push_pub(c, new_pub(t, vpid, vtid, ts)),
            };
            let p = &mut c.pubs[id as usize];
            p.ts_dds = Some(ts);
            p.writer = writer;
            if info.has(F::Message) {
                p.message = info.u(ev, F::Message);
            }
            let rmw = info.u(ev, F::RmwPublisherHandle);
            if rmw != 0 {
                p.rmw_publisher = rmw;
            }
            if let Some(s) = source {
                p.source_ts = Some(s);
            }
            if let Some(st) = c.threads.get_mut(&(t, vpid, vtid)) {
                st.awaiting_next = None;
            }
        }
        Kind::DdsBindAddrToStamp => {
            let addr = info.u(ev, F::Addr);
            let stamp = info.u(ev, F::SourceStamp) as i64;
            if let Some(id) = last_pub(c, t, vpid, vtid, |p| {
                p.source_ts.is_none() && (addr == 0 || p.message == addr || p.ts_dds.is_some())
            }) {
                c.pubs[id as usize].source_ts = Some(stamp);
            }
        }
        Kind::RmwTake => {
            let taken = info.u(ev, F::Taken) != 0;
            let take = Take {
                trace: t,
                vpid,
                vtid,
                rmw_subscription: info.u(ev, F::RmwSubscriptionHandle),
                message: info.u(ev, F::Message),
                ts,
                source_ts: info.i(ev, F::SourceTimestamp).unwrap_or(0),
                taken,
                ..Default::default()
            };
            let id = c.takes.len() as u32;
            c.takes.push(take);
            if taken {
                c.threads.entry((t, vpid, vtid)).or_default().pending_take = Some(id);
            }
        }
        Kind::RclTake | Kind::RclcppTake => {}
        Kind::DispatchSubscription => {
            let take = Take {
                trace: t,
                vpid,
                vtid,
                callback: info.u(ev, F::Callback),
                message: info.u(ev, F::Message),
                ts,
                source_ts: info.u(ev, F::SourceStamp) as i64,
                taken: true,
                ..Default::default()
            };
            let id = c.takes.len() as u32;
            c.takes.push(take);
            c.threads.entry((t, vpid, vtid)).or_default().pending_take = Some(id);
        }
        Kind::DispatchIntra => {
            let msg = info.u(ev, F::Message);
            let take = Take {
                trace: t,
                vpid,
                vtid,
                callback: info.u(ev, F::Callback),
                message: msg,
                ts,
                taken: true,
                intra: true,
                intra_pub: c.intra_by_message.get(&key(msg)).copied(),
                ..Default::default()
            };
            let id = c.takes.len() as u32;
            c.takes.push(take);
            c.threads.entry((t, vpid, vtid)).or_default().pending_take = Some(id);
        }
        Kind::RingEnqueue => {
            let (buf, idx) = (info.u(ev, F::Buffer), info.u(ev, F::Index));
            if let Some(id) = last_pub(c, t, vpid, vtid, |p| p.intra && p.ring.is_none()) {
                c.pubs[id as usize].ring = Some((buf, idx));
                c.ring_slots.insert((t, vpid, buf, idx), id);
            }
        }
        Kind::RingDequeue => {
            let (buf, idx) = (info.u(ev, F::Buffer), info.u(ev, F::Index));
            let pub_id = c.ring_slots.remove(&(t, vpid, buf, idx));
            let take = Take {
                trace: t,
                vpid,
                vtid,
                ts,
                taken: true,
                intra: true,
                intra_pub: pub_id,
                message: buf,
                ..Default::default()
            };
            let id = c.takes.len() as u32;
            c.takes.push(take);
            c.threads.entry((t, vpid, vtid)).or_default().pending_take = Some(id);
        }
        // The services handler's.
        Kind::SendRequest | Kind::TakeRequest | Kind::SendResponse | Kind::TakeResponse => {}
        // The executor-phases handler's.
        Kind::ExecutorGetNextReady | Kind::ExecutorWaitForWork | Kind::ExecutorExecute => {}
    }
}

fn add_callback(m: &mut Model, key: Key, created: i64, owner: Option<OwnerRef>, symbol: Option<String>) {
    match m.callbacks.latest(key) {
        // Owner and symbol come in separate events: complete the object, unless it is a new one.
        Some(id)
            if {
                let cb = m.callbacks.get(id);
                (owner.is_none() || cb.owner_ref.is_none() || cb.owner_ref == owner)
                    && (symbol.is_none() || cb.symbol.is_empty() || Some(&cb.symbol) == symbol.as_ref())
            } =>
        {
            let cb = m.callbacks.get_mut(id);
            if owner.is_some() {
                cb.owner_ref = owner;
            }
            if let Some(s) = symbol {
                cb.symbol = s;
            }
            cb.created_ns = cb.created_ns.min(created);
        }
        _ => {
            let cb = Callback {
                key,
                owner_ref: owner,
                owner: None,
                symbol: symbol.unwrap_or_default(),
                created_ns: created,
            };
            m.callbacks.insert(key, created, cb, |_, _| false);
        }
    }
}

fn new_pub(t: u32, vpid: i64, vtid: i64, ts: i64) -> Publication {
    Publication { trace: t, vpid, vtid, ts, ..Default::default() }
}

fn push_pub(c: &mut Collected, mut p: Publication) -> u32 {
    let id = c.pubs.len() as u32;
    let st = c.threads.entry((p.trace, p.vpid, p.vtid)).or_default();
    p.in_run = st.running.last().copied();
    st.last_pub = Some(id);
    c.pubs.push(p);
    id
}

fn last_pub(c: &Collected, t: u32, vpid: i64, vtid: i64, ok: impl Fn(&Publication) -> bool) -> Option<u32> {
    let id = c.threads.get(&(t, vpid, vtid))?.last_pub?;
    ok(&c.pubs[id as usize]).then_some(id)
}
