//! `rostrace analyze --stream`: a streamed analysis, slice of time by slice of time, equals the
//! analysis in memory in every figure it computes (percentiles within the documented relative
//! error), on the shared traces and on a generated recording whose callbacks run across many
//! slices; and it says what it leaves out.

mod common;
#[path = "../../analysis/tests/support/kernel.rs"]
mod kernel;
#[path = "../../analysis/tests/support/links.rs"]
mod links;
#[path = "../../analysis/tests/support/system.rs"]
mod system;

use common::*;
use rostrace_ctf::write::Payload;
use serde_json::Value;
use std::path::Path;
use system::{Sys, MS};

/// Analyses `trace` in memory and streamed in slices of `slice`; asserts they agree, and
/// returns the streamed report.
fn agree(trace: &Path, slice: &str) -> Value {
    let a = analyze_json(&["--stream", "never"], &[trace]);
    let b = analyze_json(&["--stream", "always", "--slice-size", slice, "--longest-paths"], &[trace]);
    assert!(a.get("streamed").is_none());
    let mut out = Vec::new();
    differences(&a, &b, "", &mut out);
    assert!(out.is_empty(), "{} in slices of {slice}: {} differences:\n{}", trace.display(), out.len(), out.join("\n"));
    b
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn streamed_analyses_of_the_shared_traces_equal_those_in_memory() {
    let Some(root) = rostrace_testkit::test_data_path("traces") else { return };
    let mut readings = std::collections::BTreeSet::new();
    for (name, slice, at_least) in [
        ("tum-autoware-carla", "256K", 100),
        ("tum-autoware-carla", "4M", 7),
        ("caret-analyze-samples", "256K", 9),
        ("caret-demos-e2e-2021", "256K", 2),
        ("tc-ros2-example2", "256K", 16),
        ("caret-demos-e2e-jazzy", "64K", 3),
        ("rosworld2021-pingpong", "16K", 5),
    ] {
        let s = agree(&root.join(name), slice);
        let streamed = &s["streamed"];
        assert!(streamed["slices"].as_u64().unwrap() >= at_least, "{name}: {streamed}");
        assert_eq!(streamed["margin_ns"], 2_000_000_000u64);
        let left: Vec<&str> = streamed["not_computed"].as_array().unwrap().iter().filter_map(|v| v.as_str()).collect();
        assert!(left.is_empty(), "{name}: {left:?}");
        readings.insert(streamed["readings"].as_u64().unwrap());
    }
    // The longest paths followed in the one reading where the first slice's architecture is the
    // whole recording's (the jazzy demo), in a second one where it is not (Autoware).
    assert_eq!(readings, [1, 2].into());
    // Kernel scheduling, memory and function profile: the system analyses.
    let Some(edge) = rostrace_testkit::test_data_path("ctf-edge") else { return };
    for (name, slice, section) in [
        ("tc-many-threads", "1M", "cpu_time"),
        ("tc-bug446190", "64K", "cpu_time"),
        ("tc-memory", "1M", "memory"),
        ("tc-cyg-profile_glxgears-cyg-profile", "16K", "profile"),
    ] {
        let s = agree(&edge.join(name), slice);
        assert!(s["streamed"]["slices"].as_u64().unwrap() >= 4, "{name}: {}", s["streamed"]);
        assert!(s["system"].get(section).is_some(), "{name}: no {section}");
    }
}

/// A chain of three nodes, a message every 10 ms for `secs`, and a second chain whose nodes are
/// declared at `late` (ns) and pass a message every 10 ms from then on.
fn late_nodes(dir: &Path, secs: u64, late: u64) {
    let mut s = Sys::new();
    let first = s.chain("early", 3, 10 * MS);
    let mut second = None;
    s.write_rounds(dir, secs * 100, 10 * MS, |s, _, t| {
        s.pass(&first, t, |k| 1000 + k as i32);
        if t >= late {
            let chain = second.get_or_insert_with(|| {
                s.declare_at(t);
                s.chain("late", 3, 10 * MS)
            });
            s.pass(chain, t + 5 * MS, |k| 3000 + k as i32);
        }
    });
}

#[test]
fn nodes_declared_late_are_known_to_every_slice_after_them() {
    // The slices, read two at a time, learn which packets before them declare objects from the
    // passes of the slices before. A slice whose reading starts after packets being read by
    // another slice guesses that they declare nothing when the slice before that one declared
    // nothing, and is read again when they did. Here, six slices of 6.7 s, and nodes declared
    // in the third, fourth or fifth one, past the margin (2 s) the slice before it reads after
    // its own time, and before the margin the slice after it reads before its own.
    let dir = rostrace_testkit::TempDir::new("stream-late-nodes");
    for (k, at) in [16_500u64, 23_000, 30_000].into_iter().enumerate() {
        let trace = dir.join(format!("trace{k}"));
        late_nodes(&trace, 40, at * MS);
        let size = std::fs::metadata(trace.join("channel0_0")).unwrap().len();
        for slice in ["16K".to_string(), size.div_ceil(6).to_string()] {
            let s = agree(&trace, &slice);
            let late = s["callbacks"].as_array().unwrap().iter().filter(|c| c["node"].as_str() == Some("/late/n2"));
            let runs: u64 = late.map(|c| c["count"].as_u64().unwrap()).sum();
            assert_eq!(runs, (40_000 - at) / 10 + 1, "{at} ms, slices of {slice}");
        }
    }
}

/// A chain of three nodes, a message every 10 ms for `secs`, and a node that declares a new
/// timer every 10 ms and runs it once: objects declared all through the recording, as
/// Autoware's timers are.
fn declaring_all_along(dir: &Path, secs: u64) {
    let mut s = Sys::new();
    let chain = s.chain("chain", 3, 10 * MS);
    let maker = s.node("maker");
    s.write_rounds(dir, secs * 100, 10 * MS, |s, _, t| {
        s.pass(&chain, t, |k| 1000 + k as i32);
        s.declare_at(t + 2 * MS);
        let timer = s.timer(maker, 10 * MS);
        s.run(2000, timer, t + 3 * MS, t + 4 * MS);
    });
}

#[test]
fn each_declaration_is_read_again_at_most_once_however_many_slices() {
    // A slice's pass starts from what the slice before it on its thread kept of the objects
    // declared before a time, and reads again only the declarations after it: in all, at most
    // the recording's, where every slice reading all those before it would read them again
    // once per slice after them.
    let dir = rostrace_testkit::TempDir::new("stream-declaring");
    let trace = dir.join("trace");
    declaring_all_along(&trace, 60);
    let info = rostrace().args(["info", "--json"]).arg(&trace).output().unwrap();
    let info: Value = serde_json::from_slice(&info.stdout).unwrap();
    let declaring =
        |n: &str| ["_init", "_callback_added", "_callback_register", "_link_node"].iter().any(|e| n.ends_with(e));
    let inits: u64 = info["events_per_name"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| declaring(e[0].as_str().unwrap()))
        .map(|e| e[1].as_u64().unwrap())
        .sum();
    assert!(inits > 24_000, "{inits} initialization events");
    // Slices shorter than the margins, whose passes start from the time their reading starts;
    // and longer ones, whose passes read again the declarations of the slice before them.
    for (slice, at_least) in [("64K", 80), ("512K", 10)] {
        let s = agree(&trace, slice);
        let streamed = &s["streamed"];
        assert!(streamed["slices"].as_u64().unwrap() >= at_least, "{streamed}");
        let again = streamed["declarations_again"].as_u64().unwrap();
        let long = streamed["slice_ns"].as_i64().unwrap() > streamed["margin_ns"].as_i64().unwrap();
        assert!(again <= inits && (again > 0) == long, "slices of {slice}: {again} read again of {inits}: {streamed}");
        let made = s["callbacks"].as_array().unwrap().iter().filter(|c| c["node"].as_str() == Some("/maker")).count();
        assert_eq!(made, 6000, "slices of {slice}: the timers of /maker");
    }
}

/// A chain of four nodes, a message every 10 ms for `secs`, and a timer whose callback runs
/// 5 s (longer than the margin) once every 20 s, the last time until after the recording ends.
fn long_runs(dir: &Path, secs: u64) {
    let mut s = Sys::new();
    let chain = s.chain("chain", 4, 10 * MS);
    let slow = {
        let n = s.node("slow");
        s.timer(n, 20_000 * MS)
    };
    let rounds = secs * 100;
    let mut slow_end = None;
    // A round at a time, so that the events are written in time order.
    s.write_rounds(dir, rounds, 10 * MS, |s, round, t| {
        s.pass(&chain, t, |k| 1000 + k as i32);
        if let Some(end) = slow_end.filter(|&e| e < t + 10 * MS) {
            s.ev(end, 2000, "ros2:callback_end", Payload::new().u64(slow));
            slow_end = None;
        }
        if round % 2000 == 7 {
            let start = t + 3 * MS;
            s.ev(start, 2000, "ros2:callback_start", Payload::new().u64(slow).i32(0));
            slow_end = (round + 2000 < rounds).then_some(start + 5_000 * MS);
        }
    });
}

#[test]
fn runs_longer_than_the_margin_are_carried_across_slices() {
    let dir = rostrace_testkit::TempDir::new("stream-long-runs");
    let trace = dir.join("trace");
    long_runs(&trace, 90);
    // Slices of 0.3 s to 11 s: each slow run crosses up to twenty, or ends within the margin
    // after its slice (seen whole there, its end alone by the next); the same figures.
    for slice in ["16K", "320K", "480K"] {
        agree(&trace, slice);
    }
    // About 80 slices of 1.1 s: each slow run crosses four or five slices.
    let s = agree(&trace, "64K");
    assert!(s["streamed"]["slices"].as_u64().unwrap() > 50, "{}", s["streamed"]);
    let slow =
        s["callbacks"].as_array().unwrap().iter().find(|c| c["node"] == "/slow").expect("the slow timer's callback");
    // Five runs of 5 s whole; the last one ends after the recording: unfinished.
    assert_eq!((slow["count"].as_u64(), slow["unfinished"].as_u64()), (Some(4), Some(1)), "{slow}");
    assert_eq!(slow["duration_ns"]["min"], 5_000 * MS);
    assert_eq!(slow["period_ns"]["count"], 4);
    assert_eq!(s["unmatched_callback_ends"], 0);
    assert_eq!(s["flows_matched"], 3 * 9000);
}

#[test]
fn what_cannot_be_streamed_is_analysed_in_memory_and_said() {
    let dir = rostrace_testkit::TempDir::new("stream-refused");
    let trace = dir.join("trace");
    long_runs(&trace, 5);
    // Small: `auto` keeps it in memory, silently.
    let auto = analyze_json(&[], &[&trace]);
    assert!(auto.get("streamed").is_none());
    // Streamed, the longest paths are followed only when asked for; it says so.
    let streamed = analyze_json(&["--stream", "always"], &[&trace]);
    assert_eq!(streamed["streamed"]["not_computed"], serde_json::json!(["longest paths"]));
    assert!(streamed.get("longest_paths").is_none_or(Value::is_null), "{}", streamed["longest_paths"]);
    let text = rostrace().args(["analyze", "--stream", "always"]).arg(&trace).output().unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains("; not computed: longest paths"));
    // A window cannot be streamed: analysed in memory, with a warning that says why.
    let w = analyze_json(&["--stream", "always", "--begin", "1"], &[&trace]);
    assert!(w.get("streamed").is_none());
    let warned = w["warnings"].as_array().unwrap().iter().any(|x| {
        x.as_str().is_some_and(|x| x.contains("analysed in memory, not streamed: a time window is analysed in memory"))
    });
    assert!(warned, "{}", w["warnings"]);
    // Bad sizes name the argument.
    for bad in ["0", "lots"] {
        let out = rostrace().args(["analyze", "--slice-size", bad]).arg(&trace).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains("--slice-size"), "{err}");
    }
}

/// A timer's callback run every millisecond for `secs`, and a message published once a second:
/// a recording of callbacks and few messages.
fn callbacks_alone(dir: &Path, secs: u64) {
    let mut s = Sys::new();
    let chain = s.chain("rare", 2, 1_000 * MS);
    let node = s.node("ticker");
    let timer = s.timer(node, MS);
    s.write_rounds(dir, secs * 1000, MS, |s, round, t| {
        s.run(1000, timer, t, t + 100_000);
        if round % 1000 == 0 {
            s.pass(&chain, t + 200_000, |k| 2000 + k as i32);
        }
    });
}

#[test]
fn the_automatic_choice_streams_recordings_full_of_messages_from_two_slices() {
    // `--stream auto` streams from 1 GiB, and from two slices when the recording is full of
    // messages (a tenth of its ROS 2 events or more publish one, in its files' last packets):
    // in memory, they take the longer the more there are. A recording of callbacks and few
    // messages stays in memory up to 1 GiB, where it is faster.
    let dir = rostrace_testkit::TempDir::new("stream-auto");
    let (chain, ticks) = (dir.join("chain"), dir.join("ticks"));
    late_nodes(&chain, 40, u64::MAX);
    callbacks_alone(&ticks, 40);
    let size = |t: &Path| std::fs::metadata(t.join("channel0_0")).unwrap().len();
    for (trace, messages) in [(&chain, true), (&ticks, false)] {
        let bytes = size(trace);
        assert!(bytes > 2 << 20, "{}: {bytes} bytes", trace.display());
        for (slice, two) in [(bytes / 2 - 1, true), (bytes / 2 + 1, false)] {
            let a = analyze_json(&["--slice-size", &slice.to_string()], &[trace]);
            assert_eq!(a.get("streamed").is_some(), messages && two, "{}: slices of {slice}", trace.display());
        }
    }
    // What it streams is what `always` streams.
    let slice = (size(&chain) / 3).to_string();
    let auto = analyze_json(&["--slice-size", &slice], &[&chain]);
    assert_eq!(auto, analyze_json(&["--stream", "always", "--slice-size", &slice], &[&chain]));
}

#[test]
fn check_streams_without_paths_and_gives_the_same_outcomes() {
    let dir = rostrace_testkit::TempDir::new("stream-check");
    let trace = dir.join("trace");
    long_runs(&trace, 30);
    let expect = dir.join("expect.yaml");
    std::fs::write(
        &expect,
        "callbacks:\n- node: /slow\n  runs: 1\n  duration: {max: 4s}\n- node: /chain/n0\n  period: {p50: [9ms, 11ms]}\n\
         topics:\n- topic: /chain/t1\n  latency: {p99: 1ms}\n  dropped: 0\n",
    )
    .unwrap();
    let check = |args: &[&str]| {
        let out = rostrace()
            .args(["check", "--expect"])
            .arg(&expect)
            .args(["--json", "-"])
            .args(args)
            .arg(&trace)
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out.status.code(), v["outcomes"].clone())
    };
    let (code, streamed) = check(&["--stream", "always", "--slice-size", "64K"]);
    assert_eq!((code, check(&["--stream", "never"])), (Some(1), (Some(1), streamed.clone())));
    // The slow callback's one whole run of 5 s (the second is still running at the end),
    // carried across slices, fails its limit; the rest pass.
    let status: Vec<&str> = streamed.as_array().unwrap().iter().map(|o| o["status"].as_str().unwrap()).collect();
    assert_eq!(status, ["pass", "fail", "pass", "pass", "pass"], "{streamed}");
    assert_eq!(streamed[1]["measured"], 5.0e9);
}

/// The fields of a CSV line (quoted fields may hold commas and doubled quotes).
fn fields(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted, mut chars) = (Vec::new(), String::new(), false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// `rostrace export --format csv` of `trace` in memory and streamed (slices of `slice`): every
/// table equal, but the percentiles (within 0.5 %), the order of the runs longer than the margin
/// (written when they end) and of the service calls (slice by slice), and the run of a
/// publication or take made in one of those (left empty when streamed). Returns the rows of the
/// streamed runs.
fn exports_agree(trace: &Path, slice: &str) -> usize {
    let dir = rostrace_testkit::TempDir::new("stream-export");
    for (name, args) in [("mem", vec!["--stream", "never"]), ("str", vec!["--stream", "always", "--slice-size", slice])]
    {
        let out = rostrace()
            .args(["export", "--format", "csv", "--events", "none", "--name", "r", "-o"])
            .arg(dir.join(name))
            .args(args)
            .arg(trace)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let read = |side: &str, table: &str| std::fs::read_to_string(dir.join(side).join(table).join("r.csv")).unwrap();
    let mut runs = 0;
    for table in std::fs::read_dir(dir.join("mem")).unwrap().flatten().map(|e| e.file_name().into_string().unwrap()) {
        let (a, b) = (read("mem", &table), read("str", &table));
        match table.as_str() {
            // (A slice's calls are written clients first, then servers.)
            "service_calls" => {
                let sorted = |s: &str| {
                    let mut v: Vec<&str> = s.lines().collect();
                    v.sort();
                    v.join("\n")
                };
                assert_eq!(sorted(&a), sorted(&b), "{table}");
            }
            "callback_runs" => {
                let sorted = |s: &str| {
                    let mut v: Vec<&str> = s.lines().collect();
                    v.sort();
                    v.join("\n")
                };
                assert_eq!(sorted(&a), sorted(&b), "{table}");
                runs = b.lines().count() - 1;
            }
            _ => {
                let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
                assert_eq!(a.len(), b.len(), "{table}");
                let head = fields(a[0]);
                for (x, y) in a.iter().zip(&b).filter(|(x, y)| x != y) {
                    for ((col, p), q) in head.iter().zip(fields(x)).zip(fields(y)).filter(|((_, p), q)| p != q) {
                        let near = |p: &str, q: &str| {
                            let (p, q): (f64, f64) = (p.parse().unwrap(), q.parse().unwrap());
                            (p - q).abs() <= 0.005 * p.abs() + 1.0
                        };
                        let ok = match col.as_str() {
                            c if c.contains("p50") || c.contains("p90") || c.contains("p99") => near(&p, &q),
                            "callback_run" | "run" if matches!(table.as_str(), "publications" | "takes") => {
                                q.is_empty()
                            }
                            _ => false,
                        };
                        assert!(ok, "{table}: {col}: {p} in memory, {q} streamed:\n{x}\n{y}");
                    }
                }
            }
        }
    }
    runs
}

#[test]
fn a_streamed_export_writes_the_tables_of_the_export_in_memory() {
    let dir = rostrace_testkit::TempDir::new("stream-export-long-runs");
    let trace = dir.join("trace");
    long_runs(&trace, 45);
    // Every run, message and take; the slow runs (5 s, across slices) among them.
    assert_eq!(exports_agree(&trace, "64K"), 4500 * 4 + 3);
    let Some(root) = rostrace_testkit::test_data_path("traces") else { return };
    assert!(exports_agree(&root.join("tum-autoware-carla"), "256K") > 300_000);
}

/// Two nodes, a message a second for `secs`, each taken 3 s after it was published (longer than
/// the margin).
fn late_messages(dir: &Path, secs: u64) {
    let mut s = Sys::new();
    let chain = s.chain("late", 2, 1_000 * MS);
    let (Some(publisher), Some(sub)) = (chain[0].2, chain[1].1) else { panic!("a chain of two") };
    let (mut round, mut due) = (0, std::collections::VecDeque::new());
    s.write_batches(dir, 4096, |s| {
        if round == secs {
            return false;
        }
        let t = 10 * MS + round * 1_000 * MS;
        while due.front().is_some_and(|&(at, _)| at < t + 1_000 * MS) {
            let (at, src) = due.pop_front().unwrap();
            s.deliver(1001, sub, src, at, 10_000);
        }
        let src = s.publish(1000, publisher, t);
        due.push_back((t + 3_000 * MS, src));
        round += 1;
        true
    });
}

#[test]
fn a_message_taken_later_than_the_margin_is_counted_once() {
    let dir = rostrace_testkit::TempDir::new("stream-late");
    let trace = dir.join("trace");
    late_messages(&trace, 40);
    let topic = |v: &Value| v["topics"].as_array().unwrap().iter().find(|t| t["name"] == "/late/t0").unwrap().clone();
    let whole = topic(&analyze_json(&["--stream", "never"], &[&trace]));
    assert_eq!((whole["takes"].as_u64(), whole["matched"].as_u64()), (Some(37), Some(37)), "{whole}");
    // In slices of a few seconds: the messages taken in a slice whose reading does not reach back
    // to their publication are unmatched there, and counted once, as takes, not as matched too.
    let streamed = analyze_json(&["--stream", "always", "--slice-size", "1K"], &[&trace]);
    assert!(streamed["streamed"]["slices"].as_u64().unwrap() >= 5, "{}", streamed["streamed"]);
    let t = topic(&streamed);
    let (takes, matched, unmatched) =
        (t["takes"].as_u64().unwrap(), t["matched"].as_u64().unwrap(), t["unmatched"].as_u64().unwrap());
    assert_eq!((takes, matched + unmatched), (37, 37), "{t}");
    assert!(unmatched > 0 && matched > 0, "{t}");
    assert_eq!(streamed["flows_matched"].as_u64(), Some(matched));
}

/// The data of a report page: its report and the instances its plots draw.
fn page_data(html: &Path) -> Value {
    let page = std::fs::read_to_string(html).unwrap();
    let from = page.find("id=\"data\">").unwrap() + "id=\"data\">".len();
    let to = from + page[from..].find("</script>").unwrap();
    serde_json::from_str(&page[from..to]).unwrap()
}

/// Per callback of the page's report (its index), the durations its runs are drawn with; per
/// topic, the latencies of its messages.
fn drawn(d: &Value) -> (Vec<Vec<i64>>, std::collections::BTreeMap<String, Vec<i64>>) {
    let i = &d["inst"];
    let ints = |k: &str| i[k].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect::<Vec<i64>>();
    let mut runs = vec![Vec::new(); d["report"]["callbacks"].as_array().unwrap().len()];
    for (c, dur) in ints("run_c").into_iter().zip(ints("run_d")) {
        if c >= 0 {
            runs[c as usize].push(dur);
        }
    }
    let mut flows = std::collections::BTreeMap::<String, Vec<i64>>::new();
    for (t, lat) in ints("fl_topic").into_iter().zip(ints("fl_lat")) {
        flows.entry(i["topics"][t as usize].as_str().unwrap().to_string()).or_default().push(lat);
    }
    (runs, flows)
}

/// `report` streamed: its page holds the streamed analysis's report, and draws, of each callback
/// and topic, the runs and messages that are its extremes (its longest and shortest run, its
/// slowest and fastest message, every unfinished run) out of fewer than there are; the page
/// renders in Chromium and says what it draws.
#[test]
fn a_streamed_report_draws_the_extremes_of_every_callback_and_topic() {
    let dir = rostrace_testkit::TempDir::new("stream-report");
    let trace = dir.join("trace");
    long_runs(&trace, 90);
    let mut traces = vec![(trace, "64K")];
    if let Some(t) = rostrace_testkit::test_data_path("traces/tum-autoware-carla") {
        traces.push((t, "256K"));
    }
    for (k, (trace, slice)) in traces.iter().enumerate() {
        let [memory, streamed] = [["--stream", "never"], ["--stream", "always"]].map(|stream| {
            let html = dir.join(format!("{k}-{}.html", stream[1]));
            let out = rostrace()
                .arg("report")
                .arg(trace)
                .args(stream)
                .args(["--slice-size", slice, "-o"])
                .arg(&html)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            (html.clone(), page_data(&html))
        });
        let (m, s) = (&memory.1, &streamed.1);
        let want = analyze_json(&["--stream", "always", "--slice-size", slice], &[trace]);
        assert_eq!(s["report"]["callbacks"], want["callbacks"], "{}", trace.display());
        assert_eq!(s["report"]["streamed"], want["streamed"]);
        let sampled = &s["inst"]["sampled"];
        assert!(m["inst"].get("sampled").is_none());
        // Every run and message counted; fewer drawn.
        let all = |d: &Value, k: &str| d["inst"][k].as_array().unwrap().len() as u64;
        assert_eq!(sampled["runs"].as_u64(), Some(all(m, "run_s")), "{sampled}");
        assert_eq!(sampled["flows"].as_u64(), Some(all(m, "fl_p")), "{sampled}");
        assert_eq!(sampled["runs_drawn"].as_u64(), Some(all(s, "run_s")));
        assert!(all(s, "run_s") < all(m, "run_s") / 2, "{sampled}");
        // (The Autoware trace has no message events.)
        assert!(all(s, "fl_p") < all(m, "fl_p") / 2 || (k > 0 && all(m, "fl_p") == 0), "{sampled}");
        // The extremes of each callback and topic, drawn (the callbacks are in the same order:
        // the reports' lists are equal but for percentiles).
        let ((m_runs, m_flows), (s_runs, s_flows)) = (drawn(m), drawn(s));
        let extremes = |v: &[i64]| {
            let done: Vec<i64> = v.iter().copied().filter(|&d| d >= 0).collect();
            (done.iter().min().copied(), done.iter().max().copied(), v.len() - done.len())
        };
        assert_eq!(m_runs.len(), s_runs.len());
        for (c, (a, b)) in m_runs.iter().zip(&s_runs).enumerate() {
            assert_eq!(extremes(a), extremes(b), "callback {c}: {}", s["report"]["callbacks"][c]);
        }
        assert_eq!(m_flows.keys().collect::<Vec<_>>(), s_flows.keys().collect::<Vec<_>>());
        for (t, a) in &m_flows {
            assert_eq!(extremes(a), extremes(&s_flows[t]), "topic {t}");
        }
        if k == 0 {
            // The slow timer's four runs of 5 s and its unfinished one, all drawn.
            let slow = s["report"]["callbacks"].as_array().unwrap().iter().position(|c| c["node"] == "/slow").unwrap();
            let five = s_runs[slow].iter().filter(|&&d| d == 5_000 * MS as i64).count();
            assert_eq!((five, extremes(&s_runs[slow]).2), (4, 1), "{:?}", s_runs[slow]);
        }
        if have_chromium() {
            let dom = chromium_dom(&streamed.0);
            assert!(dom.contains("data-rendered=\"ok\""), "the report did not finish rendering");
            assert_eq!(attr(&dom, "<body", "data-errors"), None, "script errors");
            assert!(dom.contains("data-streamed"), "the page says it was streamed");
            assert_eq!(attr(&dom, "data-key=\"runs\"", "data-value"), sampled["runs"].as_u64().map(|n| n.to_string()));
            assert!(attr(&dom, "data-plot=\"timeline\"", "data-drawn").is_some_and(|d| d != "0"));
            assert!(attr(&dom, "data-plot=\"callback-time\"", "data-drawn").is_some_and(|d| d != "0"));
            assert!(dom.contains("data-no-hist"), "no histogram drawn from the extremes");
        } else {
            require(false, "chromium");
        }
    }
}

/// `report --longest-paths` streamed: its paths are those of the report in memory, with the same
/// counts and latency; each path's plot draws, out of every message that went the whole way, the
/// fastest and the slowest of each part of the recording (messages the page in memory draws
/// too), its extremes among them; the page renders the plot in Chromium.
#[test]
fn a_streamed_report_follows_its_longest_paths_and_draws_their_extremes() {
    let dir = rostrace_testkit::TempDir::new("stream-report-paths");
    let trace = dir.join("trace");
    long_runs(&trace, 90);
    let [(_, m), (html, s)] = [["--stream", "never"], ["--stream", "always"]].map(|stream| {
        let html = dir.join(format!("{}.html", stream[1]));
        let out = rostrace()
            .arg("report")
            .arg(&trace)
            .args(stream)
            .args(["--slice-size", "64K", "--longest-paths", "-o"])
            .arg(&html)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let data = page_data(&html);
        (html, data)
    });
    assert!(s["report"]["streamed"]["slices"].as_u64().unwrap() > 10, "{}", s["report"]["streamed"]);
    let (mp, sp) = (&m["report"]["longest_paths"]["paths"], &s["report"]["longest_paths"]["paths"]);
    let paths = sp.as_array().unwrap();
    assert!(!paths.is_empty());
    for (i, p) in paths.iter().enumerate() {
        for k in ["label", "records", "complete", "lost", "superseded"] {
            assert_eq!(p[k], mp[i][k], "path {i}: {k}");
        }
        for k in ["count", "mean", "min", "max"] {
            assert_eq!(p["latency"][k], mp[i]["latency"][k], "path {i}: latency {k}");
        }
        let points = |d: &Value| -> Vec<(i64, i64)> {
            let v =
                |k: &str| d["paths"][i][k].as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect::<Vec<_>>();
            v("s").into_iter().zip(v("lat")).collect()
        };
        let (all, drawn) = (points(&m), points(&s));
        assert_eq!(all.len() as u64, p["complete"].as_u64().unwrap(), "path {i}");
        assert!(!drawn.is_empty() && drawn.len() <= 2 * 1000 && drawn.len() < all.len(), "path {i}: {}", drawn.len());
        assert!(drawn.iter().all(|x| all.contains(x)), "path {i}: a message drawn that went no such way");
        let range = |v: &[(i64, i64)]| (v.iter().map(|x| x.1).min(), v.iter().map(|x| x.1).max());
        assert_eq!(range(&drawn), range(&all), "path {i}: the fastest and the slowest");
    }
    if have_chromium() {
        let dom = chromium_dom(&html);
        assert!(dom.contains("data-rendered=\"ok\""), "the report did not finish rendering");
        assert_eq!(attr(&dom, "<body", "data-errors"), None, "script errors");
        assert!(attr(&dom, "data-plot=\"path-time\"", "data-drawn").is_some_and(|d| d != "0"), "the path's plot");
    } else {
        require(false, "chromium");
    }
}

/// A chain of four nodes passing a message every 10 ms for `secs` s, each hop taking 20 to 50 µs
/// (no two messages alike) times `scale` / 100.
fn varied_chain(dir: &Path, secs: u64, scale: u64) {
    let mut s = Sys::new();
    let chain = s.chain("chain", 4, 10 * MS);
    let mut round = 0;
    s.write_batches(dir, 4096, |s| {
        if round == secs * 100 {
            return false;
        }
        let (mut t, mut src) = (10 * MS + round * 10 * MS, 0);
        for (k, (timer, sub, publ)) in chain.iter().enumerate() {
            let tid = 1000 + k as i32;
            if let Some(cb) = timer {
                s.run(tid, *cb, t, t + 20_000);
            }
            if let Some(sub) = sub {
                s.deliver(tid, *sub, src, t, 10_000);
            }
            if let Some(p) = publ {
                src = s.publish(tid, *p, t + 1_000);
            }
            t += (20_000 + (round * 7919 + k as u64 * 104_729) % 30_000) * scale / 100;
        }
        round += 1;
        true
    });
}

/// `diff --longest-paths` streamed compares the runs' longest paths, as in memory: the same
/// path, found changed, with the statistics of every message (percentiles within the sketch's
/// accuracy), tested on a choice of them; without the flag, the paths are not compared.
#[test]
fn streamed_runs_compare_their_longest_paths_when_asked() {
    let dir = rostrace_testkit::TempDir::new("stream-diff-paths");
    let (base, slow) = (dir.join("base"), dir.join("slow"));
    varied_chain(&base, 120, 100);
    varied_chain(&slow, 120, 130);
    let diff = |args: &[&str]| {
        let out = rostrace().arg("diff").arg(&base).arg(&slow).args(args).args(["--json", "-"]).output().unwrap();
        let d: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        (out.status.code(), d)
    };
    let path_changes = |d: &Value| -> Vec<Value> {
        d["changes"].as_array().unwrap().iter().filter(|c| c["kind"] == "path").cloned().collect()
    };
    let (mc, m) = diff(&["--stream", "never"]);
    let (sc, s) = diff(&["--stream", "always", "--slice-size", "64K", "--longest-paths"]);
    assert_eq!((mc, sc), (Some(1), Some(1)), "a change found");
    let (mp, sp) = (path_changes(&m), path_changes(&s));
    assert_eq!(mp.len(), 1, "{m}");
    assert_eq!(sp.len(), 1, "{s}");
    let (mp, sp) = (&mp[0], &sp[0]);
    assert_eq!(sp["name"], mp["name"]);
    assert_eq!((mp["significant"].as_bool(), sp["significant"].as_bool()), (Some(true), Some(true)), "{sp}");
    for side in ["base", "new"] {
        assert!(sp[side]["count"].as_u64().unwrap() > 10_000, "{side}: more messages than are chosen");
        for k in ["count", "min", "max", "sum"] {
            assert_eq!(mp[side][k], sp[side][k], "{side} {k}");
        }
        let (a, b) = (mp[side]["p50"].as_f64().unwrap(), sp[side]["p50"].as_f64().unwrap());
        assert!((a - b).abs() <= a * 0.005, "{side} p50 {a} {b}");
    }
    assert!(sp["median_ratio"].as_f64().unwrap() > 1.2, "{sp}");
    assert!(s["not_compared"].as_array().unwrap().is_empty(), "{s}");
    // Without the flag, a streamed run follows no path: none is compared.
    let (_, n) = diff(&["--stream", "always", "--slice-size", "64K"]);
    assert!(path_changes(&n).is_empty(), "{n}");
}

/// Two runs of one callback started at the same time on two threads (a reentrant callback
/// group), each running across several slices: each is matched to its own end, in the page's
/// plots and in the exported runs, as in memory.
#[test]
fn long_runs_of_one_callback_on_two_threads_keep_their_own_ends() {
    let dir = rostrace_testkit::TempDir::new("stream-two-threads");
    let trace = dir.join("trace");
    let mut s = Sys::new();
    let chain = s.chain("chain", 2, 10 * MS);
    let cb = {
        let n = s.node("reentrant");
        s.timer(n, 20_000 * MS)
    };
    s.write_rounds(&trace, 3000, 10 * MS, |s, round, t| {
        s.pass(&chain, t, |k| 1000 + k as i32);
        if round == 100 {
            for tid in [3000, 3001] {
                s.ev(t + 3 * MS, tid, "ros2:callback_start", Payload::new().u64(cb).i32(0));
            }
        }
        // The second thread's run ends first: 5 s against 7 s.
        for (r, tid) in [(600, 3001), (800, 3000)] {
            if round == r {
                s.ev(t + 3 * MS, tid, "ros2:callback_end", Payload::new().u64(cb));
            }
        }
    });
    let runs = |stream: &str| -> Vec<(String, i64)> {
        let html = dir.join(format!("{stream}.html"));
        let out = rostrace()
            .arg("report")
            .arg(&trace)
            .args(["--stream", stream, "--slice-size", "32K", "-o"])
            .arg(&html)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let d = page_data(&html);
        let c = d["report"]["callbacks"].as_array().unwrap().iter().position(|c| c["node"] == "/reentrant").unwrap();
        let i = &d["inst"];
        let ints = |k: &str| i[k].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect::<Vec<i64>>();
        let mut v: Vec<(String, i64)> = ints("run_c")
            .into_iter()
            .zip(ints("run_t"))
            .zip(ints("run_d"))
            .filter(|((k, _), _)| *k == c as i64)
            .map(|((_, t), d)| (i["threads"][t as usize].as_str().unwrap().to_string(), d))
            .collect();
        v.sort();
        v
    };
    let (m, s) = (runs("never"), runs("always"));
    assert_eq!(m.iter().map(|r| r.1).collect::<Vec<_>>(), [7_000 * MS as i64, 5_000 * MS as i64], "{m:?}");
    assert_eq!(s, m);
    // The exported runs: each thread's run with its own duration.
    let out_dir = dir.join("csv");
    let out = rostrace()
        .arg("export")
        .arg(&trace)
        .args(["--format", "csv", "--stream", "always", "--slice-size", "32K", "-o"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = std::fs::read_to_string(out_dir.join("callback_runs/trace.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("{name} in {header:?}"));
    let (node, vtid, duration) = (col("node"), col("vtid"), col("duration_ns"));
    let mut got: Vec<(i64, i64)> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[node] == "/reentrant")
        .map(|f| (f[vtid].parse().unwrap(), f[duration].parse().unwrap()))
        .collect();
    got.sort();
    assert_eq!(got, [(3000, 7_000 * MS as i64), (3001, 5_000 * MS as i64)]);
}

/// A timer callback run `n` times (at most 30,011), one a millisecond, each for `dur` ns plus
/// up to 30 µs, no two runs alike.
fn timer_runs(dir: &Path, n: u64, dur: u64) {
    let mut s = Sys::new();
    let node = s.node("worker");
    let timer = s.timer(node, MS);
    let mut i = 0;
    s.write_batches(dir, 4096, |s| {
        for _ in 0..100 {
            if i == n {
                return false;
            }
            let start = 10 * MS + i * MS;
            s.run(3000, timer, start, start + dur + (i * 7919 % 30_011));
            i += 1;
        }
        true
    });
}

/// `--samples` and `diff` streamed: each callback's, topic's and pair's values are a uniform
/// choice of at most 10,000 of them, with the statistics of all of them; `diff` of streamed
/// runs finds the change the runs in memory show, with the same figures (percentiles within
/// the sketch's accuracy), and none between a run and itself.
#[test]
fn streamed_runs_compare_as_those_in_memory() {
    let dir = rostrace_testkit::TempDir::new("stream-diff");
    let (chain, base, slow) = (dir.join("chain"), dir.join("base"), dir.join("slow"));
    long_runs(&chain, 90);
    timer_runs(&base, 30_000, 200_000);
    timer_runs(&slow, 30_000, 300_000);
    let streamed = ["--stream", "always", "--slice-size", "64K"];
    // The samples saved: every name, the statistics of every value, a choice of them.
    for trace in [&chain, &slow] {
        let m = analyze_json(&["--stream", "never", "--samples"], &[trace])["diff_samples"].clone();
        let s = analyze_json(&[&streamed[..], &["--samples"]].concat(), &[trace]);
        assert!(s.get("streamed").is_some(), "streamed");
        let s = &s["diff_samples"];
        for kind in ["callback", "topic", "pair"] {
            let (mk, sk) = (m[kind].as_object().unwrap(), s[kind].as_object().unwrap());
            assert_eq!(mk.keys().collect::<Vec<_>>(), sk.keys().collect::<Vec<_>>(), "{kind}");
            for (name, all) in mk {
                let mut all: Vec<i64> = all.as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
                let chosen: Vec<i64> = sk[name].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
                if trace == &slow {
                    // Its 30,000 durations are all different: some chosen come after the first
                    // 10,000 (in the order of the runs).
                    let first: std::collections::HashSet<i64> = all[..10_000].iter().copied().collect();
                    assert!(chosen.iter().filter(|v| !first.contains(v)).count() > 5_000, "{name}");
                }
                let whole = &s["whole"][kind][name];
                assert_eq!(whole["count"].as_u64(), Some(all.len() as u64), "{kind} {name}");
                assert_eq!(chosen.len(), all.len().min(10_000), "{kind} {name}");
                all.sort_unstable();
                assert_eq!(whole["min"].as_i64(), all.first().copied());
                assert_eq!(whole["max"].as_i64(), all.last().copied());
                assert_eq!(whole["sum"].as_i64(), Some(all.iter().sum::<i64>()));
                // Values of the recording.
                assert!(chosen.iter().all(|v| all.binary_search(v).is_ok()), "{kind} {name}");
            }
        }
    }
    // Narrowed to some nodes, the callbacks saved are the same (those of the report).
    let names = |v: &Value| v["diff_samples"]["callback"].as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    let m = analyze_json(&["--stream", "never", "--samples", "--nodes", "^/chain/n[12]$"], &[&chain]);
    let s = analyze_json(&[&streamed[..], &["--samples", "--nodes", "^/chain/n[12]$"]].concat(), &[&chain]);
    assert_eq!(names(&s), names(&m));
    assert_eq!(names(&m).len(), 2, "{:?}", names(&m));
    assert_eq!(
        s["diff_samples"]["whole"]["callback"].as_object().unwrap().keys().collect::<Vec<_>>(),
        names(&m).iter().collect::<Vec<_>>()
    );
    let diff = |args: &[&str], a: &Path, b: &Path| {
        let out = rostrace().arg("diff").arg(a).arg(b).args(args).args(["--json", "-"]).output().unwrap();
        let d: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        (out.status.code(), d)
    };
    let (mc, m) = diff(&["--stream", "never"], &base, &slow);
    let (sc, s) = diff(&streamed, &base, &slow);
    assert_eq!((mc, sc), (Some(1), Some(1)), "a change found");
    let worker = |d: &Value| {
        d["changes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"].as_str().unwrap().starts_with("/worker"))
            .cloned()
            .unwrap()
    };
    let (mw, sw) = (worker(&m), worker(&s));
    assert_eq!((mw["significant"].as_bool(), sw["significant"].as_bool()), (Some(true), Some(true)), "{sw}");
    for side in ["base", "new"] {
        for k in ["count", "min", "max", "sum"] {
            assert_eq!(mw[side][k], sw[side][k], "{side} {k}");
        }
        let (a, b) = (mw[side]["p50"].as_f64().unwrap(), sw[side]["p50"].as_f64().unwrap());
        assert!((a - b).abs() <= a * 0.005, "{side} p50 {a} {b}");
    }
    assert!(sw["cliff_delta"].as_f64().unwrap() > 0.9, "{sw}");
    assert_eq!(mw["base_rate_hz"], sw["base_rate_hz"]);
    // A run and itself: nothing significant.
    let (code, same) = diff(&streamed, &chain, &chain);
    assert_eq!(code, Some(0), "{same}");
    assert!(same["changes"].as_array().unwrap().len() >= 4, "{same}");
}

/// An executor thread spinning a 10 ms timer for `secs`: get next, wait, execute, the callback;
/// every 500th wait lasts 3 s, longer than the margin.
fn executor_loop(dir: &Path, secs: u64) {
    let mut s = Sys::new();
    let node = s.node("spinner");
    let timer = s.timer(node, 10 * MS);
    let (mut t, mut i) = (10 * MS, 0u64);
    s.write_batches(dir, 4096, |s| {
        if t >= secs * 1000 * MS {
            return false;
        }
        s.ev(t, 3000, "ros2:rclcpp_executor_get_next_ready", &mut Payload::new());
        s.ev(t + 20_000, 3000, "ros2:rclcpp_executor_wait_for_work", Payload::new().i64(-1));
        let wake = t + if i % 500 == 499 { 3_000 * MS } else { 10 * MS };
        s.ev(wake, 3000, "ros2:rclcpp_executor_execute", Payload::new().u64(timer));
        s.run(3000, timer, wake + 1_000, wake + 201_000);
        (t, i) = (wake + 300_000, i + 1);
        true
    });
}

/// The executor phases, streamed: each slice adds the phases between its own events, and a
/// phase longer than the margin is closed by the slice of the thread's next event; equal to the
/// phases in memory.
#[test]
fn executor_phases_are_added_across_slices() {
    let dir = rostrace_testkit::TempDir::new("stream-executor");
    let trace = dir.join("trace");
    executor_loop(&trace, 60);
    let mut wait = None;
    for slice in ["16K", "64K", "256K"] {
        let s = agree(&trace, slice);
        assert!(s["streamed"]["slices"].as_u64().unwrap() >= 3, "{}", s["streamed"]);
        let e = &s["executor_threads"];
        assert_eq!(e.as_array().map(Vec::len), Some(1), "{e}");
        wait = e[0]["wait_ns"].as_i64();
        assert!(e[0]["executions"].as_u64() > Some(3000), "{e}");
    }
    // The long waits are in: seven of 3 s, besides 3,800 of 10 ms.
    assert!(wait > Some(55_000 * MS as i64), "{wait:?}");
    // And in the export's table.
    let out = rostrace()
        .arg("export")
        .arg(&trace)
        .args(["--stream", "always", "--slice-size", "16K", "--format", "csv", "-o"])
        .arg(dir.join("csv"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = std::fs::read_to_string(dir.join("csv/executor_threads/trace.csv")).unwrap();
    assert!(table.contains(&wait.unwrap().to_string()), "{table}");
}

/// `rostrace e2e --json -` of `path` in `trace` (with `extra` arguments) in memory and streamed
/// in slices of `slice`: every value equal, percentiles within the sketch's error, response times
/// compared whatever their order (a streamed path gives each slice's by input). Returns the
/// streamed JSON.
fn e2e_agree(trace: &Path, path: &str, slice: &str, extra: &[&str]) -> Value {
    let run = |mode: &[&str]| {
        let out = rostrace().args(["e2e", "--json", "-", "--path", path]).args(mode).args(extra).arg(trace).output();
        let out = out.unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let mut v: Value = serde_json::from_slice(&out.stdout).unwrap();
        for r in v["response_time"].as_array_mut().unwrap() {
            let mut i = r["instances"].as_array().unwrap().clone();
            i.sort_by_key(|x| (x[0].as_i64(), x[1].as_i64()));
            r["instances"] = Value::Array(i);
        }
        v
    };
    let (a, b) = (run(&["--stream", "never"]), run(&["--stream", "always", "--slice-size", slice]));
    let mut out = Vec::new();
    differences(&a, &b, "", &mut out);
    assert!(out.is_empty(), "{path} in slices of {slice}: {} differences:\n{}", out.len(), out.join("\n"));
    b
}

/// Pseudo-random delays below a bound, the same for a seed (a linear congruential generator).
fn jitter(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |max: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % max
    }
}

/// Four nodes, a message every 10 ms for `secs`: `/s/n0`'s timer publishes `/s/t0`; `/s/n1`
/// takes it (every 13th message is lost) and publishes `/s/t1` in its callback; `/s/n2` takes
/// that, and its timer (30 ms) publishes `/s/t2` from the latest taken (the others superseded);
/// `/s/n3` takes it. Latencies vary from message to message.
fn fused_chain(dir: &Path, secs: u64) {
    let mut s = Sys::new();
    let (n0, n1, n2, n3) = (s.node("s/n0"), s.node("s/n1"), s.node("s/n2"), s.node("s/n3"));
    let (tick0, p0) = (s.timer(n0, 10 * MS), s.publisher(n0, "/s/t0"));
    let (sub1, p1) = (s.subscription(n1, "/s/t0"), s.publisher(n1, "/s/t1"));
    let (sub2, tick2, p2) = (s.subscription(n2, "/s/t1"), s.timer(n2, 30 * MS), s.publisher(n2, "/s/t2"));
    let sub3 = s.subscription(n3, "/s/t2");
    let mut jitter = jitter(7);
    // Every event of a round within its first 5 ms.
    s.write_rounds(dir, secs * 100, 10 * MS, |s, round, t| {
        s.run(1000, tick0, t, t + 20_000);
        let src0 = s.publish(1000, p0, t + 1_000);
        if round % 13 != 5 {
            let take = t + 50_000 + jitter(2 * MS);
            s.deliver(1001, sub1, src0, take, 20_000 + jitter(30_000));
            let src1 = s.publish(1001, p1, take + 500);
            s.deliver(1002, sub2, src1, take + 30_000 + jitter(MS), 10_000);
        }
        if round % 3 == 0 {
            let at = t + 3 * MS + 500_000;
            s.run(1003, tick2, at, at + 20_000);
            let src2 = s.publish(1003, p2, at + 1_000);
            s.deliver(1004, sub3, src2, at + 40_000 + jitter(MS), 10_000);
        }
    });
}

#[test]
fn a_streamed_path_gives_the_records_of_the_path_in_memory() {
    let dir = rostrace_testkit::TempDir::new("stream-e2e");
    let trace = dir.join("trace");
    fused_chain(&trace, 40);
    let path = "/s/n0,/s/n1,/s/n2,/s/n3";
    for (slice, extra) in [
        ("16K", &[][..]),
        ("64K", &["--include-first-callback", "--include-last-callback"][..]),
        ("1M", &["--case", "worst"][..]),
    ] {
        let v = e2e_agree(&trace, path, slice, extra);
        // Some of each: complete, superseded (by the timer's latest), lost (not taken), and the
        // last ones in flight.
        let n = |k: &str| v[k].as_u64().unwrap();
        assert!(n("complete") > 1000 && n("superseded") > 1000 && n("lost") > 100, "{slice}: {}", short(&v));
        assert_eq!(n("records"), 4000, "{slice}");
        assert_eq!(n("complete") + n("superseded") + n("lost") + n("in_flight"), n("records"));
        assert_eq!(v["rows"].as_array().unwrap().len(), 4000);
    }
    // `export --path`: the path's tables equal.
    let out = |name: &str, mode: &[&str]| {
        let o = rostrace()
            .args(["export", "--format", "csv", "--events", "none", "--name", "r", "--path", path, "-o"])
            .arg(dir.join(name))
            .args(mode)
            .arg(&trace)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let read = |t: &str| std::fs::read_to_string(dir.join(name).join(t).join("r.csv")).unwrap();
        (read("paths"), read("path_messages"))
    };
    let (a, b) = (out("mem", &["--stream", "never"]), out("str", &["--stream", "always", "--slice-size", "16K"]));
    assert_eq!(a.1, b.1, "path_messages");
    paths_agree(&trace, "/s/n0", "/s/n3", "16K");
    architectures_agree(&trace, "16K");
    // `check` of the path's expectations: the same outcomes.
    let expect = dir.join("expect.yaml");
    std::fs::write(
        &expect,
        format!(
            "paths:\n- path: {path}\n  latency: {{max: 1ms, mean: 10ms}}\n  drop_rate: 90%\n  lost_rate: 5%\n\
             - path: {path}\n  include_last_callback: true\n  latency: {{p99: 100ms}}\n"
        ),
    )
    .unwrap();
    let check = |mode: &[&str]| {
        let out = rostrace().args(["check", "--json", "-", "--expect"]).arg(&expect).args(mode).arg(&trace).output();
        let out = out.unwrap();
        (out.status.code(), serde_json::from_slice::<Value>(&out.stdout).unwrap_or(Value::Null)["outcomes"].clone())
    };
    let ((c1, ca), (c2, cb)) = (check(&["--stream", "never"]), check(&["--stream", "always", "--slice-size", "16K"]));
    let mut diffs = Vec::new();
    differences(&ca, &cb, "", &mut diffs);
    let status: Vec<&str> = cb.as_array().unwrap().iter().map(|o| o["status"].as_str().unwrap()).collect();
    // (The lost messages, one in 13, are more than 5 %.)
    assert_eq!((c1, c2, status), (Some(1), Some(1), vec!["fail", "pass", "pass", "fail", "pass"]), "{cb}");
    // Measured values equal, but the p99's (within the sketch's error).
    for d in &diffs {
        let (x, y): (f64, f64) = (ca[4]["measured"].as_f64().unwrap(), cb[4]["measured"].as_f64().unwrap());
        assert!(d.starts_with("[4].measured") && (x - y).abs() <= 0.005 * x + 1.0, "{d}");
    }
    assert_eq!(a.1.lines().count(), 4001);
    let (pa, pb) = (fields(a.0.lines().nth(1).unwrap()), fields(b.0.lines().nth(1).unwrap()));
    let head = fields(a.0.lines().next().unwrap());
    for ((col, x), y) in head.iter().zip(&pa).zip(&pb) {
        if col.contains("p50") || col.contains("p99") {
            let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
            assert!((x - y).abs() <= 0.005 * x + 1.0, "{col}: {x} {y}");
        } else {
            assert_eq!(x, y, "{col}");
        }
    }
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn streamed_paths_of_the_shared_traces_equal_those_in_memory() {
    let Some(root) = rostrace_testkit::test_data_path("traces") else { return };
    let demo = "/sensor_dummy_node,/filter_node,/message_driven_node,/timer_driven_node,/actuator_dummy_node";
    e2e_agree(&root.join("caret-demos-e2e-jazzy"), demo, "16K", &[]);
    e2e_agree(&root.join("caret-demos-e2e-jazzy"), demo, "64K", &["--include-first-callback"]);
    let found = paths_agree(&root.join("caret-demos-e2e-jazzy"), "/sensor_dummy_node", "/actuator_dummy_node", "16K");
    for name in ["caret-demos-e2e-jazzy", "tum-autoware-carla", "caret-analyze-samples"] {
        architectures_agree(&root.join(name), "256K");
    }
    assert!(found >= 1);
    // Autoware's longest paths (in flight or lost on the way, most of them).
    let carla = root.join("tum-autoware-carla");
    let a = analyze_json(&["--stream", "never"], &[&carla]);
    for p in a["longest_paths"]["paths"].as_array().unwrap().iter().take(4) {
        let (nodes, topics) = (p["path"]["nodes"].as_array().unwrap(), p["path"]["topics"].as_array().unwrap());
        let mut spec = vec![nodes[0].as_str().unwrap().to_string()];
        for (t, n) in topics.iter().zip(&nodes[1..]) {
            spec.extend([t.as_str().unwrap().to_string(), n.as_str().unwrap().to_string()]);
        }
        e2e_agree(&carla, &spec.join(","), "1M", &[]);
    }
}

/// `rostrace paths --from FROM --to TO --json -` of `trace` in memory and streamed in slices of
/// `slice`: the same paths, in the same order, with the same figures (percentiles within the
/// sketch's error). Returns the number of paths.
fn paths_agree(trace: &Path, from: &str, to: &str, slice: &str) -> usize {
    let run = |mode: &[&str]| {
        let out = rostrace().args(["paths", "--json", "-", "--from", from, "--to", to]).args(mode).arg(trace).output();
        let out = out.unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let (a, b) = (run(&["--stream", "never"]), run(&["--stream", "always", "--slice-size", slice]));
    let mut out = Vec::new();
    differences(&a, &b, "", &mut out);
    assert!(out.is_empty(), "paths from {from} to {to} in slices of {slice}: {}", out.join("\n"));
    let n = a["paths"].as_array().unwrap().len();
    assert!(n > 0 && a["paths"][0]["complete"].as_u64() > Some(0), "{}", short(&a));
    n
}

/// `rostrace architecture` of `trace` in memory and streamed in slices of `slice`: the same file,
/// the callbacks seen publishing (CARET's callback chains) gathered slice by slice.
fn architectures_agree(trace: &Path, slice: &str) {
    let run = |mode: &[&str]| {
        let out = rostrace().arg("architecture").args(mode).arg(trace).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let (a, b) = (run(&["--stream", "never"]), run(&["--stream", "always", "--slice-size", slice]));
    assert!(a.contains("callback_chain"), "{}: {a}", trace.display());
    assert_eq!(a, b, "{}", trace.display());
}

/// A client calling a service every 20 ms for `secs`, requests and responses taking 50 µs to
/// 1.05 ms each way, served in 0.1 to 5 ms (Kilted's service events), beside a chain of two
/// nodes.
fn service_calls(dir: &Path, secs: u64) {
    let mut s = Sys::kilted();
    let chain = s.chain("c", 2, 20 * MS);
    let n = s.node("server");
    let service = s.service(n, "/compute");
    let caller = s.node("caller");
    let client = s.client(caller, "/compute");
    let mut jitter = jitter(3);
    s.write_rounds(dir, secs * 50, 20 * MS, |s, round, t| {
        s.pass(&chain, t, |k| 1000 + k as i32);
        s.call(&client, service, round as i64 + 1, t + MS, 50_000 + jitter(MS), 100_000 + jitter(5 * MS));
    });
}

#[test]
fn services_are_added_across_slices() {
    let dir = rostrace_testkit::TempDir::new("stream-services");
    let trace = dir.join("trace");
    service_calls(&trace, 40);
    let s = agree(&trace, "16K");
    assert!(s["streamed"]["slices"].as_u64().unwrap() >= 10, "{}", s["streamed"]);
    let services = s["services"].as_array().unwrap();
    assert_eq!(services.len(), 1, "{services:?}");
    let c = &services[0];
    for k in ["requests_sent", "requests_served", "responses_received", "requests_matched", "responses_matched"] {
        assert_eq!(c[k].as_u64(), Some(2000), "{k}: {c}");
    }
    assert!(c["service_ns"]["max"].as_i64().unwrap() > 4_000_000, "{c}");
    // Every call of the export, each with the run that served it.
    exports_agree(&trace, "16K");
    let mut export = rostrace();
    export.args(["export", "--format", "csv", "--events", "none", "--name", "r", "-o"]).arg(dir.join("x"));
    let out = export.args(["--stream", "always", "--slice-size", "16K"]).arg(&trace).output().unwrap();
    assert!(out.status.success());
    let calls = std::fs::read_to_string(dir.join("x/service_calls/r.csv")).unwrap();
    assert_eq!(calls.lines().count(), 4001);
    assert_eq!(calls.lines().filter(|l| l.contains(",server,") && !l.ends_with(',')).count(), 2000, "{calls}");
}

/// A kernel trace and two processes' userspace traces of one host, `secs` long.
/// - Thread 300 (CPU 0) runs a subscription callback every 2 ms: woken, preempted once, blocked
///   at its end; each message taken is dispatched with a header stamp of varying age; its
///   process allocates and frees memory.
/// - Thread 301 (CPU 1) runs a timer callback of 5 s (longer than the margin) every 20 s,
///   preempted every 100 ms: its runs and its time on CPU cross many slices.
/// - The kernel allocates and frees pages.
fn kernel_and_ros(dir: &Path, secs: u64) {
    use kernel::*;
    use rostrace_ctf::write::Payload;
    const US: u64 = 1_000;
    let ust = decl(
        &[
            ("ros2:callback_start", &[("callback", P), ("is_intra_process", I32)]),
            ("ros2:callback_end", &[("callback", P)]),
            (
                "ros2:dispatch_subscription_callback",
                &[("message", P), ("callback", P), ("source_stamp", U64), ("message_timestamp", U64)],
            ),
            ("lttng_ust_libc:malloc", &[("size", U64), ("ptr", P)]),
            ("lttng_ust_libc:free", &[("ptr", P)]),
        ],
        "ust",
        2,
    );
    let u64s = |v: &[u64]| {
        let mut p = Payload::new();
        v.iter().for_each(|x| {
            p.u64(*x);
        });
        p.bytes
    };
    let start = |cb: u64| {
        let mut p = Payload::new();
        p.u64(cb).i32(0);
        p.bytes
    };
    let mut jit = jitter(57);
    let (mut cpu0, mut cpu1, mut app0, mut app1) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    cpu0.extend([(500, 2, dump(300, 300)), (600, 2, dump(301, 301)), (700, 2, dump(400, 400))]);
    for i in 0..secs * 500 {
        let t = MS + i * 2 * MS;
        let w = 20 * US + jit(30 * US);
        cpu0.push((t, 1, waking(300)));
        cpu0.push((t + w, 0, switch(0, 1, 300)));
        app0.push((t + w + 10 * US, 2, u64s(&[0x90, 0x50, 0, OFFSET as u64 + t - jit(3 * MS)])));
        app0.push((t + w + 20 * US, 0, start(0x50)));
        let p = t + w + 30 * US + jit(200 * US);
        cpu0.push((p, 0, switch(300, 0, 400)));
        cpu0.push((p + 50 * US + jit(100 * US), 0, switch(400, 1, 300)));
        app0.push((t + 600 * US, 3, u64s(&[64 + jit(1000), 0x1000 + i % 64])));
        app0.push((t + 650 * US + jit(100 * US), 4, u64s(&[0x1000 + (i + 32) % 64])));
        app0.push((t + 900 * US, 1, u64s(&[0x50])));
        cpu0.push((t + 950 * US, 0, switch(300, 1, 0)));
        cpu0.push((t + 1200 * US, if i % 3 == 2 { 4 } else { 3 }, pages(i % 3 != 2, (i % 2) as i32)));
    }
    for k in 0..secs.div_ceil(20) {
        let t = 5_000 * MS + k * 20_000 * MS;
        cpu1.push((t - MS, 0, switch(0, 0, 301)));
        app1.push((t, 0, start(0x70)));
        for j in 1..50 {
            let p = t + j * 100 * MS;
            cpu1.push((p, 0, switch(301, 0, 401)));
            cpu1.push((p + 3 * MS + jit(2 * MS), 0, switch(401, 0, 301)));
        }
        app1.push((t + 5_000 * MS, 1, u64s(&[0x70])));
        cpu1.push((t + 5_000 * MS + MS, 0, switch(301, 1, 0)));
    }
    let k = kernel();
    stream(&dir.join("kernel"), &k, 0, 0, &mut cpu0);
    stream(&dir.join("kernel"), &k, 1, 0, &mut cpu1);
    stream(&dir.join("ust/pid/app-300/64-bit"), &ust, 0, 300, &mut app0);
    stream(&dir.join("ust/pid/app-301/64-bit"), &ust, 0, 301, &mut app1);
}

#[test]
fn system_analyses_are_carried_across_slices() {
    let dir = rostrace_testkit::TempDir::new("stream-system");
    let trace = dir.join("trace");
    kernel_and_ros(&trace, 60);
    // Slices of about 50 ms to 1 s: each of the timer's runs of 5 s crosses 5 to 100.
    for slice in ["16K", "64K", "256K"] {
        let s = agree(&trace, slice);
        assert_eq!(s["streamed"]["not_computed"], serde_json::json!([]), "{}", s["streamed"]);
        let sys = &s["system"];
        let sched = sys["scheduling"]["callbacks"].as_array().unwrap();
        let timer = sched.iter().find(|c| c["callback"]["address"] == 0x70).expect("the timer's scheduling");
        // Three runs of 5 s, each preempted 49 times.
        assert_eq!((timer["runs"].as_u64(), timer["preemptions"].as_u64()), (Some(3), Some(147)), "{timer}");
        let sub = sched.iter().find(|c| c["callback"]["address"] == 0x50).expect("the subscription's scheduling");
        assert_eq!((sub["runs"].as_u64(), sub["preemptions"].as_u64()), (Some(30_000), Some(30_000)), "{sub}");
        assert_eq!(sys["message_age"][0]["ns"]["count"], 30_000);
        // (Its first wake-up comes before the thread is seen running a callback.)
        assert_eq!(sys["scheduling"]["wakeup_latency"][0]["latency_ns"]["count"], 29_999);
        assert!(sys["cpu_time"]["threads"].as_array().unwrap().len() >= 4, "{}", sys["cpu_time"]);
        let memory = sys["memory"]["processes"].as_array().unwrap();
        assert_eq!(memory.len(), 2, "{}", sys["memory"]);
        assert!(s["streamed"]["slices"].as_u64().unwrap() > 50, "{}", s["streamed"]);
    }
}

/// A memory timeline streamed: at most 201 points over the recording, in time order, the peak
/// among them and the final usage last.
#[test]
fn memory_timelines_hold_the_peak_and_the_end() {
    let dir = rostrace_testkit::TempDir::new("stream-memory");
    let trace = dir.join("trace");
    kernel_and_ros(&trace, 20);
    let s = analyze_json(&["--stream", "always", "--slice-size", "16K"], &[&trace]);
    for p in s["system"]["memory"]["processes"].as_array().unwrap() {
        let points: Vec<(i64, i64)> = p["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| (x[0].as_i64().unwrap(), x[1].as_i64().unwrap()))
            .collect();
        assert!((100..=201).contains(&points.len()), "{} points", points.len());
        assert!(points.windows(2).all(|w| w[0].0 <= w[1].0));
        assert!(points.contains(&(p["max_at_ns"].as_i64().unwrap(), p["max_bytes"].as_i64().unwrap())), "{p}");
        assert_eq!(points.last().unwrap().1, p["final_bytes"].as_i64().unwrap(), "{p}");
    }
}

/// The paths of a system whose nodes declare message links (a fusion node, a synchronizer),
/// streamed: the records of those in memory, which are the simulation's own.
#[test]
fn message_links_are_followed_when_streamed() {
    let dir = rostrace_testkit::TempDir::new("stream-links");
    let trace = dir.join("trace");
    let log = links::write(&trace, 20, links::Declared::Links);
    for (path, via_imu) in [("/lidar,/fusion,/sync,/actuator", false), ("/imu_driver,/fusion,/sync,/actuator", true)] {
        for slice in ["16K", "256K"] {
            let v = e2e_agree(&trace, path, slice, &[]);
            assert_eq!(v["complete"].as_u64(), Some(log.records(via_imu).len() as u64), "{path} in {slice}");
        }
    }
    assert_eq!(paths_agree(&trace, "/imu_driver", "/actuator", "64K"), 1);
}
