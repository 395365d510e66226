//! `rostrace diff` on real traces: a trace against itself changes nothing, in callbacks, topics
//! and end-to-end paths.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_rostrace");

fn diff_json(base: &Path, new: &Path) -> (Value, i32) {
    let out = Command::new(BIN).arg("diff").arg(base).arg(new).args(["--json", "-"]).output().unwrap();
    let v: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (v, out.status.code().unwrap_or(-1))
}

#[test]
fn trace_against_itself_changes_nothing() {
    let t = rostrace_testkit::test_data().join("traces/caret-demos-e2e-jazzy");
    if !rostrace_testkit::require(t.exists(), "the shared trace caret-demos-e2e-jazzy") {
        return;
    }
    let (v, code) = diff_json(&t, &t);
    assert_eq!(code, 0, "{v}");
    let changes = v["changes"].as_array().unwrap();
    assert!(!changes.is_empty());
    for kind in ["callback", "topic", "path"] {
        assert!(changes.iter().any(|c| c["kind"] == kind), "no {kind} compared: {v}");
    }
    for c in changes {
        assert_eq!((c["p_value"].as_f64(), c["cliff_delta"].as_f64()), (Some(1.0), Some(0.0)), "{c}");
    }
    assert!(v["added"].as_array().unwrap().is_empty() && v["removed"].as_array().unwrap().is_empty());
}
