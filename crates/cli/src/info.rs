//! `rostrace info`: what a trace holds, at a glance.

use crate::format::name as esc;
use crate::out::outln;
use crate::progress::Progress;
use crate::TraceArgs;
use ctf::{Loss, LossKind, TraceSet};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Arguments of `rostrace info`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    traces: TraceArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// A process seen in the event contexts: one process id of one trace (as `rostrace analyze`
/// counts them), so that copies of a trace or traces of several hosts are distinct processes.
#[derive(Serialize, Clone)]
pub struct Process {
    /// Index of its trace in `traces`.
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

/// A loss as reported.
#[derive(Serialize)]
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

/// The summary.
#[derive(Serialize)]
pub struct Info {
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
    /// tracetools versions from `rcl_init`.
    pub tracetools_versions: Vec<String>,
    /// ROS 2 distributions (from `caret_init`, or guessed from the tracetools version).
    pub ros_distros: Vec<String>,
    /// Tracers (from the metadata environment).
    pub tracers: Vec<String>,
    /// Errors met while reading.
    pub errors: Vec<String>,
}

/// The ROS 2 distribution a tracetools version belongs to.
pub fn distro_of(version: &str) -> Option<&'static str> {
    let mut it = version.split('.').map(|p| p.parse::<u32>().ok());
    let major = it.next()??;
    let minor = it.next().flatten().unwrap_or(0);
    Some(match (major, minor) {
        (0, _) => "Dashing/Eloquent",
        (1, _) => "Foxy",
        (2, _) => "Galactic",
        (3, _) => "Rolling (before Humble)",
        (4, _) => "Humble",
        (5, _) => "Rolling (before Iron)",
        (6, _) => "Iron",
        (7, _) => "Rolling (before Jazzy)",
        (8, 0..=2) => "Jazzy",
        (8, 3..=4) => "Rolling (before Kilted)",
        (8, 5..=6) => "Kilted",
        _ => "Rolling",
    })
}

/// The noun `what` (singular), in the plural unless `n` is 1 ("process", "processes").
pub fn noun(n: u64, what: &str) -> String {
    if n == 1 {
        what.to_string()
    } else if what.ends_with('s') {
        format!("{what}es")
    } else {
        format!("{what}s")
    }
}

/// `n` and `what`, in the plural unless `n` is 1 ("1 process", "2 processes").
pub fn count(n: u64, what: &str) -> String {
    format!("{n} {}", noun(n, what))
}

/// One line describing a loss.
pub fn describe_loss(l: &Loss) -> String {
    let what = match l.kind {
        LossKind::Events(n) => format!("{} discarded", count(n, "event")),
        LossKind::Packets(n) => format!("{} lost", count(n, "packet")),
    };
    let range = match (l.begin_ns, l.end_ns) {
        (Some(b), Some(e)) => format!(" between {} and {}", crate::format::clock_time(b), crate::format::clock_time(e)),
        (None, Some(e)) => format!(" before {}", crate::format::clock_time(e)),
        _ => String::new(),
    };
    format!("{}: {what}{range}", l.path.display())
}

/// What one stream file holds.
#[derive(Default)]
struct StreamSummary {
    n: u64,
    begin: Option<i64>,
    end: Option<i64>,
    /// Events per class index.
    by_class: Vec<u64>,
    /// Per vpid.
    procs: analysis::hash::HashMap<i64, Seen>,
    /// The processes' names, one after the other (one allocation per file, not per process:
    /// the summaries of all files are merged, and their memory freed, on one thread).
    names: String,
    /// tracetools versions and distributions, with the time each was first seen.
    versions: Vec<(i64, String)>,
    distros: Vec<(i64, String)>,
    errors: Vec<String>,
    losses: Vec<Loss>,
}

impl StreamSummary {
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
            let p = a.procs.entry(vpid).or_default();
            p.events += seen.events;
            if let (None, Some((t, name))) = (&p.name, seen.name) {
                let start = a.names.len();
                a.names.push_str(&b.names[name]);
                p.name = Some((t, start..a.names.len()));
            }
        }
        for (list, more) in [(&mut a.versions, b.versions), (&mut a.distros, b.distros)] {
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

/// The initialization events whose payload names a version: tracetools' `rcl_init` (its
/// version) and CARET's `caret_init` (the distribution).
#[derive(Clone, Copy)]
enum Init {
    Version,
    Distro,
}

impl Init {
    fn of(class: &str) -> Option<Init> {
        if class.ends_with(":rcl_init") {
            Some(Init::Version)
        } else if class.ends_with(":caret_init") {
            Some(Init::Distro)
        } else {
            None
        }
    }
}

/// Where `vpid` and `procname` are in the streams' event contexts: found once per context
/// type instead of by name on every event.
struct CtxFields(ctf::types::Positions<2>);

impl Default for CtxFields {
    fn default() -> Self {
        CtxFields(ctf::types::Positions::new(["vpid", "procname"]))
    }
}

/// The context fields of one event.
enum Ctx<'r> {
    /// In the stream's event context, at these positions.
    At(ctf::StructRef<'r>, Option<usize>, Option<usize>),
    /// Found by name (the event has a context of its own, which comes first).
    ByName,
}

impl CtxFields {
    fn of<'r>(&mut self, ev: &ctf::Event<'r>) -> Ctx<'r> {
        let (None, Some(c)) = (ev.event_context(), ev.stream_context()) else { return Ctx::ByName };
        let [v, p] = self.0.of(c.ty());
        Ctx::At(c, v, p)
    }
}

impl<'r> Ctx<'r> {
    /// As [`ctf::Event::context_field`] finds them.
    fn get(&self, ev: &ctf::Event<'r>, vpid: bool) -> Option<ctf::FieldValue<'r>> {
        match self {
            Ctx::At(c, v, p) => (if vpid { *v } else { *p }).and_then(|i| c.field_at(i)),
            Ctx::ByName => ev.context_field(if vpid { "vpid" } else { "procname" }),
        }
    }
}

/// Reads one stream file; `inits` tells per trace and class index which events name a version;
/// `done` counts the bytes read by all, shown by `progress`.
fn summarize(
    r: &mut ctf::StreamReader<'_>,
    inits: &[Vec<Option<Init>>],
    done: &AtomicU64,
    progress: &Progress,
) -> StreamSummary {
    let mut s = StreamSummary { by_class: vec![0; inits[r.trace_index].len()], ..Default::default() };
    let mut ctx = CtxFields::default();
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
            progress.set(done.fetch_add(now - reported, Relaxed) + now - reported);
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
            let p = s.procs.entry(vpid).or_default();
            p.events += 1;
            if p.name.is_none() {
                if let Some(name) = cx.get(&ev, false).and_then(|v| v.as_bytes()).filter(|b| !b.is_empty()) {
                    let start = s.names.len();
                    s.names.push_str(&String::from_utf8_lossy(name));
                    p.name = Some((t, start..s.names.len()));
                }
            }
        }
        let (list, field) = match inits[ev.trace_index()].get(ci).copied().flatten() {
            Some(Init::Version) => (&mut s.versions, "version"),
            Some(Init::Distro) => (&mut s.distros, "distribution"),
            None => continue,
        };
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
/// summarizes them; the same summary whatever the number of threads.
pub fn collect(set: &TraceSet, errors: Vec<String>, jobs: usize) -> Info {
    let hosts: Vec<String> = set.traces.iter().map(|t| t.hostname()).collect();
    let progress = Progress::new(set.total_bytes(), "reading");
    let done = AtomicU64::new(0);
    let inits: Vec<Vec<Option<Init>>> =
        set.traces.iter().map(|t| t.schema.per_class(|ec| Init::of(&ec.name))).collect();
    let streams = set.map_streams(jobs, |r| summarize(r, &inits, &done, &progress), StreamSummary::then);
    progress.finish();
    let trace_of: Vec<usize> =
        set.traces.iter().enumerate().flat_map(|(ti, t)| std::iter::repeat_n(ti, t.streams.len())).collect();
    // Per trace and class index; by name once all are read.
    let mut per_class: Vec<Vec<u64>> = inits.iter().map(|c| vec![0; c.len()]).collect();
    // With the time of the name they have.
    let mut procs: BTreeMap<(usize, i64), (Process, i64)> = BTreeMap::new();
    let mut versions: Vec<(i64, String)> = Vec::new();
    let mut distros: Vec<(i64, String)> = Vec::new();
    let (mut begin, mut end) = (None, None);
    let mut n = 0u64;
    let mut errs = errors;
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
        versions.append(&mut s.versions);
        distros.append(&mut s.distros);
        errs.append(&mut s.errors);
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
    let versions = firsts(versions);
    let mut distros = firsts(distros);
    if distros.is_empty() {
        for v in &versions {
            if let Some(d) = distro_of(v) {
                if !distros.iter().any(|x| x == d) {
                    distros.push(d.to_string());
                }
            }
        }
    }
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
                ctf::EnvValue::Int(i) => i.to_string(),
                ctf::EnvValue::Str(s) => s.clone(),
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
    Info {
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
        tracetools_versions: versions,
        ros_distros: distros,
        tracers,
        errors: errs,
    }
}

/// `YYYY-MM-DD HH:MM:SS.nnnnnnnnn` UTC.
pub fn date_time(ns: i64) -> String {
    let t = ctf::time::utc(ns);
    format!("{:04}-{:02}-{:02} {} UTC", t.year, t.month, t.day, crate::format::clock_time(ns))
}

/// Runs the command.
pub fn run(a: Args) -> std::io::Result<ExitCode> {
    let (set, errors) = TraceSet::open_jobs(&a.traces.traces, a.traces.jobs);
    let errors: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    if set.traces.is_empty() && !errors.is_empty() {
        // Nothing could be opened: a summary would only be zeros.
        for e in &errors {
            eprintln!("rostrace: error: {e}");
        }
        return Ok(ExitCode::from(1));
    }
    let info = collect(&set, errors, a.traces.jobs);
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&info).map_err(std::io::Error::other)?)?;
    } else {
        print_text(&info)?;
    }
    for e in &info.errors {
        eprintln!("rostrace: error: {e}");
    }
    let ok = info.errors.is_empty();
    // The process ends next, and the kernel takes its memory back at once (as `analyze` does):
    // unmapping the files and freeing the metadata piece by piece took 0.1–0.17 ms more.
    std::mem::forget(set);
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn print_text(i: &Info) -> std::io::Result<()> {
    outln!("traces:     {}", i.traces.len())?;
    for t in &i.traces {
        outln!("  {t}")?;
    }
    if let (Some(b), Some(e), Some(d)) = (i.begin_ns, i.end_ns, i.duration_ns) {
        outln!("begin:      {} ({b} ns)", date_time(b))?;
        outln!("end:        {} ({e} ns)", date_time(e))?;
        outln!("duration:   {:.9} s", d as f64 / 1e9)?;
    }
    outln!("events:     {}", i.event_count)?;
    outln!("streams:    {}", i.streams)?;
    if !i.tracers.is_empty() {
        outln!("tracer:     {}", esc(&i.tracers.join(", ")))?;
    }
    if !i.tracetools_versions.is_empty() || !i.ros_distros.is_empty() {
        outln!(
            "ROS 2:      {}{}",
            esc(&i.ros_distros.join(", ")),
            if i.tracetools_versions.is_empty() {
                String::new()
            } else {
                format!(" (tracetools {})", esc(&i.tracetools_versions.join(", ")))
            }
        )?;
    }
    outln!("discarded:  {}, {} lost", count(i.discarded_events, "event"), count(i.lost_packets, "packet"))?;
    for l in &i.losses {
        let what = if l.kind == "events" { "event" } else { "packet" };
        outln!("  {}: {} lost", esc(&l.stream), count(l.count, what))?;
    }
    if !i.processes.is_empty() {
        let n = i.processes.len() as u64;
        outln!("{:<12}{n}", format!("{}:", noun(n, "process")))?;
        let several = i.traces.len() > 1;
        for p in &i.processes {
            let trace = if several { format!("  trace {} {}", p.trace, esc(&p.host)) } else { String::new() };
            outln!("  {:>8}  {:<24} {:>10} {}{trace}", p.vpid, esc(&p.procname), p.events, noun(p.events, "event"))?;
        }
    }
    outln!("events per name:")?;
    for (name, c) in &i.events_per_name {
        outln!("  {c:>10}  {}", esc(name))?;
    }
    Ok(())
}
