//! `rostrace analyze`: the ROS 2 model, callbacks, topics and latencies of traces.

use crate::progress::Progress;
use crate::TraceArgs;
use analysis::{Report, Stats};
use ctf::TraceSet;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `rostrace analyze`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    traces: TraceArgs,
    /// Also write the results as JSON to FILE (`-` for standard output, instead of the text report).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Rows of each table in the text report (0: all).
    #[arg(long, default_value_t = 25)]
    top: usize,
}

impl Args {
    /// Analysis of `traces`, with the text report's `top` rows, and JSON to `json` if given.
    pub fn new(traces: Vec<PathBuf>, json: Option<PathBuf>, top: usize) -> Args {
        Args { traces: TraceArgs { traces }, json, top }
    }
}

/// A duration in ns, readable: `812 ns`, `12.3 us`, `4.56 ms`, `1.234 s`.
pub fn dur(ns: f64) -> String {
    let a = ns.abs();
    if a < 1e3 {
        format!("{ns:.0} ns")
    } else if a < 1e6 {
        format!("{:.1} us", ns / 1e3)
    } else if a < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.3} s", ns / 1e9)
    }
}

fn stats_line(s: &Stats) -> String {
    if s.count == 0 {
        return "-".into();
    }
    format!(
        "mean {} std {} min {} p50 {} p90 {} p99 {} max {}",
        dur(s.mean),
        dur(s.std),
        dur(s.min as f64),
        dur(s.p50 as f64),
        dur(s.p90 as f64),
        dur(s.p99 as f64),
        dur(s.max as f64)
    )
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let t: String = s.chars().take(n.saturating_sub(1)).collect();
        format!("{t}…")
    }
}

/// At most `n` names, then how many more.
fn names(v: &[String], n: usize) -> String {
    let shown: Vec<&str> = v.iter().take(n).map(|s| if s.is_empty() { "?" } else { s.as_str() }).collect();
    if v.len() > n {
        format!("{} +{}", shown.join(" "), v.len() - n)
    } else {
        shown.join(" ")
    }
}

fn take<T>(v: &[T], top: usize) -> &[T] {
    if top == 0 || v.len() <= top {
        v
    } else {
        &v[..top]
    }
}

/// The text report.
pub fn render(r: &Report, top: usize) -> String {
    let mut o = String::new();
    let dur_s = match (r.begin_ns, r.end_ns) {
        (Some(a), Some(b)) => (b - a) as f64 / 1e9,
        _ => 0.0,
    };
    let _ = writeln!(
        o,
        "{} events ({} ROS 2) over {:.3} s, {} processes, {} nodes, {} topics, {} callbacks",
        r.events,
        r.ros_events,
        dur_s,
        r.processes.len(),
        r.nodes.len(),
        r.topics.len(),
        r.callbacks.len()
    );
    let distros: Vec<String> = r
        .processes
        .iter()
        .filter_map(|p| {
            p.distribution.clone().or_else(|| p.tracetools_version.as_ref().map(|v| format!("tracetools {v}")))
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    if !distros.is_empty() {
        let _ = writeln!(o, "ROS 2: {}", distros.join(", "));
    }
    let _ = writeln!(o, "\nNodes");
    for n in take(&r.nodes, top.max(50)) {
        let mut parts = Vec::new();
        if !n.publishes.is_empty() {
            parts.push(format!("pub {}", n.publishes.join(" ")));
        }
        if !n.subscribes.is_empty() {
            parts.push(format!("sub {}", n.subscribes.join(" ")));
        }
        if !n.timers_ns.is_empty() {
            parts.push(format!("timers {}", n.timers_ns.iter().map(|t| dur(*t as f64)).collect::<Vec<_>>().join(" ")));
        }
        if !n.services.is_empty() {
            parts.push(format!("srv {}", n.services.join(" ")));
        }
        if !n.clients.is_empty() {
            parts.push(format!("cli {}", n.clients.join(" ")));
        }
        let _ = writeln!(o, "  {:<32} pid {:<8} {}", n.name, n.vpid, parts.join("; "));
    }
    if r.nodes.len() > top.max(50) {
        let _ = writeln!(o, "  ... {} more", r.nodes.len() - top.max(50));
    }
    let _ = writeln!(o, "\nCallbacks by total time");
    let _ = writeln!(
        o,
        "  {:>10} {:>6} {:>8} {:>10} {:>10} {:>10} {:>10}  {:<12} {:<24} symbol",
        "total", "share", "count", "mean", "p50", "p99", "max", "kind", "node"
    );
    for c in take(&r.callbacks, top) {
        let _ = writeln!(
            o,
            "  {:>10} {:>5.1}% {:>8} {:>10} {:>10} {:>10} {:>10}  {:<12} {:<24} {}",
            dur(c.total_ns as f64),
            c.share * 100.0,
            c.count,
            dur(c.duration_ns.mean),
            dur(c.duration_ns.p50 as f64),
            dur(c.duration_ns.p99 as f64),
            dur(c.duration_ns.max as f64),
            match (&c.kind[..], &c.topic, c.timer_period_ns) {
                ("timer", _, Some(p)) => format!("timer {}", dur(p as f64)),
                (k, _, _) => k.to_string(),
            },
            short(&c.node, 24),
            short(&c.symbol, 70)
        );
        if let Some(j) = &c.jitter_ns {
            if j.count > 0 {
                let _ = writeln!(o, "  {:>10} period {}; jitter {}", "", dur(c.period_ns.mean), stats_line(j));
            }
        }
    }
    if r.callbacks.len() > take(&r.callbacks, top).len() {
        let _ = writeln!(o, "  ... {} more", r.callbacks.len() - take(&r.callbacks, top).len());
    }
    let _ = writeln!(o, "\nTopics");
    let mut topics: Vec<_> = r.topics.iter().collect();
    topics.sort_by(|a, b| b.matched.cmp(&a.matched).then(b.publishes.cmp(&a.publishes)).then(a.name.cmp(&b.name)));
    for t in take(&topics, top) {
        let _ = writeln!(
            o,
            "  {}  [{} -> {}]  published {}, taken {}, matched {}, unmatched {}",
            t.name,
            names(&t.publishers, 3),
            names(&t.subscribers, 3),
            t.publishes,
            t.takes,
            t.matched,
            t.unmatched
        );
        if t.matched > 0 {
            let _ = writeln!(o, "      publish->take      {}", stats_line(&t.pub_to_take_ns));
            if t.pub_to_callback_ns.count > 0 {
                let _ = writeln!(o, "      publish->callback  {}", stats_line(&t.pub_to_callback_ns));
            }
        }
    }
    if topics.len() > take(&topics, top).len() {
        let _ = writeln!(o, "  ... {} more", topics.len() - take(&topics, top).len());
    }
    for (title, v) in [("process", &r.per_process), ("node", &r.per_node), ("thread", &r.per_thread)] {
        if v.is_empty() {
            continue;
        }
        let _ = writeln!(o, "\nCallback time per {title}");
        for s in take(v, top.clamp(1, 10)) {
            let _ = writeln!(
                o,
                "  {:>10} {:>5.1}% of callback time, busy {:>5.1}%  pid {}{}  {}",
                dur(s.callback_ns as f64),
                s.share * 100.0,
                s.busy * 100.0,
                s.vpid,
                s.vtid.map(|t| format!(" tid {t}")).unwrap_or_default(),
                if s.name.is_empty() { "(unknown node)" } else { &s.name }
            );
        }
    }
    if !r.services.is_empty() {
        let _ = writeln!(o, "\nServices");
        for sv in take(&r.services, top) {
            let _ = writeln!(
                o,
                "  {}  [server {} pid {}]  sent {}, served {}, responses {}, matched requests {}, matched responses {}",
                sv.name,
                if sv.server_node.is_empty() { "?" } else { &sv.server_node },
                sv.server_vpid,
                sv.requests_sent,
                sv.requests_served,
                sv.responses_received,
                sv.requests_matched,
                sv.responses_matched
            );
            for (what, st) in [
                ("request", &sv.request_ns),
                ("service", &sv.service_ns),
                ("response", &sv.response_ns),
                ("round trip", &sv.round_trip_ns),
            ] {
                if st.count > 0 {
                    let _ = writeln!(o, "      {what:<11} {}", stats_line(st));
                }
            }
        }
    }
    if !r.executor_threads.is_empty() {
        let _ = writeln!(o, "\nExecutor phases per thread");
        for e in take(&r.executor_threads, top) {
            let total = (e.get_next_ns + e.wait_ns + e.execute_ns).max(1) as f64;
            let _ = writeln!(
                o,
                "  pid {} tid {} {}: executing {} ({:.1}%), waiting {} ({:.1}%), getting next {} ({:.1}%), {} executions",
                e.vpid,
                e.vtid,
                e.procname,
                dur(e.execute_ns as f64),
                100.0 * e.execute_ns as f64 / total,
                dur(e.wait_ns as f64),
                100.0 * e.wait_ns as f64 / total,
                dur(e.get_next_ns as f64),
                100.0 * e.get_next_ns as f64 / total,
                e.executions
            );
        }
    }
    if !r.executors.is_empty() {
        let _ = writeln!(o, "\nExecutors");
        for e in &r.executors {
            let _ = writeln!(o, "  pid {} {} {:#x}: {} callback groups", e.vpid, e.kind, e.address, e.groups.len());
        }
    }
    if !r.lifecycle_transitions.is_empty() {
        let _ = writeln!(o, "\nLifecycle transitions: {}", r.lifecycle_transitions.len());
    }
    let _ = writeln!(o, "\nMessages matched publish->take: {}, unmatched: {}", r.flows_matched, r.flows_unmatched);
    if !r.warnings.is_empty() {
        let _ = writeln!(o, "\nWarnings");
        for w in take(&r.warnings, top.max(20)) {
            let _ = writeln!(o, "  {w}");
        }
        if r.warnings.len() > top.max(20) {
            let _ = writeln!(o, "  ... {} more", r.warnings.len() - top.max(20));
        }
    }
    o
}

/// Runs the command.
pub fn run(a: Args) -> std::io::Result<ExitCode> {
    let (set, errors) = TraceSet::open(&a.traces.traces);
    for e in &errors {
        eprintln!("rostrace: error: {e}");
    }
    if set.traces.is_empty() {
        return Ok(ExitCode::from(1));
    }
    let mut progress = Progress::new(set.total_bytes(), "analyzing");
    let an = analysis::analyze_traces(&set, |d, _| progress.tick(|| d));
    progress.finish();
    let r = &an.report;
    match &a.json {
        Some(p) if p.as_os_str() == "-" => {
            println!("{}", serde_json::to_string_pretty(r).map_err(std::io::Error::other)?);
        }
        Some(p) => {
            let f =
                std::fs::File::create(p).map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", p.display())))?;
            serde_json::to_writer_pretty(std::io::BufWriter::new(f), r).map_err(std::io::Error::other)?;
            print!("{}", render(r, a.top));
            eprintln!("JSON written to {}", p.display());
        }
        None => print!("{}", render(r, a.top)),
    }
    let read_errors = r.warnings.iter().any(|w| w.starts_with("read error"));
    Ok(if errors.is_empty() && !read_errors { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
