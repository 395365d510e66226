//! Expectations written from a good run: every limit is the value measured times
//! [`MARGIN`] (divided by it for the lower limits of runs and frequency; a path's drop and loss
//! rates at most halfway to 1), rounded to two significant digits on the passing side, so that
//! the file passes on the trace it came from.

use super::model::Stat;
use super::units::{round2, write, Unit};
use crate::report::{CallbackReport, TimeShare};
use crate::yaml_io::q;
use crate::{Analysis, Stats};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

/// How far a suggested limit is from the value measured: upper limits are the value times this,
/// lower limits the value divided by it.
pub const MARGIN: f64 = 1.5;

/// Topics of ROS 2's own that every node has, left out of suggestions as CARET leaves them out
/// of an architecture: their traffic is not the system's.
const INFRASTRUCTURE: [&str; 3] = ["/parameter_events", "/rosout", "/clock"];

/// The statistics an upper limit is suggested for.
const STATS: [Stat; 3] = [Stat::P50, Stat::P99, Stat::Max];

fn up(v: f64) -> f64 {
    round2(v * MARGIN, true)
}

fn down(v: f64) -> f64 {
    round2(v / MARGIN, false)
}

/// The upper limit of a rate between 0 and 1 measured at `r`: `r` x [`MARGIN`], but at most
/// halfway from `r` to 1 (rounded so that what is left to 1 keeps two significant digits); none
/// when `r` is 1 already, where any limit would mean nothing.
fn rate_up(r: f64) -> Option<f64> {
    if !(0.0..1.0).contains(&r) {
        return None;
    }
    let x = (r * MARGIN).min(r + (1.0 - r) / 2.0);
    Some(if x <= 0.5 { round2(x, true) } else { 1.0 - round2(1.0 - x, false) })
}

/// `key: {p50: .., p99: .., max: ..}` of the worst of `stats` (those with samples), indented
/// by `ind`; nothing when none has samples or the values are not above zero.
fn stats_line(o: &mut String, ind: &str, key: &str, stats: &[&Stats]) {
    let with: Vec<&&Stats> = stats.iter().filter(|s| s.count > 0).collect();
    let items: Vec<String> = STATS
        .iter()
        .filter_map(|st| {
            let v = with.iter().map(|s| st.of(s)).fold(f64::MIN, f64::max);
            (v > 0.0).then(|| format!("{}: {}", st.name(), write(up(v), Unit::Ns)))
        })
        .collect();
    if !items.is_empty() {
        let _ = writeln!(o, "{ind}{key}: {{{}}}", items.join(", "));
    }
}

/// Node, topic, timer period, service.
type Identity = (Arc<str>, Option<Arc<str>>, Option<i64>, Option<Arc<str>>);

/// A callback's identity in the file, as the check matches it: node, and the topic, timer
/// period or service it serves. Callbacks sharing one are checked together (the worst).
fn identity(c: &CallbackReport) -> Option<Identity> {
    if c.node.is_empty() || c.topic.as_deref().is_some_and(|t| INFRASTRUCTURE.contains(&t)) {
        return None;
    }
    match c.kind {
        "subscription" => Some((c.node.clone(), c.topic.clone(), None, None)),
        "service" => Some((c.node.clone(), None, None, c.topic.clone())),
        "timer" if c.timer_period_ns.is_some() => Some((c.node.clone(), None, c.timer_period_ns, None)),
        _ => None,
    }
}

fn callbacks(o: &mut String, a: &Analysis) {
    let mut groups: BTreeMap<_, Vec<&CallbackReport>> = BTreeMap::new();
    for c in a.report.callbacks.iter().filter(|c| c.count > 0) {
        if let Some(k) = identity(c) {
            groups.entry(k).or_default().push(c);
        }
    }
    if groups.is_empty() {
        return;
    }
    let _ = writeln!(o, "callbacks:");
    for ((node, topic, period, service), cbs) in groups {
        let _ = writeln!(o, "- node: {}", q(&node));
        if let Some(t) = topic {
            let _ = writeln!(o, "  topic: {}", q(&t));
        }
        if let Some(p) = period {
            let _ = writeln!(o, "  timer_period: {}", write(p as f64, Unit::Ns));
        }
        if let Some(s) = service {
            let _ = writeln!(o, "  service: {}", q(&s));
        }
        let runs = cbs.iter().map(|c| c.count).min().unwrap_or(0) as f64;
        let _ = writeln!(o, "  runs: {}", write(down(runs).floor(), Unit::Count));
        stats_line(o, "  ", "duration", &cbs.iter().map(|c| &c.duration_ns).collect::<Vec<_>>());
        let periods: Vec<&Stats> = cbs.iter().map(|c| &c.period_ns).filter(|s| s.count > 0).collect();
        if !periods.is_empty() {
            let lo = periods.iter().map(|s| s.p50).min().unwrap_or(0) as f64;
            let hi = periods.iter().map(|s| s.p50).max().unwrap_or(0) as f64;
            let max = periods.iter().map(|s| s.max).max().unwrap_or(0) as f64;
            let _ = writeln!(
                o,
                "  period: {{p50: [{}, {}], max: {}}}",
                write(down(lo), Unit::Ns),
                write(up(hi), Unit::Ns),
                write(up(max), Unit::Ns)
            );
        }
        stats_line(o, "  ", "jitter", &cbs.iter().filter_map(|c| c.jitter_ns.as_ref()).collect::<Vec<_>>());
    }
}

fn topics(o: &mut String, a: &Analysis) {
    let r = &a.report;
    let span = r.window_ns.or(r.begin_ns.zip(r.end_ns)).map(|(b, e)| (e - b) as f64 / 1e9).filter(|s| *s > 0.0);
    let mut any = false;
    for t in r
        .topics
        .iter()
        .filter(|t| !INFRASTRUCTURE.contains(&&*t.name))
        .filter(|t| t.publishes > 0 || t.pub_to_callback_ns.count > 0)
    {
        if !any {
            let _ = writeln!(o, "topics:");
            any = true;
        }
        let _ = writeln!(o, "- topic: {}", q(&t.name));
        if let (Some(s), true) = (span, t.publishes > 0) {
            let f = t.publishes as f64 / s;
            let _ = writeln!(o, "  frequency: [{}, {}]", write(down(f), Unit::Hz), write(up(f), Unit::Hz));
        }
        stats_line(o, "  ", "latency", &[&t.pub_to_callback_ns]);
        if let Some(d) = t.dropped {
            let _ = writeln!(o, "  dropped: {}", write(up(d as f64).ceil(), Unit::Count));
        }
        let mut pairs: BTreeMap<(&str, &str), Vec<&Stats>> = BTreeMap::new();
        for p in t.pairs.iter().filter(|p| p.pub_to_callback_ns.count > 0) {
            pairs.entry((&p.publisher_node, &p.subscription_node)).or_default().push(&p.pub_to_callback_ns);
        }
        // A pair is worth its own entry only beside others on the topic.
        if pairs.len() > 1 {
            for ((p, s), stats) in pairs {
                let _ = writeln!(o, "- topic: {}\n  publisher: {}\n  subscriber: {}", q(&t.name), q(p), q(s));
                stats_line(o, "  ", "latency", &stats);
            }
        }
    }
}

fn paths(o: &mut String, a: &Analysis) {
    let Some(lp) = &a.report.longest_paths else { return };
    let arch = a.architecture();
    let mut any = false;
    for p in lp.paths.iter().filter(|p| p.latency.count > 0 && p.counts.records > 0) {
        if !any {
            let _ = writeln!(o, "paths:");
            any = true;
        }
        let _ = writeln!(o, "- path: {}", q(&arch.path_text(&p.path)));
        stats_line(o, "  ", "latency", &[&p.latency]);
        for (key, n) in [("drop_rate", p.counts.dropped), ("lost_rate", p.counts.lost)] {
            match rate_up(n as f64 / p.counts.records as f64) {
                Some(r) => {
                    let _ = writeln!(o, "  {key}: {}", write(r, Unit::Ratio));
                }
                None => {
                    let _ = writeln!(o, "  # {key}: none suggested: every message was dropped on the way in this run");
                }
            }
        }
    }
}

/// `section:` with each name's busiest (`process: NAME`, `busy: ..`).
fn shares(o: &mut String, section: &str, v: &[TimeShare]) {
    let mut by: BTreeMap<&str, f64> = BTreeMap::new();
    for s in v.iter().filter(|s| s.busy > 0.0 && !s.name.is_empty()) {
        let b = by.entry(&s.name).or_insert(0.0);
        *b = b.max(s.busy);
    }
    if by.is_empty() {
        return;
    }
    let _ = writeln!(o, "{section}:");
    for (name, busy) in by {
        let _ = writeln!(o, "- process: {}\n  busy: {}", q(name), write(up(busy), Unit::Ratio));
    }
}

/// An expectation file that `a` passes: its callbacks, topics (and pairs where a topic has
/// several), the longest paths when the analysis searched them, its processes and threads,
/// and the trace's discarded events and unmatched takes. `about`: what it was made from, for
/// its header.
pub fn suggest(a: &Analysis, about: &str) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# rostrace check: expectations suggested from {about}\n\
         # Limits: the value measured x {MARGIN} (runs and the frequency's low end: / {MARGIN}), rounded to two\n\
         # significant digits; edit them to what the system must meet."
    );
    callbacks(&mut o, a);
    topics(&mut o, a);
    paths(&mut o, a);
    shares(&mut o, "processes", &a.report.per_process);
    shares(&mut o, "threads", &a.report.per_thread);
    let r = &a.report;
    let _ = writeln!(
        o,
        "trace:\n  discarded_events: {}\n  unmatched_takes: {}",
        write(up(r.discarded_events as f64).ceil(), Unit::Count),
        write(up(r.flows_unmatched as f64).ceil(), Unit::Count)
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rate's limit is above what was measured, below 1, and none for a rate of 1.
    #[test]
    fn rate_limits_mean_something() {
        assert_eq!(rate_up(0.0), Some(0.0));
        assert_eq!(rate_up(0.1), Some(0.15));
        assert_eq!(rate_up(0.7), Some(0.85));
        for r in [0.0, 0.01, 0.3, 0.5, 0.66, 0.9, 0.99, 0.9999] {
            let l = rate_up(r).unwrap();
            assert!(l >= r && l < 1.0, "{r}: {l}");
        }
        assert_eq!(rate_up(1.0), None);
    }
}
