//! Text for the terminal: lines fitted to its width, names cut in their middle, lists cut
//! short; and the text of the analysis ([`report`]).

pub mod paths;
mod recording;
mod report;
mod system;

pub use recording::{say, summary};
pub use report::{render, sim_lines};

use crate::format::name as esc;
use std::fmt::Write as _;

/// The width the report must fit: `COLUMNS`, else the terminal's; unlimited when `wide`, and
/// when standard output is no terminal (a file or a pipe holds whole names, as `--wide` gives).
pub(crate) fn width(wide: bool) -> usize {
    if wide {
        return usize::MAX;
    }
    if let Some(w) = std::env::var("COLUMNS").ok().and_then(|v| v.trim().parse::<usize>().ok()).filter(|w| *w > 0) {
        return w.max(40);
    }
    // SAFETY: isatty reads nothing but its descriptor.
    if unsafe { libc::isatty(1) } != 1 {
        return usize::MAX;
    }
    // SAFETY: winsize is plain integers, for which all zeros is a value.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ on stdout writes a winsize into `ws`; on failure it is left zeroed.
    let ok = unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) == 0 };
    if ok && ws.ws_col > 0 {
        (ws.ws_col as usize).max(40)
    } else {
        100
    }
}

/// `s` in at most `n` characters, cut at the end with `…`.
pub(crate) fn short(s: &str, n: usize) -> String {
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
pub(crate) fn names(v: &[std::sync::Arc<str>], n: usize) -> String {
    let shown: Vec<_> = v.iter().take(n).map(|s| if s.is_empty() { "?".into() } else { esc(s) }).collect();
    if v.len() > n {
        format!("{} +{}", shown.join(" "), v.len() - n)
    } else {
        shown.join(" ")
    }
}

/// At most `n` items, comma-separated, then how many more.
pub(crate) fn list(v: &[String], n: usize) -> String {
    let shown: Vec<_> = v.iter().take(n).map(|s| esc(s)).collect();
    if v.len() > n {
        format!("{}, +{} more", shown.join(", "), v.len() - n)
    } else {
        shown.join(", ")
    }
}

pub(crate) fn take<T>(v: &[T], top: usize) -> &[T] {
    if top == 0 || v.len() <= top {
        v
    } else {
        &v[..top]
    }
}

/// `line` in lines of at most `width` characters: cut with `…` where what is cut holds no figure
/// (a long list of names), else wrapped at its spaces, the rest indented under it, so that no
/// figure (nor its unit) is ever cut.
pub(crate) fn fit(line: &str, width: usize) -> String {
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

/// Bytes, readable: `812 B`, `12.3 KiB`, `4.56 MiB`.
pub(crate) fn bytes(b: i64) -> String {
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
pub fn describe_loss(l: &rostrace_ctf::Loss) -> String {
    let what = match l.kind {
        rostrace_ctf::LossKind::Events(n) => format!("{} discarded", count(n, "event")),
        rostrace_ctf::LossKind::Packets(n) => format!("{} lost", count(n, "packet")),
    };
    let range = match (l.begin_ns, l.end_ns) {
        (Some(b), Some(e)) => format!(" between {} and {}", crate::format::clock_time(b), crate::format::clock_time(e)),
        (None, Some(e)) => format!(" before {}", crate::format::clock_time(e)),
        _ => String::new(),
    };
    format!("{}: {what}{range}", l.path.display())
}

/// `YYYY-MM-DD HH:MM:SS.nnnnnnnnn` UTC.
pub fn date_time(ns: i64) -> String {
    let t = rostrace_ctf::time::utc(ns);
    format!("{:04}-{:02}-{:02} {} UTC", t.year, t.month, t.day, crate::format::clock_time(ns))
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
