//! `rostrace check`: suggested expectations pass on the trace they came from; each kind of
//! expectation fails with its measured value (the analysis's own); not in the trace; a malformed
//! file; JUnit XML valid against the JUnit schema.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn trace(name: &str) -> Option<PathBuf> {
    rostrace_testkit::test_data_path(Path::new("traces").join(name))
}

/// `rostrace check ARGS TRACE`: exit code, stdout, stderr.
fn check(args: &[&str], trace: &Path) -> (Option<i32>, String, String) {
    let out = rostrace().arg("check").args(args).arg(trace).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Checks `yaml` against `trace`: exit code, the JSON outcomes, stdout of a second run (text).
fn check_yaml(dir: &TempDir, yaml: &str, trace: &Path) -> (Option<i32>, Value, String) {
    let f = dir.join("expect.yaml");
    std::fs::write(&f, yaml).unwrap();
    let (code, json, err) = check(&["--expect", f.to_str().unwrap(), "--json", "-"], trace);
    let v: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}\n{err}"));
    let (code2, text, _) = check(&["--expect", f.to_str().unwrap()], trace);
    assert_eq!(code, code2);
    (code, v, text)
}

/// `--suggest` then `check` of the file on the same trace: every limit passes, none is missing.
fn suggestion_passes(name: &str, t: &Path) -> String {
    let dir = TempDir::new("check-suggest");
    let (code, yaml, err) = check(&["--suggest"], t);
    assert_eq!(code, Some(0), "{name}: {err}");
    // A rate limit of 1 (or more) means nothing: never suggested.
    assert!(!yaml.contains("drop_rate: 100%") && !yaml.contains("lost_rate: 100%"), "{name}: {yaml}");
    let (code, v, text) = check_yaml(&dir, &yaml, t);
    assert_eq!(code, Some(0), "{name}: {text}\n{yaml}");
    let n = v["outcomes"].as_array().unwrap().len();
    assert_eq!(v["passed"].as_u64(), Some(n as u64), "{name}");
    assert!(text.lines().take(n).all(|l| l.starts_with("pass ")), "{name}: {text}");
    assert!(text.ends_with(&format!("{n} expectation(s): {n} passed, 0 failed, 0 not in the trace\n")), "{text}");
    yaml
}

/// The trace directories of the shared data: each of `traces/`, and each sample of
/// `traces/caret-analyze-samples/`.
fn shared_traces() -> Vec<PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(shared().join("traces")).unwrap().flatten() {
        let p = e.path();
        if p.file_name().is_some_and(|n| n == "caret-analyze-samples") {
            v.extend(std::fs::read_dir(&p).unwrap().flatten().map(|e| e.path()).filter(|p| p.is_dir()));
        } else if p.is_dir() {
            v.push(p);
        }
    }
    v.sort();
    v
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn suggested_expectations_pass_on_their_trace() {
    rostrace_testkit::needs_test_data!();
    let traces = shared_traces();
    assert!(traces.len() > 15, "{traces:?}");
    for t in traces {
        let name = t.file_name().unwrap().to_string_lossy().into_owned();
        let yaml = suggestion_passes(&name, &t);
        let n = yaml.lines().filter(|l| l.starts_with("- ")).count();
        assert!(n > 5, "{name}: {n} expectations\n{yaml}");
        if name == "caret-demos-e2e-jazzy" || name == "tum-autoware-carla" {
            for section in ["callbacks:", "topics:", "processes:", "threads:", "trace:"] {
                assert!(yaml.lines().any(|l| l == section), "{name}: {section}\n{yaml}");
            }
        }
        if name == "caret-demos-e2e-jazzy" {
            assert!(yaml.contains("paths:\n- path: /sensor_dummy_node,/topic1,/filter_node"), "{yaml}");
        }
    }
}

/// On the demo, where a node and a topic share a name (`/sensing/imu`): the suggested paths
/// through that topic name it `topic:/sensing/imu`, and the file passes. (Before, the path read
/// back as node → node, and 15 limits were not in the trace.)
#[test]
fn suggested_expectations_pass_on_the_demo() {
    let tmp = TempDir::new("check-suggest-demo");
    let trace = tmp.join("trace");
    let domain = 60 + std::process::id() % 30;
    let out = rostrace()
        .args(["demo", "--duration", "3", "--domain", &domain.to_string(), "-o"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let yaml = suggestion_passes("demo", &trace);
    assert!(yaml.contains(",topic:/sensing/imu,"), "{yaml}");
    // Alone, the name is refused as ambiguous, saying how to write it.
    let (code, _, err) = check(&["--suggest"], &trace);
    assert_eq!(code, Some(0), "{err}");
    let e2e = rostrace()
        .args(["e2e", "--path", "/sensing/imu,/sensing/imu,/localization/fusion"])
        .arg(&trace)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&e2e.stderr);
    assert!(err.contains("write node:/sensing/imu or topic:/sensing/imu"), "{err}");
}

/// One failing limit of each kind, on caret-demos-e2e-jazzy.
const FAILING: &str = "\
callbacks:
- node: /filter_node
  topic: /topic1
  runs: 1000
  duration: {max: 1us}
  period: {p50: [1ms, 2ms]}
- node: /sensor_dummy_node
  timer_period: 100ms
  jitter: {max: 1ns}
topics:
- topic: /topic1
  frequency: [100, 200]
  latency: {p99: 1us}
  dropped: [1, ~]
- topic: /topic1
  publisher: /sensor_dummy_node
  subscriber: /filter_node
  latency: {max: 1ns}
paths:
- path: /sensor_dummy_node,/filter_node,/message_driven_node,/timer_driven_node,/actuator_dummy_node
  latency: {max: 1ms}
  drop_rate: 0
processes:
- process: end_to_end_samp
  busy: 1%
threads:
- process: end_to_end_samp
  share: 0.1%
trace:
  discarded_events: [1, ~]
  unmatched_takes: [1, ~]
";

#[rostrace_testkit::needs(test_data)]
#[test]
fn each_kind_of_expectation_fails_with_its_measured_value() {
    let Some(t) = trace("caret-demos-e2e-jazzy") else { return };
    let dir = TempDir::new("check-fail");
    let (code, v, text) = check_yaml(&dir, FAILING, &t);
    assert_eq!(code, Some(1), "{text}");
    let outcomes = v["outcomes"].as_array().unwrap();
    let metrics: Vec<(&str, &str)> =
        outcomes.iter().map(|o| (o["subject"].as_str().unwrap(), o["metric"].as_str().unwrap())).collect();
    assert_eq!(metrics.len(), 14, "{metrics:?}");
    for o in outcomes {
        assert_eq!(o["status"], "fail", "{o}");
        assert!(o["measured"].is_number(), "{o}");
    }
    assert_eq!(text.lines().filter(|l| l.starts_with("FAIL ")).count(), 14, "{text}");
    assert!(text.contains("14 expectation(s): 0 passed, 14 failed, 0 not in the trace"), "{text}");
    // The values are the analysis's own.
    let a = analyze_json(&[], &[&t]);
    let cb = a["callbacks"].as_array().unwrap().iter().find(|c| c["node"] == "/filter_node" && c["topic"] == "/topic1");
    let cb = cb.unwrap();
    let measured =
        |metric: &str| outcomes.iter().find(|o| o["metric"] == metric).unwrap()["measured"].as_f64().unwrap();
    assert_eq!(measured("duration max"), cb["duration_ns"]["max"].as_f64().unwrap());
    assert_eq!(measured("runs"), cb["count"].as_f64().unwrap());
    let topic = a["topics"].as_array().unwrap().iter().find(|x| x["name"] == "/topic1").unwrap();
    assert_eq!(measured("latency p99"), topic["pub_to_callback_ns"]["p99"].as_f64().unwrap());
    // The path's latency is rostrace e2e's.
    let out = rostrace()
        .args(["e2e", "--json", "-", "--path", outcomes[8]["subject"].as_str().unwrap().trim_start_matches("path ")])
        .arg(&t)
        .output()
        .unwrap();
    let e2e: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(outcomes[8]["metric"], "latency max");
    assert_eq!(outcomes[8]["measured"].as_f64(), e2e["latency"]["max"].as_f64());
    let line = text.lines().find(|l| l.contains("callback /filter_node topic /topic1: duration max")).unwrap();
    assert!(line.starts_with("FAIL ") && line.contains("(at most 1.0 us)") && line.ends_with("[line 5]"), "{line}");
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn what_is_not_in_the_trace_is_its_own_outcome() {
    let Some(t) = trace("caret-demos-e2e-jazzy") else { return };
    let dir = TempDir::new("check-missing");
    let yaml = "callbacks:\n- node: /no_such_node\n  duration: {max: 1s}\n\
                topics:\n- topic: /topic1\n  frequency: [1, 100]\n- topic: /nope\n  dropped: 0\n\
                paths:\n- path: /sensor_dummy_node,/no_such_node\n  latency: {max: 1s}\n";
    let (code, v, text) = check_yaml(&dir, yaml, &t);
    assert_eq!(code, Some(1), "{text}");
    let status: Vec<&str> = v["outcomes"].as_array().unwrap().iter().map(|o| o["status"].as_str().unwrap()).collect();
    assert_eq!(status, ["not_in_trace", "pass", "not_in_trace", "not_in_trace"]);
    assert_eq!((v["passed"].as_u64(), v["not_in_trace"].as_u64()), (Some(1), Some(3)));
    assert!(
        text.contains("MISSING  callback /no_such_node: duration max not in the trace: no such callback"),
        "{text}"
    );
    assert!(text.contains("no such node or topic"), "{text}");
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn a_malformed_file_is_an_error_naming_the_line_and_the_key() {
    let Some(t) = trace("caret-demos-e2e-jazzy") else { return };
    let dir = TempDir::new("check-malformed");
    let f = dir.join("bad.yaml");
    for (yaml, want) in [
        (
            "callbacks:\n- node: /filter_node\n  topic: /topic1\n  durations: {max: 1ms}\n",
            "line 4: unknown key `durations`",
        ),
        ("topics:\n- topic: /topic1\n  latency: {p99: 5}\n", "line 3: `latency.p99`: \"5\" is not a duration"),
        ("callbacks: [\n", "line 2"),
    ] {
        std::fs::write(&f, yaml).unwrap();
        let (code, out, err) = check(&["--expect", f.to_str().unwrap()], &t);
        assert_eq!(code, Some(1), "{err}");
        assert!(out.is_empty(), "{out}");
        assert!(err.starts_with(&format!("rostrace: error: {}: {want}", f.display())), "{err}");
    }
}

/// A NUL, even in a comment, would end the file for the YAML parser, silently: it is an error
/// naming the file, line, column and byte, as is any other character YAML does not allow, and
/// a file that is not UTF-8.
#[test]
fn a_character_yaml_does_not_allow_is_an_error_naming_where() {
    let Some(t) = trace("caret-demos-e2e-jazzy") else { return };
    let dir = TempDir::new("check-nul");
    let f = dir.join("nul.yaml");
    let two = "callbacks:\n- node: /filter_node\n  topic: /topic1\n  runs: 1 # one\n- node: /no_such_node\n  runs: 1\n";
    let (code, v, text) = check_yaml(&dir, two, &t);
    assert_eq!((code, v["outcomes"].as_array().unwrap().len()), (Some(1), 2), "{text}");
    for (yaml, want) in [
        (two.replace("# one", "# one\0"), "line 4, column 16 (byte 64): NUL U+0000, which YAML does not allow"),
        (two.replace("/no_such_node", "/no\x1b[2J"), "line 5, column 12 (byte 76): the control character U+001B"),
        (two.replace("/no_such_node", "/no\u{fffe}"), "line 5, column 12 (byte 76): the noncharacter U+FFFE"),
    ] {
        std::fs::write(&f, yaml).unwrap();
        let (code, out, err) = check(&["--expect", f.to_str().unwrap()], &t);
        assert_eq!(code, Some(1), "{err}");
        assert!(out.is_empty(), "{out}");
        assert!(err.starts_with(&format!("rostrace: error: {}: {want}", f.display())), "{err}");
    }
    let mut latin1 = two.as_bytes().to_vec();
    latin1.splice(84..84, [0xe9]);
    std::fs::write(&f, &latin1).unwrap();
    let (code, _, err) = check(&["--expect", f.to_str().unwrap()], &t);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.starts_with(&format!("rostrace: error: {}: line 5 (byte 84): not UTF-8", f.display())), "{err}");
}

/// `xmllint`'s verdict on `xml` against the vendored JUnit schema (tests/data/junit/junit-10.xsd):
/// whether it is valid, and what xmllint said.
fn junit_valid(xml: &Path) -> (bool, String) {
    let xsd = repo().join("crates/cli/tests/data/junit/junit-10.xsd");
    let out = std::process::Command::new("xmllint").args(["--noout", "--schema"]).arg(&xsd).arg(xml).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[rostrace_testkit::needs(test_data, python3, xmllint)]
#[test]
fn junit_reports_are_valid_junit() {
    let Some(t) = trace("caret-demos-e2e-jazzy") else { return };
    let tools = rostrace_testkit::have("python3", "--version") && rostrace_testkit::have("xmllint", "--version");
    if !require(tools, "python3 and xmllint (Debian's libxml2-utils)") {
        return;
    }
    let dir = TempDir::new("check-junit");
    let f = dir.join("e.yaml");
    let with_a_pass = FAILING.replace("processes:\n", "processes:\n- process: end_to_end_samp\n  busy: 1000%\n");
    std::fs::write(&f, with_a_pass).unwrap();
    let x = dir.join("report.xml");
    let (code, _, err) = check(&["--expect", f.to_str().unwrap(), "--junit", x.to_str().unwrap()], &t);
    assert_eq!(code, Some(1), "{err}");
    let report = std::fs::read_to_string(&x).unwrap();
    let (valid, said) = junit_valid(&x);
    assert!(valid, "{said}\n{report}");
    let script = "import sys, xml.etree.ElementTree as E\n\
                  r = E.parse(sys.argv[1]).getroot()\n\
                  s = r.find('testsuite')\n\
                  cases = s.findall('testcase')\n\
                  fails = [c for c in cases if c.find('failure') is not None]\n\
                  assert r.tag == 'testsuites' and int(s.get('tests')) == len(cases), r.attrib\n\
                  assert int(s.get('failures')) == len(fails) == int(r.get('failures'))\n\
                  assert all(f.find('failure').get('message') for f in fails)\n\
                  f = fails[0]\n\
                  print(len(cases), len(fails), f.get('classname'), '|', f.find('failure').get('message'), '|', f.find('failure').text)\n";
    let out = std::process::Command::new("python3").args(["-c", script]).arg(&x).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}\n{report}", String::from_utf8_lossy(&out.stderr));
    assert!(said.starts_with("15 14 callback /filter_node topic /topic1 | runs "), "{said}");
    assert!(said.trim_end().ends_with(&format!("| {}:4", f.display())), "{said}");

    // A report where every limit passes is valid too.
    let (_, suggested, _) = check(&["--suggest"], &t);
    std::fs::write(&f, suggested).unwrap();
    let (code, _, err) = check(&["--expect", f.to_str().unwrap(), "--junit", x.to_str().unwrap()], &t);
    assert_eq!(code, Some(0), "{err}");
    let (valid, said) = junit_valid(&x);
    assert!(valid, "{said}");
    // The schema is applied: a test case with its name under another attribute is rejected.
    let passing = std::fs::read_to_string(&x).unwrap();
    assert!(!passing.contains("<failure"), "{passing}");
    std::fs::write(&x, passing.replacen("\" name=\"", "\" label=\"", 1)).unwrap();
    let (valid, said) = junit_valid(&x);
    assert!(!valid && said.contains("'label' is not allowed") && said.contains("'name' is required"), "{said}");
}

/// Names with characters XML 1.0 forbids (U+FFFE, U+FFFF, controls), in the subject and the
/// file's name, are escaped: xmllint reads the report, which is valid JUnit.
#[test]
fn junit_reports_of_names_xml_forbids_are_well_formed() {
    let Some(t) = trace("caret-demos-e2e-jazzy") else { return };
    if !require(rostrace_testkit::have("xmllint", "--version"), "xmllint (Debian's libxml2-utils)") {
        return;
    }
    let dir = TempDir::new("check-junit-chars");
    let f = dir.join("e\u{ffff}.yaml");
    std::fs::write(&f, "topics:\n- topic: \"/t\\uFFFE\\uFFFF\\x01\\u0085\"\n  dropped: 0\n").unwrap();
    let x = dir.join("report.xml");
    let (code, _, err) = check(&["--expect", f.to_str().unwrap(), "--junit", x.to_str().unwrap()], &t);
    assert_eq!(code, Some(1), "{err}");
    let report = std::fs::read_to_string(&x).unwrap();
    let out = std::process::Command::new("xmllint").args(["--noout"]).arg(&x).output().unwrap();
    assert!(out.status.success(), "{}\n{report}", String::from_utf8_lossy(&out.stderr));
    assert!(report.contains(r#"classname="topic /t\xef\xbf\xbe\xef\xbf\xbf\x01\xc2\x85""#), "{report}");
    assert!(report.contains(r#"\xef\xbf\xbf.yaml:3</failure>"#), "{report}");
    let (valid, said) = junit_valid(&x);
    assert!(valid, "{said}\n{report}");
}
