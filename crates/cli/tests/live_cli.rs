//! `rostrace live` end to end on the demo's processes: snapshots while the recording is written,
//! a process started after `live` picked up, a window shorter than the recording, and a final
//! snapshot with the counts of `rostrace analyze --json` of the same recording; alerts from an
//! expectation file.

mod common;
#[path = "../../analysis/tests/support/system.rs"]
mod system;

use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn callbacks(v: &Value) -> BTreeMap<(String, String, String), u64> {
    let mut m = BTreeMap::new();
    for c in v["callbacks"].as_array().unwrap() {
        let key = (
            c["node"].as_str().unwrap().to_string(),
            c["symbol"].as_str().unwrap().to_string(),
            c["kind"].as_str().unwrap().to_string(),
        );
        *m.entry(key).or_insert(0) += c["count"].as_u64().unwrap();
    }
    m
}

fn topics(v: &Value) -> BTreeMap<String, (u64, u64, u64)> {
    v["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let n = |k: &str| t[k].as_u64().unwrap();
            (t["name"].as_str().unwrap().to_string(), (n("publishes"), n("takes"), n("unmatched")))
        })
        .collect()
}

/// Matched messages per publisher → subscriber pair of each topic: the snapshot's `pairs`, or
/// the `pairs` of each of the analysis's topics.
fn pairs(v: &Value) -> BTreeMap<(String, String, i64, String, i64), u64> {
    let key = |topic: &str, p: &Value, names: [&str; 4]| {
        let s = |k: &str| p[k].as_str().unwrap().to_string();
        let n = |k: &str| p[k].as_i64().unwrap();
        ((topic.to_string(), s(names[0]), n(names[1]), s(names[2]), n(names[3])), p["count"].as_u64().unwrap())
    };
    match v.get("pairs") {
        Some(ps) => ps
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                key(p["topic"].as_str().unwrap(), p, ["publisher", "publisher_vpid", "subscriber", "subscriber_vpid"])
            })
            .collect(),
        None => v["topics"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|t| {
                let names = ["publisher_node", "publisher_vpid", "subscription_node", "subscription_vpid"];
                t["pairs"].as_array().unwrap().iter().map(move |p| key(t["name"].as_str().unwrap(), p, names))
            })
            .collect(),
    }
}

/// `rostrace live ARGS -s s -p DIR --jsonl DIR/live.jsonl -- sh -c SCRIPT`, which must succeed:
/// its snapshots.
fn live_lines(dir: &TempDir, args: &[&str], script: &str) -> Vec<Value> {
    let jsonl = dir.join("live.jsonl");
    let out = rostrace()
        .arg("live")
        .args(args)
        .args(["-s", "s", "-p"])
        .arg(dir.path())
        .arg("--jsonl")
        .arg(&jsonl)
        .args(["--", "sh", "-c", script])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::read_to_string(&jsonl).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn live_follows_a_recording_and_ends_with_the_counts_of_analyze() {
    let dir = TempDir::new("live-demo");
    let exe = env!("CARGO_BIN_EXE_rostrace");
    // One expectation the demo fails, one it passes, and a minimum of runs for the end.
    let expect = dir.join("expect.yaml");
    let yaml = "callbacks:\n\
                - node: /sensing/lidar\n  timer_period: 10ms\n  duration: {max: 1ns}\n  runs: 10\n\
                - node: /sensing/imu\n  timer_period: 20ms\n  duration: {max: 10s}\n";
    std::fs::write(&expect, yaml).unwrap();
    // The control process starts well after `live` and the sensing process: `live` must pick it up.
    let script = format!(
        "{exe} demo --process sensing --duration 5 --domain 57 & sleep 2; \
         {exe} demo --process control --duration 2.5 --domain 57; wait"
    );
    let lines =
        live_lines(&dir, &["--window", "1.5", "--interval", "0.5", "--expect", expect.to_str().unwrap()], &script);
    assert!(lines.len() >= 4, "{} snapshots", lines.len());
    let (last, live) = lines.split_last().unwrap();
    assert_eq!(last["final"], true);
    assert!(live.iter().all(|s| s["final"] == false));
    let procs = |s: &Value| -> Vec<String> {
        s["processes"].as_array().unwrap().iter().map(|p| p.as_str().unwrap().to_string()).collect()
    };
    // Snapshots with the sensing process alone, then one with the control process that came later.
    let first_sensing = live.iter().position(|s| procs(s).contains(&"sensing".to_string())).expect("sensing seen live");
    assert!(!procs(&live[first_sensing]).contains(&"control".to_string()), "control before it started");
    let seen_control = live.iter().any(|s| procs(s).contains(&"control".to_string()));
    assert!(seen_control, "the control process, started after live, never appeared live");
    // Live snapshots show the nodes' callbacks, and a window, not the whole recording.
    let busiest = live.iter().max_by_key(|s| s["events"].as_u64().unwrap()).unwrap();
    assert!(callbacks(busiest).keys().any(|k| k.0 == "/sensing/lidar"), "{busiest}");
    let (b, e) = (busiest["window_ns"][0].as_i64().unwrap(), busiest["window_ns"][1].as_i64().unwrap());
    // About --window: its start is estimated from the last end seen and the time since (which a
    // loaded machine stretches by its delays), and well short of the whole recording.
    let whole = last["window_ns"][1].as_i64().unwrap() - last["window_ns"][0].as_i64().unwrap();
    assert!(e - b <= 2_500_000_000 && (e - b) * 3 < whole * 2, "window of {} ns, recording of {whole} ns", e - b);
    assert!(busiest["events"].as_u64().unwrap() < last["events"].as_u64().unwrap());
    for s in &lines {
        assert!(s["read_errors"].as_array().unwrap().is_empty(), "{s}");
    }
    // The expectation failed is among the alerts, with its value and limit; the one passed never.
    let alerts = |s: &Value| -> Vec<String> {
        s["alerts"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string()).collect()
    };
    let failed = "expectation line 4: callback /sensing/lidar timer ";
    let with_failed = |s: &&Value| {
        alerts(s).iter().any(|a| a.starts_with(failed) && a.contains(": duration max ") && a.contains("(at most "))
    };
    assert!(with_failed(&busiest) && with_failed(&last), "{:?}", alerts(busiest));
    assert!(lines.iter().all(|s| alerts(s).iter().all(|a| !a.contains("/sensing/imu"))), "{lines:?}");
    let status = |s: &Value, line: u64| {
        s["expectations"].as_array().unwrap().iter().find(|o| o["line"] == line).map(|o| o["status"].clone())
    };
    assert_eq!(status(busiest, 8), Some("pass".into()), "{busiest}");
    // A minimum of runs is judged on the whole recording only.
    assert_eq!(status(busiest, 5), None, "{busiest}");
    assert_eq!(status(last, 5), Some("pass".into()), "{last}");
    // The final snapshot: the counts of `rostrace analyze` of the same recording.
    let session = dir.join("s");
    let analyzed = analyze_json(&[], &[&session]);
    assert_eq!(last["events"], analyzed["events"]);
    assert_eq!(last["discarded_events"], analyzed["discarded_events"]);
    assert_eq!(callbacks(last), callbacks(&analyzed));
    assert!(callbacks(last).len() >= 9, "{:?}", callbacks(last));
    assert_eq!(topics(last), topics(&analyzed));
    assert_eq!(pairs(last), pairs(&analyzed));
    for (t, publisher, subscribers) in rostrace_demo::TOPICS {
        let seen = pairs(last).into_iter().any(|(k, n)| k.0 == t && k.1 == publisher && k.3 == subscribers[0] && n > 0);
        assert!(seen, "no pair {publisher} -> {} on {t}: {:?}", subscribers[0], pairs(last));
    }
    // The final snapshot's verdicts are those of `rostrace check` of the recording.
    let check =
        rostrace().arg("check").arg(&session).arg("--expect").arg(&expect).args(["--json", "-"]).output().unwrap();
    let checked: Value = serde_json::from_slice(&check.stdout).unwrap();
    let verdicts = |o: &Value| -> Vec<(Value, Value)> {
        o.as_array().unwrap().iter().map(|o| (o["line"].clone(), o["status"].clone())).collect()
    };
    assert_eq!(verdicts(&last["expectations"]), verdicts(&checked["outcomes"]));
    // The recording is intact and finished: `rostrace info` reads it.
    let info = rostrace().arg("info").arg(&session).output().unwrap();
    assert!(info.status.success(), "{}", String::from_utf8_lossy(&info.stderr));
}

/// Under the LTTng backend (`live --backend lttng -- COMMAND`), LTTng's channels are flushed on
/// a timer (`--flush-interval`, set by `live` when not given): the demo's callbacks show while
/// it runs, not only at the end, and the final snapshot has `analyze`'s counts. The embedded
/// backend, which flushes on its own, refuses the option.
#[rostrace_testkit::needs(lttng)]
#[test]
fn live_follows_an_lttng_recording_while_it_runs() {
    if !require(have_lttng(), "LTTng") {
        return;
    }
    let _lttng = lttng_lock();
    let dir = TempDir::new("live-lttng");
    let exe = env!("CARGO_BIN_EXE_rostrace");
    let script = format!(
        "{exe} demo --process sensing --duration 4 --domain 58 & \
         {exe} demo --process control --duration 4 --domain 58; wait"
    );
    let lines = live_lines(&dir, &["--backend", "lttng", "--window", "1.5", "--interval", "0.5"], &script);
    let (last, live) = lines.split_last().unwrap();
    assert_eq!(last["final"], true);
    let showing = live.iter().filter(|s| callbacks(s).keys().any(|k| k.0 == "/sensing/lidar")).count();
    assert!(showing >= 3, "{showing} of {} snapshots show the demo's callbacks while it runs", live.len());
    let analyzed = analyze_json(&[], &[&dir.join("s")]);
    assert_eq!(last["events"], analyzed["events"]);
    assert_eq!(callbacks(last), callbacks(&analyzed));
    let embedded = rostrace().args(["record", "--flush-interval", "0.2", "--", "true"]).output().unwrap();
    let err = String::from_utf8_lossy(&embedded.stderr);
    assert!(!embedded.status.success() && err.contains("--flush-interval sets LTTng's switch timer"), "{err}");
}

/// A bad expectation file: `check`'s error, naming the line and the key, and exit code 2 before
/// anything is recorded.
#[test]
fn live_rejects_a_bad_expectation_file_as_check_does() {
    let dir = TempDir::new("live-bad-expect");
    let bad = dir.join("bad.yaml");
    std::fs::write(&bad, "callbacks:\n- node: /a\n  durations: {max: 1ms}\n").unwrap();
    let live = rostrace()
        .arg("live")
        .arg("--expect")
        .arg(&bad)
        .args(["-p"])
        .arg(dir.path())
        .args(["--", "true"])
        .output()
        .unwrap();
    let check = rostrace().arg("check").arg(dir.path()).arg("--expect").arg(&bad).output().unwrap();
    let err = String::from_utf8_lossy(&live.stderr);
    assert_eq!(live.status.code(), Some(2), "{err}");
    assert!(err.contains("line 3") && err.contains("`durations`"), "{err}");
    assert_eq!(err, String::from_utf8_lossy(&check.stderr));
    assert!(
        std::fs::read_dir(dir.path()).unwrap().all(|e| e.unwrap().file_name() == "bad.yaml"),
        "a recording was made"
    );
}

/// A stream file ending inside its last packet, as one being written (in its padding, or
/// inside an event): `live` counts it in `partial_packets`, not among the read errors, by the
/// reader's error kind; `rostrace info` still reports it, with the reader's text.
#[rostrace_testkit::needs(test_data)]
#[test]
fn live_counts_an_incomplete_last_packet_as_partial() {
    rostrace_testkit::needs_test_data!();
    let dir = TempDir::new("live-partial");
    let len = std::fs::metadata(shared().join("traces/tc-ros2-example2/ros2_0")).unwrap().len();
    for cut in [len - 1, len / 2 + 13] {
        let trace = dir.join(format!("t{cut}"));
        rostrace_testkit::copy_writable(&shared().join("traces/tc-ros2-example2"), &trace);
        let victim = trace.join("ros2_0");
        std::fs::OpenOptions::new().write(true).open(&victim).unwrap().set_len(cut).unwrap();
        let out = rostrace().arg("live").arg(&trace).args(["--duration", "0.3", "--jsonl", "-"]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let lines: Vec<Value> =
            String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert!(!lines.is_empty());
        for s in &lines {
            assert_eq!(s["partial_packets"], 1, "cut at {cut}: {s}");
            assert!(s["read_errors"].as_array().unwrap().is_empty(), "cut at {cut}: {s}");
        }
        let info = rostrace().arg("info").arg(&trace).output().unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&info.stdout), String::from_utf8_lossy(&info.stderr));
        let said = format!("{}: cannot decode at byte {cut}: file truncated: packet at byte ", victim.display());
        assert!(text.contains(&said), "{text}");
    }
}

/// A topic published but never taken (no message matched): its latency is shown as none (`-`,
/// `null`), not as 0 ms, in the text and in JSON lines, while a matched topic has its figures.
#[test]
fn live_shows_no_latency_for_a_topic_without_matched_messages() {
    let tmp = TempDir::new("live-unmatched");
    let trace = tmp.join("trace");
    let mut s = system::Sys::new();
    let (talker, listener) = (s.node("talker"), s.node("listener"));
    let chatter = s.publisher(talker, "/chatter");
    let heard = s.subscription(listener, "/chatter");
    let lonely = s.publisher(talker, "/lonely");
    for i in 0..20u64 {
        let t = 1_000 * system::MS + i * 100 * system::MS;
        let src = s.publish(2, chatter, t);
        s.deliver(3, heard, src, t + 2 * system::MS, system::MS);
        s.publish(2, lonely, t + system::MS);
    }
    s.write(&trace);
    let out = rostrace().args(["live", "--plain", "--duration", "0.5"]).arg(&trace).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lonely_line = text.lines().rev().find(|l| l.starts_with("topic /lonely")).expect(&text);
    assert!(lonely_line.contains("p50 - ms p99 - ms"), "{lonely_line}");
    let chatter_line = text.lines().rev().find(|l| l.starts_with("topic /chatter")).expect(&text);
    assert!(!chatter_line.contains(" - ms"), "{chatter_line}");
    let out = rostrace().args(["live", "--jsonl", "-", "--duration", "0.5"]).arg(&trace).output().unwrap();
    let last: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    let topic = |n: &str| last["topics"].as_array().unwrap().iter().find(|t| t["name"] == n).unwrap().clone();
    assert!(topic("/lonely")["latency_p50_ns"].is_null() && topic("/lonely")["latency_p99_ns"].is_null(), "{last}");
    assert!(topic("/chatter")["latency_p50_ns"].as_i64().unwrap() > 0, "{last}");
}

/// `live` following a session directory ends by itself when the session is stopped, and says
/// that the recording ended. (Before, it went on until Ctrl-C or --duration.)
#[test]
fn live_says_when_the_recording_it_follows_ended() {
    let tmp = TempDir::new("live-ended");
    let prog = flows(tmp.path());
    let out = rostrace()
        .args(["record", "-s", "s", "-p"])
        .arg(tmp.path())
        .arg("--")
        .arg(&prog)
        .arg(tmp.join("e.txt"))
        .args(["1", "2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut child = rostrace()
        .args(["live", "--plain"])
        .arg(tmp.join("s"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed().as_secs() > 20 {
            child.kill().unwrap();
            panic!("live still follows a stopped session");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && err.contains("ended (its session was stopped)"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("-- whole recording"));
}

/// `live --snapshot-on-fail`: a callback slowed in the demo fails an expectation while it runs;
/// the window that failed is written as a recording of its own (its packets and the
/// initialization events), smaller than the whole, with the window's analysis beside it, and
/// `check` fails the same expectation on it. At most one per window, `--max-snapshots` in all.
#[test]
fn a_failed_expectation_leaves_a_snapshot_of_its_window_that_check_fails_alike() {
    let dir = TempDir::new("live-snapshot");
    let exe = env!("CARGO_BIN_EXE_rostrace");
    let expect = dir.join("expect.yaml");
    std::fs::write(
        &expect,
        "callbacks:\n- node: /sensing/lidar_filter\n  topic: /sensing/points_raw\n  duration: {p50: 2ms}\n",
    )
    .unwrap();
    let snaps = dir.join("snaps");
    let script = format!(
        "{exe} demo --process sensing --duration 6 --domain 59 --slow /sensing/lidar_filter:/sensing/points_raw=8 & \
         {exe} demo --process control --duration 6 --domain 59; wait"
    );
    let out = rostrace()
        .args(["live", "--plain", "--window", "2", "--interval", "0.5", "--max-snapshots", "2", "--expect"])
        .arg(&expect)
        .arg("--snapshot-on-fail")
        .arg(&snaps)
        .args(["-s", "s", "-p"])
        .arg(dir.path())
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let mut taken: Vec<PathBuf> = std::fs::read_dir(&snaps).unwrap().map(|e| e.unwrap().path()).collect();
    taken.sort();
    assert!((1..=2).contains(&taken.len()), "{taken:?}\n{err}");
    assert!(err.contains("failed: the window written to"), "{err}");
    let whole = dir.join("s");
    let bytes = |d: &Path| -> u64 {
        files_below(d).iter().filter(|p| !p.ends_with("metadata")).map(|p| std::fs::metadata(p).unwrap().len()).sum()
    };
    let runs = |a: &Value| -> u64 {
        a["callbacks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["node"] == "/sensing/lidar_filter")
            .map(|c| c["count"].as_u64().unwrap())
            .sum()
    };
    let whole_json = analyze_json(&[], &[&whole]);
    for s in &taken {
        let name = s.file_name().unwrap().to_string_lossy();
        assert!(name.contains("sensing-lidar_filter-topic-sensing-points_raw-duration-p50"), "{name}");
        // The window's analysis beside it, and `check` fails the same expectation on it.
        let saved: Value = serde_json::from_slice(&std::fs::read(s.join("analysis.json")).unwrap()).unwrap();
        let outcomes: Value = serde_json::from_slice(&std::fs::read(s.join("expectations.json")).unwrap()).unwrap();
        assert_eq!(outcomes[0]["status"], "fail", "{outcomes}");
        let check = rostrace().args(["check", "--expect"]).arg(&expect).arg(s).output().unwrap();
        let text = String::from_utf8_lossy(&check.stdout);
        assert_eq!(check.status.code(), Some(1), "{text}");
        assert!(
            text.contains("FAIL     callback /sensing/lidar_filter topic /sensing/points_raw: duration p50"),
            "{text}"
        );
        // The window, not the whole: fewer bytes and runs, but the slow runs it judged.
        let alone = analyze_json(&[], &[s]);
        assert!(bytes(s) < bytes(&whole), "{} of {} bytes", bytes(s), bytes(&whole));
        assert!(
            runs(&alone) >= runs(&saved) && runs(&alone) < runs(&whole_json),
            "{} {}",
            runs(&alone),
            runs(&whole_json)
        );
        let info = rostrace().args(["info", "--json"]).arg(s).output().unwrap();
        let info: Value = serde_json::from_slice(&info.stdout).unwrap();
        assert_eq!((info["discarded_events"].as_u64(), info["lost_packets"].as_u64()), (Some(0), Some(0)), "{info}");
        if require(have_babeltrace2(), "babeltrace2") {
            let bt = std::process::Command::new("babeltrace2").arg(s).output().unwrap();
            let e = String::from_utf8_lossy(&bt.stderr);
            assert!(bt.status.success() && !e.contains("WARNING") && !e.contains("ERROR"), "{e}");
        }
    }
    // Rate-limited: the windows of two snapshots do not overlap.
    if taken.len() == 2 {
        let w = |s: &PathBuf| -> (i64, i64) {
            let v: Value = serde_json::from_slice(&std::fs::read(s.join("analysis.json")).unwrap()).unwrap();
            (v["begin_ns"].as_i64().unwrap(), v["end_ns"].as_i64().unwrap())
        };
        assert!(w(&taken[1]).0 > w(&taken[0]).1, "{:?} {:?}", w(&taken[0]), w(&taken[1]));
    }
}
