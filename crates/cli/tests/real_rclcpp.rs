//! Real C++ ROS 2: rclcpp 28.1.6 (Jazzy), built from `../shared/upstream` on the Jazzy wheels by
//! `tools/rclcpp-jazzy.sh` (in `$ROSTRACE_RCLCPP_DIR`, else
//! `/var/tmp/rostrace-ci-cache/rclcpp-jazzy`), traced three ways and compared.
//!
//! The C++ system of `tests/rclcpp/` (three processes: a static single-threaded executor with two
//! timers of different periods and a service; a multi-threaded executor with a mutually
//! exclusive and a reentrant callback group, a 2-input join, a timer-driven node, a client and a
//! sink; intra-process publishers and subscriptions taking a shared_ptr and a unique_ptr, a
//! lifecycle node walked through its transitions and an rclcpp ring buffer), built with CMake
//! against that stack and linked to `libtracetools.so` by its SONAME, runs
//!
//! 1. with upstream's tracetools 8.2.4 (`$ROSTRACE_VENV_DIR/upstream-8.2.4`) first in
//!    `LD_LIBRARY_PATH`, under an LTTng session: the oracle;
//! 2. under `rostrace record` (embedded backend; rostrace's library preloaded);
//! 3. under `rostrace record --backend lttng`.
//!
//! The three traces must carry the same `ros2:` events with the same payload schemas, the same
//! counts of every deterministic event, the same names, depths, periods, callback symbols, ring
//! buffer capacities and lifecycle transitions, handles that link the same way; in each, every
//! callback's runs, every publication and every take equal what the program counted itself, and
//! `rostrace analyze` attributes every callback and matches every message. rostrace's two traces
//! also carry CARET's executor and callback group events, checked against the program's design.
//! A table of every compared value goes to stderr; the test fails with the list of differences.

mod common;
mod real;

use common::*;
use real::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const POINTS: usize = 20;
const CALLS: usize = 3;
const INTRA: usize = 10;
const TRACETOOLS: &str = "8.2.4";
/// The system's timers (lidar, imu, planner, intra_pub), in ns.
const TIMER_PERIODS: [i128; 4] = [40_000_000, 20_000_000, 100_000_000, 30_000_000];

struct Setup {
    exe: PathBuf,
    env: Vec<(String, String)>,
    ns: String,
    domain_base: u32,
}

impl Setup {
    fn system(&self, cmd: &mut Command, run: u32) {
        cmd.arg(&self.exe).args(["--ns", &self.ns]);
        cmd.args(["--points", &POINTS.to_string(), "--calls", &CALLS.to_string(), "--intra", &INTRA.to_string()]);
        with_env(cmd, &self.env);
        cmd.env("ROS_DOMAIN_ID", (self.domain_base + run).to_string())
            .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST");
    }
}

/// Run 1: upstream's library first in `LD_LIBRARY_PATH`, under an LTTng session of our own.
fn run_upstream(s: &Setup, root: &Path) -> Run {
    let lib = venv_root().join(format!("upstream-{TRACETOOLS}"));
    let (out, dir) = real::again_if_stuck("upstream", |attempt| {
        let dir = root.join(format!("upstream-{attempt}"));
        let name = format!("rostrace-rclcpp-{}-{attempt}", std::process::id());
        let session = LttngSession::start(&name, &dir);
        let mut cmd = Command::new("env");
        s.system(&mut cmd, 0);
        let path = s.env.iter().find(|(k, _)| k == "LD_LIBRARY_PATH").map(|(_, v)| v.as_str()).unwrap_or("");
        cmd.env("LD_LIBRARY_PATH", format!("{}:{path}", lib.display()));
        let out = cmd.output().unwrap();
        session.stop();
        (out, dir)
    });
    let system = system_report(&out, "upstream");
    let (events, caret, schema, others) = read_trace(&dir, &s.ns);
    Run { label: "upstream", dir, events, caret, schema, others, system }
}

/// Runs 2 and 3: `rostrace record [--backend lttng]`.
fn run_rostrace(s: &Setup, root: &Path, backend: &str, run: u32) -> Run {
    let (out, dir) = real::again_if_stuck(backend, |attempt| {
        let name = format!("rostrace-rclcpp-{backend}-{}-{attempt}", std::process::id());
        let _session = LttngSession(name.clone());
        let mut cmd = rostrace();
        cmd.args(["record", "--backend", backend, "-s", &name, "-p"]).arg(root).arg("--");
        s.system(&mut cmd, run);
        (cmd.output().unwrap(), root.join(&name))
    });
    let system = system_report(&out, backend);
    let (events, caret, schema, others) = read_trace(&dir, &s.ns);
    let label = if backend == "embedded" { "embedded" } else { "lttng" };
    Run { label, dir, events, caret, schema, others, system }
}

/// Handle links: (event, field) must name a (target event, target field) of the same process.
const LINKS: &[(&str, &str, &str, &str)] = &[
    ("rcl_publisher_init", "node_handle", "rcl_node_init", "node_handle"),
    ("rcl_publisher_init", "rmw_publisher_handle", "rmw_publisher_init", "rmw_publisher_handle"),
    ("rcl_subscription_init", "node_handle", "rcl_node_init", "node_handle"),
    ("rcl_subscription_init", "rmw_subscription_handle", "rmw_subscription_init", "rmw_subscription_handle"),
    ("rclcpp_subscription_init", "subscription_handle", "rcl_subscription_init", "subscription_handle"),
    ("rclcpp_subscription_callback_added", "subscription", "rclcpp_subscription_init", "subscription"),
    ("rcl_service_init", "node_handle", "rcl_node_init", "node_handle"),
    ("rclcpp_service_callback_added", "service_handle", "rcl_service_init", "service_handle"),
    ("rcl_client_init", "node_handle", "rcl_node_init", "node_handle"),
    ("rclcpp_timer_callback_added", "timer_handle", "rcl_timer_init", "timer_handle"),
    ("rclcpp_timer_link_node", "timer_handle", "rcl_timer_init", "timer_handle"),
    ("rclcpp_timer_link_node", "node_handle", "rcl_node_init", "node_handle"),
    ("rclcpp_callback_register", "callback", "rclcpp_subscription_callback_added", "callback"),
    ("callback_start", "callback", "rclcpp_callback_register", "callback"),
    ("callback_end", "callback", "rclcpp_callback_register", "callback"),
    ("rcl_publish", "publisher_handle", "rcl_publisher_init", "publisher_handle"),
    ("rclcpp_intra_publish", "publisher_handle", "rcl_publisher_init", "publisher_handle"),
    ("rmw_publish", "rmw_publisher_handle", "rmw_publisher_init", "rmw_publisher_handle"),
    ("rmw_take", "rmw_subscription_handle", "rmw_subscription_init", "rmw_subscription_handle"),
    ("rclcpp_buffer_to_ipb", "buffer", "rclcpp_construct_ring_buffer", "buffer"),
    ("rclcpp_ipb_to_subscription", "ipb", "rclcpp_buffer_to_ipb", "ipb"),
    ("rclcpp_ipb_to_subscription", "subscription", "rclcpp_subscription_init", "subscription"),
    ("rclcpp_ring_buffer_enqueue", "buffer", "rclcpp_construct_ring_buffer", "buffer"),
    ("rclcpp_ring_buffer_dequeue", "buffer", "rclcpp_construct_ring_buffer", "buffer"),
    ("rclcpp_ring_buffer_clear", "buffer", "rclcpp_construct_ring_buffer", "buffer"),
    ("rcl_lifecycle_state_machine_init", "node_handle", "rcl_node_init", "node_handle"),
    ("rcl_lifecycle_transition", "state_machine", "rcl_lifecycle_state_machine_init", "state_machine"),
];

/// Events whose count does not depend on timing.
fn deterministic(n: &str) -> bool {
    n.ends_with("_init")
        || n.ends_with("_callback_added")
        || matches!(
            n,
            "rclcpp_timer_link_node"
                | "rclcpp_callback_register"
                | "rclcpp_construct_ring_buffer"
                | "rclcpp_buffer_to_ipb"
                | "rclcpp_ipb_to_subscription"
                | "rclcpp_ring_buffer_clear"
                | "rcl_lifecycle_transition"
        )
}

/// What the trace says, by key, for the comparison.
fn summarize(r: &Run, ns: &str) -> BTreeMap<String, String> {
    let ev = &r.events;
    let mut v = BTreeMap::new();
    let of = |n: &'static str| ev.iter().filter(move |e| e.name == n);
    for (n, c) in count_by(ev.iter(), |e| e.name.clone()) {
        v.insert(format!("count {n}"), if deterministic(&n) { c.to_string() } else { "present".into() });
    }
    for (n, fields) in &r.schema {
        let s: Vec<String> = fields.iter().map(|(f, t)| format!("{f}:{t}")).collect();
        v.insert(format!("schema {n}"), s.join(", "));
    }
    v.insert("rcl_init version".into(), multiset(of("rcl_init").map(|e| e.str("version"))));
    v.insert(
        "nodes".into(),
        multiset(of("rcl_node_init").map(|e| format!("{}/{}", e.str("namespace"), e.str("node_name")))),
    );
    let ours = |t: &str| t.starts_with(ns);
    v.insert(
        "publishers (topic depth)".into(),
        multiset(
            of("rcl_publisher_init")
                .filter(|e| ours(&e.str("topic_name")))
                .map(|e| format!("{} {}", e.str("topic_name"), e.str("queue_depth"))),
        ),
    );
    v.insert(
        "subscriptions (topic depth)".into(),
        multiset(
            of("rcl_subscription_init")
                .filter(|e| ours(&e.str("topic_name")))
                .map(|e| format!("{} {}", e.str("topic_name"), e.str("queue_depth"))),
        ),
    );
    v.insert("services".into(), multiset(of("rcl_service_init").map(|e| e.str("service_name"))));
    v.insert("clients".into(), multiset(of("rcl_client_init").map(|e| e.str("service_name"))));
    v.insert("timer periods".into(), multiset(of("rcl_timer_init").map(|e| e.str("period"))));
    v.insert("callback symbols".into(), multiset(of("rclcpp_callback_register").map(|e| e.str("symbol"))));
    v.insert("ring buffer capacities".into(), multiset(of("rclcpp_construct_ring_buffer").map(|e| e.str("capacity"))));
    v.insert(
        "lifecycle transitions".into(),
        of("rcl_lifecycle_transition")
            .map(|e| format!("{}->{}", e.str("start_label"), e.str("goal_label")))
            .collect::<Vec<_>>()
            .join(" "),
    );
    // The stand-alone ring buffer's enqueues, in order: (index, size, overwritten).
    let standalone: BTreeSet<i128> = of("rclcpp_construct_ring_buffer")
        .filter(|e| e.int("capacity") == Some(2))
        .filter_map(|e| e.int("buffer"))
        .collect();
    v.insert(
        "ring buffer of 2: enqueues, dequeues, clears".into(),
        format!(
            "{}; {}; {}",
            of("rclcpp_ring_buffer_enqueue")
                .filter(|e| e.int("buffer").is_some_and(|b| standalone.contains(&b)))
                .map(|e| format!("{}/{}/{}", e.str("index"), e.str("size"), e.str("overwritten")))
                .collect::<Vec<_>>()
                .join(" "),
            of("rclcpp_ring_buffer_dequeue")
                .filter(|e| e.int("buffer").is_some_and(|b| standalone.contains(&b)))
                .map(|e| format!("{}/{}", e.str("index"), e.str("size")))
                .collect::<Vec<_>>()
                .join(" "),
            of("rclcpp_ring_buffer_clear").filter(|e| e.int("buffer").is_some_and(|b| standalone.contains(&b))).count()
        ),
    );
    for (from, field, to, tfield) in LINKS {
        let sources: Vec<&Ev> = ev.iter().filter(|e| e.name == *from).collect();
        if sources.is_empty() {
            continue;
        }
        let mut targets: BTreeSet<(i128, Val)> =
            ev.iter().filter(|e| e.name == *to).filter_map(|e| Some((e.vpid, e.get(tfield)?.clone()))).collect();
        // A callback is registered once for whatever owns it: a timer's or a service's too.
        if *from == "rclcpp_callback_register" {
            for other in ["rclcpp_timer_callback_added", "rclcpp_service_callback_added"] {
                targets.extend(
                    ev.iter().filter(|e| e.name == other).filter_map(|e| Some((e.vpid, e.get("callback")?.clone()))),
                );
            }
        }
        // rclcpp_lifecycle's services are rcl services its state machine initialized, which
        // rclcpp::Service copies (a new rcl_service_t): their callback_added names the copy.
        let sources: Vec<&Ev> = if *from == "rclcpp_service_callback_added" {
            let lifecycle: BTreeSet<(i128, i128)> = of("rclcpp_callback_register")
                .filter(|e| e.str("symbol").contains("rclcpp_lifecycle::LifecycleNode::LifecycleNodeInterfaceImpl"))
                .filter_map(|e| Some((e.vpid, e.int("callback")?)))
                .collect();
            let (copied, rest): (Vec<&Ev>, Vec<&Ev>) =
                sources.into_iter().partition(|e| e.int("callback").is_some_and(|c| lifecycle.contains(&(e.vpid, c))));
            v.insert(
                "rclcpp_service_callback_added of lifecycle services (copied handles)".into(),
                copied.len().to_string(),
            );
            rest
        } else {
            sources
        };
        let linked =
            sources.iter().filter(|e| e.get(field).is_some_and(|x| targets.contains(&(e.vpid, x.clone())))).count();
        let shape = if linked == sources.len() { "all".to_string() } else { format!("{linked}/{}", sources.len()) };
        v.insert(format!("link {from}.{field} -> {to}"), shape);
    }
    v
}

/// The system's process reports, by role.
fn reports(r: &Run) -> BTreeMap<String, Value> {
    r.system["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["role"].as_str().unwrap().to_string(), p.clone()))
        .collect()
}

/// The program's name of a callback of the analysis (`runs` in its report), by owner.
fn program_name(ns: &str, c: &Value) -> Option<&'static str> {
    let node = c["node"].as_str()?.strip_prefix(ns)?;
    let topic = c["topic"].as_str().map(|t| t.strip_prefix(ns).unwrap_or(t));
    Some(match (node, c["kind"].as_str()?, topic) {
        ("/lidar", "timer", _) => "lidar timer",
        ("/imu", "timer", _) => "imu timer",
        ("/map", "service", Some("/speed_limit")) => "speed_limit service",
        ("/fusion", "subscription", Some("/imu")) => "fusion imu",
        ("/fusion", "subscription", Some("/points")) => "fusion points",
        ("/planner", "subscription", Some("/pose")) => "planner pose",
        ("/planner", "timer", _) => "planner timer",
        ("/actuator", "subscription", Some("/cmd")) => "actuator cmd",
        ("/intra_pub", "timer", _) => "intra timer",
        ("/intra_shared", "subscription", Some("/intra")) => "intra shared",
        ("/intra_unique", "subscription", Some("/intra")) => "intra unique",
        _ => return None,
    })
}

/// What the analysis says, against the program's own counts: each line "equal" or the two values.
fn analysis(r: &Run, ns: &str, root: &Path) -> (BTreeMap<String, String>, Value) {
    let json = root.join(format!("{}.json", r.label));
    let out = rostrace().arg("analyze").arg(&r.dir).arg("--json").arg(&json).output().unwrap();
    assert!(out.status.success(), "analyze {}: {}", r.label, String::from_utf8_lossy(&out.stderr));
    let a: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let reports = reports(r);
    let program: BTreeMap<String, i64> = reports
        .values()
        .flat_map(|p| p["runs"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_i64().unwrap())))
        .collect();
    let mut v = BTreeMap::new();
    let same = |a: i64, b: i64| if a == b { "equal".to_string() } else { format!("trace {a}, program {b}") };
    // Every callback of the system's nodes: attributed to its owner, its runs the program's.
    let mut seen = BTreeSet::new();
    for c in a["callbacks"].as_array().unwrap().iter().filter(|c| c["node"].as_str().is_some_and(|n| n.starts_with(ns)))
    {
        let runs = c["count"].as_i64().unwrap() + c["unfinished"].as_i64().unwrap();
        match program_name(ns, c) {
            Some(name) => {
                seen.insert(name);
                v.insert(format!("callback runs: {name}"), same(runs, program.get(name).copied().unwrap_or(-1)));
                v.insert(
                    format!("callback symbol known: {name}"),
                    (!c["symbol"].as_str().unwrap_or("").is_empty()).to_string(),
                );
            }
            None if c["kind"] == "unknown" => {
                v.insert(format!("callback of unknown owner: {} {}", c["node"], c["address"]), runs.to_string());
            }
            None => {}
        }
    }
    for name in program.keys().filter(|k| !seen.contains(k.as_str())) {
        v.insert(format!("callback runs: {name}"), "not in the analysis".into());
    }
    // Messages: publications and takes the program counted, every take matched.
    let (sensing, control, intra) = (&reports["sensing"], &reports["control"], &reports["intra"]);
    let counts = [
        ("points", &sensing["published"]["points"], &control["taken"]["points"]),
        ("imu", &sensing["published"]["imu"], &Value::Null),
        ("pose", &control["published"]["pose"], &control["taken"]["pose"]),
        ("cmd", &control["published"]["cmd"], &control["taken"]["cmd"]),
    ];
    let topic = |t: &str| {
        let name = format!("{ns}/{t}");
        a["topics"].as_array().unwrap().iter().find(|x| x["name"] == name.as_str()).cloned().unwrap_or(Value::Null)
    };
    for (t, published, taken) in counts {
        let x = topic(t);
        v.insert(
            format!("analyze {t} publishes"),
            same(x["publishes"].as_i64().unwrap_or(-1), published.as_i64().unwrap()),
        );
        if let Some(taken) = taken.as_i64() {
            v.insert(format!("analyze {t} takes"), same(x["takes"].as_i64().unwrap_or(-1), taken));
        }
        v.insert(format!("analyze {t} matched = takes"), (x["matched"] == x["takes"]).to_string());
        v.insert(format!("analyze {t} unmatched"), x["unmatched"].to_string());
    }
    let x = topic("intra");
    let taken = intra["taken"]["intra_shared"].as_i64().unwrap() + intra["taken"]["intra_unique"].as_i64().unwrap();
    v.insert(
        "analyze intra publishes".into(),
        same(x["publishes"].as_i64().unwrap_or(-1), intra["published"]["intra"].as_i64().unwrap()),
    );
    v.insert("analyze intra takes".into(), same(x["takes"].as_i64().unwrap_or(-1), taken));
    v.insert("analyze intra intra_process takes".into(), same(x["intra_process"].as_i64().unwrap_or(-1), taken));
    v.insert("analyze intra unmatched".into(), x["unmatched"].to_string());
    v.insert(
        "analyze lifecycle transitions".into(),
        a["lifecycle_transitions"].as_array().map_or(0, |l| l.len()).to_string(),
    );
    (v, a)
}

/// The values known in advance.
fn expected(ns: &str) -> BTreeMap<String, String> {
    let mut e = BTreeMap::new();
    e.insert("rcl_init version".into(), format!("{TRACETOOLS} x3"));
    e.insert("count rcl_init".into(), "3".into());
    e.insert("count rcl_timer_init".into(), "4".into());
    e.insert("timer periods".into(), multiset(TIMER_PERIODS.iter().map(|p| p.to_string())));
    e.insert("clients".into(), format!("{ns}/speed_limit"));
    e.insert(
        "subscriptions (topic depth)".into(),
        multiset(
            [("cmd", 5), ("imu", 3), ("intra", 4), ("intra", 4), ("points", 10), ("pose", 5)]
                .iter()
                .map(|(t, d)| format!("{ns}/{t} {d}")),
        ),
    );
    e.insert("count rcl_lifecycle_state_machine_init".into(), "1".into());
    // change_state, get_state, get_available_states, get_available_transitions, get_transition_graph.
    e.insert("rclcpp_service_callback_added of lifecycle services (copied handles)".into(), "5".into());
    // configure, activate, deactivate, cleanup, shutdown: each through its transition state.
    e.insert(
        "lifecycle transitions".into(),
        "unconfigured->configuring configuring->inactive inactive->activating activating->active \
         active->deactivating deactivating->inactive inactive->cleaningup cleaningup->unconfigured \
         unconfigured->shuttingdown shuttingdown->finalized"
            .into(),
    );
    e.insert("analyze lifecycle transitions".into(), "10".into());
    // 3 into 2 places: the third overwrites (rclcpp records the size as it would be, 3); one
    // taken; cleared.
    e.insert("ring buffer of 2: enqueues, dequeues, clears".into(), "0/1/0 1/2/0 0/3/1; 1/1; 1".into());
    for name in [
        "lidar timer",
        "imu timer",
        "speed_limit service",
        "fusion imu",
        "fusion points",
        "planner pose",
        "planner timer",
        "actuator cmd",
        "intra timer",
        "intra shared",
        "intra unique",
    ] {
        e.insert(format!("callback runs: {name}"), "equal".into());
        e.insert(format!("callback symbol known: {name}"), "true".into());
    }
    for t in ["points", "imu", "pose", "cmd", "intra"] {
        e.insert(format!("analyze {t} publishes"), "equal".into());
        e.insert(format!("analyze {t} unmatched"), "0".into());
    }
    for t in ["points", "pose", "cmd", "intra"] {
        e.insert(format!("analyze {t} takes"), "equal".into());
    }
    for t in ["points", "imu", "pose", "cmd"] {
        e.insert(format!("analyze {t} matched = takes"), "true".into());
    }
    e.insert("analyze intra intra_process takes".into(), "equal".into());
    e
}

/// CARET's executor and callback group events in a rostrace trace of the system: per process the
/// executor the program constructs; every timer, subscription and service of the system's nodes
/// in exactly one callback group (its members, from `callback_group_add_*`), every group in the
/// process's executor (`callback_group_to_executor_entity_collector`, the executor's collector
/// from `executor_entity_collector_to_executor`), the groups' types those the program gave; and
/// the executors and groups as `rostrace analyze` lists them. Returns the table lines and the
/// failures.
fn caret_check(r: &Run, a: &Value) -> (String, Vec<String>) {
    let mut fails = Vec::new();
    let mut lines = format!("   CARET executors and callback groups ({}):\n", r.label);
    let reports = reports(r);
    let pid_of = |role: &str| reports[role]["pid"].as_i64().unwrap() as i128;
    let caret = |name: &'static str, pid: i128| r.caret.iter().filter(move |e| e.name == name && e.vpid == pid);
    for (role, event, kind) in [
        ("sensing", "ros2_caret:construct_static_executor", "static_single_threaded_executor"),
        ("control", "ros2_caret:construct_executor", "multi_threaded_executor"),
        ("intra", "ros2_caret:construct_executor", "single_threaded_executor"),
    ] {
        let pid = pid_of(role);
        let execs: Vec<&Ev> = caret(event, pid).collect();
        let kinds: Vec<String> = execs.iter().map(|e| e.str("executor_type_name")).collect();
        if kinds != [kind] {
            fails.push(format!("{}: {role}: {event} {kinds:?}, expected one {kind}", r.label));
            continue;
        }
        let exec = execs[0].int("executor_addr");
        let collectors: BTreeSet<i128> = caret("ros2_caret:executor_entity_collector_to_executor", pid)
            .filter(|e| e.int("executor_addr") == exec)
            .filter_map(|e| e.int("entities_collector_addr"))
            .collect();
        // Groups in the executor, and their types.
        let groups: BTreeMap<i128, String> = caret("ros2_caret:callback_group_to_executor_entity_collector", pid)
            .filter(|e| e.int("entities_collector_addr").is_some_and(|c| collectors.contains(&c)))
            .filter_map(|e| Some((e.int("callback_group_addr")?, e.str("group_type_name"))))
            .collect();
        // Members: handle -> groups.
        let mut member_of: BTreeMap<(String, i128), Vec<i128>> = BTreeMap::new();
        for (event, what, field) in [
            ("ros2_caret:callback_group_add_timer", "timer", "timer_handle"),
            ("ros2_caret:callback_group_add_subscription", "subscription", "subscription_handle"),
            ("ros2_caret:callback_group_add_service", "service", "service_handle"),
            ("ros2_caret:callback_group_add_client", "client", "client_handle"),
        ] {
            for e in caret(event, pid) {
                if let (Some(g), Some(h)) = (e.int("callback_group_addr"), e.int(field)) {
                    member_of.entry((what.to_string(), h)).or_default().push(g);
                }
            }
        }
        // Every timer, subscription, service and client rclcpp made in the process (all its nodes
        // are the system's): in one group, of this executor. A service is named by the handle
        // rclcpp holds (for a lifecycle node's, a copy of the rcl service's).
        let mut entities: Vec<(String, i128)> = Vec::new();
        for e in r.events.iter().filter(|e| e.vpid == pid) {
            let (what, h) = match e.name.as_str() {
                "rclcpp_subscription_init" => ("subscription", e.int("subscription_handle")),
                "rclcpp_service_callback_added" => ("service", e.int("service_handle")),
                "rcl_client_init" => ("client", e.int("client_handle")),
                "rclcpp_timer_callback_added" => ("timer", e.int("timer_handle")),
                _ => continue,
            };
            if let Some(h) = h {
                if !entities.contains(&(what.to_string(), h)) {
                    entities.push((what.to_string(), h));
                }
            }
        }
        let mut in_one = 0;
        for k in &entities {
            match member_of.get(k).map(Vec::as_slice) {
                Some([g]) if groups.contains_key(g) => in_one += 1,
                other => fails.push(format!(
                    "{}: {role}: {} {:#x} in groups {other:?} (of its executor: {:?})",
                    r.label,
                    k.0,
                    k.1,
                    groups.keys().collect::<Vec<_>>()
                )),
            }
        }
        let kinds: BTreeMap<&str, usize> = groups.values().fold(BTreeMap::new(), |mut m, k| {
            *m.entry(k.as_str()).or_default() += 1;
            m
        });
        if kinds.contains_key("unknown") {
            fails.push(format!("{}: {role}: callback groups of unknown type: {kinds:?}", r.label));
        }
        if role == "control" && !kinds.contains_key("reentrant") {
            fails.push(format!("{}: control: no reentrant callback group: {kinds:?}", r.label));
        }
        // The analysis lists the executor with its groups.
        let listed = a["executors"].as_array().unwrap().iter().find(|x| x["vpid"].as_i64() == Some(pid as i64));
        let listed_groups = listed.map_or(0, |x| x["groups"].as_array().unwrap().len());
        if listed_groups != groups.len() || listed.is_none_or(|x| x["kind"] != kind) {
            fails.push(format!("{}: {role}: analyze lists {listed:?}, the trace has {} groups", r.label, groups.len()));
        }
        lines += &format!(
            "      {role}: {kind}, {} callback groups {kinds:?}, {in_one} of {} entities in exactly one of them; analyze lists {listed_groups} groups\n",
            groups.len(),
            entities.len()
        );
    }
    (lines, fails)
}

/// The end-to-end path lidar → fusion (a 2-input join) → planner (timer) → actuator, followed
/// message by message, and the report of the recording, in Chromium.
fn path_and_report(r: &Run, ns: &str, root: &Path) -> (String, Vec<String>) {
    let mut fails = Vec::new();
    let path = format!("{ns}/lidar,{ns}/fusion,{ns}/planner,{ns}/actuator");
    let out = rostrace().arg("e2e").arg(&r.dir).args(["--path", &path, "--json", "-"]).output().unwrap();
    let lines = if !out.status.success() {
        fails.push(format!("{}: e2e {path}: {}", r.label, String::from_utf8_lossy(&out.stderr)));
        String::new()
    } else {
        let e: Value = serde_json::from_slice(&out.stdout).unwrap();
        let complete = e["complete"].as_u64().unwrap_or(0);
        let records = e["records"].as_u64().unwrap_or(0);
        if complete == 0 || records != POINTS as u64 {
            fails.push(format!(
                "{}: e2e {path}: {complete} complete of {records} records (want {POINTS} records, some complete)",
                r.label
            ));
        }
        format!(
            "   e2e {path} ({}): {records} records, {complete} complete, latency {}\n",
            r.label, e["latency"]["mean"]
        )
    };
    if have_chromium() {
        let html = root.join(format!("{}.html", r.label));
        let out = rostrace().arg("report").arg(&r.dir).arg("-o").arg(&html).output().unwrap();
        assert!(out.status.success(), "report {}: {}", r.label, String::from_utf8_lossy(&out.stderr));
        check_report(&html, &analyze_json(&[], &[&r.dir]));
    } else {
        require(false, "chromium (for the report of the C++ system)");
    }
    (lines, fails)
}

#[rostrace_testkit::needs(rclcpp, venvs, lttng, cmake)]
#[test]
fn real_rclcpp_jazzy() {
    let dir = rclcpp_dir();
    let upstream = venv_root().join(format!("upstream-{TRACETOOLS}")).join("libtracetools.so");
    if !require(
        dir.join(".rostrace-complete").exists(),
        &format!("rclcpp for Jazzy in {} (tools/rclcpp-jazzy.sh DIR makes it; ROSTRACE_RCLCPP_DIR)", dir.display()),
    ) || !require(
        upstream.exists(),
        &format!("upstream tracetools {TRACETOOLS} ({}; tools/ros2-venvs.sh)", upstream.display()),
    ) || !require(have_lttng(), "LTTng (lttng-tools)")
        || !require(rostrace_testkit::have("cmake", "--version"), "cmake")
    {
        return;
    }
    let env = stack_env(&dir);
    let t0 = std::time::Instant::now();
    let exe = build_system(&dir, &env);
    let built = t0.elapsed();
    let _lttng = lttng_lock();
    let root = TempDir::new("real-rclcpp");
    let pid = std::process::id();
    let ns = format!("/rostrace_cpp_{pid}");
    // Domains 161..=230, 3 consecutive ones (clear of the rclpy tests' 1..=160).
    let s = Setup { exe, env, ns: ns.clone(), domain_base: 161 + (pid * 3) % 68 };
    let t1 = std::time::Instant::now();
    let runs = [run_upstream(&s, &root), run_rostrace(&s, &root, "embedded", 1), run_rostrace(&s, &root, "lttng", 2)];
    let recorded = t1.elapsed();

    let mut analyses = Vec::new();
    let sums: Vec<BTreeMap<String, String>> = runs
        .iter()
        .map(|r| {
            let mut v = summarize(r, &ns);
            let (a, json) = analysis(r, &ns, &root);
            v.extend(a);
            analyses.push(json);
            v
        })
        .collect();
    let mut table = format!(
        "\n=== real rclcpp 28.1.6 on Jazzy (tracetools {TRACETOOLS}; system built in {} s, three runs in {} s; events kept/other processes: {})\n",
        built.as_secs(),
        recorded.as_secs(),
        runs.iter().map(|r| format!("{} {}/{}", r.label, r.events.len(), r.others)).collect::<Vec<_>>().join(", ")
    );
    let labels: Vec<&str> = runs.iter().map(|r| r.label).collect();
    let (lines, mut failures) = compare_runs("rclcpp", &labels, &sums, &expected(&ns));
    table += &lines;
    assert!(runs[0].caret.is_empty(), "upstream's trace has ros2_caret events");
    for (r, a) in runs.iter().zip(&analyses).skip(1) {
        let (lines, bad) = caret_check(r, a);
        table += &lines;
        failures.extend(bad);
    }
    for r in &runs {
        let (lines, bad) = path_and_report(r, &ns, &root);
        table += &lines;
        failures.extend(bad);
    }
    eprintln!("{table}");
    if !failures.is_empty() {
        eprintln!("=== rclcpp differences ({}):", failures.len());
        for f in &failures {
            eprintln!("  {f}");
        }
    }
    assert!(failures.is_empty(), "{} difference(s), see the table above:\n{}", failures.len(), failures.join("\n"));
}

/// One system, three languages, one session: `rostrace demo` (Rust nodes, ros2-client over
/// RustDDS) with, beside it, the C++ vehicle node (rclcpp, Fast DDS) and the rclpy vehicle
/// interface (Jazzy wheels). Every message each takes is matched to its publication, and the flows
/// between the languages are the counts each process made: Rust → C++ and Rust → Python
/// (`/control/cmd_vel`), Python → C++, Python → Rust, C++ → Rust and Rust → C++
/// (`/sensing/imu`), C++ → Python (`/vehicle/status`).
#[rostrace_testkit::needs(rclcpp, venvs, cmake)]
#[test]
fn three_languages_in_one_session() {
    let dir = rclcpp_dir();
    let python = venv_root().join("jazzy/bin/python");
    if !require(dir.join(".rostrace-complete").exists(), &format!("rclcpp for Jazzy in {}", dir.display()))
        || !require(python.exists(), &format!("the Jazzy virtualenv ({}; tools/ros2-venvs.sh)", python.display()))
        || !require(rostrace_testkit::have("cmake", "--version"), "cmake")
    {
        return;
    }
    let env = stack_env(&dir);
    let exe = build_system(&dir, &env);
    let cpp_path = env.iter().find(|(k, _)| k == "LD_LIBRARY_PATH").map(|(_, v)| v.clone()).unwrap_or_default();
    let tmp = TempDir::new("three-languages");
    let (trace, json) = (tmp.join("trace"), tmp.join("analysis.json"));
    let domain = 231 + std::process::id() % 2;
    warm_rclpy(&python);
    // The C++ node with the stack's libraries, the rclpy node with its virtualenv's (the demo
    // preloads rostrace's library into both, and interrupts the shell that became Python).
    let script = format!(
        "LD_LIBRARY_PATH='{cpp_path}' '{}' vehicle --duration 6 & \
         exec env -u LD_LIBRARY_PATH -u _ROS_WHEELS_BOOTSTRAP_COMPLETE '{}' '{}'",
        exe.display(),
        python.display(),
        repo().join("crates/demo/python/vehicle_interface.py").display()
    );
    let mut cmd = rostrace();
    cmd.args(["demo", "--duration", "8", "--distro", "jazzy", "--domain", &domain.to_string(), "-o"])
        .arg(&trace)
        .arg("--json")
        .arg(&json)
        .args(["--", "sh", "-c", &script]);
    fastdds_env(&mut cmd, "jazzy");
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "demo with C++ and rclpy: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let tallies: Vec<Value> = serde_json::from_slice(&std::fs::read(trace.join("demo-counts.json")).unwrap()).unwrap();
    let tally = |p: &str| {
        tallies.iter().find(|t| t["process"] == p).unwrap_or_else(|| panic!("no counts of {p}: {stdout}")).clone()
    };
    let (cpp, py) = (tally("cpp_vehicle"), tally("vehicle_interface"));
    let topic =
        |name: &str| r["topics"].as_array().unwrap().iter().find(|t| t["name"] == name).cloned().unwrap_or(Value::Null);
    let pair = |t: &str, from: &str, to: &str| -> u64 {
        topic(t)["pairs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["publisher_node"] == from && p["subscription_node"] == to)
            .map(|p| p["count"].as_u64().unwrap())
            .sum()
    };
    let mut lines = Vec::new();
    let mut fails = Vec::new();
    let mut check = |what: &str, got: u64, want: Option<u64>| {
        lines.push(format!("  {what}: {got}{}", want.map(|w| format!(" (counted {w})")).unwrap_or_default()));
        if got == 0 || want.is_some_and(|w| w != got) {
            fails.push(format!("{what}: {got}, counted {want:?}"));
        }
    };
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    check(
        "Rust -> C++ /control/cmd_vel",
        pair("/control/cmd_vel", "/planning/planner", "/vehicle/cpp_bridge"),
        Some(n(&cpp["received"]["/control/cmd_vel"])),
    );
    check(
        "Rust -> Python /control/cmd_vel",
        pair("/control/cmd_vel", "/planning/planner", "/vehicle/interface"),
        Some(n(&py["received"]["/control/cmd_vel"])),
    );
    check(
        "C++ -> Python /vehicle/status",
        pair("/vehicle/status", "/vehicle/cpp_bridge", "/vehicle/interface"),
        Some(n(&py["received"]["/vehicle/status"])),
    );
    check("C++ -> Rust /sensing/imu", pair("/sensing/imu", "/vehicle/cpp_bridge", "/localization/fusion"), None);
    check("Python -> Rust /sensing/imu", pair("/sensing/imu", "/vehicle/interface", "/localization/fusion"), None);
    let to_cpp = pair("/sensing/imu", "/vehicle/interface", "/vehicle/cpp_bridge");
    let rust_to_cpp = pair("/sensing/imu", "/sensing/imu", "/vehicle/cpp_bridge");
    check("Python -> C++ /sensing/imu", to_cpp, None);
    check("Rust -> C++ /sensing/imu", rust_to_cpp, None);
    check("all -> C++ /sensing/imu", to_cpp + rust_to_cpp, Some(n(&cpp["received"]["/sensing/imu"])));
    for t in ["/control/cmd_vel", "/sensing/imu", "/vehicle/status"] {
        let x = topic(t);
        if x["unmatched"].as_u64() != Some(0) || x["matched"] != x["takes"] {
            fails.push(format!("{t}: {} takes, {} matched, {} unmatched", x["takes"], x["matched"], x["unmatched"]));
        }
    }
    assert_eq!(r["processes"].as_array().unwrap().len(), 4, "two Rust processes, the C++ one, the Python one");
    eprintln!("three languages, one session:\n{}", lines.join("\n"));
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}
