//! What an expectation file says ([`Expectations`]) and what checking it against an analysis
//! found ([`Outcome`]).

use super::units::{self, Unit};
use serde::Serialize;

/// One statistic of a distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stat {
    /// Mean.
    Mean,
    /// Minimum.
    Min,
    /// Median.
    P50,
    /// 90th percentile.
    P90,
    /// 99th percentile.
    P99,
    /// Maximum.
    Max,
}

impl Stat {
    /// Every statistic, with its key in the file.
    pub const ALL: [(&'static str, Stat); 6] = [
        ("mean", Stat::Mean),
        ("min", Stat::Min),
        ("p50", Stat::P50),
        ("p90", Stat::P90),
        ("p99", Stat::P99),
        ("max", Stat::Max),
    ];

    /// The key in the file.
    pub fn name(self) -> &'static str {
        Stat::ALL.iter().find(|(_, s)| *s == self).map_or("", |(n, _)| n)
    }

    /// This statistic of `s` (ns).
    pub fn of(self, s: &crate::Stats) -> f64 {
        match self {
            Stat::Mean => s.mean,
            Stat::Min => s.min as f64,
            Stat::P50 => s.p50 as f64,
            Stat::P90 => s.p90 as f64,
            Stat::P99 => s.p99 as f64,
            Stat::Max => s.max as f64,
        }
    }
}

/// What is measured of a subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// A callback's completed runs.
    Runs,
    /// A callback's run durations.
    Duration(Stat),
    /// A callback's time between starts.
    Period(Stat),
    /// A timer callback's time between starts minus its period.
    Jitter(Stat),
    /// Publications of a topic (matched messages of a pair) per second of the trace.
    Frequency,
    /// Publish → callback start of a topic or pair; end to end along a path.
    Latency(Stat),
    /// Messages of a topic published but never taken by a subscription that took others.
    Dropped,
    /// Records of a path dropped on the way (superseded or lost) over all its records.
    DropRate,
    /// Records of a path lost on the way (not superseded) over all its records.
    LostRate,
    /// Callback time of a process (of each of its threads) over the trace's duration.
    Busy,
    /// Callback time of a process (of each of its threads) over all callback time.
    Share,
    /// Events the tracer discarded.
    DiscardedEvents,
    /// Takes that could not be matched to their publication.
    UnmatchedTakes,
}

impl Metric {
    /// The metric's name in the output (`duration p99`, `runs`, ...).
    pub fn label(self) -> String {
        match self {
            Metric::Runs => "runs".into(),
            Metric::Duration(s) => format!("duration {}", s.name()),
            Metric::Period(s) => format!("period {}", s.name()),
            Metric::Jitter(s) => format!("jitter {}", s.name()),
            Metric::Frequency => "frequency".into(),
            Metric::Latency(s) => format!("latency {}", s.name()),
            Metric::Dropped => "dropped".into(),
            Metric::DropRate => "drop rate".into(),
            Metric::LostRate => "lost rate".into(),
            Metric::Busy => "busy".into(),
            Metric::Share => "share".into(),
            Metric::DiscardedEvents => "discarded events".into(),
            Metric::UnmatchedTakes => "unmatched takes".into(),
        }
    }

    /// The unit of its values.
    pub fn unit(self) -> Unit {
        match self {
            Metric::Duration(_) | Metric::Period(_) | Metric::Jitter(_) | Metric::Latency(_) => Unit::Ns,
            Metric::Frequency => Unit::Hz,
            Metric::DropRate | Metric::LostRate | Metric::Busy | Metric::Share => Unit::Ratio,
            Metric::Runs | Metric::Dropped | Metric::DiscardedEvents | Metric::UnmatchedTakes => Unit::Count,
        }
    }

    /// Whether a single value in the file is a lower limit (else an upper one).
    pub fn at_least(self) -> bool {
        matches!(self, Metric::Runs | Metric::Frequency)
    }
}

/// The range a measured value must be in, both ends included (`None`: open).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Bound {
    /// The smallest value that passes.
    pub low: Option<f64>,
    /// The largest value that passes.
    pub high: Option<f64>,
}

impl Bound {
    /// Whether `v` is in the range.
    pub fn holds(&self, v: f64) -> bool {
        self.low.is_none_or(|l| v >= l) && self.high.is_none_or(|h| v <= h)
    }

    /// How far `v` is out of the range, relative to the limit it passes (0 when inside).
    pub fn excess(&self, v: f64) -> f64 {
        let rel = |d: f64, l: f64| d / l.abs().max(1e-12);
        match (self.low, self.high) {
            (Some(l), _) if v < l => rel(l - v, l),
            (_, Some(h)) if v > h => rel(v - h, h),
            _ => 0.0,
        }
    }
}

impl Bound {
    /// The range for people, in `unit`: `at most 5.00 ms`, `at least 10`, `between 9 Hz and 11 Hz`.
    pub fn describe(&self, unit: Unit) -> String {
        let v = |x| units::human(x, unit);
        match (self.low, self.high) {
            (Some(l), Some(h)) => format!("between {} and {}", v(l), v(h)),
            (Some(l), None) => format!("at least {}", v(l)),
            (None, Some(h)) => format!("at most {}", v(h)),
            (None, None) => "any".into(),
        }
    }
}

/// What an expectation is about.
#[derive(Debug, Clone, PartialEq)]
pub enum Subject {
    /// The callbacks of a node, narrowed by what they serve and their symbol.
    Callback {
        /// The node, `/ns/name`.
        node: String,
        /// The subscription's topic.
        topic: Option<String>,
        /// The timer's period (ns).
        timer_period_ns: Option<i64>,
        /// The service.
        service: Option<String>,
        /// A regular expression the symbol must match.
        symbol: Option<String>,
    },
    /// A topic, or its publisher → subscription pairs between two nodes.
    Topic {
        /// The topic.
        topic: String,
        /// The publishing node (pairs only).
        publisher: Option<String>,
        /// The subscribing node (pairs only).
        subscriber: Option<String>,
    },
    /// An end-to-end path, written as `rostrace e2e --path` takes it.
    Path {
        /// `NODE,NODE,...`, with topics between where needed.
        path: String,
        /// From the first callback's start instead of the first publication.
        include_first_callback: bool,
        /// To the last callback's end instead of its start.
        include_last_callback: bool,
    },
    /// The processes of a name.
    Process(String),
    /// Each thread, that ran callbacks, of the processes of a name.
    Threads(String),
    /// The whole trace.
    Trace,
}

impl Subject {
    /// The subject in the output (`callback /node topic /t`, `path /a,/b`, ...).
    pub fn label(&self) -> String {
        match self {
            Subject::Callback { node, topic, timer_period_ns, service, symbol } => {
                let mut s = format!("callback {node}");
                if let Some(t) = topic {
                    s += &format!(" topic {t}");
                }
                if let Some(p) = timer_period_ns {
                    s += &format!(" timer {}", units::duration(*p));
                }
                if let Some(v) = service {
                    s += &format!(" service {v}");
                }
                if let Some(y) = symbol {
                    s += &format!(" symbol /{y}/");
                }
                s
            }
            Subject::Topic { topic, publisher, subscriber } => match (publisher, subscriber) {
                (None, None) => format!("topic {topic}"),
                (p, s) => format!(
                    "topic {topic} {} -> {}",
                    p.as_deref().unwrap_or("any publisher"),
                    s.as_deref().unwrap_or("any subscriber")
                ),
            },
            Subject::Path { path, include_first_callback, include_last_callback } => {
                let mut s = format!("path {path}");
                if *include_first_callback {
                    s += " (from the first callback)";
                }
                if *include_last_callback {
                    s += " (to the last callback's end)";
                }
                s
            }
            Subject::Process(p) => format!("process {p}"),
            Subject::Threads(p) => format!("threads of {p}"),
            Subject::Trace => "trace".into(),
        }
    }
}

/// One limit of the file: a metric of a subject, and the range it must be in.
#[derive(Debug, Clone, PartialEq)]
pub struct Expectation {
    /// What it is about.
    pub subject: Subject,
    /// What is measured.
    pub metric: Metric,
    /// The range the measured value must be in.
    pub bound: Bound,
    /// The line of the file where the limit is written.
    pub line: usize,
}

/// Every expectation of a file, in the file's order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Expectations {
    /// The expectations.
    pub items: Vec<Expectation>,
}

/// How an expectation fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The measured value is in the range.
    Pass,
    /// It is not.
    Fail,
    /// The subject, or the metric, is not in the trace: nothing to measure.
    NotInTrace,
}

/// An expectation checked against an analysis.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The subject (see [`Subject::label`]).
    pub subject: String,
    /// The metric (see [`Metric::label`]).
    pub metric: String,
    /// Pass, fail, or not in the trace.
    pub status: Status,
    /// The value measured (the worst one when several callbacks, pairs, processes or threads
    /// match); none when not in the trace.
    pub measured: Option<f64>,
    /// The unit of the value and of the limits.
    pub unit: Unit,
    /// The limits.
    pub limit: Bound,
    /// The line of the expectation in the file.
    pub line: usize,
    /// Why it is not in the trace, or how many matched when several did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Outcome {
    /// What the outcome says after its subject and metric, for people: the value measured and
    /// the limit (`2.00 ms (at most 1.00 ms)`), or `not in the trace` and why.
    pub fn verdict(&self) -> String {
        let note = |sep: &str| self.note.as_ref().map(|n| format!("{sep}{n}")).unwrap_or_default();
        match (self.status, self.measured) {
            (Status::NotInTrace, _) | (_, None) => format!("not in the trace{}", note(": ")),
            (_, Some(m)) => {
                format!("{} ({}{})", units::human(m, self.unit), self.limit.describe(self.unit), note("; "))
            }
        }
    }
}
