//! Service calls (Kilted's rmw service events): requests as clients sent them and servers took
//! them, responses as servers sent them and clients took them, and the callback run that served
//! each request (the next run on the server's thread): a handler of its own.

use crate::events::{ClassInfo, Kind, F};
use crate::handler::{At, Context, Handler, TraceInfo};
use crate::hash::HashMap;
use crate::model::Key;
use ctf::{Event, EventClass};

/// A service request as the client sent it (`rmw_send_request`), and its response when taken.
#[derive(Debug, Clone, Default)]
pub struct ClientCall {
    /// rmw client handle.
    pub client: Key,
    /// Thread.
    pub vtid: i64,
    /// Sequence number.
    pub seq: i64,
    /// Time sent.
    pub ts_send: i64,
    /// Time the response was taken (`rmw_take_response`), and its source timestamp.
    pub response: Option<(i64, i64)>,
}

/// A service request as the server handled it.
#[derive(Debug, Clone, Default)]
pub struct ServerCall {
    /// rmw service handle.
    pub service: Key,
    /// Thread.
    pub vtid: i64,
    /// Client GID.
    pub client_gid: Vec<u8>,
    /// Sequence number.
    pub seq: i64,
    /// Time taken (`rmw_take_request`).
    pub ts_take: i64,
    /// Time the response was sent and its source timestamp.
    pub response: Option<(i64, i64)>,
    /// The callback run that served it.
    pub run: Option<u32>,
}

/// The handler: every call, in the order seen.
#[derive(Debug, Default)]
pub struct ServiceHandler {
    infos: Vec<ClassInfo>,
    /// Service requests sent by clients.
    pub client_calls: Vec<ClientCall>,
    /// Service requests taken by servers.
    pub server_calls: Vec<ServerCall>,
    /// Per thread, the request taken and not yet served by a callback run.
    pending: HashMap<(u32, i64, i64), u32>,
}

impl Handler for ServiceHandler {
    fn subscribe(&mut self, _trace: &TraceInfo<'_>, class: &EventClass) -> Option<u32> {
        let info = ClassInfo::of(class)?;
        match info.kind {
            Kind::SendRequest | Kind::TakeRequest | Kind::SendResponse | Kind::TakeResponse | Kind::CallbackStart => {
                self.infos.push(info);
                Some(self.infos.len() as u32 - 1)
            }
            _ => None,
        }
    }

    fn event(&mut self, token: u32, ev: &Event<'_>, at: &At, cx: &Context<'_>) {
        let info = &self.infos[token as usize];
        let key = |a: u64| (at.trace, at.vpid, a);
        match info.kind {
            Kind::CallbackStart if !self.pending.is_empty() => {
                if let Some(rq) = self.pending.remove(&(at.trace, at.vpid, at.vtid)) {
                    self.server_calls[rq as usize].run = cx.running(at);
                }
            }
            Kind::SendRequest => {
                let call = ClientCall {
                    client: key(info.u(ev, F::RmwClientHandle)),
                    vtid: at.vtid,
                    seq: info.i(ev, F::SequenceNumber).unwrap_or(0),
                    ts_send: at.ts,
                    response: None,
                };
                self.client_calls.push(call);
            }
            Kind::TakeRequest if info.u(ev, F::Taken) != 0 => {
                let call = ServerCall {
                    service: key(info.u(ev, F::RmwServiceHandle)),
                    vtid: at.vtid,
                    client_gid: info.bytes(ev, F::ClientGid),
                    seq: info.i(ev, F::SequenceNumber).unwrap_or(0),
                    ts_take: at.ts,
                    response: None,
                    run: None,
                };
                self.pending.insert((at.trace, at.vpid, at.vtid), self.server_calls.len() as u32);
                self.server_calls.push(call);
            }
            Kind::SendResponse => {
                let service = key(info.u(ev, F::RmwServiceHandle));
                let seq = info.i(ev, F::SequenceNumber).unwrap_or(0);
                let gid = info.bytes(ev, F::ClientGid);
                let source = info.i(ev, F::Timestamp).unwrap_or(0);
                if let Some(call) = self
                    .server_calls
                    .iter_mut()
                    .rev()
                    .take(1024)
                    .find(|x| x.service == service && x.seq == seq && x.client_gid == gid && x.response.is_none())
                {
                    call.response = Some((at.ts, source));
                }
            }
            Kind::TakeResponse if info.u(ev, F::Taken) != 0 => {
                let client = key(info.u(ev, F::RmwClientHandle));
                let seq = info.i(ev, F::SequenceNumber).unwrap_or(0);
                let source = info.i(ev, F::SourceTimestamp).unwrap_or(0);
                if let Some(call) = self
                    .client_calls
                    .iter_mut()
                    .rev()
                    .take(1024)
                    .find(|x| x.client == client && x.seq == seq && x.response.is_none())
                {
                    call.response = Some((at.ts, source));
                }
            }
            _ => {}
        }
    }
}
