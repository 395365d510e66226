//! `rostrace architecture`, `rostrace paths`, `rostrace e2e`, and the longest paths of
//! `rostrace analyze`, on caret-demos-e2e-jazzy against caret_analyze v0.7.3's results
//! (`../shared/reference/caret/caret_analyze/caret-demos-e2e-jazzy/`).

mod common;

use common::*;
use serde_json::Value;
use std::path::PathBuf;

fn demo() -> Option<PathBuf> {
    rostrace_testkit::test_data_path("traces/caret-demos-e2e-jazzy")
}

fn reference(name: &str) -> Vec<(i64, i64)> {
    let p = shared().join("reference/caret/caret_analyze/caret-demos-e2e-jazzy").join(name);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    text.lines()
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (a, b) = l.split_once(',').unwrap();
            (a.parse().unwrap(), b.parse().unwrap())
        })
        .collect()
}

/// The e2e JSON's instances as (start, latency), in order.
fn instances(v: &Value) -> Vec<(i64, i64)> {
    v["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["start_ns"].as_i64().unwrap(), i["latency_ns"].as_i64().unwrap()))
        .collect()
}

/// The instances equal the reference's (start, latency) pairs, whatever the order of rows of
/// the same input.
fn assert_same_instances(v: &Value, reference_csv: &str) {
    let mut got = instances(v);
    let mut want = reference(reference_csv);
    got.sort();
    want.sort();
    assert_eq!(got, want, "{reference_csv}");
}

fn run(args: &[&str], trace: &PathBuf) -> (Option<i32>, String, String) {
    let out = rostrace().args(args).arg(trace).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const TARGET: &str = "/sensor_dummy_node,/filter_node,/message_driven_node,/timer_driven_node,/actuator_dummy_node";

#[rostrace_testkit::needs(test_data)]
#[test]
fn e2e_of_the_named_path_equals_caret_analyze() {
    let Some(t) = demo() else { return };
    let yaml = shared().join("reference/caret/end_to_end_sample.architecture.yaml");
    let (code, out, err) =
        run(&["e2e", "--architecture", yaml.to_str().unwrap(), "--name", "target", "--json", "-"], &t);
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    // Every instance: start and latency as caret_analyze's path latency.
    assert_same_instances(&v, "path__target__default__latency.csv");
    assert_eq!(v["latency"]["count"], 47);
    assert_eq!((v["records"].as_u64(), v["complete"].as_u64()), (Some(56), Some(47)));
    assert_eq!(v["dropped"].as_u64().unwrap() + v["in_flight"].as_u64().unwrap(), 9);
    // The segments add up to the latency, instance by instance.
    for i in v["instances"].as_array().unwrap() {
        let sum: i64 = i["segments_ns"].as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).sum();
        assert_eq!(sum, i["latency_ns"].as_i64().unwrap());
    }
    let names: Vec<&str> = v["segments"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "/topic1",
            "/filter_node/callback_0",
            "/topic2",
            "/message_driven_node/callback_0",
            "/topic3",
            "/timer_driven_node/callback_1",
            "/topic4"
        ]
    );
    // Response times, every case.
    for (case, file) in [
        ("all", "all"),
        ("best", "best"),
        ("worst", "worst"),
        ("worst-with-external-latency", "worst-with-external-latency"),
    ] {
        let r = v["response_time"].as_array().unwrap().iter().find(|r| r["case"] == case).unwrap();
        let got: Vec<(i64, i64)> = r["instances"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_i64().unwrap(), p[1].as_i64().unwrap()))
            .collect();
        let p = shared().join(format!(
            "reference/caret/caret_analyze/caret-demos-e2e-jazzy/path__target__default__response_time_{file}.csv"
        ));
        if p.exists() {
            let mut want = reference(&format!("path__target__default__response_time_{file}.csv"));
            let mut g = got.clone();
            g.sort();
            want.sort();
            assert_eq!(g, want, "{case}");
        } else {
            assert!(!got.is_empty(), "{case}");
        }
    }
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn e2e_text_and_the_path_given_by_nodes() {
    let Some(t) = demo() else { return };
    let (code, out, err) = run(&["e2e", "--path", TARGET, "--case", "worst"], &t);
    assert_eq!(code, Some(0), "{err}");
    for needle in [
        "56 messages: 47 went the whole way",
        "End-to-end latency (47 messages)",
        "min 102.25 ms",
        "max 321.81 ms",
        "Where the time goes",
        "/message_driven_node/callback_0",
        "worst",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in:\n{out}");
    }
    assert!(!out.contains("best "), "{out}");
    // Topics may be named between the nodes; a wrong one is refused.
    let (code, _, err) = run(&["e2e", "--path", "/sensor_dummy_node,/topic2,/filter_node"], &t);
    assert_eq!(code, Some(1));
    assert!(err.contains("/sensor_dummy_node does not send /topic2 to /filter_node"), "{err}");
    let (code, _, err) = run(&["e2e", "--path", "/sensor_dummy_node,/actuator_dummy_node"], &t);
    assert_eq!(code, Some(1));
    assert!(err.contains("sends nothing to /actuator_dummy_node"), "{err}");
    let (code, _, err) = run(&["e2e", "--path", "sensor,/filter_node"], &t);
    assert_eq!(code, Some(1));
    assert!(err.contains("did you mean /sensor_dummy_node"), "{err}");
    let (code, _, err) = run(&["e2e"], &t);
    assert_eq!(code, Some(1));
    assert!(err.contains("--path"), "{err}");
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn first_and_last_callback_equal_caret_analyze() {
    let Some(t) = demo() else { return };
    let (code, out, err) =
        run(&["e2e", "--path", TARGET, "--include-first-callback", "--include-last-callback", "--json", "-"], &t);
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_same_instances(&v, "path__target__with_first_and_last_callback__latency.csv");
    let kinds: Vec<&str> = v["segments"].as_array().unwrap().iter().map(|s| s["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"node"));
    assert_eq!(kinds.last(), Some(&"callback"));
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn paths_are_found_and_ranked() {
    let Some(t) = demo() else { return };
    let (code, out, err) =
        run(&["paths", "--from", "/sensor_dummy_node", "--to", "/actuator_dummy_node", "--json", "-"], &t);
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let paths = v["paths"].as_array().unwrap();
    assert_eq!(paths.len(), 1);
    assert_eq!(paths[0]["path"]["topics"], serde_json::json!(["/topic1", "/topic2", "/topic3", "/topic4"]));
    assert_eq!(paths[0]["latency"]["count"], 47);
    // From a topic to a node, through a node: the drive path and the sensor path both pass
    // /message_driven_node; from /drive only the drive path.
    let (code, out, err) =
        run(&["paths", "--from", "/drive", "--to", "/actuator_dummy_node", "--through", "/timer_driven_node"], &t);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("1 path from /drive to /actuator_dummy_node through /timer_driven_node"), "{out}");
    assert!(out.contains("/drive_node -/drive-> /message_driven_node"), "{out}");
    // The two paths into /timer_driven_node, longest first.
    let (code, out, err) =
        run(&["paths", "--from", "/message_driven_node", "--to", "/actuator_dummy_node", "--max-depth", "2"], &t);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("0 paths"), "{out}");
    assert!(err.contains("cut at --max-depth 2"), "{err}");
    let (code, _, err) = run(&["paths", "--from", "/nope", "--to", "/actuator_dummy_node"], &t);
    assert_eq!(code, Some(1));
    assert!(err.contains("--from \"/nope\": no such node or topic"), "{err}");
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn architecture_round_trip() {
    let Some(t) = demo() else { return };
    let dir = TempDir::new("paths-cli");
    let file = dir.join("arch.yaml");
    let (code, _, err) = run(&["architecture", "-o", file.to_str().unwrap()], &t);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("6 nodes") && err.contains("5 communications"), "{err}");
    assert!(err.contains("2 observed callback_chain"), "{err}");
    let text = std::fs::read_to_string(&file).unwrap();
    for needle in ["named_paths:", "executors:", "nodes:", "- node_name: /filter_node", "context_type: callback_chain"]
    {
        assert!(text.contains(needle), "missing {needle:?}");
    }
    // A user's edit of the exported file: the filter node's context set to use_latest_message,
    // and a named path; both used by e2e.
    let edited = text.replacen("context_type: callback_chain", "context_type: use_latest_message", 1).replace(
        "named_paths: []",
        "named_paths:\n- path_name: mine\n  node_chain:\n  - node_name: /sensor_dummy_node\n    publish_topic_name: /topic1\n    subscribe_topic_name: UNDEFINED\n  - node_name: /filter_node\n    publish_topic_name: UNDEFINED\n    subscribe_topic_name: /topic1",
    );
    assert_ne!(edited, text);
    std::fs::write(&file, &edited).unwrap();
    let (code, out, err) = run(&["e2e", "--architecture", file.to_str().unwrap(), "--name", "mine", "--json", "-"], &t);
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_same_instances(&v, "comm__topic1__sensor_dummy_node__filter_node__latency.csv");
    let (code, out, _) = run(&["architecture", "--architecture", file.to_str().unwrap()], &t);
    assert_eq!(code, Some(0));
    assert!(out.contains("path_name: mine"), "{out}");
}

/// `architecture -o -` writes the YAML to standard output, as without `-o`; no file named `-`.
#[rostrace_testkit::needs(test_data)]
#[test]
fn architecture_output_dash_is_standard_output() {
    let Some(t) = demo() else { return };
    let dir = TempDir::new("paths-dash");
    let plain = rostrace().current_dir(dir.path()).arg("architecture").arg(&t).output().unwrap();
    let dash = rostrace().current_dir(dir.path()).args(["architecture", "-o", "-"]).arg(&t).output().unwrap();
    assert_eq!(dash.status.code(), Some(0), "{}", String::from_utf8_lossy(&dash.stderr));
    assert!(String::from_utf8_lossy(&dash.stdout).contains("named_paths:"));
    assert!(dash.stdout == plain.stdout, "the same YAML");
    assert!(!dir.join("-").exists(), "no file named -");
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn analyze_lists_the_longest_paths() {
    let Some(t) = demo() else { return };
    let out = rostrace().arg("analyze").arg(&t).env("COLUMNS", "300").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let i = text.find("Longest paths (3 sources").unwrap_or_else(|| panic!("{text}"));
    let first = text[i..].lines().nth(2).unwrap();
    assert!(first.contains("#1 mean 188.59 ms"), "{first}");
    assert!(first.contains("/sensor_dummy_node -/topic1-> /filter_node"), "{first}");
    let json = rostrace().arg("analyze").arg(&t).args(["--json", "-"]).output().unwrap();
    let v: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["longest_paths"]["paths"][0]["latency"]["count"], 47);
}

/// A trace without the events that match a publication to a take (no rmw_take, no CARET
/// dispatch): the paths are still found, listed longest first, with no made-up latency.
#[rostrace_testkit::needs(test_data)]
#[test]
fn analyze_lists_paths_it_cannot_follow_without_latency() {
    let Some(t) = rostrace_testkit::test_data_path("traces/caret-analyze-samples/talker_listener@78a3d5b4") else {
        return;
    };
    let out = rostrace().arg("analyze").arg(&t).env("COLUMNS", "300").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let i = text.find("Longest paths (").unwrap_or_else(|| panic!("{text}"));
    let section: Vec<&str> = text[i..].lines().take_while(|l| !l.is_empty()).collect();
    assert!(section[1].contains("no message could be followed the whole way"), "{section:?}");
    assert!(section[2].starts_with("  #1 /"), "{section:?}");
    assert!(!section.iter().any(|l| l.contains("mean 0 ns")), "{section:?}");
}

/// A clock whose freq makes every event of the trace fall on one or two nanoseconds (10^19 Hz)
/// does not multiply the records: a callback run goes on with one record, and a path has at
/// most as many records as publications along it (joined by start time: 610,672 records,
/// 295 MB of JSON).
#[test]
fn events_of_one_time_do_not_multiply_records() {
    let Some(t) = demo() else { return };
    let tmp = rostrace_testkit::TempDir::new("paths-one-time");
    rostrace_testkit::copy_writable(&t, tmp.path());
    let meta = tmp.join("ust/uid/1000/64-bit/metadata");
    let mut text = std::fs::read(&meta).unwrap();
    let from = b"freq = 1000000000; /* Frequency, in Hz */";
    let at = text.windows(from.len()).position(|w| w == from).unwrap();
    text[at..at + from.len()].copy_from_slice(format!("{:<41}", "freq = 10000000000000000000;").as_bytes());
    std::fs::write(&meta, text).unwrap();
    let trace = tmp.path().to_path_buf();
    let (code, out, err) = run(&["info", "--json"], &trace);
    assert_eq!(code, Some(0), "{err}");
    let info: Value = serde_json::from_str(&out).unwrap();
    assert!(info["duration_ns"].as_i64().unwrap() <= 1, "{info}");
    let (_, out, _) = run(&["analyze", "--json", "-"], &trace);
    let a: Value = serde_json::from_str(&out).unwrap();
    let topics = ["/topic1", "/topic2", "/topic3", "/topic4"];
    let publications: u64 = a["topics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| topics.contains(&t["name"].as_str().unwrap()))
        .map(|t| t["publishes"].as_u64().unwrap())
        .sum();
    let yaml = shared().join("reference/caret/end_to_end_sample.architecture.yaml");
    let (code, out, err) =
        run(&["e2e", "--architecture", yaml.to_str().unwrap(), "--name", "target", "--json", "-"], &trace);
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let records = v["records"].as_u64().unwrap();
    // At least one per message of the first topic (56 in this trace).
    assert!(records >= 56 && records <= publications, "{records} records, {publications} publications");
    assert!(out.len() < 1 << 20, "{} bytes", out.len());
}

/// An architecture file that cannot be read is an error of `--architecture` before any trace
/// is read: a trace that does not open is not reached, and nothing is analysed in vain.
#[test]
fn a_bad_architecture_file_is_refused_before_the_traces_are_read() {
    let tmp = rostrace_testkit::TempDir::new("paths-bad-arch");
    let bad = tmp.join("arch.yaml");
    std::fs::write(&bad, "nodes: [unclosed\n").unwrap();
    let missing = tmp.join("no-such-file.yaml");
    let trace = tmp.join("no-trace-here");
    for (file, why) in [(&bad, ""), (&missing, "No such file")] {
        let f = file.to_str().unwrap();
        for args in [
            vec!["architecture", "--architecture", f],
            vec!["paths", "--architecture", f, "--from", "/a", "--to", "/b"],
            vec!["e2e", "--architecture", f, "--path", "/a,/b"],
        ] {
            let (code, _, err) = run(&args, &trace);
            assert_eq!(code, Some(1), "{args:?}: {err}");
            assert!(err.starts_with(&format!("rostrace: error: --architecture {f}: ")), "{args:?}: {err}");
            assert!(err.contains(why), "{args:?}: {err}");
            assert!(!err.contains("no-trace-here"), "{args:?}: the trace was read: {err}");
        }
    }
}
