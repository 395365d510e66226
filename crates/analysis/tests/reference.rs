//! Callback counts and mean durations against tracetools_analysis's results
//! (`../shared/reference/tracetools_analysis/*.callbacks.csv`) on every trace in `../shared/traces`.
//! tracetools_analysis does not separate processes, so ours are summed per address first.

use std::collections::HashMap;
use std::path::PathBuf;

/// The shared test data (`$ROSTRACE_TEST_DATA`, else `../shared` beside the repository).
use rostrace_testkit::test_data as shared;

/// (address → (count, mean_ns, sum_ns)) from a reference CSV (the symbol column is quoted and may hold commas).
fn read_reference(p: &std::path::Path) -> HashMap<u64, (u64, f64, i128)> {
    let text = std::fs::read_to_string(p).unwrap();
    let mut out = HashMap::new();
    for line in text.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let addr: u64 = line.split(',').next().unwrap().parse().unwrap();
        let nums: Vec<&str> = line.rsplitn(6, ',').collect(); // sum, max, min, mean, count, rest
        out.insert(addr, (nums[4].parse().unwrap(), nums[3].parse().unwrap(), nums[0].parse().unwrap()));
    }
    out
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn callbacks_match_tracetools_analysis() {
    rostrace_testkit::needs_test_data!();
    let dir = shared().join("reference/tracetools_analysis");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".callbacks.csv"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 20);
    let mut failures = Vec::new();
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().trim_end_matches(".callbacks.csv").to_string();
        let trace = match name.strip_prefix("caret-analyze-samples__") {
            Some(app) => shared().join("traces/caret-analyze-samples").join(app),
            None => shared().join("traces").join(&name),
        };
        let (set, errors) = rostrace_ctf::TraceSet::open(&[&trace]);
        assert!(errors.is_empty(), "{errors:?}");
        let a = rostrace_analysis::analyze_traces(&set, |_, _| {});
        let mut ours: HashMap<u64, (u64, i128)> = HashMap::new();
        for cb in &a.report.callbacks {
            let e = ours.entry(cb.address).or_default();
            e.0 += cb.count;
            e.1 += cb.duration_ns.sum;
        }
        let reference = read_reference(&f);
        for (addr, (count, mean, sum)) in &reference {
            match ours.get(addr) {
                Some(&(c, s)) if c == *count && s == *sum && ((s as f64 / c.max(1) as f64) - mean).abs() <= 1.0 => {}
                other => failures
                    .push(format!("{name}: callback {addr}: ours {other:?}, reference count {count} mean {mean}")),
            }
        }
        let extra: Vec<_> = ours.iter().filter(|(a, (c, _))| *c > 0 && !reference.contains_key(a)).collect();
        if !extra.is_empty() {
            failures.push(format!("{name}: callbacks not in the reference: {extra:?}"));
        }
        eprintln!("{name}: {} callbacks, same counts and durations as tracetools_analysis", reference.len());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
