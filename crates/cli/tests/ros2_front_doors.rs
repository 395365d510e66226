//! ROS 2's own front doors on rostrace, on the Jazzy stack of `tools/ros2-tools-jazzy.sh`: launch
//! files (Python's `rostrace.launch.Trace`, XML's `<rostrace>` tag) tracing C++ nodes (rclcpp:
//! the three processes of `tests/rclcpp/system.cpp`) and Python nodes (rclpy: a talker and a
//! listener, `tests/rclpy/chatter.py`) started by `ros2 launch`; and `ros2 rostrace-trace`
//! (rostrace's `ros2 trace`) recording a system that runs while its session does, through LTTng
//! (the nodes loading rostrace's library in its LTTng mode) and through rostrace's embedded
//! tracer (the nodes started with the environment the command prints). Each recording is
//! analysed by `rostrace analyze`: every message matched, the talker's and the C++ pipeline's
//! counts equal to what the programs counted.

mod common;
mod real;

use common::*;
use real::{build_system, rclcpp_dir, stack_env, with_env};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const MESSAGES: usize = 40;
const POINTS: usize = 20;

/// The stack's environment, the C++ system built on it, and the checkout's Python package
/// installed into it (once per test process).
struct Stack {
    env: Vec<(String, String)>,
    system: PathBuf,
}

fn stack() -> &'static Stack {
    static STACK: OnceLock<Stack> = OnceLock::new();
    STACK.get_or_init(|| {
        let dir = rclcpp_dir();
        let env = stack_env(&dir);
        let system = build_system(&dir, &env);
        // The package's build directory is the Python tests' (target/python-package).
        let target = PathBuf::from(env!("CARGO_BIN_EXE_rostrace")).parent().unwrap().parent().unwrap().to_path_buf();
        // In the test's own environment: cargo builds the package.
        let out = Command::new(repo().join("tools/python-package.sh"))
            .arg(dir.join("venv"))
            .env("CARGO_TARGET_DIR", &target)
            .output()
            .unwrap();
        assert!(out.status.success(), "python-package.sh: {}", String::from_utf8_lossy(&out.stderr));
        Stack { env, system }
    })
}

/// A command on the stack: its environment, rostrace's library named to it, a DDS domain of
/// the test's own.
fn on_stack(program: impl AsRef<std::ffi::OsStr>, domain: u32) -> Command {
    let mut c = Command::new(program);
    with_env(&mut c, &stack().env);
    let lib = PathBuf::from(env!("CARGO_BIN_EXE_rostrace")).parent().unwrap().join("deps/libtracetools.so");
    c.env("ROSTRACE_LIB", lib).env("ROS_DOMAIN_ID", domain.to_string()).env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST");
    c.env_remove("ROS_DISTRO").env("ROS_DISTRO", "jazzy");
    c
}

fn chatter() -> PathBuf {
    repo().join("crates/cli/tests/rclpy/chatter.py")
}

/// `rostrace analyze --json -` of a recording, which must succeed.
fn analysis(dir: &Path) -> Value {
    analyze_json(&[], &[dir])
}

/// The recording holds the talker's messages, each taken and matched (to the listener's callback
/// run, when `callbacks`: rclpy has no tracepoints of its own, its callbacks are traced by the
/// rclpy instrumentation that rostrace's sessions load), the C++ pipeline's (when `cpp`), and no
/// message unmatched.
fn assert_recorded(dir: &Path, what: &str, cpp: bool, callbacks: bool) -> Value {
    let r = analysis(dir);
    let topic = |name: &str| r["topics"].as_array().unwrap().iter().find(|t| t["name"] == name).cloned();
    let chatter = topic("/chatter").unwrap_or_else(|| panic!("{what}: no /chatter in {}", r["topics"]));
    assert_eq!(chatter["publishes"].as_u64(), Some(MESSAGES as u64), "{what}: {chatter}");
    assert_eq!(chatter["takes"].as_u64(), Some(MESSAGES as u64), "{what}: {chatter}");
    assert_eq!(chatter["pub_to_take_ns"]["count"].as_u64(), Some(MESSAGES as u64), "{what}: {chatter}");
    if callbacks {
        assert_eq!(chatter["pub_to_callback_ns"]["count"].as_u64(), Some(MESSAGES as u64), "{what}: {chatter}");
    }
    assert_eq!(r["flows_unmatched"].as_u64(), Some(0), "{what}: {}", r["warnings"]);
    let procs: Vec<&str> = r["processes"].as_array().unwrap().iter().filter_map(|p| p["procname"].as_str()).collect();
    assert!(procs.iter().filter(|p| p.starts_with("python")).count() >= 2, "{what}: {procs:?}");
    if cpp {
        let points = topic("/front/points").unwrap_or_else(|| panic!("{what}: no /front/points in {}", r["topics"]));
        assert_eq!(points["publishes"].as_u64(), Some(POINTS as u64), "{what}: {points}");
        assert_eq!(points["pub_to_callback_ns"]["count"].as_u64(), Some(POINTS as u64), "{what}: {points}");
        // The system's three processes (re-executed through /proc/self/exe: named `exe`).
        assert_eq!(procs.len(), 5, "{what}: {procs:?}");
    }
    r
}

fn launched(out: &Output, what: &str) {
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{what}: ros2 launch: {}\n{text}", out.status);
}

/// A launch file in Python (`from rostrace.launch import Trace`) and one in XML (`<rostrace>`),
/// each starting the C++ system and the two rclpy nodes: `ros2 launch` records them all into
/// the session, finished when launch ends.
#[rostrace_testkit::needs(ros2_tools, cmake)]
#[test]
fn launch_files_trace_cpp_and_python_nodes() {
    let s = stack();
    let tmp = TempDir::new("front-launch");
    let sys = s.system.display().to_string();
    let py = chatter().display().to_string();
    let base = tmp.path().display().to_string();
    let cpp_args = format!("--ns front --points {POINTS} --calls 2 --intra 5 --timeout 60");
    let python = format!(
        r#"from launch import LaunchDescription
from launch.actions import ExecuteProcess
from rostrace.launch import Trace


def generate_launch_description():
    return LaunchDescription([
        Trace(session_name='py', base_path='{base}'),
        ExecuteProcess(cmd=['{sys}'] + '{cpp_args}'.split(), output='screen'),
        ExecuteProcess(cmd=['python3', '{py}', '--role', 'listener', '--count', '{MESSAGES}'], output='screen'),
        ExecuteProcess(cmd=['python3', '{py}', '--role', 'talker', '--count', '{MESSAGES}'], output='screen'),
    ])
"#
    );
    let xml = format!(
        r#"<launch>
  <rostrace session-name="xml" base-path="{base}" events-ust="ros2:* ros2_caret:*"/>
  <executable cmd="{sys} {cpp_args}" output="screen"/>
  <executable cmd="python3 {py} --role listener --count {MESSAGES}" output="screen"/>
  <executable cmd="python3 {py} --role talker --count {MESSAGES}" output="screen"/>
</launch>
"#
    );
    for (i, (name, file, text)) in [("py", "trace.launch.py", python), ("xml", "trace.launch.xml", xml)].into_iter().enumerate() {
        let path = tmp.join(file);
        std::fs::write(&path, text).unwrap();
        let out = on_stack("timeout", 140 + i as u32 + std::process::id() % 20 * 2)
            .args(["-s", "INT", "-k", "10", "120", "ros2", "launch"])
            .arg(&path)
            .output()
            .unwrap();
        launched(&out, name);
        let r = assert_recorded(&tmp.join(name), name, true, true);
        if name == "xml" {
            // The tag's events-ust: CARET's events recorded too.
            assert!(r["ros_events"].as_u64().unwrap() > 0);
        }
    }
}

/// `ros2 rostrace-trace start`, a system run, `stop`: through LTTng (the nodes load rostrace's
/// libtracetools.so, in its LTTng mode, as their tracetools), and through rostrace's embedded
/// tracer (the nodes started with the environment `start --backend embedded` printed).
#[rostrace_testkit::needs(ros2_tools, lttng)]
#[test]
fn ros2_trace_records_a_running_system() {
    let s = stack();
    let _ = s;
    let tmp = TempDir::new("front-ros2-trace");
    let libdir = tmp.join("lib");
    std::fs::create_dir_all(&libdir).unwrap();
    let lib = PathBuf::from(env!("CARGO_BIN_EXE_rostrace")).parent().unwrap().join("deps/libtracetools.so");
    std::os::unix::fs::symlink(&lib, libdir.join("libtracetools.so")).unwrap();
    let provider = Command::new(env!("CARGO_BIN_EXE_rostrace")).args(["lib", "--provider", "--distro", "jazzy"]).output().unwrap();
    let provider = String::from_utf8_lossy(&provider.stdout).trim().to_string();
    let domain = 170 + std::process::id() % 20;
    let ros2 = |args: &[&str]| {
        let out = on_stack("ros2", domain).arg("rostrace-trace").args(args).output().unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "ros2 rostrace-trace {args:?}: {text}");
        text
    };
    // Both nodes at once; each prints its count, and both must have done their part.
    let run_pair = |env: &[(String, String)]| {
        let spawn = |role: &str| {
            let mut c = on_stack("python3", domain);
            c.arg(chatter()).args(["--role", role, "--count", &MESSAGES.to_string()]);
            for (k, v) in env {
                c.env(k, v);
            }
            c.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap()
        };
        let listener = spawn("listener");
        let talker = spawn("talker");
        for (role, child) in [("talker", talker), ("listener", listener)] {
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "{role}: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        }
    };
    let base = tmp.path().display().to_string();
    let _lttng = lttng_lock();
    // LTTng: as ros2_tracing's `ros2 trace`; the session exists while the system runs.
    let name = format!("front-lttng-{}", std::process::id());
    let _session = LttngSession(name.clone());
    ros2(&["start", &name, "-p", &base, "-u", "ros2:*"]);
    let ld = format!("{}:{}", libdir.display(), s.env.iter().find(|(k, _)| k == "LD_LIBRARY_PATH").map_or("", |(_, v)| v));
    run_pair(&[
        ("LD_LIBRARY_PATH".into(), ld),
        ("ROSTRACE_BACKEND".into(), "lttng".into()),
        ("ROSTRACE_LTTNG_PROVIDER".into(), provider.clone()),
    ]);
    ros2(&["stop", &name, "-p", &base]);
    assert_recorded(&tmp.join(&name), "lttng", false, false);
    // Embedded: the environment printed, the processes started with it.
    let said = ros2(&["start", "front-embedded", "-p", &base, "--backend", "embedded"]);
    let env: Vec<(String, String)> = said
        .lines()
        .filter_map(|l| l.trim().strip_prefix("export "))
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.trim_matches('\'').to_string()))
        .collect();
    assert!(env.iter().any(|(k, _)| k == "ROSTRACE_SESSION_DIR"), "{said}");
    run_pair(&env);
    ros2(&["stop", "front-embedded", "-p", &base]);
    assert_recorded(&tmp.join("front-embedded"), "embedded", false, true);
}
