//! One system on two hosts: the demo's processes in two Linux network namespaces joined by a
//! veth link (DDS discovery and data over it), each with a hostname of its own (a UTS
//! namespace) and recorded by its own `rostrace record`. A host clock wrong by a known amount is
//! emulated by moving its recording's clock offset in the metadata (what a host's clock that
//! far ahead writes); the analysis of both recordings recovers it within the bound it reports,
//! and cross-host latencies are positive; `--no-align` shows the misalignment, `--clock-offset`
//! gives it.

mod common;

use common::clock::as_host;
use common::*;
use serde_json::Value;
use std::process::Command;

/// Network namespaces ("hosts"), each joined by a veth link to a bridge in a namespace of its
/// own (the switch), with multicast routed to the link: DDS discovery and data between them go
/// over the links. Removed when dropped.
struct Hosts {
    names: Vec<String>,
    switch: String,
}

impl Hosts {
    fn new(n: usize) -> Option<Hosts> {
        // Apart from those of the other tests of this process, and of other processes.
        static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let id = format!("{}n{}", MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed), std::process::id());
        let names: Vec<String> = (0..n).map(|i| format!("rtmh{i}x{id}")).collect();
        let switch = format!("rtmhs{id}");
        let h = Hosts { names: names.clone(), switch: switch.clone() };
        let ip = |args: &str| Command::new("ip").args(args.split_whitespace()).status().is_ok_and(|s| s.success());
        let mut ok = ip(&format!("netns add {switch}"))
            && ip(&format!("-n {switch} link add rtbr type bridge mcast_snooping 0"))
            && ip(&format!("-n {switch} link set rtbr up"));
        for (i, ns) in names.iter().enumerate() {
            let (v, p) = (format!("rtv{i}x{id}"), format!("rtp{i}x{id}"));
            ok = ok
                && ip(&format!("netns add {ns}"))
                && ip(&format!("link add {v} type veth peer name {p}"))
                && ip(&format!("link set {v} netns {ns}"))
                && ip(&format!("link set {p} netns {switch}"))
                && ip(&format!("-n {switch} link set {p} master rtbr"))
                && ip(&format!("-n {switch} link set {p} up"))
                && ip(&format!("-n {ns} addr add 10.78.0.{}/24 dev {v}", i + 1))
                && ip(&format!("-n {ns} link set lo up"))
                && ip(&format!("-n {ns} link set {v} up multicast on"))
                && ip(&format!("-n {ns} route add 224.0.0.0/4 dev {v}"));
        }
        ok.then_some(h)
    }

    /// Runs `script` (sh) on host `i`, with the hostname `host` (a UTS namespace of its own).
    fn run(&self, i: usize, host: &str, script: &str, env: impl FnOnce(&mut Command)) -> std::process::Output {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.names[i], "unshare", "--uts", "sh", "-c"])
            .arg(format!("hostname {host}; {script}"));
        env(&mut c);
        c.output().unwrap()
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        // (A namespace's links go with it.)
        for n in self.names.iter().chain([&self.switch]) {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
    }
}

/// Whether this test can make network namespaces: root, `ip` and `unshare`.
fn can_make_hosts() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    require(
        root && rostrace_testkit::have("ip", "-V") && rostrace_testkit::have("unshare", "--version"),
        "root, ip and unshare (network namespaces)",
    )
}

/// The least publish → take latency of the topic, over its pairs.
fn min_latency(a: &Value, topic: &str) -> i64 {
    let t = a["topics"].as_array().unwrap().iter().find(|t| t["name"] == topic).unwrap_or_else(|| panic!("{topic}"));
    t["pairs"].as_array().unwrap().iter().map(|p| p["pub_to_take_ns"]["min"].as_i64().unwrap()).min().unwrap()
}

#[test]
fn clocks_of_two_hosts_are_aligned_from_their_messages() {
    if !can_make_hosts() {
        return;
    }
    let Some(hosts) = Hosts::new(2) else { panic!("could not make the network namespaces") };
    let dir = TempDir::new("multi-host");
    let exe = env!("CARGO_BIN_EXE_rostrace");
    let run = |i: usize, host: &str, process: &str| {
        let script = format!(
            "{exe} record -s {host} -p {} -- {exe} demo --process {process} --duration 30 --domain 63",
            dir.path().display()
        );
        hosts.run(i, host, &script, |_| {})
    };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| run(0, "hostA", "sensing"));
        let b = s.spawn(|| run(1, "hostB", "control"));
        (a.join().unwrap(), b.join().unwrap())
    });
    drop(hosts);
    for o in [&a, &b] {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let (ra, rb) = (dir.join("hostA"), dir.join("hostB"));
    // The reference host is the one with the most trace bytes; the other is aligned to it.
    let same = analyze_json(&[], &[&ra, &rb]);
    let other = |a: &Value| -> Value {
        a["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["source"] != "reference")
            .unwrap_or_else(|| panic!("{a}"))
            .clone()
    };
    let h = other(&same);
    let name = h["host"].as_str().unwrap().to_string();
    // Host A's clock moved by `shift`: the other host's offset from the reference.
    let expected = |shift: i64| if name == "hostA" { shift } else { -shift };
    // As recorded (one machine: one clock), the offset found is within its bound of 0.
    assert!(h["messages_in"].as_u64() > Some(5) && h["messages_out"].as_u64() > Some(5), "{h}");
    let (off, err) = (h["offset_ns"].as_i64().unwrap(), h["error_ns"].as_i64().unwrap());
    assert!(off.abs() <= err && err < 20_000_000, "{h}");
    // Host A's clock 2.5 s behind, then 37 ms ahead: recovered within the bound; the latencies
    // between the hosts are positive.
    for shift in [-2_500_000_000i64, 37_000_000] {
        let moved = dir.join(format!("hostA{shift}"));
        as_host(&ra, &moved, None, shift, 0.0);
        let a = analyze_json(&[], &[&moved, &rb]);
        let h = other(&a);
        assert_eq!((h["host"].as_str(), h["source"].as_str()), (Some(name.as_str()), Some("estimated")), "{h}");
        let (lo, hi) = (h["lower_ns"].as_i64().unwrap(), h["upper_ns"].as_i64().unwrap());
        let want = expected(shift);
        eprintln!("offset {want} ns injected: {} ± {} ns found", h["offset_ns"], h["error_ns"]);
        assert!(lo <= want && want <= hi, "{want} not within [{lo}, {hi}]: {h}");
        assert!((h["offset_ns"].as_i64().unwrap() - want).abs() <= h["error_ns"].as_i64().unwrap(), "{h}");
        for topic in ["/sensing/points_filtered", "/sensing/imu"] {
            assert!(min_latency(&a, topic) >= 0, "{topic}: {}", min_latency(&a, topic));
        }
        // Not aligned: the recorded clocks' misalignment shows.
        let raw = analyze_json(&["--no-align"], &[&moved, &rb]);
        assert!(raw.get("hosts").is_none_or(|h| h.as_array().is_some_and(|v| v.is_empty())), "{}", raw["hosts"]);
        let skew = min_latency(&raw, "/sensing/points_filtered");
        assert!((skew + shift).abs() < 50_000_000, "not aligned: {skew} for a shift of {shift}");
        // A path across the hosts: its latencies are positive, and known within the alignment's
        // error bound (the reference host's is 0).
        let json = dir.join("e2e.json");
        let o = rostrace()
            .args(["e2e", "--path", "/sensing/lidar,/sensing/lidar_filter,/localization/fusion", "--json"])
            .arg(&json)
            .arg(&moved)
            .arg(&rb)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let e: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_eq!(e["hosts_crossed"], 1, "{}", e["hosts_crossed"]);
        assert_eq!(e["clock_uncertainty_ns"], h["error_ns"], "{}", e["clock_uncertainty_ns"]);
        assert!(
            e["latency"]["count"].as_u64() > Some(100) && e["latency"]["min"].as_i64() > Some(0),
            "{}",
            e["latency"]
        );
        // Given: used as it is.
        let given = analyze_json(&["--clock-offset", &format!("{name}={want}")], &[&moved, &rb]);
        let h = other(&given);
        assert_eq!((h["source"].as_str(), h["offset_ns"].as_i64()), (Some("given"), Some(want)), "{h}");
    }
    // Host A's clock fast: 1000 ppm (30 ms over the recording), and 50 ppm (1.5 ms, a clock
    // without NTP), each more than the bounds' gap: no constant offset fits; the drift is found,
    // and the latencies between the hosts are positive.
    for (ppm, within) in [(1000.0, 20.0), (50.0, 10.0)] {
        let drifting = dir.join(format!("hostA-drift{ppm}"));
        as_host(&ra, &drifting, None, 0, ppm * 1e-6);
        let a = analyze_json(&[], &[&drifting, &rb]);
        let h = other(&a);
        let want = if name == "hostA" { ppm } else { -ppm };
        eprintln!("drift of {want} ppm injected: {} ppm found", h["drift_ppm"]);
        assert!((h["drift_ppm"].as_f64().unwrap_or(0.0) - want).abs() < within, "{ppm} ppm: {h}");
        assert!(h["error_ns"].as_i64().unwrap() >= 0, "{h}");
        for topic in ["/sensing/points_filtered", "/sensing/imu"] {
            assert!(min_latency(&a, topic) >= 0, "{topic}: {}", min_latency(&a, topic));
        }
    }
    // Events and info show the recorded times.
    let o = rostrace().args(["info", "--no-align"]).arg(&ra).output().unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("analysing commands"));
}

/// Three hosts: the demo's two processes on hosts A and B, and on host C an rclpy listener
/// (Jazzy wheels, Fast DDS) of an rclpy talker on host B, so that host C only ever receives:
/// its clock cannot be aligned ("one-sided"), which the analysis says, keeping its recorded
/// clock. Every table names each row's host: the JSON report, the exports (a host column) and
/// Perfetto's trace (a machine per host), the text and the HTML report.
#[rostrace_testkit::needs(venvs, chromium)]
#[test]
fn three_hosts_one_of_which_only_listens() {
    if !can_make_hosts() {
        return;
    }
    let python = venv_root().join("jazzy/bin/python");
    warm_rclpy(&python);
    let chatter = repo().join("crates/cli/tests/rclpy/chatter.py");
    let Some(hosts) = Hosts::new(3) else { panic!("could not make the network namespaces") };
    let dir = TempDir::new("three-hosts");
    let exe = env!("CARGO_BIN_EXE_rostrace");
    let p = dir.path().display();
    let (py, ch) = (format!("env ROS_DISTRO=jazzy {}", python.display()), chatter.display());
    let scripts = [
        format!("{exe} record -s hostA -p {p} -- {exe} demo --process sensing --duration 8 --domain 62"),
        format!(
            "{exe} record -s hostB -p {p} -- sh -c '{exe} demo --process control --duration 8 --domain 62 & \
             {py} {ch} --role talker --count 100 --timeout 40; s=$?; wait; exit $s'"
        ),
        format!("{exe} record -s hostC -p {p} -- {py} {ch} --role listener --count 100 --timeout 40"),
    ];
    let outs: Vec<_> = std::thread::scope(|s| {
        let runs: Vec<_> = scripts
            .iter()
            .enumerate()
            .map(|(i, script)| {
                let hosts = &hosts;
                s.spawn(move || {
                    hosts.run(i, ["hostA", "hostB", "hostC"][i], script, |c| {
                        // Jazzy for the rclpy nodes only: the demo's processes record the
                        // service events of a later distribution (its default).
                        fastdds_env(c, "jazzy");
                        c.env("ROS_DOMAIN_ID", "62").env_remove("PYTHONPATH").env_remove("ROS_DISTRO");
                    })
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    drop(hosts);
    for o in &outs {
        assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    }
    let recs: Vec<_> = ["hostA", "hostB", "hostC"].iter().map(|h| dir.join(h)).collect();
    let a = analyze_json(&[], &recs);
    let hosts = a["hosts"].as_array().unwrap();
    let host = |h: &str| hosts.iter().find(|x| x["host"] == h).unwrap_or_else(|| panic!("{h}: {hosts:?}"));
    // Host B (the demo's control process and the talker) has the most trace bytes.
    assert_eq!(host("hostB")["source"], "reference", "{hosts:?}");
    assert_eq!(host("hostA")["source"], "estimated", "{hosts:?}");
    // Host C only listens: one bound, no estimate, its recorded clock kept, and said so.
    let c = host("hostC");
    assert_eq!((c["source"].as_str(), c["messages_out"].as_u64()), (Some("recorded"), Some(0)), "{c}");
    assert!(c["messages_in"].as_u64() >= Some(100) && c["upper_ns"].is_i64() && c["lower_ns"].is_null(), "{c}");
    let warnings: Vec<&str> = a["warnings"].as_array().unwrap().iter().filter_map(|w| w.as_str()).collect();
    assert!(
        warnings.iter().any(|w| w.starts_with("host hostC: one-sided: only messages from hostB to it (")),
        "{warnings:?}"
    );
    // The three hosts' clocks are one machine's: every latency between them is positive.
    let chatter_pairs = &a["topics"].as_array().unwrap().iter().find(|t| t["name"] == "/chatter").unwrap()["pairs"];
    let pair = &chatter_pairs[0];
    assert_eq!((pair["publisher_host"].as_str(), pair["subscription_host"].as_str()), (Some("hostB"), Some("hostC")));
    assert!(pair["count"].as_u64() >= Some(100) && pair["pub_to_take_ns"]["min"].as_i64() > Some(0), "{pair}");
    // Every row says its host.
    for (table, rows) in [("nodes", &a["nodes"]), ("callbacks", &a["callbacks"]), ("per_process", &a["per_process"])] {
        let mut seen: Vec<&str> = rows.as_array().unwrap().iter().map(|r| r["host"].as_str().unwrap()).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen, ["hostA", "hostB", "hostC"], "{table}");
    }
    // The text: processes named with their hosts, the pair across hosts.
    let o = rostrace().arg("analyze").args(&recs).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("@hostC") && text.contains("(hostB -> hostC)"), "{text}");
    // CSV: a host column in every table with a trace column; flows name both hosts.
    let csv = dir.join("csv");
    let o = rostrace().args(["export", "--format", "csv", "-o"]).arg(&csv).args(&recs).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let header_and_rows = |table: &str| -> Vec<Vec<String>> {
        let f = files_below(&csv.join(table)).into_iter().find(|f| f.extension().is_some_and(|e| e == "csv")).unwrap();
        let text = std::fs::read_to_string(f).unwrap();
        text.lines().map(|l| l.split(',').map(str::to_string).collect()).collect()
    };
    for table in ["callbacks", "callback_runs", "publications", "takes", "nodes"] {
        let rows = header_and_rows(table);
        let at = rows[0].iter().position(|c| c == "host").unwrap_or_else(|| panic!("{table}: {:?}", rows[0]));
        assert_eq!(rows[0][at - 1], "trace", "{table}");
        let mut seen: Vec<&str> = rows[1..].iter().map(|r| r[at].as_str()).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen, ["hostA", "hostB", "hostC"], "{table}");
    }
    let flows = header_and_rows("flows");
    let (ph, th) =
        (flows[0].iter().position(|c| c == "publisher_host"), flows[0].iter().position(|c| c == "take_host"));
    let (ph, th) = (ph.unwrap(), th.unwrap());
    assert!(flows[1..].iter().any(|r| (r[ph].as_str(), r[th].as_str()) == ("hostB", "hostC")), "{:?}", flows[0]);
    // Perfetto: a machine per host, the reference host Perfetto's host machine, each host's
    // processes on its machine.
    let pf = dir.join("three.pftrace");
    let o = rostrace().args(["export", "--format", "perfetto", "-o"]).arg(&pf).args(&recs).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let data = venv_root().join("data/bin/python");
    let proto = repo().join("crates/export/tests/data/perfetto/perfetto_trace.proto");
    let o = Command::new(&data)
        .arg(repo().join("crates/cli/tests/read_exports.py"))
        .arg("perfetto")
        .arg(&pf)
        .arg(&proto)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["machines"]["0"], "hostB", "{}", v["machines"]);
    let mut named: Vec<&str> = v["machines"].as_object().unwrap().values().filter_map(|x| x.as_str()).collect();
    named.sort_unstable();
    assert_eq!(named, ["hostA", "hostB", "hostC"]);
    for (m, procs) in v["machine_processes"].as_object().unwrap() {
        let h = v["machines"][m].as_str().unwrap();
        assert!(
            procs.as_array().unwrap().iter().all(|p| p.as_str().unwrap().ends_with(&format!("({h})"))),
            "{m}: {procs}"
        );
    }
    assert!(v["flows_through_take"].as_u64() >= Some(100), "{v}");
    // HTML: the hosts' table, the graph's nodes framed by host, a host column of callbacks.
    let html = dir.join("report.html");
    let o = rostrace().arg("report").arg("-o").arg(&html).args(&recs).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dom = check_report(&html, &a);
    assert!(dom.contains("data-table=\"hosts\""), "no hosts table");
    for h in ["hostA", "hostB", "hostC"] {
        assert!(dom.contains(&format!("data-host=\"{h}\"")), "{h}: no node of it in the graph");
    }
}

/// Two hosts' recordings are read once: the pass runs on the clocks they recorded, and what it
/// made is moved to the clocks aligned from its messages. The report is the one of reading them
/// twice (a first pass for the messages, the second on the aligned clocks), for a clock ahead,
/// a clock behind and a drifting clock, but for the order of lists whose items come from both
/// hosts (objects are listed in the order of the events that made them, and their events
/// interleave otherwise on other clocks). (The demo's two processes as two hosts: their
/// recordings' host names and clocks rewritten; no namespace needed.)
#[test]
fn one_reading_aligns_as_two_do() {
    let dir = TempDir::new("one-reading");
    let demo = dir.join("demo");
    let o = rostrace().args(["demo", "--duration", "6", "-o"]).arg(&demo).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let traces = rostrace_ctf::find_traces(&demo).unwrap();
    let of = |process: &str| traces.iter().find(|t| t.to_string_lossy().contains(process)).unwrap().clone();
    let b = dir.join("hostB");
    as_host(&of("control"), &b, Some("hostB"), 0, 0.0);
    for (k, (shift, drift)) in [(37_000_000i64, 0.0), (-2_500_000_000, 0.0), (0, 1000e-6)].into_iter().enumerate() {
        let a = dir.join(format!("hostA{k}"));
        as_host(&of("sensing"), &a, Some("hostA"), shift, drift);
        let report = |twice: bool| -> Value {
            let options = rostrace_analysis::Options { align_in_two_passes: twice, ..Default::default() };
            let l =
                rostrace_analysis::Open::new(&[&a, &b]).options(options).analyze().unwrap_or_else(|e| panic!("{e:?}"));
            serde_json::to_value(&l.analysis.report).unwrap()
        };
        let (once, twice) = (sorted(report(false)), sorted(report(true)));
        let h = &once["hosts"];
        assert_eq!(h.as_array().map(Vec::len), Some(2), "{h}");
        assert!(h.to_string().contains("\"estimated\""), "{h}");
        assert!(once["topics"].as_array().is_some_and(|t| t.len() > 3), "{}", once["topics"]);
        let mut differences = Vec::new();
        differ(&once, &twice, "", &mut differences);
        // A drift corrected: a time is moved through the clock's rate in floating point (as the
        // reader converts it: within a nanosecond of it; a millionth of a sum), and a sum of durations at once (the
        // executors' phases: within a nanosecond per interval summed, one per execution). A
        // statistic's sum adds durations whose two ends were each moved: within 2 ns per value.
        differences.retain(|(at, x, y)| {
            let thread = at.strip_prefix("/executor_threads[").and_then(|r| r.split(']').next());
            let executions =
                thread.and_then(|i| once["executor_threads"][i.parse::<usize>().ok()?]["executions"].as_f64());
            let values = at
                .strip_suffix("/sum")
                .and_then(|stat| once.pointer(&format!("{}/count", stat.replace('[', "/").replace(']', ""))))
                .and_then(Value::as_f64)
                .map(|n| 2.0 * n);
            match (drift != 0.0, x.as_f64().zip(y.as_f64())) {
                (true, Some((x, y))) => {
                    (x - y).abs() > executions.or(values).unwrap_or((1e-6 * x.abs().max(y.abs())).max(2.0))
                }
                _ => true,
            }
        });
        assert!(
            differences.is_empty(),
            "shift {shift} ns, drift {drift}: one reading differs from two at {differences:?}"
        );
    }
}

/// Where `a` and `b` differ: (path into them, value in a, value in b).
fn differ(a: &Value, b: &Value, at: &str, out: &mut Vec<(String, Value, Value)>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) if x.len() == y.len() && x.keys().all(|k| y.contains_key(k)) => {
            for (k, v) in x {
                differ(v, &y[k], &format!("{at}/{k}"), out);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                differ(v, w, &format!("{at}[{i}]"), out);
            }
        }
        _ if a == b => {}
        _ => out.push((at.to_string(), a.clone(), b.clone())),
    }
}

/// `v` with every list's items in the order of their JSON text.
fn sorted(v: Value) -> Value {
    match v {
        Value::Array(a) => {
            let mut a: Vec<Value> = a.into_iter().map(sorted).collect();
            a.sort_by_cached_key(|x| x.to_string());
            Value::Array(a)
        }
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, x)| (k, sorted(x))).collect()),
        x => x,
    }
}
