//! Upstream's own trace tests against rostrace, run by `tools/upstream-tracing-tests.sh` on the
//! stack of `tools/ros2-tools-jazzy.sh` (rclcpp 28.1.6 on the Jazzy wheels, launch, ros2cli and
//! ros2_tracing 8.2.2's tools and test packages; in `$ROSTRACE_RCLCPP_DIR`, else
//! `/var/tmp/rostrace-ci-cache/rclcpp-jazzy`):
//!
//! - `test_tracetools`' 13 pytest files unchanged: upstream's `TraceTestCase` sets up its LTTng
//!   session through lttngpy and launches the C++ test nodes with `launch_ros`; rostrace's
//!   library serves the nodes (first in `LD_LIBRARY_PATH`) with its LTTng backend, and each test
//!   checks its family of tracepoints (event set, payload types, handles, links between events,
//!   their order);
//! - the same 13 through rostrace's `TraceTestCase` (only the import changed): the nodes recorded
//!   by rostrace's embedded tracer under `rostrace.launch.Trace`;
//! - `test_tracetools_launch` (8) with `rostrace.launch.Trace`, and `test_ros2trace` (12) with
//!   `ros2 rostrace-trace`: every case passes but one the script lists with why.
//!
//! When a test of the first suite fails, it runs with upstream's tracetools 8.2.4 (the baseline)
//! and the message says how it fared, to tell the environment's failures from rostrace's.

mod common;

use common::*;
use std::path::PathBuf;
use std::process::{Command, Output};

/// The stack's directory.
fn stack_dir() -> PathBuf {
    std::env::var_os("ROSTRACE_RCLCPP_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/rostrace-ci-cache/rclcpp-jazzy"))
}

/// `tools/upstream-tracing-tests.sh --library LIBRARY DIR` (the suites of the library's
/// default). The script takes the LTTng tests' lock itself (a lock taken here too would wait for
/// itself); it builds rostrace's Python package in `target/python-package`, the Python tests'.
fn run(library: &str) -> Output {
    let target = PathBuf::from(env!("CARGO_BIN_EXE_rostrace")).parent().unwrap().parent().unwrap().to_path_buf();
    Command::new("bash")
        .arg(repo().join("tools/upstream-tracing-tests.sh"))
        .args(["--library", library])
        .env("CARGO_TARGET_DIR", target)
        .arg(stack_dir())
        .env("ROSTRACE", env!("CARGO_BIN_EXE_rostrace"))
        .env_remove("ROSTRACE_UPSTREAM_TESTS_OUT")
        .output()
        .expect("bash")
}

/// The last line of the run's output (`N passed, M failed`), and the whole output.
fn said(out: &Output) -> (String, String) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").to_string();
    (last, format!("{stdout}{}", String::from_utf8_lossy(&out.stderr)))
}

#[rostrace_testkit::needs(ros2_tools, lttng)]
#[test]
fn upstream_test_tracetools_pass_with_rostrace() {
    let dir = stack_dir();
    if !require(
        dir.join(".rostrace-tools-complete").exists(),
        &format!("ROS 2's tools for Jazzy in {} (tools/ros2-tools-jazzy.sh)", dir.display()),
    ) || !require(have_lttng(), "LTTng (lttng-tools)")
    {
        return;
    }
    let out = run("rostrace");
    let (last, all) = said(&out);
    // Past the harness's capture: the counts of each file belong in the log of a passing run too.
    let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), all.as_bytes());
    assert!(
        all.contains("(rostrace, first in LD_LIBRARY_PATH), ROSTRACE_BACKEND=lttng"),
        "the tests did not run with rostrace's library and its LTTng backend:\n{all}"
    );
    if !all.contains("\nlttng: 13 passed, 0 failed\n") {
        let base = run("upstream");
        let (base_last, base_all) = said(&base);
        panic!(
            "upstream's test_tracetools with rostrace's library: not 13 passed, 0 failed; \
             with upstream's tracetools 8.2.4: {base_last}\n--- rostrace ---\n{all}\n--- upstream ---\n{base_all}"
        );
    }
    for line in [
        "embedded: 13 passed, 0 failed",
        "launch: 7 passed, 1 failed (1 expected, said why above)",
        "ros2trace: 12 passed, 0 failed",
    ] {
        assert!(all.contains(&format!("\n{line}\n")), "{line:?} not said:\n{all}");
    }
    assert_eq!(last, "26 passed, 0 failed", "{all}");
    assert!(out.status.success(), "{all}");
}
