//! Message links from the command line: `rostrace paths` and `rostrace e2e` say which nodes
//! declared the link a path follows, `rostrace architecture` counts and marks them, and a file it
//! wrote gives the same records when read back.

mod common;
#[path = "../../analysis/tests/support/links.rs"]
mod links;
#[path = "../../analysis/tests/support/system.rs"]
mod system;

use common::*;
use serde_json::Value;

const PATH: &str = "/lidar,/fusion,/sync,/actuator";

#[test]
fn paths_and_e2e_say_which_links_were_declared() {
    let dir = rostrace_testkit::TempDir::new("links-cli");
    let trace = dir.join("trace");
    let log = links::write(&trace, 10, links::Declared::Links);
    let want = log.records(false).len() as u64;
    let (text, _) = run_ok(&["paths", "--from", "/lidar", "--to", "/actuator"], &trace);
    assert!(text.contains("through message links: /fusion (periodic_async), /sync (partial_sync)"), "{text}");
    let (json, _) = run_ok(&["paths", "--from", "/lidar", "--to", "/actuator", "--json", "-"], &trace);
    let v: Value = serde_json::from_str(&json).unwrap();
    let declared: Vec<(&str, &str)> = v["paths"][0]["declared"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["node"].as_str().unwrap(), c["link"].as_str().unwrap()))
        .collect();
    assert_eq!(declared, [("/fusion", "periodic_async"), ("/sync", "partial_sync")]);
    assert_eq!(v["paths"][0]["complete"].as_u64(), Some(want));

    let (text, _) = run_ok(&["e2e", "--path", PATH], &trace);
    let lines: Vec<&str> = text.lines().filter(|l| l.contains(" -> ")).map(str::trim).collect();
    assert_eq!(
        lines,
        [
            "/fusion  /points -> /pose: use_latest_message, declared by the node (message_link_periodic_async)",
            "/sync    /pose -> /cmd: use_latest_message, declared by the node (message_link_partial_sync)",
        ],
        "{text}"
    );
    let (json, _) = run_ok(&["e2e", "--path", PATH, "--json", "-"], &trace);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["crossings"][1]["source"], "message link");
    assert_eq!(v["complete"].as_u64(), Some(want));

    // Without the links: the trace's own view of /sync (a callback chain), said so.
    let plain = dir.join("plain");
    links::write(&plain, 10, links::Declared::Nothing);
    let (text, _) = run_ok(&["e2e", "--path", PATH], &plain);
    assert!(
        text.contains("/sync    /pose -> /cmd: callback_chain, seen publishing during the input's callback"),
        "{text}"
    );
    assert!(
        text.contains(
            "/fusion  /points -> /pose: use_latest_message, inferred: another of the node's callbacks publishes it"
        ),
        "{text}"
    );
    let (text, _) = run_ok(&["paths", "--from", "/lidar", "--to", "/actuator"], &plain);
    assert!(!text.contains("message links"), "{text}");
}

#[test]
fn an_architecture_file_keeps_the_links_it_was_written_with() {
    let dir = rostrace_testkit::TempDir::new("links-arch");
    let trace = dir.join("trace");
    links::write(&trace, 10, links::Declared::Links);
    let file = dir.join("arch.yaml");
    let (_, err) = run_ok(&["architecture", "-o", file.to_str().unwrap()], &trace);
    assert!(err.contains("4 node paths (0 observed callback_chain, 4 from message links, 0 through service calls, 0 from the architecture file, 0 inferred use_latest_message, 0 use_latest_message by default)"), "{err}");
    let yaml = std::fs::read_to_string(&file).unwrap();
    assert_eq!(yaml.matches("# declared by the node: message_link_partial_sync").count(), 2, "{yaml}");
    // Read back: the same contexts, the declared links kept (they refine the latest message).
    let e2e = |extra: &[&str]| {
        let mut args = vec!["e2e", "--path", PATH, "--json", "-"];
        args.extend_from_slice(extra);
        serde_json::from_str::<Value>(&run_ok(&args, &trace).0).unwrap()
    };
    let (a, b) = (e2e(&[]), e2e(&["--architecture", file.to_str().unwrap()]));
    assert_eq!(a["rows"], b["rows"]);
    assert_eq!(b["crossings"][1]["source"], "architecture file");
    assert_eq!(b["crossings"][1]["link"], "partial_sync");
    // A file that says callback_chain there overrides the declaration.
    let chained = yaml.replacen(
        "  - context_type: use_latest_message\n    subscription_topic_name: /pose\n    publisher_topic_name: /cmd",
        "  - context_type: callback_chain\n    subscription_topic_name: /pose\n    publisher_topic_name: /cmd\n    callbacks:\n    - /sync/callback_0",
        1,
    );
    assert_ne!(chained, yaml);
    std::fs::write(&file, chained).unwrap();
    let c = e2e(&["--architecture", file.to_str().unwrap()]);
    assert_eq!((&c["crossings"][1]["context"], c["crossings"][1].get("link")), (&Value::from("callback_chain"), None));
    assert!(c["complete"].as_u64() < a["complete"].as_u64(), "{} {}", c["complete"], a["complete"]);
}

#[test]
fn age_says_how_old_each_sources_data_is_in_memory_and_streamed() {
    let dir = rostrace_testkit::TempDir::new("links-age-cli");
    let trace = dir.join("trace");
    let log = links::write(&trace, 10, links::Declared::Links);
    let (text, _) = run_ok(&["age", "--to", "/actuator"], &trace);
    let n = log.actuated.len();
    assert!(
        text.starts_with(&format!("Data age at /actuator: how old each source's data is in the {n} messages it took")),
        "{text}"
    );
    for source in ["/imu_driver -/imu->  (1 path, ", "/lidar -/points->  (1 path, ", "/wheel -/odom->  (1 path, "] {
        assert!(text.contains(&format!("{source}{n} messages)")), "{source}: {text}");
    }
    let json = |extra: &[&str]| {
        let mut args = vec!["age", "--to", "/actuator", "--json", "-"];
        args.extend_from_slice(extra);
        serde_json::from_str::<Value>(&run_ok(&args, &trace).0).unwrap()
    };
    let memory = json(&["--stream", "never"]);
    let want: Vec<Value> = log
        .ages()
        .iter()
        .map(|(at, ages)| serde_json::json!({"at_ns": *at as i64 + system::OFFSET, "ages_ns": ages}))
        .collect();
    assert_eq!(memory["inputs"], Value::Array(want));
    for slice in ["16K", "256K"] {
        assert_eq!(json(&["--stream", "always", "--slice-size", slice]), memory, "in slices of {slice}");
    }
    let only = json(&["--from", "/lidar", "--from", "/wheel"]);
    let nodes: Vec<&str> = only["sources"].as_array().unwrap().iter().map(|s| s["node"].as_str().unwrap()).collect();
    assert_eq!(nodes, ["/lidar", "/wheel"]);
    let out = rostrace().args(["age", "--to", "/nowhere"]).arg(&trace).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code() == Some(1) && err.contains("--to"), "{err}");
}
