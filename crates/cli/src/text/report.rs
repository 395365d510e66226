//! The text of `rostrace analyze`: the report's sections, each fitted to the terminal.

use super::{fit, list, middle, names, take, wrap};
use crate::format::name as esc;
use crate::format::{dur, stats_line};
use crate::text::count;
use rostrace_analysis::Report;
use std::fmt::Write as _;

/// The text report, each line at most `width` characters (`usize::MAX`: no limit, nothing
/// abbreviated).
pub fn render(r: &Report, top: usize, width: usize) -> String {
    let wide = width == usize::MAX;
    let mut text = String::new();
    let o = &mut text;
    header(o, r);
    hosts(o, r);
    notes(o, r, width);
    nodes(o, r, top, width);
    callbacks(o, r, top, width);
    topics(o, r, top, width);
    time_shares(o, r, top, width);
    services(o, r, top);
    executors(o, r, top);
    longest_paths(o, r, top, width);
    super::system::system(o, r, top);
    let _ = writeln!(o, "\nMessages matched publish->take: {}, unmatched: {}", r.flows_matched, r.flows_unmatched);
    if !r.warnings.is_empty() {
        let _ = writeln!(o, "\nWarnings");
        for w in take(&r.warnings, top.max(20)) {
            wrap(o, &esc(w), width, "  ", "    ");
        }
        if r.warnings.len() > top.max(20) {
            let _ = writeln!(o, "  ... {} more", r.warnings.len() - top.max(20));
        }
    }
    if wide {
        return text;
    }
    // Whatever is still too long (a long node or topic name) is cut at the end, unless the cut
    // would take a figure with it: a line with a number past the width stays whole.
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        out.push_str(&fit(line, width));
        out.push('\n');
    }
    out
}

/// The first lines: counts, span, distros, window.
fn header(o: &mut String, r: &Report) {
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
                crate::text::date_time(t)
            }
        };
        let _ = writeln!(o, "window: {} to {}", show(a), show(b));
    }
    if let Some(s) = &r.streamed {
        let left_out = match s.not_computed.as_slice() {
            [] => String::new(),
            l => format!("; not computed: {}", l.join(", ")),
        };
        let again = if s.readings > 1 { "; the longest paths followed in a second reading" } else { "" };
        let _ = writeln!(
            o,
            "streamed in {} of {:.1} s (percentiles within {}%){left_out}{again}",
            count(s.slices, "slice"),
            s.slice_ns as f64 / 1e9,
            s.percentile_relative_error * 100.0,
        );
    }
}

/// The hosts of recordings of several, and how their clocks were aligned.
fn hosts(o: &mut String, r: &Report) {
    use rostrace_analysis::hosts::ClockSource;
    if r.hosts.is_empty() {
        return;
    }
    let ms = |ns: i64| format!("{:+.3} ms", ns as f64 / 1e6);
    let _ = writeln!(o, "\nHosts (clocks aligned to the reference host's; offset: its clock minus the reference's)");
    for h in &r.hosts {
        let how = match h.source {
            ClockSource::Reference => "reference".to_string(),
            ClockSource::Estimated => format!(
                "offset {} ± {}{} from {} messages in, {} out{}",
                ms(h.offset_ns),
                ms(h.error_ns.unwrap_or(0)).trim_start_matches('+'),
                match h.at_ns {
                    Some(t) => format!(" at {}, drift {:+.1} ppm,", crate::text::date_time(t), h.drift_ppm),
                    None => String::new(),
                },
                h.messages_in,
                h.messages_out,
                h.via.as_ref().map_or(String::new(), |v| format!(" with {} (aligned through it)", esc(v)))
            ),
            ClockSource::Given => format!("offset {} as given (--clock-offset)", ms(h.offset_ns)),
            ClockSource::Recorded => {
                let side = match (h.lower_ns, h.upper_ns) {
                    (None, Some(u)) => format!("one-sided: offset at most {} ({} messages in)", ms(u), h.messages_in),
                    (Some(l), None) => {
                        format!("one-sided: offset at least {} ({} messages out)", ms(l), h.messages_out)
                    }
                    _ => "no message with the reference host".to_string(),
                };
                format!("recorded clock kept; {side}")
            }
        };
        let _ =
            writeln!(o, "  {:<24} {:>3} trace{}  {how}", esc(&h.host), h.traces, if h.traces == 1 { " " } else { "s" });
    }
}

/// What this trace cannot show.
fn notes(o: &mut String, r: &Report, width: usize) {
    let wide = width == usize::MAX;
    if !r.notes.is_empty() {
        let _ = writeln!(o, "\nWhat this trace cannot show");
        for n in &r.notes {
            wrap(o, &format!("{}.", esc(&n.summary())), width, "  - ", "    ");
            if !n.processes.is_empty() && n.processes.len() < n.of_processes {
                let shown = if wide { n.processes.len() } else { 5 };
                wrap(
                    o,
                    &format!("{} of {}: {}", n.processes.len(), n.of_processes, list(&n.processes, shown)),
                    width,
                    "    processes: ",
                    "      ",
                );
            }
            wrap(o, &esc(&n.advice), width, "    next time: ", "      ");
        }
    }
}

/// Nodes with what each owns.
fn nodes(o: &mut String, r: &Report, top: usize, width: usize) {
    let wide = width == usize::MAX;
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
        let _ = writeln!(
            o,
            "  {:<32} pid {:<8} {}",
            esc(&n.name),
            format!("{}{}", n.vpid, at(r, &n.host)),
            parts.join("; ")
        );
    }
    if r.nodes.len() > top.max(50) {
        let _ = writeln!(o, "  ... {} more", r.nodes.len() - top.max(50));
    }
}

/// Callbacks by total time.
fn callbacks(o: &mut String, r: &Report, top: usize, width: usize) {
    let wide = width == usize::MAX;
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
        let node = format!("{node}{}", at(r, &c.host));
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
        let mut why: Vec<&str> = r.callbacks.iter().filter_map(|c| c.unknown_reason).collect();
        why.sort_unstable();
        why.dedup();
        wrap(
            o,
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
}

/// Topics by activity, with their latencies.
fn topics(o: &mut String, r: &Report, top: usize, width: usize) {
    let wide = width == usize::MAX;
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
        // Several hosts: the pairs between two, whose latencies carry the clocks' alignment.
        let crossing: Vec<_> =
            t.pairs.iter().filter(|p| r.hosts.len() > 1 && p.publisher_host != p.subscription_host).collect();
        let one_crossing = match (t.pairs.len(), crossing.as_slice()) {
            (1, [p]) => format!("  ({} -> {})", esc(&p.publisher_host), esc(&p.subscription_host)),
            _ => String::new(),
        };
        let _ = writeln!(o, "      {} -> {}{one_crossing}", names(&t.publishers, n), names(&t.subscribers, n));
        if !t.unmatched_reasons.is_empty() {
            let why: Vec<String> = t.unmatched_reasons.iter().map(|x| format!("{} {}", x.count, x.reason)).collect();
            wrap(o, &esc(&why.join("; ")), width, "      unmatched: ", "        ");
        }
        if t.matched > 0 {
            let _ = writeln!(o, "      publish->take      {}", stats_line(&t.pub_to_take_ns));
            if t.pub_to_callback_ns.count > 0 {
                let _ = writeln!(o, "      publish->callback  {}", stats_line(&t.pub_to_callback_ns));
            }
            for p in crossing.iter().filter(|_| one_crossing.is_empty()) {
                let _ = writeln!(
                    o,
                    "      {} -> {} ({} matched) publish->take {}",
                    esc(&p.publisher_host),
                    esc(&p.subscription_host),
                    p.count,
                    stats_line(&p.pub_to_take_ns)
                );
            }
        }
    }
    if topics.len() > shown.len() {
        let _ = writeln!(o, "  ... {} more", topics.len() - shown.len());
    }
}

/// Callback time per process, node and thread.
fn time_shares(o: &mut String, r: &Report, top: usize, width: usize) {
    let mut busy_explained = false;
    for (title, v) in [("process", &r.per_process), ("node", &r.per_node), ("thread", &r.per_thread)] {
        if v.is_empty() {
            continue;
        }
        let _ = writeln!(o, "\nCallback time per {title}");
        for s in take(v, top.clamp(1, 10)) {
            let _ = writeln!(
                o,
                "  {:>10} {:>5.1}% of callback time, busy {:>5.1}%{}  pid {}{}{}  {}",
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
                at(r, &s.host),
                if s.name.is_empty() { "(unknown node)".into() } else { esc(&s.name) }
            );
            busy_explained |= s.busy > 1.0;
        }
    }
    if !r.per_thread.is_empty() {
        wrap(
            o,
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
}

/// Services' requests and latencies.
fn services(o: &mut String, r: &Report, top: usize) {
    if !r.services.is_empty() {
        let _ = writeln!(o, "\nServices");
        for sv in take(&r.services, top) {
            let _ = writeln!(
                o,
                "  {}  [server {} pid {}{}]  sent {}, served {}, responses {}, matched requests {}, matched responses {}",
                esc(&sv.name),
                if sv.server_node.is_empty() { "?".into() } else { esc(&sv.server_node) },
                sv.server_vpid,
                at(r, &sv.server_host),
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
}

/// Executor phases per thread, executors, lifecycle transitions.
fn executors(o: &mut String, r: &Report, top: usize) {
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
            let _ = writeln!(
                o,
                "  pid {} {} {:#x}: {}",
                e.vpid,
                esc(&e.kind),
                e.address,
                count(e.groups.len() as u64, "callback group")
            );
        }
    }
    if !r.lifecycle_transitions.is_empty() {
        let _ = writeln!(o, "\nLifecycle transitions: {}", r.lifecycle_transitions.len());
    }
}

/// The longest paths.
fn longest_paths(o: &mut String, r: &Report, top: usize, width: usize) {
    if let Some(lp) = r.longest_paths.as_ref().filter(|lp| !lp.paths.is_empty()) {
        let plural = |n: usize, one: &str, many: &str| if n == 1 { format!("1 {one}") } else { format!("{n} {many}") };
        let _ = writeln!(
            o,
            "\nLongest paths ({}: nodes whose timers publish; {}: subscriptions publishing nothing)",
            plural(lp.sources, "source", "sources"),
            plural(lp.sinks, "sink", "sinks")
        );
        let followed = lp.paths.iter().any(|p| p.counts.complete > 0);
        if followed {
            let _ = writeln!(o, "  by mean latency; `rostrace e2e --path ...` breaks one down");
        } else {
            wrap(
                o,
                "no message could be followed the whole way (the notes say which events the trace lacks to match a publication to a take); the paths found:",
                width,
                "  ",
                "  ",
            );
        }
        for (i, p) in take(&lp.paths, top.clamp(1, 10)).iter().enumerate() {
            let head = if p.counts.complete > 0 {
                format!(
                    "  #{} mean {} p99 {} max {}, {}/{} messages{}: ",
                    i + 1,
                    dur(p.latency.mean),
                    dur(p.latency.p99 as f64),
                    dur(p.latency.max as f64),
                    p.counts.complete,
                    p.counts.records,
                    super::paths::drops(p.counts.superseded, p.counts.lost)
                )
            } else if followed {
                format!("  #{} no message went the whole way ({} started): ", i + 1, p.counts.records)
            } else {
                format!("  #{} ", i + 1)
            };
            wrap(o, &esc(&p.label), width, &head, "      ");
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
        wrap(o, &text, width, "", "  ");
    }
}

/// `--time sim`'s lines under the text report's first, from the report mapped to sim time
/// (`slope` × system time): the trace's span and the window.
pub fn sim_lines(sim: &Report, slope: f64, width: usize) -> String {
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

/// What a callback belongs to: `sub /topic`, `timer 50.00 ms`, `srv /name`, `unknown`.
/// `@host` after a process id when the report spans several hosts (nothing for one).
fn at(r: &Report, host: &str) -> String {
    match r.hosts.len() > 1 && !host.is_empty() {
        true => format!("@{}", esc(host)),
        false => String::new(),
    }
}

fn owner(c: &rostrace_analysis::CallbackReport) -> String {
    match (c.kind, &c.topic, c.timer_period_ns) {
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
            let d = p.distribution.clone().filter(|d| !d.is_empty()).map(|d| capitalized(&d)).or_else(|| {
                p.tracetools_version.as_deref().and_then(tracetools::distro::of_version).map(str::to_string)
            });
            let assumed = if p.distro_assumed { ", assumed: ROS_DISTRO was not set" } else { "" };
            match (d, &p.tracetools_version) {
                (Some(d), Some(v)) => Some(format!("{d} (tracetools {v}{assumed})")),
                (Some(d), None) => Some(d),
                (None, Some(v)) => Some(format!("tracetools {v}")),
                (None, None) => None,
            }
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}
