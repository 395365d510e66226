//! `rostrace demo`: the demo system runs traced, and the analysis finds all of it.

mod common;

use common::{
    check_report, ctrl_c_when, have_babeltrace2, have_chromium, have_lttng, lttng_lock, require, rostrace, TempDir,
};
use serde_json::Value;
use std::collections::BTreeMap;

fn strings(v: &Value) -> Vec<String> {
    v.as_array().map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect()).unwrap_or_default()
}

fn sum(
    tallies: &[rostrace_demo::Tally],
    pick: impl Fn(&rostrace_demo::Tally) -> &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for t in tallies {
        for (k, v) in pick(t) {
            *out.entry(k.clone()).or_default() += v;
        }
    }
    out
}

#[test]
fn demo_is_traced_and_fully_analyzed() {
    check_demo("embedded", 100);
}

#[rostrace_testkit::needs(lttng)]
#[test]
fn demo_is_traced_through_lttng() {
    if require(have_lttng(), "LTTng") {
        let _lttng = lttng_lock();
        check_demo("lttng", 170);
    }
}

/// Runs the demo with `backend` on a DDS domain of its own (from `domain_base`), and checks the analysis.
fn check_demo(backend: &str, domain_base: u32) {
    let tmp = TempDir::new(&format!("demo-test-{backend}"));
    let dir = tmp.join("trace");
    let json = tmp.join("analysis.json");
    // A domain of its own, so that nothing else on the machine talks to these nodes.
    let domain = domain_base + std::process::id() % 60;
    let out = rostrace()
        .args(["demo", "--backend", backend, "--duration", "3", "--domain", &domain.to_string(), "-o"])
        .arg(&dir)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "demo ({backend}) failed: {}\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("Callbacks by total time") && stdout.contains("Topics"), "{stdout}");
    assert!(stdout.contains(&format!("trace written to {}", dir.display())), "{stdout}");

    let r: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    // The report of the run, beside the trace.
    let html = dir.join("report.html");
    assert!(stdout.contains(&format!("the report, with plots: {}", html.display())), "{stdout}");
    if backend == "embedded" && require(have_chromium(), "chromium") {
        check_report(&html, &r);
    }
    let tallies: Vec<rostrace_demo::Tally> =
        serde_json::from_slice(&std::fs::read(dir.join("demo-counts.json")).unwrap()).unwrap();
    assert_eq!(tallies.len(), 2, "{tallies:?}");
    assert!(tallies.iter().all(|t| t.read_errors.is_empty()), "{tallies:?}");
    assert_eq!(r["processes"].as_array().unwrap().len(), 2);

    // Every node, with its process.
    let nodes: BTreeMap<String, &Value> =
        r["nodes"].as_array().unwrap().iter().map(|n| (n["name"].as_str().unwrap().to_string(), n)).collect();
    let mut names: Vec<&str> = nodes.keys().map(|s| s.as_str()).collect();
    names.sort();
    let mut want = rostrace_demo::NODES.to_vec();
    want.sort();
    assert_eq!(names, want);

    // Every timer and its period.
    for (node, period) in rostrace_demo::TIMERS {
        let timers: Vec<u64> =
            nodes[node]["timers_ns"].as_array().unwrap().iter().map(|t| t.as_u64().unwrap()).collect();
        assert_eq!(timers, vec![period.as_nanos() as u64], "{node}");
        let cb = r["callbacks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["node"] == node && c["kind"] == "timer")
            .unwrap_or_else(|| panic!("no timer callback of {node}"));
        assert_eq!(cb["timer_period_ns"].as_u64(), Some(period.as_nanos() as u64));
        // The measured period is the timer's (within 5%: the executor is not real-time).
        let mean = cb["period_ns"]["mean"].as_f64().unwrap();
        assert!((mean / period.as_nanos() as f64 - 1.0).abs() < 0.05, "{node}: period mean {mean}");
        assert!(cb["symbol"].as_str().unwrap().contains("rostrace_demo::"), "{cb}");
    }

    // Every topic with its ends; every message a subscriber counted is matched to its publish.
    let received = sum(&tallies, |t| &t.received);
    let published = sum(&tallies, |t| &t.published);
    let topics: BTreeMap<String, &Value> =
        r["topics"].as_array().unwrap().iter().map(|t| (t["name"].as_str().unwrap().to_string(), t)).collect();
    for (topic, publisher, subscribers) in rostrace_demo::TOPICS {
        let t = topics.get(topic).unwrap_or_else(|| panic!("topic {topic} not found"));
        assert_eq!(strings(&t["publishers"]), vec![publisher.to_string()], "{topic}");
        assert_eq!(strings(&t["subscribers"]), subscribers.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let got = received[topic];
        assert!(got > 0, "{topic}: nothing received");
        assert_eq!(t["publishes"].as_u64(), Some(published[topic]), "{topic}: publishes");
        assert_eq!(t["takes"].as_u64(), Some(got), "{topic}: takes");
        assert_eq!(t["matched"].as_u64(), Some(got), "{topic}: every received message matched to its publish");
        assert_eq!(t["unmatched"].as_u64(), Some(0), "{topic}");
        assert_eq!(t["by_source_timestamp"].as_u64(), Some(got), "{topic}: matched by DDS source timestamp");
        let lat = &t["pub_to_take_ns"];
        assert_eq!(lat["count"].as_u64(), Some(got));
        assert!(lat["min"].as_i64().unwrap() > 0, "{topic}: {lat}");
    }
    assert_eq!(r["flows_unmatched"].as_u64(), Some(0));
    // The sink's callbacks ran once per received command.
    let sink = r["callbacks"].as_array().unwrap().iter().find(|c| c["node"] == "/control/actuator").unwrap();
    assert_eq!(sink["count"].as_u64(), Some(received["/control/cmd_vel"]));
    assert_eq!(sink["unfinished"].as_u64(), Some(0));

    // The service, its server and its client; requests matched by client GID and sequence number.
    let (name, server, client) = rostrace_demo::SERVICE;
    assert_eq!(strings(&nodes[server]["services"]), vec![name.to_string()]);
    assert_eq!(strings(&nodes[client]["clients"]), vec![name.to_string()]);
    let s = r["services"].as_array().unwrap().iter().find(|s| s["name"] == name).expect("service found");
    assert_eq!(s["server_node"], server);
    let served = sum(&tallies, |t| &t.requests_served)[name];
    let answered = sum(&tallies, |t| &t.responses_received)[name];
    assert!(served > 0);
    assert_eq!(s["requests_sent"].as_u64(), Some(sum(&tallies, |t| &t.requests_sent)[name]));
    assert_eq!(s["requests_served"].as_u64(), Some(served));
    assert_eq!(s["requests_matched"].as_u64(), Some(served));
    assert_eq!(s["responses_received"].as_u64(), Some(answered));
    assert_eq!(s["responses_matched"].as_u64(), Some(answered));

    // The lidar's path to the actuator goes through the planner, whose 20 Hz timer publishes
    // from the latest pose: the point clouds it never used are superseded, not lost (those lost
    // were published before the other process's subscriptions matched).
    let paths = r["longest_paths"]["paths"].as_array().unwrap();
    let through = paths
        .iter()
        .find(|p| {
            let n = strings(&p["path"]["nodes"]);
            n.first().map(String::as_str) == Some("/sensing/lidar") && n.contains(&"/planning/planner".to_string())
        })
        .unwrap_or_else(|| panic!("no path from the lidar through the planner: {paths:?}"));
    let (superseded, lost) = (through["superseded"].as_u64().unwrap(), through["lost"].as_u64().unwrap());
    assert!(superseded > lost, "{through}");
    assert_eq!(through["dropped"].as_u64(), Some(superseded + lost), "{through}");

    // babeltrace2 reads the trace without a warning, and the same number of events.
    if require(have_babeltrace2(), "babeltrace2") {
        let bt = std::process::Command::new("babeltrace2").arg(&dir).output().unwrap();
        let err = String::from_utf8_lossy(&bt.stderr);
        assert!(bt.status.success() && err.trim().is_empty(), "babeltrace2: {err}");
        let lines = bt.stdout.iter().filter(|b| **b == b'\n').count() as u64;
        assert_eq!(Some(lines), r["events"].as_u64());
    }
}

#[test]
fn demo_refuses_bad_arguments() {
    let tmp = TempDir::new("demo-args");
    std::fs::write(tmp.join("x"), "taken").unwrap();
    for (args, msg) in [
        (vec!["demo", "--duration", "0"], "invalid --duration"),
        (vec!["demo", "--domain", "300"], "invalid --domain"),
        (vec!["demo", "-o", tmp.to_str().unwrap()], "already exists and is not empty"),
        (vec!["demo", "-o", "-"], "--output -: the trace and the report go to a directory, not to standard output"),
    ] {
        let out = rostrace().current_dir(tmp.path()).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(msg) && err.lines().count() == 1, "{args:?}: {err}");
    }
    assert!(tmp.join("x").exists());
    assert!(!tmp.join("-").exists(), "no directory named -");
}

/// Ctrl-C stops the demo early and cleanly: the trace is analyzed and reported, and the exit
/// code is 130, as for `rostrace record`.
#[test]
fn demo_stops_on_ctrl_c() {
    let tmp = TempDir::new("demo-ctrlc");
    let dir = tmp.join("trace");
    let json = tmp.join("analysis.json");
    let domain = 40 + std::process::id() % 50;
    let out = ctrl_c_when(
        rostrace()
            .args(["demo", "--duration", "60", "--domain", &domain.to_string(), "--json"])
            .arg(&json)
            .arg("-o")
            .arg(&dir),
        // Once both processes record (their traces appear), and a moment more.
        || {
            let both = std::fs::read_dir(dir.join("ust/pid")).map(|d| d.count()).unwrap_or(0) >= 2;
            if both {
                std::thread::sleep(std::time::Duration::from_millis(500));
            }
            both
        },
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("Callbacks by total time") && stdout.contains("trace written to"), "{stdout}");
    // The trace spans the run until Ctrl-C, not the 60 s asked for.
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let span = r["end_ns"].as_i64().unwrap() - r["begin_ns"].as_i64().unwrap();
    assert!(span > 0 && span < 50_000_000_000, "the demo ran {span} ns");
}

/// A command after `--` runs beside the demo on its domain, gets SIGINT when the time is up, and
/// its counts join the demo's; its other stdout lines pass through. A command that fails on its
/// own makes the demo fail (exit 1, the command named); the trace is still reported.
#[test]
fn demo_runs_a_command_beside_it() {
    let tmp = TempDir::new("demo-beside");
    let domain = 200 + std::process::id() % 30;
    let count = r#"{"process": "beside", "published": {"/x": 3}}"#;
    for (script, code) in [
        (format!("echo hello domain $ROS_DOMAIN_ID; echo '{count}'; exec sleep 30"), 0),
        (format!("echo '{count}'; exit 3"), 1),
    ] {
        let dir = tmp.join(format!("trace-{code}"));
        let t0 = std::time::Instant::now();
        let out = rostrace()
            .args(["demo", "--duration", "1.5", "--domain", &domain.to_string(), "-o"])
            .arg(&dir)
            .args(["--", "sh", "-c", &script])
            .output()
            .unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(code), "{script}:\n{stdout}\n{stderr}");
        assert!(t0.elapsed().as_secs() < 20, "the command was not stopped");
        assert!(stdout.contains("trace written to") && stdout.contains("beside"), "{stdout}");
        let tallies: Vec<rostrace_demo::Tally> =
            serde_json::from_slice(&std::fs::read(dir.join("demo-counts.json")).unwrap()).unwrap();
        let beside = tallies.iter().find(|t| t.process == "beside").expect("the command's count");
        assert_eq!(beside.published.get("/x"), Some(&3));
        assert_eq!(tallies.len(), 3, "{tallies:?}");
        if code == 0 {
            assert!(stdout.contains(&format!("hello domain {domain}")), "{stdout}");
            assert!(!stdout.contains(r#""process""#), "a count line was printed: {stdout}");
        } else {
            assert!(stderr.contains("`sh -c") && stderr.contains("exit status: 3"), "{stderr}");
        }
    }
}

/// The demo's analysis and summary on a standard output that cannot be written: on a closed
/// pipe it ends quietly with 0, on a full disk with one line naming the error and 1; the report
/// is written either way.
#[test]
fn demo_on_a_closed_or_full_standard_output() {
    let tmp = TempDir::new("demo-stdout");
    let domain = 150 + std::process::id() % 30;
    for full in [false, true] {
        let dir = tmp.join(if full { "full" } else { "pipe" });
        let mut cmd = rostrace();
        cmd.args(["demo", "--duration", "1", "--domain", &domain.to_string(), "-o"]).arg(&dir);
        let out = if full {
            let f = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
            cmd.stdout(f).stderr(std::process::Stdio::piped()).output().unwrap()
        } else {
            let mut child =
                cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
            drop(child.stdout.take());
            child.wait_with_output().unwrap()
        };
        let err = String::from_utf8_lossy(&out.stderr);
        let about_stdout: Vec<&str> = err.lines().filter(|l| l.contains("standard output")).collect();
        if full {
            assert_eq!(out.status.code(), Some(1), "{err}");
            assert_eq!(about_stdout, ["rostrace: writing to standard output: No space left on device (os error 28)"]);
        } else {
            assert_eq!(out.status.code(), Some(0), "{err}");
            assert!(about_stdout.is_empty(), "{err}");
        }
        assert!(!err.contains("panicked"), "{err}");
        assert!(dir.join("report.html").exists(), "no report: {err}");
    }
}

/// The demo's service over many runs: no request is ever taken by the server before the client
/// sent it, nor a response before it was sent (the client's send event is recorded before the
/// request is written). Before, one run in about five showed a negative request latency: the
/// first request's event was recorded after the write, and the server could take it first.
#[test]
fn demo_service_latencies_are_never_negative() {
    let tmp = TempDir::new("demo-services");
    let domain = 90 + std::process::id() % 30;
    for run in 0..10 {
        let json = tmp.join(format!("{run}.json"));
        let out = rostrace()
            .args(["demo", "--duration", "1.5", "--domain", &domain.to_string(), "-o"])
            .arg(tmp.join(format!("trace{run}")))
            .arg("--json")
            .arg(&json)
            .output()
            .unwrap();
        assert!(out.status.success(), "run {run}: {}", String::from_utf8_lossy(&out.stderr));
        let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let (name, _, _) = rostrace_demo::SERVICE;
        let s = r["services"].as_array().unwrap().iter().find(|s| s["name"] == name).expect("service found");
        assert!(s["requests_matched"].as_u64().unwrap() > 0, "run {run}: {s}");
        for stat in ["request_ns", "response_ns", "service_ns", "round_trip_ns"] {
            let min = s[stat]["min"].as_i64().unwrap_or(0);
            assert!(min >= 0, "run {run}: {stat} min {min} ns: {s}");
        }
    }
}
