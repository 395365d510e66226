//! Probes, once per build, what the tests may need (tools, the shared test data, the
//! virtualenvs) and writes `$OUT_DIR/probed.rs`: each requirement's name and, when it is missing,
//! one line saying why. The conditions are those of the tests' own checks at run time
//! (`rostrace_testkit::require` and the helpers around it), so that a test compiled to run finds
//! what it needs, and one compiled as ignored would have skipped.
//!
//! With `ROSTRACE_REQUIRE_TOOLS=1` (CI) nothing is probed: every requirement counts as present,
//! and a missing one fails its tests at run time.
//!
//! Cargo reruns this script when a variable below changes, when a directory on `PATH` changes (a
//! tool installed or removed there), when the Debian package database changes (`apt-get install`),
//! and when something found here changes or goes away. Only paths that exist are watched: cargo
//! reruns a script that watches a missing path on every build, and that would rebuild every test.
//! A watched directory is scanned whole, so no ancestor of a missing path is watched (the one of
//! `../shared` holds the repository): test data or a virtualenv that appears later is noticed when
//! the script reruns for one of the reasons above.

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Every requirement: its name in `#[needs(...)]`, and what it is, for the ignore message.
const REQUIREMENTS: &[(&str, &str)] = &[
    ("test_data", "the shared test data"),
    ("lttng", "LTTng (lttng-tools)"),
    ("babeltrace2", "babeltrace2"),
    ("bt2_python", "babeltrace2's Python bindings (python3-bt2)"),
    ("chromium", "Chromium"),
    ("tmux", "tmux"),
    ("prometheus", "Prometheus"),
    ("xmllint", "xmllint (libxml2-utils)"),
    ("python3", "python3"),
    ("pyyaml", "python3 with PyYAML"),
    ("cc", "a C compiler"),
    ("cxx", "a C++ compiler"),
    ("cmake", "cmake"),
    ("binutils", "binutils (readelf, nm)"),
    ("cyclonedds", "Cyclone DDS (cyclonedds-dev, cyclonedds-tools)"),
    ("tmpfs", "root, to mount a tmpfs"),
    ("venvs", "the ROS 2 virtualenvs (tools/ros2-venvs.sh)"),
    ("data_venv", "the data virtualenv (tools/data-venv.sh)"),
    ("rclcpp", "rclcpp for Jazzy (tools/rclcpp-jazzy.sh)"),
    ("ros2_tools", "ROS 2's tools for Jazzy (tools/ros2-tools-jazzy.sh)"),
];

/// The variables the probes read.
const VARS: &[&str] =
    &["ROSTRACE_TEST_DATA", "ROSTRACE_REQUIRE_TOOLS", "ROSTRACE_VENV_DIR", "ROSTRACE_RCLCPP_DIR", "PATH"];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for v in VARS {
        println!("cargo:rerun-if-env-changed={v}");
    }
    let required = env::var("ROSTRACE_REQUIRE_TOOLS").is_ok_and(|v| v == "1");
    let mut watch = Vec::new();
    let mut code = String::from(
        "/// Each requirement's name, and why it is missing on this machine (`None`: it is there).\n\
         const PROBED: &[(&str, Option<&str>)] = &[\n",
    );
    for (name, what) in REQUIREMENTS {
        let why = if required { Ok(()) } else { probe(name, &mut watch) };
        match why {
            Ok(()) => code += &format!("    ({name:?}, None),\n"),
            Err(why) => code += &format!("    ({name:?}, Some({:?})),\n", format!("{what}: {why}")),
        }
    }
    code += "];\n";
    if !required {
        watch.extend(path_dirs());
        watch.extend(["/usr/bin", "/var/lib/dpkg/status"].map(PathBuf::from).into_iter().filter(|p| p.exists()));
    }
    watch.sort();
    watch.dedup();
    for p in &watch {
        println!("cargo:rerun-if-changed={}", p.display());
    }
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR")).join("probed.rs");
    std::fs::write(&out, code).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
}

/// Whether the requirement `name` is there; otherwise why not. Paths found are added to `watch`.
fn probe(name: &str, watch: &mut Vec<PathBuf>) -> Result<(), String> {
    match name {
        "test_data" => {
            let traces = test_data().join("traces");
            found(&traces, watch).map_err(|e| format!("{e} (set ROSTRACE_TEST_DATA to its directory)"))
        }
        "lttng" => command("lttng", "--version").and(command("lttng-sessiond", "--version")),
        "babeltrace2" => command("babeltrace2", "--version"),
        // The Python of the system, whose bindings `python3-bt2` installs, as the tests run it.
        "bt2_python" => python("/usr/bin/python3", "bt2"),
        "chromium" => command("chromium", "--version"),
        "tmux" => command("tmux", "-V"),
        "prometheus" => command("prometheus", "--version"),
        "xmllint" => command("xmllint", "--version"),
        "python3" => command("python3", "--version"),
        "pyyaml" => python("python3", "yaml"),
        "cc" => command("cc", "--version"),
        "cxx" => command("c++", "--version"),
        "cmake" => command("cmake", "--version"),
        "binutils" => command("readelf", "--version").and(command("nm", "--version")),
        "cyclonedds" => found(Path::new("/usr/include/dds/dds.h"), watch).and(command("idlc", "-v")),
        "tmpfs" => may_mount(),
        "venvs" => {
            let root = venv_root();
            ["jazzy", "kilted"]
                .iter()
                .flat_map(|d| [format!("{d}/bin/python"), format!("{d}/.rostrace-complete")])
                .chain(["upstream-8.2.4", "upstream-8.6.0"].map(|u| format!("{u}/libtracetools.so")))
                .try_for_each(|p| found(&root.join(p), watch))
        }
        "data_venv" => found(&venv_root().join("data/bin/python"), watch),
        "rclcpp" => found(&rclcpp_dir().join(".rostrace-complete"), watch),
        "ros2_tools" => found(&rclcpp_dir().join(".rostrace-tools-complete"), watch),
        _ => unreachable!("{name}: no probe"),
    }
}

/// `$VAR` when set and not empty.
fn var(name: &str) -> Option<PathBuf> {
    env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// The shared test data: `$ROSTRACE_TEST_DATA`, else `../shared` beside the repository (as
/// `rostrace_testkit::test_data`).
fn test_data() -> PathBuf {
    var("ROSTRACE_TEST_DATA").unwrap_or_else(|| {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        match repo.canonicalize() {
            Ok(r) => r.parent().unwrap_or(&r).join("shared"),
            Err(_) => repo.join("../shared"),
        }
    })
}

/// Where tools/ros2-venvs.sh and tools/data-venv.sh put their virtualenvs.
fn venv_root() -> PathBuf {
    var("ROSTRACE_VENV_DIR").unwrap_or_else(|| PathBuf::from("/var/tmp/rostrace-ci-cache/venvs"))
}

/// Where tools/rclcpp-jazzy.sh builds rclcpp.
fn rclcpp_dir() -> PathBuf {
    var("ROSTRACE_RCLCPP_DIR").unwrap_or_else(|| PathBuf::from("/var/tmp/rostrace-ci-cache/rclcpp-jazzy"))
}

/// Whether `p` exists; it is then watched (its removal reruns the probe).
fn found(p: &Path, watch: &mut Vec<PathBuf>) -> Result<(), String> {
    if p.exists() {
        watch.push(p.to_path_buf());
        Ok(())
    } else {
        Err(format!("{} not found", p.display()))
    }
}

/// Whether `cmd arg` runs and succeeds (found on `PATH`).
fn command(cmd: &str, arg: &str) -> Result<(), String> {
    run(Command::new(cmd).arg(arg), &format!("{cmd} {arg}"))
}

/// Whether `python -c 'import module'` succeeds.
fn python(python: &str, module: &str) -> Result<(), String> {
    run(Command::new(python).arg("-c").arg(format!("import {module}")), &format!("{python} -c 'import {module}'"))
}

fn run(c: &mut Command, what: &str) -> Result<(), String> {
    match c.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).status() {
        Ok(st) if st.success() => Ok(()),
        Ok(st) => Err(format!("{what}: {st}")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("{} not found", what.split(' ').next().unwrap_or(what)))
        }
        Err(e) => Err(format!("{what}: {e}")),
    }
}

/// Whether this process may mount a file system with `mount`: effective uid 0 (the command
/// refuses other users) and CAP_SYS_ADMIN (which a container may withhold from its root).
fn may_mount() -> Result<(), String> {
    let status = std::fs::read_to_string("/proc/self/status").map_err(|e| format!("/proc/self/status: {e}"))?;
    let field = |key: &str| status.lines().find_map(|l| l.strip_prefix(key)).map(str::split_whitespace);
    let euid = field("Uid:").and_then(|mut f| f.nth(1)).ok_or("no effective uid in /proc/self/status")?;
    if euid != "0" {
        return Err(format!("effective uid {euid}"));
    }
    let caps = field("CapEff:").and_then(|mut f| f.next()).and_then(|c| u64::from_str_radix(c, 16).ok());
    const CAP_SYS_ADMIN: u32 = 21;
    match caps {
        Some(c) if c >> CAP_SYS_ADMIN & 1 == 1 => Ok(()),
        _ => Err("no CAP_SYS_ADMIN".into()),
    }
}

/// The directories on `PATH` that exist (absolute ones only: a relative one depends on where a
/// test runs). A tool installed into or removed from one changes its modification time.
fn path_dirs() -> Vec<PathBuf> {
    env::var_os("PATH")
        .map(|p| env::split_paths(&p).filter(|d| d.is_absolute() && d.is_dir()).collect())
        .unwrap_or_default()
}
