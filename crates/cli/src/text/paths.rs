//! The text of `rostrace paths` and `rostrace e2e`.

use super::{middle, width, wrap};
use crate::format::name as esc;
use crate::format::{dur, stats_line};
use crate::text::count;
use rostrace_analysis::paths::E2eSummary;
use std::fmt::Write as _;

/// What `rostrace paths` searched, as its text's first line says.
pub struct Search<'a> {
    pub from: &'a str,
    pub to: &'a str,
    pub through: &'a [String],
    pub include_first_callback: bool,
    pub include_last_callback: bool,
    /// Paths shown (0: all).
    pub top: usize,
}

/// The text of `rostrace paths`.
pub fn render_paths(a: Search<'_>, ranked: &[rostrace_analysis::paths::RankedPath]) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{} from {} to {}{}, ranked by mean latency{}",
        count(ranked.len() as u64, "path"),
        esc(a.from),
        esc(a.to),
        if a.through.is_empty() { String::new() } else { format!(" through {}", esc(&a.through.join(", "))) },
        if a.include_first_callback || a.include_last_callback {
            format!(
                " ({}{}{})",
                if a.include_first_callback { "from the first callback's start" } else { "" },
                if a.include_first_callback && a.include_last_callback { ", " } else { "" },
                if a.include_last_callback { "to the last callback's end" } else { "" }
            )
        } else {
            String::new()
        }
    );
    let shown = if a.top == 0 { ranked.len() } else { a.top.min(ranked.len()) };
    for (i, r) in ranked.iter().take(shown).enumerate() {
        let _ = writeln!(o);
        wrap(&mut o, &esc(&r.label), width(false), &format!("#{} ", i + 1), "    ");
        let _ = writeln!(
            o,
            "    {} of {} messages went the whole way{}, {} in flight at the end",
            r.counts.complete,
            r.counts.records,
            drops(r.counts.superseded, r.counts.lost),
            r.counts.in_flight
        );
        let _ = writeln!(o, "    latency: {}", stats_line(&r.latency));
        if !r.declared.is_empty() {
            let links: Vec<String> =
                r.declared.iter().filter_map(|c| Some(format!("{} ({})", esc(&c.node), c.path.link?.name()))).collect();
            wrap(&mut o, &links.join(", "), width(false), "    through message links: ", "      ");
        }
        if !r.services.is_empty() {
            let calls: Vec<String> = r
                .services
                .iter()
                .filter_map(|c| Some(format!("{} ({})", esc(&c.node), esc(&c.path.service.as_ref()?.service))))
                .collect();
            wrap(&mut o, &calls.join(", "), width(false), "    through service calls: ", "      ");
        }
    }
    if shown < ranked.len() {
        let _ = writeln!(o, "\n({} more; --top 0 shows them all)", ranked.len() - shown);
    }
    o
}

/// A share (0-100 %) as a bar of up to 20 cells, in eighths, after a space (empty for 0).
fn bar(share: f64) -> String {
    const PARTS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let eighths = (share.clamp(0.0, 100.0) / 100.0 * 20.0 * 8.0).round() as usize;
    if eighths == 0 {
        return String::new();
    }
    let mut b = String::from(" ");
    b.push_str(&"█".repeat(eighths / 8));
    if !eighths.is_multiple_of(8) {
        b.push(PARTS[eighths % 8]);
    }
    b
}

/// ` (N superseded, M lost)` of a path's records, or nothing when none was dropped: a message
/// superseded by a newer one at a node that publishes the latest it took is not lost.
pub fn drops(superseded: usize, lost: usize) -> String {
    match (superseded, lost) {
        (0, 0) => String::new(),
        (s, 0) => format!(" ({s} superseded)"),
        (0, l) => format!(" ({l} lost)"),
        (s, l) => format!(" ({s} superseded, {l} lost)"),
    }
}

pub fn render_e2e(o: &E2eSummary) -> String {
    let mut s = String::new();
    wrap(&mut s, &esc(&o.label), width(false), "Path ", "    ");
    let mut bounds = Vec::new();
    bounds.push(if o.include_first_callback { "the first callback's start" } else { "the first publication" });
    bounds.push(if o.include_last_callback { "the last callback's end" } else { "the last callback's start" });
    let _ = writeln!(s, "  from {} to {}", bounds[0], bounds[1]);
    let _ = writeln!(
        s,
        "  {}: {} went the whole way, {} superseded by a newer one, {} lost on the way, {} in flight \
         when the trace ended",
        count(o.counts.records as u64, "message"),
        o.counts.complete,
        o.counts.superseded,
        o.counts.lost,
        o.counts.in_flight
    );
    if !o.crossings.is_empty() {
        let _ = writeln!(s, "\nHow each node passes the message on");
        let name_w = o.crossings.iter().map(|c| esc(&c.node).chars().count()).max().unwrap_or(0).min(40);
        for c in &o.crossings {
            let p = &c.path;
            let how = match (p.link, p.source) {
                (Some(l), "message link") => format!("declared by the node (message_link_{})", l.name()),
                (_, "service call") => match &p.service {
                    Some(h) => {
                        let servers: Vec<String> = h.servers.iter().map(|n| esc(n).into_owned()).collect();
                        format!(
                            "through service {} of {}: the input's callback sends the request, the output follows the response",
                            esc(&h.service),
                            if servers.is_empty() { "no node seen".to_string() } else { servers.join(", ") }
                        )
                    }
                    None => "through a service call".to_string(),
                },
                (_, "observed") => "seen publishing during the input's callback".to_string(),
                (_, "architecture file") => "set by the architecture file".to_string(),
                (_, "inferred") => "inferred: another of the node's callbacks publishes it".to_string(),
                _ => "by default".to_string(),
            };
            let _ = writeln!(
                s,
                "  {:<name_w$}  {} -> {}: {}, {how}",
                esc(&c.node),
                esc(&p.subscribe),
                esc(&p.publish),
                p.context.caret_name()
            );
        }
    }
    let _ = writeln!(s, "\nEnd-to-end latency ({})\n  {}", count(o.latency.count, "message"), stats_line(&o.latency));
    match (o.hosts_crossed, o.clock_uncertainty_ns) {
        (Some(n @ 1..), Some(b)) => {
            let _ = writeln!(
                s,
                "  across hosts ({n} crossing{}): each latency within ± {} (the hosts' clock alignment)",
                if n == 1 { "" } else { "s" },
                dur(b as f64)
            );
        }
        (Some(n @ 1..), None) => {
            let _ = writeln!(
                s,
                "  across hosts ({n}): a host's clock could not be aligned, so latencies across it are as recorded"
            );
        }
        _ => {}
    }
    if !o.segments.is_empty() {
        let _ = writeln!(s, "\nWhere the time goes (messages that went the whole way)");
        let name_w = o.segments.iter().map(|g| esc(&g.name).chars().count()).max().unwrap_or(0).clamp(8, 60);
        let _ = writeln!(
            s,
            "  {:<name_w$}  {:<13}  {:>10}  {:>10}  {:>10}  {:>10}  {:>6}",
            "segment", "kind", "mean", "p50", "p99", "max", "share"
        );
        let total: f64 = o.segments.iter().map(|g| g.latency.mean).sum();
        for g in &o.segments {
            let share = if total > 0.0 { 100.0 * g.latency.mean / total } else { 0.0 };
            let _ = writeln!(
                s,
                "  {:<name_w$}  {:<13}  {:>10}  {:>10}  {:>10}  {:>10}  {:>5.1}%{}",
                middle(&esc(&g.name), name_w),
                g.kind,
                dur(g.latency.mean),
                dur(g.latency.p50 as f64),
                dur(g.latency.p99 as f64),
                dur(g.latency.max as f64),
                share,
                bar(share)
            );
        }
    }
    if !o.response_time.is_empty() {
        let _ = writeln!(s, "\nResponse time");
        for r in &o.response_time {
            let _ = writeln!(s, "  {:<28} {:>6} samples  {}", r.case, r.stats.count, stats_line(&r.stats));
        }
    }
    s
}

/// The text of `rostrace age`.
pub fn render_age(a: &rostrace_analysis::paths::DataAge, opt: rostrace_analysis::paths::PathOptions) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "Data age at {}: how old each source's data is in the {} it took\n(from the source's {} to {}'s callback {})",
        esc(&a.sink),
        count(a.inputs.len() as u64, "message"),
        if opt.include_first_callback { "callback start" } else { "publication" },
        esc(&a.sink),
        if opt.include_last_callback { "end" } else { "start" },
    );
    for s in &a.sources {
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "{} -{}->  ({}, {})",
            esc(&s.node),
            esc(&s.topic),
            count(s.paths.len() as u64, "path"),
            count(s.messages as u64, "message")
        );
        if s.messages > 0 {
            let _ = writeln!(o, "    age: {}", stats_line(&s.age));
        } else {
            let _ = writeln!(o, "    no message went the whole way");
        }
    }
    o
}
