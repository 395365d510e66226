//! Traced nodes: creating publishers, subscriptions, timers, services and clients emits the
//! initialization events rclcpp emits for them.

use crate::caret;
use crate::context::Context;
use crate::entity::{ClientEntity, ClientShared, ServiceEntity, SubscriptionEntity, Timer, Waitable};
use crate::handles::Handles;
use crate::names;
use crate::publisher::Publisher;
use crate::{Error, Result};
use ros2_client::dds::rustdds::{QosPolicies, RTPSEntity};
use ros2_client::dds::ServiceMapping;
use ros2_client::qos::History;
use ros2_client::{Message, MessageInfo, NodeName, NodeOptions, QosProfile};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tracetools::api;

/// A ROS 2 node. Its subscriptions, timers and services run when it is added to an [`crate::Executor`].
pub struct Node {
    context: Context,
    ros: ros2_client::dds::Node,
    name: NodeName,
    handles: Handles,
    /// The node's callback group (its address: `group.object()`), in CARET's events.
    group: Handles,
    pub(crate) waitables: Vec<Box<dyn Waitable>>,
    pub(crate) timers: Vec<Timer>,
}

/// The callback's type name and where it was registered, the Rust counterpart of the C++ symbol
/// rclcpp registers (closures of one function share a type name; the location tells them apart).
/// Nanoseconds from `clock` to the next tick of a timer of `period` that ticks at `phase` past
/// its multiples (`0 <= phase < period`); a tick due right now is the next period's.
fn aligned_wait(clock: i64, period: i64, phase: i64) -> i64 {
    match (phase - clock).rem_euclid(period) {
        0 => period,
        w => w,
    }
}

fn symbol<F>(at: &std::panic::Location<'_>) -> String {
    format!("{} ({}:{})", std::any::type_name::<F>(), at.file(), at.line())
}

fn depth(qos: &QosProfile) -> usize {
    match qos.history {
        History::KeepLast { depth } => depth,
        History::KeepAll => 0,
    }
}

impl Context {
    /// Creates node `name` in `namespace` (`/` for the root). Emits `rcl_node_init`.
    pub fn create_node(&self, namespace: &str, name: &str) -> Result<Node> {
        let bad = |why: String| Error::Name { name: format!("{namespace}/{name}"), why };
        let node_name = NodeName::new(namespace, name).map_err(|e| bad(e.to_string()))?;
        let options = NodeOptions::new().enable_rosout(false);
        let ros = self.shared.ros.new_node(node_name.clone(), options).map_err(|e| Error::Create {
            what: format!("node {}", node_name.fully_qualified_name()),
            why: e.to_string(),
        })?;
        Ok(Node::new(self.clone(), ros, node_name))
    }
}

impl Node {
    pub(crate) fn new(context: Context, ros: ros2_client::dds::Node, name: NodeName) -> Node {
        let handles = Handles::new();
        api::rcl_node_init(handles.rcl(), handles.rmw(), name.base_name().as_bytes(), name.namespace().as_bytes());
        Node { context, ros, name, handles, group: Handles::new(), waitables: Vec::new(), timers: Vec::new() }
    }

    /// The address of the node's callback group in CARET's events (each node has one, mutually
    /// exclusive: an executor runs its callbacks one at a time).
    pub(crate) fn callback_group(&self) -> usize {
        self.group.object()
    }

    /// The node's name, without namespace.
    pub fn name(&self) -> &str {
        self.name.base_name()
    }

    /// The node's namespace.
    pub fn namespace(&self) -> &str {
        self.name.namespace()
    }

    /// The fully qualified name, e.g. `/demo/filter`.
    pub fn fully_qualified_name(&self) -> String {
        self.name.fully_qualified_name()
    }

    /// The address that stands for this node in the trace (`rcl_node_init`'s node handle).
    pub fn handle(&self) -> usize {
        self.handles.rcl()
    }

    /// The underlying ros2-client node.
    pub fn ros2_client_node(&self) -> &ros2_client::dds::Node {
        &self.ros
    }

    fn create_err(what: String) -> impl FnOnce(ros2_client::CreateError) -> Error {
        move |e| Error::Create { what, why: e.to_string() }
    }

    /// A publisher of `type_name` (`package/Type`) messages on `topic`. Emits `rmw_publisher_init`
    /// and `rcl_publisher_init`.
    pub fn create_publisher<M: Serialize>(
        &mut self,
        topic: &str,
        type_name: &str,
        qos: &QosProfile,
    ) -> Result<Publisher<M>> {
        let (name, full) = names::resolve(&self.name, topic)?;
        let ty = names::message_type(type_name)?;
        let what = format!("publisher {full}");
        let dds_topic = self.ros.create_topic(&name, ty, qos).map_err(Self::create_err(what.clone()))?;
        let writer = self
            .context
            .shared
            .dds_publisher
            .create_datawriter_no_key_cdr::<M>(&dds_topic, Some(QosPolicies::from(qos.clone())))
            .map_err(|e| Error::Create { what, why: e.to_string() })?;
        let gid = ros2_client::Gid::from(writer.guid());
        let handles = Handles::new();
        api::rmw_publisher_init(handles.rmw(), gid.as_bytes());
        api::rcl_publisher_init(handles.rcl(), self.handle(), handles.rmw(), full.as_bytes(), depth(qos));
        Ok(Publisher::new(writer, handles, full))
    }

    /// A subscription to `type_name` messages on `topic`, calling `callback` with each message and
    /// its [`MessageInfo`]. Emits `rmw_subscription_init`, `rcl_subscription_init`,
    /// `rclcpp_subscription_init`, `rclcpp_subscription_callback_added` and `rclcpp_callback_register`.
    /// Returns the subscription's handle, the one its events carry (what a message link names:
    /// [`Node::message_link_periodic_async`]).
    #[track_caller]
    pub fn create_subscription<M, F>(
        &mut self,
        topic: &str,
        type_name: &str,
        qos: &QosProfile,
        callback: F,
    ) -> Result<usize>
    where
        M: DeserializeOwned + Send + 'static,
        F: FnMut(M, &MessageInfo) + Send + 'static,
        ros2_client::dds::Subscription<M>: Send,
    {
        let at = std::panic::Location::caller();
        let (name, full) = names::resolve(&self.name, topic)?;
        let ty = names::message_type(type_name)?;
        let what = format!("subscription {full}");
        let dds_topic = self.ros.create_topic(&name, ty, qos).map_err(Self::create_err(what.clone()))?;
        let sub = self.ros.create_subscription::<M>(&dds_topic, Some(qos.clone())).map_err(Self::create_err(what))?;
        let handles = Handles::new();
        api::rmw_subscription_init(handles.rmw(), sub.gid().as_bytes());
        api::rcl_subscription_init(handles.rcl(), self.handle(), handles.rmw(), full.as_bytes(), depth(qos));
        api::rclcpp_subscription_init(handles.rcl(), handles.object());
        api::rclcpp_subscription_callback_added(handles.object(), handles.callback());
        api::rclcpp_callback_register(handles.callback(), symbol::<F>(at).as_bytes());
        api::ros2_caret_callback_group_add_subscription(self.callback_group(), handles.rcl(), caret::monotonic_ns());
        let handle = handles.rcl();
        self.waitables.push(Box::new(SubscriptionEntity {
            sub,
            handles,
            callback,
            topic: full,
            staged: None,
            errors: 0,
        }));
        Ok(handle)
    }

    /// Declares that the publishers `pubs` publish from the latest message of each of the
    /// subscriptions `subs` (a timer fusing the data it holds): emits
    /// `message_link_periodic_async`. Analyses then follow a message from each of `subs` to every
    /// publication of `pubs` made while it is the latest (docs/paths.md). Handles are those
    /// [`Node::create_subscription`] and [`Publisher::handle`] give. Recorded where the ROS 2
    /// distribution's tracepoints have it: Rolling (Lyrical), the default.
    pub fn message_link_periodic_async(&self, subs: &[usize], pubs: &[usize]) {
        api::message_link_periodic_async(subs, pubs);
    }

    /// Declares that the publishers `pubs` publish once they have a new message of each of the
    /// subscriptions `subs`, each message used once (a synchronizer): emits
    /// `message_link_partial_sync`. As [`Node::message_link_periodic_async`], but a message
    /// feeds at most one publication.
    pub fn message_link_partial_sync(&self, subs: &[usize], pubs: &[usize]) {
        api::message_link_partial_sync(subs, pubs);
    }

    /// A timer calling `callback` every `period`, starting one period from now. Emits
    /// `rcl_timer_init`, `rclcpp_timer_callback_added`, `rclcpp_timer_link_node` and `rclcpp_callback_register`.
    #[track_caller]
    pub fn create_timer<F>(&mut self, period: Duration, callback: F) -> Result<()>
    where
        F: FnMut() + Send + 'static,
    {
        self.add_timer(period, Instant::now() + period, std::panic::Location::caller(), callback)
    }

    /// A timer like [`Node::create_timer`] whose ticks fall at `offset` past the multiples of
    /// `period` on the system's monotonic clock (the clock of the trace), starting with the next
    /// one. Timers so created keep the same phase to one another in every run and across
    /// processes: two runs of a system then see the same timer phases, so their latencies can be
    /// compared (a message that waits for a timer of another node waits as long in both).
    /// `offset` is taken modulo `period`.
    #[track_caller]
    pub fn create_timer_aligned<F>(&mut self, period: Duration, offset: Duration, callback: F) -> Result<()>
    where
        F: FnMut() + Send + 'static,
    {
        let at = std::panic::Location::caller();
        let p = period.as_nanos().min(i64::MAX as u128) as i64;
        if p == 0 {
            return self.add_timer(period, Instant::now(), at, callback);
        }
        let (now, clock) = (Instant::now(), caret::monotonic_ns());
        let wait = aligned_wait(clock, p, (offset.as_nanos() % p as u128) as i64);
        self.add_timer(period, now + Duration::from_nanos(wait as u64), at, callback)
    }

    fn add_timer<F>(
        &mut self,
        period: Duration,
        first: Instant,
        at: &'static std::panic::Location<'static>,
        callback: F,
    ) -> Result<()>
    where
        F: FnMut() + Send + 'static,
    {
        if period.is_zero() {
            return Err(Error::Create { what: "timer".into(), why: "the period must be above zero".into() });
        }
        let handles = Handles::new();
        api::rcl_timer_init(handles.rcl(), period.as_nanos().min(i64::MAX as u128) as i64);
        api::rclcpp_timer_callback_added(handles.rcl(), handles.callback());
        api::rclcpp_timer_link_node(handles.rcl(), self.handle());
        api::rclcpp_callback_register(handles.callback(), symbol::<F>(at).as_bytes());
        api::ros2_caret_callback_group_add_timer(self.callback_group(), handles.rcl(), caret::monotonic_ns());
        self.timers.push(Timer { period, next: first, handles, callback: Box::new(callback) });
        Ok(())
    }

    /// A service `name` of `type_name` (`package/Type`), answering each request with `callback`.
    /// Emits `rcl_service_init`, `rclcpp_service_callback_added` and `rclcpp_callback_register`.
    #[track_caller]
    pub fn create_service<Req, Resp, F>(&mut self, name: &str, type_name: &str, callback: F) -> Result<()>
    where
        Req: Message + Clone + Send + 'static,
        Resp: Message + Send + 'static,
        F: FnMut(Req) -> Resp + Send + 'static,
        ros2_client::dds::Server<Req, Resp>: Send,
    {
        let at = std::panic::Location::caller();
        let (parsed, full) = names::resolve(&self.name, name)?;
        let ty = names::service_type(type_name)?;
        let qos = crate::default_qos();
        let server = self
            .ros
            .create_server::<Req, Resp>(ServiceMapping::Enhanced, &parsed, &ty, qos.clone(), qos)
            .map_err(Self::create_err(format!("service {full}")))?;
        let handles = Handles::new();
        api::rcl_service_init(handles.rcl(), self.handle(), handles.rmw(), full.as_bytes());
        api::rclcpp_service_callback_added(handles.rcl(), handles.callback());
        api::rclcpp_callback_register(handles.callback(), symbol::<F>(at).as_bytes());
        api::ros2_caret_callback_group_add_service(self.callback_group(), handles.rcl(), caret::monotonic_ns());
        self.waitables.push(Box::new(ServiceEntity { server, handles, callback, name: full, staged: None, errors: 0 }));
        Ok(())
    }

    /// A client of service `name`; `on_response` gets the sequence number of the request and the
    /// response. Emits `rcl_client_init` (and `rmw_client_init` with the client's GID once its first
    /// request is written, when the middleware makes the GID known).
    pub fn create_client<Req, Resp, F>(
        &mut self,
        name: &str,
        type_name: &str,
        on_response: F,
    ) -> Result<Client<Req, Resp>>
    where
        Req: Message + Clone + Send + 'static,
        Resp: Message + Send + 'static,
        F: FnMut(i64, Resp) + Send + 'static,
        ros2_client::dds::Client<Req, Resp>: Send,
    {
        let (parsed, full) = names::resolve(&self.name, name)?;
        let ty = names::service_type(type_name)?;
        let qos = crate::default_qos();
        let client = self
            .ros
            .create_client::<Req, Resp>(ServiceMapping::Enhanced, &parsed, &ty, qos.clone(), qos)
            .map_err(Self::create_err(format!("client {full}")))?;
        let handles = Handles::new();
        api::rcl_client_init(handles.rcl(), self.handle(), handles.rmw(), full.as_bytes());
        api::ros2_caret_callback_group_add_client(self.callback_group(), handles.rcl(), caret::monotonic_ns());
        let shared = Arc::new(ClientShared {
            client: Mutex::new(client),
            handles,
            name: full,
            announced: AtomicBool::new(false),
            last_seq: std::sync::atomic::AtomicI64::new(0),
        });
        self.waitables.push(Box::new(ClientEntity { shared: shared.clone(), on_response, staged: None, errors: 0 }));
        Ok(Client { shared })
    }
}

/// The sending side of a service client. Cheap to clone.
pub struct Client<Req: Message, Resp: Message> {
    shared: Arc<ClientShared<Req, Resp>>,
}

impl<Req: Message, Resp: Message> Clone for Client<Req, Resp> {
    fn clone(&self) -> Self {
        Client { shared: self.shared.clone() }
    }
}

impl<Req, Resp> Client<Req, Resp>
where
    Req: Message + Clone + 'static,
    Resp: Message + 'static,
{
    /// Sends `request`; returns its sequence number. Emits `rmw_send_request` before the request
    /// is written, so that a server can never take it before it was sent: its sequence number is
    /// the writer's next one (the writer is this client's alone, and written to with the lock
    /// held). The writer's GID, which pairs the request with the server's take, is known once
    /// the first request is written: `rmw_client_init` follows it (the analysis reads a handle's
    /// GID wherever it is in the trace).
    pub fn send_request(&self, request: Req) -> std::result::Result<i64, crate::publisher::PublishError> {
        let h = &self.shared.handles;
        let address = &request as *const Req as usize;
        let c = self.shared.client.lock().unwrap_or_else(|p| p.into_inner());
        let next = self.shared.last_seq.load(Ordering::Relaxed) + 1;
        api::rmw_send_request(h.rmw(), address, next);
        let id = c
            .send_request(request)
            .map_err(|e| crate::publisher::PublishError { topic: self.shared.name.clone(), why: e.to_string() })?;
        self.shared.last_seq.store(id.sequence_number, Ordering::Relaxed);
        drop(c);
        if id.sequence_number != next {
            // The writer numbered it otherwise (a write that failed half-way took a number): the
            // request as numbered, late rather than unpaired.
            api::rmw_send_request(h.rmw(), address, id.sequence_number);
        }
        if !self.shared.announced.swap(true, Ordering::Relaxed) {
            api::rmw_client_init(h.rmw(), id.writer_gid.as_bytes());
        }
        Ok(id.sequence_number)
    }

    /// The fully qualified service name.
    pub fn service_name(&self) -> &str {
        &self.shared.name
    }
}

#[cfg(test)]
mod tests {
    use super::aligned_wait;

    #[test]
    fn aligned_ticks_fall_at_the_phase_past_the_period() {
        const MS: i64 = 1_000_000;
        // Period 50 ms, phase 7 ms: ticks at 7, 57, 107 ... ms.
        assert_eq!(aligned_wait(0, 50 * MS, 7 * MS), 7 * MS);
        assert_eq!(aligned_wait(10 * MS, 50 * MS, 7 * MS), 47 * MS);
        assert_eq!(aligned_wait(1_000 * MS + 6 * MS, 50 * MS, 7 * MS), MS);
        // A tick due now is the next period's; phase 0 falls on the multiples themselves.
        assert_eq!(aligned_wait(57 * MS, 50 * MS, 7 * MS), 50 * MS);
        assert_eq!(aligned_wait(123 * MS, 10 * MS, 0), 7 * MS);
        for clock in [1, 999_999_999, 12_345_678_901_234] {
            let w = aligned_wait(clock, 20 * MS, 5 * MS);
            assert!(w > 0 && w <= 20 * MS && (clock + w - 5 * MS) % (20 * MS) == 0, "{clock}: {w}");
        }
    }
}
