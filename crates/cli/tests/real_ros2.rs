//! Real ROS 2 (rclpy from PyPI wheels), traced three ways and compared.
//!
//! For each distro whose virtualenv exists (made by `tools/ros2-venvs.sh`, in
//! `$ROSTRACE_VENV_DIR`, else `/var/tmp/rostrace-ci-cache/venvs`), the rclpy system of
//! `tests/rclpy/` (talker, listener, service server and client: four processes) runs
//!
//! 1. with upstream's tracetools (`DIR/upstream-<version>/libtracetools.so`, the reference)
//!    preloaded, under an LTTng session (`ros2:*`, vpid/vtid/procname context): the oracle;
//! 2. under `rostrace record` (embedded backend);
//! 3. under `rostrace record --backend lttng`.
//!
//! The three traces must carry the same events with the same payload schema, the same counts of
//! every deterministic event (initializations; publications and takes on the test's topics;
//! requests and responses), the same names, depths and periods, handles that link the same way,
//! and `rostrace analyze` must match every message (and, on Kilted, every service call).
//! A table of every compared value goes to stderr; the test fails with the list of differences.
//!
//! The tracer is put in with `LD_PRELOAD` (as `rostrace record` does): the wheels' bootstrapper
//! re-executes Python with `LD_LIBRARY_PATH` rebuilt from a set (a random order), so a directory
//! put first in `LD_LIBRARY_PATH` wins in only about half of the runs; `LD_PRELOAD` always does.

mod common;
mod real;

use common::*;
use real::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const MESSAGES: usize = 10;
const CALLS: usize = 5;
const IDLE_SPINS: usize = 4;
/// Timers the talker destroys as soon as created (identical rcl_timer_init events: one address).
const RECREATED_TIMERS: usize = 6;
/// Their period, in ns.
const RECREATED_PERIOD: i128 = 20_000_000;
/// Timers of the system's processes (talker, listener, server, client), in ns.
const TIMER_PERIODS: [i128; 4] = [100_000_000, 50_000_000, 70_000_000, 30_000_000];
/// The timeout of each idle spin (rclpy's timeout timer), in ns.
const IDLE_PERIOD: i128 = 10_000_000;

struct Distro {
    name: &'static str,
    /// The tracetools version of the distro (upstream's build, and rcl_init's `version`).
    tracetools: &'static str,
    /// Whether the distro's tracetools has the rmw service/client events (8.5+).
    service_events: bool,
    /// `TRACETOOLS_GID_STORAGE_SIZE` (upstream's, written down here independently of rostrace's table).
    gid_size: usize,
}

const KILTED: Distro = Distro { name: "kilted", tracetools: "8.6.0", service_events: true, gid_size: 16 };
const JAZZY: Distro = Distro { name: "jazzy", tracetools: "8.2.4", service_events: false, gid_size: 24 };

#[rostrace_testkit::needs(venvs, lttng)]
#[test]
fn real_kilted() {
    real_stack(&KILTED, 0);
}

#[rostrace_testkit::needs(venvs, lttng)]
#[test]
fn real_jazzy() {
    real_stack(&JAZZY, 1);
}

// ---------------------------------------------------------------------------------------------
// Running the system

struct Setup<'a> {
    distro: &'a Distro,
    venv: PathBuf,
    ns: String,
    domain_base: u32,
}

impl Setup<'_> {
    /// The command that runs the system (to be preloaded by the caller), on `domain`.
    fn system(&self, program: &mut Command, domain: u32) {
        let py = self.venv.join("bin/python");
        program
            .arg(&py)
            .arg(repo().join("crates/cli/tests/rclpy/system.py"))
            .args(["--ns", &self.ns])
            .args(["--messages", &MESSAGES.to_string(), "--calls", &CALLS.to_string()])
            .args(["--idle-spins", &IDLE_SPINS.to_string()])
            .args(["--recreated-timers", &RECREATED_TIMERS.to_string()]);
        rclpy_env(program, self.distro.name, domain);
    }

    fn domain(&self, run: u32) -> u32 {
        self.domain_base + run
    }
}

/// Run 1: upstream's library preloaded, under an LTTng session of our own.
fn run_upstream(s: &Setup, root: &Path) -> Run {
    let lib = venv_root().join(format!("upstream-{}", s.distro.tracetools)).join("libtracetools.so");
    let (out, dir) = real::again_if_stuck("upstream", |attempt| {
        let dir = root.join(format!("upstream-{attempt}"));
        let name = format!("rostrace-real-{}-{}-{attempt}", s.distro.name, std::process::id());
        let session = LttngSession::start(&name, &dir);
        let mut cmd = Command::new("env");
        s.system(&mut cmd, s.domain(0));
        cmd.env("LD_PRELOAD", &lib);
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
        let name = format!("rostrace-real-{}-{backend}-{}-{attempt}", s.distro.name, std::process::id());
        let _session = LttngSession(name.clone());
        let mut cmd = rostrace();
        cmd.args(["record", "--backend", backend, "-s", &name, "-p"]).arg(root).arg("--");
        s.system(&mut cmd, s.domain(run));
        (cmd.output().unwrap(), root.join(&name))
    });
    let system = system_report(&out, backend);
    let (mut events, caret, mut schema, others) = read_trace(&dir, &s.ns);
    // rostrace's rclpy instrumentation adds callback events that upstream's rclpy has no
    // counterpart for: compared without them (rclpy_callbacks.rs checks them).
    events.retain(|e| !real::RCLPY_INSTRUMENTATION.contains(&e.name.as_str()));
    schema.retain(|n, _| !real::RCLPY_INSTRUMENTATION.contains(&n.as_str()));
    let label = if backend == "embedded" { "embedded" } else { "lttng" };
    Run { label, dir, events, caret, schema, others, system }
}

// ---------------------------------------------------------------------------------------------
// What is compared

/// Handle links: (event, field) must name a (target event, target field) of the same process
/// (`same_process` false: of any process, e.g. a client's GID seen by the server).
const LINKS: &[(&str, &str, &str, &str, bool)] = &[
    ("rcl_publisher_init", "node_handle", "rcl_node_init", "node_handle", true),
    ("rcl_publisher_init", "rmw_publisher_handle", "rmw_publisher_init", "rmw_publisher_handle", true),
    ("rcl_subscription_init", "node_handle", "rcl_node_init", "node_handle", true),
    ("rcl_subscription_init", "rmw_subscription_handle", "rmw_subscription_init", "rmw_subscription_handle", true),
    ("rcl_service_init", "node_handle", "rcl_node_init", "node_handle", true),
    ("rcl_client_init", "node_handle", "rcl_node_init", "node_handle", true),
    ("rcl_client_init", "rmw_client_handle", "rmw_client_init", "rmw_client_handle", true),
    ("rcl_publish", "publisher_handle", "rcl_publisher_init", "publisher_handle", true),
    ("rmw_publish", "rmw_publisher_handle", "rmw_publisher_init", "rmw_publisher_handle", true),
    ("rmw_take", "rmw_subscription_handle", "rmw_subscription_init", "rmw_subscription_handle", true),
    ("rmw_send_request", "rmw_client_handle", "rmw_client_init", "rmw_client_handle", true),
    ("rmw_take_response", "rmw_client_handle", "rmw_client_init", "rmw_client_handle", true),
    ("rmw_take_request", "rmw_service_handle", "rcl_service_init", "rmw_service_handle", true),
    ("rmw_send_response", "rmw_service_handle", "rcl_service_init", "rmw_service_handle", true),
    ("rmw_take_request", "client_gid", "rmw_client_init", "gid", false),
    ("rmw_send_response", "client_gid", "rmw_client_init", "gid", false),
];

/// The rmw service and client events, new in tracetools 8.5 (Kilted).
const RMW_SERVICE_EVENTS: &[&str] =
    &["rmw_client_init", "rmw_send_request", "rmw_take_request", "rmw_send_response", "rmw_take_response"];

/// Every compared quantity of a run, by key; `expected` holds the keys with a known value.
struct Summary {
    values: BTreeMap<String, String>,
}

fn summarize(r: &Run, d: &Distro, ns: &str) -> Summary {
    let ev = &r.events;
    let mut v = BTreeMap::new();
    let of = |n: &'static str| ev.iter().filter(move |e| e.name == n);
    // Every event name, with its count when deterministic.
    let deterministic = |n: &str| {
        n.ends_with("_init")
            || matches!(
                n,
                "rcl_take" | "rmw_send_request" | "rmw_send_response" | "rmw_take_response" | "rmw_take_request"
            )
    };
    for (n, c) in count_by(ev.iter(), |e| e.name.clone()) {
        v.insert(format!("count {n}"), if deterministic(&n) { c.to_string() } else { "present".into() });
    }
    // Payload schema.
    for (n, fields) in &r.schema {
        let s: Vec<String> = fields.iter().map(|(f, t)| format!("{f}:{t}")).collect();
        v.insert(format!("schema {n}"), s.join(", "));
    }
    // Publications and takes on the test's topics, through the handles.
    let topic_of_pub: BTreeMap<(i128, i128), String> = of("rcl_publisher_init")
        .filter_map(|e| Some(((e.vpid, e.int("publisher_handle")?), e.str("topic_name"))))
        .collect();
    let topic_of_rmw_pub: BTreeMap<(i128, i128), String> = of("rcl_publisher_init")
        .filter_map(|e| Some(((e.vpid, e.int("rmw_publisher_handle")?), e.str("topic_name"))))
        .collect();
    let topic_of_rmw_sub: BTreeMap<(i128, i128), String> = of("rcl_subscription_init")
        .filter_map(|e| Some(((e.vpid, e.int("rmw_subscription_handle")?), e.str("topic_name"))))
        .collect();
    let test_topics = [format!("{ns}/fast"), format!("{ns}/slow")];
    for t in &test_topics {
        let rcl = of("rcl_publish")
            .filter(|e| e.int("publisher_handle").and_then(|h| topic_of_pub.get(&(e.vpid, h))) == Some(t))
            .count();
        let rmw = of("rmw_publish")
            .filter(|e| e.int("rmw_publisher_handle").and_then(|h| topic_of_rmw_pub.get(&(e.vpid, h))) == Some(t))
            .count();
        let takes: Vec<&Ev> = of("rmw_take")
            .filter(|e| e.int("taken") == Some(1))
            .filter(|e| e.int("rmw_subscription_handle").and_then(|h| topic_of_rmw_sub.get(&(e.vpid, h))) == Some(t))
            .collect();
        let stamped = takes.iter().filter(|e| e.int("source_timestamp").is_some_and(|s| s != 0)).count();
        v.insert(format!("rcl_publish on {t}"), rcl.to_string());
        v.insert(format!("rmw_publish on {t}"), rmw.to_string());
        v.insert(format!("rmw_take taken on {t}"), takes.len().to_string());
        v.insert(format!("rmw_take taken on {t}, source_timestamp != 0"), stamped.to_string());
    }
    for n in ["rmw_take_request", "rmw_take_response"] {
        if ev.iter().any(|e| e.name == n) {
            v.insert(format!("{n} taken"), of_name(ev, n).filter(|e| e.int("taken") == Some(1)).count().to_string());
        }
    }
    // Names, depths, periods, versions.
    v.insert("rcl_init version".into(), multiset(of("rcl_init").map(|e| e.str("version"))));
    v.insert(
        "nodes".into(),
        multiset(of("rcl_node_init").map(|e| format!("{}/{}", e.str("namespace"), e.str("node_name")))),
    );
    v.insert(
        "publishers (topic depth)".into(),
        multiset(of("rcl_publisher_init").map(|e| format!("{} {}", e.str("topic_name"), e.str("queue_depth")))),
    );
    v.insert(
        "subscriptions (topic depth)".into(),
        multiset(of("rcl_subscription_init").map(|e| format!("{} {}", e.str("topic_name"), e.str("queue_depth")))),
    );
    v.insert("services".into(), multiset(of("rcl_service_init").map(|e| e.str("service_name"))));
    v.insert("clients".into(), multiset(of("rcl_client_init").map(|e| e.str("service_name"))));
    v.insert("timer periods".into(), multiset(of("rcl_timer_init").map(|e| e.str("period"))));
    v.insert(
        "gid sizes".into(),
        multiset(ev.iter().filter_map(|e| match e.get("gid") {
            Some(Val::Ints(g)) => Some(format!("{} {}", e.name, g.len())),
            _ => None,
        })),
    );
    // Handle links.
    for (from, field, to, tfield, same) in LINKS {
        if !d.service_events && (RMW_SERVICE_EVENTS.contains(from) || RMW_SERVICE_EVENTS.contains(to)) {
            continue; // no rmw service/client events before tracetools 8.5
        }
        let sources: Vec<&Ev> = ev.iter().filter(|e| e.name == *from).collect();
        if sources.is_empty() {
            continue;
        }
        let targets: BTreeSet<(i128, Val)> = ev
            .iter()
            .filter(|e| e.name == *to)
            .filter_map(|e| Some((if *same { e.vpid } else { 0 }, e.get(tfield)?.clone())))
            .collect();
        let linked = sources
            .iter()
            .filter(|e| e.get(field).is_some_and(|x| targets.contains(&(if *same { e.vpid } else { 0 }, x.clone()))))
            .count();
        // Counts are compared above (where deterministic): here, whether every one links.
        let shape = if linked == sources.len() { "all".to_string() } else { format!("{linked}/{}", sources.len()) };
        v.insert(format!("link {from}.{field} -> {to}"), shape);
    }
    Summary { values: v }
}

/// What the analysis says about the test's topics and service.
fn analysis(r: &Run, d: &Distro, ns: &str, root: &Path) -> BTreeMap<String, String> {
    let json = root.join(format!("{}.json", r.label));
    let out = rostrace().arg("analyze").arg(&r.dir).arg("--json").arg(&json).output().unwrap();
    assert!(out.status.success(), "analyze {}: {}", r.label, String::from_utf8_lossy(&out.stderr));
    let a: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let mut v = BTreeMap::new();
    for t in ["fast", "slow"] {
        let name = format!("{ns}/{t}");
        let topic = a["topics"].as_array().and_then(|ts| ts.iter().find(|x| x["name"] == name.as_str()));
        for k in ["publishes", "takes", "matched", "unmatched", "by_source_timestamp"] {
            let val = topic.map(|x| x[k].to_string()).unwrap_or_else(|| "(no topic)".into());
            v.insert(format!("analyze {name} {k}"), val);
        }
    }
    if d.service_events {
        let name = format!("{ns}/toggle");
        let s = a["services"].as_array().and_then(|ss| ss.iter().find(|x| x["name"] == name.as_str()));
        for k in ["requests_sent", "requests_served", "responses_received", "requests_matched", "responses_matched"] {
            let val = s.map(|x| x[k].to_string()).unwrap_or_else(|| "(no service)".into());
            v.insert(format!("analyze {name} {k}"), val);
        }
    }
    v
}

/// The values known in advance (from the system's design and its own counts).
fn expected(d: &Distro, ns: &str) -> BTreeMap<String, String> {
    let mut e = BTreeMap::new();
    let n = MESSAGES.to_string();
    let m = CALLS.to_string();
    e.insert("rcl_init version".into(), format!("{} x4", d.tracetools));
    e.insert("count rcl_init".into(), "4".into());
    e.insert("count rcl_node_init".into(), "5".into());
    e.insert("count rcl_timer_init".into(), (TIMER_PERIODS.len() + IDLE_SPINS + RECREATED_TIMERS).to_string());
    let mut periods: Vec<String> = TIMER_PERIODS.iter().map(|p| p.to_string()).collect();
    periods.extend((0..IDLE_SPINS).map(|_| IDLE_PERIOD.to_string()));
    periods.extend((0..RECREATED_TIMERS).map(|_| RECREATED_PERIOD.to_string()));
    e.insert("timer periods".into(), multiset(periods.into_iter()));
    e.insert("count rcl_take".into(), (2 * MESSAGES).to_string());
    e.insert("subscriptions (topic depth)".into(), format!("{ns}/fast 7, {ns}/slow 3"));
    e.insert("clients".into(), format!("{ns}/toggle"));
    for t in ["fast", "slow"] {
        let t = format!("{ns}/{t}");
        for k in ["rcl_publish on", "rmw_publish on", "rmw_take taken on"] {
            e.insert(format!("{k} {t}"), n.clone());
        }
        // Jazzy and Kilted carry the source timestamp of each message.
        e.insert(format!("rmw_take taken on {t}, source_timestamp != 0"), n.clone());
        for (k, val) in [("publishes", &n), ("takes", &n), ("matched", &n), ("unmatched", &"0".to_string())] {
            e.insert(format!("analyze {t} {k}"), val.clone());
        }
        e.insert(format!("analyze {t} by_source_timestamp"), n.clone());
    }
    if d.service_events {
        for k in ["count rmw_send_request", "count rmw_take_response", "count rmw_send_response"] {
            e.insert(k.into(), m.clone());
        }
        e.insert("rmw_take_request taken".into(), m.clone());
        e.insert("rmw_take_response taken".into(), m.clone());
        for k in ["requests_sent", "requests_served", "responses_received", "requests_matched", "responses_matched"] {
            e.insert(format!("analyze {ns}/toggle {k}"), m.clone());
        }
    }
    let gid = d.gid_size;
    let mut gids = vec![format!("rmw_publisher_init {gid}"), format!("rmw_subscription_init {gid}")];
    if d.service_events {
        gids.push(format!("rmw_client_init {gid}"));
    }
    gids.sort();
    // Every gid of the distro's size (the counts are compared between the traces).
    e.insert("gid sizes (all)".into(), gids.join(", "));
    e
}

fn real_stack(d: &Distro, index: u32) {
    let venv = venv_root().join(d.name);
    let upstream = venv_root().join(format!("upstream-{}", d.tracetools)).join("libtracetools.so");
    let have_venv = venv.join("bin/python").exists() && venv.join(".rostrace-complete").exists();
    if !require(have_venv, &format!("the {} virtualenv ({}; tools/ros2-venvs.sh makes it)", d.name, venv.display())) {
        return;
    }
    if !require(upstream.exists(), &format!("upstream tracetools {} ({})", d.tracetools, upstream.display())) {
        return;
    }
    if !require(have_lttng(), "LTTng (lttng-tools)") {
        return;
    }
    // One LTTng test at a time; this one also keeps its three runs apart from the other distro's.
    let _lttng = lttng_lock();
    let root = TempDir::new(&format!("real-{}", d.name));
    let pid = std::process::id();
    let ns = format!("/rostrace_{}_{pid}", d.name);
    // Domains 1..=100 (clear of the ports of higher ids), 3 consecutive ones per distro.
    let domain_base = 1 + (pid * 7 + index * 3) % 98;
    let s = Setup { distro: d, venv, ns: ns.clone(), domain_base };
    let t0 = std::time::Instant::now();
    let runs = [run_upstream(&s, &root), run_rostrace(&s, &root, "embedded", 1), run_rostrace(&s, &root, "lttng", 2)];
    let recorded = t0.elapsed();

    // The system did its part each time (it exits 1 otherwise).
    for r in &runs {
        for p in r.system["processes"].as_array().unwrap() {
            if let Some(pubd) = p.get("published") {
                assert_eq!(pubd["fast"], MESSAGES, "{}: {p}", r.label);
                assert_eq!(pubd["slow"], MESSAGES, "{}: {p}", r.label);
            }
            if let Some(t) = p.get("taken") {
                assert_eq!(t["fast"], MESSAGES, "{}: {p}", r.label);
                assert_eq!(t["slow"], MESSAGES, "{}: {p}", r.label);
            }
        }
    }

    let sums: Vec<BTreeMap<String, String>> = runs
        .iter()
        .map(|r| {
            let mut v = summarize(r, d, &ns).values;
            v.extend(analysis(r, d, &ns, &root));
            let gids = v.get("gid sizes").cloned().unwrap_or_default();
            // "rmw_publisher_init 16 x5, ..." -> the kinds without counts.
            let kinds: Vec<String> =
                gids.split(", ").filter(|s| !s.is_empty()).map(|s| s.split(" x").next().unwrap().to_string()).collect();
            v.insert("gid sizes (all)".into(), kinds.join(", "));
            v
        })
        .collect();
    let expect = expected(d, &ns);

    // The table, and the differences.
    let mut table = String::new();
    table += &format!(
        "\n=== real ROS 2 {} (tracetools {}; {} s for the three runs; events kept/other processes: {})\n",
        d.name,
        d.tracetools,
        recorded.as_secs(),
        runs.iter().map(|r| format!("{} {}/{}", r.label, r.events.len(), r.others)).collect::<Vec<_>>().join(", ")
    );
    let labels: Vec<&str> = runs.iter().map(|r| r.label).collect();
    let (lines, mut failures) = compare_runs(d.name, &labels, &sums, &expect);
    table += &lines;
    // CARET's hooked events, in rostrace's traces only (upstream's library has no hooks).
    assert!(runs[0].caret.is_empty(), "upstream's trace has ros2_caret events");
    for r in &runs[1..] {
        let (lines, bad) = caret_check(r, d, &ns);
        table += &lines;
        failures.extend(bad);
    }
    eprintln!("{table}");
    if !failures.is_empty() {
        eprintln!("=== {} differences ({}):", d.name, failures.len());
        for f in &failures {
            eprintln!("  {f}");
        }
    }
    assert!(
        failures.is_empty(),
        "{} difference(s) for {}, see the table above:\n{}",
        failures.len(),
        d.name,
        failures.join("\n")
    );
}

/// CARET's events in a rostrace trace of the system: per process one `caret_init` (the distro)
/// and one `rmw_implementation` (`rmw_fastrtps_cpp`); per publication on the test's topics one
/// `dds_bind_addr_to_stamp` (the next on the publishing thread after its `rcl_publish`, from the
/// Fast DDS hook) whose `source_stamp` equals its `rmw_publish` timestamp and the
/// `source_timestamp` of the subscriber's `rmw_take` of that message, every one.
/// Returns the table lines and the failures.
fn caret_check(r: &Run, d: &Distro, ns: &str) -> (String, Vec<String>) {
    let mut fails = Vec::new();
    let mut lines = format!("   CARET events ({}):\n", r.label);
    let pids: BTreeSet<i128> = r.events.iter().map(|e| e.vpid).collect();
    for (event, field, want) in [
        ("ros2_caret:caret_init", "distribution", d.name),
        ("ros2_caret:rmw_implementation", "rmw_impl", "rmw_fastrtps_cpp"),
    ] {
        for p in &pids {
            let got: Vec<String> =
                r.caret.iter().filter(|e| e.name == event && e.vpid == *p).map(|e| e.str(field)).collect();
            if got != [want] {
                fails.push(format!(
                    "{}: {}: process {p}: {event} {field} {got:?}, expected one {want:?}",
                    d.name, r.label
                ));
            }
        }
        lines += &format!(
            "      {event}: {} processes of {}\n",
            pids.len(),
            r.caret.iter().filter(|e| e.name == event).count()
        );
    }
    // The trace in order, with the CARET events back in place (both lists keep trace order, and
    // are merged by thread below: only the order within a thread matters).
    let topic_of_pub: BTreeMap<(i128, i128), String> = r
        .events
        .iter()
        .filter(|e| e.name == "rcl_publisher_init")
        .filter_map(|e| Some(((e.vpid, e.int("publisher_handle")?), e.str("topic_name"))))
        .collect();
    let topic_of_rmw_sub: BTreeMap<(i128, i128), String> = r
        .events
        .iter()
        .filter(|e| e.name == "rcl_subscription_init")
        .filter_map(|e| Some(((e.vpid, e.int("rmw_subscription_handle")?), e.str("topic_name"))))
        .collect();
    let dir_events = thread_order(&r.dir, &pids);
    for t in ["fast", "slow"] {
        let topic = format!("{ns}/{t}");
        // Per thread: after an rcl_publish on the topic, its rmw_publish and the next bind.
        let mut stamps: Vec<(i128, Option<i128>)> = Vec::new(); // (bind stamp, rmw_publish timestamp)
        let mut missing = 0;
        for evs in dir_events.values() {
            let mut i = 0;
            while i < evs.len() {
                let e = &evs[i];
                if e.name == "rcl_publish"
                    && e.int("publisher_handle").and_then(|h| topic_of_pub.get(&(e.vpid, h))) == Some(&topic)
                {
                    let rest = &evs[i + 1..];
                    let next_pub = rest.iter().position(|x| x.name == "rcl_publish").unwrap_or(rest.len());
                    let rmw =
                        rest[..next_pub].iter().find(|x| x.name == "rmw_publish").and_then(|x| x.int("timestamp"));
                    match rest[..next_pub].iter().find(|x| x.name == "ros2_caret:dds_bind_addr_to_stamp") {
                        Some(b) => stamps.push((b.int("source_stamp").unwrap_or(-1), rmw)),
                        None => missing += 1,
                    }
                }
                i += 1;
            }
        }
        let mut takes: Vec<i128> = r
            .events
            .iter()
            .filter(|e| e.name == "rmw_take" && e.int("taken") == Some(1))
            .filter(|e| {
                e.int("rmw_subscription_handle").and_then(|h| topic_of_rmw_sub.get(&(e.vpid, h))) == Some(&topic)
            })
            .filter_map(|e| e.int("source_timestamp"))
            .collect();
        takes.sort();
        let mut binds: Vec<i128> = stamps.iter().map(|s| s.0).collect();
        binds.sort();
        let rmw_equal = stamps.iter().filter(|(b, rmw)| Some(*b) == *rmw).count();
        lines += &format!(
            "      {topic}: {} publications bound, {missing} without a bind, {rmw_equal} equal to rmw_publish's timestamp, {} takes, bind stamps == take stamps: {}\n",
            stamps.len(),
            takes.len(),
            binds == takes
        );
        if stamps.len() != MESSAGES || missing != 0 || rmw_equal != MESSAGES || binds != takes {
            fails.push(format!(
                "{}: {}: {topic}: {} binds ({missing} publications without), {rmw_equal} equal to rmw_publish, bind stamps {binds:?} vs take source timestamps {takes:?}",
                d.name,
                r.label,
                stamps.len()
            ));
        }
    }
    (lines, fails)
}

// ---------------------------------------------------------------------------------------------
// Which libtracetools.so a wheel-installed rclpy uses

/// The libtracetools.so files mapped into a Python that imported rclpy, under `env`.
fn mapped_tracetools(venv: &Path, env: &[(&str, String)]) -> Vec<String> {
    let mut cmd = Command::new(venv.join("bin/python"));
    cmd.args([
        "-c",
        "import rclpy\nprint('\\n'.join(sorted({l.split()[-1] for l in open('/proc/self/maps') if 'libtracetools' in l})))",
    ]);
    cmd.env_remove("LD_PRELOAD").env_remove("LD_LIBRARY_PATH").env_remove("_ROS_WHEELS_BOOTSTRAP_COMPLETE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect()
}

/// `LD_PRELOAD` of rostrace's library replaces the wheel's libtracetools.so (the preloaded
/// library's SONAME `libtracetools.so` satisfies librcl's dependency: the wheel's library is not
/// loaded at all); so does `LD_LIBRARY_PATH` with `_ROS_WHEELS_BOOTSTRAP_COMPLETE=1` and the
/// wheels' directories spelled out (the bootstrapper then leaves the path as it is).
fn library_resolution(d: &Distro) {
    let venv = venv_root().join(d.name);
    if !require(venv.join(".rostrace-complete").exists(), &format!("the {} virtualenv ({})", d.name, venv.display())) {
        return;
    }
    let lib = PathBuf::from(env!("CARGO_BIN_EXE_rostrace")).parent().unwrap().join("deps/libtracetools.so");
    assert!(lib.exists(), "{}", lib.display());
    let lib = lib.canonicalize().unwrap().to_string_lossy().into_owned();
    let dir = Path::new(&lib).parent().unwrap().to_string_lossy().into_owned();
    let site = std::fs::read_dir(venv.join("lib"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("site-packages"))
        .find(|p| p.is_dir())
        .expect("site-packages");
    let mut path = vec![dir, venv.join("lib").to_string_lossy().into_owned()];
    let mut libs: Vec<String> = std::fs::read_dir(&site)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.is_dir()
                && p.file_name().unwrap().to_string_lossy().starts_with("ros_")
                && p.extension().is_some_and(|x| x == "libs")
        })
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    libs.sort();
    path.extend(libs);
    let preload = mapped_tracetools(&venv, &[("LD_PRELOAD", lib.clone())]);
    let explicit = mapped_tracetools(
        &venv,
        &[("_ROS_WHEELS_BOOTSTRAP_COMPLETE", "1".into()), ("LD_LIBRARY_PATH", path.join(":"))],
    );
    eprintln!("{}: LD_PRELOAD maps {preload:?}; bootstrap-complete LD_LIBRARY_PATH maps {explicit:?}", d.name);
    let mut failures = Vec::new();
    if explicit != [lib.clone()] {
        failures.push(format!("LD_LIBRARY_PATH with _ROS_WHEELS_BOOTSTRAP_COMPLETE=1 maps {explicit:?}"));
    }
    if preload != [lib.clone()] {
        failures.push(format!("LD_PRELOAD maps {preload:?}, not rostrace's library alone (its SONAME?)"));
    }
    assert!(failures.is_empty(), "{}: {}", d.name, failures.join("; "));
}

#[rostrace_testkit::needs(venvs)]
#[test]
fn library_resolution_kilted() {
    library_resolution(&KILTED);
}

#[rostrace_testkit::needs(venvs)]
#[test]
fn library_resolution_jazzy() {
    library_resolution(&JAZZY);
}

// ---------------------------------------------------------------------------------------------
// Interoperation: the demo's Rust nodes (ros2-client over RustDDS) and an rclpy node (Fast DDS)

#[rostrace_testkit::needs(venvs)]
#[test]
fn interop_kilted() {
    interop(&KILTED, 0);
}

#[rostrace_testkit::needs(venvs)]
#[test]
fn interop_jazzy() {
    interop(&JAZZY, 1);
}

/// `rostrace demo -- python crates/demo/python/vehicle_interface.py`: the rclpy node takes the
/// planner's commands (Rust → Python) and publishes an IMU, periodically and on each command, that
/// the fusion node takes (Python → Rust), all traced in one session; its callbacks are in the
/// analysis with their owners, and `paths`/`e2e` find the path planner → rclpy node → fusion; every take, on both sides, is matched to its publish by
/// source timestamp, and the flows across the two implementations are the counts each side made.
fn interop(d: &Distro, index: u32) {
    let venv = venv_root().join(d.name);
    let have_venv = venv.join("bin/python").exists() && venv.join(".rostrace-complete").exists();
    if !require(have_venv, &format!("the {} virtualenv ({}; tools/ros2-venvs.sh makes it)", d.name, venv.display())) {
        return;
    }
    let tmp = TempDir::new(&format!("interop-{}", d.name));
    let (dir, json) = (tmp.join("trace"), tmp.join("analysis.json"));
    // A domain of its own (101..=160, clear of the other tests').
    let domain = 101 + (std::process::id() * 5 + index * 31) % 60;
    warm_rclpy(&venv.join("bin/python"));
    let mut cmd = rostrace();
    cmd.args(["demo", "--duration", "4", "--distro", d.name, "--domain", &domain.to_string(), "-o"])
        .arg(&dir)
        .arg("--json")
        .arg(&json)
        .arg("--")
        .arg(venv.join("bin/python"))
        .arg(repo().join("crates/demo/python/vehicle_interface.py"));
    fastdds_env(&mut cmd, d.name);
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: demo with rclpy failed: {}\n{stdout}\n{stderr}", d.name, out.status);
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let tallies: Vec<rostrace_demo::Tally> =
        serde_json::from_slice(&std::fs::read(dir.join("demo-counts.json")).unwrap()).unwrap();
    let vehicle = tallies.iter().find(|t| t.process == "vehicle_interface").unwrap_or_else(|| {
        panic!("{}: the rclpy node's counts are not in demo-counts.json: {tallies:?}\n{stdout}", d.name)
    });
    let got_cmds = vehicle.received["/control/cmd_vel"];
    let sent_imu = vehicle.published["/sensing/imu"];
    assert!(got_cmds > 0 && sent_imu > 0, "{}: the rclpy node exchanged nothing: {vehicle:?}", d.name);
    let sum = |pick: fn(&rostrace_demo::Tally) -> &BTreeMap<String, u64>, topic: &str| -> u64 {
        tallies.iter().filter_map(|t| pick(t).get(topic)).sum()
    };

    // Three processes, the rclpy one with its node, traced with the distro's version.
    assert_eq!(r["processes"].as_array().unwrap().len(), 3, "{}", d.name);
    assert!(r["nodes"].as_array().unwrap().iter().any(|n| n["name"] == "/vehicle/interface"), "{}", d.name);
    let topic = |name: &str| {
        r["topics"].as_array().unwrap().iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("{name}")).clone()
    };
    let pair = |t: &serde_json::Value, from: &str, to: &str| -> u64 {
        t["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["publisher_node"] == from && p["subscription_node"] == to)
            .map(|p| p["count"].as_u64().unwrap())
            .sum()
    };
    for name in ["/control/cmd_vel", "/sensing/imu"] {
        let t = topic(name);
        let takes = sum(|t| &t.received, name);
        assert_eq!(t["publishes"].as_u64(), Some(sum(|t| &t.published, name)), "{}: {name}: {t:#}", d.name);
        assert_eq!(t["takes"].as_u64(), Some(takes), "{}: {name}: {t:#}", d.name);
        assert_eq!(t["matched"].as_u64(), Some(takes), "{}: {name}: {t:#}", d.name);
        assert_eq!(t["by_source_timestamp"].as_u64(), Some(takes), "{}: {name}: {t:#}", d.name);
        assert_eq!(t["unmatched"].as_u64(), Some(0), "{}: {name}: {t:#}", d.name);
    }
    // Rust → Python: every command the rclpy node received is a flow from the planner.
    assert_eq!(pair(&topic("/control/cmd_vel"), "/planning/planner", "/vehicle/interface"), got_cmds, "{}", d.name);
    // Python → Rust: the fusion node took the rclpy IMU's messages beside the Rust IMU's.
    let imu = topic("/sensing/imu");
    let from_python = pair(&imu, "/vehicle/interface", "/localization/fusion");
    let from_rust = pair(&imu, "/sensing/imu", "/localization/fusion");
    assert!(from_python > 0 && from_rust > 0, "{}: {imu:#}", d.name);
    assert_eq!(from_python + from_rust, sum(|t| &t.received, "/sensing/imu"), "{}: {imu:#}", d.name);
    assert!(from_python <= sent_imu, "{}: {imu:#}", d.name);
    assert_eq!(r["flows_unmatched"].as_u64(), Some(0), "{}", d.name);
    // The rclpy node's callbacks (rostrace's rclpy instrumentation): owned by its node, each run
    // once per message it received or IMU it published.
    let callback = |name: &str| {
        r["callbacks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["node"] == "/vehicle/interface" && c["symbol"].as_str().is_some_and(|s| s.contains(name)))
            .unwrap_or_else(|| panic!("{}: no callback {name} of /vehicle/interface", d.name))
            .clone()
    };
    let (on_cmd, on_timer) = (callback("on_cmd"), callback("on_timer"));
    assert_eq!((on_cmd["kind"].as_str(), on_cmd["topic"].as_str()), (Some("subscription"), Some("/control/cmd_vel")));
    assert_eq!(on_cmd["count"].as_u64(), Some(got_cmds), "{}: {on_cmd:#}", d.name);
    assert_eq!((on_timer["kind"].as_str(), on_timer["timer_period_ns"].as_i64()), (Some("timer"), Some(20_000_000)));
    // Each run of either publishes one IMU message: the timer's and one per command applied.
    assert_eq!(
        on_timer["count"].as_u64().map(|n| n + got_cmds),
        Some(sent_imu),
        "{}: {on_timer:#}\n{on_cmd:#}",
        d.name
    );

    // A path Rust -> Python -> Rust: the planner's command, the rclpy node's IMU published in
    // the command's callback, taken by the fusion node.
    let json_of = |args: &[&str]| -> serde_json::Value {
        let out = rostrace().args(args).args(["--json", "-"]).arg(&dir).output().unwrap();
        assert!(out.status.success(), "{}: {args:?}: {}", d.name, String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let p = json_of(&[
        "paths",
        "--from",
        "/planning/planner",
        "--to",
        "/localization/fusion",
        "--through",
        "/vehicle/interface",
    ]);
    let through = p["paths"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["path"]["topics"] == serde_json::json!(["/control/cmd_vel", "/sensing/imu"]))
        .unwrap_or_else(|| panic!("{}: no path planner -> vehicle interface -> fusion: {p:#}", d.name));
    let lat = &through["latency"];
    assert!(lat["count"].as_u64().unwrap_or(0) > 0, "{}: {through:#}", d.name);
    // Nodes only: `/sensing/imu` names the Rust IMU node as well as the topic, and each pair of
    // these nodes has one topic between them.
    const PATH: &str = "/planning/planner,/vehicle/interface,/localization/fusion";
    let e = json_of(&["e2e", "--path", PATH]);
    let e2e = &e["latency"];
    let complete = e["complete"].as_u64().unwrap_or(0);
    // Every complete instance is a command the rclpy node applied and passed on.
    assert!(complete > 0 && complete <= got_cmds, "{}: e2e {PATH}: {e:#}", d.name);
    assert_eq!(e2e["count"].as_u64(), Some(complete), "{}: {e:#}", d.name);
    // The path `paths` found is this one: the same messages went the whole way.
    assert_eq!(lat["count"], e2e["count"], "{}: paths {lat} e2e {e2e}", d.name);
    for i in e["instances"].as_array().unwrap() {
        let sum: i64 = i["segments_ns"].as_array().unwrap().iter().filter_map(|x| x.as_i64()).sum();
        if let Some(l) = i["latency_ns"].as_i64() {
            assert!(l > 0 && sum == l, "{}: instance {i}", d.name);
        }
    }
    eprintln!(
        "{}: interop: {got_cmds} commands Rust -> rclpy, {from_python} of {sent_imu} IMU messages rclpy -> Rust, all matched; \
         rclpy callbacks on_cmd {} runs, on_timer {} runs; path planner -> rclpy -> fusion: paths latency {}, e2e {complete} \
         complete, latency min {} mean {} max {} ns",
        d.name,
        on_cmd["count"],
        on_timer["count"],
        lat,
        e2e["min"],
        e2e["mean"],
        e2e["max"],
    );
}
