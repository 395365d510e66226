//! Recordings of several hosts analysed as one system: each host's clock aligned to a reference
//! host's before the analysis, from the messages they exchange. Every matched message between
//! two hosts bounds the offset of their clocks: one from the reference host R to host H is taken
//! after it was published, so H's clock minus R's is below `take − publish`; one from H to R
//! bounds it from below, by `publish − take`. With traffic both ways the offset is the middle
//! of the tightest bounds, within half their gap (the convex-hull method of Duda et al. for one
//! constant offset). With traffic one way only, or none, one bound or none is known: the
//! recorded clocks are kept, with a warning. A user whose hosts share a clock (PTP) gives the
//! offsets instead ([`crate::Options::clock_offsets`]).

use crate::pipeline::{Options, Processor};
use crate::services::ServiceHandler;
use rostrace_ctf::TraceSet;
use serde::Serialize;

/// How a host's clock correction was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockSource {
    /// The host the others are aligned to.
    Reference,
    /// From the messages exchanged with the reference host, both ways.
    Estimated,
    /// Given by the user (`--clock-offset`).
    Given,
    /// Its recorded clock kept: the messages do not tell its offset (one way, or none).
    Recorded,
}

/// A host of the recordings and its clock's alignment to the reference host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostClock {
    /// The host (the traces' `hostname`).
    pub host: String,
    /// Traces of the host.
    pub traces: usize,
    /// How its times were corrected.
    pub source: ClockSource,
    /// Its clock minus the reference host's, as estimated or given (ns); its times were moved
    /// back by it. 0 for the reference and for a clock kept as recorded.
    pub offset_ns: i64,
    /// The bounds of that offset from the messages (ns), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lower_ns: Option<i64>,
    /// The upper bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upper_ns: Option<i64>,
    /// The estimate's error bound (half the bounds' gap), when both are known: a latency
    /// between this host and the reference host is known within it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_ns: Option<i64>,
    /// Messages matched from the reference host to this one.
    pub messages_in: u64,
    /// Messages from this host to the reference host.
    pub messages_out: u64,
}

/// The host of each trace of `set`: its `hostname`, and where traces of one host name come
/// from several machines (rostrace's traces say which: `machine_id`), the machine's id after it.
fn hosts_of(set: &TraceSet) -> Vec<String> {
    let env = |t: &rostrace_ctf::Trace, k: &str| match t.schema.env(k) {
        Some(rostrace_ctf::EnvValue::Str(s)) => s.clone(),
        _ => String::new(),
    };
    let named: Vec<(String, String)> = set
        .traces
        .iter()
        .map(|t| {
            (
                Some(t.hostname()).filter(|h| !h.is_empty()).unwrap_or_else(|| "(no hostname)".into()),
                env(t, "machine_id"),
            )
        })
        .collect();
    named
        .iter()
        .map(|(h, m)| {
            let machines = named.iter().filter(|(x, y)| x == h && !y.is_empty() && y != m).count();
            if machines > 0 && !m.is_empty() {
                format!("{h}#{}", &m[..m.len().min(8)])
            } else {
                h.clone()
            }
        })
        .collect()
}

/// Aligns the clocks of the hosts of `set` (when it holds traces of several) to its reference
/// host (the one with the most trace bytes): a first analysis matches the messages, the
/// offsets are estimated or taken from `given` (host name, its clock minus the reference's in
/// ns), and the traces' times are moved. Returns each host's alignment (nothing for one host)
/// and what to warn about.
pub fn align(set: &mut TraceSet, given: &[(String, i64)], jobs: usize) -> (Vec<HostClock>, Vec<String>) {
    let hosts = hosts_of(set);
    let mut names: Vec<String> = hosts.clone();
    names.sort();
    names.dedup();
    let mut warnings = Vec::new();
    for (h, _) in given {
        if !names.contains(h) {
            warnings.push(format!("--clock-offset {h}: no trace of that host (hosts: {})", names.join(", ")));
        }
    }
    if names.len() < 2 {
        return (Vec::new(), warnings);
    }
    let bytes =
        |h: &str| -> u64 { set.traces.iter().zip(&hosts).filter(|(_, x)| *x == h).map(|(t, _)| t.bytes()).sum() };
    let reference =
        names.iter().max_by_key(|h| (bytes(h), std::cmp::Reverse((*h).clone()))).cloned().unwrap_or_default();
    let mut clocks: Vec<HostClock> = names
        .iter()
        .map(|h| HostClock {
            host: h.clone(),
            traces: hosts.iter().filter(|x| *x == h).count(),
            source: if *h == reference { ClockSource::Reference } else { ClockSource::Recorded },
            offset_ns: 0,
            lower_ns: None,
            upper_ns: None,
            error_ns: None,
            messages_in: 0,
            messages_out: 0,
        })
        .collect();
    // The messages (topics' and services' requests and responses): a first analysis of the
    // recorded times.
    let mut p = Processor::new();
    p.add(ServiceHandler::default());
    p.set_jobs(jobs);
    let first = p.run(set, &Options::default(), |_, _| {});
    let mut messages: Vec<(u32, i64, u32, i64)> = first
        .flows
        .iter()
        .map(|f| {
            let (p, t) = (&first.pubs[f.publication as usize].publication, &first.takes[f.take as usize].take);
            (p.trace, p.ts, t.trace, t.ts)
        })
        .collect();
    if let Some(calls) = first.get::<ServiceHandler>() {
        messages.extend(crate::report::exchanged(&first.model, calls));
    }
    let at = |h: &str| clocks.iter().position(|c| c.host == h);
    let (ri, mut bounds) = (at(&reference).unwrap_or(0), vec![(i64::MIN, i64::MAX, 0u64, 0u64); clocks.len()]);
    for (from, sent, to, taken) in messages {
        match (at(&hosts[from as usize]), at(&hosts[to as usize])) {
            (Some(a), Some(b)) if a == ri && b != ri => {
                let x = &mut bounds[b];
                x.1 = x.1.min(taken - sent);
                x.2 += 1;
            }
            (Some(a), Some(b)) if b == ri && a != ri => {
                let x = &mut bounds[a];
                x.0 = x.0.max(sent - taken);
                x.3 += 1;
            }
            _ => {}
        }
    }
    let ms = |ns: i64| format!("{:.3} ms", ns as f64 / 1e6);
    for (i, c) in clocks.iter_mut().enumerate() {
        if i == ri {
            continue;
        }
        let (lo, hi, n_in, n_out) = bounds[i];
        (c.messages_in, c.messages_out) = (n_in, n_out);
        c.lower_ns = (n_out > 0).then_some(lo);
        c.upper_ns = (n_in > 0).then_some(hi);
        if let Some((_, ns)) = given.iter().find(|(h, _)| *h == c.host) {
            (c.source, c.offset_ns) = (ClockSource::Given, *ns);
            if c.lower_ns.is_some_and(|l| *ns < l) || c.upper_ns.is_some_and(|u| *ns > u) {
                warnings.push(format!(
                    "--clock-offset {}={ns}: outside what the messages allow ({} to {}): some latencies from or to it are negative",
                    c.host,
                    c.lower_ns.map_or("-inf".into(), ms),
                    c.upper_ns.map_or("+inf".into(), ms)
                ));
            }
            continue;
        }
        match (c.lower_ns, c.upper_ns) {
            (Some(l), Some(u)) => {
                c.source = ClockSource::Estimated;
                c.offset_ns = l + (u - l) / 2;
                c.error_ns = Some((u - l).abs() / 2);
                if l > u {
                    warnings.push(format!(
                        "host {}: its clock's bounds from the messages cross ({} above {}): its clock drifts, or \
                         messages were matched wrongly; the middle is used",
                        c.host,
                        ms(l),
                        ms(u)
                    ));
                }
            }
            (l, u) => {
                let said = match (l, u) {
                    (None, Some(u)) => format!(
                        "only messages from {reference} to it ({n_in}): its clock is at most {} ahead of {reference}'s{}",
                        ms(u),
                        if u < 0 { ", so its recorded times make those messages arrive before they were sent" } else { "" }
                    ),
                    (Some(l), None) => format!(
                        "only messages from it to {reference} ({n_out}): its clock is at least {} ahead of {reference}'s{}",
                        ms(l),
                        if l > 0 { ", so its recorded times make those messages arrive before they were sent" } else { "" }
                    ),
                    _ => format!("no message matched between it and {reference}"),
                };
                warnings.push(format!(
                    "host {}: {said}; its recorded clock is kept (give --clock-offset {}=NS if it is known)",
                    c.host, c.host
                ));
            }
        }
    }
    for (ti, h) in hosts.iter().enumerate() {
        if let Some(c) = clocks.iter().find(|c| c.host == *h && c.offset_ns != 0) {
            set.shift_clocks(ti, -c.offset_ns);
        }
    }
    (clocks, warnings)
}
