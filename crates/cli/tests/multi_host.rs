//! One system on two hosts: the demo's processes in two Linux network namespaces joined by a
//! veth link (DDS discovery and data over it), each with a hostname of its own (a UTS
//! namespace) and recorded by its own `rostrace record`. A host clock wrong by a known amount is
//! emulated by moving its recording's clock offset in the metadata (what a host's clock that
//! far ahead writes); the analysis of both recordings recovers it within the bound it reports,
//! and cross-host latencies are positive; `--no-align` shows the misalignment, `--clock-offset`
//! gives it.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Two network namespaces joined by a veth pair, removed when dropped.
struct Hosts {
    names: [String; 2],
}

impl Hosts {
    fn new() -> Option<Hosts> {
        let id = std::process::id();
        let names = [format!("rtmhA{id}"), format!("rtmhB{id}")];
        let (va, vb) = (format!("rtva{id}"), format!("rtvb{id}"));
        let h = Hosts { names: names.clone() };
        let ip = |args: &str| Command::new("ip").args(args.split_whitespace()).status().is_ok_and(|s| s.success());
        let ok = ip(&format!("netns add {}", names[0]))
            && ip(&format!("netns add {}", names[1]))
            && ip(&format!("link add {va} type veth peer name {vb}"))
            && ip(&format!("link set {va} netns {}", names[0]))
            && ip(&format!("link set {vb} netns {}", names[1]))
            && ip(&format!("-n {} addr add 10.78.0.1/24 dev {va}", names[0]))
            && ip(&format!("-n {} addr add 10.78.0.2/24 dev {vb}", names[1]))
            && names.iter().all(|n| ip(&format!("-n {n} link set lo up")))
            && ip(&format!("-n {} link set {va} up multicast on", names[0]))
            && ip(&format!("-n {} link set {vb} up multicast on", names[1]))
            && ip(&format!("-n {} route add 224.0.0.0/4 dev {va}", names[0]))
            && ip(&format!("-n {} route add 224.0.0.0/4 dev {vb}", names[1]));
        ok.then_some(h)
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
    }
}

/// A copy of the recording `src` in `dst` whose clock is `shift_ns` ahead and runs `drift` fast
/// (a fraction): each trace's metadata written as text with its clock's offset moved and its
/// frequency lowered (each cycle then counts for more ns).
fn shifted(src: &Path, dst: &Path, shift_ns: i64, drift: f64) {
    rostrace_testkit::copy_writable(src, dst);
    for t in rostrace_ctf::find_traces(dst).unwrap() {
        let (_, text) = rostrace_ctf::metadata::read_metadata(&t.join("metadata")).unwrap();
        let mut out = String::new();
        let mut in_clock = false;
        let mut offset_s = 0i64;
        for line in text.text.lines() {
            let l = line.trim();
            in_clock = (in_clock || l.starts_with("clock {")) && !l.starts_with("};");
            if in_clock && l.starts_with("freq = ") && drift != 0.0 {
                let freq: f64 = l["freq = ".len()..].split(';').next().unwrap().trim().parse().unwrap();
                out.push_str(&format!("\tfreq = {};\n", (freq / (1.0 + drift)).round() as u64));
                continue;
            }
            if in_clock && l.starts_with("offset_s = ") {
                offset_s = l["offset_s = ".len()..].split(';').next().unwrap().trim().parse().unwrap();
                continue;
            }
            if in_clock && l.starts_with("offset = ") {
                let offset: i64 = l["offset = ".len()..].split(';').next().unwrap().trim().parse().unwrap();
                let total = offset_s as i128 * 1_000_000_000 + offset as i128 + shift_ns as i128;
                out.push_str(&format!(
                    "\toffset_s = {};\n\toffset = {};\n",
                    total.div_euclid(1_000_000_000),
                    total.rem_euclid(1_000_000_000)
                ));
                continue;
            }
            out.push_str(line);
            out.push('\n');
        }
        assert!(out.contains("offset_s = "), "no clock offset in {}", t.display());
        std::fs::write(t.join("metadata"), out).unwrap();
    }
}

/// The least publish → take latency of the topic, over its pairs.
fn min_latency(a: &Value, topic: &str) -> i64 {
    let t = a["topics"].as_array().unwrap().iter().find(|t| t["name"] == topic).unwrap_or_else(|| panic!("{topic}"));
    t["pairs"].as_array().unwrap().iter().map(|p| p["pub_to_take_ns"]["min"].as_i64().unwrap()).min().unwrap()
}

#[test]
fn clocks_of_two_hosts_are_aligned_from_their_messages() {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !require(
        root && rostrace_testkit::have("ip", "-V") && rostrace_testkit::have("unshare", "--version"),
        "root, ip and unshare (network namespaces)",
    ) {
        return;
    }
    let Some(hosts) = Hosts::new() else { panic!("could not make the network namespaces") };
    let dir = TempDir::new("multi-host");
    let exe = env!("CARGO_BIN_EXE_rostrace");
    let run = |ns: &str, host: &str, process: &str| {
        Command::new("ip")
            .args(["netns", "exec", ns, "unshare", "--uts", "sh", "-c"])
            .arg(format!(
                "hostname {host}; {exe} record -s {host} -p {} -- {exe} demo --process {process} --duration 5 --domain 63",
                dir.path().display()
            ))
            .output()
            .unwrap()
    };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| run(&hosts.names[0], "hostA", "sensing"));
        let b = s.spawn(|| run(&hosts.names[1], "hostB", "control"));
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
        shifted(&ra, &moved, shift, 0.0);
        let a = analyze_json(&[], &[&moved, &rb]);
        let h = other(&a);
        assert_eq!((h["host"].as_str(), h["source"].as_str()), (Some(name.as_str()), Some("estimated")), "{h}");
        let (lo, hi) = (h["lower_ns"].as_i64().unwrap(), h["upper_ns"].as_i64().unwrap());
        let want = expected(shift);
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
    // Host A's clock 1000 ppm fast (5 ms over the recording, far more than the bounds' gap): no
    // constant offset fits; the drift is found, and the latencies between the hosts are positive.
    let drifting = dir.join("hostA-drift");
    shifted(&ra, &drifting, 0, 1e-3);
    let a = analyze_json(&[], &[&drifting, &rb]);
    let h = other(&a);
    let want = if name == "hostA" { 1000.0 } else { -1000.0 };
    assert!((h["drift_ppm"].as_f64().unwrap_or(0.0) - want).abs() < 100.0, "{h}");
    assert!(h["error_ns"].as_i64().unwrap() >= 0, "{h}");
    for topic in ["/sensing/points_filtered", "/sensing/imu"] {
        assert!(min_latency(&a, topic) >= 0, "{topic}: {}", min_latency(&a, topic));
    }
    // Events and info show the recorded times.
    let o = rostrace().args(["info", "--no-align"]).arg(&ra).output().unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("analysing commands"));
}
