//! CARET interoperability: caret_analyze (TIER IV's CARET analyzer, v0.7.3) reads rostrace's
//! recordings of the demo, with its validation on, and computes the same latencies as
//! `rostrace analyze`.
//!
//! caret_analyze cannot be installed in CI (its sources are on GitHub only), so its output on a
//! short recording of the demo is stored with that recording (`tests/data/caret-interop/`,
//! produced by `tools/caret-interop.py`): the first test compares `rostrace analyze --json` on
//! that recording with it, exactly. The second records a fresh demo and checks, per process, what
//! caret_analyze requires to load and analyze a trace (the conditions of its `EventCounter._validate`,
//! `Ros2Handler._is_valid_data` and `RecordsSource.publish_records`), so that the Rust node layer
//! cannot stop producing it unnoticed.
//!
//! The third does the same for a recording of the real C++ (rclcpp, Jazzy) system of
//! `tests/rclcpp/` (`tests/data/caret-interop-rclcpp/`): callbacks and communications (inter- and
//! intra-process), the executors and callback groups caret_analyze lists, compared with
//! `rostrace architecture`, and an end-to-end path, compared with `rostrace e2e --json`: every
//! record, latency and response time, to the nanosecond.
//!
//! The fourth does it for a recording of the real rclpy (Jazzy) system of
//! `tests/rclpy/callbacks.py` (`tests/data/rclpy-interop/`), traced by rostrace's rclpy
//! instrumentation: caret_analyze lists its Python callbacks, their groups and executors, as
//! `rostrace architecture` does, with the same durations.
//!
//! The fifth is the architecture file: a recording of the demo, whose fusion and planner nodes
//! declare their message links (`tests/data/caret-interop-links/`), the file `rostrace
//! architecture -o` writes of it, and caret_analyze's paths computed from that file
//! (`Architecture('yaml', ...)`), equal to `rostrace e2e` on the recording with no file at all.

mod common;

use common::{analyze_json, repo, rostrace, TempDir};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

fn data() -> PathBuf {
    repo().join("crates/cli/tests/data/caret-interop")
}

fn load(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))
}

/// count, min, max and sum of a latency statistic, as exact integers.
fn exact(v: &Value) -> [u64; 4] {
    let n = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} of {v} is not an integer"));
    [n("count"), n("min"), n("max"), n("sum")]
}

/// rostrace's statistic `ours` equals caret_analyze's latencies `theirs` (`latency_ns`, and every
/// latency in `latencies_ns`): count, min, max and sum exactly, the mean, and the percentiles
/// rostrace reports (nearest rank) of caret_analyze's latencies.
fn assert_same(ours: &Value, theirs: &Value, what: &str) {
    let lat = &theirs["latency_ns"];
    assert!(lat["count"].as_u64().unwrap() > 0, "{what}: caret_analyze has none");
    assert_eq!(exact(ours), exact(lat), "{what}: rostrace {ours}, caret_analyze {lat}");
    let mut all: Vec<u64> = theirs["latencies_ns"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    all.sort_unstable();
    assert_eq!([all.len() as u64, all[0], all[all.len() - 1], all.iter().sum()], exact(lat), "{what}");
    let (a, b) = (ours["mean"].as_f64().unwrap(), lat["mean"].as_f64().unwrap());
    assert!((a - b).abs() <= 1e-9 * b.abs(), "{what}: mean {a} != {b}");
    // Nearest rank: ceil(pct / 100 * n), in integers.
    for (k, pct) in [("p50", 50usize), ("p90", 90), ("p99", 99)] {
        let rank = (pct * all.len()).div_ceil(100).clamp(1, all.len());
        assert_eq!(ours[k].as_u64(), Some(all[rank - 1]), "{what}: {k}");
    }
}

#[test]
fn latencies_equal_caret_analyze() {
    let caret = load(&data().join("caret_analyze.json"));
    let trace = data().join("trace");
    let r = analyze_json(&[], &[&trace]);

    // caret_analyze loaded the recording with its validation on and built the demo's architecture.
    assert_eq!(s(&caret["validation"]), "on");
    assert_eq!(s(&caret["rmw_implementation"]), rostrace_ros2::RMW_IMPLEMENTATION);
    let names = |v: &Value| -> BTreeSet<String> { v.as_array().unwrap().iter().map(|n| s(n).to_string()).collect() };
    let demo_nodes: BTreeSet<String> = rostrace_demo::NODES.iter().map(|n| n.to_string()).collect();
    assert_eq!(names(&caret["nodes"]), demo_nodes);
    let rostrace_nodes: BTreeSet<String> =
        r["nodes"].as_array().unwrap().iter().map(|n| s(&n["name"]).to_string()).collect();
    assert_eq!(rostrace_nodes, demo_nodes);

    // Callbacks: callback_start -> callback_end of every run, per callback (node and symbol).
    let mut ours: BTreeMap<(String, String), &Value> = BTreeMap::new();
    for c in r["callbacks"].as_array().unwrap() {
        let key = (s(&c["node"]).to_string(), s(&c["symbol"]).to_string());
        assert!(ours.insert(key.clone(), c).is_none(), "two callbacks {key:?}");
    }
    let caret_callbacks = caret["callbacks"].as_array().unwrap();
    // caret_analyze leaves out callback groups that hold only service callbacks (its
    // `CallbackGroupsLoaded`): the map server's node, whose only callback serves /map/speed_limit.
    let service_only: Vec<&(String, String)> = ours
        .iter()
        .filter(|(k, o)| {
            s(&o["kind"]) == "service" && ours.iter().all(|(k2, o2)| k2.0 != k.0 || s(&o2["kind"]) == "service")
        })
        .map(|(k, _)| k)
        .collect();
    assert_eq!(service_only.iter().map(|k| k.0.as_str()).collect::<Vec<_>>(), ["/map/map_server"]);
    assert_eq!(
        caret_callbacks.len() + service_only.len(),
        ours.len(),
        "callbacks: caret_analyze {caret_callbacks:?}, rostrace {:?}",
        ours.keys()
    );
    let kinds =
        [("timer_callback", "timer"), ("subscription_callback", "subscription"), ("service_callback", "service")];
    for c in caret_callbacks {
        let key = (s(&c["node"]).to_string(), s(&c["symbol"]).to_string());
        let o =
            ours.get(&key).unwrap_or_else(|| panic!("caret_analyze's callback {key:?} is not in rostrace's analysis"));
        let kind = kinds.iter().find(|k| k.0 == s(&c["type"])).unwrap_or_else(|| panic!("{}", c["type"])).1;
        assert_eq!(s(&o["kind"]), kind, "{key:?}");
        if kind == "timer" {
            assert_eq!(c["period_ns"], o["timer_period_ns"], "{key:?}");
        }
        if kind == "subscription" {
            assert_eq!(c["topic"], o["topic"], "{key:?}");
        }
        assert_eq!(c["columns"].as_array().unwrap().len(), 2, "{key:?}: {}", c["columns"]);
        assert_same(&o["duration_ns"], c, &format!("callback {key:?}"));
    }

    // Communications: rclcpp_publish -> the subscription's callback_start, per publisher and
    // subscription node of a topic (caret_analyze matches them by DDS source timestamp:
    // dds_bind_addr_to_stamp on the publishing side, rmw_take on the subscribing side).
    let caret_comms = caret["communications"].as_array().unwrap();
    let mut compared = 0;
    for t in r["topics"].as_array().unwrap() {
        for p in t["pairs"].as_array().unwrap() {
            let (topic, publisher, subscriber) = (s(&t["name"]), s(&p["publisher_node"]), s(&p["subscription_node"]));
            let c = caret_comms
                .iter()
                .find(|c| {
                    s(&c["topic"]) == topic
                        && s(&c["publisher_node"]) == publisher
                        && s(&c["subscription_node"]) == subscriber
                })
                .unwrap_or_else(|| panic!("caret_analyze has no communication {topic} {publisher} -> {subscriber}"));
            assert_eq!(c["intra_process"], Value::Bool(false));
            // rclcpp_publish, rcl_publish, source_timestamp (dds_bind_addr_to_stamp), callback_start.
            let columns: Vec<&str> = c["columns"].as_array().unwrap().iter().map(s).collect();
            assert!(
                columns.len() == 4
                    && columns[0].ends_with("/rclcpp_publish_timestamp")
                    && columns[2].ends_with("/source_timestamp")
                    && columns[3].ends_with("/callback_start_timestamp"),
                "{columns:?}"
            );
            assert_same(&p["pub_to_callback_ns"], c, &format!("{topic} {publisher} -> {subscriber}"));
            compared += 1;
        }
    }
    assert_eq!(compared, caret_comms.len(), "communications: caret_analyze {caret_comms:?}");
    // The demo's five topics.
    assert_eq!(compared, 5);
}

fn data_rclcpp() -> PathBuf {
    repo().join("crates/cli/tests/data/caret-interop-rclcpp")
}

/// The path, as given to both: nodes with the topics between them.
const RCLCPP_PATH: &str = "/cpp/lidar,/cpp/points,/cpp/fusion,/cpp/pose,/cpp/planner,/cpp/cmd,/cpp/actuator";

/// `rostrace e2e TRACE --path PATH ARGS --json -`.
fn e2e_json(trace: &Path, path: &str, args: &[&str]) -> Value {
    let out =
        rostrace().arg("e2e").arg(trace).args(["--path", path]).args(args).args(["--json", "-"]).output().unwrap();
    assert!(out.status.success(), "e2e {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `rostrace architecture TRACE`, read back.
fn architecture(trace: &Path) -> rostrace_analysis::paths::Architecture {
    let out = rostrace().arg("architecture").arg(trace).output().unwrap();
    assert!(out.status.success(), "architecture: {}", String::from_utf8_lossy(&out.stderr));
    rostrace_analysis::paths::yaml::import(&String::from_utf8_lossy(&out.stdout)).unwrap()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().unwrap_or_else(|| panic!("not an array: {v}")).iter().map(|x| s(x).to_string()).collect()
}

fn ints(v: &Value) -> Vec<Option<i64>> {
    v.as_array().unwrap_or_else(|| panic!("not an array: {v}")).iter().map(Value::as_i64).collect()
}

/// Every callback caret_analyze lists is in rostrace's architecture (name, node, kind, symbol,
/// period, topic) and analysis (kind, period or topic, and every run's duration, exactly).
/// Returns how many caret_analyze lists, and rostrace's callbacks by (node, symbol), without
/// /parameter_events subscriptions (which caret_analyze leaves out).
fn same_callbacks<'a>(
    caret: &Value,
    r: &'a Value,
    arch: &rostrace_analysis::paths::Architecture,
) -> (usize, BTreeMap<(String, String), &'a Value>) {
    let caret_callbacks = caret["callbacks"].as_array().unwrap();
    let arch_callbacks: BTreeMap<&str, (&str, &rostrace_analysis::paths::arch::ArchCallback)> = arch
        .nodes
        .iter()
        .flat_map(|n| n.callbacks.iter().map(move |c| (c.name.as_str(), (n.name.as_str(), c))))
        .collect();
    assert_eq!(
        caret_callbacks.iter().map(|c| s(&c["name"])).collect::<BTreeSet<_>>(),
        arch_callbacks.keys().copied().collect::<BTreeSet<_>>()
    );
    let mut ours: BTreeMap<(String, String), &Value> = BTreeMap::new();
    for c in r["callbacks"].as_array().unwrap() {
        if c["topic"].as_str() == Some("/parameter_events") {
            continue;
        }
        let key = (s(&c["node"]).to_string(), s(&c["symbol"]).to_string());
        assert!(ours.insert(key.clone(), c).is_none(), "two callbacks {key:?}");
    }
    let kinds = [("timer_callback", "timer"), ("subscription_callback", "subscription")];
    for c in caret_callbacks {
        let name = s(&c["name"]);
        let (node, a) = arch_callbacks[name];
        assert_eq!((node, a.kind, a.symbol.as_str()), (s(&c["node"]), s(&c["type"]), s(&c["symbol"])), "{name}");
        assert_eq!(a.period_ns, c["period_ns"].as_i64(), "{name}");
        assert_eq!(a.topic.as_deref(), c["topic"].as_str(), "{name}");
        let key = (s(&c["node"]).to_string(), s(&c["symbol"]).to_string());
        let o =
            ours.get(&key).unwrap_or_else(|| panic!("caret_analyze's callback {name} is not in rostrace's analysis"));
        let kind = kinds.iter().find(|k| k.0 == s(&c["type"])).unwrap_or_else(|| panic!("{}", c["type"])).1;
        assert_eq!(s(&o["kind"]), kind, "{name}");
        if kind == "timer" {
            assert_eq!(c["period_ns"], o["timer_period_ns"], "{name}");
        } else {
            assert_eq!(c["topic"], o["topic"], "{name}");
        }
        assert_eq!(
            strings(&c["columns"]),
            [format!("{name}/callback_start_timestamp"), format!("{name}/callback_end_timestamp")]
        );
        assert_same(&o["duration_ns"], c, &format!("callback {name}"));
    }
    (caret_callbacks.len(), ours)
}

/// caret_analyze's callback groups (by name: type, node, callbacks in order) and executors
/// (names `executor_<i>` in its order, types, groups) are rostrace's architecture's. Returns
/// caret_analyze's groups by name.
fn same_groups_and_executors<'a>(
    caret: &'a Value,
    arch: &rostrace_analysis::paths::Architecture,
) -> BTreeMap<&'a str, &'a Value> {
    let caret_groups: BTreeMap<&str, &Value> =
        caret["callback_groups"].as_array().unwrap().iter().map(|g| (s(&g["name"]), g)).collect();
    let arch_groups: BTreeMap<&str, (&str, &rostrace_analysis::paths::arch::ArchGroup)> =
        arch.nodes.iter().flat_map(|n| n.groups.iter().map(move |g| (g.name.as_str(), (n.name.as_str(), g)))).collect();
    assert_eq!(caret_groups.keys().collect::<Vec<_>>(), arch_groups.keys().collect::<Vec<_>>());
    for (name, g) in &caret_groups {
        let (node, a) = arch_groups[name];
        assert_eq!((node, a.kind.as_str()), (s(&g["node"]), s(&g["type"])), "{name}");
        assert_eq!(a.callbacks, strings(&g["callback_names"]), "{name}");
    }
    // caret_analyze lists an executor's groups in the order they were added to it, rostrace by
    // node name: compared as sets.
    let caret_execs = caret["executors"].as_array().unwrap();
    assert_eq!(caret_execs.len(), arch.executors.len());
    for (c, a) in caret_execs.iter().zip(&arch.executors) {
        assert_eq!((s(&c["name"]), s(&c["type"])), (a.name.as_str(), a.kind.as_str()), "executors");
        let names = strings(&c["callback_group_names"]);
        assert_eq!(names.iter().cloned().collect::<BTreeSet<_>>(), a.groups.iter().cloned().collect(), "{}", a.name);
        let detail: Vec<&Value> = c["callback_groups"].as_array().unwrap().iter().collect();
        assert_eq!(detail.iter().map(|g| s(&g["name"]).to_string()).collect::<Vec<_>>(), names);
        for g in detail {
            assert_eq!(g, caret_groups[s(&g["name"])], "{}", a.name);
        }
    }
    caret_groups
}

#[test]
fn rclcpp_system_equals_caret_analyze() {
    let caret = load(&data_rclcpp().join("caret_analyze.json"));
    let trace = data_rclcpp().join("trace");
    let r = analyze_json(&[], &[&trace]);
    let arch = architecture(&trace);

    // caret_analyze loaded the recording with its validation on.
    assert_eq!(s(&caret["validation"]), "on");
    assert_eq!(s(&caret["distribution"]), "jazzy");
    assert_eq!(s(&caret["rmw_implementation"]), "rmw_fastrtps_cpp");
    let set = |v: Vec<String>| -> BTreeSet<String> { v.into_iter().collect() };
    let nodes: BTreeSet<String> = "actuator fusion imu intra_pub intra_shared intra_unique lc_talker lidar map planner"
        .split(' ')
        .map(|n| format!("/cpp/{n}"))
        .collect();
    assert_eq!(set(strings(&caret["nodes"])), nodes);
    assert_eq!(
        r["nodes"].as_array().unwrap().iter().map(|n| s(&n["name"]).to_string()).collect::<BTreeSet<_>>(),
        nodes
    );
    assert_eq!(arch.nodes.iter().map(|n| n.name.clone()).collect::<BTreeSet<_>>(), nodes);

    // Callbacks (caret_analyze leaves out /parameter_events subscriptions and the groups of
    // service callbacks only: the map node's /cpp/speed_limit service).
    let (caret_callbacks, ours) = same_callbacks(&caret, &r, &arch);
    assert_eq!(caret_callbacks, 10);
    let service_only: Vec<&(String, String)> =
        ours.iter().filter(|(_, o)| s(&o["kind"]) == "service").map(|(k, _)| k).collect();
    assert_eq!(service_only.iter().map(|k| k.0.as_str()).collect::<Vec<_>>(), ["/cpp/map"]);
    assert_eq!(caret_callbacks + service_only.len(), ours.len(), "rostrace {:?}", ours.keys());

    let caret_groups = same_groups_and_executors(&caret, &arch);
    assert_eq!(s(&caret_groups["/cpp/planner/callback_group_0"]["type"]), "reentrant");
    assert_eq!(strings(&caret_groups["/cpp/fusion/callback_group_0"]["callback_names"]).len(), 2);
    let kinds: BTreeSet<&str> = caret["executors"].as_array().unwrap().iter().map(|e| s(&e["type"])).collect();
    assert_eq!(
        kinds,
        ["multi_threaded_executor", "single_threaded_executor", "static_single_threaded_executor"].into()
    );

    // Communications: rclcpp_publish -> the subscription's callback_start, inter-process (matched
    // by DDS source timestamp) and intra-process (/cpp/intra, by message address).
    let caret_comms = caret["communications"].as_array().unwrap();
    let mut compared = 0;
    for t in r["topics"].as_array().unwrap() {
        if s(&t["name"]) == "/parameter_events" {
            continue;
        }
        for p in t["pairs"].as_array().unwrap() {
            let (topic, publisher, subscriber) = (s(&t["name"]), s(&p["publisher_node"]), s(&p["subscription_node"]));
            let c = caret_comms
                .iter()
                .find(|c| {
                    s(&c["topic"]) == topic
                        && s(&c["publisher_node"]) == publisher
                        && s(&c["subscription_node"]) == subscriber
                })
                .unwrap_or_else(|| panic!("caret_analyze has no communication {topic} {publisher} -> {subscriber}"));
            let columns = strings(&c["columns"]);
            let intra = topic == "/cpp/intra";
            assert_eq!(c["intra_process"], Value::Bool(intra), "{topic}");
            assert_eq!(columns.len(), if intra { 2 } else { 4 }, "{columns:?}");
            assert!(columns[0].ends_with("/rclcpp_publish_timestamp"), "{columns:?}");
            assert!(columns[columns.len() - 1].ends_with("/callback_start_timestamp"), "{columns:?}");
            assert_same(&p["pub_to_callback_ns"], c, &format!("{topic} {publisher} -> {subscriber}"));
            compared += 1;
        }
    }
    assert_eq!(compared, caret_comms.len(), "communications: caret_analyze {caret_comms:?}");
    assert_eq!(compared, 6);

    // What caret_analyze was told of the architecture is what rostrace found in the trace: the
    // callback that publishes /cpp/pose (seen publishing during its runs) and the message contexts.
    let node = |n: &str| &arch.nodes[arch.node(n).unwrap()];
    for u in caret["architecture_updates"].as_array().unwrap() {
        if let Some(x) = u.get("insert_publisher_callback") {
            let x = strings(x);
            let p = node(&x[0]).publishes.iter().find(|p| p.topic == x[1]).unwrap();
            assert_eq!(p.callbacks, [x[2].clone()], "{x:?}");
        } else {
            let x = strings(&u["update_message_context"]);
            let np = node(&x[0]).path(&x[2], &x[3]).unwrap_or_else(|| panic!("{x:?}"));
            assert_eq!(np.context.caret_name(), x[1], "{x:?}");
        }
    }

    // The path: records, latencies and response times.
    let paths = caret["paths"].as_array().unwrap();
    assert_eq!(paths.len(), 1);
    let cp = &paths[0];
    assert_eq!(s(&cp["spec"]), RCLCPP_PATH);
    assert_eq!(cp["n_found"], 1);
    let contexts: Vec<Option<&str>> =
        cp["node_paths"].as_array().unwrap().iter().map(|n| n["message_context"].as_str()).collect();
    assert_eq!(contexts, [None, Some("callback_chain"), Some("use_latest_message"), None]);
    let (records, latencies) = same_path(&trace, RCLCPP_PATH, cp);
    assert_eq!(records, 20, "the lidar's 20 messages");
    assert_eq!(latencies, 8, "the planner's 8 commands");
}

/// caret_analyze's path `cp` (of `tools/caret-interop.py`) equals `rostrace e2e TRACE --path
/// PATH`, with the first and last callbacks and without: every record, cell by cell, the latency
/// of each message that went the whole way, and each case of the response time. Returns how
/// many records and latencies there were (without the first and last callbacks).
fn same_path(trace: &Path, path: &str, cp: &Value) -> (usize, usize) {
    let mut counts = (0, 0);
    for (variant, args) in [
        ("default", &[][..]),
        ("with_first_and_last_callback", &["--include-first-callback", "--include-last-callback"][..]),
    ] {
        let what = format!("path {path} {variant}");
        let o = e2e_json(trace, path, args);
        let c = &cp["variants"][variant];
        assert_eq!(strings(&o["path"]["nodes"]), strings(&cp["node_names"]), "{what}");
        assert_eq!(strings(&o["path"]["topics"]), strings(&cp["topic_names"]), "{what}");
        // Every record, cell by cell: caret_analyze's columns are rostrace's, which has a
        // dds_write column per communication too (empty: Fast DDS's writes are not traced).
        let (ccols, ocols) = (strings(&c["columns"]), strings(&o["columns"]));
        let at: Vec<usize> = ccols
            .iter()
            .map(|col| {
                ocols
                    .iter()
                    .position(|x| x == col)
                    .unwrap_or_else(|| panic!("{what}: rostrace has no {col}: {ocols:?}"))
            })
            .collect();
        let (crows, orows) = (c["records"].as_array().unwrap(), o["rows"].as_array().unwrap());
        assert_eq!(crows.len(), orows.len(), "{what}: records");
        let mut ours = Vec::new();
        for or in orows {
            let or = ints(or);
            for (j, col) in ocols.iter().enumerate() {
                if !at.contains(&j) {
                    assert!(col.contains("/dds_write_timestamp/") && or[j].is_none(), "{what}: {col} {:?}", or[j]);
                }
            }
            ours.push(at.iter().map(|&j| or[j]).collect::<Vec<_>>());
        }
        let mut theirs: Vec<Vec<Option<i64>>> = crows.iter().map(ints).collect();
        // The records of one input message are in caret_analyze's order of its joins, rostrace's
        // in the order of their outputs: the inputs in the same order, the records the same.
        let firsts = |rows: &[Vec<Option<i64>>]| rows.iter().map(|r| r[0]).collect::<Vec<_>>();
        assert_eq!(firsts(&theirs), firsts(&ours), "{what}: the records' inputs");
        theirs.sort();
        let mut sorted = ours.clone();
        sorted.sort();
        for (i, (cr, or)) in theirs.iter().zip(&sorted).enumerate() {
            for k in 0..at.len() {
                assert_eq!(cr[k], or[k], "{what}: record {i} (sorted), {}", ccols[k]);
            }
        }
        // Latency (first column -> last) of each message that went the whole way.
        assert_same(&o["latency"], c, &what);
        let lat: Vec<i64> =
            o["instances"].as_array().unwrap().iter().map(|x| x["latency_ns"].as_i64().unwrap()).collect();
        let mut theirs: Vec<i64> = ints(&c["latencies_ns"]).into_iter().map(Option::unwrap).collect();
        let mut sorted = lat.clone();
        theirs.sort();
        sorted.sort();
        assert_eq!(sorted, theirs, "{what}");
        if variant == "default" {
            counts = (crows.len(), lat.len());
        }
        if variant == "default" {
            // Response time, each case: (input time, response time) pairs.
            let ort = o["response_time"].as_array().unwrap();
            let crt = c["response_time"].as_object().unwrap();
            assert_eq!(ort.len(), crt.len());
            for x in ort {
                let case = s(&x["case"]);
                let y = &crt[case];
                assert_eq!(x["instances"], y["instances"], "{what}: response time {case}");
                assert_eq!(exact(&x["stats"]), exact(&y["stats"]), "{what}: response time {case}");
            }
        }
    }
    counts
}

fn data_links() -> PathBuf {
    repo().join("crates/cli/tests/data/caret-interop-links")
}

/// The demo's paths through its fusion and planner nodes, which declare their message links, as
/// caret_analyze (`--path`) and rostrace (`--path`, where `node:` picks the node of a name a
/// topic has too) name them, with the message context caret_analyze gives each node on them.
const LINK_PATHS: [(&str, &str, [Option<&str>; 5]); 2] = [
    (
        "/sensing/imu,/localization/fusion,/planning/planner,/control/actuator",
        "node:/sensing/imu,/localization/fusion,/planning/planner,/control/actuator",
        [None, Some("use_latest_message"), Some("use_latest_message"), None, None],
    ),
    (
        "/sensing/lidar,/sensing/lidar_filter,/localization/fusion,/planning/planner,/control/actuator",
        "/sensing/lidar,/sensing/lidar_filter,/localization/fusion,/planning/planner,/control/actuator",
        [None, Some("callback_chain"), Some("callback_chain"), Some("use_latest_message"), None],
    ),
];

/// A recording of the demo (Rolling's events: its fusion and planner nodes declare
/// `message_link_periodic_async`), its architecture as `rostrace architecture -o` writes it, and
/// caret_analyze's paths computed on that file (`Architecture('yaml', ...)`): the records rostrace
/// follows through the declared links, with no architecture file, are caret_analyze's, one by one.
#[test]
fn declared_links_exported_equal_caret_analyze() {
    let caret = load(&data_links().join("caret_analyze.json"));
    let trace = data_links().join("trace");
    assert_eq!(s(&caret["validation"]), "on");
    assert_eq!(s(&caret["architecture"]), "yaml");
    assert_eq!(s(&caret["distribution"]), "rolling");

    // The file caret_analyze was given is the one rostrace writes of the recording today.
    let tmp = TempDir::new("caret-links");
    let file = tmp.join("architecture.yaml");
    let out = rostrace().arg("architecture").arg(&trace).arg("-o").arg(&file).output().unwrap();
    assert!(out.status.success(), "architecture: {}", String::from_utf8_lossy(&out.stderr));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("2 from message links"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        written,
        std::fs::read_to_string(data_links().join("architecture.yaml")).unwrap(),
        "`rostrace architecture -o` no longer writes the file caret_analyze read: run tools/caret-interop.py \
         with --architecture again (see crates/cli/tests/data/caret-interop-links)"
    );
    assert_eq!(written.matches("# declared by the node: message_link_periodic_async").count(), 2);

    let paths = caret["paths"].as_array().unwrap();
    assert_eq!(paths.len(), LINK_PATHS.len());
    for ((spec, ours, contexts), cp) in LINK_PATHS.iter().zip(paths) {
        assert_eq!(s(&cp["spec"]), *spec);
        assert_eq!(cp["n_found"], 1, "{spec}");
        let theirs: Vec<Option<&str>> =
            cp["node_paths"].as_array().unwrap().iter().map(|n| n["message_context"].as_str()).collect();
        assert_eq!(theirs, contexts[..theirs.len()], "{spec}");
        let (records, latencies) = same_path(&trace, ours, cp);
        assert!(records > 150 && latencies > 30, "{spec}: {records} records, {latencies} latencies");
        // rostrace says where each use_latest_message comes from: the node's declaration.
        let o = e2e_json(&trace, ours, &[]);
        let declared: Vec<(&str, &str)> = o["crossings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["source"] == "message link")
            .map(|c| (s(&c["node"]), s(&c["link"])))
            .collect();
        let first =
            if spec.starts_with("/sensing/imu") { vec![("/localization/fusion", "periodic_async")] } else { vec![] };
        assert_eq!(declared, [first, vec![("/planning/planner", "periodic_async")]].concat(), "{spec}");
    }
}

/// The events of one trace set, with the fields these checks read.
#[derive(Debug, Default, Clone)]
struct Ev {
    name: String,
    vpid: i64,
    vtid: i64,
    cycles: u64,
    u: HashMap<String, u64>,
    s: HashMap<String, String>,
}

fn data_rclpy() -> PathBuf {
    repo().join("crates/cli/tests/data/rclpy-interop")
}

#[test]
fn rclpy_system_equals_caret_analyze() {
    let caret = load(&data_rclpy().join("caret_analyze.json"));
    let trace = data_rclpy().join("trace");
    let r = analyze_json(&[], &[&trace]);
    let arch = architecture(&trace);

    assert_eq!(s(&caret["validation"]), "on");
    assert_eq!(s(&caret["distribution"]), "jazzy");
    let nodes: BTreeSet<String> = ["/interop/alpha", "/interop/beta"].map(String::from).into();
    assert_eq!(strings(&caret["nodes"]).into_iter().collect::<BTreeSet<_>>(), nodes);
    assert_eq!(arch.nodes.iter().map(|n| n.name.clone()).collect::<BTreeSet<_>>(), nodes);

    // The Python callbacks caret_analyze lists are rostrace's timers and subscriptions (it lists
    // no service or client callback of this system: their groups hold services only, or a client).
    let (caret_callbacks, ours) = same_callbacks(&caret, &r, &arch);
    let timers_and_subscriptions: Vec<_> =
        ours.values().filter(|o| matches!(s(&o["kind"]), "timer" | "subscription")).collect();
    assert_eq!(caret_callbacks, timers_and_subscriptions.len());
    assert_eq!(caret_callbacks, 5);
    for o in timers_and_subscriptions {
        assert!(s(&o["symbol"]).contains("callbacks.py:"), "{}", o["symbol"]);
    }

    // Groups and executors, from the instrumentation's CARET events: alpha's MultiThreadedExecutor,
    // and beta's SingleThreadedExecutor (the client's reentrant group) then MultiThreadedExecutor.
    same_groups_and_executors(&caret, &arch);
    let kinds: Vec<&str> = caret["executors"].as_array().unwrap().iter().map(|e| s(&e["type"])).collect();
    assert_eq!(kinds, ["multi_threaded_executor", "single_threaded_executor", "multi_threaded_executor"]);

    // Communications: caret_analyze starts a message at rclcpp_publish, which rclpy has not, so
    // it finds each topic but no message; rostrace matches every one (rcl_publish -> rmw_take ->
    // callback_start).
    let caret_comms = caret["communications"].as_array().unwrap();
    assert_eq!(caret_comms.len(), 3);
    for c in caret_comms {
        assert_eq!(c["latency_ns"]["count"], 0, "{}", c["topic"]);
        let t = r["topics"].as_array().unwrap().iter().find(|t| t["name"] == c["topic"]).unwrap();
        let p = &t["pairs"][0];
        assert_eq!(
            (s(&p["publisher_node"]), s(&p["subscription_node"])),
            (s(&c["publisher_node"]), s(&c["subscription_node"]))
        );
        assert!(p["pub_to_callback_ns"]["count"].as_u64().unwrap() > 0, "{}", c["topic"]);
        assert_eq!(t["unmatched"], 0, "{}", c["topic"]);
    }
}

fn read_events(dir: &Path) -> Vec<Ev> {
    let (set, errors) = rostrace_ctf::TraceSet::open(&[dir]);
    assert!(errors.is_empty(), "{errors:?}");
    let mut evs = Vec::new();
    let mut it = set.events();
    while let Some(ev) = it.next() {
        let ev = ev.unwrap();
        let ctx =
            |k: &str| ev.context_field(k).and_then(|v| v.as_i64()).unwrap_or_else(|| panic!("no {k} in {}", ev.name()));
        let mut e = Ev {
            name: ev.name().to_string(),
            vpid: ctx("vpid"),
            vtid: ctx("vtid"),
            cycles: ev.cycles(),
            ..Default::default()
        };
        if let Some(p) = ev.payload() {
            for (name, v) in p.iter() {
                let name = name.to_string();
                if let Some(x) = v.as_u64() {
                    e.u.insert(name, x);
                } else if let Some(x) = v.as_i64() {
                    e.u.insert(name, x as u64);
                } else if let Some(x) = v.as_str() {
                    e.s.insert(name, x.into_owned());
                }
            }
        }
        evs.push(e);
    }
    evs
}

#[test]
fn fresh_demo_has_what_caret_analyze_requires() {
    let tmp = TempDir::new("caret-interop");
    let dir = tmp.join("trace");
    let domain = 10 + std::process::id() % 30;
    let out =
        rostrace().args(["demo", "--duration", "2", "--domain", &domain.to_string(), "-o"]).arg(&dir).output().unwrap();
    assert!(
        out.status.success(),
        "demo: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let evs = read_events(&dir.join("ust"));
    check_caret_requirements(&evs);
}

/// What caret_analyze v0.7.3 requires of a trace, checked per process.
fn check_caret_requirements(evs: &[Ev]) {
    let u = |e: &Ev, k: &str| *e.u.get(k).unwrap_or_else(|| panic!("{} has no {k}: {e:?}", e.name));
    let st = |e: &Ev, k: &str| e.s.get(k).unwrap_or_else(|| panic!("{} has no {k}: {e:?}", e.name)).clone();
    let pids: BTreeSet<i64> = evs.iter().map(|e| e.vpid).collect();
    assert_eq!(pids.len(), 2, "the demo's two processes");
    let of = |pid: i64, name: &'static str| evs.iter().filter(move |e| e.vpid == pid && e.name == name);

    // EventCounter._validate: a `dds_bind_addr_to_stamp` ("Failed to find dds trace point added
    // by LD_PRELOAD" otherwise) -- here, of every process and for every publication.
    let mut distributions = BTreeSet::new();
    for &pid in &pids {
        // Ros2Handler._is_valid_data: once a trace has a caret_init, the runtime events of a
        // process without one are dropped.
        let init: Vec<&Ev> = of(pid, "ros2_caret:caret_init").collect();
        assert_eq!(init.len(), 1, "process {pid}: caret_init {init:?}");
        // clock_offset: the tracer's clock when it was emitted (caret_analyze converts the
        // init_timestamp of CARET's initialization events with event time - clock_offset).
        let offset = u(init[0], "clock_offset");
        assert!(offset <= init[0].cycles && init[0].cycles - offset < 1_000_000_000, "process {pid}: {init:?}");
        distributions.insert(st(init[0], "distribution"));
        let rmw: Vec<&Ev> = of(pid, "ros2_caret:rmw_implementation").collect();
        assert_eq!(rmw.len(), 1, "process {pid}: rmw_implementation {rmw:?}");
        assert_eq!(st(rmw[0], "rmw_impl"), rostrace_ros2::RMW_IMPLEMENTATION);
        let published = of(pid, "ros2:rmw_publish").count();
        assert!(published > 0, "process {pid} published nothing");
        assert_eq!(of(pid, "ros2_caret:dds_bind_addr_to_stamp").count(), published, "process {pid}");
        assert!(of(pid, "ros2:rmw_take").count() > 0, "process {pid} took nothing");
    }
    // One distribution; before Iron, caret_analyze also wants caret-rclcpp's events unless every
    // take is an rmw_take and no callback is intra-process.
    assert_eq!(distributions.len(), 1, "{distributions:?}");
    let d = distributions.into_iter().next().unwrap();
    assert!(!d.is_empty());
    assert!(evs.iter().filter(|e| e.name == "ros2:callback_start").all(|e| u(e, "is_intra_process") == 0));

    // RecordsSource.publish_records: rclcpp_publish, then on the same thread rcl_publish, then
    // dds_bind_addr_to_stamp, whose source_stamp is the sample's source timestamp; rostrace
    // records it in rmw_publish, between the two.
    let mut pending: HashMap<(i64, i64), Vec<&Ev>> = HashMap::new();
    let mut stamps: Vec<(i64, u64, u64)> = Vec::new(); // (vpid, source stamp, rmw publisher handle)
    for e in evs {
        let key = (e.vpid, e.vtid);
        match e.name.as_str() {
            "ros2:rclcpp_publish" => {
                let p = pending.entry(key).or_default();
                assert!(p.is_empty(), "a publication before the previous one's dds_bind_addr_to_stamp: {p:?} {e:?}");
                p.push(e);
            }
            "ros2:rcl_publish" | "ros2:rmw_publish" => pending.entry(key).or_default().push(e),
            "ros2_caret:dds_bind_addr_to_stamp" => {
                let p = pending.remove(&key).unwrap_or_default();
                let names: Vec<&str> = p.iter().map(|e| e.name.as_str()).collect();
                assert_eq!(
                    names,
                    ["ros2:rclcpp_publish", "ros2:rcl_publish", "ros2:rmw_publish"],
                    "before {e:?}: {p:?}"
                );
                let rmw = p[2];
                assert_eq!(u(e, "addr"), u(rmw, "message"), "{e:?} {rmw:?}");
                assert_eq!(u(e, "source_stamp"), u(rmw, "timestamp"), "{e:?} {rmw:?}");
                assert!(p.iter().all(|x| u(x, "message") == u(e, "addr")), "{p:?} {e:?}");
                let stamp = u(e, "source_stamp");
                assert!(stamp > 0);
                stamps.push((e.vpid, stamp, u(rmw, "rmw_publisher_handle")));
            }
            _ => {}
        }
    }
    assert!(pending.values().all(|p| p.is_empty()), "publications without dds_bind_addr_to_stamp: {pending:?}");
    assert!(!stamps.is_empty());

    // Every take: its source timestamp is the source_stamp of a dds_bind_addr_to_stamp of a
    // publisher on the same topic.
    let mut pub_topic: HashMap<(i64, u64), String> = HashMap::new();
    let mut sub_topic: HashMap<(i64, u64), String> = HashMap::new();
    for e in evs {
        match e.name.as_str() {
            "ros2:rcl_publisher_init" => {
                pub_topic.insert((e.vpid, u(e, "rmw_publisher_handle")), st(e, "topic_name"));
            }
            "ros2:rcl_subscription_init" => {
                sub_topic.insert((e.vpid, u(e, "rmw_subscription_handle")), st(e, "topic_name"));
            }
            _ => {}
        }
    }
    let by_stamp: HashMap<u64, Vec<String>> = stamps.iter().fold(HashMap::new(), |mut m, (pid, stamp, h)| {
        m.entry(*stamp).or_default().push(pub_topic[&(*pid, *h)].clone());
        m
    });
    let mut takes = 0;
    for e in evs.iter().filter(|e| e.name == "ros2:rmw_take") {
        let topic = &sub_topic[&(e.vpid, u(e, "rmw_subscription_handle"))];
        let stamp = u(e, "source_timestamp");
        let published = by_stamp.get(&stamp).unwrap_or_else(|| {
            panic!("take of {topic} with source timestamp {stamp}: no dds_bind_addr_to_stamp has it")
        });
        assert!(published.contains(topic), "take of {topic} with source timestamp {stamp}: published on {published:?}");
        takes += 1;
    }
    assert!(takes > 0);
}
