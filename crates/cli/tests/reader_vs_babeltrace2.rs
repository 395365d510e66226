//! `rostrace events --format jsonl` against babeltrace2 (the oracle, through its Python
//! bindings and `tools/bt2_jsonl.py`) on every real trace and CTF edge case babeltrace2 reads:
//! same events, same timestamps to the nanosecond, same names, contexts and payloads.
//!
//! Order among events with the same timestamp is not compared (babeltrace2's muxer and
//! rostrace break ties differently; both are deterministic).

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Outcome {
    events: usize,
    /// Fields where babeltrace2 2.0.4 shows a stale string for an empty one (its known bug).
    stale_strings: usize,
}

fn run_jsonl(mut cmd: Command, what: &str) -> Vec<Value> {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(out.status.success(), "{what} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .expect("utf-8 output")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{what}: bad JSON line {l}: {e}")))
        .collect()
}

/// Equal, except that an empty string of ours may face any string of babeltrace2's (stale value).
fn lenient_eq(ours: &Value, theirs: &Value, stale: &mut usize) -> bool {
    match (ours, theirs) {
        (Value::String(a), Value::String(_)) if a.is_empty() => {
            if ours != theirs {
                *stale += 1;
            }
            true
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| lenient_eq(v, w, stale)))
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(v, w)| lenient_eq(v, w, stale))
        }
        _ => ours == theirs,
    }
}

fn compare(trace: &Path) -> Result<Outcome, String> {
    let mut ours_cmd = rostrace();
    ours_cmd.args(["events", "--format", "jsonl"]).arg(trace);
    let ours = run_jsonl(ours_cmd, &format!("rostrace on {}", trace.display()));
    let mut bt2 = Command::new("/usr/bin/python3");
    bt2.arg(repo().join("tools/bt2_jsonl.py")).arg(trace);
    let theirs = run_jsonl(bt2, &format!("babeltrace2 on {}", trace.display()));
    if ours.len() != theirs.len() {
        return Err(format!("{}: {} events, babeltrace2 has {}", trace.display(), ours.len(), theirs.len()));
    }
    // Timestamps must be the same sequence; within one timestamp, the same multiset of events.
    let group = |v: &[Value]| {
        let mut g: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        let mut seq = Vec::new();
        for e in v {
            let ts = e["ts"].to_string();
            if seq.last() != Some(&ts) {
                seq.push(ts.clone());
            }
            g.entry(ts).or_default().push(e.clone());
        }
        (seq, g)
    };
    let (seq_a, ga) = group(&ours);
    let (seq_b, gb) = group(&theirs);
    if seq_a != seq_b {
        let k = seq_a.iter().zip(&seq_b).position(|(a, b)| a != b).unwrap_or(seq_a.len().min(seq_b.len()));
        return Err(format!(
            "{}: timestamp order differs at distinct timestamp #{k}: ours {:?}, babeltrace2 {:?}",
            trace.display(),
            seq_a.get(k),
            seq_b.get(k)
        ));
    }
    let mut stale = 0;
    for (ts, a) in &ga {
        let b = &gb[ts];
        let mut used = vec![false; b.len()];
        for ev in a {
            let exact = (0..b.len()).find(|&j| !used[j] && &b[j] == ev);
            let m = exact.or_else(|| {
                (0..b.len()).find(|&j| {
                    let mut s = 0;
                    !used[j] && lenient_eq(ev, &b[j], &mut s) && {
                        stale += s;
                        true
                    }
                })
            });
            match m {
                Some(j) => used[j] = true,
                None => {
                    return Err(format!(
                        "{}: at ts {ts}, our event {ev} is not among babeltrace2's: {}",
                        trace.display(),
                        serde_json::to_string(b).unwrap_or_default()
                    ))
                }
            }
        }
    }
    Ok(Outcome { events: ours.len(), stale_strings: stale })
}

fn check_all(traces: &[PathBuf]) {
    if !require(have_bt2_python(), "babeltrace2 Python bindings (python3-bt2)") {
        return;
    }
    let mut failures = Vec::new();
    for t in traces {
        match compare(t) {
            Ok(o) => {
                eprintln!(
                    "same as babeltrace2: {} ({} events{})",
                    t.display(),
                    o.events,
                    if o.stale_strings > 0 {
                        format!("; {} empty strings that babeltrace2 2.0.4 shows with a stale value", o.stale_strings)
                    } else {
                        String::new()
                    }
                );
                assert!(o.stale_strings * 1000 <= o.events.max(1000), "too many string differences in {}", t.display());
            }
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{} of {} traces differ:\n{}", failures.len(), traces.len(), failures.join("\n"));
}

fn subdirs(p: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

#[test]
fn ros2_traces_read_like_babeltrace2() {
    let traces = subdirs(&shared().join("traces"));
    assert!(traces.len() >= 6, "expected the real ROS 2 traces in shared/traces");
    check_all(&traces);
}

/// Traces of the babeltrace2 corpus that babeltrace2 2.0.4 reads.
#[test]
fn babeltrace_corpus_reads_like_babeltrace2() {
    let root = shared().join("ctf-edge/babeltrace/ctf-traces");
    let mut traces = Vec::new();
    for group in ["succeed", "intersection", "packet-seq-num"] {
        // meta-ctx-sequence makes babeltrace2 2.0.4 abort: checked against its expect file instead.
        traces.extend(subdirs(&root.join(group)).into_iter().filter(|p| !p.ends_with("meta-ctx-sequence")));
    }
    traces.push(root.join("deterministic-ordering/b-not-corrupted"));
    check_all(&traces);
}

/// Trace Compass test traces that babeltrace2 reads, and the ROS 1 trace.
#[test]
fn tracecompass_traces_read_like_babeltrace2() {
    let unreadable = ["tc-funky_trace", "tc-ctfwriter_JF8nq3", "tc-hello-lost", "tc-synctraces_scp_src"];
    let traces: Vec<PathBuf> = subdirs(&shared().join("ctf-edge"))
        .into_iter()
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            (n.starts_with("tc-") || n.starts_with("ros1-")) && !unreadable.contains(&n.as_str())
        })
        .collect();
    assert!(traces.len() >= 12);
    check_all(&traces);
}
