//! Values as JSON: integers exact, strings escaped (invalid UTF-8 replaced), enumerations as
//! their value, variants as the selected option.

use crate::{FieldValue, StructRef};
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

/// Writes a number as JSON (`"nan"`, `"inf"`, `"-inf"` as strings).
pub fn json_f64(out: &mut Vec<u8>, v: f64) {
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

/// Writes a structure's members as `"name":value` pairs, comma-separated (a comma first
/// unless `first`).
pub fn json_members(out: &mut Vec<u8>, s: &StructRef, first: &mut bool) {
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

/// Writes a structure as a JSON object.
pub fn json_struct(out: &mut Vec<u8>, s: &StructRef) {
    out.push(b'{');
    let mut first = true;
    json_members(out, s, &mut first);
    out.push(b'}');
}
