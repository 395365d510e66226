//! What `rostrace live` shows at each interval: a snapshot of the analysis of the window (or
//! of the whole recording at the end), as rows of callbacks, topics, publisher → subscriber
//! pairs and threads, with the alerts; as text, or one JSON line.

use rostrace_analysis::check::{Outcome, Status};
use rostrace_analysis::Report;
use serde::Serialize;
use std::sync::Arc;

/// One callback in a snapshot.
#[derive(Serialize)]
pub(super) struct CallbackRow {
    pub(super) node: Arc<str>,
    pub(super) procname: Arc<str>,
    pub(super) vpid: i64,
    pub(super) kind: &'static str,
    pub(super) symbol: Arc<str>,
    pub(super) topic: Option<Arc<str>>,
    pub(super) timer_period_ns: Option<i64>,
    pub(super) count: u64,
    pub(super) rate_hz: f64,
    pub(super) p50_ns: i64,
    pub(super) p99_ns: i64,
    pub(super) max_ns: i64,
    /// p99 of the time between starts minus the timer period (timers run twice or more).
    pub(super) jitter_p99_ns: Option<i64>,
}

/// One topic in a snapshot.
#[derive(Serialize)]
pub(super) struct TopicRow {
    pub(super) name: Arc<str>,
    pub(super) publishers: Vec<Arc<str>>,
    pub(super) subscribers: Vec<Arc<str>>,
    pub(super) publishes: u64,
    pub(super) takes: u64,
    pub(super) rate_hz: f64,
    /// None when no message of the topic was matched in the window.
    pub(super) latency_p50_ns: Option<i64>,
    pub(super) latency_p99_ns: Option<i64>,
    pub(super) unmatched: u64,
    pub(super) dropped: Option<u64>,
}

/// One publisher → subscriber pair of a topic in a snapshot: the analysis's messages matched
/// between the two nodes. Unmatched takes and drops are the topic's: a take not matched has no
/// publisher, and drops are counted per subscription of the topic.
#[derive(Serialize)]
pub(super) struct PairRow {
    pub(super) topic: Arc<str>,
    pub(super) publisher: Arc<str>,
    pub(super) publisher_vpid: i64,
    pub(super) subscriber: Arc<str>,
    pub(super) subscriber_vpid: i64,
    /// Messages matched.
    pub(super) count: u64,
    pub(super) rate_hz: f64,
    pub(super) latency_p50_ns: i64,
    pub(super) latency_p99_ns: i64,
}

/// Callback time per thread in a snapshot, and its time on CPU when the trace has kernel events.
#[derive(Serialize)]
pub(super) struct ThreadRow {
    pub(super) name: Arc<str>,
    pub(super) vpid: i64,
    pub(super) vtid: Option<i64>,
    pub(super) runs: u64,
    /// Callback time over the window.
    pub(super) busy: f64,
    /// Time on CPU over the window (kernel `sched_switch`), when recorded.
    pub(super) cpu: Option<f64>,
}

/// What one interval (or the final analysis) shows.
#[derive(Serialize)]
pub(super) struct Snapshot {
    /// Whether this is the whole recording's analysis, made at the end.
    #[serde(rename = "final")]
    pub(super) is_final: bool,
    /// The window analyzed (ns since the epoch), from the report.
    pub(super) window_ns: Option<(i64, i64)>,
    pub(super) events: u64,
    pub(super) discarded_events: u64,
    pub(super) processes: Vec<String>,
    pub(super) callbacks: Vec<CallbackRow>,
    pub(super) topics: Vec<TopicRow>,
    pub(super) pairs: Vec<PairRow>,
    pub(super) threads: Vec<ThreadRow>,
    /// Whether the trace has kernel scheduling events (the threads' CPU shares).
    pub(super) kernel: bool,
    pub(super) alerts: Vec<String>,
    /// The expectations of `--expect` checked against the window (the whole recording at the end).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) expectations: Vec<Outcome>,
    /// Read errors other than a stream file's last packet still being written.
    pub(super) read_errors: Vec<String>,
    /// Stream files whose last packet was still being written (read up to it).
    pub(super) partial_packets: usize,
    /// Packet headers read for this snapshot: those of the packets written since the last one
    /// and of its window (and those holding initialization events), not the whole recording's.
    pub(super) packets_read: u64,
    /// Entries of the packet index of the traces kept open (0 for the final snapshot, which
    /// opens the recording afresh): one per run of packets passed over and per packet after.
    pub(super) index_entries: usize,
}

/// What reading the traces for a snapshot took.
#[derive(Clone, Copy, Default)]
pub(super) struct Reading {
    pub(super) packets_read: u64,
    pub(super) index_entries: usize,
}

pub(super) fn snapshot(
    r: &Report,
    is_final: bool,
    max_latency_ns: Option<i64>,
    expectations: Vec<Outcome>,
    reading: Reading,
) -> Snapshot {
    // The events' span inside the window: the window is open at its end (the last event read).
    let span = r.begin_ns.zip(r.end_ns).map(|(b, e)| match r.window_ns {
        Some((wb, we)) => (wb.max(b), we.min(e)),
        None => (b, e),
    });
    let secs = span.map_or(0.0, |(b, e)| (e - b).max(0) as f64 / 1e9);
    let rate = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    let mut alerts = Vec::new();
    let callbacks: Vec<CallbackRow> = r
        .callbacks
        .iter()
        .map(|c| {
            if let Some(p) = c.timer_period_ns.filter(|&p| p > 0 && c.duration_ns.count > 0 && c.duration_ns.max > p) {
                alerts.push(format!(
                    "{} {}: a run took {:.3} ms, longer than its timer period {:.3} ms",
                    c.node,
                    c.symbol,
                    c.duration_ns.max as f64 / 1e6,
                    p as f64 / 1e6
                ));
            }
            CallbackRow {
                node: c.node.clone(),
                procname: c.procname.clone(),
                vpid: c.vpid,
                kind: c.kind,
                symbol: c.symbol.clone(),
                topic: c.topic.clone(),
                timer_period_ns: c.timer_period_ns,
                count: c.count,
                rate_hz: rate(c.count),
                p50_ns: c.duration_ns.p50,
                p99_ns: c.duration_ns.p99,
                max_ns: c.duration_ns.max,
                jitter_p99_ns: c.jitter_ns.as_ref().filter(|j| j.count > 0).map(|j| j.p99),
            }
        })
        .collect();
    let topics: Vec<TopicRow> = r
        .topics
        .iter()
        .map(|t| {
            let l = &t.pub_to_callback_ns;
            if let Some(m) = max_latency_ns.filter(|&m| l.count > 0 && l.p99 > m) {
                alerts.push(format!(
                    "{}: latency p99 {:.3} ms over --max-latency {:.3} ms",
                    t.name,
                    l.p99 as f64 / 1e6,
                    m as f64 / 1e6
                ));
            }
            TopicRow {
                name: t.name.clone(),
                publishers: t.publishers.clone(),
                subscribers: t.subscribers.clone(),
                publishes: t.publishes,
                takes: t.takes,
                rate_hz: rate(t.publishes),
                latency_p50_ns: (l.count > 0).then_some(l.p50),
                latency_p99_ns: (l.count > 0).then_some(l.p99),
                unmatched: t.unmatched,
                dropped: t.dropped,
            }
        })
        .collect();
    if r.discarded_events > 0 {
        alerts.push(format!("{} events discarded by the tracer (buffers full)", r.discarded_events));
    }
    for o in expectations.iter().filter(|o| o.status == Status::Fail) {
        let subject = crate::format::name(&o.subject);
        alerts.push(format!("expectation line {}: {subject}: {} {}", o.line, o.metric, o.verdict()));
    }
    // A stream file whose last packet is still being written is expected while following a
    // recording: not an error of the trace.
    let (partial, errors): (Vec<_>, Vec<_>) = r.read_errors.iter().partition(|e| e.truncated);
    Snapshot {
        is_final,
        window_ns: span,
        events: r.events,
        discarded_events: r.discarded_events,
        processes: r.processes.iter().map(|p| p.procname.clone()).collect(),
        callbacks,
        topics,
        pairs: pairs(r, &rate),
        threads: threads(r, secs),
        kernel: r.system.cpu_time.is_some(),
        alerts,
        expectations,
        read_errors: errors.into_iter().map(ToString::to_string).collect(),
        partial_packets: partial.len(),
        packets_read: reading.packets_read,
        index_entries: reading.index_entries,
    }
}

fn pairs(r: &Report, rate: &dyn Fn(u64) -> f64) -> Vec<PairRow> {
    let of = |t: &rostrace_analysis::TopicReport| -> Vec<PairRow> {
        t.pairs
            .iter()
            .map(|p| PairRow {
                topic: t.name.clone(),
                publisher: p.publisher_node.clone(),
                publisher_vpid: p.publisher_vpid,
                subscriber: p.subscription_node.clone(),
                subscriber_vpid: p.subscription_vpid,
                count: p.count,
                rate_hz: rate(p.count),
                latency_p50_ns: p.pub_to_callback_ns.p50,
                latency_p99_ns: p.pub_to_callback_ns.p99,
            })
            .collect()
    };
    r.topics.iter().flat_map(of).collect()
}

fn threads(r: &Report, secs: f64) -> Vec<ThreadRow> {
    let share = |ns: i64| if secs > 0.0 { ns as f64 / 1e9 / secs } else { 0.0 };
    let cpu = r.system.cpu_time.as_ref();
    r.per_thread
        .iter()
        .map(|t| ThreadRow {
            name: t.name.clone(),
            vpid: t.vpid,
            vtid: t.vtid,
            runs: t.runs,
            busy: share(t.callback_ns),
            cpu: cpu.map(|c| share(c.threads.iter().filter(|k| Some(k.tid) == t.vtid).map(|k| k.cpu_ns).sum())),
        })
        .collect()
}

impl Snapshot {
    /// What the snapshot is of: the window or the whole recording, its events and processes.
    pub(super) fn summary(&self) -> String {
        let span = self.window_ns.map_or(0.0, |(b, e)| (e - b) as f64 / 1e9);
        format!(
            "{} {:.1} s, {}, {}, {} discarded",
            if self.is_final { "whole recording" } else { "window" },
            span,
            crate::text::count(self.events, "event"),
            crate::text::count(self.processes.len() as u64, "process"),
            self.discarded_events
        )
    }
}

/// A latency in ms with three decimals, `-` when there is none.
fn ms(v: Option<i64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{:.3}", v as f64 / 1e6))
}

/// The snapshot as lines of text, its names escaped (a trace sends no escape sequence to the
/// terminal); an error is standard output's.
pub(super) fn print_text(s: &Snapshot) -> std::io::Result<()> {
    use crate::format::name as esc;
    let mut o = format!("-- {}\n", s.summary());
    for c in &s.callbacks {
        o.push_str(&format!(
            "callback {} {} {:.1}/s p50 {:.3} ms p99 {:.3} ms max {:.3} ms\n",
            esc(&c.node),
            esc(c.topic.as_deref().unwrap_or(c.kind)),
            c.rate_hz,
            c.p50_ns as f64 / 1e6,
            c.p99_ns as f64 / 1e6,
            c.max_ns as f64 / 1e6
        ));
    }
    for t in &s.topics {
        o.push_str(&format!(
            "topic {} {:.1}/s latency p50 {} ms p99 {} ms unmatched {}\n",
            esc(&t.name),
            t.rate_hz,
            ms(t.latency_p50_ns),
            ms(t.latency_p99_ns),
            t.unmatched
        ));
    }
    for p in &s.pairs {
        o.push_str(&format!(
            "pair {} {} -> {} {:.1}/s latency p50 {:.3} ms p99 {:.3} ms\n",
            esc(&p.topic),
            esc(&p.publisher),
            esc(&p.subscriber),
            p.rate_hz,
            p.latency_p50_ns as f64 / 1e6,
            p.latency_p99_ns as f64 / 1e6
        ));
    }
    for a in &s.alerts {
        o.push_str(&format!("alert {}\n", esc(a)));
    }
    crate::out::out!("{o}")
}
