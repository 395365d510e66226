//! `#[needs(...)]`: the build-time probe says what the tests' own checks say at run time, and a
//! test needing what is missing is listed by the harness as ignored, with the reason.

use rostrace_testkit::{have, have_lttng, test_data, tools_required, TempDir};
use std::path::PathBuf;
use std::process::Command;

/// What the build script found missing: (requirement, why).
fn missing() -> Vec<(&'static str, &'static str)> {
    let probed: &[(&str, Option<&str>)] = rostrace_testkit::probed!();
    probed.iter().filter_map(|(n, why)| why.map(|w| (*n, w))).collect()
}

fn venv_root() -> PathBuf {
    std::env::var_os("ROSTRACE_VENV_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/rostrace-ci-cache/venvs"))
}

fn imports(python: &str, module: &str) -> bool {
    Command::new(python).args(["-c", &format!("import {module}")]).output().is_ok_and(|o| o.status.success())
}

/// Whether a tmpfs mounts here, as the full-disk tests mount theirs.
fn tmpfs_mounts() -> bool {
    let dir = TempDir::new("needs-tmpfs");
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64K", "tmpfs"])
        .arg(dir.path())
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        let _ = Command::new("umount").arg(dir.path()).output();
    }
    ok
}

/// The requirement `name` as the tests check it at run time.
fn there(name: &str) -> bool {
    let venv = venv_root();
    match name {
        "test_data" => test_data().join("traces").is_dir(),
        "lttng" => have_lttng(),
        "babeltrace2" => have("babeltrace2", "--version"),
        "bt2_python" => imports("/usr/bin/python3", "bt2"),
        "chromium" => have("chromium", "--version"),
        "tmux" => have("tmux", "-V"),
        "prometheus" => have("prometheus", "--version"),
        "xmllint" => have("xmllint", "--version"),
        "python3" => have("python3", "--version"),
        "pyyaml" => imports("python3", "yaml"),
        "cc" => have("cc", "--version"),
        "cxx" => have("c++", "--version"),
        "cmake" => have("cmake", "--version"),
        "binutils" => have("readelf", "--version") && have("nm", "--version"),
        "cyclonedds" => std::path::Path::new("/usr/include/dds/dds.h").exists() && have("idlc", "-v"),
        "tmpfs" => tmpfs_mounts(),
        "venvs" => {
            ["jazzy", "kilted"].iter().all(|d| venv.join(d).join("bin/python").exists())
                && ["jazzy", "kilted"].iter().all(|d| venv.join(d).join(".rostrace-complete").exists())
                && ["8.2.4", "8.6.0"].iter().all(|v| venv.join(format!("upstream-{v}/libtracetools.so")).exists())
        }
        "data_venv" => venv.join("data/bin/python").exists(),
        "rclcpp" => std::env::var_os("ROSTRACE_RCLCPP_DIR")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/var/tmp/rostrace-ci-cache/rclcpp-jazzy"))
            .join(".rostrace-complete")
            .exists(),
        "ros2_tools" => std::env::var_os("ROSTRACE_RCLCPP_DIR")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/var/tmp/rostrace-ci-cache/rclcpp-jazzy"))
            .join(".rostrace-tools-complete")
            .exists(),
        _ => panic!("{name}: a requirement this test does not know"),
    }
}

#[test]
fn the_probe_agrees_with_the_checks_at_run_time() {
    let probed: &[(&str, Option<&str>)] = rostrace_testkit::probed!();
    if tools_required() {
        assert_eq!(missing(), [], "under ROSTRACE_REQUIRE_TOOLS=1 nothing is missing");
        return;
    }
    let differ: Vec<String> = probed
        .iter()
        .filter(|(n, why)| why.is_none() != there(n))
        .map(|(n, why)| format!("{n}: probed {why:?}, at run time {}", if there(n) { "there" } else { "missing" }))
        .collect();
    assert!(differ.is_empty(), "{differ:#?}");
}

#[rostrace_testkit::needs(test_data, lttng)]
#[test]
fn needs_the_data_and_lttng() {
    assert!(test_data().join("traces").is_dir() && have_lttng());
}

#[test]
fn a_test_needing_what_is_missing_is_ignored_with_the_reason() {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(&exe).args(["needs_the_data_and_lttng", "--exact", "--test-threads=1"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let why: Vec<String> = missing()
        .into_iter()
        .filter(|(n, _)| ["test_data", "lttng"].contains(n))
        .map(|(_, why)| format!("needs {why}"))
        .collect();
    let line = if why.is_empty() {
        "test needs_the_data_and_lttng ... ok".to_string()
    } else {
        format!("test needs_the_data_and_lttng ... ignored, {}", why.join("; "))
    };
    assert!(text.lines().any(|l| l == line), "no line {line:?} in:\n{text}");
}
