//! `rostrace diff` on a known regression: the demo against the demo with the planner's timer
//! callback made twice as slow (`rostrace demo --slow`). The diff must flag that callback and
//! what is downstream of it, and nothing else.
//!
//! Both runs are recorded at the same time, each on a DDS domain of its own, so that the
//! machine's load weighs on both alike; the demo's timers keep the same phases in every run
//! (they tick at fixed offsets on the monotonic clock), so the latencies of two runs compare.

use rostrace_testkit::TempDir;
use serde_json::Value;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_rostrace");
const SLOWED: &str = "/planning/planner:timer";

/// Whether a compared item is the planner's timer callback or downstream of it: the topic it
/// publishes, its publisher → subscriber pair and every path through it.
fn downstream_of_planner_timer(kind: &str, name: &str) -> bool {
    match kind {
        "callback" => name.starts_with("/planning/planner timer "),
        "topic" => name == "/control/cmd_vel",
        "pair" | "path" => name.contains("/planning/planner -/control/cmd_vel->"),
        _ => false,
    }
}

#[test]
fn slowed_callback_is_flagged_with_what_is_downstream_and_nothing_else() {
    let dir = TempDir::new("diff-demo");
    let domain = 91 + std::process::id() % 4 * 2;
    // The second run's timers are shifted by half the shortest period, so that the two runs'
    // callbacks do not wake at the same instants and contend for the same cores.
    let runs: Vec<_> = [("base", None, "0"), ("slow", Some(SLOWED), "5")]
        .into_iter()
        .enumerate()
        .map(|(i, (name, slow, phase))| {
            let mut cmd = Command::new(BIN);
            cmd.args([
                "demo",
                "--duration",
                "30",
                "--phase",
                phase,
                "--domain",
                &(domain + i as u32).to_string(),
                "-o",
            ]);
            cmd.arg(dir.path().join(name));
            if let Some(s) = slow {
                cmd.args(["--slow", s]);
            }
            (name, cmd.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap())
        })
        .collect();
    for (name, child) in runs {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "demo {name}: {}", String::from_utf8_lossy(&out.stderr));
    }

    let out = Command::new(BIN)
        .arg("diff")
        .arg(dir.path().join("base"))
        .arg(dir.path().join("slow"))
        .args(["--json", "-"])
        .output()
        .unwrap();
    let v: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(1), "a significant change exits 1: {v}");
    let changes = v["changes"].as_array().unwrap();
    let significant: Vec<(&str, &str)> = changes
        .iter()
        .filter(|c| c["significant"] == true)
        .map(|c| (c["kind"].as_str().unwrap(), c["name"].as_str().unwrap()))
        .collect();
    let report = || format!("significant: {significant:#?}");

    let slowed = changes
        .iter()
        .find(|c| c["kind"] == "callback" && downstream_of_planner_timer("callback", c["name"].as_str().unwrap()));
    let slowed = slowed.unwrap_or_else(|| panic!("the planner's timer callback is not compared: {v}"));
    assert_eq!(slowed["significant"], true, "the slowed callback is not flagged: {slowed}");
    let ratio = slowed["median_ratio"].as_f64().unwrap();
    assert!((1.5..3.0).contains(&ratio), "its median changed by x{ratio}, not about x2: {slowed}");
    assert!(
        significant.iter().any(|(k, n)| *k == "path" && downstream_of_planner_timer(k, n)),
        "no path through the slowed callback is flagged: {}",
        report()
    );
    for (kind, name) in &significant {
        assert!(downstream_of_planner_timer(kind, name), "{kind} {name} is flagged but not downstream: {}", report());
    }
    assert!(v["added"].as_array().unwrap().is_empty() && v["removed"].as_array().unwrap().is_empty(), "{v}");
}
