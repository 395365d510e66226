//! rclpy's callbacks, traced by rostrace's instrumentation (`python/rostrace/rclpy.py`, loaded by
//! `rostrace record` into every Python it runs), on the real Jazzy and Kilted wheels, both backends.
//!
//! The system (`tests/rclpy/callbacks.py`: two processes; timers of two periods, subscriptions,
//! a service, a client, MultiThreadedExecutors with two callback groups, a coroutine callback
//! awaiting a service call, spin_until_future_complete and spin_once on a SingleThreadedExecutor)
//! counts how many times each of its callbacks ran. The trace must have, per callback, that many
//! callback_start/callback_end pairs; `rostrace analyze` must link each callback to its node and
//! its topic, timer period, service or client; and every message between the two processes must
//! be matched to the callback that took it. `ROSTRACE_RCLPY=0` records none of these events.

mod common;
mod real;

use common::*;
use real::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const MESSAGES: u64 = 30;
const CALLS: u64 = 5;

fn record(
    distro: &str,
    backend: &str,
    ns: &str,
    domain: u32,
    root: &Path,
    off: bool,
) -> (std::path::PathBuf, serde_json::Value) {
    let venv = venv_root().join(distro);
    let name = format!("rclpy-cb-{distro}-{backend}-{}-{}", std::process::id(), off as u8);
    let _session = LttngSession(name.clone());
    let mut cmd = rostrace();
    cmd.args(["record", "--backend", backend, "-s", &name, "-p"]).arg(root).arg("--");
    cmd.arg(venv.join("bin/python")).arg(repo().join("crates/cli/tests/rclpy/callbacks.py")).args([
        "--ns",
        ns,
        "--messages",
        &MESSAGES.to_string(),
        "--calls",
        &CALLS.to_string(),
    ]);
    rclpy_env(&mut cmd, distro, domain);
    cmd.env_remove("PYTHONPATH");
    if off {
        cmd.env("ROSTRACE_RCLPY", "0");
    } else {
        cmd.env_remove("ROSTRACE_RCLPY");
    }
    let out = cmd.output().unwrap();
    (root.join(&name), system_report(&out, &format!("{distro} {backend}")))
}

/// The short name of a registered symbol: `role_main.<locals>.on_fast /path:12` gives
/// `on_fast`, the client's `rclpy.client.Client response /ns/add` gives `client`.
fn short(symbol: &str) -> String {
    if symbol.starts_with("rclpy.client.Client response") {
        return "client".into();
    }
    let first = symbol.split(' ').next().unwrap_or("");
    first.rsplit('.').next().unwrap_or(first).to_string()
}

/// The process of each role (from its node in namespace `ns`), and the callbacks registered,
/// per (vpid, address): their short names.
#[allow(clippy::type_complexity)]
fn registrations(events: &[Ev], ns: &str) -> (BTreeMap<String, i128>, BTreeMap<(i128, i128), String>) {
    let vpid_of = events
        .iter()
        .filter(|e| e.name == "rcl_node_init" && e.str("namespace") == ns)
        .map(|e| (e.str("node_name"), e.vpid))
        .collect();
    let names = events
        .iter()
        .filter(|e| e.name == "rclcpp_callback_register")
        .filter_map(|e| Some(((e.vpid, e.int("callback")?), short(&e.str("symbol")))))
        .collect();
    (vpid_of, names)
}

fn check(distro: &str, backend: &str, index: u32) {
    if rclpy_venv(distro).is_none() {
        return;
    }
    if backend == "lttng" && !require(have_lttng(), "LTTng (lttng-tools)") {
        return;
    }
    let _lttng = lttng_lock();
    let root = TempDir::new(&format!("rclpy-cb-{distro}-{backend}"));
    let pid = std::process::id();
    let ns = format!("/rclpy_cb_{distro}_{pid}");
    // Domains of the real-stack tests (1..=100): like theirs, these runs hold the LTTng lock.
    let domain = 1 + (pid * 7 + 50 + index * 3) % 98;
    let (dir, system) = record(distro, backend, &ns, domain, &root, false);
    let (events, _, _, _) = read_trace(&dir, &ns);
    let mut failures: Vec<String> = Vec::new();
    let (vpid_of, names) = registrations(&events, &ns);
    let mut starts: BTreeMap<(i128, i128), u64> = BTreeMap::new();
    let mut ends: BTreeMap<(i128, i128), u64> = BTreeMap::new();
    for e in &events {
        let m = match e.name.as_str() {
            "callback_start" => &mut starts,
            "callback_end" => &mut ends,
            _ => continue,
        };
        *m.entry((e.vpid, e.int("callback").unwrap())).or_default() += 1;
    }
    for k in starts.keys().chain(ends.keys()) {
        if !names.contains_key(k) {
            failures.push(format!("callback {k:?} runs but was never registered"));
        }
    }
    let analysis = analyze_json(&[], &[&dir]);
    let callbacks = analysis["callbacks"].as_array().unwrap();
    let mut table = format!("\n=== rclpy callbacks, {distro}, {backend}\n");
    for p in system["processes"].as_array().unwrap() {
        let role = p["role"].as_str().unwrap();
        let Some(&vpid) = vpid_of.get(role) else {
            failures.push(format!("{role}: no rcl_node_init"));
            continue;
        };
        for (cb, ran) in p["runs"].as_object().unwrap() {
            let ran = ran.as_u64().unwrap();
            let addr: Vec<i128> =
                names.iter().filter(|((v, _), n)| *v == vpid && *n == cb).map(|((_, a), _)| *a).collect();
            let [addr] = addr[..] else {
                failures.push(format!("{role}.{cb}: {} callbacks registered under that name", addr.len()));
                continue;
            };
            let (s, e) =
                (starts.get(&(vpid, addr)).copied().unwrap_or(0), ends.get(&(vpid, addr)).copied().unwrap_or(0));
            // What the analysis says about it: owner node and what it belongs to.
            let a = callbacks
                .iter()
                .find(|c| c["vpid"].as_i64() == Some(vpid as i64) && c["address"].as_i64() == Some(addr as i64));
            let (node, kind, owner) = a.map_or(("-".to_string(), "-".to_string(), "-".to_string()), |c| {
                (
                    c["node"].as_str().unwrap_or("").to_string(),
                    c["kind"].as_str().unwrap_or("").to_string(),
                    c["topic"].as_str().map(str::to_string).unwrap_or_else(|| c["timer_period_ns"].to_string()),
                )
            });
            let runs = a.map_or(0, |c| c["count"].as_u64().unwrap_or(0));
            table += &format!("  {role:<6} {cb:<8} ran {ran:>3}  start {s:>3} end {e:>3}  analyze {runs:>3} runs  {node} {kind} {owner}\n");
            if s != ran || e != ran || runs != ran {
                failures.push(format!(
                    "{role}.{cb}: ran {ran} times, {s} callback_start, {e} callback_end, {runs} runs analyzed"
                ));
            }
            let expect = match (role, cb.as_str()) {
                ("alpha", "on_fast") => ("timer", "20000000".to_string()),
                ("alpha", "on_slow") => ("timer", "50000000".to_string()),
                ("alpha", "add") => ("service", format!("{ns}/add")),
                ("alpha", "on_echo") => ("subscription", format!("{ns}/echo")),
                ("beta", "on_fast") => ("subscription", format!("{ns}/fast")),
                ("beta", "on_slow") => ("subscription", format!("{ns}/slow")),
                ("beta", "client") => ("client", format!("{ns}/add")),
                _ => ("?", String::new()),
            };
            if (node.as_str(), kind.as_str(), owner.as_str())
                != (format!("{ns}/{role}").as_str(), expect.0, expect.1.as_str())
            {
                failures.push(format!(
                    "{role}.{cb}: analyzed as {node} {kind} {owner}, expected {ns}/{role} {} {}",
                    expect.0, expect.1
                ));
            }
        }
    }
    // Every message between the processes is matched to the callback that took it.
    let sent = |role: &str, what: &str, topic: &str| -> u64 {
        system["processes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["role"] == role)
            .map_or(0, |p| p[what][topic].as_u64().unwrap_or(0))
    };
    for (topic, from, to) in [("fast", "alpha", "beta"), ("slow", "alpha", "beta"), ("echo", "beta", "alpha")] {
        let name = format!("{ns}/{topic}");
        let t = analysis["topics"].as_array().unwrap().iter().find(|t| t["name"] == name.as_str());
        let Some(t) = t else {
            failures.push(format!("{name}: not in the analysis"));
            continue;
        };
        let (published, taken) = (sent(from, "published", topic), sent(to, "taken", topic));
        let to_callback = t["pub_to_callback_ns"]["count"].as_u64().unwrap_or(0);
        table += &format!(
            "  {name}: published {published}, taken {taken}; analyze: publishes {} takes {} matched {} to a callback {to_callback}\n",
            t["publishes"], t["takes"], t["matched"]
        );
        if t["publishes"].as_u64() != Some(published)
            || t["takes"].as_u64() != Some(taken)
            || t["matched"].as_u64() != Some(taken)
            || to_callback != taken
            || taken == 0
        {
            failures.push(format!("{name}: published {published}, taken {taken}: {t}"));
        }
    }
    // Only node timers are listed: the executors' timeout timers are not a node's.
    for n in
        analysis["nodes"].as_array().unwrap().iter().filter(|n| n["name"].as_str().is_some_and(|x| x.starts_with(&ns)))
    {
        let want: &[i64] = if n["name"] == format!("{ns}/alpha").as_str() { &[20_000_000, 50_000_000] } else { &[] };
        let got: Vec<i64> = n["timers_ns"].as_array().unwrap().iter().filter_map(|x| x.as_i64()).collect();
        if got != want {
            failures.push(format!("{}: timers {got:?}, expected {want:?}", n["name"]));
        }
    }
    // The export's timer table too: the timeout timers of every spin_once(timeout) are left out.
    let csv = root.join(format!("csv-{backend}"));
    let out =
        rostrace().args(["export", "--format", "csv", "--events", "none", "-o"]).arg(&csv).arg(&dir).output().unwrap();
    assert!(out.status.success(), "export: {}", String::from_utf8_lossy(&out.stderr));
    let timers =
        std::fs::read_dir(csv.join("timers")).unwrap().filter_map(|e| e.ok()).next().expect("timers table").path();
    let text = std::fs::read_to_string(&timers).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap_or_else(|| panic!("{n} in {header:?}"));
    let (vpid_col, node_col, period_col) = (col("vpid"), col("node"), col("period_ns"));
    let ours: BTreeSet<String> = vpid_of.values().map(|v| v.to_string()).collect();
    let mut listed: Vec<String> = lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|r| ours.contains(r[vpid_col]))
        .map(|r| format!("{} {}", r[node_col], r[period_col]))
        .collect();
    listed.sort();
    table += &format!("  export timers: {listed:?}\n");
    let want = vec![format!("{ns}/alpha 20000000"), format!("{ns}/alpha 50000000")];
    if listed != want {
        failures.push(format!("export timers {listed:?}, expected {want:?}"));
    }
    eprintln!("{table}");
    // ROSTRACE_RCLPY=0: none of the instrumentation's events.
    if backend == "embedded" {
        let (dir, _) = record(distro, backend, &ns, domain, &root, true);
        let (events, _, _, _) = read_trace(&dir, &ns);
        let names: BTreeSet<&str> =
            events.iter().map(|e| e.name.as_str()).filter(|n| real::RCLPY_INSTRUMENTATION.contains(n)).collect();
        if !names.is_empty() {
            failures.push(format!("ROSTRACE_RCLPY=0 recorded {names:?}"));
        }
    }
    assert!(failures.is_empty(), "{distro} {backend}:\n{}\n{table}", failures.join("\n"));
}

#[rostrace_testkit::needs(venvs)]
#[test]
fn rclpy_callbacks_kilted_embedded() {
    check("kilted", "embedded", 0);
}

#[rostrace_testkit::needs(venvs)]
#[test]
fn rclpy_callbacks_jazzy_embedded() {
    check("jazzy", "embedded", 1);
}

#[rostrace_testkit::needs(venvs, lttng)]
#[test]
fn rclpy_callbacks_kilted_lttng() {
    check("kilted", "lttng", 2);
}

#[rostrace_testkit::needs(venvs, lttng)]
#[test]
fn rclpy_callbacks_jazzy_lttng() {
    check("jazzy", "lttng", 3);
}

/// A session made by `rostrace create`, its Python program launched separately with the
/// environment `create` prints: the printed `PYTHONPATH` gives it the instrumentation, so every
/// callback run is recorded once `start` is given.
#[rostrace_testkit::needs(venvs)]
#[test]
fn rclpy_callbacks_created_session() {
    let distro = "jazzy";
    let Some(venv) = rclpy_venv(distro) else { return };
    let _lttng = lttng_lock();
    let root = TempDir::new("rclpy-cb-created");
    let pid = std::process::id();
    let ns = format!("/rclpy_cb_created_{pid}");
    let domain = 1 + (pid * 7 + 50 + 4 * 3) % 98;
    let name = "created";
    let out = rostrace().args(["create", name, "-p"]).arg(&*root).env_remove("ROSTRACE_RCLPY").output().unwrap();
    assert!(out.status.success(), "create: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let exports: Vec<(String, String)> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("export "))
        .filter_map(|kv| kv.split_once('='))
        // A shell reads the value: single quotes, where `create` quotes it, are not part of it.
        .map(|(k, v)| {
            let v = v
                .strip_prefix('\'')
                .and_then(|x| x.strip_suffix('\''))
                .map_or(v.to_string(), |x| x.replace("'\\''", "'"));
            (k.to_string(), v)
        })
        .collect();
    let pythonpath = exports.iter().find(|(k, _)| k == "PYTHONPATH").map(|(_, v)| v.clone());
    let pythonpath = pythonpath.unwrap_or_else(|| panic!("create prints no PYTHONPATH:\n{text}"));
    let first = std::path::PathBuf::from(pythonpath.split(':').next().unwrap());
    for f in ["sitecustomize.py", "_rostrace_rclpy.py"] {
        assert!(first.join(f).is_file(), "{f} is not in {} (create printed:\n{text})", first.display());
    }
    let control = |verb: &str| {
        let o = rostrace().args([verb, name, "-p"]).arg(&*root).output().unwrap();
        assert!(o.status.success(), "{verb}: {}", String::from_utf8_lossy(&o.stderr));
    };
    control("start");
    let mut cmd = std::process::Command::new(venv.join("bin/python"));
    cmd.arg(repo().join("crates/cli/tests/rclpy/callbacks.py")).args([
        "--ns",
        &ns,
        "--messages",
        &MESSAGES.to_string(),
        "--calls",
        &CALLS.to_string(),
    ]);
    rclpy_env(&mut cmd, distro, domain);
    cmd.env_remove("PYTHONPATH").env_remove("ROSTRACE_RCLPY");
    for (k, v) in &exports {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    control("stop");
    let system = system_report(&out, "created session");
    let dir = root.join(name);
    let (events, _, _, _) = read_trace(&dir, &ns);
    let (vpid_of, names) = registrations(&events, &ns);
    let mut starts: BTreeMap<(i128, String), u64> = BTreeMap::new();
    for e in events.iter().filter(|e| e.name == "callback_start") {
        if let Some(n) = names.get(&(e.vpid, e.int("callback").unwrap())) {
            *starts.entry((e.vpid, n.clone())).or_default() += 1;
        }
    }
    let mut failures = Vec::new();
    let mut table = String::from("\n=== rclpy callbacks, session from `create`, jazzy, embedded\n");
    for p in system["processes"].as_array().unwrap() {
        let role = p["role"].as_str().unwrap();
        let Some(&vpid) = vpid_of.get(role) else {
            failures.push(format!("{role}: no rcl_node_init"));
            continue;
        };
        for (cb, ran) in p["runs"].as_object().unwrap() {
            let ran = ran.as_u64().unwrap();
            let got = starts.get(&(vpid, cb.clone())).copied().unwrap_or(0);
            table += &format!("  {role:<6} {cb:<8} ran {ran:>3}  callback_start {got:>3}\n");
            if got != ran || ran == 0 {
                failures.push(format!("{role}.{cb}: ran {ran} times, {got} callback_start"));
            }
        }
    }
    eprintln!("{table}");
    assert!(failures.is_empty(), "{}\n{table}", failures.join("\n"));
}
