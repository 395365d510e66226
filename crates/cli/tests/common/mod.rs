//! Helpers shared by the CLI's integration tests.
#![allow(dead_code)]

pub mod clock;

#[allow(unused_imports)]
pub use rostrace_testkit::{have_lttng, lttng_lock, require, skip, tools_required, LttngSession, TempDir};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The shared test data (`$ROSTRACE_TEST_DATA`, else `../shared` beside the repository).
#[allow(unused_imports)]
pub use rostrace_testkit::test_data as shared;

/// Where tools/ros2-venvs.sh and tools/data-venv.sh put their virtualenvs.
pub fn venv_root() -> PathBuf {
    std::env::var_os("ROSTRACE_VENV_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/rostrace-ci-cache/venvs"))
}

/// The repository root.
/// The virtualenv of `distro`'s rclpy wheels (`tools/ros2-venvs.sh` makes it), or None when it is
/// not there (the test then skips, saying so, or fails where the tools are required).
pub fn rclpy_venv(distro: &str) -> Option<PathBuf> {
    let venv = venv_root().join(distro);
    let made = venv.join(".rostrace-complete").exists();
    require(made, &format!("the {distro} virtualenv ({}; tools/ros2-venvs.sh makes it)", venv.display()))
        .then_some(venv)
}

/// `rostrace ARGS TRACE`, which must succeed: its standard output and error.
pub fn run_ok(args: &[&str], trace: &Path) -> (String, String) {
    let out = rostrace().args(args).arg(trace).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into());
    assert!(out.status.success(), "{args:?}: {stderr}");
    (stdout, stderr)
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Whether babeltrace2's Python bindings can be imported.
pub fn have_bt2_python() -> bool {
    Command::new("/usr/bin/python3").args(["-c", "import bt2"]).output().is_ok_and(|o| o.status.success())
}

/// Whether the babeltrace2 command runs.
pub fn have_babeltrace2() -> bool {
    Command::new("babeltrace2").arg("--version").output().is_ok_and(|o| o.status.success())
}

/// Ctrl-C as in a terminal: runs `cmd` in a process group of its own, waits (a minute at most)
/// until `ready` says it is doing its work, sends SIGINT to the group, and returns how it ended.
/// SIGINT's action in the program is the default one, whatever this test process inherited (a
/// shell starts background jobs with SIGINT ignored, and that is inherited).
pub fn ctrl_c_when(cmd: &mut Command, ready: impl Fn() -> bool) -> std::process::Output {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let child =
        cmd.process_group(0).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    for _ in 0..600 {
        if ready() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // SAFETY: a signal to the process group just created.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    child.wait_with_output().unwrap()
}

/// A port free now (the listener is closed on return).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The rostrace binary under test.
pub fn rostrace() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rostrace"))
}

/// `rostrace analyze ARGS --json - TRACES`: exit code, the JSON (`Null` when there is none),
/// stderr.
pub fn analyze_json_run<P: AsRef<std::ffi::OsStr>>(
    args: &[&str],
    traces: &[P],
) -> (Option<i32>, serde_json::Value, String) {
    let out = rostrace().arg("analyze").args(args).args(["--json", "-"]).args(traces).output().expect("run rostrace");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null), err)
}

/// The JSON of `rostrace analyze ARGS --json - TRACES`, which must succeed.
pub fn analyze_json<P: AsRef<std::ffi::OsStr>>(args: &[&str], traces: &[P]) -> serde_json::Value {
    let (code, v, err) = analyze_json_run(args, traces);
    assert_eq!(code, Some(0), "rostrace analyze {args:?}: {err}");
    v
}

/// Headless Chromium (Debian's `chromium`), if it runs.
pub fn have_chromium() -> bool {
    Command::new("chromium").arg("--version").output().is_ok_and(|o| o.status.success())
}

fn chromium(args: &[&str], page: &std::path::Path) -> std::process::Output {
    let profile = TempDir::new("chromium-profile");
    Command::new("chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap()
}

/// The DOM of `page` once loaded and its scripts run, as Chromium dumps it.
pub fn chromium_dom(page: &std::path::Path) -> String {
    let out = chromium(&["--dump-dom"], page);
    assert!(out.status.success(), "chromium: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A screenshot of `page` (width × height) written to `png`.
pub fn chromium_screenshot(page: &std::path::Path, png: &std::path::Path, width: u32, height: u32) {
    let out = chromium(&[&format!("--screenshot={}", png.display()), &format!("--window-size={width},{height}")], page);
    assert!(png.exists(), "chromium wrote no screenshot: {}", String::from_utf8_lossy(&out.stderr));
}

/// An attribute of the first element whose start tag contains `marker` (`data-plot="timeline"`).
pub fn attr(dom: &str, marker: &str, name: &str) -> Option<String> {
    let i = dom.find(marker)?;
    let start = if marker.starts_with('<') { i } else { dom[..i].rfind('<')? };
    let tag = &dom[start..start + dom[start..].find('>')?];
    let key = format!(" {name}=\"");
    let j = tag.find(&key)? + key.len();
    Some(tag[j..j + tag[j..].find('"')?].replace("&quot;", "\"").replace("&amp;", "&"))
}

/// The node graph the report draws by default, from the analysis `r`: (vertices, edges).
fn node_graph(r: &serde_json::Value) -> (usize, usize) {
    use std::collections::BTreeSet;
    let names = |t: &serde_json::Value, k: &str| -> BTreeSet<String> {
        t[k].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_string()).collect()
    };
    let (mut topics, mut nodes, mut edges) = (0, BTreeSet::new(), 0);
    for t in r["topics"].as_array().unwrap() {
        let (p, s) = (names(t, "publishers"), names(t, "subscribers"));
        if p.is_empty()
            || s.is_empty()
            || ["/rosout", "/parameter_events", "/clock"].contains(&t["name"].as_str().unwrap())
        {
            continue;
        }
        topics += 1;
        edges += p.len() + s.len();
        nodes.extend(p.into_iter().chain(s));
    }
    (topics + nodes.len(), edges)
}

/// Renders `html` in Chromium and checks it against the analysis `r`; returns the DOM.
pub fn check_report(html: &std::path::Path, r: &serde_json::Value) -> String {
    let dom = chromium_dom(html);
    assert!(dom.contains("data-rendered=\"ok\""), "the report did not finish rendering");
    assert_eq!(attr(&dom, "<body", "data-errors"), None, "script errors");
    let card = |k: &str| attr(&dom, &format!("data-key=\"{k}\""), "data-value").unwrap_or_else(|| panic!("card {k}"));
    for k in ["events", "ros_events", "flows_matched", "flows_unmatched", "discarded_events"] {
        assert_eq!(card(k), r[k].to_string(), "{k}");
    }
    for k in ["processes", "nodes", "topics", "callbacks"] {
        assert_eq!(card(k), r[k].as_array().unwrap().len().to_string(), "{k}");
    }
    let runs: u64 = r["callbacks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["count"].as_u64().unwrap() + c["unfinished"].as_u64().unwrap())
        .sum();
    assert!(card("runs").parse::<u64>().unwrap() >= runs, "runs");
    let drawn = |plot: &str| {
        attr(&dom, &format!("data-plot=\"{plot}\""), "data-drawn")
            .unwrap_or_else(|| panic!("plot {plot}"))
            .parse::<u64>()
            .unwrap()
    };
    assert!(drawn("timeline") > 0);
    assert!(drawn("callback-time") > 0);
    assert!(drawn("callback-hist") > 0);
    // The node graph: every node and topic that has a publisher and a subscriber (but the
    // infrastructure topics, hidden by default), an edge per publisher and per subscriber.
    let (vertices, edges) = node_graph(r);
    if vertices > 0 {
        assert_eq!(drawn("graph"), vertices as u64, "graph vertices");
        assert_eq!(attr(&dom, "data-plot=\"graph\"", "data-edges"), Some(edges.to_string()), "graph edges");
    }
    for (plot, key) in [("service-bars", "services"), ("executor-bars", "executor_threads")] {
        let n = r[key].as_array().unwrap().len();
        if n > 0 {
            assert_eq!(drawn(plot), n as u64, "{plot}");
        }
    }
    // The callbacks' table: one row per callback (100 shown, then a row to show the rest).
    let n = r["callbacks"].as_array().unwrap().len();
    let table = &dom[dom.find("data-table=\"callbacks\"").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr").count() - 1, n.min(100) + usize::from(n > 100));
    dom
}

/// An rclpy program's environment in the real-stack tests: ROS domain `domain`, discovery on this
/// machine only (Jazzy and later), Fast DDS, `ROS_DISTRO` (the wheels have no setup script to
/// export it: as a user of a virtualenv would), and nothing of the test's own environment that
/// would trace it or change its libraries.
pub fn rclpy_env(cmd: &mut Command, distro: &str, domain: u32) {
    fastdds_env(cmd, distro);
    cmd.env("ROS_DOMAIN_ID", domain.to_string()).env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST");
}

/// Fast DDS and `ROS_DISTRO` for an rclpy program, with nothing of the test's own environment
/// that would trace it, change its libraries or limit its discovery.
/// Reads rclpy's and the demo's message modules once: on a cold disk (a fresh machine's first
/// Python start) they take seconds, and an rclpy node of a timed run would start after the run
/// ended. What the tests time is the nodes talking.
pub fn warm_rclpy(python: &Path) {
    let out = Command::new(python)
        .args(["-c", "import rclpy, geometry_msgs.msg, sensor_msgs.msg, std_msgs.msg"])
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("_ROS_WHEELS_BOOTSTRAP_COMPLETE")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}: rclpy imports: {}", python.display(), String::from_utf8_lossy(&out.stderr));
}

pub fn fastdds_env(cmd: &mut Command, distro: &str) {
    cmd.env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
        .env("ROS_DISTRO", distro)
        .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
        .env_remove("ROS_LOCALHOST_ONLY")
        .env_remove("ROS_STATIC_PEERS")
        .env_remove("LD_PRELOAD")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("_ROS_WHEELS_BOOTSTRAP_COMPLETE")
        .env_remove("ROSTRACE_SESSION_DIR")
        .env_remove("ROSTRACE_BACKEND");
}

/// A trace declaration of one host (hostname `h`) with the events `events` (name, fields), for
/// the tests that write a small trace with `rostrace_ctf::write`.
pub fn small_trace_decl(
    events: &[(&str, &[(&str, rostrace_ctf::write::FieldType)])],
) -> rostrace_ctf::write::TraceDecl {
    use rostrace_ctf::write::{EventDecl, FieldDecl, TraceDecl};
    TraceDecl {
        clock_uuid: [7; 16],
        uuid: [9; 16],
        clock_offset_ns: 1_700_000_000_000_000_000,
        env: vec![("hostname".into(), "h".into())],
        events: events
            .iter()
            .map(|(name, f)| EventDecl {
                name: name.to_string(),
                fields: f.iter().map(|(n, t)| FieldDecl { name: n.to_string(), ty: t.clone() }).collect(),
            })
            .collect(),
    }
}

/// Compiles the flow program of crates/tracetools against libtracetools.so.
pub fn flows(dir: &Path) -> PathBuf {
    let lib = PathBuf::from(env!("CARGO_BIN_EXE_rostrace")).parent().unwrap().join("deps");
    assert!(lib.join("libtracetools.so").exists(), "libtracetools.so in {}", lib.display());
    let out = dir.join("flows");
    tracetools::compile_c(&repo().join("crates/tracetools/tests/c/flows.c"), &out, &lib).unwrap();
    out
}

/// A job run as a terminal's foreground job, its output in files (a pipe would stay open as long
/// as a process that inherited it runs).
pub struct Job {
    pub child: std::process::Child,
    pub out: PathBuf,
    pub err: PathBuf,
}

/// Spawns `cmd` in a process group of its own (as a terminal's foreground job: Ctrl-C is a
/// SIGINT to the group), SIGINT's and SIGTERM's actions the default ones, its output in files
/// of `dir` named after `name`.
pub fn spawn_job(cmd: &mut Command, dir: &Path, name: &str) -> Job {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            Ok(())
        });
    }
    let (out, err) = (dir.join(format!("{name}.stdout")), dir.join(format!("{name}.stderr")));
    let child = cmd
        .process_group(0)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    Job { child, out, err }
}

/// Waits (at most `secs`) for the job to end; kills it and fails if it does not. Its exit status,
/// stdout and stderr.
pub fn wait_at_most(mut job: Job, secs: u64, what: &str) -> (std::process::ExitStatus, String, String) {
    let t = std::time::Instant::now();
    let status = loop {
        if let Some(s) = job.child.try_wait().unwrap() {
            break s;
        }
        if t.elapsed().as_secs() >= secs {
            // SAFETY: a signal to the group the test created.
            unsafe { libc::kill(-(job.child.id() as i32), libc::SIGKILL) };
            let _ = job.child.wait();
            panic!("{what}: still running after {secs} s: {}", std::fs::read_to_string(&job.err).unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (status, std::fs::read_to_string(&job.out).unwrap(), std::fs::read_to_string(&job.err).unwrap())
}

/// Waits (a minute at most) until `path` exists.
pub fn wait_for_path(path: &Path) {
    for _ in 0..3000 {
        if path.exists() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("{} never appeared", path.display());
}

/// The process ids of the traces of a session (`ust/pid/<name>-<pid>-<date>`).
pub fn traced_pids(session: &Path) -> Vec<i32> {
    std::fs::read_dir(session.join("ust/pid"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_string_lossy().rsplit('-').nth(2).and_then(|p| p.parse().ok()))
        .collect()
}

/// Whether process `pid` runs (a zombie does not).
pub fn runs(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rsplit(')').next().is_some_and(|r| !r.trim_start().starts_with('Z')))
}

/// The files at or below `dir`.
pub fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_below(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// What only a streamed report has: how it was streamed (`analyze --stream`).
pub const LEFT_OUT: [&str; 1] = ["streamed"];

/// Where `a` (in memory) and `b` (streamed) differ: every value equal, but percentiles within
/// the sketch's relative error and floats up to rounding. (A memory timeline's points are
/// spread over the process's changes in memory, over the recording when streamed: see
/// `memory_timelines_hold_the_peak_and_the_end`.)
pub fn differences(a: &serde_json::Value, b: &serde_json::Value, path: &str, out: &mut Vec<String>) {
    if path.starts_with(".system.memory.processes[") && path.ends_with(".timeline") {
        return;
    }
    match (a, b) {
        (serde_json::Value::Object(x), serde_json::Value::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                if path.is_empty() && LEFT_OUT.contains(&k.as_str()) {
                    continue;
                }
                differences(
                    x.get(k).unwrap_or(&serde_json::Value::Null),
                    y.get(k).unwrap_or(&serde_json::Value::Null),
                    &format!("{path}.{k}"),
                    out,
                );
            }
        }
        (serde_json::Value::Array(x), serde_json::Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                differences(p, q, &format!("{path}[{i}]"), out);
            }
        }
        (serde_json::Value::Number(x), serde_json::Value::Number(y)) if x != y => {
            let (p, q) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            let percentile = ["p50", "p90", "p99"].iter().any(|s| path.ends_with(s));
            let ok = if percentile {
                (p - q).abs() <= 0.005 * p.abs() + 1.0
            } else {
                x.is_f64() && (p - q).abs() <= 1e-9 * p.abs().max(q.abs())
            };
            if !ok {
                out.push(format!("{path}: {x} in memory, {y} streamed"));
            }
        }
        _ if a != b => out.push(format!("{path}: {} in memory, {} streamed", short(a), short(b))),
        _ => {}
    }
}

pub fn short(v: &serde_json::Value) -> String {
    v.to_string().chars().take(300).collect()
}
