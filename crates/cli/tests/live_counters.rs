//! `rostrace live --prometheus` on the demo's processes, scraped while they run: its counters
//! (added up slice of time by slice of time, not from analyses of the whole recording) never
//! exceed those of `rostrace analyze` of the finished recording; and an interval reads the
//! packets of its window and those written since the last one, not the whole recording's, with
//! an index of about the window's packets.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{Read as _, Write as _};
use std::sync::atomic::{AtomicBool, Ordering};

/// A counter's series: its name and label values.
type Key = (String, Vec<String>);

/// The body served at `/metrics`, when it answers.
fn scrape(port: u16) -> Option<String> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    Some(out.split_once("\r\n\r\n")?.1.to_string())
}

/// The counters of an exposition: per series, its value; callbacks by node, kind and symbol.
fn counters(body: &str) -> BTreeMap<Key, f64> {
    let mut out = BTreeMap::new();
    for line in body.lines().filter(|l| !l.starts_with('#')) {
        let (series, value) = line.rsplit_once(' ').unwrap();
        let (name, labels) = series.split_once('{').unwrap_or((series, "}"));
        let labels: BTreeMap<&str, &str> = labels
            .trim_end_matches('}')
            .split("\",")
            .filter(|l| !l.is_empty())
            .map(|l| l.split_once("=\"").map(|(k, v)| (k, v.trim_end_matches('"'))).unwrap())
            .collect();
        let pick = |names: &[&str]| names.iter().map(|n| labels[n].to_string()).collect::<Vec<_>>();
        let values = match name {
            "rostrace_callback_duration_seconds_count" => pick(&["node", "kind", "symbol"]),
            "rostrace_topic_publishes_total"
            | "rostrace_topic_takes_total"
            | "rostrace_topic_latency_seconds_count" => pick(&["topic"]),
            "rostrace_pair_messages_total" => pick(&["topic", "publisher", "subscriber"]),
            "rostrace_events_total" | "rostrace_discarded_events_total" => Vec::new(),
            _ => continue,
        };
        *out.entry((name.to_string(), values)).or_default() += value.parse::<f64>().unwrap();
    }
    out
}

/// The same counters, from `rostrace analyze --json`.
fn analyzed(a: &Value) -> BTreeMap<Key, f64> {
    let mut out: BTreeMap<Key, f64> = BTreeMap::new();
    let mut add = |name: &str, labels: Vec<&str>, v: &Value| {
        let labels = labels.into_iter().map(String::from).collect();
        *out.entry((name.to_string(), labels)).or_default() += v.as_f64().unwrap();
    };
    add("rostrace_events_total", vec![], &a["events"]);
    add("rostrace_discarded_events_total", vec![], &a["discarded_events"]);
    for c in a["callbacks"].as_array().unwrap() {
        let labels = vec![c["node"].as_str().unwrap(), c["kind"].as_str().unwrap(), c["symbol"].as_str().unwrap()];
        add("rostrace_callback_duration_seconds_count", labels, &c["duration_ns"]["count"]);
    }
    for t in a["topics"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        add("rostrace_topic_publishes_total", vec![name], &t["publishes"]);
        add("rostrace_topic_takes_total", vec![name], &t["takes"]);
        add("rostrace_topic_latency_seconds_count", vec![name], &t["pub_to_callback_ns"]["count"]);
        for p in t["pairs"].as_array().unwrap() {
            let labels = vec![name, p["publisher_node"].as_str().unwrap(), p["subscription_node"].as_str().unwrap()];
            add("rostrace_pair_messages_total", labels, &p["count"]);
        }
    }
    out
}

#[test]
fn live_counters_never_exceed_the_final_analysis_and_intervals_read_their_window() {
    let dir = TempDir::new("live-counters");
    let exe = env!("CARGO_BIN_EXE_rostrace");
    let port = free_port();
    let jsonl = dir.join("live.jsonl");
    let script = format!(
        "{exe} demo --process sensing --duration 8 --domain 61 & \
         {exe} demo --process control --duration 8 --domain 61; wait"
    );
    let done = AtomicBool::new(false);
    let (out, bodies) = std::thread::scope(|s| {
        let scraper = s.spawn(|| {
            let mut bodies = Vec::new();
            while !done.load(Ordering::Relaxed) {
                bodies.extend(scrape(port));
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            bodies
        });
        let out = rostrace()
            .args(["live", "--window", "1.5", "--interval", "0.3", "-s", "s", "-p"])
            .arg(dir.path())
            .arg("--jsonl")
            .arg(&jsonl)
            .arg("--prometheus")
            .arg(format!("127.0.0.1:{port}"))
            .args(["--", "sh", "-c", &script])
            .output()
            .unwrap();
        done.store(true, Ordering::Relaxed);
        (out, scraper.join().unwrap())
    });
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let fin = analyzed(&analyze_json(&[], &[&dir.join("s")]));
    assert!(fin.iter().any(|(k, v)| k.0 == "rostrace_pair_messages_total" && *v > 0.0), "{fin:?}");
    let served: Vec<_> = bodies.iter().map(|b| counters(b)).collect();
    let counted = served.iter().filter(|c| c.iter().any(|(k, v)| k.0.starts_with("rostrace_callback") && *v > 0.0));
    assert!(counted.count() >= 5, "{} scrapes", served.len());
    for c in &served {
        for (k, v) in c {
            let most = fin.get(k).copied().unwrap_or(0.0);
            assert!(*v <= most, "{k:?}: {v} served, {most} in the whole recording");
        }
    }
    // The final snapshot reads every packet; the last intervals, with the recording several
    // windows long, read far fewer.
    let lines: Vec<Value> =
        std::fs::read_to_string(&jsonl).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let (last, live) = lines.split_last().unwrap();
    let all = last["packets_read"].as_u64().unwrap();
    let late = &live[live.len() * 2 / 3..];
    assert!(late.len() >= 3, "{} snapshots", live.len());
    // And the index of the traces kept open holds about the window's packets, not one entry
    // per packet of the recording.
    for s in late {
        assert!(s["packets_read"].as_u64().unwrap() * 2 < all, "{} of {all} packets read", s["packets_read"]);
        let entries = s["index_entries"].as_u64().unwrap();
        assert!(entries > 0 && entries * 3 < all, "{entries} index entries for {all} packets");
    }
}
