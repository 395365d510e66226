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

/// A saved run's `diff_samples`, with `seconds`, the `paths_followed` and the `path` samples
/// given as JSON.
fn saved_run(file: &Path, seconds: &str, paths_followed: &str, path: &str) {
    let json = format!(
        "{{\"diff_samples\": {{\"seconds\": {seconds}, \"callback\": {{\"/a timer 100ms cb\": [1000, 2000, 3000]}}, \
         \"topic\": {{}}, \"path\": {path}, \"paths_followed\": {paths_followed}}}}}"
    );
    std::fs::write(file, json).unwrap();
}

/// A saved run that no analysis makes (a length of time not above 0, a path whose topics do not
/// fit between its nodes, samples of a path not followed) is an error naming the file and the
/// field, not rates of `inf` or a panic.
#[test]
fn saved_runs_that_cannot_be_are_errors_naming_the_field() {
    let dir = rostrace_testkit::TempDir::new("diff-bad-samples");
    let (good, bad) = (dir.path().join("good.json"), dir.path().join("bad.json"));
    let ab = r#"[{"nodes": ["/a", "/b"], "topics": ["/x"]}]"#;
    let ab_samples = r#"{"/a -/x-> /b": [5, 6, 7]}"#;
    saved_run(&good, "2.0", ab, ab_samples);
    let out = Command::new(BIN).arg("diff").arg(&good).arg(&good).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let abc = r#"[{"nodes": ["/a", "/b", "/c"], "topics": ["/x"]}]"#;
    for (seconds, followed, path, says) in [
        ("0", ab, ab_samples, "`seconds`: 0 is not a length of time (a finite number of seconds above 0)"),
        ("-1.5", ab, ab_samples, "`seconds`: -1.5 is not a length of time"),
        ("2", abc, "{}", "`paths_followed[0]`: 3 node(s) and 1 topic(s); a path has one topic fewer than nodes"),
        ("2", "[]", ab_samples, "`path` \"/a -/x-> /b\": not the label of a path in `paths_followed`"),
    ] {
        saved_run(&bad, seconds, followed, path);
        for (arg, base, new) in [("BASE", &bad, &good), ("NEW", &good, &bad)] {
            let out = Command::new(BIN).arg("diff").arg(base).arg(new).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{says}: {err}");
            let want = format!("rostrace: error: {arg} {}: diff_samples: {says}", bad.display());
            assert!(err.starts_with(&want), "{err}");
            assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
        }
    }
}
