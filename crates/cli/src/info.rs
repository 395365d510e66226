//! `rostrace info`: what a trace holds, at a glance.

use crate::progress::Progress;
use crate::TraceArgs;
use ctf::{FieldValue, Loss, LossKind, TraceSet};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::process::ExitCode;

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

/// Reads the traces once and summarizes them.
pub fn collect(set: &TraceSet, errors: Vec<String>) -> Info {
    let mut counts: HashMap<String, u64> = HashMap::new();
    let mut by_class: HashMap<(usize, usize), u64> = HashMap::new();
    let mut procs: BTreeMap<(usize, i64), Process> = BTreeMap::new();
    let hosts: Vec<String> = set.traces.iter().map(|t| t.hostname()).collect();
    let mut versions = Vec::new();
    let mut distros = Vec::new();
    let mut begin = None;
    let mut end = None;
    let mut n = 0u64;
    let mut errs = errors;
    let mut events = set.events();
    let mut progress = Progress::new(set.total_bytes(), "reading");
    while let Some(r) = events.next() {
        let ev = match r {
            Ok(ev) => ev,
            Err(e) => {
                errs.push(e.to_string());
                continue;
            }
        };
        n += 1;
        if let Some(t) = ev.timestamp() {
            begin = Some(begin.map_or(t, |b: i64| b.min(t)));
            end = Some(end.map_or(t, |e: i64| e.max(t)));
        }
        *by_class.entry((ev.trace_index(), ev.class().index)).or_default() += 1;
        if let Some(vpid) = ev.context_field("vpid").and_then(|v| v.as_i64()) {
            let ti = ev.trace_index();
            let p = procs.entry((ti, vpid)).or_insert_with(|| Process {
                trace: ti,
                host: hosts[ti].clone(),
                vpid,
                procname: String::new(),
                events: 0,
            });
            p.events += 1;
            if p.procname.is_empty() {
                if let Some(FieldValue::Str(s)) = ev.context_field("procname") {
                    p.procname = String::from_utf8_lossy(s).into_owned();
                }
            }
        }
        let name = ev.name();
        if name.ends_with(":rcl_init") {
            if let Some(v) = ev.field("version").and_then(|v| v.as_str()) {
                if !versions.contains(&v.to_string()) {
                    versions.push(v.to_string());
                }
            }
        } else if name.ends_with(":caret_init") {
            if let Some(v) = ev.field("distribution").and_then(|v| v.as_str()) {
                if !distros.contains(&v.to_string()) {
                    distros.push(v.to_string());
                }
            }
        }
        progress.tick(|| events.progress().0);
    }
    progress.finish();
    for ((ti, ci), c) in by_class {
        if let Some(ec) = set.traces[ti].schema.event_classes().find(|e| e.index == ci) {
            *counts.entry(ec.name.clone()).or_default() += c;
        }
    }
    if distros.is_empty() {
        for v in &versions {
            if let Some(d) = distro_of(v) {
                if !distros.iter().any(|x| x == d) {
                    distros.push(d.to_string());
                }
            }
        }
    }
    let mut per_name: Vec<(String, u64)> = counts.into_iter().collect();
    per_name.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let losses: Vec<LossOut> = events
        .losses()
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
        processes: procs.into_values().collect(),
        discarded_events: events.discarded_events(),
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
    let (set, errors) = TraceSet::open(&a.traces.traces);
    let errors: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    if set.traces.is_empty() && !errors.is_empty() {
        // Nothing could be opened: a summary would only be zeros.
        for e in &errors {
            eprintln!("rostrace: error: {e}");
        }
        return Ok(ExitCode::from(1));
    }
    let info = collect(&set, errors);
    if a.json {
        println!("{}", serde_json::to_string_pretty(&info).map_err(std::io::Error::other)?);
    } else {
        print_text(&info);
    }
    for e in &info.errors {
        eprintln!("rostrace: error: {e}");
    }
    Ok(if info.errors.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn print_text(i: &Info) {
    println!("traces:     {}", i.traces.len());
    for t in &i.traces {
        println!("  {t}");
    }
    if let (Some(b), Some(e), Some(d)) = (i.begin_ns, i.end_ns, i.duration_ns) {
        println!("begin:      {} ({b} ns)", date_time(b));
        println!("end:        {} ({e} ns)", date_time(e));
        println!("duration:   {:.9} s", d as f64 / 1e9);
    }
    println!("events:     {}", i.event_count);
    println!("streams:    {}", i.streams);
    if !i.tracers.is_empty() {
        println!("tracer:     {}", i.tracers.join(", "));
    }
    if !i.tracetools_versions.is_empty() || !i.ros_distros.is_empty() {
        println!(
            "ROS 2:      {}{}",
            i.ros_distros.join(", "),
            if i.tracetools_versions.is_empty() {
                String::new()
            } else {
                format!(" (tracetools {})", i.tracetools_versions.join(", "))
            }
        );
    }
    println!("discarded:  {}, {} lost", count(i.discarded_events, "event"), count(i.lost_packets, "packet"));
    for l in &i.losses {
        let what = if l.kind == "events" { "event" } else { "packet" };
        println!("  {}: {} lost", l.stream, count(l.count, what));
    }
    if !i.processes.is_empty() {
        let n = i.processes.len() as u64;
        println!("{:<12}{n}", format!("{}:", noun(n, "process")));
        let several = i.traces.len() > 1;
        for p in &i.processes {
            let trace = if several { format!("  trace {} {}", p.trace, p.host) } else { String::new() };
            println!("  {:>8}  {:<24} {:>10} {}{trace}", p.vpid, p.procname, p.events, noun(p.events, "event"));
        }
    }
    println!("events per name:");
    for (name, c) in &i.events_per_name {
        println!("  {c:>10}  {name}");
    }
}
