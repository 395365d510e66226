//! Standard output that cannot be written: a pipe closed by its reader (`| head`) ends the
//! command quietly with 0, any other error (`> /dev/full`) with one line naming it and 1;
//! never a panic (101).

mod common;

use common::*;
use std::process::{Command, Output, Stdio};

/// Every command that prints to standard output, with arguments, on the shared traces.
fn commands() -> Vec<(String, Vec<String>)> {
    let big = shared().join("traces/tum-autoware-carla").display().to_string();
    let demo = shared().join("traces/caret-demos-e2e-jazzy").display().to_string();
    let sessions = std::env::temp_dir().join(format!("rostrace-stdout-errors-{}", std::process::id()));
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        // --wide: more text than a pipe holds.
        ("analyze".into(), v(&["analyze", "--wide", &big])),
        ("analyze --json -".into(), v(&["analyze", "--json", "-", &big])),
        ("info".into(), v(&["info", &big])),
        ("info --json".into(), v(&["info", "--json", &big])),
        ("architecture".into(), v(&["architecture", &big])),
        ("architecture -o -".into(), v(&["architecture", "-o", "-", &big])),
        ("report -o -".into(), v(&["report", "-o", "-", &demo])),
        ("export --format perfetto -o -".into(), v(&["export", "--format", "perfetto", "-o", "-", &demo])),
        ("paths".into(), v(&["paths", &demo, "--from", "/sensor_dummy_node", "--to", "/actuator_dummy_node"])),
        (
            "e2e".into(),
            v(&[
                "e2e",
                &demo,
                "--path",
                "/sensor_dummy_node,/filter_node,/message_driven_node,/timer_driven_node,/actuator_dummy_node",
            ]),
        ),
        ("events".into(), v(&["events", &demo])),
        ("list".into(), v(&["list", "-p", &sessions.display().to_string()])),
        ("lib".into(), v(&["lib"])),
    ]
}

/// Runs `args` with standard output to /dev/full.
fn to_dev_full(args: &[String]) -> Output {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    rostrace().args(args).stdout(full).stderr(Stdio::piped()).output().unwrap()
}

/// Runs `args` with standard output to a pipe whose reader is closed before it writes.
pub fn to_closed_pipe(cmd: &mut Command) -> Output {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

/// The one line of `err` about standard output, checked: it names the error.
pub fn check_full(what: &str, out: &Output) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{what} > /dev/full: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("standard output")).collect();
    assert_eq!(lines, ["rostrace: writing to standard output: No space left on device (os error 28)"], "{what}: {err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn commands_exit_quietly_on_a_closed_pipe() {
    rostrace_testkit::needs_test_data!();
    for (what, args) in commands() {
        let out = to_closed_pipe(rostrace().args(&args));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{what} | (closed): {err}");
        assert_eq!(err, "", "{what}");
    }
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn commands_say_once_that_standard_output_is_full() {
    rostrace_testkit::needs_test_data!();
    for (what, args) in commands() {
        let out = to_dev_full(&args);
        check_full(&what, &out);
        assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1, "{what}");
    }
}
