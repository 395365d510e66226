//! Writing events as JSON lines and as babeltrace2-like text.

use ctf::types::Ty;
use ctf::{Event, FieldValue, StructRef};
use std::io::Write;

/// Writes `s` as a JSON string (invalid UTF-8 replaced).
pub fn json_str(out: &mut Vec<u8>, b: &[u8]) {
    out.push(b'"');
    let s = String::from_utf8_lossy(b);
    for ch in s.chars() {
        match ch {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

fn json_f64(out: &mut Vec<u8>, v: f64) {
    if v.is_nan() {
        out.extend_from_slice(b"\"nan\"");
    } else if v.is_infinite() {
        out.extend_from_slice(if v > 0.0 { b"\"inf\"" } else { b"\"-inf\"" });
    } else {
        let _ = write!(out, "{v:?}");
    }
}

/// Writes a value as JSON: integers exact, enumerations as their value, variants as the selected option.
pub fn json_value(out: &mut Vec<u8>, v: &FieldValue) {
    match v {
        FieldValue::U64(x) => {
            let _ = write!(out, "{x}");
        }
        FieldValue::I64(x) => {
            let _ = write!(out, "{x}");
        }
        FieldValue::Enum { value, .. } => {
            let _ = write!(out, "{value}");
        }
        FieldValue::F64(x) => json_f64(out, *x),
        FieldValue::Str(b) => json_str(out, b),
        FieldValue::Struct(s) => json_struct(out, s),
        FieldValue::Array(a) => {
            out.push(b'[');
            for (k, e) in a.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                json_value(out, &e);
            }
            out.push(b']');
        }
    }
}

fn json_members(out: &mut Vec<u8>, s: &StructRef, first: &mut bool) {
    for (name, v) in s.iter() {
        if !*first {
            out.push(b',');
        }
        *first = false;
        json_str(out, name.as_bytes());
        out.push(b':');
        json_value(out, &v);
    }
}

fn json_struct(out: &mut Vec<u8>, s: &StructRef) {
    out.push(b'{');
    let mut first = true;
    json_members(out, s, &mut first);
    out.push(b'}');
}

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

fn text_str(out: &mut Vec<u8>, b: &[u8]) {
    out.push(b'"');
    for ch in String::from_utf8_lossy(b).chars() {
        match ch {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

fn int_base(ty: &Ty) -> u8 {
    match ty {
        Ty::Int { t, .. } => t.base,
        Ty::Enum { t, .. } => t.int.base,
        _ => 10,
    }
}

fn text_value(out: &mut Vec<u8>, ty: &Ty, v: &FieldValue) {
    match v {
        FieldValue::U64(x) => {
            let _ = match int_base(ty) {
                16 => write!(out, "0x{x:X}"),
                8 => write!(out, "0{x:o}"),
                2 => write!(out, "0b{x:b}"),
                _ => write!(out, "{x}"),
            };
        }
        FieldValue::I64(x) => {
            let _ = match int_base(ty) {
                16 => write!(out, "0x{:X}", *x as u64),
                _ => write!(out, "{x}"),
            };
        }
        FieldValue::Enum { value, label } => {
            let _ = write!(out, "( \"{}\" : container = {value} )", label.unwrap_or("<unknown>"));
        }
        FieldValue::F64(x) => {
            let _ = write!(out, "{x}");
        }
        FieldValue::Str(b) => text_str(out, b),
        FieldValue::Struct(s) => text_struct(out, s),
        FieldValue::Array(a) => {
            out.extend_from_slice(b"[ ");
            for (k, e) in a.iter().enumerate() {
                if k > 0 {
                    out.extend_from_slice(b", ");
                }
                let _ = write!(out, "[{k}] = ");
                text_value(out, a.elem_ty(), &e);
            }
            out.extend_from_slice(b" ]");
        }
    }
}

fn text_struct(out: &mut Vec<u8>, s: &StructRef) {
    out.extend_from_slice(b"{ ");
    for (k, (name, ty, v)) in s.iter_typed().enumerate() {
        if k > 0 {
            out.extend_from_slice(b", ");
        }
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b" = ");
        text_value(out, ty, &v);
    }
    out.extend_from_slice(b" }");
}

/// Formats ns from the Unix epoch as `HH:MM:SS.nnnnnnnnn` (UTC).
pub fn clock_time(ns: i64) -> String {
    let t = ctf::time::utc(ns);
    format!("{:02}:{:02}:{:02}.{:09}", t.hour, t.minute, t.second, t.nanos)
}

/// Writes one event as a line of text like babeltrace2's: time, delta, host, name, then
/// packet cpu_id, contexts and payload.
pub fn text_event(out: &mut Vec<u8>, ev: &Event, prev_ns: Option<i64>, host: Option<&str>) {
    if let Some(t) = ev.timestamp() {
        let _ = write!(out, "[{}] ", clock_time(t));
        match prev_ns {
            Some(p) => {
                let d = t - p;
                let _ = write!(out, "(+{}.{:09}) ", d.div_euclid(1_000_000_000), d.rem_euclid(1_000_000_000));
            }
            None => out.extend_from_slice(b"(+?.?????????) "),
        }
    }
    if let Some(h) = host {
        out.extend_from_slice(h.as_bytes());
        out.push(b' ');
    }
    out.extend_from_slice(ev.name().as_bytes());
    out.push(b':');
    if let Some(c) = ev.cpu_id() {
        let _ = write!(out, " {{ cpu_id = {c} }},");
    }
    for s in [ev.stream_context(), ev.event_context(), ev.payload()].into_iter().flatten() {
        out.push(b' ');
        if s.is_empty() {
            out.extend_from_slice(b"{ }");
        } else {
            text_struct(out, &s);
        }
        out.push(b',');
    }
    if out.last() == Some(&b',') {
        out.pop();
    }
    out.push(b'\n');
}
