//! Service calls (Kilted's rmw service events): requests as clients sent them and servers took
//! them, responses as servers sent them and clients took them, and the callback run that served
//! each request (the next run on the server's thread): a handler of its own.

use crate::collections::HashMap;
use crate::events::{ClassInfo, Kind, F};
use crate::handler::{merge_in_order, At, Context, Handler, Part, TraceInfo};
use crate::model::Key;
use rostrace_ctf::{Event, EventClass};

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
    /// The thread that took the response.
    pub response_vtid: i64,
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
#[derive(Debug, Clone, Default)]
pub struct ServiceHandler {
    infos: Vec<ClassInfo>,
    /// Service requests sent by clients.
    pub client_calls: Vec<ClientCall>,
    /// Service requests taken by servers.
    pub server_calls: Vec<ServerCall>,
    /// The orders of the calls' events (see [`Context::order`]).
    client_orders: Vec<u128>,
    server_orders: Vec<u128>,
    /// Per thread, the request taken and not yet served by a callback run.
    pending: HashMap<(u32, i64, i64), u32>,
    /// Requests without their response yet, by (client, sequence number) and by (service,
    /// sequence number, client GID), latest last.
    unanswered_client: HashMap<(Key, i64), Vec<u32>>,
    unanswered_server: HashMap<(Key, i64, Vec<u8>), Vec<u32>>,
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
                    response_vtid: 0,
                };
                let id = self.client_calls.len() as u32;
                self.unanswered_client.entry((call.client, call.seq)).or_default().push(id);
                self.client_calls.push(call);
                self.client_orders.push(cx.order());
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
                let id = self.server_calls.len() as u32;
                self.pending.insert((at.trace, at.vpid, at.vtid), id);
                self.unanswered_server.entry((call.service, call.seq, call.client_gid.clone())).or_default().push(id);
                self.server_calls.push(call);
                self.server_orders.push(cx.order());
            }
            Kind::SendResponse => {
                let service = key(info.u(ev, F::RmwServiceHandle));
                let seq = info.i(ev, F::SequenceNumber).unwrap_or(0);
                let gid = info.bytes(ev, F::ClientGid);
                let source = info.i(ev, F::Timestamp).unwrap_or(0);
                if let Some(id) = self.unanswered_server.get_mut(&(service, seq, gid)).and_then(|v| v.pop()) {
                    self.server_calls[id as usize].response = Some((at.ts, source));
                }
            }
            Kind::TakeResponse if info.u(ev, F::Taken) != 0 => {
                let client = key(info.u(ev, F::RmwClientHandle));
                let seq = info.i(ev, F::SequenceNumber).unwrap_or(0);
                let source = info.i(ev, F::SourceTimestamp).unwrap_or(0);
                if let Some(id) = self.unanswered_client.get_mut(&(client, seq)).and_then(|v| v.pop()) {
                    self.client_calls[id as usize].response = Some((at.ts, source));
                    self.client_calls[id as usize].response_vtid = at.vtid;
                }
            }
            _ => {}
        }
    }

    fn split(&self) -> Option<Box<dyn Handler + Send>> {
        // Its tables, without results.
        Some(Box::new(ServiceHandler { infos: self.infos.clone(), ..Default::default() }))
    }

    fn merge(&mut self, part: Box<dyn std::any::Any>, map: &Part<'_>) {
        if let Ok(p) = part.downcast::<Self>() {
            let p = *p;
            let mine = (std::mem::take(&mut self.client_calls), std::mem::take(&mut self.client_orders));
            (self.client_calls, self.client_orders) = merge_in_order(mine, (p.client_calls, p.client_orders));
            let mut servers = p.server_calls;
            for s in &mut servers {
                s.run = s.run.map(|r| map.run(r));
            }
            let mine = (std::mem::take(&mut self.server_calls), std::mem::take(&mut self.server_orders));
            (self.server_calls, self.server_orders) = merge_in_order(mine, (servers, p.server_orders));
            // What is left unanswered refers to the parts' indices: not used after the pass.
            self.unanswered_client.clear();
            self.unanswered_server.clear();
            self.pending.clear();
        }
    }

    /// The calls' times moved, but the responses' source timestamps (payload: the sending
    /// host's clock as recorded).
    fn shifts(&self) -> bool {
        true
    }

    fn shift(&mut self, by: &crate::ClockShift) {
        for c in &mut self.client_calls {
            let t = c.client.0;
            c.ts_send = by.time(t, c.ts_send);
            if let Some(r) = &mut c.response {
                r.0 = by.time(t, r.0);
            }
        }
        for c in &mut self.server_calls {
            let t = c.service.0;
            c.ts_take = by.time(t, c.ts_take);
            if let Some(r) = &mut c.response {
                r.0 = by.time(t, r.0);
            }
        }
    }
}
