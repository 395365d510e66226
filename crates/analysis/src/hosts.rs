//! Recordings of several hosts analysed as one system: each host's clock aligned to a reference
//! host's before the analysis, from the messages they exchange. Every matched message between
//! two hosts bounds the offset of their clocks: one from the reference host R to host H is taken
//! after it was published, so H's clock minus R's is below `take − publish`; one from H to R
//! bounds it from below, by `publish − take`. With traffic both ways the offset is the middle
//! of the tightest bounds, within half their gap (the convex-hull method of Duda et al. for one
//! constant offset). With traffic one way only, or none, one bound or none is known: the
//! recorded clocks are kept, with a warning. A user whose hosts share a clock (PTP) gives the
//! offsets instead ([`crate::Options::clock_offsets`]).

use crate::pipeline::Processor;
pub use crate::report::{ClockSource, HostClock};
use crate::services::ServiceHandler;
use rostrace_ctf::TraceSet;

/// The host of each trace of `set` ([`TraceSet::hosts`]), named for the reader when unnamed.
fn hosts_of(set: &TraceSet) -> Vec<String> {
    let unnamed = |h: String| if h.is_empty() { "(no hostname)".to_string() } else { h };
    set.hosts().into_iter().map(unnamed).collect()
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
            trace_ids: (0..hosts.len() as u32).filter(|&ti| hosts[ti as usize] == *h).collect(),
            source: if *h == reference { ClockSource::Reference } else { ClockSource::Recorded },
            offset_ns: 0,
            lower_ns: None,
            upper_ns: None,
            error_ns: None,
            drift_ppm: 0.0,
            at_ns: None,
            messages_in: 0,
            messages_out: 0,
        })
        .collect();
    // The messages (topics' and services' requests and responses): a first analysis of the
    // recorded times.
    let mut p = Processor::new();
    p.add(ServiceHandler::default());
    p.set_jobs(jobs);
    let first = p.linked_only(set);
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
    let order: Vec<String> = clocks.iter().map(|c| c.host.clone()).collect();
    let at = |h: &str| order.iter().position(|x| x == h);
    let ri = at(&reference).unwrap_or(0);
    // Per host, its messages with the reference host: (time on the reference's clock, bound).
    let mut samples: Vec<Samples> = vec![Samples::default(); clocks.len()];
    for (from, sent, to, taken) in messages {
        match (at(&hosts[from as usize]), at(&hosts[to as usize])) {
            (Some(a), Some(b)) if a == ri && b != ri => samples[b].upper.push((sent, taken - sent)),
            (Some(a), Some(b)) if b == ri && a != ri => samples[a].lower.push((taken, sent - taken)),
            _ => {}
        }
    }
    let ms = |ns: i64| format!("{:.3} ms", ns as f64 / 1e6);
    let mut corrections = vec![(0i64, 0.0f64, 0i64); clocks.len()];
    for (i, c) in clocks.iter_mut().enumerate() {
        if i == ri {
            continue;
        }
        let f = fit(&samples[i]);
        (c.messages_in, c.messages_out) = (samples[i].upper.len() as u64, samples[i].lower.len() as u64);
        (c.lower_ns, c.upper_ns) = (f.lower, f.upper);
        if let Some((_, ns)) = given.iter().find(|(h, _)| *h == c.host) {
            (c.source, c.offset_ns) = (ClockSource::Given, *ns);
            corrections[i] = (*ns, 0.0, 0);
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
        match f.estimate {
            Some(e) => {
                c.source = ClockSource::Estimated;
                (c.offset_ns, c.error_ns, c.drift_ppm, c.at_ns) =
                    (e.offset_ns, Some(e.error_ns), e.drift * 1e6, (e.drift != 0.0).then_some(e.at_ns));
                corrections[i] = (e.offset_ns, e.drift, e.at_ns);
                if e.error_ns < 0 {
                    warnings.push(format!(
                        "host {}: no clock offset and drift fits all its messages (they miss by {}): messages were \
                         matched wrongly, or its clock jumped; the best fit is used",
                        c.host,
                        ms(-e.error_ns)
                    ));
                }
            }
            None => {
                let (n_in, n_out) = (c.messages_in, c.messages_out);
                let said = match (f.lower, f.upper) {
                    (None, Some(u)) => format!(
                        "one-sided: only messages from {reference} to it ({n_in}): its clock is at most {} ahead of {reference}'s{}",
                        ms(u),
                        if u < 0 { ", so its recorded times make those messages arrive before they were sent" } else { "" }
                    ),
                    (Some(l), None) => format!(
                        "one-sided: only messages from it to {reference} ({n_out}): its clock is at least {} ahead of {reference}'s{}",
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
        if let Some(i) = at(h) {
            let (offset, drift, at_ns) = corrections[i];
            if offset != 0 || drift != 0.0 {
                set.correct_clocks(ti, offset, drift, at_ns);
            }
        }
    }
    (clocks, warnings)
}

/// What the alignment of the hosts' clocks leaves uncertain in the latency of a path: the
/// crossings of the path from a node of one host to a node of another, and the bound of the
/// error that adds to each record's latency (the error bounds of both hosts' offsets at each
/// crossing; a given offset counts as exact). `None` for the bound when a crossing involves a
/// host whose clock could not be aligned (its recorded clock kept).
pub fn path_uncertainty(a: &crate::Analysis, nodes: &[String]) -> (usize, Option<i64>) {
    let hosts = &a.report.hosts;
    let host_of = |name: &str| -> Option<&HostClock> {
        let node = a.model.nodes.items.iter().find(|n| n.full_name() == name)?;
        hosts.iter().find(|h| h.trace_ids.contains(&node.key.0))
    };
    let error = |h: &HostClock| match h.source {
        ClockSource::Reference | ClockSource::Given => Some(0),
        ClockSource::Estimated => h.error_ns.map(i64::abs),
        ClockSource::Recorded => None,
    };
    let (mut crossings, mut bound) = (0, Some(0i64));
    for w in nodes.windows(2) {
        if let (Some(x), Some(y)) = (host_of(&w[0]), host_of(&w[1])) {
            if x.host != y.host {
                crossings += 1;
                bound = bound.zip(error(x)).zip(error(y)).map(|((b, e1), e2)| b + e1 + e2);
            }
        }
    }
    (crossings, bound)
}

/// A host's messages with the reference host: from the reference, (the time sent, take −
/// publish: an upper bound of the offset then); to it, (the time taken, publish − take: a lower
/// bound). Times on the reference's clock.
#[derive(Debug, Clone, Default)]
struct Samples {
    upper: Vec<(i64, i64)>,
    lower: Vec<(i64, i64)>,
}

/// An offset and drift that fit the messages.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Estimate {
    /// The offset at `at_ns` (ns).
    offset_ns: i64,
    /// Drift, a fraction (0 when a constant offset fits).
    drift: f64,
    at_ns: i64,
    /// Half the gap between the bounds along the fitted line (negative: no line fits them all).
    error_ns: i64,
}

/// What the messages tell of a host's clock: the constant offset's bounds (each when messages
/// go that way), and an estimate when they go both ways.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Fit {
    lower: Option<i64>,
    upper: Option<i64>,
    estimate: Option<Estimate>,
}

/// The widest drift searched: 2000 ppm (clocks without NTP drift by tens of ppm).
const MAX_DRIFT: f64 = 2e-3;

/// Fits the offset to the bounds: a constant offset, the middle of the tightest bounds, when it
/// fits them (the lower below the upper); else the line of the widest gap between the bounds
/// (a drifting clock: the gap is a concave function of the slope, searched by ternary search),
/// in the middle of the gap.
fn fit(s: &Samples) -> Fit {
    let lower = s.lower.iter().map(|x| x.1).max();
    let upper = s.upper.iter().map(|x| x.1).min();
    let estimate = match (lower, upper) {
        (Some(l), Some(u)) if l <= u => {
            Some(Estimate { offset_ns: l + (u - l) / 2, drift: 0.0, at_ns: 0, error_ns: (u - l) / 2 })
        }
        (Some(_), Some(_)) => {
            let at = s.upper.iter().chain(&s.lower).map(|x| x.0).min().unwrap_or(0);
            // For a slope r: the tightest upper and lower bounds of the offset at `at`.
            let edges = |r: f64| {
                let rel = |t: i64| (t - at) as f64;
                let u = s.upper.iter().map(|&(t, d)| d as f64 - r * rel(t)).fold(f64::INFINITY, f64::min);
                let l = s.lower.iter().map(|&(t, e)| e as f64 - r * rel(t)).fold(f64::NEG_INFINITY, f64::max);
                (l, u)
            };
            let gap = |r: f64| {
                let (l, u) = edges(r);
                u - l
            };
            let (mut a, mut b) = (-MAX_DRIFT, MAX_DRIFT);
            for _ in 0..200 {
                let (m1, m2) = (a + (b - a) / 3.0, b - (b - a) / 3.0);
                if gap(m1) < gap(m2) {
                    a = m1;
                } else {
                    b = m2;
                }
            }
            let r = (a + b) / 2.0;
            let (l, u) = edges(r);
            Some(Estimate {
                offset_ns: ((l + u) / 2.0).round() as i64,
                drift: r,
                at_ns: at,
                error_ns: ((u - l) / 2.0) as i64,
            })
        }
        _ => None,
    };
    Fit { lower, upper, estimate }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Messages every 10 ms for `secs` s both ways with latencies of 100 to 300 us, on a clock
    /// `offset` ahead and `drift` fast.
    fn samples(offset: f64, drift: f64, secs: i64, both: bool) -> Samples {
        let mut s = Samples::default();
        for k in 0..secs * 100 {
            let t = 1_000_000_000 + k * 10_000_000;
            let latency = 100_000 + (k * 7919 % 200_000);
            let theta = |t: i64| offset + drift * (t - 1_000_000_000) as f64;
            // From the reference: taken at t + latency on its clock, that + theta on the host's.
            s.upper.push((t, (latency as f64 + theta(t + latency)) as i64));
            if both {
                s.lower.push((t + latency, (theta(t) - latency as f64) as i64));
            }
        }
        s
    }

    #[test]
    fn a_constant_offset_is_found_within_its_bound() {
        let f = fit(&samples(-2.5e9, 0.0, 5, true));
        let e = f.estimate.unwrap();
        assert_eq!(e.drift, 0.0);
        assert!((e.offset_ns + 2_500_000_000).abs() <= e.error_ns && e.error_ns <= 100_000, "{e:?}");
    }

    #[test]
    fn a_drift_is_found_when_no_constant_offset_fits() {
        // 50 ppm over an hour: 180 ms.
        let f = fit(&samples(37e6, 50e-6, 3600, true));
        assert!(f.lower.unwrap() > f.upper.unwrap(), "{f:?}");
        let e = f.estimate.unwrap();
        assert!((e.drift * 1e6 - 50.0).abs() < 0.5, "{e:?}");
        assert!((e.offset_ns - 37_000_000).abs() <= e.error_ns.max(0) + 1000 && e.error_ns >= 0, "{e:?}");
    }

    #[test]
    fn one_way_messages_give_one_bound_and_no_estimate() {
        let f = fit(&samples(5e6, 0.0, 5, false));
        assert_eq!((f.lower, f.estimate), (None, None));
        assert!(f.upper.is_some_and(|u| u >= 5_000_000 + 100_000), "{f:?}");
        let none = fit(&Samples::default());
        assert_eq!(none, Fit { lower: None, upper: None, estimate: None });
    }
}
