//! `rostrace analyze`: the terminal report and the JSON document.

mod common;

use common::*;
use serde_json::Value;

#[rostrace_testkit::needs(test_data)]
#[test]
fn text_report_shows_nodes_callbacks_topics() {
    rostrace_testkit::needs_test_data!();
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

#[rostrace_testkit::needs(test_data)]
#[test]
fn json_has_callbacks_and_topics() {
    rostrace_testkit::needs_test_data!();
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

/// `rostrace analyze ARGS...` with `COLUMNS`: exit code, stdout, stderr.
fn analyze_text(args: &[&str], columns: &str) -> (Option<i32>, String, String) {
    let out = rostrace().arg("analyze").args(args).env("COLUMNS", columns).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The shared trace `rel`, if present (skips, or fails in CI, otherwise).
fn trace(rel: &str) -> Option<std::path::PathBuf> {
    rostrace_testkit::test_data_path(rel)
}

fn note<'a>(v: &'a Value, metric: &str) -> &'a Value {
    v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["metric"] == metric)
        .unwrap_or_else(|| panic!("no note {metric:?} in {}", v["notes"]))
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect()
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn autoware_says_latency_needs_take_events() {
    let Some(t) = trace("traces/tum-autoware-carla") else { return };
    let (code, v, _) = analyze_json_run(&[], std::slice::from_ref(&t));
    assert_eq!(code, Some(0));
    // Galactic without rmw or DDS events: every topic shows 0 takes, and the note says why.
    assert!(v["topics"].as_array().unwrap().iter().all(|t| t["takes"] == 0));
    let lat = note(&v, "message latency");
    assert_eq!(lat["reason"].as_str().unwrap().split(';').next().unwrap(), "this trace (tracetools 2.3.0) has neither");
    assert_eq!(strings(&lat["missing"]), ["rmw_take", "dispatch_subscription_callback"]);
    // All 60 processes with subscriptions lack them.
    assert_eq!((lat["of_processes"].as_u64(), lat["processes"].as_array().unwrap().len()), (Some(60), 60));
    let publ = note(&v, "message latency (publishing side)");
    assert_eq!(publ["of_processes"], 56);
    // The rclpy and ros2 CLI processes have nodes but no callback events.
    let cb = note(&v, "callback duration");
    assert_eq!(
        strings(&cb["processes"]),
        ["ros2 (pid 173724)", "python3 (pid 173780)", "python3 (pid 174849)", "python3 (pid 174861)"]
    );
    let sv = note(&v, "service request/response latency");
    assert!(sv["advice"].as_str().unwrap().contains("Kilted"));
    // The two callbacks of unknown owner say why.
    let unknown: Vec<&Value> = v["callbacks"].as_array().unwrap().iter().filter(|c| c["kind"] == "unknown").collect();
    assert_eq!(unknown.len(), 2);
    assert!(unknown.iter().all(|c| c["procname"] == "rviz2" && c["unknown_reason"].is_string()));
    assert_eq!(
        strings(&note(&v, "a callback's owner (topic, timer period, node)")["processes"]),
        ["rviz2 (pid 174874)"]
    );
    // The text says it under its heading, and explains busy above 100%.
    let (_, text, _) = analyze_text(&[t.to_str().unwrap()], "100");
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for needle in [
        "What this trace cannot show",
        "message latency needs rmw_take or CARET dispatch_subscription_callback: this trace (tracetools 2.3.0) has neither",
        "next time: record rmw_take",
        "busy 104.3% (32 threads)",
        "above 100% when callbacks of several threads ran at the same time",
        "2 callback(s) of unknown owner",
    ] {
        assert!(flat.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn oldest_caret_format_says_dispatch_is_not_read() {
    let Some(t) = trace("traces/caret-analyze-samples/end_to_end_sample@78a3d5b4") else { return };
    let (code, v, _) = analyze_json_run(&[], &[t]);
    assert_eq!(code, Some(0));
    assert_eq!(v["flows_matched"], 0);
    let lat = note(&v, "message latency");
    let reason = lat["reason"].as_str().unwrap();
    assert!(reason.starts_with("this trace (tracetools 2.3.0) has neither"), "{reason}");
    assert!(reason.contains("ros2:dispatch, ros2_hook:take_type_erased"), "{reason}");
    // Its publishing side (ros2_hook:dds_write) is there: no note about it.
    assert!(v["notes"].as_array().unwrap().iter().all(|n| n["metric"] != "message latency (publishing side)"));
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn ros1_trace_has_a_note_and_exits_0() {
    let Some(t) = trace("ctf-edge/ros1-tc-pub-sub-10") else { return };
    let (code, v, _) = analyze_json_run(&[], &[t]);
    assert_eq!(code, Some(0));
    assert_eq!(v["notes"].as_array().unwrap().len(), 1);
    let n = note(&v, "the ROS 2 analysis (nodes, topics, callbacks, latency)");
    assert_eq!(n["reason"], "this trace has no ROS 2 events: its events come from roscpp (ROS 1): 98 events");
    assert_eq!(n["of_processes"], 3);
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn unmatched_reasons_and_drops_in_tc_ros2_example2() {
    let Some(t) = trace("traces/tc-ros2-example2") else { return };
    let (_, v, _) = analyze_json_run(&[], &[t]);
    let topic = |n: &str| v["topics"].as_array().unwrap().iter().find(|t| t["name"] == n).unwrap().clone();
    let b = topic("/topic_b");
    // The 40 takes whose dds:write is not in the trace came after the last one recorded.
    assert_eq!(b["unmatched"], 40);
    let r = b["unmatched_reasons"].as_array().unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["count"], 40);
    assert!(r[0]["reason"].as_str().unwrap().starts_with("published after the last traced publication"));
    // Every /topic_a message sync_one_to_one could take, it took.
    assert_eq!(topic("/topic_a")["dropped"], 0);
    assert!(topic("/rosout")["dropped"].is_null());
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn topics_by_activity_and_lines_fit_the_terminal() {
    let Some(t) = trace("traces/tum-autoware-carla") else { return };
    let p = t.to_str().unwrap();
    for cols in ["100", "60"] {
        let (code, text, _) = analyze_text(&[p], cols);
        assert_eq!(code, Some(0));
        let w: usize = cols.parse().unwrap();
        let long: Vec<&str> = text.lines().filter(|l| l.chars().count() > w).collect();
        assert!(long.is_empty(), "lines over {w} columns: {long:?}");
    }
    // Topics: most publications + takes first.
    let (_, text, _) = analyze_text(&[p, "--top", "0", "--wide"], "100");
    let (_, v, _) = analyze_json_run(&[], std::slice::from_ref(&t));
    let activity: std::collections::HashMap<String, u64> = v["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (t["name"].as_str().unwrap().to_string(), t["publishes"].as_u64().unwrap() + t["takes"].as_u64().unwrap())
        })
        .collect();
    let section = text.split("\nTopics").nth(1).unwrap().split("\n\n").next().unwrap();
    let order: Vec<u64> = section
        .lines()
        .filter(|l| l.starts_with("  /"))
        .map(|l| activity[l.trim().split("  ").next().unwrap()])
        .collect();
    assert_eq!(order.len(), activity.len());
    assert!(order.windows(2).all(|w| w[0] >= w[1]), "{order:?}");
    assert!(section.lines().nth(1).is_some_and(|l| l.starts_with("  /diagnostics ")), "{section}");
    // --wide: the longest symbol in full; otherwise cut in its middle.
    let sym = v["callbacks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["symbol"].as_str().unwrap().to_string())
        .max_by_key(|s| s.len())
        .unwrap();
    let (_, wide, _) = analyze_text(&[p, "--top", "0", "--wide"], "100");
    assert!(wide.contains(&sym));
    let (_, narrow, _) = analyze_text(&[p, "--top", "0"], "100");
    assert!(!narrow.contains(&sym));
    let head: String = sym.chars().take(10).collect();
    let tail: String = sym.chars().rev().take(10).collect::<Vec<_>>().into_iter().rev().collect();
    assert!(narrow.lines().any(|l| l.contains(&head) && l.contains('…') && l.ends_with(&tail)), "{head}…{tail}");
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn time_window_and_filters() {
    let Some(t) = trace("traces/rosworld2021-pingpong") else { return };
    let (_, all, _) = analyze_json_run(&[], std::slice::from_ref(&t));
    let begin = all["begin_ns"].as_i64().unwrap();
    // The pings and pongs run from 12 ms to 31 ms after the start: a window from 10 ms to 20 ms.
    let (lo, hi) = ("0.010", "+20ms");
    let (lo_ns, hi_ns) = (begin + 10_000_000, begin + 20_000_000);
    let (code, v, err) = analyze_json_run(&["--begin", lo, "--end", hi], std::slice::from_ref(&t));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(v["window_ns"][0].as_i64(), Some(lo_ns));
    assert_eq!(v["window_ns"][1].as_i64(), Some(hi_ns));
    assert!(v["begin_ns"].as_i64().unwrap() >= lo_ns);
    assert!(v["end_ns"].as_i64().unwrap() <= hi_ns);
    let n = v["events"].as_u64().unwrap();
    assert!(n > 0 && n < all["events"].as_u64().unwrap(), "{n}");
    assert!(v["callbacks"].as_array().unwrap().iter().map(|c| c["count"].as_u64().unwrap()).sum::<u64>() > 0);
    // Absolute: the same window.
    let (b, e) = (lo_ns.to_string(), hi_ns.to_string());
    let (_, w, _) = analyze_json_run(&["--begin", &b, "--end", &e], std::slice::from_ref(&t));
    assert_eq!(w["events"], v["events"]);
    assert_eq!(w["window_ns"], v["window_ns"]);
    // Nodes and topics.
    let (_, v, _) = analyze_json_run(&["--nodes", "^/ping$"], std::slice::from_ref(&t));
    let nodes: Vec<&str> = v["nodes"].as_array().unwrap().iter().map(|n| n["name"].as_str().unwrap()).collect();
    assert_eq!(nodes, ["/ping"]);
    assert!(v["callbacks"].as_array().unwrap().iter().all(|c| c["node"] == "/ping"));
    let (_, v, _) = analyze_json_run(&["--topics", "pong"], std::slice::from_ref(&t));
    let topics: Vec<&str> = v["topics"].as_array().unwrap().iter().map(|n| n["name"].as_str().unwrap()).collect();
    assert!(!topics.is_empty() && topics.iter().all(|t| t.contains("pong")), "{topics:?}");
    assert!(v["callbacks"].as_array().unwrap().iter().all(|c| c["topic"].as_str().unwrap().contains("pong")));
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn bad_arguments_and_outputs_exit_1_on_stderr() {
    let Some(t) = trace("traces/rosworld2021-pingpong") else { return };
    let p = t.to_str().unwrap();
    for (args, needle) in [
        (vec!["--begin", "abc"], "--begin: invalid time \"abc\""),
        (vec!["--end", "-2"], "--end:"),
        (vec!["--begin", "2021-13-01T00:00:00Z"], "--begin: invalid time"),
        (vec!["--begin", "3", "--end", "1"], "--begin (3) is after --end (1)"),
        (vec!["--nodes", "("], "--nodes: invalid regular expression"),
        (vec!["--topics", "[a"], "--topics: invalid regular expression"),
        (vec!["--json", "/nonexistent/dir/report.json"], "--json /nonexistent/dir/report.json:"),
    ] {
        let mut a = args.clone();
        a.push(p);
        let (code, out, err) = analyze_text(&a, "100");
        assert_eq!(code, Some(1), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("rostrace: error: ") && err.contains(needle), "{args:?}: {err}");
    }
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn read_errors_go_to_stderr() {
    let Some(t) = trace("ctf-edge/babeltrace/ctf-traces/fail/valid-events-then-invalid-events") else { return };
    let out = rostrace().arg("analyze").arg(&t).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(err.contains("rostrace: error:") && err.contains("byte"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("read error"));
}

/// Removes a directory when dropped.
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn info_and_analyze_count_processes_per_trace() {
    let Some(t) = trace("traces/rosworld2021-pingpong") else { return };
    let tmp = TempDir(std::env::temp_dir().join(format!("rostrace-copies-{}", std::process::id())));
    rostrace_testkit::copy_writable(&t, &tmp.0.join("one"));
    rostrace_testkit::copy_writable(&t, &tmp.0.join("two"));
    let (_, v, _) = analyze_json_run(&[], std::slice::from_ref(&tmp.0));
    let out = rostrace().args(["info", "--json"]).arg(&tmp.0).output().unwrap();
    assert!(out.status.success());
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    // Two copies of a 2-process trace: 4 processes in both.
    assert_eq!(v["processes"].as_array().unwrap().len(), 4);
    assert_eq!(info["processes"].as_array().unwrap().len(), 4);
    let key = |p: &Value| {
        (p["trace"].as_u64().unwrap(), p["host"].as_str().unwrap().to_string(), p["vpid"].as_i64().unwrap())
    };
    let mut a: Vec<_> = v["processes"].as_array().unwrap().iter().map(key).collect();
    let mut b: Vec<_> = info["processes"].as_array().unwrap().iter().map(key).collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
    let text = String::from_utf8_lossy(&rostrace().arg("analyze").arg(&tmp.0).output().unwrap().stdout).into_owned();
    assert!(text.starts_with("1728 events (1728 ROS 2)") && text.contains(", 4 processes,"), "{text}");
}

#[test]
fn distro_from_caret_init_without_rcl_init() {
    use rostrace_ctf::write::*;
    let tmp = TempDir(std::env::temp_dir().join(format!("rostrace-caret-init-{}", std::process::id())));
    let d = small_trace_decl(&[
        ("ros2_caret:caret_init", &[("clock_offset", FieldType::I64), ("distribution", FieldType::String)]),
        (
            "ros2:rcl_node_init",
            &[
                ("node_handle", FieldType::Pointer),
                ("rmw_handle", FieldType::Pointer),
                ("node_name", FieldType::String),
                ("namespace", FieldType::String),
            ],
        ),
    ]);
    let dir = tmp.0.join("ust/uid/1000/64-bit");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("metadata"), packetize_metadata(&metadata_text(&d), &d.uuid)).unwrap();
    let f = std::fs::File::create(dir.join("channel0_0")).unwrap();
    let mut w = StreamWriter::new(f, d.uuid, 0, 0, 8192);
    w.event(0, 1_000, 42, 42, b"node", &Payload::new().i64(10).string(b"humble").bytes).unwrap();
    w.event(1, 2_000, 42, 42, b"node", &Payload::new().u64(0x10).u64(0x11).string(b"n").string(b"/").bytes).unwrap();
    w.finish().unwrap();
    let out = rostrace().arg("analyze").arg(&tmp.0).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.lines().nth(1) == Some("ROS 2: Humble"), "{text}");
    // caret_init gave it: no note about the distribution.
    let (_, v, _) = analyze_json_run(&[], std::slice::from_ref(&tmp.0));
    assert!(v["notes"].as_array().unwrap().iter().all(|n| n["metric"] != "ROS 2 distribution"));
}

/// Output to a pipe (as here) or a file is read whole: a line too long for the width loses
/// names past it, never a figure.
#[rostrace_testkit::needs(test_data)]
#[test]
fn piped_report_never_cuts_a_figure() {
    rostrace_testkit::needs_test_data!();
    for trace in ["traces/tum-autoware-carla", "traces/caret-demos-e2e-jazzy", "traces/tc-ros2-example2"] {
        let out = rostrace().arg("analyze").arg(shared().join(trace)).env_remove("COLUMNS").output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout);
        for line in text.lines() {
            let chars: Vec<char> = line.chars().collect();
            if chars.last() == Some(&'…') && chars.len() >= 2 {
                let before = chars[chars.len() - 2];
                assert!(!before.is_ascii_digit() && before != '.', "{trace}: a figure cut: {line}");
            }
        }
    }
}
