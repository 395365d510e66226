//! Initialization events to the [`Model`]: processes' versions, nodes, publishers,
//! subscriptions, services, clients, timers, callbacks and their owners, lifecycle state
//! machines, intra-process buffers, DDS writers, executors and callback groups. Read whatever
//! their time (they declare the objects that the window's runtime events use).

use crate::events::{ClassInfo, Kind, F};
use crate::handler::At;
use crate::model::*;
use crate::tables::Collected;
use rostrace_ctf::Event;

/// The model builder.
#[derive(Debug, Default)]
pub(crate) struct Objects;

impl Objects {
    /// Whether it handles events of `kind`.
    pub(crate) fn wants(kind: Kind) -> bool {
        kind.is_init() || kind == Kind::LifecycleTransition
    }

    pub(crate) fn event(&mut self, c: &mut Collected, info: &ClassInfo, ev: &Event, at: &At) {
        let (t, vpid, ts) = (at.trace, at.vpid, at.ts);
        let key = |a: u64| (t, vpid, a);
        // CARET records when an initialization really happened; corrected at the end.
        let init_ts = info.i(ev, F::InitTimestamp).map(|it| {
            match c.model.processes.get(&(t, vpid)).and_then(|p| p.caret_offset) {
                Some(off) => it + off,
                None => ts,
            }
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
            Kind::RmwImplementation => {
                if let Some(p) = m.processes.get_mut(&(t, vpid)) {
                    p.rmw_implementation = Some(info.s(ev, F::RmwImpl));
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
            Kind::RmwPublisherInit
            | Kind::RmwClientInit
            | Kind::RmwSubscriptionInit
            | Kind::PublisherInit
            | Kind::SubscriptionInit
            | Kind::RclcppSubscriptionInit
            | Kind::SubscriptionCallbackAdded
            | Kind::ServiceInit
            | Kind::ServiceCallbackAdded
            | Kind::ClientInit
            | Kind::TimerInit
            | Kind::TimerLinkNode
            | Kind::TimerCallbackAdded
            | Kind::CallbackRegister => endpoints(m, info, ev, &key, created),
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
                m.writer_topics
                    .insert(key(info.u(ev, F::Writer)), topic.strip_prefix("rt").unwrap_or(&topic).to_string());
            }
            Kind::MessageLinkPeriodicAsync | Kind::MessageLinkPartialSync => m.add_message_link(MessageLink {
                trace: t,
                vpid,
                created_ns: created,
                kind: match info.kind {
                    Kind::MessageLinkPartialSync => LinkKind::PartialSync,
                    _ => LinkKind::PeriodicAsync,
                },
                subs: info.u64s(ev, F::Subs),
                pubs: info.u64s(ev, F::Pubs),
                sub_ids: Vec::new(),
                pub_ids: Vec::new(),
            }),
            Kind::ConstructExecutor | Kind::CollectorToExecutor | Kind::AddCallbackGroup | Kind::CallbackGroupAdd => {
                executors(m, info, ev, &key, created)
            }
            _ => {}
        }
    }
}

/// Publishers, subscriptions, services, clients, timers and callbacks: created, linked to
/// their nodes and to each other.
fn endpoints(m: &mut Model, info: &ClassInfo, ev: &Event, key: &dyn Fn(u64) -> Key, created: i64) {
    match info.kind {
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
                // Taken, not copied: the endpoint holds it (a system of very many endpoints
                // would hold every GID twice).
                gid: m.gids.remove(&key(rmw)).unwrap_or_default(),
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
        _ => {}
    }
}

/// CARET's executors and callback groups, and the callbacks' membership of the groups.
fn executors(m: &mut Model, info: &ClassInfo, ev: &Event, key: &dyn Fn(u64) -> Key, created: i64) {
    match info.kind {
        Kind::ConstructExecutor => {
            let k = key(info.u(ev, F::ExecutorAddr));
            let collector = match info.u(ev, F::EntitiesCollectorAddr) {
                0 => m.collector_of.get(&k).copied().unwrap_or(0),
                c => c,
            };
            let e = Executor { key: k, kind: info.s(ev, F::ExecutorTypeName), collector };
            m.executors.insert(e.key, created, e, |a, b| a.kind == b.kind && a.collector == b.collector);
        }
        Kind::CollectorToExecutor => {
            let ex = info.u(ev, F::ExecutorAddr);
            let coll = info.u(ev, F::EntitiesCollectorAddr);
            match m.executors.latest(key(ex)) {
                Some(id) => m.executors.get_mut(id).collector = coll,
                // Jazzy's rclcpp links the collector in the base constructor, before the
                // executor's own construction is recorded.
                None => {
                    m.collector_of.insert(key(ex), coll);
                }
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
        _ => {}
    }
}

fn same_node(a: &Node, b: &Node) -> bool {
    a.name == b.name && a.namespace == b.namespace
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
