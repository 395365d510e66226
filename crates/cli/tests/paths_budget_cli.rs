//! `rostrace paths --max-expansions`: a search stopped at its work budget says so, on stderr
//! and in the JSON (`truncated_at_max_expansions`, there only then: the JSON of a search that
//! finished is what it was before the budget), on caret-demos-e2e-jazzy.

mod common;

use common::*;
use serde_json::Value;

#[rostrace_testkit::needs(test_data)]
#[test]
fn a_search_stopped_at_its_work_budget_says_so() {
    let Some(t) = rostrace_testkit::test_data_path("traces/caret-demos-e2e-jazzy") else { return };
    let run = |extra: &[&str]| {
        let out = rostrace()
            .args(["paths", "--from", "/sensor_dummy_node", "--to", "/actuator_dummy_node", "--json", "-"])
            .args(extra)
            .arg(&t)
            .output()
            .unwrap();
        let json: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out.status.code(), json, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    // The default budget: the one path of the five nodes, and nothing said.
    let (code, full, err) = run(&[]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(full["paths"].as_array().unwrap().len(), 1);
    assert!(full.get("truncated_at_max_expansions").is_none(), "{full}");
    assert!(!err.contains("work budget"), "{err}");
    // Two states: the path has five nodes, so none found, and the search says why.
    let (code, cut, err) = run(&["--max-expansions", "2"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(cut["truncated_at_max_expansions"], true);
    assert_eq!(cut["paths"].as_array().unwrap().len(), 0);
    assert!(err.contains("the search stopped at its work budget (--max-expansions 2)"), "{err}");
    assert!(err.contains("raise --max-expansions"), "{err}");
    assert!(
        err.contains("no path from /sensor_dummy_node to /actuator_dummy_node found within the work budget"),
        "{err}"
    );
    let (code, _, err) = run(&["--max-expansions", "0"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("--max-expansions must be 1 or more"), "{err}");
}
