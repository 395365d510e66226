//! What a test expects of a callback, topic or path, as `rostrace check` expectations.

use rostrace_analysis::check::{Bound, Expectation, Metric, Stat, Subject};
use std::time::Duration;

/// Limits on a subject of the analysis, checked by `rostrace check`'s evaluation.
pub trait Limits {
    /// The limits as expectations.
    fn expectations(&self) -> Vec<Expectation>;
}

fn ns(d: Duration) -> f64 {
    d.as_nanos() as f64
}

fn at_most(v: f64) -> Bound {
    Bound { low: None, high: Some(v) }
}

fn at_least(v: f64) -> Bound {
    Bound { low: Some(v), high: None }
}

/// `(metric, bound)` pairs of one subject as expectations (line 0: they come from no file).
fn expectations(subject: &Subject, limits: &[(Metric, Bound)]) -> Vec<Expectation> {
    limits.iter().map(|&(metric, bound)| Expectation { subject: subject.clone(), metric, bound, line: 0 }).collect()
}

/// The callbacks of a node (narrowed by topic, timer period, service or symbol): each one that
/// matches must meet the limits, and at least one must match and have run (`runs_at_least`, 1
/// unless said).
#[derive(Debug, Clone)]
pub struct Callback {
    node: String,
    topic: Option<String>,
    timer_period_ns: Option<i64>,
    service: Option<String>,
    symbol: Option<String>,
    limits: Vec<(Metric, Bound)>,
}

impl Callback {
    /// The callbacks of `node` (`/ns/name`).
    pub fn node(node: &str) -> Callback {
        Callback {
            node: node.into(),
            topic: None,
            timer_period_ns: None,
            service: None,
            symbol: None,
            limits: vec![(Metric::Runs, at_least(1.0))],
        }
    }

    /// Only the subscription callbacks of `topic`.
    pub fn topic(mut self, topic: &str) -> Self {
        self.topic = Some(topic.into());
        self
    }

    /// Only the timer callbacks of this period.
    pub fn timer_period(mut self, period: Duration) -> Self {
        self.timer_period_ns = Some(period.as_nanos() as i64);
        self
    }

    /// Only the callbacks of `service`.
    pub fn service(mut self, service: &str) -> Self {
        self.service = Some(service.into());
        self
    }

    /// Only the callbacks whose symbol matches the regular expression `re`.
    pub fn symbol(mut self, re: &str) -> Self {
        self.symbol = Some(re.into());
        self
    }

    fn limit(mut self, metric: Metric, bound: Bound) -> Self {
        self.limits.retain(|(m, _)| *m != metric);
        self.limits.push((metric, bound));
        self
    }

    /// At least `n` completed runs.
    pub fn runs_at_least(self, n: u64) -> Self {
        self.limit(Metric::Runs, at_least(n as f64))
    }

    /// Run durations' median at most `d`.
    pub fn p50_below(self, d: Duration) -> Self {
        self.limit(Metric::Duration(Stat::P50), at_most(ns(d)))
    }

    /// Run durations' 99th percentile at most `d`.
    pub fn p99_below(self, d: Duration) -> Self {
        self.limit(Metric::Duration(Stat::P99), at_most(ns(d)))
    }

    /// Longest run at most `d`.
    pub fn max_below(self, d: Duration) -> Self {
        self.limit(Metric::Duration(Stat::Max), at_most(ns(d)))
    }
}

impl Limits for Callback {
    fn expectations(&self) -> Vec<Expectation> {
        let subject = Subject::Callback {
            node: self.node.clone(),
            topic: self.topic.clone(),
            timer_period_ns: self.timer_period_ns,
            service: self.service.clone(),
            symbol: self.symbol.clone(),
        };
        expectations(&subject, &self.limits)
    }
}

/// A topic: publications per second, latency from publication to the callback's start, and
/// messages a subscription never took.
#[derive(Debug, Clone)]
pub struct Topic {
    subject: Subject,
    limits: Vec<(Metric, Bound)>,
}

impl Topic {
    /// Topic `name`; with no limit, it must have carried at least one message taken by a callback.
    pub fn new(name: &str) -> Topic {
        Topic { subject: Subject::Topic { topic: name.into(), publisher: None, subscriber: None }, limits: vec![] }
    }

    fn limit(mut self, metric: Metric, bound: Bound) -> Self {
        self.limits.push((metric, bound));
        self
    }

    /// At least `hz` publications per second of the trace.
    pub fn frequency_at_least(self, hz: f64) -> Self {
        self.limit(Metric::Frequency, at_least(hz))
    }

    /// Latency's 99th percentile at most `d`.
    pub fn latency_p99_below(self, d: Duration) -> Self {
        self.limit(Metric::Latency(Stat::P99), at_most(ns(d)))
    }

    /// Longest latency at most `d`.
    pub fn latency_max_below(self, d: Duration) -> Self {
        self.limit(Metric::Latency(Stat::Max), at_most(ns(d)))
    }

    /// At most `n` messages never taken by a subscription that took others.
    pub fn dropped_at_most(self, n: u64) -> Self {
        self.limit(Metric::Dropped, at_most(n as f64))
    }
}

impl Limits for Topic {
    fn expectations(&self) -> Vec<Expectation> {
        if self.limits.is_empty() {
            // A latency needs a matched message: any value passes, none is "not in the trace".
            return expectations(&self.subject, &[(Metric::Latency(Stat::Max), Bound::default())]);
        }
        expectations(&self.subject, &self.limits)
    }
}

/// An end-to-end path through nodes (and topics where needed), as `rostrace e2e --path` takes
/// it: at least one message must have gone the whole way.
#[derive(Debug, Clone)]
pub struct Path {
    subject: Subject,
    limits: Vec<(Metric, Bound)>,
}

impl Path {
    /// The path through `nodes`, in order.
    pub fn through<S: AsRef<str>>(nodes: impl IntoIterator<Item = S>) -> Path {
        let path = nodes.into_iter().map(|n| n.as_ref().to_string()).collect::<Vec<_>>().join(",");
        let subject = Subject::Path { path, include_first_callback: false, include_last_callback: false };
        Path { subject, limits: vec![(Metric::Latency(Stat::Max), Bound::default())] }
    }

    fn limit(mut self, metric: Metric, bound: Bound) -> Self {
        self.limits.push((metric, bound));
        self
    }

    /// Latency's 99th percentile at most `d`.
    pub fn p99_below(self, d: Duration) -> Self {
        self.limit(Metric::Latency(Stat::P99), at_most(ns(d)))
    }

    /// Longest latency at most `d`.
    pub fn max_below(self, d: Duration) -> Self {
        self.limit(Metric::Latency(Stat::Max), at_most(ns(d)))
    }

    /// At most this fraction of the records dropped on the way (superseded or lost).
    pub fn drop_rate_at_most(self, fraction: f64) -> Self {
        self.limit(Metric::DropRate, at_most(fraction))
    }
}

impl Limits for Path {
    fn expectations(&self) -> Vec<Expectation> {
        expectations(&self.subject, &self.limits)
    }
}
