//! The ROS 2 model: processes, nodes, publishers, subscriptions, timers, services, clients,
//! callbacks, executors, callback groups and lifecycle state machines, built from
//! initialization events. Handles are keyed by (trace, vpid, address) and by time: an address
//! that is initialized again with other content is a new object.

use crate::collections::HashMap;
use serde::Serialize;
use std::collections::hash_map::Entry;

/// A handle: trace index, process id, address. Addresses are only unique within a process.
pub type Key = (u32, i64, u64);

/// Objects of one kind, with lookup by handle and time.
#[derive(Debug, Clone)]
pub struct Registry<T> {
    /// The objects, in creation order.
    pub items: Vec<T>,
    by_key: HashMap<Key, Versions>,
    /// In a part of a split pass: the order (see [`crate::Context::order`]) of the event that
    /// created each object (see [`Model::stamp`]).
    orders: Vec<u128>,
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Registry { items: Vec::new(), by_key: HashMap::default(), orders: Vec::new() }
    }
}

impl<T> Registry<T> {
    /// Adds an object created at `ts` under `key`, unless the latest object of that key is the
    /// same (`same`), as with replayed initialization events: then that one is returned.
    pub fn insert(&mut self, key: Key, ts: i64, obj: T, same: impl Fn(&T, &T) -> bool) -> u32 {
        let id = self.items.len() as u32;
        match self.by_key.entry(key) {
            Entry::Occupied(mut e) => {
                let last = e.get().last();
                if same(&self.items[last as usize], &obj) {
                    return last;
                }
                e.get_mut().push((ts, id));
            }
            Entry::Vacant(e) => {
                e.insert(Versions::one(ts, id));
            }
        }
        self.items.push(obj);
        id
    }

    /// The object of `key` current at `ts`: the latest created at or before `ts`, or else the
    /// first one (initialization recorded after use, as CARET's replays are).
    pub fn at(&self, key: Key, ts: i64) -> Option<u32> {
        self.versions(key)?.at(ts)
    }

    /// The objects of `key` with their creation times, for repeated [`Versions::at`] lookups
    /// without hashing the key each time.
    pub fn versions(&self, key: Key) -> Option<&Versions> {
        self.by_key.get(&key)
    }

    /// The latest object of `key`.
    pub fn latest(&self, key: Key) -> Option<u32> {
        self.by_key.get(&key).map(Versions::last)
    }

    /// Mutable access by id.
    pub fn get_mut(&mut self, id: u32) -> &mut T {
        &mut self.items[id as usize]
    }

    /// Access by id.
    pub fn get(&self, id: u32) -> &T {
        &self.items[id as usize]
    }
}

/// The steps of the pass that apply to a registry of any kind of object.
trait Stamped {
    /// The objects added since the last stamp were created by the event of `order`.
    fn stamp(&mut self, order: u128);
    /// Gives back the spare room of the objects' table (grown by doubling during the pass).
    fn shrink_to_fit(&mut self);
    /// The creation times of the lookup by key moved to other clocks (see [`Model::shift`]).
    fn shift(&mut self, by: &crate::ClockShift);
}

impl<T> Stamped for Registry<T> {
    fn stamp(&mut self, order: u128) {
        self.orders.resize(self.items.len(), order);
    }

    fn shrink_to_fit(&mut self) {
        self.items.shrink_to_fit();
    }

    fn shift(&mut self, by: &crate::ClockShift) {
        for (k, v) in self.by_key.iter_mut() {
            if by.moves(k.0) {
                v.shift(|ts| by.time(k.0, ts));
            }
        }
    }
}

impl<T> Registry<T> {
    /// The registries of parts of a split pass as one, their objects in the order of the events
    /// that created them (see [`Model::stamp`]); each part's map from its ids to the whole's.
    fn merge(parts: Vec<Registry<T>>) -> (Registry<T>, Vec<Vec<u32>>) {
        let mut keys: Vec<Vec<(Key, i64)>> = Vec::new();
        for r in &parts {
            let mut v = vec![((0, 0, 0), 0); r.items.len()];
            for (k, list) in &r.by_key {
                for (ts, id) in list.iter() {
                    v[id as usize] = (*k, ts);
                }
            }
            keys.push(v);
        }
        let mut maps: Vec<Vec<u32>> = parts.iter().map(|r| vec![0; r.items.len()]).collect();
        let (mut items, orders): (Vec<_>, Vec<_>) = parts.into_iter().map(|r| (r.items.into_iter(), r.orders)).unzip();
        let mut out = Registry::default();
        interleave(&orders.iter().map(Vec::as_slice).collect::<Vec<_>>(), |p, l| {
            if let Some(item) = items[p].next() {
                let id = out.items.len() as u32;
                maps[p][l] = id;
                out.items.push(item);
                let (k, ts) = keys[p][l];
                match out.by_key.entry(k) {
                    Entry::Occupied(mut e) => e.get_mut().push((ts, id)),
                    Entry::Vacant(e) => {
                        e.insert(Versions::one(ts, id));
                    }
                }
            }
        });
        (out, maps)
    }
}

/// The objects of one key with their creation times, in creation order; one inline (most
/// handles are initialized once), so that a registry is not a heap block per object, and the
/// lookup's entry stays small (16 bytes beside the key's 24) for a system of very many objects.
#[derive(Debug, Clone)]
pub struct Versions(Repr);

#[derive(Debug, Clone)]
enum Repr {
    One {
        ts: i64,
        id: u32,
    },
    // Boxed: a pointer, where the list itself would make every entry 8 bytes larger.
    #[allow(clippy::box_collection)]
    Many(Box<Vec<(i64, u32)>>),
}

impl Versions {
    fn one(ts: i64, id: u32) -> Versions {
        Versions(Repr::One { ts, id })
    }

    /// The object current at `ts`: the latest created at or before `ts`, or else the first.
    #[inline]
    pub fn at(&self, ts: i64) -> Option<u32> {
        match &self.0 {
            Repr::One { id, .. } => Some(*id),
            Repr::Many(v) => version_at(v, ts),
        }
    }

    /// The objects with their creation times, in creation order.
    pub fn iter(&self) -> impl Iterator<Item = (i64, u32)> + '_ {
        let (one, many) = match &self.0 {
            Repr::One { ts, id } => (Some((*ts, *id)), &[][..]),
            Repr::Many(v) => (None, v.as_slice()),
        };
        one.into_iter().chain(many.iter().copied())
    }

    /// The latest object.
    fn last(&self) -> u32 {
        match &self.0 {
            Repr::One { id, .. } => *id,
            Repr::Many(v) => v.last().map_or(0, |v| v.1),
        }
    }

    fn shift(&mut self, f: impl Fn(i64) -> i64) {
        match &mut self.0 {
            Repr::One { ts, .. } => *ts = f(*ts),
            Repr::Many(list) => list.iter_mut().for_each(|v| v.0 = f(v.0)),
        }
    }

    fn push(&mut self, v: (i64, u32)) {
        match &mut self.0 {
            Repr::One { ts, id } => self.0 = Repr::Many(Box::new(vec![(*ts, *id), v])),
            Repr::Many(list) => list.push(v),
        }
    }
}

/// The latest of `versions` (in creation order) created at or before `ts`, or else the first.
#[inline]
fn version_at(versions: &[(i64, u32)], ts: i64) -> Option<u32> {
    let k = versions.partition_point(|(t, _)| *t <= ts);
    versions.get(k.saturating_sub(1)).map(|v| v.1)
}

/// A traced process: one process id of one trace (a trace belongs to one host), so that
/// copies of a trace, or traces of several hosts, are distinct processes.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Process {
    /// Index of its trace.
    pub trace: u32,
    /// Host name, from the trace's metadata (`hostname`), or "".
    pub host: String,
    /// Process id (vpid).
    pub vpid: i64,
    /// Process name.
    pub procname: String,
    /// Events of this process.
    pub events: u64,
    /// ROS 2 events of this process (any time, also outside a time window).
    pub ros_events: u64,
    /// The kinds of ROS 2 events this process recorded (bits of [`crate::events::Kind::bit`]).
    #[serde(skip)]
    pub kinds: u64,
    /// tracetools version from `rcl_init`.
    pub tracetools_version: Option<String>,
    /// ROS distribution from CARET's `caret_init`.
    pub distribution: Option<String>,
    /// Whether its distribution is a guess: the tracer took its default, the process's
    /// environment naming none (rostrace's tracer writes `ros_distro_assumed` in its trace's
    /// metadata then).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub distro_assumed: bool,
    /// The rmw implementation, from CARET's `rmw_implementation`.
    pub rmw_implementation: Option<String>,
    /// CARET clock offset: event time minus `init_timestamp` clock.
    #[serde(skip)]
    pub caret_offset: Option<i64>,
}

/// A node.
#[derive(Debug, Clone, Serialize)]
pub struct Node {
    /// Handle.
    #[serde(skip)]
    pub key: Key,
    /// Name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
    /// Creation time (ns).
    pub created_ns: i64,
}

impl Node {
    /// `/namespace/name`.
    pub fn full_name(&self) -> String {
        if self.namespace.is_empty() || self.namespace == "/" {
            format!("/{}", self.name)
        } else {
            format!("{}/{}", self.namespace.trim_end_matches('/'), self.name)
        }
    }
}

/// A publisher or a subscription: a topic endpoint of a node.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// rcl handle.
    pub key: Key,
    /// Owning node (resolved).
    pub node: Option<u32>,
    /// Node handle, as recorded.
    pub node_handle: u64,
    /// Topic.
    pub topic: String,
    /// Queue depth.
    pub depth: u64,
    /// rmw handle.
    pub rmw: u64,
    /// GID, when `rmw_*_init` was recorded.
    pub gid: Vec<u8>,
    /// Creation time.
    pub created_ns: i64,
}

impl Endpoint {
    /// Whether `other` is the same endpoint initialized again (a replay).
    pub fn same(&self, other: &Endpoint) -> bool {
        self.topic == other.topic && self.node_handle == other.node_handle && self.rmw == other.rmw
    }
}

/// A publisher.
pub type Publisher = Endpoint;

/// A subscription.
pub type Subscription = Endpoint;

/// A timer.
#[derive(Debug, Clone)]
pub struct Timer {
    /// Handle.
    pub key: Key,
    /// Period (ns).
    pub period_ns: i64,
    /// Owning node, from `rclcpp_timer_link_node` (resolved).
    pub node: Option<u32>,
    /// Node handle, as recorded.
    pub node_handle: u64,
    /// Creation time.
    pub created_ns: i64,
}

/// A service server or a client.
#[derive(Debug, Clone)]
pub struct Service {
    /// rcl handle.
    pub key: Key,
    /// Owning node (resolved).
    pub node: Option<u32>,
    /// Node handle, as recorded.
    pub node_handle: u64,
    /// Service name.
    pub name: String,
    /// rmw handle.
    pub rmw: u64,
    /// Creation time.
    pub created_ns: i64,
}

/// What a callback belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// A subscription (id in `subscriptions`).
    Subscription(u32),
    /// A timer.
    Timer(u32),
    /// A service server.
    Service(u32),
    /// A client (id in `clients`): rclpy's response callback, added with
    /// `rclcpp_service_callback_added` and the client's handle (rclcpp traces none).
    Client(u32),
}

/// What a callback was added to, as recorded (resolved once all initialization is known,
/// since the events can come in either order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnerRef {
    /// rclcpp subscription object.
    Subscription(u64),
    /// Timer handle.
    Timer(u64),
    /// Service handle.
    Service(u64),
}

/// A callback object.
#[derive(Debug, Clone)]
pub struct Callback {
    /// Address of the callback object.
    pub key: Key,
    /// What it was added to, as recorded.
    pub owner_ref: Option<OwnerRef>,
    /// What it belongs to (resolved).
    pub owner: Option<Owner>,
    /// Function symbol, from `rclcpp_callback_register`.
    pub symbol: String,
    /// Creation time.
    pub created_ns: i64,
}

/// An executor (CARET's events).
#[derive(Debug, Clone)]
pub struct Executor {
    /// Address.
    pub key: Key,
    /// `single_threaded_executor`, `multi_threaded_executor`, ...
    pub kind: String,
    /// Entities collector of a static executor.
    pub collector: u64,
}

/// A callback group (CARET's events).
#[derive(Debug, Clone)]
pub struct CallbackGroup {
    /// Address.
    pub key: Key,
    /// `mutually_exclusive` or `reentrant`.
    pub kind: String,
    /// Executor or entities collector address it was added to.
    pub executor: u64,
    /// Members: ("timer" | "subscription" | "service" | "client", handle).
    pub members: Vec<(String, u64)>,
}

/// A lifecycle state machine and its transitions.
#[derive(Debug, Clone)]
pub struct Lifecycle {
    /// State machine address.
    pub key: Key,
    /// Node (resolved).
    pub node: Option<u32>,
    /// Node handle, as recorded.
    pub node_handle: u64,
    /// (time, start label, goal label).
    pub transitions: Vec<(i64, String, String)>,
}

/// The kind of a message link a node declares (`message_link_*`, ros2_tracing 8.10 and later).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    /// Each publication is made from the latest message of each subscription (a timer that
    /// publishes from the data it holds): a message can feed many publications.
    PeriodicAsync,
    /// A publication is made once a message of each subscription is there (a synchronizer):
    /// each message feeds at most one publication.
    PartialSync,
}

impl LinkKind {
    /// As the annotation is named, after `message_link_`.
    pub fn name(self) -> &'static str {
        match self {
            LinkKind::PeriodicAsync => "periodic_async",
            LinkKind::PartialSync => "partial_sync",
        }
    }
}

/// A message link: the subscriptions whose messages a node's publishers publish from, as the
/// node declared it (`message_link_periodic_async` / `message_link_partial_sync`).
#[derive(Debug, Clone, PartialEq)]
pub struct MessageLink {
    /// Trace and process of the node.
    pub trace: u32,
    /// Process.
    pub vpid: i64,
    /// When the node declared it.
    pub created_ns: i64,
    /// Periodic async or partial sync.
    pub kind: LinkKind,
    /// rcl subscription handles, as recorded.
    pub subs: Vec<u64>,
    /// rcl publisher handles, as recorded.
    pub pubs: Vec<u64>,
    /// The subscriptions (ids), resolved; `None` for a handle whose `rcl_subscription_init` is
    /// not in the trace.
    pub sub_ids: Vec<Option<u32>>,
    /// The publishers (ids), resolved likewise.
    pub pub_ids: Vec<Option<u32>>,
}

/// Everything initialization events declare.
#[derive(Debug, Default, Clone)]
pub struct Model {
    /// Processes by (trace, vpid); see [`Process`].
    pub processes: HashMap<(u32, i64), Process>,
    /// Nodes.
    pub nodes: Registry<Node>,
    /// Publishers (by rcl handle).
    pub publishers: Registry<Publisher>,
    /// Publishers by rmw handle.
    pub publishers_by_rmw: Registry<u32>,
    /// Subscriptions (by rcl handle).
    pub subscriptions: Registry<Subscription>,
    /// Subscriptions by rmw handle.
    pub subscriptions_by_rmw: Registry<u32>,
    /// Subscriptions by rclcpp subscription object.
    pub subscriptions_by_rclcpp: Registry<u32>,
    /// Timers.
    pub timers: Registry<Timer>,
    /// Services.
    pub services: Registry<Service>,
    /// Clients.
    pub clients: Registry<Service>,
    /// Callbacks.
    pub callbacks: Registry<Callback>,
    /// GIDs of rmw handles, from `rmw_*_init`, but those a publisher or subscription took (its
    /// [`Endpoint::gid`]): clients', and those of handles whose rcl initialization is not in the
    /// trace.
    pub gids: HashMap<Key, Vec<u8>>,
    /// Topic of DDS writers (`dds:create_writer`).
    pub writer_topics: HashMap<Key, String>,
    /// Executors.
    pub executors: Registry<Executor>,
    /// Callback groups.
    pub groups: Registry<CallbackGroup>,
    /// Lifecycle state machines.
    pub lifecycles: Registry<Lifecycle>,
    /// Intra-process buffers to subscriptions: ring buffer → ipb, ipb → rclcpp subscription.
    pub buffer_to_ipb: HashMap<Key, u64>,
    /// ipb → rclcpp subscription object.
    pub ipb_to_subscription: HashMap<Key, u64>,
    /// Executor → its entities collector, when the collector was linked before the executor's
    /// construction was recorded (rclcpp's base `Executor` constructor runs first).
    pub collector_of: HashMap<Key, u64>,
    /// Message links nodes declared, in the order of (trace, process, time); each once.
    pub message_links: Vec<MessageLink>,
}

impl Process {
    /// Whether this process recorded an event of `kind`.
    pub fn has(&self, kind: crate::events::Kind) -> bool {
        self.kinds & kind.bit() != 0
    }

    /// `procname (pid N)`, with the host when `with_host`.
    pub fn label(&self, with_host: bool) -> String {
        let name = if self.procname.is_empty() { "?" } else { self.procname.as_str() };
        if with_host && !self.host.is_empty() {
            format!("{name} (pid {} on {})", self.vpid, self.host)
        } else {
            format!("{name} (pid {})", self.vpid)
        }
    }
}

impl Model {
    /// Gives back the spare room of the registries' tables once the pass has made them: they
    /// are kept to the end, and grew by doubling.
    pub(crate) fn shrink_to_fit(&mut self) {
        for r in self.registries() {
            r.shrink_to_fit();
        }
    }

    /// Every registry, each as the steps of the pass that apply to any registry.
    fn registries(&mut self) -> [&mut dyn Stamped; 13] {
        [
            &mut self.nodes,
            &mut self.publishers,
            &mut self.publishers_by_rmw,
            &mut self.subscriptions,
            &mut self.subscriptions_by_rmw,
            &mut self.subscriptions_by_rclcpp,
            &mut self.timers,
            &mut self.services,
            &mut self.clients,
            &mut self.callbacks,
            &mut self.executors,
            &mut self.groups,
            &mut self.lifecycles,
        ]
    }

    /// In a part of a split pass: the objects added since the last stamp, in any registry,
    /// were created by the event of `order` (an initialization event).
    pub(crate) fn stamp(&mut self, order: u128) {
        for r in self.registries() {
            r.stamp(order);
        }
    }

    /// The models of the parts of a split pass (disjoint traces, stamped) as one: each
    /// registry's objects in the order of the events that created them, ids mapped.
    pub(crate) fn merge(mut parts: Vec<Model>) -> Model {
        fn take<T>(parts: &mut [Model], reg: impl Fn(&mut Model) -> &mut Registry<T>) -> Vec<Registry<T>> {
            parts.iter_mut().map(|m| std::mem::take(reg(m))).collect()
        }
        /// Registries of ids into another registry, those ids mapped with its merge's maps.
        fn of_ids(mut regs: Vec<Registry<u32>>, maps: &[Vec<u32>]) -> Registry<u32> {
            for (r, ids) in regs.iter_mut().zip(maps) {
                r.items.iter_mut().for_each(|x| *x = ids[*x as usize]);
            }
            Registry::merge(regs).0
        }
        let mut m = Model::default();
        m.nodes = Registry::merge(take(&mut parts, |m| &mut m.nodes)).0;
        let (publishers, pub_ids) = Registry::merge(take(&mut parts, |m| &mut m.publishers));
        m.publishers = publishers;
        m.publishers_by_rmw = of_ids(take(&mut parts, |m| &mut m.publishers_by_rmw), &pub_ids);
        let (subscriptions, sub_ids) = Registry::merge(take(&mut parts, |m| &mut m.subscriptions));
        m.subscriptions = subscriptions;
        m.subscriptions_by_rmw = of_ids(take(&mut parts, |m| &mut m.subscriptions_by_rmw), &sub_ids);
        m.subscriptions_by_rclcpp = of_ids(take(&mut parts, |m| &mut m.subscriptions_by_rclcpp), &sub_ids);
        m.timers = Registry::merge(take(&mut parts, |m| &mut m.timers)).0;
        m.services = Registry::merge(take(&mut parts, |m| &mut m.services)).0;
        m.clients = Registry::merge(take(&mut parts, |m| &mut m.clients)).0;
        m.callbacks = Registry::merge(take(&mut parts, |m| &mut m.callbacks)).0;
        m.executors = Registry::merge(take(&mut parts, |m| &mut m.executors)).0;
        m.groups = Registry::merge(take(&mut parts, |m| &mut m.groups)).0;
        m.lifecycles = Registry::merge(take(&mut parts, |m| &mut m.lifecycles)).0;
        for p in parts {
            m.processes.extend(p.processes);
            m.gids.extend(p.gids);
            m.writer_topics.extend(p.writer_topics);
            m.buffer_to_ipb.extend(p.buffer_to_ipb);
            m.ipb_to_subscription.extend(p.ipb_to_subscription);
            m.collector_of.extend(p.collector_of);
            m.message_links.extend(p.message_links);
        }
        m.message_links.sort_by_key(|l| (l.trace, l.vpid, l.created_ns));
        m
    }

    /// Adds a message link, unless the same was declared before (a rotated recording's chunks
    /// and CARET's replays record declarations again).
    pub(crate) fn add_message_link(&mut self, link: MessageLink) {
        let same = |l: &MessageLink| {
            (l.trace, l.vpid, l.kind, &l.subs, &l.pubs) == (link.trace, link.vpid, link.kind, &link.subs, &link.pubs)
        };
        if !self.message_links.iter().any(same) {
            self.message_links.push(link);
        }
    }

    /// Every time of the model (objects' creation times and their lookup by time, lifecycle
    /// transitions) moved to other clocks, each by its trace's correction. A correction keeps
    /// each trace's order of times, so that every lookup by time finds what it found before,
    /// at the moved time.
    pub(crate) fn shift(&mut self, by: &crate::ClockShift) {
        for r in self.registries() {
            r.shift(by);
        }
        let mv = |key: Key, ts: &mut i64| *ts = by.time(key.0, *ts);
        self.nodes.items.iter_mut().for_each(|x| mv(x.key, &mut x.created_ns));
        self.publishers.items.iter_mut().for_each(|x| mv(x.key, &mut x.created_ns));
        self.subscriptions.items.iter_mut().for_each(|x| mv(x.key, &mut x.created_ns));
        self.timers.items.iter_mut().for_each(|x| mv(x.key, &mut x.created_ns));
        self.services.items.iter_mut().for_each(|x| mv(x.key, &mut x.created_ns));
        self.clients.items.iter_mut().for_each(|x| mv(x.key, &mut x.created_ns));
        self.callbacks.items.iter_mut().for_each(|x| mv(x.key, &mut x.created_ns));
        for l in &mut self.lifecycles.items {
            let key = l.key;
            l.transitions.iter_mut().for_each(|t| mv(key, &mut t.0));
        }
        for l in &mut self.message_links {
            l.created_ns = by.time(l.trace, l.created_ns);
        }
    }

    /// Resolves node handles and callback owners, now that all initialization events are known
    /// (they can come in any order: rcl creates `/rosout`'s publisher before it records the node).
    pub fn resolve_owners(&mut self) {
        let nodes = &self.nodes;
        let at = |(t, p, _): Key, h: u64, ts: i64| if h == 0 { None } else { nodes.at((t, p, h), ts) };
        for x in &mut self.publishers.items {
            x.node = at(x.key, x.node_handle, x.created_ns);
        }
        for x in &mut self.subscriptions.items {
            x.node = at(x.key, x.node_handle, x.created_ns);
        }
        for x in &mut self.timers.items {
            x.node = at(x.key, x.node_handle, x.created_ns);
        }
        for x in self.services.items.iter_mut().chain(self.clients.items.iter_mut()) {
            x.node = at(x.key, x.node_handle, x.created_ns);
        }
        for x in &mut self.lifecycles.items {
            x.node = at(x.key, x.node_handle, 0);
        }
        for i in 0..self.callbacks.items.len() {
            let cb = &self.callbacks.items[i];
            let (t, p, _) = cb.key;
            let at = cb.created_ns;
            let owner = match cb.owner_ref {
                Some(OwnerRef::Subscription(h)) => self
                    .subscriptions_by_rclcpp
                    .at((t, p, h), at)
                    .map(|id| Owner::Subscription(*self.subscriptions_by_rclcpp.get(id))),
                Some(OwnerRef::Timer(h)) => self.timers.at((t, p, h), at).map(Owner::Timer),
                Some(OwnerRef::Service(h)) => self.service_or_client(t, p, h, at),
                None => None,
            };
            self.callbacks.items[i].owner = owner;
        }
        for l in &mut self.message_links {
            let (t, p, at) = (l.trace, l.vpid, l.created_ns);
            l.sub_ids = l.subs.iter().map(|&h| self.subscriptions.at((t, p, h), at)).collect();
            l.pub_ids = l.pubs.iter().map(|&h| self.publishers.at((t, p, h), at)).collect();
        }
    }

    /// The node of a node handle at `ts`.
    pub fn node_at(&self, trace: u32, vpid: i64, handle: u64, ts: i64) -> Option<u32> {
        self.nodes.at((trace, vpid, handle), ts)
    }

    /// The full name of a node id, or "".
    pub fn node_name(&self, id: Option<u32>) -> String {
        id.map(|i| self.nodes.get(i).full_name()).unwrap_or_default()
    }

    /// The node owning a callback.
    pub fn callback_node(&self, cb: &Callback) -> Option<u32> {
        match cb.owner? {
            Owner::Subscription(s) => self.subscriptions.get(s).node,
            Owner::Timer(t) => self.timers.get(t).node,
            Owner::Service(s) => self.services.get(s).node,
            Owner::Client(c) => self.clients.get(c).node,
        }
    }

    /// Per timer, whether it is an executor's own rather than a node's: no node linked it, no
    /// callback was added to it, and its process records its callbacks' owners (rclcpp, and
    /// rclpy with rostrace's instrumentation: so rclpy's spin_once timeout timers). In a process
    /// that records none (rclpy traced without the instrumentation) no timer is.
    pub fn executor_timers(&self) -> Vec<bool> {
        let mut has_callback = vec![false; self.timers.items.len()];
        for c in &self.callbacks.items {
            if let Some(Owner::Timer(id)) = c.owner {
                has_callback[id as usize] = true;
            }
        }
        // The processes that record callbacks and their owners: rclcpp, instrumented rclpy.
        let links: crate::collections::HashSet<(u32, i64)> = self
            .timers
            .items
            .iter()
            .filter(|x| x.node_handle != 0)
            .map(|x| (x.key.0, x.key.1))
            .chain(self.callbacks.items.iter().filter(|c| c.owner.is_some()).map(|c| (c.key.0, c.key.1)))
            .collect();
        let own = |(i, t): (usize, &Timer)| {
            t.node.is_none() && t.node_handle == 0 && !has_callback[i] && links.contains(&(t.key.0, t.key.1))
        };
        self.timers.items.iter().enumerate().map(own).collect()
    }

    /// The owner of a callback added to service handle `h`: the service, else a client of
    /// that handle (rclpy's instrumentation adds a client's response callback that way).
    fn service_or_client(&self, t: u32, p: i64, h: u64, at: i64) -> Option<Owner> {
        self.services
            .at((t, p, h), at)
            .map(Owner::Service)
            .or_else(|| self.clients.at((t, p, h), at).map(Owner::Client))
    }
}

/// The parts' items in the order of their events: `f(part, index in the part)` for each, each
/// part's in order (`orders`: each item's order, see [`crate::Context::order`]).
pub(crate) fn interleave(orders: &[&[u128]], mut f: impl FnMut(usize, usize)) {
    let mut at = vec![0usize; orders.len()];
    loop {
        let mut best: Option<(u128, usize)> = None;
        for (p, o) in orders.iter().enumerate() {
            if let Some(&k) = o.get(at[p]) {
                if best.is_none_or(|b| k < b.0) {
                    best = Some((k, p));
                }
            }
        }
        let Some((_, p)) = best else { break };
        f(p, at[p]);
        at[p] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_found_by_time_and_stay_small() {
        let mut r: Registry<&str> = Registry::default();
        let k = (0, 1, 0x10);
        let a = r.insert(k, 100, "a", |x, y| x == y);
        assert_eq!(r.insert(k, 150, "a", |x, y| x == y), a, "the same object again is not a new one");
        assert_eq!((r.at(k, 50), r.at(k, 100), r.at(k, 1000)), (Some(a), Some(a), Some(a)));
        let b = r.insert(k, 200, "b", |x, y| x == y);
        // Before the first: the first (initialization recorded after use).
        assert_eq!((r.at(k, 50), r.at(k, 199), r.at(k, 200), r.at(k, 1000)), (Some(a), Some(a), Some(b), Some(b)));
        assert_eq!(r.versions(k).unwrap().iter().collect::<Vec<_>>(), [(100, a), (200, b)]);
        assert_eq!((r.latest(k), r.at((0, 2, 0x10), 0)), (Some(b), None));
        // The lookup's entry: the key, and one version inline (no heap block) in 16 bytes.
        assert_eq!(std::mem::size_of::<Versions>(), 16);
    }
}
