//! Opening and analysing traces in one call ([`rostrace_analysis::Open`]): the errors of opening
//! are told before the analysis runs and kept first; the analysis is the one of the pipeline.

use rostrace_analysis::{Open, Options};
use std::cell::RefCell;
use std::path::PathBuf;

fn trace(name: &str) -> Option<PathBuf> {
    rostrace_testkit::test_data_path(std::path::Path::new("traces").join(name))
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn errors_of_opening_come_first_and_before_the_analysis() {
    let Some(good) = trace("caret-demos-e2e-jazzy") else { return };
    let missing = PathBuf::from("/nonexistent/rostrace-trace");
    // What happened, in order: each error told, and whether the analysis had made progress then.
    let seen = RefCell::new(Vec::new());
    let loaded = Open::new(&[missing.clone(), good.clone()])
        .jobs(1)
        .options(Options { longest_paths: true, ..Default::default() })
        .on_error(|e| seen.borrow_mut().push(format!("error {e}")))
        .progress(|_, _| {
            let mut s = seen.borrow_mut();
            if s.last().map(String::as_str) != Some("progress") {
                s.push("progress".into());
            }
        })
        .analyze()
        .expect("one trace opens");
    let seen = seen.into_inner();
    assert!(seen.len() == 2 && seen[0].contains("/nonexistent/rostrace-trace"), "{seen:?}");
    assert_eq!(seen[1], "progress");
    assert_eq!(loaded.errors.len(), 1);
    assert!(!loaded.clean());
    // The analysis is the pipeline's, with the options given.
    let (set, errors) = rostrace_ctf::TraceSet::open(&[&good]);
    assert!(errors.is_empty());
    let mut p = rostrace_analysis::Processor::standard();
    p.set_jobs(1);
    let a = p.run(&set, &Options { longest_paths: true, ..Default::default() }, |_, _| {});
    let json = |r: &rostrace_analysis::Report| serde_json::to_string(r).unwrap();
    assert_eq!(json(&loaded.analysis.report), json(&a.report));
    assert!(loaded.analysis.report.longest_paths.is_some());
}

#[test]
fn no_trace_opened_is_the_errors_of_opening() {
    let errors = match Open::new(&["/nonexistent/rostrace-trace"]).analyze() {
        Ok(_) => panic!("nothing to open"),
        Err(e) => e,
    };
    assert_eq!(errors.len(), 1);
    assert!(errors[0].message.contains("/nonexistent/rostrace-trace"), "{errors:?}");
    assert!(Open::new::<&str>(&[]).analyze().err().is_some_and(|e| e.is_empty()));
}
