//! What the real-stack tests (`real_ros2.rs`: rclpy, `real_rclcpp.rs`: rclcpp) share: the
//! events of a recorded run read back, the system's own report, and the table comparing what
//! upstream's tracer and rostrace's two backends recorded.
#![allow(dead_code)]

use super::common::rostrace;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A value of a payload field.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Val {
    Int(i128),
    Str(String),
    Ints(Vec<u64>),
    Other,
}

impl Val {
    pub fn int(&self) -> Option<i128> {
        match self {
            Val::Int(v) => Some(*v),
            _ => None,
        }
    }
    pub fn text(&self) -> String {
        match self {
            Val::Int(v) => v.to_string(),
            Val::Str(s) => s.clone(),
            Val::Ints(v) => format!("{v:?}"),
            Val::Other => "?".into(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Ev {
    pub name: String,
    pub vpid: i128,
    pub fields: BTreeMap<String, Val>,
}

impl Ev {
    pub fn get(&self, f: &str) -> Option<&Val> {
        self.fields.get(f)
    }
    pub fn int(&self, f: &str) -> Option<i128> {
        self.get(f).and_then(Val::int)
    }
    pub fn str(&self, f: &str) -> String {
        self.get(f).map(Val::text).unwrap_or_default()
    }
}

/// One recorded run: its events (of the system's processes only), the payload schema of every
/// event class that occurs, and what the system reported.
pub struct Run {
    pub label: &'static str,
    pub dir: PathBuf,
    pub events: Vec<Ev>,
    /// CARET's `ros2_caret:` events of the system's processes (rostrace's hooks), apart.
    pub caret: Vec<Ev>,
    pub schema: BTreeMap<String, Vec<(String, String)>>,
    pub others: usize,
    pub system: serde_json::Value,
}

pub fn ty_text(t: &rostrace_ctf::types::Ty) -> String {
    use rostrace_ctf::types::Ty;
    match t {
        Ty::Int { t, .. } => {
            format!("{}{}{}", if t.signed { "i" } else { "u" }, t.size, if t.base == 16 { " hex" } else { "" })
        }
        Ty::Enum { t, .. } => format!("enum{}", t.int.size),
        Ty::Float(f) => format!("f{}", f.size()),
        Ty::String(_) => "string".into(),
        Ty::Struct(s) => {
            let inner: Vec<String> = s.fields.iter().map(|f| format!("{} {}", ty_text(&f.ty), f.name)).collect();
            format!("struct {{{}}}", inner.join("; "))
        }
        Ty::Variant(_) => "variant".into(),
        Ty::Array { elem, len } => format!("{}[{len}]", ty_text(elem)),
        Ty::Sequence { elem, .. } => format!("{}[]", ty_text(elem)),
        Ty::TextArray { len, .. } => format!("text[{len}]"),
        Ty::TextSequence { .. } => "text[]".into(),
    }
}

pub fn val_of(v: rostrace_ctf::FieldValue<'_>) -> Val {
    use rostrace_ctf::FieldValue as F;
    match v {
        F::U64(x) => Val::Int(x as i128),
        F::I64(x) => Val::Int(x as i128),
        F::Enum { value, .. } => Val::Int(value),
        F::Str(b) => Val::Str(String::from_utf8_lossy(b).into_owned()),
        F::Array(a) => Val::Ints(a.to_u64_vec()),
        _ => Val::Other,
    }
}

/// Reads the trace(s) under `dir`; keeps the events of the processes that initialized a node
/// in namespace `ns` (an LTTng session records every process of the user).
/// Fields per event name: (field, value).
pub type FieldsByEvent = BTreeMap<String, Vec<(String, String)>>;

pub fn read_trace(dir: &Path, ns: &str) -> (Vec<Ev>, Vec<Ev>, FieldsByEvent, usize) {
    let (set, errors) = rostrace_ctf::TraceSet::open(&[dir]);
    assert!(errors.is_empty(), "{}: {errors:?}", dir.display());
    assert!(!set.traces.is_empty(), "no trace under {}", dir.display());
    let mut all = Vec::new();
    let mut schema = BTreeMap::new();
    let mut evs = set.events();
    while let Some(e) = evs.next() {
        let e = e.unwrap_or_else(|err| panic!("{}: {err}", dir.display()));
        let name = e.name().strip_prefix("ros2:").unwrap_or(e.name()).to_string();
        let mut fields = BTreeMap::new();
        let mut types = Vec::new();
        if let Some(p) = e.payload() {
            for (f, t, v) in p.iter_typed() {
                fields.insert(f.to_string(), val_of(v));
                types.push((f.to_string(), ty_text(t)));
            }
        }
        schema.entry(name.clone()).or_insert(types);
        let vpid = e.context_field("vpid").and_then(|v| v.as_i64()).map(i128::from).unwrap_or(-1);
        all.push(Ev { name, vpid, fields });
    }
    let ours: BTreeSet<i128> =
        all.iter().filter(|e| e.name == "rcl_node_init" && e.str("namespace") == ns).map(|e| e.vpid).collect();
    let total = all.len();
    let (caret, events): (Vec<Ev>, Vec<Ev>) =
        all.into_iter().filter(|e| ours.contains(&e.vpid)).partition(|e| e.name.starts_with("ros2_caret:"));
    let others = total - events.len() - caret.len();
    let names: BTreeSet<&str> = events.iter().map(|e| e.name.as_str()).collect();
    schema.retain(|k, _| names.contains(k.as_str()));
    (events, caret, schema, others)
}

/// The system's report (its last stdout line that is a JSON object).
pub fn system_report(out: &Output, what: &str) -> serde_json::Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stdout.lines().rev().find(|l| l.starts_with("{\"ok\""));
    let report: serde_json::Value = line
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("{what}: no report from the system\nstdout:\n{stdout}\nstderr:\n{stderr}"));
    assert!(
        out.status.success() && report["ok"] == true,
        "{what}: the system failed ({:?}):\n{report:#}\nstderr:\n{stderr}",
        out.status
    );
    report
}

/// Runs the system (`attempt(1)`), and once more (`attempt(2)`) when its only failure was
/// processes that did their part and said so, then hung in their teardown (destroying their
/// nodes: seen rarely, on a loaded machine, with the main thread in Fast DDS's participant
/// deletion waiting on a discovery callback). An rclpy process's Python stacks are in the
/// output (roles.py's faulthandler); a second hang, or any other failure, fails the test.
pub fn again_if_stuck<T>(what: &str, mut attempt: impl FnMut(u32) -> (Output, T)) -> (Output, T) {
    let (out, t) = attempt(1);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: Option<serde_json::Value> =
        stdout.lines().rev().find(|l| l.starts_with("{\"ok\"")).and_then(|l| serde_json::from_str(l).ok());
    let stuck = report.as_ref().and_then(|r| r["stuck_in_teardown"].as_array()).filter(|s| !s.is_empty());
    let Some(stuck) = stuck else { return (out, t) };
    let report = report.as_ref().unwrap();
    let others_ok = report["processes"]
        .as_array()
        .is_some_and(|ps| ps.iter().all(|p| p["exit"] == 0 || (p["ok"] == true && stuck.contains(&p["role"]))));
    if !others_ok {
        return (out, t);
    }
    let roles: Vec<&str> = stuck.iter().filter_map(|r| r.as_str()).collect();
    eprintln!(
        "{what}: {} did their part, then hung in their teardown; the system runs again, once\n{}",
        roles.join(", "),
        String::from_utf8_lossy(&out.stderr)
    );
    attempt(2)
}

pub fn count_by<'a>(evs: impl Iterator<Item = &'a Ev>, key: impl Fn(&Ev) -> String) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for e in evs {
        *m.entry(key(e)).or_insert(0) += 1;
    }
    m
}

pub fn multiset(items: impl Iterator<Item = String>) -> String {
    let mut m: BTreeMap<String, usize> = BTreeMap::new();
    for i in items {
        *m.entry(i).or_insert(0) += 1;
    }
    m.iter().map(|(k, n)| if *n == 1 { k.clone() } else { format!("{k} x{n}") }).collect::<Vec<_>>().join(", ")
}

pub fn of_name<'a>(ev: &'a [Ev], n: &'a str) -> impl Iterator<Item = &'a Ev> + 'a {
    ev.iter().filter(move |e| e.name == n)
}

/// Every event of the processes `pids` under `dir`, per (vpid, vtid), in trace order
/// (`ros2:` prefix dropped, `ros2_caret:` kept).
pub fn thread_order(dir: &Path, pids: &BTreeSet<i128>) -> BTreeMap<(i128, i128), Vec<Ev>> {
    let (set, errors) = rostrace_ctf::TraceSet::open(&[dir]);
    assert!(errors.is_empty(), "{errors:?}");
    let mut m: BTreeMap<(i128, i128), Vec<Ev>> = BTreeMap::new();
    let mut evs = set.events();
    while let Some(e) = evs.next() {
        let e = e.unwrap();
        let vpid = e.context_field("vpid").and_then(|v| v.as_i64()).map(i128::from).unwrap_or(-1);
        if !pids.contains(&vpid) {
            continue;
        }
        let vtid = e.context_field("vtid").and_then(|v| v.as_i64()).map(i128::from).unwrap_or(-1);
        let name = e.name().strip_prefix("ros2:").unwrap_or(e.name()).to_string();
        let mut fields = BTreeMap::new();
        if let Some(p) = e.payload() {
            for (f, _, v) in p.iter_typed() {
                fields.insert(f.to_string(), val_of(v));
            }
        }
        m.entry((vpid, vtid)).or_default().push(Ev { name, vpid, fields });
    }
    m
}

/// The comparison of the runs' summaries (`sums`, in the order of `labels`, upstream's first)
/// with each other and with the values known in advance: the table (a line per key, `!!` where
/// something differs) and the failures (`what`: the stack, for the messages).
pub fn compare_runs(
    what: &str,
    labels: &[&str],
    sums: &[BTreeMap<String, String>],
    expect: &BTreeMap<String, String>,
) -> (String, Vec<String>) {
    let keys: BTreeSet<&String> = sums.iter().flat_map(|s| s.keys()).chain(expect.keys()).collect();
    let mut failures = Vec::new();
    let mut table =
        format!("{:<2} {:<58} {:<24} {:<24} {:<24} {}\n", "", "key", labels[0], labels[1], labels[2], "expected");
    for k in keys {
        let vals: Vec<&str> = sums.iter().map(|s| s.get(k).map(String::as_str).unwrap_or("-")).collect();
        let exp = expect.get(k);
        let differ = vals.iter().any(|x| *x != vals[0]);
        let wrong: Vec<&str> =
            labels.iter().zip(&vals).filter(|(_, x)| exp.is_some_and(|e| e != *x)).map(|(l, _)| *l).collect();
        let mark = if differ || !wrong.is_empty() { "!!" } else { "" };
        let long = k.starts_with("schema ") || vals.iter().any(|x| x.len() > 24);
        if long && (differ || !wrong.is_empty()) {
            table += &format!("{mark:<2} {k}\n");
            for (l, x) in labels.iter().zip(&vals) {
                table += &format!("       {l:<9} {x}\n");
            }
            if let Some(e) = exp {
                table += &format!("       {:<9} {e}\n", "expected");
            }
        } else if !long {
            table += &format!(
                "{mark:<2} {k:<58} {:<24} {:<24} {:<24} {}\n",
                vals[0],
                vals[1],
                vals[2],
                exp.map(String::as_str).unwrap_or("")
            );
        }
        if differ {
            failures.push(format!("{what}: {k}: upstream {:?}, embedded {:?}, lttng {:?}", vals[0], vals[1], vals[2]));
        }
        if !wrong.is_empty() {
            failures.push(format!("{what}: {k}: expected {:?}, not so in {}", exp.unwrap(), wrong.join(", ")));
        }
    }
    // Links: every one resolves, in every trace.
    for (k, _) in sums[0].iter().filter(|(k, _)| k.starts_with("link ")) {
        for (l, s) in labels.iter().zip(sums) {
            if let Some(x) = s.get(k).filter(|x| *x != "all") {
                failures.push(format!("{what}: {k}: only {x} link, in {l}"));
            }
        }
    }
    (table, failures)
}

/// The events rostrace's rclpy instrumentation emits (none of them comes from rclpy otherwise).
pub const RCLPY_INSTRUMENTATION: &[&str] = &[
    "rclcpp_subscription_init",
    "rclcpp_subscription_callback_added",
    "rclcpp_timer_callback_added",
    "rclcpp_timer_link_node",
    "rclcpp_service_callback_added",
    "rclcpp_callback_register",
    "callback_start",
    "callback_end",
];

/// The C++ stack's directory.
pub fn rclcpp_dir() -> PathBuf {
    std::env::var_os("ROSTRACE_RCLCPP_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/rostrace-ci-cache/rclcpp-jazzy"))
}

/// The environment `DIR/env.sh` sets (what a user sources to build and run C++ nodes).
pub fn stack_env(dir: &Path) -> Vec<(String, String)> {
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(". '{}/env.sh' && env -0", dir.display()))
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .output()
        .unwrap();
    assert!(out.status.success(), "env.sh: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .split('\0')
        .filter_map(|kv| kv.split_once('='))
        .filter(|(k, _)| !matches!(*k, "PWD" | "SHLVL" | "_" | "OLDPWD"))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

pub fn with_env<'a>(cmd: &'a mut Command, env: &[(String, String)]) -> &'a mut Command {
    cmd.env_remove("LD_PRELOAD").env_remove("ROSTRACE_SESSION_DIR").env_remove("ROSTRACE_BACKEND");
    cmd.env_remove("ROS_LOCALHOST_ONLY").env_remove("ROS_STATIC_PEERS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// The system built with CMake against the stack, in `DIR/systems/<sources' hash>` (reused while
/// the sources and the stack are the same).
pub fn build_system(dir: &Path, env: &[(String, String)]) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rclcpp");
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for f in ["CMakeLists.txt", "system.cpp"] {
        std::fs::read(src.join(f)).unwrap().hash(&mut h);
    }
    std::fs::read(dir.join(".rostrace-complete")).unwrap_or_default().hash(&mut h);
    let build = dir.join("systems").join(format!("{:016x}", h.finish()));
    let exe = build.join("rostrace_cpp_system");
    // One build at a time (the tests of this file run in parallel, other test processes too).
    std::fs::create_dir_all(dir.join("systems")).unwrap();
    let lock = std::fs::File::create(dir.join("systems/.lock")).unwrap();
    lock.lock().unwrap();
    if exe.exists() {
        return exe;
    }
    let tmp = build.with_extension("tmp");
    let _ = std::fs::remove_dir_all(&tmp);
    for args in [
        vec!["-S".to_string(), src.display().to_string(), "-B".into(), tmp.display().to_string()]
            .into_iter()
            .chain(["-DCMAKE_BUILD_TYPE=Release".to_string()])
            .collect::<Vec<_>>(),
        vec!["--build".into(), tmp.display().to_string(), "-j".into(), "2".into()],
    ] {
        let out = with_env(&mut Command::new("cmake"), env).args(&args).output().unwrap();
        assert!(
            out.status.success(),
            "cmake {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&build);
    std::fs::rename(&tmp, &build).unwrap();
    exe
}

/// Each topic's publication times (`ts_ns`, as the records' cells have them), in order.
pub fn publications(trace: &Path, out: &Path) -> BTreeMap<String, Vec<i64>> {
    let o = rostrace().args(["export", "--format", "csv", "-o"]).arg(out).arg(trace).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut by_topic: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for f in std::fs::read_dir(out.join("publications")).unwrap() {
        let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
        let mut lines = text.lines();
        let head: Vec<&str> = lines.next().unwrap().split(',').collect();
        let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
        let (topic, ts) = (col("topic"), col("ts_ns"));
        for l in lines {
            let f: Vec<&str> = l.split(',').collect();
            by_topic.entry(f[topic].to_string()).or_default().push(f[ts].parse().unwrap());
        }
    }
    by_topic.values_mut().for_each(|v| v.sort());
    by_topic
}

/// The complete records of `e2e --path PATH` as the index of each of its messages on its topic.
pub fn followed(trace: &Path, path: &str, pubs: &BTreeMap<String, Vec<i64>>) -> Vec<Vec<usize>> {
    let o = rostrace().args(["e2e", "--json", "-", "--path", path]).arg(trace).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let columns: Vec<&str> = v["columns"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    let cells: Vec<(usize, &str)> = columns
        .iter()
        .enumerate()
        .filter_map(|(i, c)| Some((i, c.strip_suffix("/rclcpp_publish_timestamp/0")?)))
        .collect();
    let mut out: Vec<Vec<usize>> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        // (Complete: the last callback started. rclpy's publications have no DDS layer cell.)
        .filter(|r| r.as_array().unwrap().last().is_some_and(|c| !c.is_null()))
        .map(|r| {
            cells
                .iter()
                .map(|&(i, topic)| {
                    let ts = r[i].as_i64().unwrap();
                    pubs[topic].binary_search(&ts).unwrap_or_else(|_| panic!("{topic}: no publication at {ts}"))
                })
                .collect()
        })
        .collect();
    out.sort();
    out
}
