//! Reading an expectation file: each section's entries, each limit with its line; an unknown
//! key, a missing subject or a value of the wrong kind is an error naming the line and the key.

use super::model::{Bound, Expectation, Expectations, Metric, Stat, Subject};
use super::units;
use crate::yaml_io::{entries, get, seq, text, tree, Entry, Node, Value};

/// The sections of the file.
const SECTIONS: [&str; 6] = ["callbacks", "topics", "paths", "processes", "threads", "trace"];

/// What an entry of a section may hold: its subject's keys, then its metrics' keys.
struct Keys {
    what: &'static str,
    subject: &'static [&'static str],
    /// Metric keys: each a value (or `[low, high]`), or a mapping of statistics.
    metrics: &'static [(&'static str, Kind)],
}

/// How a metric key is written.
#[derive(Clone, Copy)]
enum Kind {
    One(Metric),
    Stats(fn(Stat) -> Metric),
}

const CALLBACK: Keys = Keys {
    what: "a callback",
    subject: &["node", "topic", "timer_period", "service", "symbol"],
    metrics: &[
        ("runs", Kind::One(Metric::Runs)),
        ("duration", Kind::Stats(Metric::Duration)),
        ("period", Kind::Stats(Metric::Period)),
        ("jitter", Kind::Stats(Metric::Jitter)),
    ],
};

const TOPIC: Keys = Keys {
    what: "a topic",
    subject: &["topic", "publisher", "subscriber"],
    metrics: &[
        ("frequency", Kind::One(Metric::Frequency)),
        ("latency", Kind::Stats(Metric::Latency)),
        ("dropped", Kind::One(Metric::Dropped)),
    ],
};

const PATH: Keys = Keys {
    what: "a path",
    subject: &["path", "include_first_callback", "include_last_callback"],
    metrics: &[
        ("latency", Kind::Stats(Metric::Latency)),
        ("drop_rate", Kind::One(Metric::DropRate)),
        ("lost_rate", Kind::One(Metric::LostRate)),
    ],
};

const PROCESS: Keys = Keys {
    what: "a process",
    subject: &["process"],
    metrics: &[("busy", Kind::One(Metric::Busy)), ("share", Kind::One(Metric::Share))],
};

const THREADS: Keys = Keys { what: "the threads of a process", ..PROCESS };

const TRACE: Keys = Keys {
    what: "`trace`",
    subject: &[],
    metrics: &[
        ("discarded_events", Kind::One(Metric::DiscardedEvents)),
        ("unmatched_takes", Kind::One(Metric::UnmatchedTakes)),
    ],
};

/// Reads an expectation file (see the module's documentation for its form).
pub fn parse(src: &str) -> Result<Expectations, String> {
    let mut out = Expectations::default();
    let Some(root) = tree(src, "an expectation file")?.filter(|r| !r.is_null()) else { return Ok(out) };
    let top = entries(&root, "the expectation file")?;
    once(top)?;
    if let Some(e) = top.iter().find(|e| !SECTIONS.contains(&e.key.as_str())) {
        return Err(format!("line {}: unknown key `{}` (the sections are {})", e.line, e.key, SECTIONS.join(", ")));
    }
    for (section, keys) in [("callbacks", &CALLBACK), ("topics", &TOPIC), ("paths", &PATH), ("processes", &PROCESS)] {
        for n in seq(top, section)? {
            let m = entries(n, keys.what)?;
            let subject = match section {
                "callbacks" => callback(m, n.line)?,
                "topics" => topic(m, n.line)?,
                "paths" => path(m, n.line)?,
                _ => Subject::Process(required(m, "process", n.line, keys.what)?),
            };
            limits(m, keys, &subject, &mut out)?;
        }
    }
    for n in seq(top, "threads")? {
        let m = entries(n, THREADS.what)?;
        let subject = Subject::Threads(required(m, "process", n.line, THREADS.what)?);
        limits(m, &THREADS, &subject, &mut out)?;
    }
    if let Some(t) = get(top, "trace").filter(|t| !t.value.is_null()) {
        limits(entries(&t.value, "`trace`")?, &TRACE, &Subject::Trace, &mut out)?;
    }
    Ok(out)
}

/// The text under `key`, which the entry `what` starting on `line` must have.
fn required(m: &[Entry], key: &str, line: usize, what: &str) -> Result<String, String> {
    text(m, key)?.filter(|t| !t.is_empty()).ok_or_else(|| format!("line {line}: {what} without `{key}`"))
}

/// A `true`/`false` under `key` (false when missing).
fn flag(m: &[Entry], key: &str) -> Result<bool, String> {
    match text(m, key)?.as_deref() {
        None | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(v) => Err(format!("line {}: `{key}`: {v:?} is not true or false", get(m, key).map_or(0, |e| e.line))),
    }
}

fn callback(m: &[Entry], line: usize) -> Result<Subject, String> {
    let node = required(m, "node", line, "a callback")?;
    let timer_period_ns = match (text(m, "timer_period")?, get(m, "timer_period")) {
        (Some(t), Some(e)) => {
            Some(units::parse(&t, units::Unit::Ns).map_err(|err| format!("line {}: `timer_period`: {err}", e.line))?
                as i64)
        }
        _ => None,
    };
    let symbol = text(m, "symbol")?;
    if let (Some(s), Some(e)) = (&symbol, get(m, "symbol")) {
        regex_lite::Regex::new(s)
            .map_err(|err| format!("line {}: `symbol`: not a regular expression: {err}", e.line))?;
    }
    Ok(Subject::Callback { node, topic: text(m, "topic")?, timer_period_ns, service: text(m, "service")?, symbol })
}

fn topic(m: &[Entry], line: usize) -> Result<Subject, String> {
    let topic = required(m, "topic", line, "a topic")?;
    let (publisher, subscriber) = (text(m, "publisher")?, text(m, "subscriber")?);
    if publisher.is_some() || subscriber.is_some() {
        if let Some(e) = get(m, "dropped") {
            return Err(format!(
                "line {}: `dropped` is counted per topic, not per publisher and subscriber: \
                 write it in an entry without `publisher` and `subscriber`",
                e.line
            ));
        }
    }
    Ok(Subject::Topic { topic, publisher, subscriber })
}

fn path(m: &[Entry], line: usize) -> Result<Subject, String> {
    Ok(Subject::Path {
        path: required(m, "path", line, "a path")?,
        include_first_callback: flag(m, "include_first_callback")?,
        include_last_callback: flag(m, "include_last_callback")?,
    })
}

/// The limits of an entry, each an expectation about `subject`; any other key is an error.
fn limits(m: &[Entry], keys: &Keys, subject: &Subject, out: &mut Expectations) -> Result<(), String> {
    once(m)?;
    for e in m {
        if keys.subject.contains(&e.key.as_str()) {
            continue;
        }
        let Some((_, kind)) = keys.metrics.iter().find(|(k, _)| *k == e.key) else {
            let all: Vec<&str> = keys.subject.iter().copied().chain(keys.metrics.iter().map(|(k, _)| *k)).collect();
            return Err(format!(
                "line {}: unknown key `{}` in {} (it may have {})",
                e.line,
                e.key,
                keys.what,
                all.join(", ")
            ));
        };
        let mut push = |metric: Metric, node: &Node, key: &str| -> Result<(), String> {
            let bound = bound(node, metric).map_err(|err| format!("line {}: `{key}`: {err}", node.line))?;
            out.items.push(Expectation { subject: subject.clone(), metric, bound, line: node.line });
            Ok(())
        };
        match *kind {
            Kind::One(metric) => push(metric, &e.value, &e.key)?,
            Kind::Stats(f) => {
                let stats = entries(&e.value, &format!("`{}` (a mapping of p50, p99, max, ...)", e.key))?;
                once(stats)?;
                for s in stats {
                    let Some((_, stat)) = Stat::ALL.iter().find(|(k, _)| *k == s.key) else {
                        let names: Vec<&str> = Stat::ALL.iter().map(|(k, _)| *k).collect();
                        return Err(format!(
                            "line {}: unknown key `{}` in `{}` (it may have {})",
                            s.line,
                            s.key,
                            e.key,
                            names.join(", ")
                        ));
                    };
                    push(f(*stat), &s.value, &format!("{}.{}", e.key, s.key))?;
                }
            }
        }
    }
    Ok(())
}

/// No key twice in a mapping: in an expectation file that is a mistake, not an override.
fn once(m: &[Entry]) -> Result<(), String> {
    for (i, e) in m.iter().enumerate() {
        if let Some(first) = m[..i].iter().find(|f| f.key == e.key) {
            return Err(format!("line {}: `{}` given twice (first on line {})", e.line, e.key, first.line));
        }
    }
    Ok(())
}

/// A limit: one value (a lower limit for runs and frequency, an upper one otherwise), or
/// `[low, high]` with `~` for an open end.
fn bound(n: &Node, metric: Metric) -> Result<Bound, String> {
    let unit = metric.unit();
    let one = |n: &Node| -> Result<Option<f64>, String> {
        match &n.value {
            _ if n.is_null() => Ok(None),
            Value::Scalar(t, _) => units::parse(t, unit).map(Some),
            _ => Err(format!("a limit is a value or [low, high], not {}", n.kind())),
        }
    };
    match &n.value {
        Value::Seq(v) if v.len() == 2 => {
            let (low, high) = (one(&v[0])?, one(&v[1])?);
            if let (Some(l), Some(h)) = (low, high) {
                if l > h {
                    return Err("[low, high] with low above high".into());
                }
            }
            Ok(Bound { low, high })
        }
        Value::Seq(_) => Err("a range is two values, [low, high] (~ for an open end)".into()),
        _ => {
            let v = one(n)?.ok_or("the limit is empty")?;
            Ok(if metric.at_least() { Bound { low: Some(v), high: None } } else { Bound { low: None, high: Some(v) } })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_section() {
        let e = parse(
            "callbacks:\n- node: /a\n  topic: /t\n  runs: 10\n  duration: {p50: 1ms, p99: [~, 2ms]}\n\
             topics:\n- topic: /t\n  frequency: [9, 11 Hz]\n  dropped: 0\n\
             - topic: /t\n  publisher: /a\n  subscriber: /b\n  latency: {max: 5ms}\n\
             paths:\n- path: /a,/b\n  include_last_callback: true\n  drop_rate: 10%\n\
             processes:\n- process: p\n  busy: 0.5\nthreads:\n- process: p\n  share: 0.9\n\
             trace:\n  discarded_events: 0\n",
        )
        .unwrap();
        let got: Vec<(Metric, Bound, usize)> = e.items.iter().map(|x| (x.metric, x.bound, x.line)).collect();
        let b = |low: Option<f64>, high: Option<f64>| Bound { low, high };
        assert_eq!(
            got,
            vec![
                (Metric::Runs, b(Some(10.0), None), 4),
                (Metric::Duration(Stat::P50), b(None, Some(1e6)), 5),
                (Metric::Duration(Stat::P99), b(None, Some(2e6)), 5),
                (Metric::Frequency, b(Some(9.0), Some(11.0)), 8),
                (Metric::Dropped, b(None, Some(0.0)), 9),
                (Metric::Latency(Stat::Max), b(None, Some(5e6)), 13),
                (Metric::DropRate, b(None, Some(0.1)), 17),
                (Metric::Busy, b(None, Some(0.5)), 20),
                (Metric::Share, b(None, Some(0.9)), 23),
                (Metric::DiscardedEvents, b(None, Some(0.0)), 25),
            ]
        );
        assert!(matches!(&e.items[6].subject, Subject::Path { include_last_callback: true, .. }));
        assert_eq!(e.items[8].subject, Subject::Threads("p".into()));
        assert_eq!(parse("").unwrap(), Expectations::default());
    }

    #[test]
    fn errors_name_the_line_and_the_key() {
        let err = |s: &str| parse(s).unwrap_err();
        assert_eq!(
            err("callbacks:\n- node: /a\n  durations: {p99: 1ms}\n"),
            "line 3: unknown key `durations` in a callback (it may have node, topic, timer_period, service, symbol, \
             runs, duration, period, jitter)"
        );
        assert!(err("callbacks:\n- node: /a\n  duration: {p99: 5}\n").starts_with("line 3: `duration.p99`: \"5\""));
        assert!(err("callbacks:\n- node: /a\n  duration: {p95: 5ms}\n").starts_with("line 3: unknown key `p95`"));
        assert!(err("callbacks:\n- topic: /t\n").starts_with("line 2: a callback without `node`"));
        assert!(err("topics:\n- topic: /t\n  publisher: /a\n  dropped: 0\n").starts_with("line 4: `dropped`"));
        assert!(err("tpoics: []\n").starts_with("line 1: unknown key `tpoics`"));
        assert!(err("trace:\n  discarded_events: [3, 1]\n").starts_with("line 2: `discarded_events`: [low, high]"));
        assert!(err("callbacks:\n- node: /a\n  symbol: '('\n").starts_with("line 3: `symbol`"));
        assert!(err("paths: [1\n").starts_with("line 2"));
        assert_eq!(
            err("trace:\n  unmatched_takes: 0\n  unmatched_takes: 1\n"),
            "line 3: `unmatched_takes` given twice (first on line 2)"
        );
    }
}
