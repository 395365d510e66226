//! tracetools_analysis on a recording of real rclpy nodes traced by rostrace's rclpy
//! instrumentation: its own handlers (`Ros2Handler`, `Ros2DataModelUtil`) see the Python
//! callbacks with their owners and runs, as `rostrace analyze` does.
//!
//! tracetools_analysis cannot be installed in CI (its sources are on GitHub only, not on PyPI),
//! so its output on the recording of `tests/rclpy/callbacks.py` (Jazzy wheels) is stored with
//! the recording (`tests/data/rclpy-interop/tracetools_analysis.json`, produced by
//! `tools/tracetools-analysis-callbacks.py`). caret_analyze's view of the same recording is
//! compared in `caret_interop.rs`.

mod common;

use common::{analyze_json, repo};
use serde_json::Value;
use std::collections::BTreeMap;

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))
}

/// tracetools_analysis's owner text (`Subscription\nnode: beta\ntid: 7498\ntopic: /ns/fast`) as
/// its kind and fields.
fn owner(text: &str) -> (String, BTreeMap<String, String>) {
    let mut lines = text.lines();
    let kind = lines.next().unwrap_or("").to_string();
    let fields = lines.filter_map(|l| l.split_once(": ")).map(|(k, v)| (k.to_string(), v.to_string())).collect();
    (kind, fields)
}

#[test]
fn rclpy_callbacks_equal_tracetools_analysis() {
    let dir = repo().join("crates/cli/tests/data/rclpy-interop");
    let p = dir.join("tracetools_analysis.json");
    let tta: Value =
        serde_json::from_slice(&std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap();
    let r = analyze_json(&[], &[&dir.join("trace")]);
    let ours: BTreeMap<u64, &Value> =
        r["callbacks"].as_array().unwrap().iter().map(|c| (c["address"].as_u64().unwrap(), c)).collect();
    let theirs = tta["callbacks"].as_array().unwrap();
    // The callbacks that ran (both list those): the program's seven, not rclpy's parameter
    // services, which were never called.
    assert_eq!(theirs.len(), 7, "{theirs:?}");
    assert_eq!(theirs.len(), ours.len(), "tracetools_analysis {} callbacks, rostrace {}", theirs.len(), ours.len());
    let mut owners = 0;
    for c in theirs {
        let o = ours[&c["callback_object"].as_u64().unwrap()];
        // tracetools_analysis drops the spaces of a symbol.
        assert_eq!(s(&c["symbol"]), s(&o["symbol"]).replace(' ', ""), "{o}");
        // Every run: count, shortest, longest and total, exactly.
        let mut d: Vec<u64> = c["durations_ns"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
        d.sort_unstable();
        let stat = &o["duration_ns"];
        assert_eq!(d.len() as u64, o["count"].as_u64().unwrap(), "{}", o["symbol"]);
        if let (Some(first), Some(last)) = (d.first(), d.last()) {
            assert_eq!(
                [*first, *last, d.iter().sum()],
                [stat["min"].as_u64().unwrap(), stat["max"].as_u64().unwrap(), stat["sum"].as_u64().unwrap()],
                "{}",
                o["symbol"]
            );
        }
        // The owner: node (tracetools_analysis names it without its namespace), topic or period.
        let node = s(&o["node"]).rsplit('/').next().unwrap();
        match c["owner"].as_str().map(owner) {
            Some((kind, f)) if kind == "Subscription" => {
                assert_eq!(
                    (s(&o["kind"]), f["node"].as_str(), f["topic"].as_str()),
                    ("subscription", node, s(&o["topic"]))
                );
                owners += 1;
            }
            Some((kind, f)) if kind == "Timer" => {
                let ms = o["timer_period_ns"].as_u64().unwrap() / 1_000_000;
                assert_eq!(
                    (s(&o["kind"]), f["node"].as_str(), f["period"].clone()),
                    ("timer", node, format!("{ms} ms"))
                );
                owners += 1;
            }
            // tracetools_analysis finds no owner of a service or client callback: its lookups
            // test `handle in data.services` (the table's columns, not its rows). rostrace names them.
            None => assert!(matches!(s(&o["kind"]), "service" | "client"), "{o}"),
            Some(other) => panic!("unexpected owner {other:?}"),
        }
    }
    // alpha's two timers and its subscription, beta's two subscriptions.
    assert_eq!(owners, 5);
}
