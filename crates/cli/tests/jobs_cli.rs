//! `-j N`: every command that reads traces gives the same output whatever the number of threads
//! (one thread, two, more threads than stream files), on the shared traces.

mod common;

use common::*;
use std::path::{Path, PathBuf};

/// stdout, stderr and exit code of `rostrace ARGS -j jobs`.
fn run(args: &[&str], trace: &Path, jobs: usize) -> (Vec<u8>, String, Option<i32>) {
    let out = rostrace().args(args).arg(trace).args(["-j", &jobs.to_string()]).output().expect("run rostrace");
    (out.stdout, String::from_utf8_lossy(&out.stderr).into_owned(), out.status.code())
}

fn same_for_all_jobs(args: &[&str], trace: &Path) -> usize {
    let one = run(args, trace, 1);
    assert!(one.2.is_some(), "{args:?} {}: {}", trace.display(), one.1);
    for jobs in [2, 8] {
        let many = run(args, trace, jobs);
        assert!(
            one == many,
            "rostrace {args:?} {} differs with -j 1 and -j {jobs}:\n{}\n---\n{}",
            trace.display(),
            String::from_utf8_lossy(&one.0).chars().take(2000).collect::<String>(),
            String::from_utf8_lossy(&many.0).chars().take(2000).collect::<String>(),
        );
    }
    one.0.len()
}

fn traces() -> Option<Vec<PathBuf>> {
    let root = rostrace_testkit::test_data_path("traces")?;
    Some(
        ["tum-autoware-carla", "caret-demos-e2e-jazzy", "caret-analyze-samples", "rosworld2021-pingpong"]
            .iter()
            .map(|t| root.join(t))
            .collect(),
    )
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn info_events_and_analyze_are_the_same_with_any_number_of_threads() {
    let Some(traces) = traces() else { return };
    for t in &traces {
        assert!(same_for_all_jobs(&["info", "--json"], t) > 1000);
        assert!(same_for_all_jobs(&["analyze", "--json", "-"], t) > 1000);
    }
    // Every event as text, on the largest trace and on the edge cases (losses, damaged or odd
    // streams, many stream classes).
    assert!(same_for_all_jobs(&["events"], &traces[0]) > 10_000_000);
    let edge = shared().join("ctf-edge");
    for name in ["tc-hello-lost", "tc-ctfwriter_JF8nq3", "tc-synctraces_scp_src", "tc-many-threads"] {
        same_for_all_jobs(&["info", "--json"], &edge.join(name));
        same_for_all_jobs(&["events", "--format", "jsonl"], &edge.join(name));
    }
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn paths_e2e_report_and_export_are_the_same_with_any_number_of_threads() {
    let Some(traces) = traces() else { return };
    let jazzy = &traces[1];
    assert!(
        same_for_all_jobs(
            &["paths", "--from", "/sensor_dummy_node", "--to", "/actuator_dummy_node", "--json", "-"],
            jazzy
        ) > 100
    );
    assert!(same_for_all_jobs(&["architecture"], jazzy) > 100);
    let tmp = rostrace_testkit::TempDir::new("jobs-cli");
    for t in [&traces[0], jazzy] {
        let mut outputs = Vec::new();
        for jobs in [1, 2, 8] {
            let html = tmp.join(format!("r{jobs}.html"));
            let out =
                rostrace().arg("report").arg(t).arg("-o").arg(&html).args(["-j", &jobs.to_string()]).output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let dir = tmp.join(format!("csv{jobs}"));
            let out = rostrace()
                .arg("export")
                .arg(t)
                .args(["--format", "csv", "--name", "r", "-o"])
                .arg(&dir)
                .args(["-j", &jobs.to_string()])
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let mut files: Vec<(String, Vec<u8>)> = files_below(&dir)
                .into_iter()
                .map(|p| (p.strip_prefix(&dir).unwrap().display().to_string(), std::fs::read(&p).unwrap()))
                .collect();
            files.sort();
            assert!(files.len() > 5);
            outputs.push((std::fs::read(&html).unwrap(), files));
        }
        assert!(outputs[0] == outputs[1] && outputs[0] == outputs[2], "{}: report or export differs", t.display());
    }
}

/// A set of several traces is analyzed on several threads, a part of the traces each, the parts
/// merged in the order of one pass: the same analysis as one thread's, with damaged streams
/// (errors), lost events and a time window, in text and JSON, and the same HTML report.
#[rostrace_testkit::needs(test_data)]
#[test]
fn several_traces_are_analyzed_alike_on_several_threads() {
    let Some(traces) = traces() else { return };
    let tmp = rostrace_testkit::TempDir::new("jobs-set");
    let set = tmp.join("set");
    std::fs::create_dir_all(&set).unwrap();
    // Whole traces, one copy twice (same processes, times and addresses in two traces).
    for (k, t) in [&traces[1], &traces[2], &traces[3], &traces[1]].iter().enumerate() {
        rostrace_testkit::copy_writable(t, &set.join(format!("t{k}")));
    }
    // Two copies with noise in their event data (errors, events skipped, the rest read), whose
    // errors interleave in time.
    let mut rng = rostrace_testkit::XorShift(0x5eed_1234);
    let mut damaged = 0;
    let noisy: Vec<PathBuf> = (0..2).map(|k| set.join(format!("noisy{k}"))).collect();
    for n in &noisy {
        rostrace_testkit::copy_writable(&shared().join("traces/caret-demos-e2e-2021"), n);
    }
    for f in noisy.iter().flat_map(|n| files_below(n)) {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        if name == "metadata" || f.parent().is_some_and(|p| p.ends_with("index")) {
            continue;
        }
        let mut data = std::fs::read(&f).unwrap();
        if data.len() < 8192 {
            continue;
        }
        for _ in 0..6 {
            let at = 4096 + (rng.next_u64() as usize % (data.len() - 4096));
            data[at] ^= 1 << (rng.next_u64() % 8);
        }
        std::fs::write(&f, data).unwrap();
        damaged += 1;
    }
    assert!(damaged > 0);
    // Lost events, in two traces.
    for k in 0..2 {
        rostrace_testkit::copy_writable(&shared().join("ctf-edge/tc-hello-lost"), &set.join(format!("lost{k}")));
    }
    let json = same_for_all_jobs(&["analyze", "--json", "-"], &set);
    assert!(json > 10_000);
    let one = run(&["analyze", "--json", "-"], &set, 1);
    let v: serde_json::Value = serde_json::from_slice(&one.0).unwrap();
    let text = v.to_string();
    assert!(text.contains("events discarded"), "no loss in the set");
    same_for_all_jobs(&["analyze", "--wide"], &set);
    same_for_all_jobs(&["analyze", "--json", "-", "--begin", "0.5", "--end", "3"], &set);
    let mut html = Vec::new();
    for jobs in [1, 3] {
        let out_file = tmp.join(format!("r{jobs}.html"));
        let out = rostrace().arg("report").arg(&set).arg("-o").arg(&out_file).args(["-j", &jobs.to_string()]).output();
        // (It reports the damaged streams' errors in its exit code, and writes the report.)
        let out = out.unwrap();
        html.push((out.status.code(), std::fs::read(&out_file).unwrap()));
    }
    assert!(html[0].1.len() > 100_000);
    assert!(html[0] == html[1], "report differs with -j 1 and -j 3");
}
