//! Helpers shared by the tracetools integration tests.
#![allow(dead_code)]

use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where cargo built libtracetools.so for this test run (target/<profile>/deps), or target/<profile>.
pub fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap().to_path_buf();
    if deps.join("libtracetools.so").exists() {
        deps
    } else {
        deps.parent().unwrap().to_path_buf()
    }
}

/// Emitted events per thread: (event, fields).
pub type PerThread = BTreeMap<i64, Vec<(String, Value)>>;

pub fn to_json(v: &rostrace_ctf::FieldValue) -> Value {
    match v {
        rostrace_ctf::FieldValue::U64(x) => json!(x),
        rostrace_ctf::FieldValue::I64(x) => json!(x),
        rostrace_ctf::FieldValue::Enum { value, .. } => json!(*value as i64),
        rostrace_ctf::FieldValue::F64(x) => json!(x),
        rostrace_ctf::FieldValue::Str(b) => json!(String::from_utf8_lossy(b)),
        rostrace_ctf::FieldValue::Struct(s) => {
            Value::Object(s.iter().map(|(k, v)| (k.to_string(), to_json(&v))).collect::<Map<_, _>>())
        }
        rostrace_ctf::FieldValue::Array(a) => Value::Array(a.iter().map(|e| to_json(&e)).collect()),
    }
}

/// Events of `ros2:` read back by rostrace's reader, per thread; with the discarded count.
pub fn read_rostrace(dir: &Path) -> (PerThread, u64) {
    let (set, errors) = rostrace_ctf::TraceSet::open(&[dir]);
    assert!(errors.is_empty(), "{errors:?}");
    let mut m = PerThread::new();
    let mut events = set.events();
    while let Some(ev) = events.next() {
        let ev = ev.unwrap_or_else(|e| panic!("{e}"));
        if !ev.name().starts_with("ros2:") {
            continue;
        }
        let tid = ev.context_field("vtid").and_then(|v| v.as_i64()).expect("vtid context");
        let fields = ev.payload().map(|p| to_json(&rostrace_ctf::FieldValue::Struct(p))).unwrap_or(json!({}));
        m.entry(tid).or_default().push((ev.name().to_string(), fields));
    }
    let discarded = events.discarded_events();
    (m, discarded)
}
