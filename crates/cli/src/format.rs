//! Text of the commands: events as JSON lines and as babeltrace2-like text, durations and
//! their statistics.

use rostrace_ctf::json::{json_members, json_str, json_struct};
use rostrace_ctf::types::{IntType, Ty, NO_REG};
use rostrace_ctf::{EnvValue, Event, FieldValue, Member, StructRef};
use std::io::Write;

/// Writes one event as a JSON object and a newline.
pub fn json_event(out: &mut Vec<u8>, ev: &Event) {
    out.extend_from_slice(b"{\"ts\":");
    match ev.timestamp() {
        Some(t) => {
            let _ = write!(out, "{t}");
        }
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"name\":");
    json_str(out, ev.name().as_bytes());
    if let Some(c) = ev.cpu_id() {
        let _ = write!(out, ",\"cpu_id\":{c}");
    }
    out.extend_from_slice(b",\"context\":{");
    let mut first = true;
    if let Some(s) = ev.stream_context() {
        json_members(out, &s, &mut first);
    }
    if let Some(s) = ev.event_context() {
        json_members(out, &s, &mut first);
    }
    out.extend_from_slice(b"},\"fields\":");
    match ev.payload() {
        Some(p) => json_struct(out, &p),
        None => out.extend_from_slice(b"{}"),
    }
    out.extend_from_slice(b"}\n");
}

/// Writes `b` quoted and escaped as babeltrace2 does: `\\`, `\'`, `\"`, `\?`, C escapes for
/// control characters, `\xNN` for the others; every other byte as is.
fn text_str(out: &mut Vec<u8>, b: &[u8]) {
    out.push(b'"');
    escape(out, b, How::Quoted);
    out.push(b'"');
}

/// How [`escape`] escapes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum How {
    /// In a quoted string (`rostrace events`, as babeltrace2): `'`, `"` and `?` escaped too.
    Quoted,
    /// A name in a text report: C1 controls escaped too.
    Name,
    /// Whole lines of text for a terminal: as a name, but line feeds and tabs (the text's own
    /// layout) and backslashes kept.
    Text,
}

/// Writes `b` with its backslashes and control characters (C0 and DEL: a terminal would act on
/// them, an escape sequence can clear or retitle it) escaped as babeltrace2 does, as C escapes
/// (`\e`, `\n`, `\t`, ...) or `\xNN`; in a quoted string with `'`, `"` and `?` escaped too;
/// else the C1 controls (U+0080 to U+009F, which some terminals act on too) as well, as
/// `\xc2\xNN`. Every other byte as is (UTF-8 stays readable).
fn escape(out: &mut Vec<u8>, b: &[u8], how: How) {
    let quoted = how == How::Quoted;
    let text = how == How::Text;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'\\' if text => out.push(c),
            b'\n' | b'\t' if text => out.push(c),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\'' if quoted => out.extend_from_slice(b"\\'"),
            b'"' if quoted => out.extend_from_slice(b"\\\""),
            b'?' if quoted => out.extend_from_slice(b"\\?"),
            0 => out.extend_from_slice(b"\\0"),
            7 => out.extend_from_slice(b"\\a"),
            8 => out.extend_from_slice(b"\\b"),
            0x1b => out.extend_from_slice(b"\\e"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x0b => out.extend_from_slice(b"\\v"),
            c if c < 0x20 || c == 0x7f => {
                let _ = write!(out, "\\x{c:02x}");
            }
            0xc2 if !quoted && b.get(i + 1).is_some_and(|n| (0x80..0xa0).contains(n)) => {
                out.extend_from_slice(b"\\xc2");
            }
            c if !quoted && (0x80..0xa0).contains(&c) && i > 0 && b[i - 1] == 0xc2 => {
                let _ = write!(out, "\\x{c:02x}");
            }
            c => out.push(c),
        }
    }
}

/// `s` escaped as `how` says; borrowed when nothing needs it.
fn escaped(s: &str, how: How) -> std::borrow::Cow<'_, str> {
    let b = s.as_bytes();
    let needs = |i: usize| {
        let c = b[i];
        match c {
            b'\\' => how != How::Text,
            b'\n' | b'\t' if how == How::Text => false,
            c if c < 0x20 || c == 0x7f => true,
            0xc2 => b.get(i + 1).is_some_and(|n| (0x80..0xa0).contains(n)),
            _ => false,
        }
    };
    if !(0..b.len()).any(needs) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = Vec::with_capacity(s.len() + 8);
    escape(&mut out, b, how);
    // Only whole characters were replaced, by ASCII.
    std::borrow::Cow::Owned(String::from_utf8(out).expect("UTF-8 in, UTF-8 out"))
}

/// A name (node, topic, symbol, process, ...) from a trace as text for a terminal: its
/// backslashes and control characters escaped as `rostrace events` escapes strings, C1 controls
/// too (see [`escape`]); borrowed when there is none.
pub fn name(s: &str) -> std::borrow::Cow<'_, str> {
    escaped(s, How::Name)
}

/// Text for a terminal (every line that rostrace prints, on standard output or standard error:
/// [`crate::out`]'s macros pass it here): the control characters a terminal would act on
/// escaped as in [`name`], its line feeds and tabs kept. Whatever a trace, a file name or an
/// argument puts into a message, no escape sequence reaches the terminal.
pub fn terminal(s: &str) -> std::borrow::Cow<'_, str> {
    escaped(s, How::Text)
}

/// Writes the raw bits `raw` of an integer of type `t` in its preferred display base, as
/// babeltrace2 does: binary with all `size` digits, octal and hexadecimal of negative numbers
/// limited to the integer's size (rounded up to whole digits), decimal signed or not.
fn text_int(out: &mut Vec<u8>, t: &IntType, raw: u64) {
    let len = t.size.clamp(1, 64);
    let masked = |digit_bits: u32| {
        let r = len.div_ceil(digit_bits) * digit_bits;
        if r < 64 {
            raw & ((1u64 << r) - 1)
        } else {
            raw
        }
    };
    let _ = match t.base {
        2 => {
            out.extend_from_slice(b"0b");
            for bit in (0..len).rev() {
                out.push(if raw >> bit & 1 == 1 { b'1' } else { b'0' });
            }
            Ok(())
        }
        8 => write!(out, "0{:o}", if t.signed { masked(3) } else { raw }),
        16 => write!(out, "0x{:X}", masked(4)),
        _ if t.signed => write!(out, "{}", raw as i64),
        _ => write!(out, "{raw}"),
    };
}

/// Formats `v` like C's `printf("%g", v)`.
pub fn c_g(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let strip = |m: &str| -> String {
        if m.contains('.') {
            m.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            m.to_string()
        }
    };
    // Six significant digits: the exponent after rounding decides the form.
    let e_form = format!("{v:.5e}");
    let (mant, exp) = e_form.split_once('e').expect("exponent");
    let exp: i32 = exp.parse().expect("exponent digits");
    if !(-4..6).contains(&exp) {
        format!("{}e{}{:02}", strip(mant), if exp < 0 { '-' } else { '+' }, exp.abs())
    } else {
        strip(&format!("{v:.*}", (5 - exp) as usize))
    }
}

/// Whether babeltrace2 keeps a field of type `ty` (declared) in what it shows: integers mapped
/// to a clock are dropped unless a length or tag refers to them; a structure is kept when it
/// was declared empty or keeps a member; arrays follow their element; variants any option.
fn shown(ty: &Ty) -> bool {
    match ty {
        Ty::Int { t, reg, .. } => t.clock.is_none() || *reg != NO_REG,
        Ty::Enum { t, reg, .. } => t.int.clock.is_none() || *reg != NO_REG,
        Ty::Struct(s) => s.fields.is_empty() || s.fields.iter().any(|f| shown(&f.ty)),
        Ty::Variant(v) => v.options.iter().any(|f| shown(&f.ty)),
        Ty::Array { elem, .. } | Ty::Sequence { elem, .. } => shown(elem),
        _ => true,
    }
}

/// Packet context members that babeltrace2 reads as packet properties, not as fields.
const PACKET_PROPERTIES: [&str; 6] =
    ["timestamp_begin", "timestamp_end", "events_discarded", "packet_seq_num", "packet_size", "content_size"];

/// Which members of a structure babeltrace2 shows, by name and declared type.
type Keep = fn(&str, &Ty) -> bool;

fn shown_field(_: &str, ty: &Ty) -> bool {
    shown(ty)
}

fn shown_in_packet_context(name: &str, ty: &Ty) -> bool {
    match ty {
        Ty::Int { reg, .. } | Ty::Enum { reg, .. } if PACKET_PROPERTIES.contains(&name) => *reg != NO_REG,
        _ => shown(ty),
    }
}

fn text_value(out: &mut Vec<u8>, m: &Member) {
    for _ in 0..m.variants {
        out.extend_from_slice(b"{ ");
    }
    match (m.value, m.ty) {
        (FieldValue::U64(x), Ty::Int { t, .. }) => text_int(out, t, x),
        (FieldValue::I64(x), Ty::Int { t, .. }) => text_int(out, t, x as u64),
        (FieldValue::Enum { value, .. }, Ty::Enum { t, .. }) => {
            out.extend_from_slice(b"( ");
            let labels = t.labels(value);
            if labels.is_empty() {
                out.extend_from_slice(b"<unknown>");
            }
            for (k, l) in labels.iter().enumerate() {
                if k > 0 {
                    out.extend_from_slice(b", ");
                }
                text_str(out, l.as_bytes());
            }
            out.extend_from_slice(b" : container = ");
            text_int(out, &t.int, value as u64);
            out.extend_from_slice(b" )");
        }
        (FieldValue::F64(x), _) => out.extend_from_slice(c_g(x).as_bytes()),
        (FieldValue::Str(b), _) => text_str(out, b),
        (FieldValue::Struct(s), _) => text_struct(out, &s, shown_field),
        (FieldValue::Array(a), _) => {
            out.push(b'[');
            for (k, e) in a.members().enumerate() {
                out.extend_from_slice(if k > 0 { b", " } else { b" " });
                let _ = write!(out, "[{k}] = ");
                text_value(out, &e);
            }
            out.extend_from_slice(b" ]");
        }
        (FieldValue::U64(_) | FieldValue::I64(_) | FieldValue::Enum { .. }, _) => {
            unreachable!("integers and enumerations are decoded from their own types")
        }
    }
    for _ in 0..m.variants {
        out.extend_from_slice(b" }");
    }
}

fn text_struct(out: &mut Vec<u8>, s: &StructRef, keep: Keep) {
    out.push(b'{');
    for (k, m) in s.members().filter(|m| keep(m.name, m.declared)).enumerate() {
        out.extend_from_slice(if k > 0 { b", " } else { b" " });
        out.extend_from_slice(m.name.as_bytes());
        out.extend_from_slice(b" = ");
        text_value(out, &m);
    }
    out.extend_from_slice(b" }");
}

/// Formats ns from the Unix epoch as `HH:MM:SS.nnnnnnnnn` (UTC).
pub fn clock_time(ns: i64) -> String {
    let mut out = Vec::with_capacity(18);
    write_clock_time(&mut out, ns);
    String::from_utf8(out).expect("ASCII")
}

/// Writes [`clock_time`] to `out` (no allocation per event).
fn write_clock_time(out: &mut Vec<u8>, ns: i64) {
    let t = rostrace_ctf::time::utc(ns);
    let _ = write!(out, "{:02}:{:02}:{:02}.{:09}", t.hour, t.minute, t.second, t.nanos);
}

/// What babeltrace2 prints between the time and the event name for events of a trace with
/// `schema`: the environment's `hostname`, `procname` and `(vpid)`, joined by `:`.
pub fn trace_prefix(schema: &rostrace_ctf::Schema) -> Option<String> {
    let mut s = String::new();
    let mut add = |part: String| {
        if !s.is_empty() {
            s.push(':');
        }
        s.push_str(&part);
    };
    if let Some(EnvValue::Str(h)) = schema.env("hostname") {
        add(h.clone());
    }
    if let Some(EnvValue::Str(p)) = schema.env("procname") {
        add(p.clone());
    }
    if let Some(EnvValue::Int(v)) = schema.env("vpid") {
        add(format!("({v})"));
    }
    (!s.is_empty()).then_some(s)
}

/// Writes one event as a line of text like babeltrace2's default output (with `TZ=UTC`): time,
/// delta from the previous event printed, [`trace_prefix`], name, then packet context, stream event
/// context, event context and payload, each as a structure.
pub fn text_event(out: &mut Vec<u8>, ev: &Event, prev_ns: Option<i64>, prefix: Option<&str>) {
    if let Some(t) = ev.timestamp() {
        if t >= 0 {
            out.push(b'[');
            write_clock_time(out, t);
            out.extend_from_slice(b"] ");
        } else {
            // babeltrace2 falls back to seconds for times before the epoch.
            let (s, n) = (t / 1_000_000_000, t % 1_000_000_000);
            let _ = write!(out, "[-{}.{:09}] ", s.unsigned_abs(), n.unsigned_abs());
        }
        match prev_ns {
            Some(p) => {
                // Unsigned, as babeltrace2 computes it (a step back wraps around).
                let d = t.wrapping_sub(p) as u64;
                let _ = write!(out, "(+{}.{:09}) ", d / 1_000_000_000, d % 1_000_000_000);
            }
            None => out.extend_from_slice(b"(+?.?????????) "),
        }
    }
    if let Some(h) = prefix {
        out.extend_from_slice(h.as_bytes());
        out.push(b' ');
    }
    out.extend_from_slice(ev.name().as_bytes());
    out.extend_from_slice(b": ");
    let mut first = true;
    for (s, keep) in [
        (ev.packet_context(), shown_in_packet_context as Keep),
        (ev.stream_context(), shown_field),
        (ev.event_context(), shown_field),
        (ev.payload(), shown_field),
    ] {
        let Some(s) = s else { continue };
        // Shown when declared empty or when it shows a member (a question of types alone).
        if !s.is_empty() && !s.ty().fields.iter().any(|f| keep(&f.name, &f.ty)) {
            continue;
        }
        if !first {
            out.extend_from_slice(b", ");
        }
        first = false;
        text_struct(out, &s, keep);
    }
    out.push(b'\n');
}

/// A duration in ns, readable: `812 ns`, `12.3 us`, `4.56 ms`, `1.234 s`.
pub use rostrace_analysis::check::units::human_duration as dur;

/// A distribution's statistics on one line (`-` when empty).
pub fn stats_line(s: &rostrace_analysis::Stats) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use rostrace_ctf::types::{ByteOrder, Encoding, IntRead};

    #[test]
    fn floats_print_like_c_g() {
        for (v, s) in [
            (0.5, "0.5"),
            (1.0, "1"),
            (100000.0, "100000"),
            (999999.5, "1e+06"),
            (1234567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (1.234e-05, "1.234e-05"),
            (123.456789, "123.457"),
            (-2.5e-07, "-2.5e-07"),
            (1e300, "1e+300"),
            (5e-324, "4.94066e-324"),
            (0.30000000000000004, "0.3"),
            (9.9999949, "9.99999"),
            (9.9999951, "10"),
            (-0.0, "-0"),
            (f64::INFINITY, "inf"),
        ] {
            assert_eq!(c_g(v), s, "{v:?}");
        }
    }

    fn int(size: u32, signed: bool, base: u8) -> IntType {
        IntType {
            size,
            align: 8,
            signed,
            byte_order: ByteOrder::Little,
            base,
            encoding: Encoding::None,
            clock: None,
            read: IntRead::Bits,
        }
    }

    #[test]
    fn integers_print_in_their_base_like_babeltrace2() {
        let cases: [(IntType, u64, &str); 8] = [
            (int(32, true, 16), -2i64 as u64, "0xFFFFFFFE"),
            (int(12, true, 16), -1i64 as u64, "0xFFF"),
            (int(64, false, 16), 0xbea29af0, "0xBEA29AF0"),
            (int(8, true, 8), -1i64 as u64, "0777"),
            (int(8, false, 8), 0, "00"),
            (int(5, false, 2), 5, "0b00101"),
            (int(32, true, 10), -7i64 as u64, "-7"),
            (int(64, false, 10), u64::MAX, "18446744073709551615"),
        ];
        for (t, raw, want) in cases {
            let mut out = Vec::new();
            text_int(&mut out, &t, raw);
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
    }

    #[test]
    fn strings_escape_like_babeltrace2() {
        let mut out = Vec::new();
        text_str(&mut out, b"a\"b\\c'?\n\t\x01\x7f\xc3\xa9");
        assert_eq!(out, b"\"a\\\"b\\\\c\\'\\?\\n\\t\\x01\\x7f\xc3\xa9\"");
    }

    #[test]
    fn names_escape_controls_as_events_does() {
        assert!(matches!(name("/ns/node_1"), std::borrow::Cow::Borrowed("/ns/node_1")));
        assert_eq!(name("/n\x1b]0;pwned\x07\x1b[2J?'\"\\é\n"), "/n\\e]0;pwned\\a\\e[2J?'\"\\\\é\\n");
        // CSI as one C1 character; other characters of 0xc2 and of 0x80-0x9f bytes kept.
        assert_eq!(name("a\u{9b}2Jb\u{a0}\u{100}"), "a\\xc2\\x9b2Jb\u{a0}\u{100}");
    }

    #[test]
    fn text_keeps_its_layout_and_escapes_the_rest() {
        assert!(matches!(terminal("a\tb\\c\n"), std::borrow::Cow::Borrowed(_)));
        assert_eq!(terminal("x \x1b]0;t\x07 \u{9b}2J\r\n"), "x \\e]0;t\\a \\xc2\\x9b2J\\r\n");
    }
}
