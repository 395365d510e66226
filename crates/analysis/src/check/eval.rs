//! Checking expectations against an analysis: each one's value read from the analysis's report
//! (paths followed through its messages with [`crate::paths::PathIndex`]), never measured anew.

use super::model::{Bound, Expectation, Expectations, Metric, Outcome, Status, Subject};
use crate::paths::{Architecture, PathIndex, PathOptions, PathSpec, RecordsSummary};
use crate::report::{CallbackReport, Report, TimeShare};
use crate::Analysis;

/// The values of an expectation's metric, one per thing it matched, or why there is none.
type Values = Result<Vec<f64>, String>;

/// Checks every expectation against `a`, in the file's order. `jobs`: threads following paths
/// (0: one per core).
pub fn evaluate(a: &Analysis, expect: &Expectations, jobs: usize) -> Vec<Outcome> {
    evaluate_followed(a, expect, jobs, None)
}

/// The paths of a streamed analysis's expectations ([`paths_of`]), followed over its recording
/// ([`crate::paths::PathStream`]): each one's summary, by the path as written and its options.
pub type Followed = crate::HashMap<(String, PathOptions), RecordsSummary>;

/// The paths that `expect`'s expectations of paths name, as written, with their options.
pub fn paths_of(expect: &Expectations) -> Vec<(String, PathOptions)> {
    let mut out = Vec::new();
    for e in &expect.items {
        if let Subject::Path { path, include_first_callback, include_last_callback } = &e.subject {
            let opt = PathOptions {
                include_first_callback: *include_first_callback,
                include_last_callback: *include_last_callback,
            };
            if !out.contains(&(path.clone(), opt)) {
                out.push((path.clone(), opt));
            }
        }
    }
    out
}

/// [`evaluate`], the paths of a streamed analysis read from `followed` rather than followed in
/// its tables (it has none).
pub fn evaluate_followed(
    a: &Analysis,
    expect: &Expectations,
    jobs: usize,
    followed: Option<&Followed>,
) -> Vec<Outcome> {
    let mut paths: Option<(Architecture, PathIndex<'_>)> = None;
    expect
        .items
        .iter()
        .map(|e| {
            let values = match &e.subject {
                Subject::Callback { .. } => callback(&a.report, e),
                Subject::Topic { .. } => topic(&a.report, e),
                Subject::Path { .. } => {
                    let (arch, index) = paths.get_or_insert_with(|| {
                        let mut index = PathIndex::new(a);
                        index.set_jobs(jobs);
                        (a.architecture().into_owned(), index)
                    });
                    path(arch, e, |spec, path, opt| match followed {
                        None => index.summary(arch, spec, opt),
                        Some(f) => f.get(&(path.to_string(), opt)).cloned().ok_or_else(|| "not followed".to_string()),
                    })
                }
                Subject::Process(name) => shares(&a.report.per_process, name, "process", e.metric),
                Subject::Threads(name) => shares(&a.report.per_thread, name, "process", e.metric),
                Subject::Trace => Ok(vec![match e.metric {
                    Metric::DiscardedEvents => a.report.discarded_events as f64,
                    _ => a.report.flows_unmatched as f64,
                }]),
            };
            outcome(e, values)
        })
        .collect()
}

/// The outcome of `e` given the values it matched: the worst decides (the one furthest out of
/// the range, else the one nearest its limit).
fn outcome(e: &Expectation, values: Values) -> Outcome {
    let mut o = Outcome {
        subject: e.subject.label(),
        metric: e.metric.label(),
        status: Status::NotInTrace,
        measured: None,
        unit: e.metric.unit(),
        limit: e.bound,
        line: e.line,
        note: None,
    };
    let values = match values {
        Ok(v) if !v.is_empty() => v,
        Ok(_) => return o,
        Err(why) => {
            o.note = Some(why);
            return o;
        }
    };
    let worst = worst(&values, &e.bound);
    o.status = if e.bound.holds(worst) { Status::Pass } else { Status::Fail };
    o.measured = Some(worst);
    if values.len() > 1 {
        o.note = Some(format!("the worst of {}", values.len()));
    }
    o
}

/// The worst of `values` against `b`.
fn worst(values: &[f64], b: &Bound) -> f64 {
    let out = values.iter().copied().max_by(|x, y| b.excess(*x).total_cmp(&b.excess(*y)));
    match out {
        Some(v) if b.excess(v) > 0.0 => v,
        _ if b.high.is_some() => values.iter().copied().fold(f64::MIN, f64::max),
        _ => values.iter().copied().fold(f64::MAX, f64::min),
    }
}

/// Whether callback `c` is one the subject names.
fn matches(s: &Subject, c: &CallbackReport) -> bool {
    let Subject::Callback { node, topic, timer_period_ns, service, symbol } = s else { return false };
    let owner = |kind: &str, want: &Option<String>| {
        want.as_ref().is_none_or(|w| c.kind == kind && c.topic.as_deref() == Some(w.as_str()))
    };
    *c.node == **node
        && owner("subscription", topic)
        && owner("service", service)
        && timer_period_ns.is_none_or(|p| c.timer_period_ns == Some(p))
        && symbol.as_ref().is_none_or(|re| regex_lite::Regex::new(re).is_ok_and(|re| re.is_match(&c.symbol)))
}

fn callback(r: &Report, e: &Expectation) -> Values {
    let cbs: Vec<&CallbackReport> = r.callbacks.iter().filter(|c| matches(&e.subject, c)).collect();
    if cbs.is_empty() {
        return Err("no such callback in the trace".into());
    }
    let stat = |v: Vec<Option<&crate::Stats>>, what: &str, s: super::model::Stat| -> Values {
        let v: Vec<f64> = v.into_iter().flatten().filter(|x| x.count > 0).map(|x| s.of(x)).collect();
        if v.is_empty() {
            Err(format!("no {what} in the trace"))
        } else {
            Ok(v)
        }
    };
    match e.metric {
        Metric::Runs => Ok(cbs.iter().map(|c| c.count as f64).collect()),
        Metric::Duration(s) => stat(cbs.iter().map(|c| Some(&c.duration_ns)).collect(), "completed run", s),
        Metric::Period(s) => stat(cbs.iter().map(|c| Some(&c.period_ns)).collect(), "two runs to time", s),
        Metric::Jitter(s) => stat(
            cbs.iter().map(|c| c.jitter_ns.as_ref()).collect(),
            "timer jitter (a timer with its period traced, run twice)",
            s,
        ),
        _ => Err("not a callback's metric".into()),
    }
}

/// The trace's (or window's) duration, in seconds.
fn span_s(r: &Report) -> Option<f64> {
    let (b, e) = r.window_ns.or(r.begin_ns.zip(r.end_ns))?;
    let (b, e) = (b.max(r.begin_ns.unwrap_or(b)), e.min(r.end_ns.unwrap_or(e)));
    (e > b).then(|| (e - b) as f64 / 1e9)
}

fn topic(r: &Report, e: &Expectation) -> Values {
    let Subject::Topic { topic, publisher, subscriber } = &e.subject else { return Err(String::new()) };
    let t = r.topics.iter().find(|t| *t.name == **topic).ok_or("no such topic in the trace")?;
    let rate = |n: u64| span_s(r).map(|s| n as f64 / s).ok_or_else(|| "the trace has no duration".to_string());
    let latency = |s: &crate::Stats, st: super::model::Stat| -> Result<f64, String> {
        if s.count == 0 {
            Err("no message matched publish to callback (see the analysis's notes)".into())
        } else {
            Ok(st.of(s))
        }
    };
    if publisher.is_none() && subscriber.is_none() {
        return match e.metric {
            Metric::Frequency => Ok(vec![rate(t.publishes)?]),
            Metric::Latency(s) => Ok(vec![latency(&t.pub_to_callback_ns, s)?]),
            Metric::Dropped => match t.dropped {
                Some(d) => Ok(vec![d as f64]),
                None => Err("drops cannot be known: no subscription took a matched message".into()),
            },
            _ => Err("not a topic's metric".into()),
        };
    }
    let pairs: Vec<_> = t
        .pairs
        .iter()
        .filter(|p| publisher.as_ref().is_none_or(|n| *p.publisher_node == **n))
        .filter(|p| subscriber.as_ref().is_none_or(|n| *p.subscription_node == **n))
        .collect();
    if pairs.is_empty() {
        return Err("no matched message between these nodes on this topic".into());
    }
    pairs
        .iter()
        .map(|p| match e.metric {
            Metric::Frequency => rate(p.count),
            Metric::Latency(s) => latency(&p.pub_to_callback_ns, s),
            _ => Err("not a pair's metric".into()),
        })
        .collect()
}

/// The values of expectation `e` of a path, whose summary `summary` gives (from the path parsed,
/// as written, and its options).
fn path(
    arch: &Architecture,
    e: &Expectation,
    summary: impl FnOnce(&PathSpec, &str, PathOptions) -> Result<RecordsSummary, String>,
) -> Values {
    let Subject::Path { path, include_first_callback, include_last_callback } = &e.subject else {
        return Err(String::new());
    };
    let spec = arch.parse_path(path, "path")?;
    let opt =
        PathOptions { include_first_callback: *include_first_callback, include_last_callback: *include_last_callback };
    let s = summary(&spec, path, opt)?;
    let c = s.counts;
    let rate = |n: usize| {
        if c.records == 0 {
            Err(format!("{} published no {} in the trace", spec.nodes[0], spec.topics[0]))
        } else {
            Ok(vec![n as f64 / c.records as f64])
        }
    };
    match e.metric {
        Metric::Latency(st) if s.latency.count > 0 => Ok(vec![st.of(&s.latency)]),
        Metric::Latency(_) => Err("no message went the whole way along the path".into()),
        Metric::DropRate => rate(c.dropped),
        Metric::LostRate => rate(c.lost),
        _ => Err("not a path's metric".into()),
    }
}

fn shares(v: &[TimeShare], name: &str, what: &str, metric: Metric) -> Values {
    let of: Vec<&TimeShare> = v.iter().filter(|s| &*s.name == name).collect();
    if of.is_empty() {
        return Err(format!("no {what} of that name ran callbacks in the trace"));
    }
    Ok(of.iter().map(|s| if metric == Metric::Share { s.share } else { s.busy }).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_value_decides() {
        let at_most = Bound { low: None, high: Some(10.0) };
        assert_eq!(worst(&[3.0, 8.0, 5.0], &at_most), 8.0);
        assert_eq!(worst(&[3.0, 12.0, 30.0], &at_most), 30.0);
        let at_least = Bound { low: Some(10.0), high: None };
        assert_eq!(worst(&[30.0, 12.0], &at_least), 12.0);
        assert_eq!(worst(&[30.0, 2.0, 5.0], &at_least), 2.0);
        let range = Bound { low: Some(9.0), high: Some(11.0) };
        assert_eq!(worst(&[10.0, 8.0, 11.5], &range), 8.0);
    }
}
