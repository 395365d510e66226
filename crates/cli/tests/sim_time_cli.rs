//! `rostrace record --record-clock` (CARET's clock_recorder: `ros2_caret:sim_time` every second
//! of wall time), `rostrace analyze --time sim`, and `record --light` (CARET's light event list).

mod common;

use common::*;
use std::path::{Path, PathBuf};

/// Sim time of the publisher: from 1000 s, ten times faster than wall time, published at 50 Hz.
const START_S: f64 = 1000.0;
const SPEED: f64 = 10.0;
const RATE_HZ: f64 = 50.0;
const DURATION_S: f64 = 6.0;

/// The ROS 2 virtualenv to run rclpy from: Kilted's, else Jazzy's.
fn venv() -> Option<(PathBuf, &'static str)> {
    ["kilted", "jazzy"]
        .into_iter()
        .map(|d| (venv_root().join(d), d))
        .find(|(v, _)| v.join("bin/python").exists() && v.join(".rostrace-complete").exists())
}

/// (system ns, stamp, procname) of every `ros2_caret:sim_time` of the traces under `dir`, and
/// the names of all the events.
fn sim_time_events(dir: &Path) -> (Vec<(i64, i64, String)>, Vec<String>) {
    let (set, errors) = rostrace_ctf::TraceSet::open(&[dir]);
    assert!(errors.is_empty(), "{}: {errors:?}", dir.display());
    let mut out = Vec::new();
    let mut names = Vec::new();
    let mut evs = set.events();
    while let Some(e) = evs.next() {
        let e = e.unwrap();
        names.push(e.name().to_string());
        if e.name() == "ros2_caret:sim_time" {
            let stamp = e.field("stamp").and_then(|v| v.as_i64()).unwrap();
            let procname =
                e.context_field("procname").and_then(|v| v.as_str().map(|s| s.into_owned())).unwrap_or_default();
            out.push((e.timestamp().unwrap(), stamp, procname));
        }
    }
    (out, names)
}

/// An rclpy node publishes `/clock` at 10× real time from 1000 s; `record --record-clock` records
/// sim_time once per second of wall time, each stamp within one publication of what was
/// published then, and the fitted map has slope 10.
#[rostrace_testkit::needs(venvs)]
#[test]
fn record_clock_follows_rclpy_clock() {
    let Some((venv, distro)) = venv() else {
        require(false, "a ROS 2 virtualenv (tools/ros2-venvs.sh makes it)");
        return;
    };
    let tmp = TempDir::new("record-clock");
    let log = tmp.join("published.txt");
    // A domain of its own (the other tests' domains are below 230).
    let domain = 230;
    let mut cmd = rostrace();
    cmd.args(["record", "--record-clock", "--distro", distro, "-s", "clock", "-p"])
        .arg(tmp.path())
        .arg("--")
        .arg(venv.join("bin/python"))
        .arg(repo().join("crates/cli/tests/rclpy/clock_publisher.py"))
        .arg("--log")
        .arg(&log)
        .args(["--start", &START_S.to_string(), "--speed", &SPEED.to_string()])
        .args(["--rate", &RATE_HZ.to_string(), "--duration", &DURATION_S.to_string()]);
    rclpy_env(&mut cmd, distro, domain);
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "record --record-clock failed: {}\n{stderr}", out.status);
    let dir = tmp.join("clock");

    let published: Vec<(i64, i64)> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| {
            let (a, b) = l.split_once(' ').unwrap();
            (a.parse().unwrap(), b.parse().unwrap())
        })
        .collect();
    assert!(published.len() as f64 > DURATION_S * RATE_HZ * 0.8, "{} publications", published.len());
    let (samples, _) = sim_time_events(&dir);
    assert!(samples.len() >= 2, "{} sim_time events\n{stderr}", samples.len());
    assert!(samples.iter().all(|s| s.2 == "clock_recorder"), "{samples:?}");

    // 1 Hz of wall time.
    let gaps: Vec<f64> = samples.windows(2).map(|w| (w[1].0 - w[0].0) as f64 / 1e9).collect();
    assert!(gaps.iter().all(|g| (0.8..=1.2).contains(g)), "gaps between sim_time events (s): {gaps:?}");
    // Recorded all the while /clock was published: the first tick within a second of the first
    // publication, then every second (the gaps above) until the last one, within a second of it.
    let (first_pub, last_pub) = (published[0].0, published.last().unwrap().0);
    let inside: Vec<i64> = samples.iter().map(|s| s.0).filter(|&t| t >= first_pub && t <= last_pub).collect();
    let during = inside.len();
    let span_s = (last_pub - first_pub) as f64 / 1e9;
    let covered = |a: i64, b: i64| (b - a) as f64 / 1e9 <= 1.2;
    assert!(
        !inside.is_empty() && covered(first_pub, inside[0]) && covered(*inside.last().unwrap(), last_pub),
        "{during} sim_time events while /clock was published for {span_s:.2} s: {samples:?}"
    );
    // Each stamp is a clock that was published: the last one published before the event, or the
    // one before it (still in flight); so within one publication of the clock published then.
    let period_sim = (SPEED / RATE_HZ * 1e9) as i64;
    let mut max_err = 0i64;
    for &(ts, stamp, _) in &samples {
        let k = published.partition_point(|p| p.0 <= ts);
        assert!(k > 0, "a sim_time event at {ts} before the first publication at {first_pub}");
        let j = published.iter().position(|p| p.1 == stamp);
        assert!(
            j.is_some_and(|j| j + 2 >= k && j < k),
            "stamp {stamp} at {ts}: publication {j:?}, but {} was published last then (#{})",
            published[k - 1].1,
            k - 1
        );
        max_err = max_err.max(published[k - 1].1 - stamp);
    }
    // The fit.
    let r = analyze_json(&[], &[&dir]);
    let st = &r["system"]["sim_time"];
    assert_eq!(st["samples"].as_u64(), Some(samples.len() as u64), "{st:#}");
    let slope = st["fit"]["slope"].as_f64().unwrap();
    assert!(
        (slope / SPEED - 1.0).abs() < 0.01,
        "slope {slope}: {st:#}\nsamples (system ns, stamp): {samples:?}\npublished from {first_pub} to {last_pub}"
    );
    eprintln!(
        "record --record-clock ({distro}): {} sim_time events over {:.2} s of wall time ({} during {span_s:.2} s of \
         /clock), gaps {:.3}..{:.3} s, max stamp error {:.1} ms of sim time (publication period {} ms), \
         slope {slope:.5}, residual rms {:.1} ms",
        samples.len(),
        (samples.last().unwrap().0 - samples[0].0) as f64 / 1e9,
        during,
        gaps.iter().cloned().fold(f64::MAX, f64::min),
        gaps.iter().cloned().fold(0.0, f64::max),
        max_err as f64 / 1e6,
        period_sim / 1_000_000,
        st["residual_rms_ns"].as_f64().unwrap() / 1e6
    );

    // --time sim: the times printed are sim times.
    let rs = analyze_json(&["--time", "sim"], &[&dir]);
    assert_eq!(rs["time"], "sim");
    let (b, e) = (rs["begin_ns"].as_i64().unwrap(), rs["end_ns"].as_i64().unwrap());
    let (sb, se) = (r["begin_ns"].as_i64().unwrap(), r["end_ns"].as_i64().unwrap());
    let end_sim = START_S * 1e9 + SPEED * (se - first_pub) as f64;
    assert!((e as f64 - end_sim).abs() < 0.02 * SPEED * 1e9, "end {e} vs {end_sim}");
    assert!((((e - b) as f64) / ((se - sb) as f64) / SPEED - 1.0).abs() < 0.01, "{b} {e} {sb} {se}");
    // Streamed, each slice keeps its own time's samples: the same fit, the same sim times.
    let st_streamed = analyze_json(&["--stream", "always", "--slice-size", "16K", "--time", "sim"], &[&dir]);
    assert!(st_streamed["streamed"]["slices"].as_u64().unwrap() > 1, "{}", st_streamed["streamed"]);
    assert_eq!(st_streamed["system"]["sim_time"], rs["system"]["sim_time"]);
    assert_eq!((&st_streamed["begin_ns"], &st_streamed["end_ns"]), (&rs["begin_ns"], &rs["end_ns"]));
    let text = rostrace().args(["analyze", "--time", "sim"]).arg(&dir).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    let line = text.lines().find(|l| l.starts_with("sim time: ")).unwrap_or_else(|| panic!("{text}"));
    assert!(text.contains("Times in sim time"), "{text}");
    // The trace's end, in sim seconds.
    assert!(line.contains(&format!("{:.3} s (", e as f64 / 1e9)), "{line} (end {e})");
    assert!(text.contains("Sim time (ros2_caret:sim_time"), "{text}");
}

/// CARET's light list (ros2caret/verb/record.py, written down here independently of rostrace's).
const CARET_LIGHT: &[&str] = &[
    "ros2:*callback*",
    "ros2_caret:*callback*",
    "ros2:dispatch*",
    "ros2_caret:dispatch*",
    "ros2:rclcpp*",
    "ros2_caret:rclcpp*",
    "ros2_caret:rmw*",
    "ros2:rmw_take",
    "*callback_group*",
    "ros2_caret:*executor",
    "ros2_caret:dds_bind*",
    "ros2:rcl_*init",
    "ros2_caret:rcl_*init",
    "ros2_caret:caret_init",
    "ros2_caret:sim_time",
    "ros2:message_construct",
    "agnocast:agnocast*",
    "ros2_caret:agnocast*",
    "ros2:rcl_publish",
];

fn glob(p: &str, name: &str) -> bool {
    let re = format!("^{}$", regex_lite::escape(p).replace("\\*", ".*"));
    regex_lite::Regex::new(&re).unwrap().is_match(name)
}

/// `--light` records CARET's light list only (embedded and LTTng backends), and the trace still
/// analyzes: nodes, callbacks and their runs.
#[test]
fn light_records_carets_light_list() {
    let mut backends = vec!["embedded"];
    if require(have_lttng(), "LTTng") {
        backends.push("lttng");
    }
    for (i, backend) in backends.into_iter().enumerate() {
        let _lock = (backend == "lttng").then(lttng_lock);
        let tmp = TempDir::new(&format!("light-{backend}"));
        let dir = tmp.join("trace");
        let domain = 231 + i;
        let out = rostrace()
            .args(["demo", "--light", "--backend", backend, "--duration", "2"])
            .args(["--domain", &domain.to_string(), "-o"])
            .arg(&dir)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{backend}: demo --light failed: {}\n{stderr}", out.status);
        let (_, names) = sim_time_events(&dir);
        let mut kinds: Vec<&str> = names.iter().map(String::as_str).collect();
        kinds.sort();
        kinds.dedup();
        let outside: Vec<&&str> = kinds.iter().filter(|n| !CARET_LIGHT.iter().any(|p| glob(p, n))).collect();
        assert!(outside.is_empty(), "{backend}: events outside the light list: {outside:?} (all: {kinds:?})");
        for want in ["ros2:rcl_node_init", "ros2:callback_start", "ros2:rmw_take", "ros2:rcl_publish"] {
            assert!(kinds.contains(&want), "{backend}: no {want}: {kinds:?}");
        }
        assert!(!kinds.contains(&"ros2:rmw_publish"), "{backend}: {kinds:?}");
        let r = analyze_json(&[], &[&dir]);
        assert_eq!(r["nodes"].as_array().unwrap().len(), rostrace_demo::NODES.len(), "{backend}");
        let runs: u64 = r["callbacks"].as_array().unwrap().iter().map(|c| c["count"].as_u64().unwrap()).sum();
        assert!(runs > 0, "{backend}: no callback runs");
        eprintln!("{backend} --light: {} events of {} kinds: {kinds:?}", names.len(), kinds.len());
        if i == 0 {
            // `--time sim` without sim_time samples: an error that names the trace and how to record them.
            let out = rostrace().args(["analyze", "--time", "sim"]).arg(&dir).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{err}");
            assert!(
                err.contains(&dir.display().to_string())
                    && err.contains("0 sim_time samples")
                    && err.contains("--record-clock"),
                "{err}"
            );
        }
    }
    // The list replaces --ust: both at once is a usage error.
    let out = rostrace().args(["record", "--light", "-u", "ros2:*", "--", "true"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}
