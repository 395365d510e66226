//! The reader on inputs babeltrace2 cannot be the oracle for: traces it cannot read (counts from
//! Trace Compass's tests), losses, must-fail inputs, and per-name event counts of the real traces.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

fn info(trace: &Path) -> (Value, String, i32) {
    let out = rostrace().args(["info", "--json"]).arg(trace).output().expect("run rostrace");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{}: info --json is not JSON ({e}): {}", trace.display(), String::from_utf8_lossy(&out.stderr))
    });
    (v, String::from_utf8_lossy(&out.stderr).into_owned(), out.status.code().unwrap_or(-1))
}

fn edge(p: &str) -> std::path::PathBuf {
    shared().join("ctf-edge").join(p)
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn traces_babeltrace2_cannot_read_give_trace_compass_counts() {
    rostrace_testkit::needs_test_data!();
    // Trace Compass expects 100002 events (odd integer sizes: 3, 12, 17, 35 bits). Its clock's
    // offset (1351530929945824323 s, ns given as seconds) is past the times a signed 64-bit
    // count of ns holds: the clock is refused, the events read without a time.
    let (v, err, code) = info(&edge("tc-funky_trace"));
    assert_eq!(v["event_count"], 100002);
    assert!(v["begin_ns"].is_null(), "{v}");
    assert_eq!(code, 1);
    assert!(err.contains("tc-funky_trace/metadata: invalid metadata at byte 669: clock `test_clock`"), "{err}");
    // 32,300 events and 562 discarded-event records for 967,700 lost events.
    let (v, _, _) = info(&edge("tc-hello-lost"));
    assert_eq!(v["event_count"], 32300);
    assert_eq!(v["discarded_events"], 967700);
    assert_eq!(v["losses"].as_array().unwrap().len(), 562);
    // lttng-modules 2.1 with timestamps going backwards across streams: 110,771 events.
    let (v, _, _) = info(&edge("tc-synctraces_scp_src"));
    assert_eq!(v["event_count"], 110771);
    // CTF writer trace, big-endian, empty stream files, 4 stream classes: Trace Compass
    // counts 101003 = 100003 events + 1000 discarded events (one lost-events record).
    let (v, _, _) = info(&edge("tc-ctfwriter_JF8nq3"));
    assert_eq!(v["event_count"], 100003);
    assert_eq!(v["discarded_events"], 1000);
    let names: BTreeMap<String, u64> = v["events_per_name"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_u64().unwrap()))
        .collect();
    assert_eq!(names["Spammy_Event"], 100000);
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn losses_are_reported() {
    rostrace_testkit::needs_test_data!();
    let bt = "babeltrace/ctf-traces/";
    for (t, packets, events) in [
        ("packet-seq-num/2-lost-before-last", 2, 0),
        ("packet-seq-num/2-streams-lost-in-1", 2, 0),
        ("packet-seq-num/2-streams-lost-in-2", 6, 0),
        ("packet-seq-num/7-lost-between-2-with-index", 7, 0),
        ("packet-seq-num/no-lost", 0, 0),
        ("packet-seq-num/no-lost-not-starting-at-0", 0, 0),
        ("succeed/multi-domains", 0, 728),
        ("succeed/ev-disc-no-ts-begin-end", 0, 17),
    ] {
        let (v, _, _) = info(&edge(&format!("{bt}{t}")));
        assert_eq!(v["lost_packets"], packets, "{t}");
        assert_eq!(v["discarded_events"], events, "{t}");
    }
    // The text output warns about them too.
    let out = rostrace().arg("events").arg(edge(&format!("{bt}packet-seq-num/2-lost-before-last"))).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("2 packets lost"), "{err}");
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn must_fail_inputs_give_clear_errors() {
    rostrace_testkit::needs_test_data!();
    let root = edge("babeltrace/ctf-traces/fail");
    let mut dirs: Vec<_> = std::fs::read_dir(&root).unwrap().flatten().map(|e| e.path()).collect();
    dirs.sort();
    assert_eq!(dirs.len(), 11);
    for d in dirs {
        let out = rostrace().args(["events", "--format", "jsonl"]).arg(&d).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{}: expected failure, stderr: {err}", d.display());
        assert!(err.contains("error:") && err.contains("byte"), "{}: unclear error: {err}", d.display());
        assert!(!err.contains("panicked"), "{}: {err}", d.display());
    }
    // Events before the damage are still delivered.
    let out = rostrace()
        .args(["events", "--format", "jsonl"])
        .arg(root.join("valid-events-then-invalid-events"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2);
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn metadata_errors_name_the_file_and_offset() {
    rostrace_testkit::needs_test_data!();
    let out = rostrace().args(["info"]).arg(edge("babeltrace/ctf-traces/fail/metadata-syntax-error")).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("metadata-syntax-error/metadata: invalid metadata at byte 72"), "{err}");
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn sequence_length_in_event_context() {
    rostrace_testkit::needs_test_data!();
    // babeltrace2 2.0.4 aborts on this metadata (fixed upstream; its expected output is empty).
    let (v, err, code) = info(&edge("babeltrace/ctf-traces/succeed/meta-ctx-sequence"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["event_count"], 0);
}

#[test]
fn not_a_trace_is_an_error() {
    let out = rostrace().args(["info"]).arg(repo().join("crates/analysis")).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no CTF trace found"));
    let out = rostrace().args(["info"]).arg("/nonexistent/trace").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/trace"));
}

/// Per-name counts equal babeltrace2's counts in `reference/event-counts/`.
#[rostrace_testkit::needs(test_data)]
#[test]
fn event_counts_match_reference() {
    rostrace_testkit::needs_test_data!();
    let dir = shared().join("reference/event-counts");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    files.sort();
    assert!(files.len() >= 20);
    for f in files {
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        let trace = match stem.strip_prefix("caret-analyze-samples_") {
            Some(app) => shared().join("traces/caret-analyze-samples").join(app),
            None => shared().join("traces").join(&stem),
        };
        let want: BTreeMap<String, u64> = std::fs::read_to_string(&f)
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let (c, n) = l.split_once('\t').expect("count<TAB>name");
                (n.to_string(), c.trim().parse().unwrap())
            })
            .collect();
        let (v, err, code) = info(&trace);
        assert_eq!(code, 0, "{}: {err}", trace.display());
        let got: BTreeMap<String, u64> = v["events_per_name"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_u64().unwrap()))
            .collect();
        assert_eq!(got, want, "{}", trace.display());
    }
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn info_reports_processes_and_distro() {
    rostrace_testkit::needs_test_data!();
    let (v, _, _) = info(&shared().join("traces/rosworld2021-pingpong"));
    assert_eq!(v["event_count"], 864);
    let procs: Vec<String> =
        v["processes"].as_array().unwrap().iter().map(|p| p["procname"].as_str().unwrap().to_string()).collect();
    assert_eq!(procs, ["ping", "pong"]);
    assert_eq!(v["tracetools_versions"][0], "3.1.0");
    let (v, _, _) = info(&shared().join("traces/caret-demos-e2e-jazzy"));
    assert!(!v["ros_distros"].as_array().unwrap().is_empty());
    assert_eq!(v["begin_ns"].as_i64().unwrap() + v["duration_ns"].as_i64().unwrap(), v["end_ns"].as_i64().unwrap());
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn metadata_that_is_not_ctf_is_named_with_its_offset() {
    rostrace_testkit::needs_test_data!();
    for (case, content, why) in [
        ("garbage", &b"\x89PNG\r\n\x1a\n, not a trace"[..], "starts with 89 50 4e 47 0d 0a 1a 0a"),
        ("empty", &b""[..], "the file is empty"),
    ] {
        let dir = TempDir::new(&format!("edge-{case}"));
        let meta = dir.join("metadata");
        std::fs::write(&meta, content).unwrap();
        // A data stream beside it, as in a trace whose metadata was damaged.
        std::fs::write(dir.join("channel0_0"), [0xc1, 0x1f, 0xfc, 0xc1, 0, 0, 0, 0]).unwrap();
        let want = format!("{}: not CTF metadata at byte 0: {why}", meta.display());
        for cmd in ["events", "info"] {
            for arg in [dir.path(), meta.as_path()] {
                let out = rostrace().arg(cmd).arg(arg).output().unwrap();
                let err = String::from_utf8_lossy(&out.stderr);
                assert_eq!(out.status.code(), Some(1), "{case}, {cmd} {}: {err}", arg.display());
                assert!(err.contains(&want), "{case}, {cmd} {}: {err}", arg.display());
                assert!(!err.contains("no CTF trace found") && !err.contains("panicked"), "{err}");
                assert!(out.stdout.is_empty(), "{case}, {cmd}: {}", String::from_utf8_lossy(&out.stdout));
            }
        }
        // A readable trace given with it is still read.
        let good = edge("tc-ctf-sequence-empty");
        let out = rostrace().args(["events", "--format", "jsonl"]).arg(&dir).arg(&good).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(&want), "{err}");
        assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 10);
    }
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn info_on_a_bad_path_prints_only_the_error() {
    rostrace_testkit::needs_test_data!();
    let no_trace = TempDir::new("edge-no-trace");
    std::fs::write(no_trace.join("notes.txt"), "not a trace").unwrap();
    for (path, what) in [
        (std::path::PathBuf::from("/nonexistent/trace"), "/nonexistent/trace: No such file or directory"),
        (no_trace.to_path_buf(), "no CTF trace found"),
    ] {
        for json in [false, true] {
            let mut cmd = rostrace();
            cmd.arg("info");
            if json {
                cmd.arg("--json");
            }
            let out = cmd.arg(&path).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{}: {err}", path.display());
            assert!(
                out.stdout.is_empty(),
                "{}: a summary of nothing: {}",
                path.display(),
                String::from_utf8_lossy(&out.stdout)
            );
            assert!(err.contains(what) && err.contains(&path.display().to_string()), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
    }
    // With a readable trace beside the bad path: its summary, and the error.
    let out = rostrace().arg("info").arg("/nonexistent/trace").arg(edge("tc-ctf-sequence-empty")).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("events:     10"));
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn info_counts_one_process_in_the_singular() {
    rostrace_testkit::needs_test_data!();
    let out = rostrace().arg("info").arg(edge("tc-debuginfo-test-app4")).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\nprocess:    1\n"), "{text}");
    assert!(!text.contains("processes") && !text.contains(" 1 events"), "{text}");
    let out = rostrace().arg("info").arg(shared().join("traces/rosworld2021-pingpong")).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\nprocesses:  2\n"), "{text}");
    assert!(text.contains("discarded:  0 events, 0 packets lost"), "{text}");
}

/// A writable copy of caret-demos-e2e-jazzy (2,880 events) in `tmp`, and its stream directory.
fn jazzy_copy(tmp: &TempDir) -> std::path::PathBuf {
    rostrace_testkit::copy_writable(&shared().join("traces/caret-demos-e2e-jazzy"), tmp.path());
    tmp.join("ust/uid/1000/64-bit")
}

/// `info` and `analyze` on a trace with a copy of a stream file, a stream file whose magic has a
/// bit flipped, a clock whose times overflow: each an error naming the file (and the byte), the
/// counts those of the trace without the copy, the exit code 1.
#[test]
fn copies_damaged_magics_and_overflowing_clocks_are_errors() {
    rostrace_testkit::needs_test_data!();
    // (case, damage, events, what the error says)
    type Damage = fn(&Path);
    let cases: [(&str, Damage, u64, &str); 3] = [
        (
            "copy",
            |s| {
                std::fs::copy(s.join("ros2_1"), s.join("ros2_1.bak")).unwrap();
            },
            2880,
            "ros2_1.bak: not read at byte 0: a copy of ",
        ),
        (
            "magic",
            |s| {
                let mut data = std::fs::read(s.join("ros2_1")).unwrap();
                data[0] ^= 0x02;
                std::fs::write(s.join("ros2_1"), data).unwrap();
            },
            // (The first packet of ros2_1 holds 351 events.)
            2880 - 351,
            "ros2_1: cannot decode at byte 0: bad packet magic 0xc1fc1fc3 (expected 0xc1fc1fc1): the packet's \
             32768 bytes are skipped",
        ),
        (
            "clock",
            |s| {
                let meta = s.join("metadata");
                let text = std::fs::read(&meta).unwrap();
                let (from, to) = (&b"offset = 1655772632839550660;"[..], &b"offset = 9223372000000000000;"[..]);
                let at = text.windows(from.len()).position(|w| w == from).unwrap();
                let mut text = text.clone();
                text[at..at + to.len()].copy_from_slice(to);
                std::fs::write(meta, text).unwrap();
            },
            2880,
            "metadata: invalid metadata at byte 1091: clock `monotonic` (freq 1000000000 Hz, offset 9223372000 s + 0 \
             cycles) cannot give times in ns",
        ),
    ];
    for (case, damage, events, what) in cases {
        let tmp = TempDir::new(&format!("edge-{case}"));
        let streams = jazzy_copy(&tmp);
        damage(&streams);
        let want = format!("{}/{what}", streams.display());
        let (v, err, code) = info(tmp.path());
        assert_eq!(code, 1, "{case}: {err}");
        assert_eq!(v["event_count"], events, "{case}");
        let errors = v["errors"].as_array().unwrap();
        assert_eq!(errors.len(), 1, "{case}: {errors:?}");
        assert!(errors[0].as_str().unwrap().starts_with(&want), "{case}: {errors:?}");
        assert!(err.contains(&format!("rostrace: error: {want}")), "{case}: {err}");
        let out = rostrace().args(["analyze", "--json", "-"]).arg(tmp.path()).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{case}: {err}");
        assert!(err.contains(&format!("rostrace: error: {want}")), "{case}: {err}");
        let a: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(a["events"], events, "{case}");
    }
}
