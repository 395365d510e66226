//! `rostrace diff` on real traces: a trace against itself changes nothing, in callbacks, topics
//! publisher → subscriber pairs and end-to-end paths, whether given as the trace or as its saved `analyze --json --samples`.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_rostrace");

fn shared_trace() -> Option<std::path::PathBuf> {
    rostrace_testkit::test_data_path("traces/caret-demos-e2e-jazzy")
}

/// `rostrace analyze TRACE --json FILE` (with `--samples` when `samples`).
fn save(trace: &Path, file: &Path, samples: bool) {
    let mut c = Command::new(BIN);
    c.arg("analyze").arg(trace).arg("--json").arg(file);
    if samples {
        c.arg("--samples");
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The matched items of a diff's JSON, by kind and name.
fn matched(v: &Value) -> Vec<(String, String)> {
    let mut m: Vec<(String, String)> = v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["kind"].as_str().unwrap().to_string(), c["name"].as_str().unwrap().to_string()))
        .collect();
    m.sort();
    m
}

fn diff_json(base: &Path, new: &Path) -> (Value, i32) {
    let out = Command::new(BIN).arg("diff").arg(base).arg(new).args(["--json", "-"]).output().unwrap();
    let v: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (v, out.status.code().unwrap_or(-1))
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn trace_against_itself_changes_nothing() {
    let Some(t) = shared_trace() else { return };
    let (v, code) = diff_json(&t, &t);
    assert_changes_nothing(&v, code);
    // A topic's pairs split its messages: per topic, their counts add up to at most its own.
    let changes = v["changes"].as_array().unwrap();
    let count = |c: &Value| c["base"]["count"].as_u64().unwrap();
    for topic in changes.iter().filter(|c| c["kind"] == "topic") {
        let marker = format!(" -{}-> ", topic["name"].as_str().unwrap());
        let pairs: Vec<&Value> =
            changes.iter().filter(|c| c["kind"] == "pair" && c["name"].as_str().unwrap().contains(&marker)).collect();
        assert!(!pairs.is_empty(), "no pair of {topic}");
        assert!(pairs.iter().map(|c| count(c)).sum::<u64>() <= count(topic), "{topic}");
    }
}

fn assert_changes_nothing(v: &Value, code: i32) {
    assert_eq!(code, 0, "{v}");
    let changes = v["changes"].as_array().unwrap();
    assert!(!changes.is_empty());
    for kind in ["callback", "topic", "pair", "path"] {
        assert!(changes.iter().any(|c| c["kind"] == kind), "no {kind} compared: {v}");
    }
    for c in changes {
        assert_eq!((c["p_value"].as_f64(), c["cliff_delta"].as_f64()), (Some(1.0), Some(0.0)), "{c}");
    }
    for list in ["added", "removed", "not_compared"] {
        assert!(v[list].as_array().unwrap().is_empty(), "{list}: {v}");
    }
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn saved_json_compares_as_its_trace() {
    let Some(t) = shared_trace() else { return };
    let dir = rostrace_testkit::TempDir::new("diff-saved");
    let saved = dir.path().join("run.json");
    save(&t, &saved, true);
    let (traces, _) = diff_json(&t, &t);
    for (base, new) in [(&saved, &t), (&t, &saved), (&saved, &saved)] {
        let (v, code) = diff_json(base, new);
        assert_changes_nothing(&v, code);
        assert_eq!(matched(&v), matched(&traces), "{} against {}", base.display(), new.display());
    }
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn json_without_samples_or_malformed_is_an_error_naming_it() {
    let Some(t) = shared_trace() else { return };
    let dir = rostrace_testkit::TempDir::new("diff-bad-json");
    let plain = dir.path().join("plain.json");
    save(&t, &plain, false);
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\"diff_samples\": {\"seconds\": 1.0, ").unwrap();
    for (file, arg, says) in [(&plain, "BASE", "--samples"), (&broken, "NEW", "line 1 column")] {
        let (base, new) = if arg == "BASE" { (file, &t) } else { (&t, file) };
        let out = Command::new(BIN).arg("diff").arg(base).arg(new).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(&format!("{arg} {}", file.display())) && err.contains(says), "{err}");
        assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    }
}
