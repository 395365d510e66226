//! Recordings of several hosts analysed as one system: each host's clock aligned to a reference
//! host's from the messages they exchange (in one reading: [`crate::Processor::run_aligned`]).
//! Every matched message between
//! two hosts bounds the offset of their clocks: one from the reference host R to host H is taken
//! after it was published, so H's clock minus R's is below `take − publish`; one from H to R
//! bounds it from below, by `publish − take`. With traffic both ways the offset is the middle
//! of the tightest bounds, within half their gap (the convex-hull method of Duda et al. for one
//! constant offset). With traffic one way only, or none, one bound or none is known: the
//! recorded clocks are kept, with a warning. A user whose hosts share a clock (PTP) gives the
//! offsets instead ([`crate::Options::clock_offsets`]).

use crate::clocks::ClockShift;
use crate::pipeline::{Options, Processor};
pub use crate::report::{ClockSource, HostClock};
use crate::services::ServiceHandler;
use rostrace_ctf::TraceSet;

/// The name the alignment gives a host whose traces have no `hostname`.
pub const UNNAMED: &str = "(no hostname)";

/// The host of each trace of `set` ([`TraceSet::hosts`]), named for the reader when unnamed.
fn hosts_of(set: &TraceSet) -> Vec<String> {
    let unnamed = |h: String| if h.is_empty() { UNNAMED.to_string() } else { h };
    set.hosts().into_iter().map(unnamed).collect()
}

/// Whether `set` holds traces of several hosts.
pub(crate) fn several(set: &TraceSet) -> bool {
    let mut names = hosts_of(set);
    names.sort();
    names.dedup();
    names.len() > 1
}

/// Aligns the clocks of the hosts of `set` (when it holds traces of several) to its reference
/// host (the one with the most trace bytes): a first analysis matches the messages, the
/// offsets are estimated or taken from `given` (host name, its clock minus the reference's in
/// ns), and the traces' times are moved. Returns each host's alignment (nothing for one host)
/// and what to warn about. ([`crate::Open`] reads the recordings once instead, moving what the
/// pass made afterwards, when its handlers can: see [`crate::Handler::shifts`].)
pub fn align(set: &mut TraceSet, given: &[(String, i64)], jobs: usize) -> (Vec<HostClock>, Vec<String>) {
    let messages = match several(set) {
        false => Vec::new(),
        true => {
            // The messages (topics' and services' requests and responses): a first analysis of
            // the recorded times.
            let mut p = Processor::new();
            p.add(ServiceHandler::default());
            p.set_jobs(jobs);
            messages(&crate::View::from(&p.linked_only(set)))
        }
    };
    let a = estimate(set, given, messages);
    a.apply(set);
    (a.clocks, a.warnings)
}

/// The messages between traces that an analysis matched, each as (trace sent from, time sent,
/// trace taken by, time taken): the topics' flows, and the services' requests and responses.
pub(crate) fn messages(v: &crate::View<'_>) -> Vec<(u32, i64, u32, i64)> {
    let mut messages: Vec<(u32, i64, u32, i64)> = v
        .flows
        .iter()
        .map(|f| {
            let (p, t) = (&v.pubs[f.publication as usize].publication, &v.takes[f.take as usize].take);
            (p.trace, p.ts, t.trace, t.ts)
        })
        .collect();
    if let Some(calls) = v.handlers.get::<ServiceHandler>() {
        messages.extend(crate::report::exchanged(v.model, calls));
    }
    messages
}

/// The hosts' clocks, as estimated from their messages or given, and how to move each trace's
/// times to the reference host's clock.
pub(crate) struct Alignment {
    /// Each host's alignment (nothing for one host).
    pub(crate) clocks: Vec<HostClock>,
    /// What to warn about.
    pub(crate) warnings: Vec<String>,
    /// Per trace of the set: (offset, drift, at) of [`TraceSet::correct_clocks`], for the traces
    /// that move.
    corrections: Vec<(usize, i64, f64, i64)>,
}

impl Alignment {
    /// Corrects the clocks of the traces of `set` that move; returns how their times move (for
    /// what was read from them before).
    pub(crate) fn apply(&self, set: &mut TraceSet) -> ClockShift {
        let mut moves = vec![None; set.traces.len()];
        for &(ti, offset, drift, at_ns) in &self.corrections {
            moves[ti] = set.clock_correction(ti, offset, drift, at_ns);
            set.correct_clocks(ti, offset, drift, at_ns);
        }
        ClockShift::new(moves)
    }
}

/// The alignment of the hosts of `set` from `messages` (see [`messages`]), or from the offsets
/// `given`.
pub(crate) fn estimate(set: &TraceSet, given: &[(String, i64)], messages: Vec<(u32, i64, u32, i64)>) -> Alignment {
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
        return Alignment { clocks: Vec::new(), warnings, corrections: Vec::new() };
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
            via: None,
        })
        .collect();
    let order: Vec<String> = clocks.iter().map(|c| c.host.clone()).collect();
    let at = |h: &str| order.iter().position(|x| x == h);
    let ri = at(&reference).unwrap_or(0);
    // Per pair of hosts (a < b), their messages as bounds of b's clock minus a's.
    let mut pairs: crate::collections::HashMap<(usize, usize), Samples> = Default::default();
    // The reference's time at which the drifting clocks' offsets are given: its first message.
    let mut first_ts = i64::MAX;
    for (from, sent, to, taken) in messages {
        let (Some(a), Some(b)) = (at(&hosts[from as usize]), at(&hosts[to as usize])) else { continue };
        if a == ri {
            first_ts = first_ts.min(sent);
        } else if b == ri {
            first_ts = first_ts.min(taken);
        }
        match a.cmp(&b) {
            std::cmp::Ordering::Less => pairs.entry((a, b)).or_default().upper.push((sent, taken - sent)),
            std::cmp::Ordering::Greater => pairs.entry((b, a)).or_default().lower.push((taken, sent - taken)),
            std::cmp::Ordering::Equal => {}
        }
    }
    let fits: crate::collections::HashMap<(usize, usize), Fit> = pairs.iter().map(|(k, s)| (*k, fit(s))).collect();
    let paths = tree(clocks.len(), ri, &fits, if first_ts == i64::MAX { 0 } else { first_ts });
    let ms = |ns: i64| format!("{:.3} ms", ns as f64 / 1e6);
    let mut corrections = vec![(0i64, 0.0f64, 0i64); clocks.len()];
    for (i, c) in clocks.iter_mut().enumerate() {
        if i == ri {
            continue;
        }
        // The messages with the reference host: the bounds they give, and their count.
        let direct = pairs.get(&(ri.min(i), ri.max(i))).map(|s| (fit(&oriented(s, ri > i)), s));
        if let Some((f, s)) = &direct {
            (c.lower_ns, c.upper_ns) = (f.lower, f.upper);
            (c.messages_in, c.messages_out) = counts(s, ri, i);
        }
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
        match &paths[i] {
            Some(e) => {
                c.source = ClockSource::Estimated;
                (c.offset_ns, c.error_ns, c.drift_ppm, c.at_ns) =
                    (e.offset_ns, Some(e.error_ns), e.drift * 1e6, (e.drift != 0.0).then_some(e.at_ns));
                corrections[i] = (e.offset_ns, e.drift, e.at_ns);
                if let Some(via) = e.via.filter(|&v| v != ri) {
                    // Aligned through another host: the messages counted are those with it.
                    c.via = Some(order[via].clone());
                    (c.messages_in, c.messages_out) = counts(&pairs[&(via.min(i), via.max(i))], via, i);
                }
                if e.crossed {
                    warnings.push(format!(
                        "host {}: no clock offset and drift fits all its messages{}: messages were matched wrongly, \
                         or its clock jumped; the best fit is used",
                        c.host,
                        c.via.as_ref().map_or(String::new(), |v| format!(" with {v}"))
                    ));
                }
            }
            None => {
                let (n_in, n_out) = (c.messages_in, c.messages_out);
                let said = match (c.lower_ns, c.upper_ns) {
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
                    "host {}: {said}, nor both ways with a host aligned to it; its recorded clock is kept (give \
                     --clock-offset {}=NS if it is known)",
                    c.host, c.host
                ));
            }
        }
    }
    let mut moved = Vec::new();
    for (ti, h) in hosts.iter().enumerate() {
        if let Some(i) = at(h) {
            let (offset, drift, at_ns) = corrections[i];
            if offset != 0 || drift != 0.0 {
                moved.push((ti, offset, drift, at_ns));
            }
        }
    }
    Alignment { clocks, warnings, corrections: moved }
}

impl Processor {
    /// [`Processor::run`] over the traces of several hosts, their clocks aligned to a reference
    /// host's from the messages they exchanged, or by the offsets given
    /// ([`Options::clock_offsets`]; nothing is aligned with [`Options::keep_clocks`]). The
    /// analysis's report says each host's alignment ([`Report::hosts`]). The set's clocks are
    /// corrected: what reads it afterwards reads the aligned times.
    ///
    /// The recordings are read once when they can be: the pass runs on the clocks they
    /// recorded, the clocks are estimated from the messages it matched, and what it made (the
    /// model, the linked tables, the handlers' results) is moved to the aligned clocks. Nothing
    /// the pass links depends on the clocks of two hosts (a message is matched by its source
    /// timestamp). They are read twice (a first pass for the messages only) when the analysis
    /// has a window, when a handler that gets events cannot move its results
    /// ([`Handler::shifts`]), without a [`ServiceHandler`](crate::ServiceHandler), or when
    /// asked to ([`Options::align_in_two_passes`]).
    pub fn run_aligned(
        mut self,
        set: &mut TraceSet,
        options: &Options,
        progress: impl FnMut(u64, u64),
    ) -> crate::Analysis {
        if options.keep_clocks {
            return self.run(set, options, progress);
        }
        let jobs = self.jobs;
        let plan = crate::engine::plan(&mut self.handlers, set);
        let hs = &self.handlers.0;
        let once = several(set)
            && options.window.is_all()
            && !options.align_in_two_passes
            && self.handlers.get::<crate::ServiceHandler>().is_some()
            && hs.iter().zip(&plan.subscribed).all(|(h, s)| !s || h.shifts());
        let (an, linked, alignment) = if once {
            let c = crate::engine::collect_planned(&mut self.handlers, jobs, set, options.window, &plan, progress);
            let (mut tables, mut linked) = crate::link::link(c, rostrace_threads::threads(jobs));
            let messages = messages(&tables.view(&self.handlers));
            let alignment = estimate(set, &options.clock_offsets, messages);
            let by = alignment.apply(set);
            if !by.is_empty() {
                tables.shift(&by);
                linked.shift(&tables, &by);
                for h in &mut self.handlers.0 {
                    h.shift(&by);
                }
            }
            (crate::Analysis::new(tables, self.handlers), linked, (alignment.clocks, alignment.warnings))
        } else {
            let alignment = align(set, &options.clock_offsets, jobs);
            let c = crate::engine::collect_planned(&mut self.handlers, jobs, set, options.window, &plan, progress);
            let (tables, linked) = crate::link::link(c, rostrace_threads::threads(jobs));
            (crate::Analysis::new(tables, self.handlers), linked, alignment)
        };
        let mut an = Processor::report(an, linked, options, jobs);
        an.report.hosts = alignment.0;
        an.report.warnings.splice(0..0, alignment.1);
        an
    }
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

/// A host's clock against the reference host's, composed along the hosts it was aligned
/// through: offset at `at_ns`, drift, error bound (the sum of the steps' bounds).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Aligned {
    offset_ns: i64,
    drift: f64,
    at_ns: i64,
    error_ns: i64,
    /// The host of the last step (the reference, or another host aligned to it).
    via: Option<usize>,
    /// Whether a step's bounds cross (no line fits its messages).
    crossed: bool,
}

/// The messages of a pair's samples `s` from host `from` to host `to`, and back.
fn counts(s: &Samples, from: usize, to: usize) -> (u64, u64) {
    // The pair's upper bounds are its messages from its first host to its second.
    let (forth, back) = (s.upper.len() as u64, s.lower.len() as u64);
    if from < to {
        (forth, back)
    } else {
        (back, forth)
    }
}

/// Samples of the pair (a, b) as bounds of a's clock minus b's (`flip`) or as they are (b's
/// minus a's).
fn oriented(s: &Samples, flip: bool) -> Samples {
    match flip {
        false => s.clone(),
        true => Samples {
            upper: s.lower.iter().map(|&(t, d)| (t, -d)).collect(),
            lower: s.upper.iter().map(|&(t, d)| (t, -d)).collect(),
        },
    }
}

/// Each host's clock against the reference host `r`'s: along the path of pairs that exchanged
/// messages both ways (an estimate each) with the least sum of error bounds, from `r` (Dijkstra);
/// `None` for a host with no such path. Offsets at `t0`, a time of the reference's clock (ns).
fn tree(n: usize, r: usize, fits: &crate::collections::HashMap<(usize, usize), Fit>, t0: i64) -> Vec<Option<Aligned>> {
    // The estimate of v's clock minus u's at t0, u's own minus the reference's being `bu`. A
    // pair's line is of the time on its first host's clock: t0 on u's clock, or on v's.
    let step = |u: usize, v: usize, bu: &Aligned| -> Option<Aligned> {
        let e = fits.get(&(u.min(v), u.max(v)))?.estimate?;
        let line = |t: f64| e.offset_ns as f64 + e.drift * (t - e.at_ns as f64);
        let t_u = t0 as f64 + bu.offset_ns as f64;
        let (offset, drift) = match u < v {
            true => (line(t_u), e.drift),
            // The pair's line is u's clock minus v's, of v's time t_v = t_u − line(t_v): a few
            // steps to it (each closer by the drift's factor).
            false => {
                let t_v = (0..4).fold(t_u, |t, _| t_u - line(t));
                (-line(t_v), -e.drift)
            }
        };
        Some(Aligned {
            offset_ns: offset.round() as i64,
            drift,
            at_ns: t0,
            error_ns: e.error_ns.abs(),
            via: Some(u),
            crossed: e.error_ns < 0,
        })
    };
    let mut best: Vec<Option<Aligned>> = vec![None; n];
    let mut done = vec![false; n];
    best[r] = Some(Aligned { offset_ns: 0, drift: 0.0, at_ns: t0, error_ns: 0, via: None, crossed: false });
    while let Some(u) = (0..n).filter(|&u| !done[u] && best[u].is_some()).min_by_key(|&u| best[u].map(|b| b.error_ns)) {
        done[u] = true;
        let Some(bu) = best[u] else { continue };
        for v in (0..n).filter(|&v| !done[v]) {
            let Some(s) = step(u, v, &bu) else { continue };
            let through = Aligned {
                offset_ns: bu.offset_ns + s.offset_ns,
                drift: bu.drift + s.drift,
                at_ns: t0,
                error_ns: bu.error_ns + s.error_ns,
                via: Some(u),
                crossed: s.crossed,
            };
            if best[v].is_none_or(|b| through.error_ns < b.error_ns) {
                best[v] = Some(through);
            }
        }
    }
    best[r] = None;
    // A constant offset is given at no particular time.
    for b in best.iter_mut().flatten() {
        if b.drift == 0.0 {
            b.at_ns = 0;
        }
    }
    best
}

/// The messages between two hosts a and b (a first in the hosts' order), as bounds of b's clock
/// minus a's: from a to b, (the time sent, take − publish: an upper bound of the offset then);
/// from b to a, (the time taken, publish − take: a lower bound). Times on a's clock.
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
    fn a_host_that_talks_both_ways_only_with_another_is_aligned_through_it() {
        // Host 1 is 37 ms ahead of the reference 0; host 2 is 5 ms behind host 1 and only
        // receives from the reference.
        let mut fits = crate::collections::HashMap::default();
        fits.insert((0, 1), fit(&samples(37e6, 0.0, 5, true)));
        fits.insert((1, 2), fit(&samples(-5e6, 0.0, 5, true)));
        fits.insert((0, 2), fit(&samples(32e6, 0.0, 5, false)));
        let t = tree(3, 0, &fits, 1_000_000_000);
        assert_eq!(t[0], None);
        let (a, c) = (t[1].unwrap(), t[2].unwrap());
        assert_eq!((a.via, c.via), (Some(0), Some(1)));
        let step = fits[&(1, 2)].estimate.unwrap().error_ns;
        assert_eq!(c.error_ns, a.error_ns + step);
        assert!((a.offset_ns - 37_000_000).abs() <= a.error_ns, "{a:?}");
        assert!((c.offset_ns - 32_000_000).abs() <= c.error_ns, "{c:?}");
        // The reference last in the hosts' order: each pair read the other way. Host 1 is the
        // reference's clock 37 ms behind; host 0, 5 ms behind host 1.
        let mut fits = crate::collections::HashMap::default();
        fits.insert((1, 2), fit(&samples(37e6, 0.0, 5, true)));
        fits.insert((0, 1), fit(&samples(5e6, 0.0, 5, true)));
        let t = tree(3, 2, &fits, 1_000_000_000);
        let (a, c) = (t[1].unwrap(), t[0].unwrap());
        assert_eq!((a.via, c.via, t[2]), (Some(2), Some(1), None));
        assert!((a.offset_ns + 37_000_000).abs() <= a.error_ns, "{a:?}");
        assert!((c.offset_ns + 42_000_000).abs() <= c.error_ns, "{c:?}");
        // No pair both ways: not aligned.
        let mut fits = crate::collections::HashMap::default();
        fits.insert((0, 1), fit(&samples(37e6, 0.0, 5, false)));
        assert_eq!(tree(2, 0, &fits, 0), vec![None, None]);
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
