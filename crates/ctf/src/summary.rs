//! A trace set at a glance, in one read of every stream file (on several threads): time range,
//! events per name, processes (from the `vpid` and `procname` contexts, as LTTng records them),
//! losses, tracers, and the values of payload fields asked for. babeltrace2's `counter`, and
//! more.

use crate::packet::{Loss, LossKind};
use crate::schema::EnvValue;
use crate::set::TraceSet;
use crate::stream::StreamReader;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A process seen in the event contexts: one process id of one trace, so that copies of a trace
/// or traces of several hosts are distinct processes (the parts of one trace, see
/// [`TraceSet::identities`], are one).
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Process {
    /// Index of its trace in `traces` (the first of its parts).
    pub trace: usize,
    /// Host name of its trace (metadata `hostname`), or "".
    pub host: String,
    /// Virtual pid.
    pub vpid: i64,
    /// Process name.
    pub procname: String,
    /// Events of this process.
    pub events: u64,
}

/// A loss as summarized.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LossOut {
    /// Data stream file.
    pub stream: String,
    /// `events` or `packets`.
    pub kind: &'static str,
    /// How many.
    pub count: u64,
    /// Range start, ns.
    pub begin_ns: Option<i64>,
    /// Range end, ns.
    pub end_ns: Option<i64>,
}

/// The summary of a trace set ([`summarize`]).
#[derive(Debug, Clone)]
pub struct Summary {
    /// CTF traces found.
    pub traces: Vec<String>,
    /// First event time, ns since the Unix epoch.
    pub begin_ns: Option<i64>,
    /// Last event time.
    pub end_ns: Option<i64>,
    /// end - begin, ns.
    pub duration_ns: Option<i64>,
    /// Events in all.
    pub event_count: u64,
    /// Events per name, most frequent first.
    pub events_per_name: Vec<(String, u64)>,
    /// Data stream files.
    pub streams: usize,
    /// Processes, by trace and vpid.
    pub processes: Vec<Process>,
    /// Discarded events in all.
    pub discarded_events: u64,
    /// Lost packets in all.
    pub lost_packets: u64,
    /// Each loss.
    pub losses: Vec<LossOut>,
    /// Per field asked for: its distinct values, in the order first seen in time.
    pub values: Vec<Vec<String>>,
    /// Tracers (from the metadata environment).
    pub tracers: Vec<String>,
    /// Errors met while reading.
    pub errors: Vec<String>,
}

/// What one stream file holds.
#[derive(Default)]
struct StreamSummary {
    n: u64,
    begin: Option<i64>,
    end: Option<i64>,
    /// Events per class index.
    by_class: Vec<u64>,
    /// Per vpid: each process, in the order first seen, and where it is among them.
    procs: Vec<(i64, Seen)>,
    proc_at: HashMap<i64, usize>,
    /// The processes' names, one after the other (one allocation per file, not per process:
    /// the summaries of all files are merged, and their memory freed, on one thread).
    names: String,
    /// Per field asked for: its values, each with the time it was first seen.
    values: Vec<Vec<(i64, String)>>,
    errors: Vec<String>,
    losses: Vec<Loss>,
}

impl StreamSummary {
    /// Where process `vpid` is among `procs`, made when first seen.
    fn at(&mut self, vpid: i64) -> usize {
        *self.proc_at.entry(vpid).or_insert_with(|| {
            self.procs.push((vpid, Seen::default()));
            self.procs.len() - 1
        })
    }

    /// The summary of a file's part `a` followed by its part `b`: as if one reader had read both.
    fn then(mut a: StreamSummary, b: StreamSummary) -> StreamSummary {
        a.n += b.n;
        a.begin = a.begin.into_iter().chain(b.begin).min();
        a.end = a.end.into_iter().chain(b.end).max();
        // (Both parts are of one file: their counts are sized for its trace's classes.)
        for (x, y) in a.by_class.iter_mut().zip(&b.by_class) {
            *x += y;
        }
        for (vpid, seen) in b.procs {
            let at = a.at(vpid);
            let p = &mut a.procs[at].1;
            p.events += seen.events;
            if let (None, Some((t, name))) = (&p.name, seen.name) {
                let start = a.names.len();
                a.names.push_str(&b.names[name]);
                a.procs[at].1.name = Some((t, start..a.names.len()));
            }
        }
        for (list, more) in a.values.iter_mut().zip(b.values) {
            for (t, v) in more {
                if !list.iter().any(|(_, x)| *x == v) {
                    list.push((t, v));
                }
            }
        }
        a.errors.extend(b.errors);
        a.losses.extend(b.losses);
        a
    }
}

/// A process in one stream file: its events, and the first name it was seen with (where in
/// the file's `names`), and when.
#[derive(Default)]
struct Seen {
    events: u64,
    name: Option<(i64, std::ops::Range<usize>)>,
}

/// Where `vpid` and `procname` are in the streams' event contexts: found once per context
/// type instead of by name on every event.
struct CtxFields(crate::positions::Positions<2>);

impl Default for CtxFields {
    fn default() -> Self {
        CtxFields(crate::positions::Positions::new(["vpid", "procname"]))
    }
}

/// The context fields of one event.
enum Ctx<'r> {
    /// In the stream's event context, at these positions.
    At(crate::StructRef<'r>, Option<usize>, Option<usize>),
    /// Found by name (the event has a context of its own, which comes first).
    ByName,
}

impl CtxFields {
    fn of<'r>(&mut self, ev: &crate::Event<'r>) -> Ctx<'r> {
        let (None, Some(c)) = (ev.event_context(), ev.stream_context()) else { return Ctx::ByName };
        let [v, p] = self.0.of(c.ty());
        Ctx::At(c, v, p)
    }
}

impl<'r> Ctx<'r> {
    /// As [`crate::Event::context_field`] finds them.
    fn get(&self, ev: &crate::Event<'r>, vpid: bool) -> Option<crate::FieldValue<'r>> {
        match self {
            Ctx::At(c, v, p) => (if vpid { *v } else { *p }).and_then(|i| c.field_at(i)),
            Ctx::ByName => ev.context_field(if vpid { "vpid" } else { "procname" }),
        }
    }
}

/// Reads one stream file; `wanted` tells per trace and class index which of the fields asked
/// for the class holds (an index into them, and the field's name); `done` counts the bytes read
/// by all, shown by `progress`.
fn summarize_file(
    r: &mut StreamReader<'_>,
    wanted: &[Vec<Option<(usize, &str)>>],
    fields: usize,
    done: &AtomicU64,
    progress: &(dyn Fn(u64) + Sync),
) -> StreamSummary {
    let mut s = StreamSummary {
        by_class: vec![0; wanted[r.trace_index].len()],
        values: vec![Vec::new(); fields],
        ..Default::default()
    };
    let mut ctx = CtxFields::default();
    let mut last: Option<(i64, usize)> = None;
    let mut reported = 0;
    loop {
        let res = r.advance();
        s.losses.append(&mut r.losses);
        match res {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                s.errors.push(e.to_string());
                continue;
            }
        }
        let Some(ev) = r.event() else { continue };
        s.n += 1;
        if s.n.is_multiple_of(65536) {
            let now = r.bytes_done();
            progress(done.fetch_add(now - reported, Relaxed) + now - reported);
            reported = now;
        }
        let t = ev.timestamp();
        if let Some(t) = t {
            s.begin = Some(s.begin.map_or(t, |b: i64| b.min(t)));
            s.end = Some(s.end.map_or(t, |e: i64| e.max(t)));
        }
        let t = t.unwrap_or(i64::MIN);
        let ci = ev.class().index;
        // (Sized for every class of the trace.)
        s.by_class[ci] += 1;
        let cx = ctx.of(&ev);
        if let Some(vpid) = cx.get(&ev, true).and_then(|v| v.as_i64()) {
            // (Most of a file's events follow an event of the same process: it is looked up
            // when the process changes, not at every event.)
            let at = match last {
                Some((v, at)) if v == vpid => at,
                _ => {
                    let at = s.at(vpid);
                    last = Some((vpid, at));
                    at
                }
            };
            let p = &mut s.procs[at].1;
            p.events += 1;
            if p.name.is_none() {
                if let Some(name) = cx.get(&ev, false).and_then(|v| v.as_bytes()).filter(|b| !b.is_empty()) {
                    let start = s.names.len();
                    s.names.push_str(&String::from_utf8_lossy(name));
                    p.name = Some((t, start..s.names.len()));
                }
            }
        }
        let Some((k, field)) = wanted[ev.trace_index()].get(ci).copied().flatten() else { continue };
        let list = &mut s.values[k];
        if let Some(v) = ev.field(field).and_then(|v| v.as_str()) {
            if !list.iter().any(|(_, x)| *x == v) {
                list.push((t, v.into_owned()));
            }
        }
    }
    done.fetch_add(r.bytes_done() - reported, Relaxed);
    s
}

/// Reads the traces once, each stream file on its own (`jobs` threads, 0: all cores), and
/// summarizes them; the same summary whatever the number of threads. `fields`: payload fields
/// whose values to gather, each as (the end of its event class's name, the field's name);
/// `progress(bytes)` is called now and then with the bytes read of [`TraceSet::total_bytes`].
pub fn summarize(set: &TraceSet, fields: &[(&str, &str)], jobs: usize, progress: &(dyn Fn(u64) + Sync)) -> Summary {
    let hosts: Vec<String> = set.traces.iter().map(|t| t.hostname()).collect();
    let done = AtomicU64::new(0);
    let wanted: Vec<Vec<Option<(usize, &str)>>> = set
        .traces
        .iter()
        .map(|t| {
            t.schema.per_class(|ec| fields.iter().position(|(c, _)| ec.name.ends_with(c)).map(|k| (k, fields[k].1)))
        })
        .collect();
    let streams =
        set.map_streams(jobs, |r| summarize_file(r, &wanted, fields.len(), &done, progress), StreamSummary::then);
    let trace_of: Vec<usize> =
        set.traces.iter().enumerate().flat_map(|(ti, t)| std::iter::repeat_n(ti, t.streams.len())).collect();
    // Per trace and class index; by name once all are read.
    let mut per_class: Vec<Vec<u64>> = wanted.iter().map(|c| vec![0; c.len()]).collect();
    // With the time of the name they have.
    let mut procs: BTreeMap<(usize, i64), (Process, i64)> = BTreeMap::new();
    let identity = set.identities();
    let mut values: Vec<Vec<(i64, String)>> = vec![Vec::new(); fields.len()];
    let (mut begin, mut end) = (None, None);
    let mut n = 0u64;
    let mut errors = Vec::new();
    let mut all_losses = Vec::new();
    for (k, mut s) in streams.into_iter().enumerate() {
        let ti = trace_of[k];
        n += s.n;
        begin = s.begin.into_iter().chain(begin).min();
        end = s.end.into_iter().chain(end).max();
        for (x, c) in per_class[ti].iter_mut().zip(&s.by_class) {
            *x += c;
        }
        // (A process is once in a file: the order within one does not matter.)
        for (vpid, seen) in s.procs {
            let ti = identity[ti];
            let (p, first) = procs.entry((ti, vpid)).or_insert_with(|| {
                let p = Process { trace: ti, host: hosts[ti].clone(), vpid, procname: String::new(), events: 0 };
                (p, i64::MAX)
            });
            p.events += seen.events;
            // The name seen first in time (of the earliest stream file, on a tie).
            if let Some((t, name)) = seen.name.filter(|(t, _)| t < first) {
                p.procname = s.names[name].to_string();
                *first = t;
            }
        }
        for (all, mut v) in values.iter_mut().zip(std::mem::take(&mut s.values)) {
            all.append(&mut v);
        }
        errors.append(&mut s.errors);
        all_losses.append(&mut s.losses);
    }
    // In the order first seen in time.
    let firsts = |mut v: Vec<(i64, String)>| {
        v.sort_by_key(|(t, _)| *t);
        let mut out: Vec<String> = Vec::new();
        for (_, x) in v {
            if !out.contains(&x) {
                out.push(x);
            }
        }
        out
    };
    let values = values.into_iter().map(firsts).collect();
    let mut counts: HashMap<&str, u64> = HashMap::new();
    for (t, per_class) in set.traces.iter().zip(&per_class) {
        for ec in t.schema.event_classes() {
            if let Some(c) = per_class.get(ec.index).filter(|c| **c > 0) {
                *counts.entry(&ec.name).or_default() += c;
            }
        }
    }
    let mut per_name: Vec<(String, u64)> = counts.into_iter().map(|(name, c)| (name.to_string(), c)).collect();
    per_name.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let discarded_events = all_losses.iter().map(|l| if let LossKind::Events(c) = l.kind { c } else { 0 }).sum();
    let losses: Vec<LossOut> = all_losses
        .iter()
        .map(|l| {
            let (kind, count) = match l.kind {
                LossKind::Events(c) => ("events", c),
                LossKind::Packets(c) => ("packets", c),
            };
            LossOut { stream: l.path.display().to_string(), kind, count, begin_ns: l.begin_ns, end_ns: l.end_ns }
        })
        .collect();
    let mut tracers = Vec::new();
    for t in &set.traces {
        let g = |k: &str| {
            t.schema.env(k).map(|v| match v {
                EnvValue::Int(i) => i.to_string(),
                EnvValue::Str(s) => s.clone(),
            })
        };
        if let Some(name) = g("tracer_name") {
            let s = format!(
                "{name} {}.{}{}",
                g("tracer_major").unwrap_or_default(),
                g("tracer_minor").unwrap_or_default(),
                g("domain").map(|d| format!(" ({d})")).unwrap_or_default()
            );
            if !tracers.contains(&s) {
                tracers.push(s);
            }
        }
    }
    Summary {
        traces: set.traces.iter().map(|t| t.dir.display().to_string()).collect(),
        begin_ns: begin,
        end_ns: end,
        duration_ns: begin.zip(end).map(|(b, e)| e - b),
        event_count: n,
        events_per_name: per_name,
        streams: set.traces.iter().map(|t| t.streams.len()).sum(),
        processes: procs.into_values().map(|(p, _)| p).collect(),
        discarded_events,
        lost_packets: losses.iter().filter(|l| l.kind == "packets").map(|l| l.count).sum(),
        losses,
        values,
        tracers,
        errors,
    }
}
