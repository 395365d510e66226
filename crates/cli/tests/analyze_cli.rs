//! `rostrace analyze`: the terminal report and the JSON document.

mod common;

use common::*;
use serde_json::Value;

#[test]
fn text_report_shows_nodes_callbacks_topics() {
    let out = rostrace().arg("analyze").arg(shared().join("traces/rosworld2021-pingpong")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "Nodes",
        "/ping",
        "/pong",
        "Callbacks by total time",
        "timer 3.00 ms",
        "Topics",
        "publish->take",
        "Callback time per thread",
        "unmatched: 0",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

#[test]
fn json_has_callbacks_and_topics() {
    let dir = std::env::temp_dir().join(format!("rostrace-analyze-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("a.json");
    let out = rostrace()
        .args(["analyze", "--json"])
        .arg(&file)
        .arg(shared().join("traces/tc-ros2-example2"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let cbs = v["callbacks"].as_array().unwrap();
    assert_eq!(cbs.len(), 6);
    for cb in cbs {
        for k in ["vpid", "address", "symbol", "node", "kind", "count", "duration_ns"] {
            assert!(!cb[k].is_null(), "callback without {k}: {cb}");
        }
        for k in ["count", "mean", "std", "min", "p50", "p90", "p99", "max"] {
            assert!(cb["duration_ns"][k].is_number(), "{k}");
        }
    }
    let sink = cbs.iter().find(|c| c["symbol"].as_str().unwrap().starts_with("SinkNode")).unwrap();
    assert_eq!(sink["count"], 2026);
    assert_eq!(sink["kind"], "subscription");
    assert_eq!(sink["node"], "/sink");
    let topics = v["topics"].as_array().unwrap();
    let a = topics.iter().find(|t| t["name"] == "/topic_a").unwrap();
    assert_eq!(a["matched"], 1986);
    assert!(a["pub_to_take_ns"]["p50"].as_i64().unwrap() > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn not_a_trace_fails_clearly() {
    let out = rostrace().args(["analyze", "/nonexistent"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent"));
}
