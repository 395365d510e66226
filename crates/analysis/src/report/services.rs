//! Services: requests and responses matched client → server → client (Kilted's rmw events).

use crate::collections::HashMap;
use crate::link::View;
use crate::model::{Key, Model, Registry, Service};
use crate::services::{ClientCall, ServerCall, ServiceHandler};
use crate::stats::{Latencies, Stats};
use serde::Serialize;
use std::collections::BTreeMap;

/// One service's requests and responses (from Kilted's rmw events).
#[derive(Debug, Clone, Serialize)]
pub struct ServiceReport {
    /// Service name.
    pub name: String,
    /// Server node.
    pub server_node: String,
    /// Server process.
    pub server_vpid: i64,
    /// Server's host ([`crate::Process::host`]; empty when the server is unknown).
    pub server_host: String,
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

/// The client calls by (client GID, sequence number), and by (response source timestamp,
/// sequence number).
type ClientIndex = (HashMap<(Vec<u8>, i64), usize>, HashMap<(i64, i64), usize>);

fn client_index(m: &Model, clients: &[ClientCall]) -> ClientIndex {
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
    (by_gid, by_source)
}

/// The client call whose request server call `s` took, and the one that took its response.
fn clients_of(s: &ServerCall, (by_gid, by_source): &ClientIndex) -> (Option<usize>, Option<usize>) {
    let by_client = by_gid.get(&(s.client_gid.clone(), s.seq)).copied();
    let response = s
        .response
        .and_then(|(_, src)| by_client.or_else(|| if src != 0 { by_source.get(&(src, s.seq)).copied() } else { None }));
    (by_client, response)
}

/// The server call that took each client call's request (by client call), if one did.
pub(crate) fn servers_of(m: &Model, calls: &ServiceHandler) -> Vec<Option<usize>> {
    let index = client_index(m, &calls.client_calls);
    let mut out = vec![None; calls.client_calls.len()];
    for (i, s) in calls.server_calls.iter().enumerate() {
        if let (Some(c), _) = clients_of(s, &index) {
            out[c] = Some(i);
        }
    }
    out
}

/// Every request and response matched between a client and a server: the trace that sent it
/// and when, the trace that took it and when (the hosts' clocks are aligned with them).
pub(crate) fn exchanged(m: &Model, calls: &ServiceHandler) -> Vec<(u32, i64, u32, i64)> {
    let (clients, servers) = (&calls.client_calls, &calls.server_calls);
    let index = client_index(m, clients);
    let mut out = Vec::new();
    for s in servers {
        let (request, response) = clients_of(s, &index);
        if let Some(c) = request.map(|ci| &clients[ci]) {
            out.push((c.client.0, c.ts_send, s.service.0, s.ts_take));
        }
        if let (Some((t_send, _)), Some(c)) = (s.response, response.map(|ci| &clients[ci])) {
            if let Some((t_take, _)) = c.response {
                out.push((s.service.0, t_send, c.client.0, t_take));
            }
        }
    }
    out
}

/// Matches requests client → server by (client GID, sequence number) and responses server →
/// client by (source timestamp, sequence number), per service.
fn services(m: &Model, clients: &[ClientCall], servers: &[ServerCall]) -> Vec<ServiceReport> {
    let mut t = ServiceTotals::<Vec<i64>>::default();
    t.add(m, clients, servers, |_| true, |_| true);
    t.report()
}

/// One service's counts and latencies so far.
#[derive(Default)]
struct Acc<L> {
    sent: u64,
    served: u64,
    received: u64,
    req_matched: u64,
    resp_matched: u64,
    request: L,
    service: L,
    response: L,
    round: L,
}

/// The services' calls added up: by server (service name, server process, node, host), and the
/// clients' by service name (given to the first server of their name at the end).
#[derive(Default)]
pub(crate) struct ServiceTotals<L> {
    servers: BTreeMap<(String, i64, String, String), Acc<L>>,
    clients: BTreeMap<String, Acc<L>>,
}

impl<L: Latencies> ServiceTotals<L> {
    /// Adds the server calls `servers` for which `server` holds and the client calls `clients`
    /// for which `client` holds, matched against all of them, named by `m`.
    pub(crate) fn add(
        &mut self,
        m: &Model,
        clients: &[ClientCall],
        servers: &[ServerCall],
        server: impl Fn(&ServerCall) -> bool,
        client: impl Fn(&ClientCall) -> bool,
    ) {
        let by_rmw = |reg: &Registry<Service>, k: Key| reg.items.iter().position(|s| (s.key.0, s.key.1, s.rmw) == k);
        let index = client_index(m, clients);
        let host = |k: Key| m.processes.get(&(k.0, k.1)).map_or_else(String::new, |p| p.host.clone());
        let name_of_server = |s: &ServerCall| match by_rmw(&m.services, s.service) {
            Some(i) => {
                let sv = &m.services.items[i];
                (sv.name.clone(), sv.key.1, m.node_name(sv.node), host(sv.key))
            }
            None => (format!("{:#x}", s.service.2), s.service.1, String::new(), host(s.service)),
        };
        for s in servers.iter().filter(|s| server(s)) {
            let a = self.servers.entry(name_of_server(s)).or_default();
            a.served += 1;
            if let Some((t, _)) = s.response {
                a.service.add(t - s.ts_take);
            }
            let (by_client, response) = clients_of(s, &index);
            if let Some(ci) = by_client {
                a.req_matched += 1;
                a.request.add(s.ts_take - clients[ci].ts_send);
            }
            if let Some((t_send, _)) = s.response {
                if let Some((t_take, _)) = response.and_then(|ci| clients[ci].response) {
                    a.resp_matched += 1;
                    a.response.add(t_take - t_send);
                }
            }
        }
        for c in clients.iter().filter(|c| client(c)) {
            let Some(i) = by_rmw(&m.clients, c.client) else { continue };
            let a = self.clients.entry(m.clients.items[i].name.clone()).or_default();
            a.sent += 1;
            if let Some((t, _)) = c.response {
                a.received += 1;
                a.round.add(t - c.ts_send);
            }
        }
    }

    /// The services' reports, by name, server process, node and host.
    pub(crate) fn report(self) -> Vec<ServiceReport> {
        let ServiceTotals { mut servers, clients } = self;
        for (name, c) in clients {
            // Attribute the client's numbers to the server entry of that service name, if any.
            let key = servers.keys().find(|k| k.0 == name).cloned().unwrap_or((name, 0, String::new(), String::new()));
            let a = servers.entry(key).or_default();
            (a.sent, a.received) = (a.sent + c.sent, a.received + c.received);
            a.round.merge(c.round);
        }
        servers
            .into_iter()
            .map(|((name, vpid, node, host), a)| ServiceReport {
                name,
                server_node: node,
                server_vpid: vpid,
                server_host: host,
                requests_sent: a.sent,
                requests_served: a.served,
                responses_received: a.received,
                requests_matched: a.req_matched,
                responses_matched: a.resp_matched,
                request_ns: a.request.into_stats(),
                service_ns: a.service.into_stats(),
                response_ns: a.response.into_stats(),
                round_trip_ns: a.round.into_stats(),
            })
            .collect()
    }
}

/// A warning per service some of whose requests were taken before they were sent, or
/// responses before they were sent back.
pub(crate) fn negative_latencies(services: &[ServiceReport]) -> Vec<String> {
    let mut w = Vec::new();
    for s in services {
        for (what, st) in [
            ("request (client send → server take)", &s.request_ns),
            ("response (server send → client take)", &s.response_ns),
        ] {
            if st.count > 0 && st.min < 0 {
                w.push(format!(
                    "service {}: {what} latency down to {:.1} us, below zero: {}",
                    s.name,
                    st.min as f64 / 1e3,
                    super::topics::NEGATIVE_WHY
                ));
            }
        }
    }
    w
}

/// The services of the analysis's [`ServiceHandler`] calls.
pub(super) fn section(a: &View<'_>) -> Vec<ServiceReport> {
    let no_services = ServiceHandler::default();
    let calls = a.get::<ServiceHandler>().unwrap_or(&no_services);
    services(a.model, &calls.client_calls, &calls.server_calls)
}
