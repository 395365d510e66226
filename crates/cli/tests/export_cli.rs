//! `rostrace export`: the Perfetto trace decoded with Perfetto's own proto definitions, the
//! Parquet and CSV tables read back with pyarrow and pandas, and DuckDB over two recordings,
//! each against the analysis of the same trace.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The notebook tools' interpreter (tools/data-venv.sh).
fn python() -> Option<PathBuf> {
    let p = venv_root().join("data/bin/python");
    require(p.exists(), &format!("{} (tools/data-venv.sh)", p.display())).then_some(p)
}

fn trace(name: &str) -> Option<PathBuf> {
    rostrace_testkit::test_data_path(Path::new("traces").join(name))
}

fn read(py: &Path, args: &[&str]) -> Value {
    let script = repo().join("crates/cli/tests/read_exports.py");
    let out = Command::new(py).arg(script).args(args).output().unwrap();
    assert!(out.status.success(), "read_exports.py {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn export(t: &Path, args: &[&str]) -> String {
    let out = rostrace().arg("export").arg(t).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    err
}

fn analysis_of(t: &Path) -> rostrace_analysis::Analysis {
    let (set, errors) = rostrace_ctf::TraceSet::open(&[t]);
    assert!(errors.is_empty(), "{errors:?}");
    rostrace_analysis::analyze_traces(&set, |_, _| {})
}

/// Per run, its callback's node ("" when unknown).
fn run_nodes(a: &rostrace_analysis::Analysis) -> Vec<String> {
    a.runs
        .iter()
        .map(|&rostrace_analysis::LinkedRun { run: r, .. }| {
            let k = a.slots[r.slot()];
            a.report
                .callbacks
                .iter()
                .find(|c| (c.trace, c.vpid, c.address) == k)
                .map_or(String::new(), |c| c.node.to_string())
        })
        .collect()
}

#[rostrace_testkit::needs(data_venv, test_data)]
#[test]
fn perfetto_export_decodes_with_perfettos_protos() {
    let Some(py) = python() else { return };
    let proto = repo().join("crates/export/tests/data/perfetto/perfetto_trace.proto");
    for name in ["caret-demos-e2e-jazzy", "tc-ros2-example2"] {
        let Some(t) = trace(name) else { return };
        let dir = TempDir::new("export-perfetto");
        let file = dir.join("trace.pftrace");
        let err = export(&t, &["--format", "perfetto", "-o", file.to_str().unwrap()]);
        assert!(err.contains("ui.perfetto.dev"), "{err}");
        let v = read(&py, &["perfetto", file.to_str().unwrap(), proto.to_str().unwrap()]);
        let a = analysis_of(&t);
        assert_eq!(v["slices"], a.runs.len(), "{name}: a slice per callback run");
        let unfinished = a.runs.iter().filter(|r| r.run.end().is_none()).count();
        assert_eq!(v["unfinished"], unfinished, "{name}");
        assert_eq!(v["instants"]["publish"], a.pubs.len(), "{name}");
        assert_eq!(v["instants"]["take"], a.takes.len(), "{name}");
        assert!(!a.flows.is_empty(), "{name} has message flows");
        assert_eq!(v["flows"], a.flows.len(), "{name}: a flow per matched message");
        assert_eq!(v["flows_ended"], a.flows.len(), "{name}");
        assert_eq!(v["flows_started_once"], true);
        assert_eq!(v["flows_ended_once"], true);
        let through_take = a.flows.iter().filter(|f| a.takes[f.take as usize].take.run.is_some()).count();
        assert_eq!(v["flows_through_take"], through_take, "{name}: publish -> take -> callback");
        assert_eq!(v["counters"], a.flows.len(), "{name}: a latency value per flow");
        // Slices are named by node and owner: as many per name as the callbacks' runs.
        let mut want: BTreeMap<String, u64> = BTreeMap::new();
        for c in &a.report.callbacks {
            let owner = match (&c.topic, c.timer_period_ns) {
                (Some(t), _) => format!("{} {t}", c.kind),
                (None, Some(_)) => "timer".into(),
                _ => c.kind.to_string(),
            };
            *want.entry(format!("{} {owner}", c.node)).or_default() += c.count + c.unfinished;
        }
        let mut got: BTreeMap<String, u64> = BTreeMap::new();
        for (n, k) in v["slice_names"].as_object().unwrap() {
            // "timer 100 ms" -> "timer"
            let n = match n.find(" timer ") {
                Some(i) => format!("{} timer", &n[..i]),
                None => n.clone(),
            };
            *got.entry(n).or_default() += k.as_u64().unwrap();
        }
        assert_eq!(got, want, "{name}");
        let threads: std::collections::BTreeSet<(u32, i64, i64)> = a
            .runs
            .iter()
            .map(|&rostrace_analysis::LinkedRun { run: r, .. }| {
                let k = a.slots[r.slot()];
                (k.0, k.1, r.vtid as i64)
            })
            .chain(a.pubs.iter().map(|p| (p.publication.trace, p.publication.vpid, p.publication.vtid)))
            .chain(a.takes.iter().map(|t| (t.take.trace, t.take.vpid, t.take.vtid)))
            .collect();
        assert_eq!(v["threads"], threads.len(), "{name}");
    }
}

#[rostrace_testkit::needs(data_venv, test_data)]
#[test]
fn tables_read_back_with_pyarrow_and_pandas() {
    let Some(py) = python() else { return };
    let Some(t) = trace("caret-demos-e2e-jazzy") else { return };
    let a = analysis_of(&t);
    let arch = a.architecture();
    let spec = arch.parse_path(PATH, "path").unwrap();
    let records = rostrace_analysis::paths::PathIndex::new(&a).records(&arch, &spec, Default::default()).unwrap();
    assert!(records.complete() > 10, "the path has complete records");
    // Events per name, as the reader sees them.
    let mut events: BTreeMap<String, u64> = BTreeMap::new();
    let (set, _) = rostrace_ctf::TraceSet::open(&[&t]);
    let mut it = set.events();
    while let Some(ev) = it.next() {
        *events.entry(ev.unwrap().name().replace(':', ".")).or_default() += 1;
    }
    for format in ["parquet", "csv"] {
        let dir = TempDir::new("export-tables");
        let out = dir.path().to_str().unwrap();
        let err = export(&t, &["--format", format, "-o", out, "--name", "robot1", "--path", PATH]);
        assert!(err.contains("recording robot1"), "{err}");
        let v = read(&py, &["tables", dir.path().to_str().unwrap()]);
        let file = format!("robot1.{format}");
        let table = |name: &str| &v[name][&file];
        let want = [
            ("callback_runs", a.runs.len()),
            ("publications", a.pubs.len()),
            ("takes", a.takes.len()),
            ("flows", a.flows.len()),
            ("callbacks", a.report.callbacks.len()),
            ("nodes", a.model.nodes.items.len()),
            ("publishers", a.model.publishers.items.len()),
            ("subscriptions", a.model.subscriptions.items.len()),
            ("timers", a.model.timers.items.len()),
            ("topics", a.report.topics.len()),
            ("topic_pairs", a.report.topics.iter().map(|t| t.pairs.len()).sum()),
            ("processes", a.model.processes.len()),
        ];
        for (name, n) in want {
            assert_eq!(table(name)["rows"], n, "{format} {name}");
            assert_eq!(table(name)["recordings"], serde_json::json!(["robot1"]), "{format} {name}");
        }
        // Every column of the schema, in order.
        for def in rostrace_export::schema::tables() {
            let cols: Vec<&str> = def.columns.iter().map(|c| c.name.as_ref()).collect();
            assert_eq!(table(def.name)["columns"], serde_json::json!(cols), "{format} {}", def.name);
        }
        // Values: sums of times and durations, nulls where the analysis has none.
        let durations: i64 = a.runs.iter().filter_map(|r| r.run.duration()).sum();
        assert_eq!(table("callback_runs")["sums"]["duration_ns"], durations, "{format}");
        let starts: i64 = a.runs.iter().map(|r| r.run.start).fold(0i64, |s, x| s.wrapping_add(x));
        assert_eq!(table("callback_runs")["sums"]["start_ns"], starts, "{format}");
        let lat: i64 = a.flows.iter().map(|f| f.pub_to_take_ns).sum();
        assert_eq!(table("flows")["sums"]["pub_to_take_ns"], lat, "{format}");
        let no_cb = a.flows.iter().filter(|f| f.pub_to_callback_ns.is_none()).count();
        assert_eq!(table("flows")["nulls"]["pub_to_callback_ns"], no_cb, "{format}");
        let no_src = a.pubs.iter().filter(|p| p.publication.source_ts().is_none()).count();
        assert_eq!(table("publications")["nulls"]["source_timestamp_ns"], no_src, "{format}");
        let total: i64 = a.report.callbacks.iter().map(|c| c.total_ns).sum();
        assert_eq!(table("callbacks")["sums"]["total_ns"], total, "{format}");
        // The raw events: a table per event name, every event.
        for (name, n) in &events {
            let t = &v[format!("events/{name}")][&file];
            assert_eq!(t["rows"], *n, "{format} {name}");
        }
        let cs = &v["events/ros2.callback_start"][&file];
        let cols: Vec<&str> = cs["columns"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
        for c in
            ["recording", "trace", "timestamp_ns", "cpu", "vpid", "vtid", "procname", "callback", "is_intra_process"]
        {
            assert!(cols.contains(&c), "{format}: callback_start has {c}: {cols:?}");
        }
        if format == "parquet" {
            assert_eq!(cs["types"]["callback"], "uint64");
            assert_eq!(cs["types"]["timestamp_ns"], "int64");
            assert_eq!(table("callback_runs")["types"]["intra_process"], "bool");
        }
        let starts: i64 = a.runs.iter().map(|r| r.run.start).fold(0i64, |s, x| s.wrapping_add(x));
        assert_eq!(cs["sums"]["timestamp_ns"], starts, "{format}: callback_start times are the runs' starts");
        // The path: its records, as `rostrace e2e` follows them.
        assert_eq!(table("paths")["rows"], 1, "{format}");
        assert_eq!(table("path_messages")["rows"], records.rows.len(), "{format}");
        let latencies: i64 = records.latencies().iter().map(|x| x.1).sum();
        // (A column with nulls is read as floats.)
        assert_eq!(table("path_messages")["sums"]["latency_ns"].as_f64(), Some(latencies as f64), "{format}");
        assert_eq!(table("paths")["sums"]["complete"], records.complete(), "{format}");
        assert_eq!(table("path_messages")["nulls"]["latency_ns"], records.rows.len() - records.complete(), "{format}");
    }
}

/// A path of caret-demos-e2e-jazzy (its architecture's `target`).
const PATH: &str = "/sensor_dummy_node,/filter_node,/message_driven_node,/timer_driven_node,/actuator_dummy_node";

#[rostrace_testkit::needs(data_venv, test_data)]
#[test]
fn duckdb_queries_two_recordings_together() {
    let Some(py) = python() else { return };
    let dir = TempDir::new("export-fleet");
    let mut want: Vec<(String, String, u64, i64, i64)> = Vec::new();
    for (name, rec) in [("caret-demos-e2e-jazzy", "robot1"), ("tc-ros2-example2", "robot2")] {
        let Some(t) = trace(name) else { return };
        export(&t, &["--format", "parquet", "-o", dir.path().to_str().unwrap(), "--name", rec, "--events", "none"]);
        let a = analysis_of(&t);
        let nodes = run_nodes(&a);
        let mut per: BTreeMap<String, (u64, i64, i64)> = BTreeMap::new();
        for (r, n) in a.runs.iter().map(|r| &r.run).zip(&nodes) {
            if let Some(d) = r.duration() {
                let e = per.entry(n.clone()).or_default();
                e.0 += 1;
                e.1 += d;
                e.2 = e.2.max(d);
            }
        }
        want.extend(per.into_iter().map(|(n, (c, s, m))| (rec.to_string(), n, c, s, m)));
    }
    want.sort();
    let q = "SELECT recording, node, count(*), sum(duration_ns)::BIGINT, max(duration_ns) \
             FROM '{dir}/callback_runs/*.parquet' WHERE duration_ns IS NOT NULL GROUP BY ALL ORDER BY ALL";
    let v = read(&py, &["sql", dir.path().to_str().unwrap(), q]);
    let got: Vec<(String, String, u64, i64, i64)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r[0].as_str().unwrap().to_string(),
                r[1].as_str().unwrap().to_string(),
                r[2].as_u64().unwrap(),
                r[3].as_i64().unwrap(),
                r[4].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, want);
    assert!(got.iter().any(|r| r.0 == "robot1") && got.iter().any(|r| r.0 == "robot2"));
    // No raw events with --events none.
    assert!(!dir.join("events").exists());
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn export_errors_name_the_argument() {
    let Some(t) = trace("caret-demos-e2e-jazzy") else { return };
    let out =
        rostrace().arg("export").arg(&t).args(["--format", "csv", "-o", "/tmp/x", "--events", "("]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--events: invalid regular expression"));
    let out = rostrace()
        .arg("export")
        .arg(&t)
        .args(["--format", "perfetto", "-o", "/proc/rostrace/x.pftrace"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--output /proc/rostrace/x.pftrace"), "{err}");
    // A path the trace does not have, before anything is written; paths with Perfetto.
    let dir = TempDir::new("export-path-errors");
    let o = dir.path().join("t");
    let mut c = rostrace();
    c.arg("export").arg(&t).args(["--format", "csv", "-o"]).arg(&o);
    let out = c.args(["--path", "/sensor_dummy_node,/no_such_node"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--path \"/no_such_node\": no such node or topic"), "{err}");
    assert!(!o.join("callbacks").exists(), "nothing written");
    let mut c = rostrace();
    c.arg("export").arg(&t).args(["--format", "perfetto", "-o"]).arg(dir.path().join("p.pftrace"));
    let out = c.args(["--path", PATH]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("--path, --named-path: apply to --format parquet and csv"));
}

/// The most threads `child` ran at once (its `/proc/PID/task`, looked at every half
/// millisecond), and how it ended.
fn most_threads(mut child: std::process::Child) -> (std::process::ExitStatus, usize) {
    let tasks = format!("/proc/{}/task", child.id());
    let mut most = 0;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status, most);
        }
        if let Ok(d) = std::fs::read_dir(&tasks) {
            most = most.max(d.count());
        }
        std::thread::sleep(std::time::Duration::from_micros(500));
    }
}

/// `-j` sets the threads of the whole export, the analysis's included: with `-j 1` the process
/// never runs a second thread; with `-j 2` it does (so the sampling sees threads when there are).
#[rostrace_testkit::needs(test_data)]
#[test]
fn export_runs_on_the_threads_asked_for() {
    let Some(t) = trace("tum-autoware-carla") else { return };
    for (jobs, format) in [("1", "csv"), ("1", "perfetto"), ("2", "csv")] {
        let dir = TempDir::new("export-jobs");
        let out = if format == "perfetto" { dir.join("x.pftrace") } else { dir.path().to_path_buf() };
        let child = rostrace()
            .arg("export")
            .arg(&t)
            .args(["-j", jobs, "--format", format, "-o"])
            .arg(&out)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let (status, most) = most_threads(child);
        assert!(status.success(), "export -j {jobs} --format {format}: {status}");
        if jobs == "1" {
            assert_eq!(most, 1, "export -j 1 --format {format} ran {most} threads at once");
        } else {
            assert!(most > 1, "export -j {jobs} --format {format} ran one thread only");
        }
    }
}

#[test]
fn readme_documents_the_export_schema() {
    let readme = std::fs::read_to_string(repo().join("docs/exports.md")).unwrap();
    assert!(
        readme.contains(&rostrace_export::schema::markdown()),
        "docs/exports.md must hold the export schema as rostrace_export::schema::markdown() writes it"
    );
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn perfetto_export_of_a_trace_without_ros2_events_says_there_is_nothing_to_export() {
    let Some(t) = rostrace_testkit::test_data_path("ctf-edge/ros1-tc-pub-sub-10") else { return };
    let dir = rostrace_testkit::TempDir::new("perfetto-empty");
    let out_file = dir.join("ros1.perfetto-trace");
    let out = rostrace().arg("export").arg(&t).args(["--format", "perfetto", "-o"]).arg(&out_file).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("nothing to export to Perfetto"), "{err}");
    assert!(err.contains("no ROS 2 events"), "{err}");
    assert!(!out_file.exists(), "no file is written");
}

/// A trace of two event classes whose names are one table name once made safe
/// (`ros2:callback_start`, `ros2.callback_start`), the second with a text field a spreadsheet
/// would run as a formula.
fn colliding_trace(dir: &Path) {
    use rostrace_ctf::write::*;
    let d = small_trace_decl(&[
        ("ros2:callback_start", &[("callback", FieldType::Pointer), ("is_intra_process", FieldType::I32)]),
        ("ros2.callback_start", &[("note", FieldType::String)]),
    ]);
    let ust = dir.join("ust/uid/1000/64-bit");
    std::fs::create_dir_all(&ust).unwrap();
    std::fs::write(ust.join("metadata"), packetize_metadata(&metadata_text(&d), &d.uuid)).unwrap();
    let f = std::fs::File::create(ust.join("channel0_0")).unwrap();
    let mut w = StreamWriter::new(f, d.uuid, 0, 0, 8192);
    w.event(0, 1_000, 42, 42, b"node", &Payload::new().u64(0x10).i32(0).bytes).unwrap();
    w.event(0, 1_500, 42, 42, b"node", &Payload::new().u64(0x10).i32(0).bytes).unwrap();
    w.event(1, 2_000, 42, 42, b"node", &Payload::new().string(b"=HYPERLINK(\"x\")").bytes).unwrap();
    w.finish().unwrap();
}

/// The table of `ros2.callback_start`, whose `.` is its own: `ros2:callback_start`'s name with a
/// hash after it.
fn dotted_table() -> String {
    let t = rostrace_export::events::table_name("ros2.callback_start");
    let hash = t.strip_prefix("events/ros2.callback_start~").unwrap_or_else(|| panic!("{t}"));
    assert!(hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()), "{t}");
    t
}

#[test]
fn event_tables_whose_names_collide_get_a_table_each() {
    let dir = rostrace_testkit::TempDir::new("export-collide");
    let t = dir.join("trace");
    colliding_trace(&t);
    let out_dir = dir.join("csv");
    let dotted = dotted_table();
    let err = export(&t, &["--format", "csv", "--name", "rec", "-o", out_dir.to_str().unwrap()]);
    let first = std::fs::read_to_string(out_dir.join("events/ros2.callback_start/rec.csv")).unwrap();
    let second = std::fs::read_to_string(out_dir.join(&dotted).join("rec.csv")).unwrap();
    assert_eq!(first.lines().count(), 3, "a header and two rows: {first}");
    assert!(first.lines().next().unwrap().ends_with(",callback,is_intra_process"), "{first}");
    assert_eq!(second.lines().count(), 2, "a header and one row: {second}");
    assert!(second.lines().next().unwrap().ends_with(",note"), "{second}");
    assert!(second.contains(",\"=HYPERLINK(\"\"x\"\")\""), "the plain export keeps the text: {second}");
    assert!(
        err.contains(&format!("{dotted}: the events named \"ros2.callback_start\" (not a safe file name")),
        "{err}"
    );
    // Parquet: both tables readable on their own (one file each).
    let pq = dir.join("pq");
    export(&t, &["--format", "parquet", "--name", "rec", "-o", pq.to_str().unwrap()]);
    assert!(pq.join("events/ros2.callback_start/rec.parquet").is_file());
    assert!(pq.join(&dotted).join("rec.parquet").is_file());
    if let Some(py) = python() {
        let out = Command::new(py)
            .args(["-c", "import sys, pyarrow.parquet as p; print(p.read_table(sys.argv[1]).num_rows, p.read_table(sys.argv[2]).num_rows)"])
            .arg(pq.join("events/ros2.callback_start/rec.parquet"))
            .arg(pq.join(&dotted).join("rec.parquet"))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "2 1", "{}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn csv_safe_quotes_formulas() {
    let dir = rostrace_testkit::TempDir::new("export-csv-safe");
    let t = dir.join("trace");
    colliding_trace(&t);
    let out_dir = dir.join("csv");
    export(&t, &["--format", "csv", "--csv-safe", "--name", "rec", "-o", out_dir.to_str().unwrap()]);
    let second = std::fs::read_to_string(out_dir.join(dotted_table()).join("rec.csv")).unwrap();
    assert!(second.contains(",\"'=HYPERLINK(\"\"x\"\")\""), "{second}");
    let out = rostrace()
        .arg("export")
        .arg(&t)
        .args(["--format", "parquet", "--csv-safe", "-o"])
        .arg(dir.join("pq"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--csv-safe: applies to --format csv only"));
}

/// A trace of one event of each name, the i-th with one field `f<i>` of value i; the names
/// written into the metadata as they are (an event class's name there can be anything, even
/// empty; NUL as `\x00`).
fn named_events_trace(dir: &Path, names: &[String]) {
    use rostrace_ctf::write::*;
    let placeholder = |i: usize| format!("event_name_{i}");
    let (events, fields): (Vec<String>, Vec<String>) =
        (0..names.len()).map(|i| (placeholder(i), format!("f{i}"))).unzip();
    let fields: Vec<[(&str, FieldType); 1]> = fields.iter().map(|f| [(f.as_str(), FieldType::U64)]).collect();
    let decl: Vec<(&str, &[(&str, FieldType)])> =
        events.iter().zip(&fields).map(|(e, f)| (e.as_str(), &f[..])).collect();
    let d = small_trace_decl(&decl);
    let mut text = metadata_text(&d);
    for (i, n) in names.iter().enumerate() {
        let literal = n.replace('\\', "\\\\").replace('"', "\\\"").replace('\0', "\\x00");
        text = text.replace(&format!("name = \"{}\";", placeholder(i)), &format!("name = \"{literal}\";"));
    }
    let ust = dir.join("ust/uid/1000/64-bit");
    std::fs::create_dir_all(&ust).unwrap();
    std::fs::write(ust.join("metadata"), packetize_metadata(&text, &d.uuid)).unwrap();
    let mut w = StreamWriter::new(std::fs::File::create(ust.join("channel0_0")).unwrap(), d.uuid, 0, 0, 8192);
    for i in 0..names.len() {
        w.event(i as u32, 1_000 + i as u64, 42, 42, b"node", &Payload::new().u64(i as u64).bytes).unwrap();
    }
    w.finish().unwrap();
}

/// Every file below `dir`, relative to it.
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_below(&p).into_iter().map(|f| Path::new(&e.file_name()).join(f)));
        } else {
            out.push(PathBuf::from(e.file_name()));
        }
    }
    out
}

/// Event names that are no file names (`..`, `.`, empty, with `/` or NUL, hidden) each get a
/// table of their own below `events/`, all of one row, each renaming told on stderr.
#[test]
fn event_names_that_are_not_file_names_get_tables_of_their_own() {
    let names: Vec<String> =
        ["..", ".", "", "a/b", "../../outside", ".hidden", "nul\0x", "-rf", "my_provider:my_event"]
            .map(String::from)
            .into();
    let dir = rostrace_testkit::TempDir::new("export-event-names");
    let t = dir.join("trace");
    named_events_trace(&t, &names);
    for (format, ext) in [("csv", "csv"), ("parquet", "parquet")] {
        let out_dir = dir.join(format);
        let err = export(&t, &["--format", format, "--name", "rec", "-o", out_dir.to_str().unwrap()]);
        let mut top: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        top.sort();
        assert!(top.iter().all(|n| ["trace", "csv", "parquet"].contains(&n.to_str().unwrap())), "{top:?}");
        let mut event_dirs = Vec::new();
        for f in files_below(&out_dir) {
            let parts: Vec<&str> = f.iter().map(|p| p.to_str().unwrap()).collect();
            assert_eq!(parts.last(), Some(&&*format!("rec.{ext}")), "{format}: {f:?}");
            match parts[..] {
                ["events", d, _] => event_dirs.push(d.to_string()),
                [table, _] => assert!(rostrace_export::schema::tables().iter().any(|t| t.name == table), "{f:?}"),
                _ => panic!("{format}: {f:?} is neither a table's nor an event table's"),
            }
        }
        event_dirs.sort();
        let mut want: Vec<String> =
            names.iter().map(|n| rostrace_export::events::table_name(n)["events/".len()..].to_string()).collect();
        want.sort();
        assert_eq!(event_dirs, want, "{format}: a table per event name");
        for (i, n) in names.iter().enumerate() {
            let table = rostrace_export::events::table_name(n);
            if format == "csv" {
                let text = std::fs::read_to_string(out_dir.join(&table).join("rec.csv")).unwrap();
                let lines: Vec<&str> = text.lines().collect();
                assert_eq!(lines.len(), 2, "{n:?}: {text}");
                assert!(lines[0].ends_with(&format!(",f{i}")) && lines[1].ends_with(&format!(",{i}")), "{n:?}: {text}");
            }
            let told = format!("  {table}: the events named {n:?} (not a safe file name: escaped)\n");
            assert_eq!(err.contains(&told), n != "my_provider:my_event", "{format}: {n:?}: {err}");
        }
    }
}

/// A trace directory's name of 250 bytes (the recording's name by default) gives file names
/// within 255 bytes, told on stderr; the rows keep the whole name.
#[test]
fn a_trace_directory_name_too_long_for_a_file_name_is_shortened() {
    let Some(src) = trace("caret-demos-e2e-jazzy") else { return };
    let dir = rostrace_testkit::TempDir::new("export-long-dir");
    let name = "t".repeat(250);
    let t = dir.join(&name);
    rostrace_testkit::copy_writable(&src, &t);
    for (format, ext) in [("csv", ".csv"), ("parquet", ".parquet")] {
        let out_dir = dir.join(format);
        let err = export(&t, &["--format", format, "-o", out_dir.to_str().unwrap()]);
        let files: Vec<String> = std::fs::read_dir(out_dir.join("callback_runs"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().into_string().unwrap())
            .collect();
        let [file] = &files[..] else { panic!("{format}: {files:?}") };
        assert!(file.len() <= 255 && file.starts_with("tttt") && file.ends_with(ext), "{file}");
        // `.csv` fits after the 250 bytes, `.parquet` does not.
        let long = 250 + ext.len() > 255;
        assert_eq!(*file != format!("{name}{ext}"), long, "{format}: {file}");
        let told = format!("  recording {name:?}: its files are named {file} (too long for a file name: shortened)\n");
        assert_eq!(err.contains(&told), long, "{format}: {err}");
        assert!(out_dir.join("events/ros2.callback_start").join(file).is_file(), "{format}: the same name everywhere");
        if format == "csv" {
            let text = std::fs::read_to_string(out_dir.join("callback_runs").join(file)).unwrap();
            assert!(text.lines().nth(1).unwrap().starts_with(&format!("{name},")), "the whole name in the rows");
        }
    }
}

/// An event's name of 300 bytes gives a table name within 255 bytes, told on stderr.
#[test]
fn an_event_name_too_long_for_a_file_name_is_shortened() {
    let long_event = format!("ros2:{}", "x".repeat(300));
    let dir = rostrace_testkit::TempDir::new("export-long-event");
    let t = dir.join("trace");
    named_events_trace(&t, &[long_event.clone(), "my_provider:my_event".into()]);
    for (format, ext) in [("csv", "csv"), ("parquet", "parquet")] {
        let out_dir = dir.join(format);
        let err = export(&t, &["--format", format, "--name", "rec", "-o", out_dir.to_str().unwrap()]);
        let table = rostrace_export::events::table_name(&long_event);
        assert!(table.len() == "events/".len() + 255 && table.starts_with("events/ros2.xxx"), "{table}");
        assert!(out_dir.join(&table).join(format!("rec.{ext}")).is_file(), "{format}: {table}");
        let told = format!("  {table}: the events named {long_event:?} (too long for a file name: shortened)\n");
        assert!(err.contains(&told), "{format}: {err}");
    }
}

/// `-o -`: a Perfetto trace to standard output, the same bytes as to a file; tables, which go
/// to a directory, refused. No file named `-` either way.
#[test]
fn output_dash_is_standard_output_or_refused() {
    let Some(t) = trace("caret-demos-e2e-jazzy") else { return };
    let dir = rostrace_testkit::TempDir::new("export-dash");
    let file = dir.join("trace.pftrace");
    export(&t, &["--format", "perfetto", "-o", file.to_str().unwrap()]);
    let out = rostrace()
        .current_dir(dir.path())
        .arg("export")
        .arg(&t)
        .args(["--format", "perfetto", "-o", "-"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("standard output: "), "{err}");
    assert!(out.stdout == std::fs::read(&file).unwrap(), "the trace on standard output is the file's");
    for format in ["csv", "parquet"] {
        let out = rostrace()
            .current_dir(dir.path())
            .arg("export")
            .arg(&t)
            .args(["--format", format, "-o", "-"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{format}: {err}");
        assert!(
            err.contains("--output -: the tables go to a directory, not to standard output: give a directory"),
            "{format}: {err}"
        );
        assert!(out.stdout.is_empty());
    }
    assert!(!dir.join("-").exists(), "no file named -");
}
