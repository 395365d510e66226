//! Fuzzes the data stream decoder: the input's first byte picks the metadata of one of the
//! seed traces, the rest is read as a data stream file of that trace, touching every value.
#![no_main]

use rostrace_ctf::{FieldValue, Schema, StreamReader, StructRef};
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use std::sync::OnceLock;

/// Traces whose metadata the stream inputs are decoded with (LTTng UST, kernel, CTF writer, big-endian).
const TRACES: &[&str] = &[
    "traces/tc-ros2-example2",
    "traces/caret-demos-e2e-jazzy/ust/uid/1000/64-bit",
    "ctf-edge/tc-bug446190",
    "ctf-edge/tc-flipping-endianness",
    "ctf-edge/tc-ctfwriter_JF8nq3",
    "ctf-edge/tc-funky_trace",
    "ctf-edge/babeltrace/ctf-traces/succeed/session-rotation/3/ust/pid/10352",
];

fn schemas() -> &'static Vec<Schema> {
    static S: OnceLock<Vec<Schema>> = OnceLock::new();
    S.get_or_init(|| {
        let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared");
        TRACES
            .iter()
            .filter_map(|t| rostrace_ctf::metadata::read_metadata(&shared.join(t).join("metadata")).ok().map(|(s, _)| s))
            .collect()
    })
}

fn touch(s: &StructRef) -> u64 {
    s.iter().map(|(_, v)| value(&v)).fold(0, u64::wrapping_add)
}

fn value(v: &FieldValue) -> u64 {
    match v {
        FieldValue::U64(x) => *x,
        FieldValue::I64(x) => *x as u64,
        FieldValue::Enum { value, label } => *value as u64 + label.map_or(0, |l| l.len() as u64),
        FieldValue::F64(x) => x.to_bits(),
        FieldValue::Str(b) => b.len() as u64,
        FieldValue::Struct(s) => touch(s),
        FieldValue::Array(a) => a.iter().map(|e| value(&e)).fold(0, u64::wrapping_add),
    }
}

fuzz_target!(|data: &[u8]| {
    let schemas = schemas();
    if data.is_empty() || schemas.is_empty() {
        return;
    }
    let schema = &schemas[data[0] as usize % schemas.len()];
    let path = Path::new("fuzz-input");
    let mut r = StreamReader::new(path, &data[1..], schema, 0);
    let mut n = 0u64;
    for _ in 0..100_000 {
        match r.advance() {
            Ok(true) => {
                if let Some(ev) = r.event() {
                    n = n.wrapping_add(ev.name().len() as u64);
                    for s in [ev.stream_context(), ev.event_context(), ev.payload(), ev.packet_context()].into_iter().flatten() {
                        n = n.wrapping_add(touch(&s));
                    }
                }
            }
            Ok(false) => break,
            Err(_) => continue,
        }
    }
    std::hint::black_box(n);
});
