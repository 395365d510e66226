//! Service calls inside a path from the command line: `rostrace paths` finds the path through a
//! node that asks a service before it publishes, `rostrace e2e` says how it crosses it and where
//! the time goes (request, server, response), in memory and streamed, and `rostrace
//! architecture` counts and marks the call; all checked against the simulated system's log.

mod common;
#[path = "../../analysis/tests/support/service.rs"]
mod service;
#[path = "../../analysis/tests/support/system.rs"]
mod system;

use common::*;
use serde_json::Value;
use service::Response;

const PATH: &str = "/sensor,/planner,/actuator";

/// The latency of each complete record, in the log.
fn logged(log: &service::Log) -> Vec<i64> {
    log.scans.iter().filter_map(|&(s, e)| Some(e? as i64 - s as i64)).collect()
}

/// The latencies of `rostrace e2e --json` output `v`.
fn latencies(v: &Value) -> Vec<i64> {
    v["instances"].as_array().unwrap().iter().map(|x| x["latency_ns"].as_i64().unwrap()).collect()
}

#[test]
fn paths_and_e2e_follow_the_message_through_the_service() {
    for how in [Response::InCallback, Response::NoRun] {
        let dir = rostrace_testkit::TempDir::new("service-cli");
        let trace = dir.join("trace");
        // (Longer than a streamed slice's margins: slices follow it in parts.)
        let log = service::write(&trace, how, 500);
        let want = logged(&log);

        let (text, _) = run_ok(&["paths", "--from", "/sensor", "--to", "/actuator"], &trace);
        assert!(text.contains("through service calls: /planner (/map/query)"), "{how:?}: {text}");
        let (json, _) = run_ok(&["paths", "--from", "/sensor", "--to", "/actuator", "--json", "-"], &trace);
        let v: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["paths"][0]["complete"].as_u64(), Some(want.len() as u64), "{how:?}");
        assert_eq!(v["paths"][0]["services"][0]["service"]["service"], "/map/query", "{how:?}: {json}");

        let (text, _) = run_ok(&["e2e", "--path", PATH], &trace);
        let crossing: Vec<&str> = text.lines().filter(|l| l.contains(" -> ")).map(str::trim).collect();
        assert_eq!(
            crossing,
            ["/planner  /scan -> /cmd: callback_chain, through service /map/query of /map: the input's callback \
              sends the request, the output follows the response"],
            "{how:?}: {text}"
        );
        for segment in
            ["/map/query request", "/map/service_callback_0", "/map/query response", "/planner after /map/query"]
        {
            assert!(text.contains(segment), "{how:?}: no {segment}: {text}");
        }
        let json = |extra: &[&str]| -> Value {
            let mut args = vec!["e2e", "--path", PATH, "--json", "-"];
            args.extend_from_slice(extra);
            serde_json::from_str(&run_ok(&args, &trace).0).unwrap()
        };
        let memory = json(&["--stream", "never"]);
        assert_eq!(latencies(&memory), want, "{how:?}");
        assert_eq!(memory["crossings"][0]["source"], "service call");
        assert_eq!(memory["crossings"][0]["service"]["servers"][0], "/map");
        // Every /scan message is a record; those whose response never came stop at the server.
        assert_eq!(memory["records"].as_u64(), Some(500), "{how:?}");
        assert_eq!(memory["lost"].as_u64(), Some(100), "{how:?}");
        for slice in ["64K", "256K"] {
            let streamed = json(&["--stream", "always", "--slice-size", slice]);
            assert_eq!(streamed["rows"], memory["rows"], "{how:?}: in slices of {slice}");
            assert_eq!(latencies(&streamed), want, "{how:?}: in slices of {slice}");
        }
    }
}

#[test]
fn architecture_marks_the_call_and_reads_it_back() {
    let dir = rostrace_testkit::TempDir::new("service-arch");
    let trace = dir.join("trace");
    let log = service::write(&trace, Response::NoRun, 30);
    let file = dir.join("arch.yaml");
    let (_, err) = run_ok(&["architecture", "-o", file.to_str().unwrap()], &trace);
    assert!(err.contains("1 through service calls"), "{err}");
    let yaml = std::fs::read_to_string(&file).unwrap();
    assert!(
        yaml.contains("# through service /map/query of /map: request in the input's callback, output in the response's\n  - context_type: callback_chain\n    subscription_topic_name: /scan\n    publisher_topic_name: /cmd"),
        "{yaml}"
    );
    // Read back, the file keeps the call; a file saying use_latest_message drops it.
    let f = file.to_str().unwrap();
    let (json, _) = run_ok(&["e2e", "--path", PATH, "--architecture", f, "--json", "-"], &trace);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(latencies(&v), logged(&log));
    assert_eq!(v["crossings"][0]["service"]["service"], "/map/query");
    let latest = dir.join("latest.yaml");
    std::fs::write(
        &latest,
        yaml.replace(
            "context_type: callback_chain\n    subscription_topic_name: /scan",
            "context_type: use_latest_message\n    subscription_topic_name: /scan",
        ),
    )
    .unwrap();
    let (json, _) = run_ok(&["e2e", "--path", PATH, "--architecture", latest.to_str().unwrap(), "--json", "-"], &trace);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["crossings"][0]["context"], "use_latest_message");
    assert!(v["crossings"][0].get("service").is_none(), "{}", v["crossings"][0]);
}
