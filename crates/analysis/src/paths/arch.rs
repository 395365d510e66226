//! The architecture of a traced system: nodes with their callbacks, publishers and
//! subscriptions, the communications between nodes, executors and callback groups, and each
//! node's paths from an input topic to an output topic with how they are followed (message
//! context), as CARET defines them; observed from the trace rather than written by hand.

use super::spec::{Endpoint, PathSpec};
use crate::collections::{push_small, HashMap};
use crate::link::{LinkedPublication, View};
use crate::model::{CallbackGroup, LinkKind, Model, Owner, Registry};
use serde::Serialize;

/// Topics left out of the architecture, as CARET does.
pub const IGNORED_TOPICS: [&str; 3] = ["/parameter_events", "/rosout", "/clock"];

/// How a node's output follows its input (CARET's message context).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Context {
    /// Each publication of the output follows the latest run of the input's subscription
    /// callback before it (a timer using the latest message, say).
    UseLatestMessage,
    /// The output is published during a run of the input's subscription callback.
    CallbackChain,
}

impl Context {
    /// CARET's name.
    pub fn caret_name(self) -> &'static str {
        match self {
            Context::UseLatestMessage => "use_latest_message",
            Context::CallbackChain => "callback_chain",
        }
    }

    /// From CARET's name.
    pub fn from_caret(s: &str) -> Option<Context> {
        match s {
            "use_latest_message" => Some(Context::UseLatestMessage),
            "callback_chain" => Some(Context::CallbackChain),
            _ => None,
        }
    }
}

/// A callback of a node.
#[derive(Debug, Clone, Serialize)]
pub struct ArchCallback {
    /// CARET's name: `<node>/callback_<i>` for timers and subscriptions (timers first, each in
    /// creation order, the index zero-padded to the digits of their count: `callback_07` of
    /// 12), `<node>/service_callback_<i>` for services (padded to the digits of theirs).
    pub name: String,
    /// `timer_callback`, `subscription_callback` or `service_callback`.
    pub kind: &'static str,
    /// Timer period (ns).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period_ns: Option<i64>,
    /// Subscription topic, or service name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    /// Function symbol.
    pub symbol: String,
    /// The callback objects (ids in the model's callbacks) it stands for.
    #[serde(skip)]
    pub ids: Vec<u32>,
}

/// A topic a node publishes.
#[derive(Debug, Clone, Serialize)]
pub struct ArchPublish {
    /// Topic.
    pub topic: String,
    /// The callbacks seen publishing it (a publication during a run on the same thread).
    pub callbacks: Vec<String>,
    /// Publishers (ids in the model).
    #[serde(skip)]
    pub publishers: Vec<u32>,
}

/// A topic a node subscribes to.
#[derive(Debug, Clone, Serialize)]
pub struct ArchSubscribe {
    /// Topic.
    pub topic: String,
    /// Its subscription callback, when known.
    pub callback: Option<String>,
}

/// A path inside a node, from an input topic to an output topic.
#[derive(Debug, Clone, Serialize)]
pub struct NodePath {
    /// Input topic.
    pub subscribe: String,
    /// Output topic.
    pub publish: String,
    /// How the output follows the input.
    pub context: Context,
    /// Where the context comes from: `message link` (the node declared the link), `observed`
    /// (callback chain: publications seen during the input's runs), `inferred` (the latest
    /// message: another of the node's callbacks was seen publishing the output), `architecture
    /// file`, else `default` (the latest message, nothing seen publishing the output).
    pub source: &'static str,
    /// The message link the node declared from the input to the output, if it did: with
    /// `partial_sync`, each input message feeds at most one output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<LinkKind>,
    /// The service call the output follows the input through, if it does (source `service
    /// call`): the input's callback sends a request, and the callback taking the response
    /// publishes the output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceHop>,
}

/// A service call inside a node path: the input's callback sends a request to `service`,
/// served by `servers`, and the node's callback taking the response publishes the output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServiceHop {
    /// The service's name.
    pub service: String,
    /// The nodes that provide it.
    pub servers: Vec<String>,
}

/// How a path crosses one of its nodes: the node path it follows there.
#[derive(Debug, Clone, Serialize)]
pub struct Crossing {
    /// The node.
    pub node: String,
    /// Its path from the topic the path takes to the topic it publishes (in the JSON, its
    /// fields beside `node`).
    #[serde(flatten)]
    pub path: NodePath,
}

/// A callback group.
#[derive(Debug, Clone, Serialize)]
pub struct ArchGroup {
    /// `<node>/callback_group_<i>`, or `<node>/service_only_callback_group_<i>` for a group of
    /// service callbacks only (caret_analyze's names, each counted apart, not padded).
    pub name: String,
    /// `mutually_exclusive` or `reentrant`.
    pub kind: String,
    /// Its callbacks.
    pub callbacks: Vec<String>,
    /// Its executor's address (trace, vpid, address), 0 when unknown.
    #[serde(skip)]
    pub executor: (u32, i64, u64),
}

/// An executor.
#[derive(Debug, Clone, Serialize)]
pub struct ArchExecutor {
    /// `executor_<i>` (padded to the digits of the number of executors, as caret_analyze does).
    pub name: String,
    /// `single_threaded_executor`, `multi_threaded_executor`, `static_single_threaded_executor`.
    pub kind: String,
    /// Its callback groups.
    pub groups: Vec<String>,
}

/// A node.
#[derive(Debug, Clone, Serialize)]
pub struct ArchNode {
    /// Full name.
    pub name: String,
    /// Callbacks.
    pub callbacks: Vec<ArchCallback>,
    /// Callback groups.
    pub groups: Vec<ArchGroup>,
    /// Published topics.
    pub publishes: Vec<ArchPublish>,
    /// Subscribed topics.
    pub subscribes: Vec<ArchSubscribe>,
    /// Paths from each input to each output.
    pub paths: Vec<NodePath>,
}

impl ArchNode {
    /// The node path from `sub` to `publish`.
    pub fn path(&self, sub: &str, publish: &str) -> Option<&NodePath> {
        self.paths.iter().find(|p| p.subscribe == sub && p.publish == publish)
    }

    /// The subscription callback of `topic`.
    pub fn subscription_callback(&self, topic: &str) -> Option<&ArchCallback> {
        self.callbacks.iter().find(|c| c.kind == "subscription_callback" && c.topic.as_deref() == Some(topic))
    }
}

/// Messages on a topic from one node to another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Communication {
    /// Topic.
    pub topic: String,
    /// Publishing node (index in [`Architecture::nodes`]).
    pub from: usize,
    /// Subscribing node.
    pub to: usize,
}

/// A path given a name (CARET's `named_paths`): a node chain with the topics between.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NamedPath {
    /// Name.
    pub name: String,
    /// (node, subscribed topic, published topic) along the path.
    pub chain: Vec<(String, Option<String>, Option<String>)>,
}

/// The architecture.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Architecture {
    /// Nodes, by name.
    pub nodes: Vec<ArchNode>,
    /// Communications between nodes.
    pub communications: Vec<Communication>,
    /// Executors.
    pub executors: Vec<ArchExecutor>,
    /// Named paths (from an architecture file).
    pub named_paths: Vec<NamedPath>,
}

/// CARET's `indexed_name`: `<base>_<i>`, the index zero-padded to `digits`.
fn indexed_name(base: &str, i: usize, digits: usize) -> String {
    format!("{base}_{i:0digits$}")
}

/// Whether a callback name is a service callback's.
pub fn is_service_callback(name: &str) -> bool {
    name.rsplit('/').next().is_some_and(|last| last.starts_with("service_callback_"))
}

/// The number of decimal digits of `n` (CARET's `Util.num_digit`: 1 for 0).
fn num_digit(n: usize) -> usize {
    n.to_string().len()
}

/// Names a node's callbacks (timers, then subscriptions, then services, each in creation
/// order) as caret_analyze v0.7.3 does: timer and subscription callbacks
/// `<node>/callback_<i>`, padded to the digits of their count, and service callbacks
/// `<node>/service_callback_<i>`, padded to the digits of theirs.
fn name_callbacks(nd: &mut ArchNode) {
    let services = nd.callbacks.iter().filter(|c| c.kind == "service_callback").count();
    let (digits, srv_digits) = (num_digit(nd.callbacks.len() - services), num_digit(services));
    let (mut i, mut j) = (0, 0);
    for c in &mut nd.callbacks {
        c.name = if c.kind == "service_callback" {
            j += 1;
            indexed_name(&format!("{}/service_callback", nd.name), j - 1, srv_digits)
        } else {
            i += 1;
            indexed_name(&format!("{}/callback", nd.name), i - 1, digits)
        };
    }
}

fn node_of<T>(reg: &Registry<T>, id: u32, node: impl Fn(&T) -> Option<u32>) -> Option<u32> {
    node(reg.get(id))
}

impl ArchNode {
    /// The node's paths, every input to every output: a callback chain where the input's
    /// callback was seen publishing the output, else the latest message used: *inferred* where
    /// another of the node's callbacks was seen publishing it (a timer publishing from the
    /// input it holds), by default where none was.
    fn observed_paths(&mut self) {
        self.paths.clear();
        self.paths.reserve_exact(self.subscribes.len() * self.publishes.len());
        for s in &self.subscribes {
            for p in &self.publishes {
                let chained = s.callback.as_ref().is_some_and(|c| p.callbacks.contains(c));
                let source = match (chained, s.callback.is_some() && !p.callbacks.is_empty()) {
                    (true, _) => "observed",
                    (false, true) => "inferred",
                    (false, false) => "default",
                };
                self.paths.push(NodePath {
                    subscribe: s.topic.clone(),
                    publish: p.topic.clone(),
                    context: if chained { Context::CallbackChain } else { Context::UseLatestMessage },
                    source,
                    link: None,
                    service: None,
                });
            }
        }
    }

    /// Sets the paths that go through a service call (`calls`: input topic, output topic, the
    /// call), where the input's callback is not seen publishing the output itself.
    fn service_paths(&mut self, calls: &[(String, String, ServiceHop)]) {
        for (sub, publish, hop) in calls {
            if let Some(p) = self.paths.iter_mut().find(|p| &p.subscribe == sub && &p.publish == publish) {
                if p.source != "observed" {
                    p.context = Context::CallbackChain;
                    p.source = "service call";
                    p.service = Some(hop.clone());
                }
            }
        }
    }

    /// Sets the paths a node declared with message links (`links`: input topic, output topic,
    /// kind): they use the latest message, even where a callback chain was seen too (the
    /// declaration says the output also follows the input outside the input's runs). A pair
    /// declared with both kinds is partial sync.
    fn linked_paths(&mut self, links: &[(String, String, LinkKind)]) {
        for (sub, publish, kind) in links {
            if let Some(p) = self.paths.iter_mut().find(|p| &p.subscribe == sub && &p.publish == publish) {
                p.context = Context::UseLatestMessage;
                p.source = "message link";
                p.link = p.link.max(Some(*kind));
                p.service = None;
            }
        }
    }
}

/// The (input topic, output topic, kind) pairs of each node's message links, by node name:
/// those whose subscription and publisher are both known and of the same node, on topics the
/// architecture keeps.
fn declared_links(m: &Model) -> HashMap<String, Vec<(String, String, LinkKind)>> {
    let mut out: HashMap<String, Vec<(String, String, LinkKind)>> = HashMap::default();
    for l in &m.message_links {
        for s in l.sub_ids.iter().flatten().map(|&s| m.subscriptions.get(s)) {
            for p in l.pub_ids.iter().flatten().map(|&p| m.publishers.get(p)) {
                let ignored = IGNORED_TOPICS.contains(&s.topic.as_str()) || IGNORED_TOPICS.contains(&p.topic.as_str());
                if ignored || s.node.is_none() || s.node != p.node {
                    continue;
                }
                let name = m.nodes.get(s.node.unwrap_or_default()).full_name();
                out.entry(name).or_default().push((s.topic.clone(), p.topic.clone(), l.kind));
            }
        }
    }
    out
}

/// Who was seen publishing what: the callback (its object's key) and the topic of each
/// publication made during a callback's run, and the callback and the service of each request
/// sent during one. A streamed analysis gathers it slice by slice
/// ([`Architecture::seen_publishing`]) for the architecture of the whole recording
/// ([`Architecture::from_seen`]).
#[derive(Debug, Clone, Default)]
pub struct Publishing {
    topics: crate::collections::HashSet<(crate::Key, std::sync::Arc<str>)>,
    requests: crate::collections::HashSet<(crate::Key, std::sync::Arc<str>)>,
    /// The client (its key) and the topic of each publication that follows a response of the
    /// client's (see [`responses_published`]).
    responses: crate::collections::HashSet<(crate::Key, std::sync::Arc<str>)>,
}

impl Publishing {
    /// Adds what `other` saw.
    pub fn extend(&mut self, other: Publishing) {
        self.topics.extend(other.topics);
        self.requests.extend(other.requests);
        self.responses.extend(other.responses);
    }
}

/// The publications of `a` that follow a service response: made during a run of the client's
/// response callback (rclpy's), or on the thread that took the response, after it and before the
/// thread's next run (rclcpp and `rostrace_ros2` run no callback around a response): the client
/// (id in the model's clients) and the topic, once each.
fn responses_published<'a>(a: &View<'a>) -> Vec<(u32, &'a std::sync::Arc<str>)> {
    let Some(calls) = a.get::<crate::ServiceHandler>() else { return Vec::new() };
    let m = a.model;
    if calls.client_calls.iter().all(|c| c.response.is_none()) {
        return Vec::new();
    }
    let taken = super::threads::responses_by_thread(calls, &super::threads::clients_by_rmw(m));
    let runs = super::threads::RunsOnThreads::new(a);
    let mut out = Vec::new();
    for LinkedPublication { publication: p, topic } in a.pubs {
        let Some(topic) = topic else { continue };
        let thread = (p.trace, p.vpid, p.vtid);
        match p.in_run().and_then(|r| a.runs[r as usize].callback).map(|cb| m.callbacks.get(cb).owner) {
            Some(Some(Owner::Client(c))) => out.push((c, topic)),
            Some(_) => {}
            None => {
                let at = p.ts_rclcpp().unwrap_or(p.ts);
                let Some(v) = taken.get(&thread) else { continue };
                let Some(&(t, client)) = v.get(v.partition_point(|x| x.0 <= at).wrapping_sub(1)) else { continue };
                // (The client's own response run may come between: rclpy's, before its futures' callbacks.)
                let run_between = runs.latest(a, thread, at).is_some_and(|r| {
                    let run = &a.runs[r as usize];
                    run.run.start >= t
                        && run.callback.map(|cb| m.callbacks.get(cb).owner) != Some(Some(Owner::Client(client)))
                });
                if !run_between {
                    out.push((client, topic));
                }
            }
        }
    }
    out.sort_unstable_by_key(|(c, t)| (*c, t.as_ptr()));
    out.dedup_by_key(|(c, t)| (*c, t.as_ptr()));
    out
}

/// The service requests of `a`'s [`crate::ServiceHandler`] sent during a callback's run: the
/// callback (id) and the client (id in the model's clients), once each.
fn requests_in_runs(a: &View<'_>) -> Vec<(u32, u32)> {
    let Some(calls) = a.get::<crate::ServiceHandler>() else { return Vec::new() };
    let m = a.model;
    let mut out: Vec<(u32, u32)> = Vec::new();
    if calls.client_calls.is_empty() {
        return out;
    }
    let runs = super::threads::RunsOnThreads::new(a);
    let client_of = super::threads::clients_by_rmw(m);
    for c in &calls.client_calls {
        let Some(&client) = client_of.get(&c.client) else { continue };
        let Some(cb) =
            runs.during(a, (c.client.0, c.client.1, c.vtid), c.ts_send).and_then(|r| a.runs[r as usize].callback)
        else {
            continue;
        };
        out.push((cb, client));
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The service requests sent during callback runs and the publications that follow responses
/// in `a` (a [`Publishing`] without its `topics`).
fn seen_calling(a: &View<'_>) -> Publishing {
    let m = a.model;
    let requests = requests_in_runs(a)
        .into_iter()
        .map(|(cb, c)| (m.callbacks.get(cb).key, std::sync::Arc::from(m.clients.get(c).name.as_str())))
        .collect();
    let responses =
        responses_published(a).into_iter().map(|(c, topic)| (m.clients.get(c).key, topic.clone())).collect();
    Publishing { topics: Default::default(), requests, responses }
}

/// The node paths through a service call, by node name: (input topic, output topic, call) where
/// the input's subscription callback was seen sending requests of a client of the node, and
/// the callback taking that client's responses publishing the output.
fn service_calls(m: &Model, seen: &Publishing) -> HashMap<String, Vec<(String, String, ServiceHop)>> {
    let mut out: HashMap<String, Vec<(String, String, ServiceHop)>> = HashMap::default();
    if m.clients.items.is_empty() {
        return out;
    }
    let mut ids: HashMap<crate::Key, Vec<u32>> = HashMap::default();
    for (id, cb) in m.callbacks.items.iter().enumerate() {
        ids.entry(cb.key).or_default().push(id as u32);
    }
    let owners = |key: &crate::Key| ids.get(key).into_iter().flatten().filter_map(|&id| m.callbacks.get(id).owner);
    // Per client: the topics published after its responses.
    let mut published: HashMap<u32, Vec<&str>> = HashMap::default();
    for (key, topic) in &seen.responses {
        for (c, _) in m.clients.items.iter().enumerate().filter(|(_, x)| x.key == *key) {
            push_small(published.entry(c as u32).or_default(), &**topic);
        }
    }
    let node_name = |n: Option<u32>| n.map(|n| m.nodes.get(n).full_name());
    for (key, service) in &seen.requests {
        for o in owners(key) {
            let Owner::Subscription(s) = o else { continue };
            let sub = m.subscriptions.get(s);
            let Some(node) = node_name(sub.node) else { continue };
            if IGNORED_TOPICS.contains(&sub.topic.as_str()) {
                continue;
            }
            // The node's clients of the service, and what their responses' callbacks publish.
            for (c, client) in m.clients.items.iter().enumerate() {
                if *client.name != **service || node_name(client.node).as_deref() != Some(node.as_str()) {
                    continue;
                }
                let mut servers: Vec<String> = m
                    .services
                    .items
                    .iter()
                    .filter(|x| x.name == client.name)
                    .filter_map(|x| node_name(x.node))
                    .collect();
                servers.sort();
                servers.dedup();
                for topic in published.get(&(c as u32)).into_iter().flatten() {
                    if IGNORED_TOPICS.contains(topic) {
                        continue;
                    }
                    let hop = ServiceHop { service: client.name.clone(), servers: servers.clone() };
                    let list = out.entry(node.clone()).or_default();
                    let item = (sub.topic.clone(), topic.to_string(), hop);
                    if !list.contains(&item) {
                        list.push(item);
                    }
                }
            }
        }
    }
    out
}

impl Architecture {
    /// Who publishes during which callback's runs in `a` (see [`Publishing`]).
    pub fn seen_publishing<'a>(a: impl Into<View<'a>>) -> Publishing {
        let a = a.into();
        let m = a.model;
        let topics = published_in_runs(&a).map(|(cb, topic)| (m.callbacks.get(cb).key, topic.clone())).collect();
        Publishing { topics, ..seen_calling(&a) }
    }

    /// The architecture of `a`'s model, the callbacks seen publishing being those of `seen`
    /// rather than those of `a`'s tables (a streamed analysis has none).
    pub fn from_seen<'a>(a: impl Into<View<'a>>, seen: &Publishing) -> Architecture {
        Architecture::build(&a.into(), Some(seen))
    }

    /// Each path written as [`Architecture::parse_path`] takes it (`paths`), then each named
    /// path of the architecture (`named`), in that order; a path it does not have is its error,
    /// starting with `what[0]` (a written path) or `what[1]` (a named one).
    pub fn paths_asked(&self, paths: &[String], named: &[String], what: [&str; 2]) -> Vec<Result<PathSpec, String>> {
        let written = paths.iter().map(|p| self.parse_path(p, what[0]));
        written.chain(named.iter().map(|n| self.named_path(n, what[1]))).collect()
    }

    /// The architecture observed in an analysis.
    pub fn from_analysis<'a>(a: impl Into<View<'a>>) -> Architecture {
        Architecture::build(&a.into(), None)
    }

    /// The architecture of `a`, the callbacks seen publishing those of `seen` if given, else
    /// those of `a`'s tables.
    fn build(a: &View<'_>, seen: Option<&Publishing>) -> Architecture {
        let m = &a.model;
        let ignored = |t: &str| IGNORED_TOPICS.contains(&t);
        let node_name = |id: Option<u32>| id.map(|n| m.nodes.get(n).full_name());
        // The nodes in the order first met, sorted by name at the end (in place: a map of the
        // nodes by name would hold them all twice while turned into the list), and where each
        // is by name.
        let mut nodes: Vec<ArchNode> = Vec::with_capacity(m.nodes.items.len());
        let mut by_name: HashMap<String, u32> = HashMap::default();
        fn node<'n>(
            nodes: &'n mut Vec<ArchNode>,
            by_name: &mut HashMap<String, u32>,
            name: String,
        ) -> &'n mut ArchNode {
            let i = *by_name.entry(name).or_insert_with_key(|name| {
                nodes.push(ArchNode {
                    name: name.clone(),
                    callbacks: Vec::new(),
                    groups: Vec::new(),
                    publishes: Vec::new(),
                    subscribes: Vec::new(),
                    paths: Vec::new(),
                });
                nodes.len() as u32 - 1
            });
            &mut nodes[i as usize]
        }
        // Callbacks, by node: (kind rank, creation, id).
        let mut cbs: HashMap<String, Vec<(u8, i64, u32)>> = HashMap::default();
        for (id, cb) in m.callbacks.items.iter().enumerate() {
            let (rank, owner_node) = match cb.owner {
                Some(Owner::Timer(t)) => (0, m.timers.get(t).node),
                Some(Owner::Subscription(s)) => {
                    if ignored(&m.subscriptions.get(s).topic) {
                        continue;
                    }
                    (1, m.subscriptions.get(s).node)
                }
                Some(Owner::Service(s)) => (2, m.services.get(s).node),
                // CARET's architecture has no client callbacks.
                Some(Owner::Client(_)) | None => continue,
            };
            if let Some(n) = node_name(owner_node) {
                push_small(cbs.entry(n).or_default(), (rank, cb.created_ns, id as u32));
            }
        }
        // Callback id → (node name, callback name).
        let mut cb_name: HashMap<u32, (String, String)> = HashMap::default();
        let mut names: Vec<String> = cbs.keys().cloned().collect();
        names.sort();
        for n in names {
            let mut list = cbs.remove(&n).unwrap_or_default();
            list.sort();
            let nd = node(&mut nodes, &mut by_name, n.clone());
            for (_, _, id) in list {
                let cb = m.callbacks.get(id);
                let (kind, period_ns, topic) = match cb.owner {
                    Some(Owner::Timer(t)) => ("timer_callback", Some(m.timers.get(t).period_ns), None),
                    Some(Owner::Subscription(s)) => {
                        ("subscription_callback", None, Some(m.subscriptions.get(s).topic.clone()))
                    }
                    Some(Owner::Service(s)) => ("service_callback", None, Some(m.services.get(s).name.clone())),
                    Some(Owner::Client(_)) | None => continue,
                };
                // The same callback object seen again (replayed initialization) is the same
                // callback; so are the two callback objects of a subscription taking
                // intra-process messages (its intra-process one and its inter-process one), one
                // callback for caret_analyze (its callback_object_intra and callback_object).
                let subscription = matches!(cb.owner, Some(Owner::Subscription(_)));
                let same = nd.callbacks.iter_mut().find(|c| {
                    c.kind == kind
                        && c.period_ns == period_ns
                        && c.topic == topic
                        && c.ids.iter().any(|&o| {
                            let other = m.callbacks.get(o);
                            other.key == cb.key || (subscription && other.owner == cb.owner)
                        })
                });
                match same {
                    Some(c) => c.ids.push(id),
                    None => push_small(
                        &mut nd.callbacks,
                        ArchCallback {
                            name: String::new(),
                            kind,
                            period_ns,
                            topic,
                            symbol: cb.symbol.clone(),
                            ids: vec![id],
                        },
                    ),
                }
            }
            name_callbacks(nd);
            for c in &nd.callbacks {
                for &id in &c.ids {
                    cb_name.insert(id, (n.clone(), c.name.clone()));
                }
            }
        }
        // Publishers and subscriptions.
        for (id, p) in m.publishers.items.iter().enumerate() {
            if ignored(&p.topic) {
                continue;
            }
            let Some(n) = node_name(node_of(&m.publishers, id as u32, |p| p.node)) else { continue };
            let nd = node(&mut nodes, &mut by_name, n);
            match nd.publishes.iter_mut().find(|x| x.topic == p.topic) {
                Some(x) => x.publishers.push(id as u32),
                None => push_small(
                    &mut nd.publishes,
                    ArchPublish { topic: p.topic.clone(), callbacks: Vec::new(), publishers: vec![id as u32] },
                ),
            }
        }
        for s in &m.subscriptions.items {
            if ignored(&s.topic) {
                continue;
            }
            let Some(n) = node_name(s.node) else { continue };
            let nd = node(&mut nodes, &mut by_name, n);
            if !nd.subscribes.iter().any(|x| x.topic == s.topic) {
                let callback = nd.subscription_callback(&s.topic).map(|c| c.name.clone());
                push_small(&mut nd.subscribes, ArchSubscribe { topic: s.topic.clone(), callback });
            }
        }
        // Who publishes during which callback's runs.
        let publishing = match seen {
            None => publishing(a, &cb_name, ignored),
            Some(seen) => publishing_seen(a.model, seen, &cb_name, ignored),
        };
        for (n, topic, cbn) in publishing {
            let nd = by_name.get(n).map(|&i| &mut nodes[i as usize]);
            if let Some(x) = nd.and_then(|nd| nd.publishes.iter_mut().find(|x| &*x.topic == topic)) {
                push_small(&mut x.callbacks, cbn.to_string());
            }
        }
        // Node paths: every input to every output, those through a service call, then the
        // declared ones.
        drop(by_name);
        let links = declared_links(m);
        let calls = match seen {
            _ if m.clients.items.is_empty() => HashMap::default(),
            Some(seen) => service_calls(m, seen),
            None => service_calls(m, &seen_calling(a)),
        };
        for nd in &mut nodes {
            nd.publishes.sort_by(|a, b| a.topic.cmp(&b.topic));
            nd.subscribes.sort_by(|a, b| a.topic.cmp(&b.topic));
            nd.observed_paths();
            if let Some(c) = calls.get(&nd.name) {
                nd.service_paths(c);
            }
            if let Some(l) = links.get(&nd.name) {
                nd.linked_paths(l);
            }
        }
        // (Names are unique: the order is the same as a stable sort's.)
        nodes.sort_unstable_by(|x, y| x.name.cmp(&y.name));
        let mut arch = Architecture { nodes, ..Default::default() };
        arch.groups_and_executors(a, &cb_name);
        arch.connect();
        arch
    }

    /// How `path` crosses each node between its first and its last: the node path it follows
    /// (a pair the architecture has no path for is followed with the latest message, as a
    /// path's records do).
    pub fn crossings(&self, path: &PathSpec) -> Vec<Crossing> {
        let n = path.nodes.len();
        (1..n.saturating_sub(1))
            .filter_map(|k| {
                let (node, subscribe, publish) = (&path.nodes[k], path.topics.get(k - 1)?, path.topics.get(k)?);
                let p = self.node(node).and_then(|i| self.nodes[i].path(subscribe, publish));
                let path = p.cloned().unwrap_or_else(|| NodePath {
                    subscribe: subscribe.clone(),
                    publish: publish.clone(),
                    context: Context::UseLatestMessage,
                    source: "default",
                    link: None,
                    service: None,
                });
                Some(Crossing { node: node.clone(), path })
            })
            .collect()
    }

    /// Communications from the nodes' publishes and subscribes.
    pub fn connect(&mut self) {
        let mut subs: HashMap<&str, Vec<usize>> = HashMap::default();
        for (i, n) in self.nodes.iter().enumerate() {
            for s in &n.subscribes {
                subs.entry(s.topic.as_str()).or_default().push(i);
            }
        }
        let mut comms = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            for p in &n.publishes {
                for &j in subs.get(p.topic.as_str()).into_iter().flatten() {
                    comms.push(Communication { topic: p.topic.clone(), from: i, to: j });
                }
            }
        }
        self.communications = comms;
    }

    fn groups_and_executors(&mut self, a: &View<'_>, cb_name: &HashMap<u32, (String, String)>) {
        let m = &a.model;
        if m.groups.items.is_empty() {
            return;
        }
        // A group member is a handle (timer, rcl subscription, service); its callback's name.
        let mut member: HashMap<(u32, i64, &str, u64), (&str, &str)> = HashMap::default();
        for (id, cb) in m.callbacks.items.iter().enumerate() {
            let Some((node, name)) = cb_name.get(&(id as u32)) else { continue };
            let (what, h) = match cb.owner {
                Some(Owner::Timer(t)) => ("timer", m.timers.get(t).key.2),
                Some(Owner::Subscription(s)) => ("subscription", m.subscriptions.get(s).key.2),
                Some(Owner::Service(s)) => ("service", m.services.get(s).key.2),
                Some(Owner::Client(_)) | None => continue,
            };
            member.insert((cb.key.0, cb.key.1, what, h), (node.as_str(), name.as_str()));
        }
        let mut executors: Vec<(u32, i64, u64)> = Vec::new();
        // caret_analyze numbers a node's groups in the order of their addresses (a pandas
        // groupby on callback_group_addr), not in the order they were recorded.
        let mut groups: Vec<&CallbackGroup> = m.groups.items.iter().collect();
        groups.sort_by_key(|g| g.key.2);
        for g in groups {
            let members: Vec<(&str, &str)> = g
                .members
                .iter()
                .filter_map(|(w, h)| member.get(&(g.key.0, g.key.1, w.as_str(), *h)).copied())
                .collect();
            let Some(&(node_name, _)) = members.first() else { continue };
            let Some(nd) = self.node(node_name).map(|i| &mut self.nodes[i]) else { continue };
            let exec = (g.key.0, g.key.1, g.executor);
            if g.executor != 0 && !executors.contains(&exec) {
                executors.push(exec);
            }
            // caret_analyze counts groups of only service callbacks apart.
            let service_only = members.iter().all(|(_, c)| is_service_callback(c));
            let base = if service_only { "service_only_callback_group" } else { "callback_group" };
            let index =
                nd.groups.iter().filter(|x| x.name.contains("/service_only_callback_group_") == service_only).count();
            let name = format!("{}/{base}_{index}", nd.name);
            let kind = if g.kind.is_empty() { "mutually_exclusive".to_string() } else { g.kind.clone() };
            // caret_analyze lists a group's callbacks timers first, then subscriptions, then
            // services, each in the order it names them: the order of their names.
            let mut callbacks: Vec<String> = members.iter().map(|(_, c)| c.to_string()).collect();
            callbacks.sort();
            push_small(&mut nd.groups, ArchGroup { name, kind, callbacks, executor: exec });
        }
        // caret_analyze numbers executors in the order of their addresses (a pandas groupby on
        // executor_addr) as its IDRemapper leaves them: the first executor registered at an
        // address keeps it, a later one at an address already taken (another process's) takes
        // the least unused of 1, 2, ... -- so it comes first.
        let mut remapped: HashMap<u32, u64> = HashMap::default();
        let mut taken: std::collections::HashSet<u64> = Default::default();
        let mut next = 1u64;
        for (id, x) in m.executors.items.iter().enumerate() {
            let addr = if taken.insert(x.key.2) {
                x.key.2
            } else {
                while taken.contains(&next) {
                    next += 1;
                }
                taken.insert(next);
                next
            };
            remapped.insert(id as u32, addr);
        }
        // An executor of a group is its address, or its entities collector's.
        let executor_id = |e: &(u32, i64, u64)| {
            m.executors.latest(*e).or_else(|| {
                m.executors
                    .items
                    .iter()
                    .position(|x| x.key.0 == e.0 && x.key.1 == e.1 && x.collector == e.2)
                    .map(|i| i as u32)
            })
        };
        executors.sort_by_key(|e| executor_id(e).and_then(|id| remapped.get(&id).copied()).unwrap_or(e.2));
        let digits = num_digit(executors.len());
        for (i, e) in executors.iter().enumerate() {
            let kind = m
                .executors
                .latest(*e)
                .map(|id| m.executors.get(id).kind.clone())
                .or_else(|| {
                    // A group added through the entities collector names the collector.
                    m.executors
                        .items
                        .iter()
                        .find(|x| x.key.0 == e.0 && x.key.1 == e.1 && x.collector == e.2)
                        .map(|x| x.kind.clone())
                })
                .unwrap_or_default();
            let groups = self
                .nodes
                .iter()
                .flat_map(|n| n.groups.iter())
                .filter(|g| g.executor == *e)
                .map(|g| g.name.clone())
                .collect();
            self.executors.push(ArchExecutor { name: indexed_name("executor", i, digits), kind, groups });
        }
    }

    /// The node named `name`.
    pub fn node(&self, name: &str) -> Option<usize> {
        // The analysis's nodes are sorted by name (found in log n: a path of a system of a
        // million nodes is looked up node by node); a file's may not be, and are then scanned.
        match self.nodes.binary_search_by(|n| n.name.as_str().cmp(name)) {
            Ok(i) if i == 0 || self.nodes[i - 1].name != name => Some(i),
            _ => self.nodes.iter().position(|n| n.name == name),
        }
    }

    /// Applies what an architecture file says: its named paths, and the message contexts it
    /// sets (which override what was inferred). Returns what it could not apply.
    pub fn apply(&mut self, file: &Architecture) -> Vec<String> {
        let mut unapplied = Vec::new();
        for fnode in &file.nodes {
            let Some(i) = self.node(&fnode.name) else {
                unapplied.push(format!("node {} is not in the trace", fnode.name));
                continue;
            };
            for fp in &fnode.paths {
                let nd = &mut self.nodes[i];
                match nd.paths.iter_mut().find(|p| p.subscribe == fp.subscribe && p.publish == fp.publish) {
                    Some(p) => {
                        // (A declared link stays with the latest message it refines, a service call
                        // with the chain it is.)
                        if fp.context != Context::UseLatestMessage {
                            p.link = None;
                        } else {
                            p.service = None;
                        }
                        p.context = fp.context;
                        p.source = "architecture file";
                    }
                    None => unapplied
                        .push(format!("{}: no path {} -> {} in the trace", fnode.name, fp.subscribe, fp.publish)),
                }
            }
        }
        // A file's path replaces one of the same name (the file's last, if it repeats a name).
        let mut by_name: HashMap<&str, usize> = HashMap::default();
        for (i, p) in file.named_paths.iter().enumerate() {
            by_name.insert(p.name.as_str(), i);
        }
        self.named_paths.retain(|x| !by_name.contains_key(x.name.as_str()));
        let mut last: Vec<usize> = by_name.into_values().collect();
        last.sort_unstable();
        self.named_paths.extend(last.into_iter().map(|i| file.named_paths[i].clone()));
        unapplied
    }

    /// A node or topic named by a user: as given, or with a leading `/` added; `node:NAME` or
    /// `topic:NAME` says which (ROS names hold no `:`), and must, when a node and a topic share
    /// the name (`/imu` and `/imu`). The error (starting with `what`, the argument's name)
    /// suggests names that contain it.
    pub fn resolve(&self, name: &str, what: &str) -> Result<Endpoint, String> {
        let arch = self;
        let (kind, bare) = match name.split_once(':') {
            Some((k @ ("node" | "topic"), rest)) => (Some(k), rest.trim()),
            _ => (None, name),
        };
        let named =
            |n: &str| -> (Option<usize>, bool) { (arch.node(n), arch.communications.iter().any(|c| c.topic == n)) };
        let slashed = format!("/{bare}");
        let (mut node, mut topic) = named(bare);
        if node.is_none() && !topic && !bare.starts_with('/') {
            (node, topic) = named(&slashed);
        }
        let full = if arch.node(bare).is_some() || arch.communications.iter().any(|c| c.topic == bare) {
            bare
        } else {
            slashed.as_str()
        };
        match (kind, node, topic) {
            (Some("node"), Some(n), _) | (None, Some(n), false) => return Ok(Endpoint::Node(n)),
            (Some("topic"), _, true) | (None, None, true) => return Ok(Endpoint::Topic(full.to_string())),
            (None, Some(_), true) => {
                return Err(format!(
                    "{what} {name:?}: a node and a topic are both named {full}: write node:{full} or topic:{full}"
                ))
            }
            _ => {}
        }
        let key = bare.trim_start_matches('/');
        let mut near: Vec<String> = Vec::new();
        if kind != Some("topic") {
            near.extend(arch.nodes.iter().map(|n| n.name.as_str()).filter(|n| n.contains(key)).map(|n| {
                let topic_too = arch.communications.iter().any(|c| c.topic == n);
                if topic_too {
                    format!("node:{n}")
                } else {
                    n.to_string()
                }
            }));
        }
        if kind != Some("node") {
            near.extend(arch.communications.iter().map(|c| c.topic.as_str()).filter(|t| t.contains(key)).map(|t| {
                if arch.node(t).is_some() {
                    format!("topic:{t}")
                } else {
                    t.to_string()
                }
            }));
        }
        near.sort();
        near.dedup();
        let hint = if near.is_empty() {
            format!("the trace has {} nodes (see `rostrace architecture`)", arch.nodes.len())
        } else {
            let n = near.len();
            let shown: Vec<String> = near.into_iter().take(8).collect();
            format!(
                "did you mean {}{}?",
                shown.join(", "),
                if n > 8 { format!(" (+{} more)", n - 8) } else { String::new() }
            )
        };
        let what_kind = match kind {
            Some("node") => "no such node",
            Some("topic") => "no such topic (with publishers and subscribers)",
            _ => "no such node or topic (with publishers and subscribers)",
        };
        Err(format!("{what} {name:?}: {what_kind} in the trace; {hint}"))
    }

    /// `spec` written as [`Architecture::parse_path`] reads it back: `NODE,TOPIC,NODE,...`, a
    /// topic written `topic:NAME` where a node has its name (`node:NAME` for such a node).
    pub fn path_text(&self, spec: &PathSpec) -> String {
        let topic_named = |n: &str| self.communications.iter().any(|c| c.topic == n);
        let mut items = Vec::new();
        for (i, n) in spec.nodes.iter().enumerate() {
            if i > 0 {
                let t = &spec.topics[i - 1];
                items.push(if self.node(t).is_some() { format!("topic:{t}") } else { t.clone() });
            }
            items.push(if topic_named(n) { format!("node:{n}") } else { n.clone() });
        }
        items.join(",")
    }

    /// The named path `name` of the architecture (one loaded from a file: its `named_paths`).
    /// Errors start with `what`.
    pub fn named_path(&self, name: &str, what: &str) -> Result<PathSpec, String> {
        let Some(p) = self.named_paths.iter().find(|p| p.name == name) else {
            let names: Vec<&str> = self.named_paths.iter().map(|p| p.name.as_str()).collect();
            return Err(format!(
                "{what} {name:?}: no such named path in the architecture file{}",
                if names.is_empty() { " (it has none)".to_string() } else { format!(" (it has {})", names.join(", ")) }
            ));
        };
        let mut spec = PathSpec { nodes: p.chain.iter().map(|c| c.0.clone()).collect(), topics: Vec::new() };
        for w in p.chain.windows(2) {
            let t = w[0].2.clone().or_else(|| w[1].1.clone());
            spec.topics.push(t.ok_or_else(|| format!("{what} {name}: no topic between {} and {}", w[0].0, w[1].0))?);
        }
        Ok(spec)
    }

    /// The path written `NODE,NODE,...` with topics between where two nodes communicate over
    /// several (a topic left out is the only one between its nodes); a name that is a node's and
    /// a topic's is written `node:NAME` or `topic:NAME` ([`Architecture::resolve`]). Errors start
    /// with `what`.
    pub fn parse_path(&self, s: &str, what: &str) -> Result<PathSpec, String> {
        let arch = self;
        let mut nodes: Vec<usize> = Vec::new();
        let mut topics: Vec<Option<String>> = Vec::new();
        for item in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
            match arch.resolve(item, what)? {
                Endpoint::Node(n) => {
                    if !nodes.is_empty() && topics.len() < nodes.len() {
                        topics.push(None);
                    }
                    nodes.push(n);
                }
                Endpoint::Topic(t) => {
                    if nodes.is_empty() || topics.len() == nodes.len() {
                        return Err(format!("{what}: topic {t} must come between two nodes"));
                    }
                    topics.push(Some(t));
                }
            }
        }
        if nodes.len() < 2 || topics.len() != nodes.len() - 1 {
            return Err(format!(
                "{what}: a path needs two nodes or more (NODE,NODE,... with topics between where needed)"
            ));
        }
        let mut spec =
            PathSpec { nodes: nodes.iter().map(|&n| arch.nodes[n].name.clone()).collect(), topics: Vec::new() };
        for (k, t) in topics.into_iter().enumerate() {
            let (u, v) = (nodes[k], nodes[k + 1]);
            let mut between: Vec<&str> =
                arch.communications.iter().filter(|c| c.from == u && c.to == v).map(|c| c.topic.as_str()).collect();
            between.sort();
            between.dedup();
            let (un, vn) = (&arch.nodes[u].name, &arch.nodes[v].name);
            let topic = match t {
                Some(t) if between.contains(&t.as_str()) => t,
                Some(t) => return Err(format!("{what}: {un} does not send {t} to {vn} in the trace")),
                None => match between.as_slice() {
                    [one] => one.to_string(),
                    [] => return Err(format!("{what}: {un} sends nothing to {vn} in the trace")),
                    many => {
                        return Err(format!(
                            "{what}: {un} sends {} topics to {vn} ({}): name the one between them",
                            many.len(),
                            many.join(", ")
                        ))
                    }
                },
            };
            spec.topics.push(topic);
        }
        Ok(spec)
    }

    /// The node named `name`, or else the topic, if any node publishes or subscribes to it.
    pub fn endpoint(&self, name: &str) -> Option<Endpoint> {
        if let Some(i) = self.node(name) {
            return Some(Endpoint::Node(i));
        }
        self.communications.iter().any(|c| c.topic == name).then(|| Endpoint::Topic(name.to_string()))
    }

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

/// Who publishes during which callback's runs: (node, topic, callback) names, each once, in
/// their order. A publication is a pair of a callback object and a topic, most of them repeats:
/// those are set apart by the pair (the topic's name is shared, see [`crate::link::Flow::topic`])
/// before any name is compared.
fn publishing<'a>(
    a: &View<'a>,
    cb_name: &'a HashMap<u32, (String, String)>,
    ignored: impl Fn(&str) -> bool,
) -> Vec<(&'a str, &'a str, &'a str)> {
    let named = published_in_runs(a).filter_map(|(cb, topic)| cb_name.get(&cb).map(|(n, c)| (n, &**topic, c)));
    let mut out: Vec<_> = named.filter(|x| !ignored(x.1)).map(|(n, t, c)| (n.as_str(), t, c.as_str())).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Each (callback, topic) of the publications made during a callback's run in `a`, once: a
/// publication is a pair of a callback object and a topic, most of them repeats, set apart by the
/// pair (the topic's name is shared, see [`crate::link::Flow::topic`]) before any name is hashed.
fn published_in_runs<'a>(a: &View<'a>) -> impl Iterator<Item = (u32, &'a std::sync::Arc<str>)> {
    let (runs, mut once) = (a.runs, crate::collections::HashSet::<(u32, *const u8)>::default());
    a.pubs.iter().filter_map(move |LinkedPublication { publication: p, topic }| {
        let (topic, cb) = (topic.as_ref()?, runs[p.in_run()? as usize].callback?);
        once.insert((cb, topic.as_ptr())).then_some((cb, topic))
    })
}

/// [`publishing`], from what a streamed analysis saw ([`Architecture::seen_publishing`]).
fn publishing_seen<'a>(
    m: &crate::Model,
    seen: &'a Publishing,
    cb_name: &'a HashMap<u32, (String, String)>,
    ignored: impl Fn(&str) -> bool,
) -> Vec<(&'a str, &'a str, &'a str)> {
    let mut ids: HashMap<crate::Key, Vec<u32>> = HashMap::default();
    for (id, cb) in m.callbacks.items.iter().enumerate() {
        ids.entry(cb.key).or_default().push(id as u32);
    }
    let mut out = Vec::new();
    for (key, topic) in seen.topics.iter().filter(|(_, t)| !ignored(t)) {
        for id in ids.get(key).into_iter().flatten() {
            if let Some((n, cbn)) = cb_name.get(id) {
                out.push((n.as_str(), &**topic, cbn.as_str()));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}
