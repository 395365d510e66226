//! What an executor runs: subscriptions, services, client responses and timers, each traced like
//! rclcpp's executor traces them.

use crate::handles::Handles;
use ros2_client::dds::rustdds::mio1::{event::Source, Interest, Registry, Token};
use ros2_client::{Message, MessageInfo, RmwRequestId};
use serde::de::DeserializeOwned;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tracetools::api;

/// Something that becomes ready when DDS data arrives.
pub(crate) trait Waitable: Send {
    /// Registers the DDS reader with the executor's poll.
    fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()>;
    /// Takes the next waiting sample, if any, and keeps it for [`execute`](Waitable::execute).
    fn stage(&mut self) -> bool;
    /// Runs the callback on the staged sample, with its trace events.
    fn execute(&mut self);
    /// The rcl handle `rclcpp_executor_execute` names.
    fn handle(&self) -> usize;
    /// A short description for error messages.
    fn what(&self) -> String;
    /// Read errors seen (samples that could not be taken or decoded).
    fn errors(&self) -> u64;
}

/// Keeps the next waiting item of `receive` in `staged` (unless one is kept already), counting
/// errors; whether an item is kept.
fn stage<T, E>(staged: &mut Option<T>, errors: &mut u64, receive: impl FnOnce() -> Result<Option<T>, E>) -> bool {
    if staged.is_none() {
        match receive() {
            Ok(item) => *staged = item,
            Err(_) => *errors += 1,
        }
    }
    staged.is_some()
}

/// A subscription with its callback.
pub(crate) struct SubscriptionEntity<M, F> {
    pub(crate) sub: ros2_client::Subscription<M>,
    pub(crate) handles: Handles,
    pub(crate) callback: F,
    pub(crate) topic: String,
    pub(crate) staged: Option<(M, MessageInfo)>,
    pub(crate) errors: u64,
}

impl<M, F> Waitable for SubscriptionEntity<M, F>
where
    M: DeserializeOwned + Send + 'static,
    F: FnMut(M, &MessageInfo) + Send,
    ros2_client::Subscription<M>: Send,
{
    fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        self.sub.register(registry, token, Interest::READABLE)
    }

    fn stage(&mut self) -> bool {
        stage(&mut self.staged, &mut self.errors, || self.sub.take())
    }

    fn execute(&mut self) {
        let Some((message, info)) = self.staged.take() else { return };
        let h = &self.handles;
        let address = &message as *const M as usize;
        api::rmw_take(h.rmw(), address, crate::time::ros_nanos(info.source_timestamp()), true);
        api::rcl_take(address);
        api::rclcpp_take(address);
        api::callback_start(h.callback(), false);
        (self.callback)(message, &info);
        api::callback_end(h.callback());
    }

    fn handle(&self) -> usize {
        self.handles.rcl()
    }

    fn what(&self) -> String {
        format!("subscription {}", self.topic)
    }

    fn errors(&self) -> u64 {
        self.errors
    }
}

/// A service server with its callback.
pub(crate) struct ServiceEntity<Req: Message, Resp: Message, F> {
    pub(crate) server: ros2_client::dds::Server<Req, Resp>,
    pub(crate) handles: Handles,
    pub(crate) callback: F,
    pub(crate) name: String,
    pub(crate) staged: Option<(RmwRequestId, Req)>,
    pub(crate) errors: u64,
}

impl<Req, Resp, F> Waitable for ServiceEntity<Req, Resp, F>
where
    Req: Message + Clone + Send + 'static,
    Resp: Message + Send + 'static,
    F: FnMut(Req) -> Resp + Send,
    ros2_client::dds::Server<Req, Resp>: Send,
{
    fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        self.server.register(registry, token, Interest::READABLE)
    }

    fn stage(&mut self) -> bool {
        stage(&mut self.staged, &mut self.errors, || self.server.receive_request())
    }

    fn execute(&mut self) {
        let Some((id, request)) = self.staged.take() else { return };
        let h = &self.handles;
        let gid = id.writer_gid;
        api::rmw_take_request(h.rmw(), &request as *const Req as usize, gid.as_bytes(), id.sequence_number, true);
        api::callback_start(h.callback(), false);
        let response = (self.callback)(request);
        api::callback_end(h.callback());
        // The middleware stamps the response itself; its source timestamp is not known here (0).
        api::rmw_send_response(h.rmw(), &response as *const Resp as usize, gid.as_bytes(), id.sequence_number, 0);
        if self.server.send_response(id, response).is_err() {
            self.errors += 1;
        }
    }

    fn handle(&self) -> usize {
        self.handles.rcl()
    }

    fn what(&self) -> String {
        format!("service {}", self.name)
    }

    fn errors(&self) -> u64 {
        self.errors
    }
}

/// The part of a client both its user handle (sending) and the executor (responses) use.
pub(crate) struct ClientShared<Req: Message, Resp: Message> {
    pub(crate) client: Mutex<ros2_client::dds::Client<Req, Resp>>,
    pub(crate) handles: Handles,
    pub(crate) name: String,
    /// Whether `rmw_client_init` was emitted: the request writer's GID is known from the first request.
    pub(crate) announced: std::sync::atomic::AtomicBool,
    /// The sequence number of the last request written (the request writer's DDS sequence
    /// number, which counts its writes from 1); changed with `client` locked.
    pub(crate) last_seq: std::sync::atomic::AtomicI64,
}

/// A client's response side with its response handler.
pub(crate) struct ClientEntity<Req: Message, Resp: Message, F> {
    pub(crate) shared: Arc<ClientShared<Req, Resp>>,
    pub(crate) on_response: F,
    pub(crate) staged: Option<(RmwRequestId, Resp)>,
    pub(crate) errors: u64,
}

impl<Req, Resp, F> Waitable for ClientEntity<Req, Resp, F>
where
    Req: Message + Clone + Send + 'static,
    Resp: Message + Send + 'static,
    F: FnMut(i64, Resp) + Send,
    ros2_client::dds::Client<Req, Resp>: Send,
{
    fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        let mut c = self.shared.client.lock().unwrap_or_else(|p| p.into_inner());
        c.register(registry, token, Interest::READABLE)
    }

    fn stage(&mut self) -> bool {
        let client = &self.shared.client;
        stage(&mut self.staged, &mut self.errors, || {
            client.lock().unwrap_or_else(|p| p.into_inner()).receive_response()
        })
    }

    fn execute(&mut self) {
        let Some((id, response)) = self.staged.take() else { return };
        let h = &self.shared.handles;
        // The response's source timestamp is not passed up by the middleware (0).
        api::rmw_take_response(h.rmw(), &response as *const Resp as usize, id.sequence_number, 0, true);
        (self.on_response)(id.sequence_number, response);
    }

    fn handle(&self) -> usize {
        self.shared.handles.rcl()
    }

    fn what(&self) -> String {
        format!("client {}", self.shared.name)
    }

    fn errors(&self) -> u64 {
        self.errors
    }
}

/// A timer with its callback, due every `period` from its creation (missed periods are skipped, as rcl does).
pub(crate) struct Timer {
    pub(crate) period: Duration,
    pub(crate) next: Instant,
    pub(crate) handles: Handles,
    pub(crate) callback: Box<dyn FnMut() + Send>,
}

impl Timer {
    /// Runs the callback with its trace events and schedules the next call.
    pub(crate) fn execute(&mut self, now: Instant) {
        let h = &self.handles;
        api::callback_start(h.callback(), false);
        (self.callback)();
        api::callback_end(h.callback());
        self.next += self.period;
        if self.next <= now {
            let behind = now.duration_since(self.next).as_nanos();
            let skip = behind / self.period.as_nanos().max(1) + 1;
            self.next += self.period * skip as u32;
        }
    }

    /// The rcl handle `rclcpp_executor_execute` names.
    pub(crate) fn handle(&self) -> usize {
        self.handles.rcl()
    }
}
