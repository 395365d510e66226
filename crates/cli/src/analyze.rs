//! `rostrace analyze`: the ROS 2 model, callbacks, topics and latencies of traces.

use crate::format::name as esc;
use crate::format::{dur, stats_line};
use crate::info::count;
use crate::out::fail;
use crate::progress::Progress;
use crate::TraceArgs;
use analysis::{parse_time, Bound, Report, Window};
use ctf::TraceSet;
use regex::Regex;
use std::fmt::Write as _;
use std::io::Write as _;
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
    /// Analyze from TIME: seconds after the trace start (`2.5`, `+2.5s`, `1500ms`), or an absolute
    /// time (ns since the epoch, or `2021-10-06T12:00:00.5Z`). Initialization events before it
    /// are still read.
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    begin: Option<String>,
    /// Analyze until TIME (same forms as --begin).
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    end: Option<String>,
    /// Only nodes whose `/namespace/name` matches REGEX (and their callbacks, topics, time shares).
    #[arg(long, value_name = "REGEX")]
    nodes: Option<String>,
    /// Only topics whose name matches REGEX (and the callbacks and nodes of those topics).
    #[arg(long, value_name = "REGEX")]
    topics: Option<String>,
    /// Do not abbreviate: full symbols and lists, lines as long as they need.
    #[arg(long)]
    wide: bool,
    /// The time base of the times printed (trace span, window; in the JSON `begin_ns`, `end_ns`,
    /// `window_ns` and the memory peaks and timelines): `system` (the trace's clock), or `sim`
    /// (ROS time of `/clock`, mapped from the trace's `ros2_caret:sim_time` samples: record with
    /// `rostrace record --record-clock`). Durations and latencies stay in system time, and so do
    /// `--begin` and `--end`.
    #[arg(long, value_enum, default_value = "system", value_name = "BASE")]
    time: TimeBase,
}

/// The time base of `--time`.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum TimeBase {
    /// The trace's clock (ns since the epoch).
    System,
    /// ROS time of `/clock`.
    Sim,
}

impl Args {
    /// Analysis of `traces`, with the text report's `top` rows, and JSON to `json` if given.
    pub fn new(traces: Vec<PathBuf>, json: Option<PathBuf>, top: usize) -> Args {
        Args {
            traces: TraceArgs { traces, jobs: 0 },
            json,
            top,
            begin: None,
            end: None,
            nodes: None,
            topics: None,
            wide: false,
            time: TimeBase::System,
        }
    }
}

/// The width the report must fit: `COLUMNS`, the terminal's, or 100; unlimited when `wide`.
pub(crate) fn width(wide: bool) -> usize {
    if wide {
        return usize::MAX;
    }
    if let Some(w) = std::env::var("COLUMNS").ok().and_then(|v| v.trim().parse::<usize>().ok()).filter(|w| *w > 0) {
        return w.max(40);
    }
    // SAFETY: TIOCGWINSZ on stdout writes a winsize into `ws`; on failure it is left zeroed.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::isatty(1) == 1 && libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) == 0 };
    if ok && ws.ws_col > 0 {
        (ws.ws_col as usize).max(40)
    } else {
        100
    }
}

/// `s` in at most `n` characters, cut at the end with `…`.
fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let t: String = s.chars().take(n.saturating_sub(1)).collect();
        format!("{t}…")
    }
}

/// `s` in at most `n` characters, cut in the middle with `…`: the start and the end (where a
/// symbol's lambda or source line is) both stay.
pub fn middle(s: &str, n: usize) -> String {
    let len = s.chars().count();
    if len <= n {
        return s.to_string();
    }
    if n < 3 {
        return short(s, n);
    }
    let tail = (n - 1) / 2;
    let head = n - 1 - tail;
    let a: String = s.chars().take(head).collect();
    let b: String = s.chars().skip(len - tail).collect();
    format!("{a}…{b}")
}

/// `text` wrapped at `width`, the first line after `first`, the others after `indent`.
pub(crate) fn wrap(o: &mut String, text: &str, width: usize, first: &str, indent: &str) {
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        let wl = word.chars().count();
        if !empty && line.chars().count() + 1 + wl > width {
            let _ = writeln!(o, "{line}");
            line = indent.to_string();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    if !empty {
        let _ = writeln!(o, "{line}");
    }
}

/// At most `n` names, then how many more.
fn names(v: &[String], n: usize) -> String {
    let shown: Vec<_> = v.iter().take(n).map(|s| if s.is_empty() { "?".into() } else { esc(s) }).collect();
    if v.len() > n {
        format!("{} +{}", shown.join(" "), v.len() - n)
    } else {
        shown.join(" ")
    }
}

/// At most `n` items, comma-separated, then how many more.
fn list(v: &[String], n: usize) -> String {
    let shown: Vec<_> = v.iter().take(n).map(|s| esc(s)).collect();
    if v.len() > n {
        format!("{}, +{} more", shown.join(", "), v.len() - n)
    } else {
        shown.join(", ")
    }
}

fn take<T>(v: &[T], top: usize) -> &[T] {
    if top == 0 || v.len() <= top {
        v
    } else {
        &v[..top]
    }
}

/// What a callback belongs to: `sub /topic`, `timer 50.00 ms`, `srv /name`, `unknown`.
fn owner(c: &analysis::CallbackReport) -> String {
    match (c.kind.as_str(), &c.topic, c.timer_period_ns) {
        ("subscription", Some(t), _) => format!("sub {}", esc(t)),
        ("service", Some(t), _) => format!("srv {}", esc(t)),
        ("timer", _, Some(p)) => format!("timer {}", dur(p as f64)),
        (k, _, _) => esc(k).into_owned(),
    }
}

/// A distribution's name as written in prose: `jazzy` → `Jazzy`.
fn capitalized(d: &str) -> String {
    let mut c = d.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

/// The ROS 2 distributions of the processes: CARET's `caret_init`, or the one of the
/// tracetools version of `rcl_init`, with that version.
fn distros(r: &Report) -> Vec<String> {
    r.processes
        .iter()
        .filter_map(|p| {
            let d = p
                .distribution
                .clone()
                .filter(|d| !d.is_empty())
                .map(|d| capitalized(&d))
                .or_else(|| p.tracetools_version.as_deref().and_then(crate::info::distro_of).map(str::to_string));
            match (d, &p.tracetools_version) {
                (Some(d), Some(v)) => Some(format!("{d} (tracetools {v})")),
                (Some(d), None) => Some(d),
                (None, Some(v)) => Some(format!("tracetools {v}")),
                (None, None) => None,
            }
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// The text report, each line at most `width` characters (`usize::MAX`: no limit, nothing
/// abbreviated).
pub fn render(r: &Report, top: usize, width: usize) -> String {
    let wide = width == usize::MAX;
    let mut o = String::new();
    let dur_s = match (r.begin_ns, r.end_ns) {
        (Some(a), Some(b)) => (b - a) as f64 / 1e9,
        _ => 0.0,
    };
    let _ = writeln!(
        o,
        "{} ({} ROS 2) over {:.3} s, {}, {}, {}, {}",
        count(r.events, "event"),
        r.ros_events,
        dur_s,
        count(r.processes.len() as u64, "process"),
        count(r.nodes.len() as u64, "node"),
        count(r.topics.len() as u64, "topic"),
        count(r.callbacks.len() as u64, "callback")
    );
    let ds = distros(r);
    if !ds.is_empty() {
        let _ = writeln!(o, "ROS 2: {}", esc(&ds.join(", ")));
    }
    if let Some((a, b)) = r.window_ns {
        let show = |t: i64| {
            if t == i64::MIN || t == i64::MAX {
                "-".to_string()
            } else {
                crate::info::date_time(t)
            }
        };
        let _ = writeln!(o, "window: {} to {}", show(a), show(b));
    }
    if !r.notes.is_empty() {
        let _ = writeln!(o, "\nWhat this trace cannot show");
        for n in &r.notes {
            wrap(&mut o, &format!("{}.", esc(&n.summary())), width, "  - ", "    ");
            if !n.processes.is_empty() && n.processes.len() < n.of_processes {
                let shown = if wide { n.processes.len() } else { 5 };
                wrap(
                    &mut o,
                    &format!("{} of {}: {}", n.processes.len(), n.of_processes, list(&n.processes, shown)),
                    width,
                    "    processes: ",
                    "      ",
                );
            }
            wrap(&mut o, &esc(&n.advice), width, "    next time: ", "      ");
        }
    }
    let _ = writeln!(o, "\nNodes");
    if r.nodes.is_empty() {
        let _ = writeln!(o, "  (none)");
    }
    for n in take(&r.nodes, top.max(50)) {
        // The figures first, the lists of topics after: a line too long loses topic names.
        let mut parts = Vec::new();
        if !n.timers_ns.is_empty() {
            parts.push(format!("timers {}", n.timers_ns.iter().map(|t| dur(*t as f64)).collect::<Vec<_>>().join(" ")));
        }
        // Every rclcpp node offers its parameter services: their number suffices unless --wide.
        if !n.services.is_empty() {
            parts.push(if wide {
                format!("srv {}", esc(&n.services.join(" ")))
            } else {
                format!("srv {}", n.services.len())
            });
        }
        if !n.clients.is_empty() {
            parts.push(if wide {
                format!("cli {}", esc(&n.clients.join(" ")))
            } else {
                format!("cli {}", n.clients.len())
            });
        }
        if !n.publishes.is_empty() {
            parts.push(format!("pub {}", esc(&n.publishes.join(" "))));
        }
        if !n.subscribes.is_empty() {
            parts.push(format!("sub {}", esc(&n.subscribes.join(" "))));
        }
        let _ = writeln!(o, "  {:<32} pid {:<8} {}", esc(&n.name), n.vpid, parts.join("; "));
    }
    if r.nodes.len() > top.max(50) {
        let _ = writeln!(o, "  ... {} more", r.nodes.len() - top.max(50));
    }
    let _ = writeln!(o, "\nCallbacks by total time");
    if r.callbacks.is_empty() {
        let _ = writeln!(o, "  (none)");
    }
    let _ = writeln!(
        o,
        "  {:>10} {:>6} {:>8} {:>10} {:>10} {:>10} {:>10}  owner (subscription topic, timer period, service)",
        "total", "share", "count", "mean", "p50", "p99", "max"
    );
    let _ = writeln!(o, "  {:>10} node  symbol", "");
    let shown = take(&r.callbacks, top);
    for c in shown {
        let line = format!(
            "  {:>10} {:>5.1}% {:>8} {:>10} {:>10} {:>10} {:>10}  ",
            dur(c.total_ns as f64),
            c.share * 100.0,
            c.count,
            dur(c.duration_ns.mean),
            dur(c.duration_ns.p50 as f64),
            dur(c.duration_ns.p99 as f64),
            dur(c.duration_ns.max as f64),
        );
        let room = if wide { usize::MAX } else { width.saturating_sub(line.chars().count()).max(16) };
        let _ = writeln!(o, "{line}{}", middle(&owner(c), room));
        let node = if c.node.is_empty() { "?".into() } else { esc(&c.node) };
        let node = if wide { node.into_owned() } else { middle(&node, 40) };
        let prefix = format!("  {:>10} {node}  ", "");
        let room = if wide { usize::MAX } else { width.saturating_sub(prefix.chars().count()).max(16) };
        let _ = writeln!(
            o,
            "{prefix}{}",
            if c.symbol.is_empty() { "?".to_string() } else { middle(&esc(&c.symbol), room) }
        );
        if let Some(j) = &c.jitter_ns {
            if j.count > 0 {
                let _ = writeln!(o, "  {:>10} period {}; jitter {}", "", dur(c.period_ns.mean), stats_line(j));
            }
        }
    }
    if r.callbacks.len() > shown.len() {
        let _ = writeln!(o, "  ... {} more", r.callbacks.len() - shown.len());
    }
    let unknown = r.callbacks.iter().filter(|c| c.kind == "unknown").count();
    if unknown > 0 {
        let mut why: Vec<&str> = r.callbacks.iter().filter_map(|c| c.unknown_reason.as_deref()).collect();
        why.sort_unstable();
        why.dedup();
        wrap(
            &mut o,
            &format!(
                "{unknown} callback(s) of unknown owner: {} (see \"What this trace cannot show\"; JSON: \
                 unknown_reason).",
                esc(&why.join("; "))
            ),
            width,
            "  unknown: ",
            "    ",
        );
    }
    let _ = writeln!(o, "\nTopics (by activity: publications + takes)");
    if r.topics.is_empty() {
        let _ = writeln!(o, "  (none)");
    }
    let mut topics: Vec<_> = r.topics.iter().collect();
    topics.sort_by(|a, b| (b.takes + b.publishes).cmp(&(a.takes + a.publishes)).then(a.name.cmp(&b.name)));
    let shown = take(&topics, top);
    for t in shown {
        let n = if wide { usize::MAX } else { 3 };
        let _ = writeln!(
            o,
            "  {}  published {}, taken {}, matched {}, unmatched {}{}",
            esc(&t.name),
            t.publishes,
            t.takes,
            t.matched,
            t.unmatched,
            t.dropped.map(|d| format!(", dropped {d}")).unwrap_or_default()
        );
        let _ = writeln!(o, "      {} -> {}", names(&t.publishers, n), names(&t.subscribers, n));
        if !t.unmatched_reasons.is_empty() {
            let why: Vec<String> = t.unmatched_reasons.iter().map(|x| format!("{} {}", x.count, x.reason)).collect();
            wrap(&mut o, &esc(&why.join("; ")), width, "      unmatched: ", "        ");
        }
        if t.matched > 0 {
            let _ = writeln!(o, "      publish->take      {}", stats_line(&t.pub_to_take_ns));
            if t.pub_to_callback_ns.count > 0 {
                let _ = writeln!(o, "      publish->callback  {}", stats_line(&t.pub_to_callback_ns));
            }
        }
    }
    if topics.len() > shown.len() {
        let _ = writeln!(o, "  ... {} more", topics.len() - shown.len());
    }
    let mut busy_explained = false;
    for (title, v) in [("process", &r.per_process), ("node", &r.per_node), ("thread", &r.per_thread)] {
        if v.is_empty() {
            continue;
        }
        let _ = writeln!(o, "\nCallback time per {title}");
        for s in take(v, top.clamp(1, 10)) {
            let _ = writeln!(
                o,
                "  {:>10} {:>5.1}% of callback time, busy {:>5.1}%{}  pid {}{}  {}",
                dur(s.callback_ns as f64),
                s.share * 100.0,
                s.busy * 100.0,
                if s.vtid.is_none() {
                    format!(" ({} thread{})", s.threads, if s.threads == 1 { "" } else { "s" })
                } else {
                    String::new()
                },
                s.vpid,
                s.vtid.map(|t| format!(" tid {t}")).unwrap_or_default(),
                if s.name.is_empty() { "(unknown node)".into() } else { esc(&s.name) }
            );
            busy_explained |= s.busy > 1.0;
        }
    }
    if !r.per_thread.is_empty() {
        wrap(
            &mut o,
            &format!(
                "busy is callback time over the {} duration{}.",
                if r.window_ns.is_some() { "window's" } else { "trace's" },
                if busy_explained {
                    "; above 100% when callbacks of several threads ran at the same time (the thread count is \
                     in parentheses)"
                } else {
                    ""
                }
            ),
            width,
            "  ",
            "  ",
        );
    }
    if !r.services.is_empty() {
        let _ = writeln!(o, "\nServices");
        for sv in take(&r.services, top) {
            let _ = writeln!(
                o,
                "  {}  [server {} pid {}]  sent {}, served {}, responses {}, matched requests {}, matched responses {}",
                esc(&sv.name),
                if sv.server_node.is_empty() { "?".into() } else { esc(&sv.server_node) },
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
                esc(&e.procname),
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
            let _ =
                writeln!(o, "  pid {} {} {:#x}: {} callback groups", e.vpid, esc(&e.kind), e.address, e.groups.len());
        }
    }
    if !r.lifecycle_transitions.is_empty() {
        let _ = writeln!(o, "\nLifecycle transitions: {}", r.lifecycle_transitions.len());
    }
    if let Some(lp) = r.longest_paths.as_ref().filter(|lp| !lp.paths.is_empty()) {
        let plural = |n: usize, one: &str, many: &str| if n == 1 { format!("1 {one}") } else { format!("{n} {many}") };
        let _ = writeln!(
            o,
            "\nLongest paths ({}: nodes whose timers publish; {}: subscriptions publishing nothing)",
            plural(lp.sources, "source", "sources"),
            plural(lp.sinks, "sink", "sinks")
        );
        let followed = lp.paths.iter().any(|p| p.complete > 0);
        if followed {
            let _ = writeln!(o, "  by mean latency; `rostrace e2e --path ...` breaks one down");
        } else {
            wrap(
                &mut o,
                "no message could be followed the whole way (the notes say which events the trace lacks to match a publication to a take); the paths found:",
                width,
                "  ",
                "  ",
            );
        }
        for (i, p) in take(&lp.paths, top.clamp(1, 10)).iter().enumerate() {
            let head = if p.complete > 0 {
                format!(
                    "  #{} mean {} p99 {} max {}, {}/{} messages{}: ",
                    i + 1,
                    dur(p.latency.mean),
                    dur(p.latency.p99 as f64),
                    dur(p.latency.max as f64),
                    p.complete,
                    p.records,
                    crate::paths::drops(p.superseded, p.lost)
                )
            } else if followed {
                format!("  #{} no message went the whole way ({} started): ", i + 1, p.records)
            } else {
                format!("  #{} ", i + 1)
            };
            wrap(&mut o, &esc(&p.label), width, &head, "      ");
        }
        if lp.truncated {
            let _ = writeln!(o, "  (the search stopped at its limits: `rostrace paths` searches between two nodes)");
        }
    } else if let Some(lp) = r.longest_paths.as_ref().filter(|lp| lp.truncated) {
        // Stopped (at its work budget: many nodes sharing topics) before it found a path.
        let _ = writeln!(o);
        let text = format!(
            "Longest paths: none found before the search stopped at its limits ({} sources, {} sinks); `rostrace \
             paths --from SOURCE --to SINK` searches between two nodes (--max-expansions: its work budget)",
            lp.sources, lp.sinks
        );
        wrap(&mut o, &text, width, "", "  ");
    }
    system(&mut o, r, top);
    let _ = writeln!(o, "\nMessages matched publish->take: {}, unmatched: {}", r.flows_matched, r.flows_unmatched);
    if !r.warnings.is_empty() {
        let _ = writeln!(o, "\nWarnings");
        for w in take(&r.warnings, top.max(20)) {
            wrap(&mut o, &esc(w), width, "  ", "    ");
        }
        if r.warnings.len() > top.max(20) {
            let _ = writeln!(o, "  ... {} more", r.warnings.len() - top.max(20));
        }
    }
    if wide {
        return o;
    }
    // Whatever is still too long (a long node or topic name) is cut at the end, unless the cut
    // would take a figure with it: a line with a number past the width stays whole.
    let mut out = String::with_capacity(o.len());
    for line in o.lines() {
        out.push_str(&fit(line, width));
        out.push('\n');
    }
    out
}

/// `line` in lines of at most `width` characters: cut with `…` where what is cut holds no figure
/// (a long list of names), else wrapped at its spaces, the rest indented under it, so that no
/// figure (nor its unit) is ever cut.
fn fit(line: &str, width: usize) -> String {
    let chars: Vec<char> = line.chars().collect();
    if chars.len() <= width {
        return line.to_string();
    }
    // The word the cut would fall in, and what follows it.
    let cut = width.saturating_sub(1);
    let word = chars[..cut].iter().rposition(|c| *c == ' ').map_or(0, |i| i + 1);
    // A figure is a word that starts with a digit (a count, a duration, a ratio): names with
    // digits in them (a hash, a sensor's number) are names.
    let figure = |w: &str| {
        let w = w.trim_start_matches(['(', '-', '+', '~']);
        w.starts_with(|c: char| c.is_ascii_digit())
    };
    let rest: String = chars[word..].iter().collect();
    if !rest.split(' ').any(figure) {
        return short(line, width);
    }
    let lead = chars.iter().take_while(|c| **c == ' ').count();
    let indent = " ".repeat((lead + 4).min(width / 2));
    let mut out = String::new();
    let mut cur = String::new();
    for w in line[lead..].split(' ') {
        let room = if out.is_empty() { width - lead } else { width - indent.len() };
        if !cur.is_empty() && cur.chars().count() + 1 + w.chars().count() > room {
            out.push_str(if out.is_empty() { &line[..lead] } else { &indent });
            out.push_str(&cur);
            out.push('\n');
            cur.clear();
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        // A name longer than a whole line is shortened in its middle.
        let room = if out.is_empty() { width - lead } else { width - indent.len() };
        if w.chars().count() > room && !figure(w) {
            cur.push_str(&middle(w, room));
        } else {
            cur.push_str(w);
        }
    }
    out.push_str(if out.is_empty() { &line[..lead] } else { &indent });
    out.push_str(&cur);
    out
}

/// Writes `value` as JSON to `json` (`-`: standard output, instead of the text), then the
/// text to standard output, then where the JSON went. An error writing the `--json` file is the
/// inner one, naming its path; standard output's is the outer one.
pub(crate) fn emit<T: serde::Serialize>(
    json: Option<&std::path::Path>,
    value: &T,
    text: impl FnOnce() -> String,
) -> std::io::Result<Result<(), String>> {
    let Some(p) = json else {
        crate::out::stdout().write_all(text().as_bytes())?;
        return Ok(Ok(()));
    };
    if p.as_os_str() == "-" {
        let mut w = std::io::BufWriter::with_capacity(1 << 16, crate::out::stdout());
        // serde_json's error of a write is the writer's own.
        serde_json::to_writer_pretty(&mut w, value).map_err(std::io::Error::from)?;
        w.write_all(b"\n")?;
        w.flush()?;
        return Ok(Ok(()));
    }
    let written = std::fs::File::create(p).and_then(|f| {
        let mut w = std::io::BufWriter::new(f);
        serde_json::to_writer_pretty(&mut w, value).map_err(std::io::Error::other)?;
        w.flush()
    });
    if let Err(e) = written {
        return Ok(Err(format!("--json {}: {e}", p.display())));
    }
    crate::out::stdout().write_all(text().as_bytes())?;
    eprintln!("JSON written to {}", p.display());
    Ok(Ok(()))
}

/// Bytes, readable: `812 B`, `12.3 KiB`, `4.56 MiB`.
fn bytes(b: i64) -> String {
    let a = b.unsigned_abs() as f64;
    if a < 1024.0 {
        format!("{b} B")
    } else if a < 1024.0 * 1024.0 {
        format!("{:.1} KiB", b as f64 / 1024.0)
    } else if a < 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2} MiB", b as f64 / 1024.0 / 1024.0)
    } else {
        format!("{:.2} GiB", b as f64 / 1024.0 / 1024.0 / 1024.0)
    }
}

/// `--time sim`'s lines under the text report's first, from the report mapped to sim time
/// (`slope` × system time): the trace's span and the window.
fn sim_lines(sim: &Report, slope: f64, width: usize) -> String {
    let s = |t: i64| format!("{:.3} s", t as f64 / 1e9);
    let mut o = String::new();
    wrap(
        &mut o,
        &format!("Times in sim time (/clock, {slope:.4} × system time); durations and latencies in system time."),
        width,
        "",
        "  ",
    );
    if let (Some(a), Some(b)) = (sim.begin_ns, sim.end_ns) {
        let _ = writeln!(o, "sim time: {} to {} ({})", s(a), s(b), dur((b - a) as f64));
    }
    if let Some((a, b)) = sim.window_ns {
        // Open ends stay open when mapped.
        let show = |t: i64| if t == i64::MIN || t == i64::MAX { "-".to_string() } else { s(t) };
        let _ = writeln!(o, "window: sim {} to {}", show(a), show(b));
    }
    o
}

/// The system analyses' sections, for the traces that have their events.
fn system(o: &mut String, r: &Report, top: usize) {
    let span = match (r.begin_ns, r.end_ns) {
        (Some(a), Some(b)) if b > a => (b - a) as f64,
        _ => 1.0,
    };
    if let Some(st) = &r.system.sim_time {
        let _ = writeln!(o, "\nSim time (ros2_caret:sim_time: /clock sampled every second of wall time)");
        match &st.fit {
            Some(f) => {
                let _ = writeln!(
                    o,
                    "  {}: sim = {:.6} × system time; residual rms {}, max {}",
                    count(st.samples, "sample"),
                    f.slope,
                    dur(st.residual_rms_ns),
                    dur(st.residual_max_ns)
                );
                let _ = writeln!(
                    o,
                    "  sim {:.3} s at {}",
                    f.sim_ref_ns as f64 / 1e9,
                    crate::info::date_time(f.system_ref_ns)
                );
            }
            None => {
                let _ = writeln!(
                    o,
                    "  {}: at least 2 are needed to map system time to sim time",
                    count(st.samples, "sample")
                );
            }
        }
        if st.backwards > 0 {
            let _ = writeln!(
                o,
                "  sim time went backwards {} (a restarted simulation or bag?)",
                count(st.backwards, "time")
            );
        }
    }
    if let Some(c) = &r.system.cpu_time {
        let _ = writeln!(o, "\nCPU time per process (kernel sched_switch)");
        for p in take(&c.processes, top) {
            let _ = writeln!(
                o,
                "  {:>10}  {:5.1}% of a CPU  pid {} {} ({})",
                dur(p.cpu_ns as f64),
                100.0 * p.cpu_ns as f64 / span,
                p.pid,
                esc(&p.name),
                crate::info::count(p.threads, "thread")
            );
        }
        if c.processes.is_empty() {
            let _ = writeln!(o, "  (the trace does not tell which process each thread belongs to: no statedump)");
        }
        let _ = writeln!(o, "\nCPU time per thread (% of a CPU: of the trace's duration; above 100% on several CPUs)");
        for t in take(&c.threads, top) {
            let pid = t.pid.map(|p| format!("pid {p} ")).unwrap_or_default();
            let idle = if t.tid == 0 { " (idle, all CPUs)" } else { "" };
            let _ = writeln!(
                o,
                "  {:>10}  {:5.1}% of a CPU  {pid}tid {} {}{idle} ({})",
                dur(t.cpu_ns as f64),
                100.0 * t.cpu_ns as f64 / span,
                t.tid,
                esc(&t.comm),
                crate::info::count(t.intervals, "interval")
            );
        }
        if top > 0 && c.threads.len() > top {
            let _ = writeln!(o, "  ... {} more", c.threads.len() - top);
        }
    }
    let name = |c: &analysis::system::CallbackId| {
        let sym = if c.symbol.is_empty() { format!("{:#x}", c.address) } else { middle(&esc(&c.symbol), 60) };
        if c.node.is_empty() {
            format!("pid {} {sym}", c.vpid)
        } else {
            format!("{} {sym}", esc(&c.node))
        }
    };
    if let Some(s) = &r.system.scheduling {
        let _ =
            writeln!(o, "\nScheduling during callback runs (kernel events of the same host), most time off CPU first");
        if s.callbacks.is_empty() {
            let _ = writeln!(o, "  (no callback run while the kernel was traced)");
        }
        for c in take(&s.callbacks, top) {
            let _ = writeln!(
                o,
                "  {}\n      {} runs: on CPU mean {}, off CPU mean {} (max {}); {} preemptions, {} blocked; {} runs interrupted",
                name(&c.callback),
                c.runs,
                dur(c.on_cpu_ns.mean),
                dur(c.off_cpu_ns.mean),
                dur(c.off_cpu_ns.max as f64),
                c.preemptions,
                c.blocked,
                c.runs_interrupted
            );
        }
        if !s.nodes.is_empty() {
            let _ = writeln!(o, "  CPU time per node (its callbacks' runs), most first");
            for n in take(&s.nodes, top) {
                let node =
                    if n.node.is_empty() { format!("pid {} (no node)", n.vpid) } else { esc(&n.node).into_owned() };
                let _ = writeln!(
                    o,
                    "    {:>10}  {:5.1}% of a CPU  {node}: {}, {}, {} off CPU, {} preemptions",
                    dur(n.on_cpu_ns as f64),
                    100.0 * n.on_cpu_ns as f64 / span,
                    crate::info::count(n.callbacks, "callback"),
                    crate::info::count(n.runs, "run"),
                    dur(n.off_cpu_ns as f64),
                    n.preemptions
                );
            }
        }
        if !s.wakeup_latency.is_empty() {
            let _ = writeln!(o, "  wake-up latency of the callback threads (woken -> on a CPU)");
            for w in take(&s.wakeup_latency, top) {
                let _ = writeln!(o, "    tid {}: {}", w.tid, stats_line(&w.latency_ns));
            }
        }
    }
    if let Some(m) = &r.system.memory {
        let _ = writeln!(o, "\nMemory per process (changes traced: libc wrapper, kernel pages), highest peak first");
        for p in take(&m.processes, top) {
            let name = r
                .processes
                .iter()
                .find(|x| x.trace == p.trace && x.vpid == p.vpid)
                .map(|x| esc(&x.procname).into_owned())
                .unwrap_or_default();
            let _ = writeln!(
                o,
                "  pid {} {name} ({}): peak {} at +{}, at the end {} ({})",
                p.vpid,
                esc(&p.kind),
                bytes(p.max_bytes),
                dur((p.max_at_ns - r.begin_ns.unwrap_or(p.max_at_ns)) as f64),
                bytes(p.final_bytes),
                crate::info::count(p.changes, "change")
            );
        }
        let _ = writeln!(o, "  per thread, highest peak first");
        for t in take(&m.threads, top) {
            let _ = writeln!(
                o,
                "    tid {} ({}): peak {}, at the end {} ({})",
                t.tid,
                esc(&t.kind),
                bytes(t.max_bytes),
                bytes(t.final_bytes),
                crate::info::count(t.changes, "change")
            );
        }
    }
    if let Some(p) = &r.system.profile {
        let _ = writeln!(o, "\nFunction profile (cyg-profile), highest total time first");
        for f in take(&p.functions, top) {
            let func = if f.symbol.is_empty() {
                format!("{:#x}", f.address)
            } else {
                let bin = esc(f.binary.rsplit('/').next().unwrap_or(""));
                format!("{} ({bin})", middle(&esc(&f.symbol), 70))
            };
            let _ = writeln!(
                o,
                "  tid {} {func}: {}, total {}, self {}, on CPU {}",
                f.tid,
                crate::info::count(f.calls, "call"),
                dur(f.total_ns as f64),
                dur(f.self_ns as f64),
                dur(f.actual_ns as f64)
            );
        }
        if p.unmatched_exits + p.unfinished > 0 {
            let _ = writeln!(
                o,
                "  {} exits without their entry, {} calls unfinished at the end",
                p.unmatched_exits, p.unfinished
            );
        }
    }
    if !r.system.message_age.is_empty() {
        let _ = writeln!(o, "\nMessage age at callback start (callback start - the message's header stamp)");
        for m in take(&r.system.message_age, top) {
            let _ = writeln!(o, "  {}\n      {}", name(&m.callback), stats_line(&m.ns));
        }
    }
}

/// Runs the command.
pub fn run(a: Args) -> std::io::Result<ExitCode> {
    let mut window = Window::default();
    for (name, v, slot) in [("--begin", &a.begin, &mut window.begin), ("--end", &a.end, &mut window.end)] {
        if let Some(v) = v {
            match parse_time(v) {
                Ok(b) => *slot = Some(b),
                Err(e) => return fail(format!("{name}: {e}")),
            }
        }
    }
    if let (Some(b), Some(e)) = (window.begin, window.end) {
        let same_kind =
            matches!((b, e), (Bound::Relative(_), Bound::Relative(_)) | (Bound::Absolute(_), Bound::Absolute(_)));
        let (Bound::Relative(x) | Bound::Absolute(x), Bound::Relative(y) | Bound::Absolute(y)) = (b, e);
        if same_kind && x > y {
            return fail(format!(
                "--begin ({}) is after --end ({})",
                a.begin.as_deref().unwrap_or(""),
                a.end.as_deref().unwrap_or("")
            ));
        }
    }
    let mut res = [None, None];
    for (i, (name, v)) in [("--nodes", &a.nodes), ("--topics", &a.topics)].into_iter().enumerate() {
        if let Some(v) = v {
            match Regex::new(v) {
                Ok(re) => res[i] = Some(re),
                Err(e) => {
                    return fail(format!(
                        "{name}: invalid regular expression {v:?}: {}",
                        e.to_string().lines().last().unwrap_or("")
                    ))
                }
            }
        }
    }
    let (set, errors) = TraceSet::open_jobs(&a.traces.traces, a.traces.jobs);
    for e in &errors {
        eprintln!("rostrace: error: {e}");
    }
    if set.traces.is_empty() {
        return Ok(ExitCode::from(1));
    }
    let mut progress = Progress::new(set.total_bytes(), "analyzing");
    let [nodes, topics] = res;
    let options = analysis::Options { window, nodes, topics, longest_paths: true };
    let mut p = analysis::Processor::standard();
    p.set_jobs(a.traces.jobs);
    let mut an = p.run(&set, &options, |d, _| progress.tick(|| d));
    progress.finish();
    let mut report = std::mem::take(&mut an.report);
    let r = &report;
    for e in &r.read_errors {
        eprintln!("rostrace: error: {e}");
    }
    let width = width(a.wide);
    let sim = match a.time {
        TimeBase::System => None,
        TimeBase::Sim => match r.system.sim_time.as_ref().and_then(|s| s.fit) {
            Some(f) => Some(f),
            None => {
                let n = r.system.sim_time.as_ref().map_or(0, |s| s.samples);
                let traces: Vec<String> = a.traces.traces.iter().map(|t| t.display().to_string()).collect();
                return fail(format!(
                    "--time sim: {} {} {} (ros2_caret:sim_time); at least 2 are needed to map system time to \
                     sim time: record with `rostrace record --record-clock` (CARET: ros2 caret record --record-clock), \
                     while something publishes /clock",
                    traces.join(", "),
                    if n == 1 { "has" } else { "have" },
                    count(n, "sim_time sample")
                ));
            }
        },
    };
    let (no_events, read_ok) = (r.events == 0, r.read_errors.is_empty());
    let written = match sim {
        None => emit(a.json.as_deref(), r, || render(r, a.top, width)),
        Some(f) => {
            // The text in system time (with the sim time lines), the JSON in sim time: the
            // text is made before the report's times are mapped, when it is printed.
            let prints_text = a.json.as_deref().is_none_or(|p| p.as_os_str() != "-");
            let text = if prints_text { render(&report, a.top, width) } else { String::new() };
            report.map_times("sim", |t| f.to_sim(t));
            emit(a.json.as_deref(), &report, || {
                let (head, rest) = text.split_once('\n').unwrap_or((&text, ""));
                format!("{head}\n{}{rest}", sim_lines(&report, f.slope, width))
            })
        }
    };
    if let Err(e) = written? {
        return fail(e);
    }
    if no_events && window.begin.is_some() | window.end.is_some() {
        eprintln!("rostrace: warning: no event in the window");
    }
    // The process ends next (`analyze`; `demo` after its report), and the kernel takes its
    // memory back at once: freeing the model, the tables and the mappings piece by piece took
    // 3.5 ms on tum-autoware-carla (3% of the run).
    std::mem::forget((an, report, set));
    Ok(if errors.is_empty() && read_ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn middle_ellipsis() {
        assert_eq!(middle("abcdefghij", 10), "abcdefghij");
        assert_eq!(middle("abcdefghij", 5), "ab…ij");
        assert_eq!(middle("abcdefghij", 6), "abc…ij");
        assert_eq!(middle("abcdefghij", 2), "a…");
        // Names are cut at the width, figures never.
        assert_eq!(fit("topics /a /b /c /verylongname", 20), "topics /a /b /c /ve…");
        assert_eq!(
            fit("  mean 3.92 ms p99 12.345 ms max 20.0 ms", 20),
            "  mean 3.92 ms p99\n      12.345 ms max\n      20.0 ms"
        );
    }
}
