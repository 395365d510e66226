//! `rostrace._rostrace`: the native half of the `rostrace` Python package. It reads traces and
//! analyzes them in Rust, with the GIL released, and hands the tables to pyarrow through the
//! Arrow C stream interface (no copy, no row-by-row conversion). The Python half
//! (`python/rostrace/`) makes DataFrames of them.
//!
//! No Rust panic reaches Python: every entry point turns one into a `RuntimeError`.

#![deny(missing_docs)]

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchIterator};
use pyo3::exceptions::{PyRuntimeError, PyStopIteration, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyList};
use rostrace_analysis::paths::{Architecture, Case, Found, PathIndex, PathOptions, Query, SearchLimits};
use rostrace_ctf::{FieldValue, TraceSet};
use rostrace_export::arrow::{ArrowSink, Table};
use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

mod guard;
mod sessions;

use guard::{guarded, Interrupted, RecordError, TraceError};

/// Opens the traces; none readable is a `TraceError` naming each path and what is wrong.
/// Returns the set and the errors of the paths that could not be opened (when others could).
fn open(paths: &[PathBuf]) -> PyResult<(TraceSet, Vec<String>)> {
    given(paths)?;
    let (set, errors) = TraceSet::open(paths);
    let errors: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    if set.traces.is_empty() {
        return Err(none_opened(paths, &errors));
    }
    Ok((set, errors))
}

/// No path is a `TraceError`.
fn given(paths: &[PathBuf]) -> PyResult<()> {
    if paths.is_empty() {
        return Err(TraceError::new_err("no trace given"));
    }
    Ok(())
}

/// The `TraceError` of `paths`, none of which could be opened: the errors of opening them, or
/// that no trace was found there.
fn none_opened(paths: &[PathBuf], errors: &[String]) -> PyErr {
    let msg = if errors.is_empty() {
        format!("{}: no CTF trace found", paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))
    } else {
        errors.join("\n")
    };
    TraceError::new_err(msg)
}

/// The work's progress, given to the Python callback, and the moment Python's signal handlers
/// get to run (Ctrl-C is only seen when the interpreter runs them, which it cannot while Rust
/// works without the GIL). Calls `progress(done, total)` at most every 100 ms, holding the GIL
/// only for the call.
struct Progress {
    callback: Option<Py<PyAny>>,
    last: Instant,
    last_signals: Instant,
}

impl Progress {
    fn new(callback: Option<Py<PyAny>>) -> Progress {
        Progress { callback, last: Instant::now(), last_signals: Instant::now() }
    }

    fn tick(&mut self, done: u64, total: u64) {
        let signals = self.last_signals.elapsed() >= Duration::from_millis(50);
        let report = self.callback.is_some() && (self.last.elapsed() >= Duration::from_millis(100) || done >= total);
        if !signals && !report {
            return;
        }
        let interrupted = Python::attach(|py| {
            if report {
                self.last = Instant::now();
                // A failing progress callback does not stop the work, but Ctrl-C handled while
                // it ran (its KeyboardInterrupt, or SystemExit) does.
                if let Some(cb) = &self.callback {
                    if let Err(e) = cb.call1(py, (done, total)) {
                        if !e.is_instance_of::<pyo3::exceptions::PyException>(py) {
                            return Some(e);
                        }
                    }
                }
            }
            self.last_signals = Instant::now();
            py.check_signals().err()
        });
        if let Some(e) = interrupted {
            // Unwinds without the panic hook (nothing printed); the readers' threads end as
            // their channels close.
            std::panic::resume_unwind(Box::new(Interrupted(e)));
        }
    }
}

/// An Arrow table made in Rust. pyarrow takes it without copying (`pyarrow.table(t)`,
/// through `__arrow_c_stream__`).
#[pyclass(frozen, module = "rostrace._rostrace")]
struct ArrowTable {
    table: Table,
}

#[pymethods]
impl ArrowTable {
    /// The table's name.
    #[getter]
    fn name(&self) -> &str {
        &self.table.name
    }

    fn __len__(&self) -> usize {
        self.table.rows()
    }

    /// The Arrow PyCapsule stream interface.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema; // the table's own schema is always given
        let batches: Vec<RecordBatch> = self.table.batches.clone();
        let reader = RecordBatchIterator::new(batches.into_iter().map(Ok), self.table.schema.clone());
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        // The consumer moves the stream out (leaving its release callback null); the capsule
        // then frees only the empty shell.
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }
}

/// A table and the event name it holds.
type Named = (String, ArrowTable);

fn tables(v: Vec<Table>) -> Vec<ArrowTable> {
    v.into_iter().map(|table| ArrowTable { table }).collect()
}

/// The raw events of the traces: a table per event name (as `rostrace export`'s
/// `events/<provider>.<event>`), with the event's name, rows in time order; the read errors
/// and the number of events read (of every name) (the events before and after
/// damage are kept). `names`: the event names to read (None: all).
#[pyfunction]
#[pyo3(signature = (paths, names=None, jobs=0, progress=None))]
fn read_tables(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    names: Option<Vec<String>>,
    jobs: usize,
    progress: Option<Py<PyAny>>,
) -> PyResult<(Vec<Named>, Vec<String>, u64)> {
    py.detach(|| {
        guarded(|| {
            let (set, mut errors) = open(&paths)?;
            let keep: Option<HashSet<String>> = names.map(|v| v.into_iter().collect());
            let keep = |n: &str| keep.as_ref().is_none_or(|k| k.contains(n));
            let mut sink = ArrowSink::new();
            let mut p = Progress::new(progress);
            let written = rostrace_export::events::write(&set, "", &keep, &mut sink, &mut |d, t| p.tick(d, t), jobs)
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
            p.tick(set.total_bytes(), set.total_bytes());
            errors.extend(written.errors);
            // Each table's event name (table names have `:` replaced and are made unique).
            let names = &written.event_names;
            let out = tables(sink.take())
                .into_iter()
                .map(|t| (names.get(&t.table.name).cloned().unwrap_or_else(|| t.table.name.clone()), t))
                .collect();
            Ok((out, errors, written.events))
        })
    })
}

/// The analysis of the traces: its tables (as `rostrace export`), the report as JSON (as
/// `rostrace analyze --json`, the longest paths included), and the read errors.
#[pyfunction]
#[pyo3(signature = (paths, jobs=0, progress=None))]
fn analyze(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    jobs: usize,
    progress: Option<Py<PyAny>>,
) -> PyResult<(Vec<ArrowTable>, String, Vec<String>, Paths)> {
    py.detach(|| {
        guarded(|| {
            given(&paths)?;
            let mut p = Progress::new(progress);
            let options = rostrace_analysis::Options { longest_paths: true, ..Default::default() };
            let loaded = rostrace_analysis::Open::new(&paths)
                .jobs(jobs)
                .options(options)
                .progress(|d, t| p.tick(d, t))
                .analyze()
                .map_err(|e| none_opened(&paths, &e.iter().map(ToString::to_string).collect::<Vec<_>>()))?;
            p.tick(loaded.set.total_bytes(), loaded.set.total_bytes());
            let errors: Vec<String> = loaded.errors.iter().map(ToString::to_string).collect();
            let an = loaded.analysis;
            let mut sink = ArrowSink::new();
            rostrace_export::write_tables(&an, "", &mut sink).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
            let json = serde_json::to_string(&an.report).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
            let arch = an.architecture().into_owned();
            Ok((tables(sink.take()), json, errors, Paths { an, arch, jobs }))
        })
    })
}

/// Analyzes the traces at `paths` (one recording) and writes its tables as `rostrace export
/// --format parquet` does, to `out/<table>/<file>.parquet` with `recording` in their `recording`
/// column (the file named after it, or another safe name): what a task of `rostrace.spark`
/// does with each recording. With `e2e_paths` (as `rostrace e2e --path` takes them) or
/// `named_paths` (of `architecture`, a CARET architecture YAML's text), also the `paths` and
/// `path_messages` tables, as `rostrace export --path` writes them; a path this recording does
/// not have is a warning. Returns the rows per table and the read errors and warnings.
#[pyfunction]
#[pyo3(signature = (paths, out, recording, jobs=1, e2e_paths=Vec::new(), architecture=None, named_paths=Vec::new(), include_first_callback=false, include_last_callback=false))]
#[allow(clippy::too_many_arguments)]
fn export_tables(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    out: PathBuf,
    recording: String,
    jobs: usize,
    e2e_paths: Vec<String>,
    architecture: Option<String>,
    named_paths: Vec<String>,
    include_first_callback: bool,
    include_last_callback: bool,
) -> PyResult<(rostrace_export::tables::Counts, Vec<String>)> {
    let file = match &architecture {
        Some(text) => Some(
            rostrace_analysis::paths::yaml::import(text)
                .map_err(|e| PyValueError::new_err(format!("architecture: {e}")))?,
        ),
        None => None,
    };
    if !named_paths.is_empty() && file.is_none() {
        return Err(PyValueError::new_err("named_paths: they are the architecture's: give architecture"));
    }
    py.detach(|| {
        guarded(|| {
            given(&paths)?;
            let loaded = rostrace_analysis::Open::new(&paths)
                .jobs(jobs)
                .analyze()
                .map_err(|e| none_opened(&paths, &e.iter().map(ToString::to_string).collect::<Vec<_>>()))?;
            let mut notes: Vec<String> = loaded.errors.iter().map(ToString::to_string).collect();
            let an = &loaded.analysis;
            let mut sink = rostrace_export::parquet::ParquetSink::new(&out, &recording);
            let written = |e: std::io::Error| PyRuntimeError::new_err(format!("{}: {e}", out.display()));
            let mut counts = rostrace_export::write_tables(an, &recording, &mut sink).map_err(written)?;
            if !e2e_paths.is_empty() || !named_paths.is_empty() {
                let mut arch = an.architecture().into_owned();
                if let Some(f) = &file {
                    notes.extend(arch.apply(f).into_iter().map(|u| format!("architecture: {u}")));
                }
                let opt = PathOptions { include_first_callback, include_last_callback };
                let mut followed = Vec::new();
                for f in PathIndex::new(an).follow(&arch, &e2e_paths, &named_paths, opt, ["path", "named path"]) {
                    match f {
                        Ok(x) => followed.push(x),
                        Err(e) => notes.push(e),
                    }
                }
                let refs: Vec<_> = followed.iter().map(|(s, r)| (s, r)).collect();
                counts.extend(rostrace_export::write_paths(&recording, &refs, &mut sink).map_err(written)?);
            }
            Ok((counts, notes))
        })
    })
}

/// The export's tables and their columns (name, type: `int64`, `uint64`, `double`, `boolean`,
/// `string`), as `rostrace export` writes them.
#[pyfunction]
fn export_schema() -> Vec<(String, Vec<(String, String)>)> {
    rostrace_export::schema::tables()
        .into_iter()
        .map(|t| (t.name.to_string(), t.columns.iter().map(|c| (c.name.clone(), c.kind.name().to_string())).collect()))
        .collect()
}

/// The end-to-end paths of an analysis (`rostrace paths` and `rostrace e2e`).
#[pyclass(frozen, module = "rostrace._rostrace")]
struct Paths {
    an: rostrace_analysis::Analysis,
    arch: Architecture,
    jobs: usize,
}

#[pymethods]
impl Paths {
    /// The architecture (CARET's YAML, as `rostrace architecture`).
    fn architecture(&self) -> String {
        rostrace_analysis::paths::yaml::export(&self.arch)
    }

    /// The paths from `from_` through each of `through` to `to` (nodes or topics), ranked by
    /// mean latency, as `rostrace paths --json`.
    #[pyo3(signature = (from_, to, through=Vec::new(), max_depth=15, max_paths=100, include_first_callback=false, include_last_callback=false))]
    #[allow(clippy::too_many_arguments)]
    fn paths(
        &self,
        py: Python<'_>,
        from_: String,
        to: String,
        through: Vec<String>,
        max_depth: usize,
        max_paths: usize,
        include_first_callback: bool,
        include_last_callback: bool,
    ) -> PyResult<String> {
        if max_depth < 2 || max_paths == 0 {
            return Err(PyValueError::new_err("max_depth must be 2 or more and max_paths 1 or more"));
        }
        py.detach(|| {
            guarded(|| {
                let query = Query {
                    from: &from_,
                    through: &through,
                    to: &to,
                    labels: ["from_", "through", "to"],
                    limits: SearchLimits { max_depth, max_paths, ..Default::default() },
                    options: PathOptions { include_first_callback, include_last_callback },
                };
                let Found { ranked, outcome } = rostrace_analysis::paths::find(&self.an, &self.arch, &query, self.jobs)
                    .map_err(PyValueError::new_err)?;
                let out = serde_json::json!({
                    "truncated_at_max_paths": outcome.truncated_paths,
                    "truncated_at_max_depth": outcome.truncated_depth,
                    "truncated_at_max_expansions": outcome.truncated_work,
                    "paths": ranked,
                });
                Ok(out.to_string())
            })
        })
    }

    /// The records of a path (`NODE,NODE,...` with topics between where needed), message by
    /// message, as `rostrace e2e --json`.
    #[pyo3(signature = (path, include_first_callback=false, include_last_callback=false))]
    fn e2e(
        &self,
        py: Python<'_>,
        path: String,
        include_first_callback: bool,
        include_last_callback: bool,
    ) -> PyResult<String> {
        py.detach(|| {
            guarded(|| {
                let spec = self.arch.parse_path(&path, "path").map_err(PyValueError::new_err)?;
                let opt = PathOptions { include_first_callback, include_last_callback };
                let records =
                    PathIndex::new(&self.an).records(&self.arch, &spec, opt).map_err(PyValueError::new_err)?;
                let out = rostrace_analysis::paths::e2e_summary(&self.arch, &spec, &records, opt, &Case::ALL);
                serde_json::to_string(&out).map_err(|e| PyRuntimeError::new_err(e.to_string()))
            })
        })
    }
}

/// A decoded value, owned, on its way to Python.
enum Value {
    U(u64),
    I(i64),
    Big(i128),
    F(f64),
    S(String),
    List(Vec<Value>),
    Struct(Vec<(String, Value)>),
}

fn value(v: FieldValue<'_>) -> Value {
    match v {
        FieldValue::U64(x) => Value::U(x),
        FieldValue::I64(x) => Value::I(x),
        FieldValue::Enum { label: Some(l), .. } => Value::S(l.to_string()),
        FieldValue::Enum { value, .. } => Value::Big(value),
        FieldValue::F64(x) => Value::F(x),
        FieldValue::Str(b) => Value::S(String::from_utf8_lossy(b).into_owned()),
        FieldValue::Struct(s) => Value::Struct(s.iter().map(|(n, v)| (n.to_string(), value(v))).collect()),
        FieldValue::Array(a) => Value::List(a.iter().map(value).collect()),
    }
}

impl Value {
    fn to_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self {
            Value::U(x) => x.into_pyobject(py)?.into_any(),
            Value::I(x) => x.into_pyobject(py)?.into_any(),
            Value::Big(x) => x.into_pyobject(py)?.into_any(),
            Value::F(x) => x.into_pyobject(py)?.into_any(),
            Value::S(s) => s.into_pyobject(py)?.into_any(),
            Value::List(v) => {
                let l = PyList::empty(py);
                for x in v {
                    l.append(x.to_py(py)?)?;
                }
                l.into_any()
            }
            Value::Struct(v) => {
                let d = PyDict::new(py);
                for (k, x) in v {
                    d.set_item(k, x.to_py(py)?)?;
                }
                d.into_any()
            }
        })
    }
}

/// One event: name, timestamp, CPU, then the context and payload fields.
struct Row {
    name: String,
    timestamp: Option<i64>,
    cpu: Option<u64>,
    fields: Vec<(String, Value)>,
}

enum Item {
    Rows(Vec<Row>),
    Error(String),
}

/// Events one by one, as dicts like tracetools_read's (`_name`, `_timestamp`, `cpu_id`, the
/// context and payload fields). A thread reads ahead, at most a few thousand events.
#[pyclass(module = "rostrace._rostrace")]
struct EventIter {
    rx: Option<Mutex<mpsc::Receiver<Item>>>,
    rows: std::vec::IntoIter<Row>,
    errors: Vec<String>,
}

const CHUNK: usize = 1024;

fn produce(set: TraceSet, keep: Option<HashSet<String>>, jobs: usize, tx: mpsc::SyncSender<Item>) {
    let r = catch_unwind(AssertUnwindSafe(|| {
        set.read().jobs(jobs).decode_ahead().run(|events| {
            let mut chunk = Vec::with_capacity(CHUNK);
            while let Some(ev) = events.next() {
                let ev = match ev {
                    Ok(ev) => ev,
                    Err(e) => {
                        if tx.send(Item::Error(e.to_string())).is_err() {
                            return;
                        }
                        continue;
                    }
                };
                let name = ev.class().name.as_str();
                if keep.as_ref().is_some_and(|k| !k.contains(name)) {
                    continue;
                }
                let mut fields = Vec::new();
                for s in [ev.stream_context(), ev.event_context(), ev.payload()].into_iter().flatten() {
                    fields.extend(s.iter().map(|(n, v)| (n.to_string(), value(v))));
                }
                chunk.push(Row { name: name.to_string(), timestamp: ev.timestamp(), cpu: ev.cpu_id(), fields });
                if chunk.len() == CHUNK
                    && tx.send(Item::Rows(std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK)))).is_err()
                {
                    return;
                }
            }
            let _ = tx.send(Item::Rows(chunk));
        })
    }));
    if r.is_err() {
        let _ = tx.send(Item::Error("rostrace: internal error while reading (please report it)".into()));
    }
}

#[pymethods]
impl EventIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        loop {
            if let Some(r) = self.rows.next() {
                let d = PyDict::new(py);
                d.set_item("_name", r.name)?;
                d.set_item("_timestamp", r.timestamp)?;
                if let Some(c) = r.cpu {
                    d.set_item("cpu_id", c)?;
                }
                for (k, v) in &r.fields {
                    d.set_item(k, v.to_py(py)?)?;
                }
                return Ok(d);
            }
            let Some(rx) = &self.rx else { return Err(PyStopIteration::new_err(())) };
            match py.detach(|| rx.lock().map_err(|_| mpsc::RecvError).and_then(|r| r.recv())) {
                Ok(Item::Rows(rows)) => self.rows = rows.into_iter(),
                Ok(Item::Error(e)) => self.errors.push(e),
                Err(_) => {
                    self.rx = None;
                    return Err(PyStopIteration::new_err(()));
                }
            }
        }
    }

    /// The read errors met so far (the events around them are still given).
    #[getter]
    fn errors(&self) -> Vec<String> {
        self.errors.clone()
    }
}

/// Iterates over the events of the traces in time order (see `EventIter`).
#[pyfunction]
#[pyo3(signature = (paths, names=None, jobs=0))]
fn iter_events(py: Python<'_>, paths: Vec<PathBuf>, names: Option<Vec<String>>, jobs: usize) -> PyResult<EventIter> {
    py.detach(|| {
        guarded(|| {
            let (set, errors) = open(&paths)?;
            let (tx, rx) = mpsc::sync_channel(4);
            let keep = names.map(|v| v.into_iter().collect());
            let from = rostrace_threads::Origin::here();
            std::thread::Builder::new()
                .name("rostrace-read".into())
                .spawn(move || {
                    from.leave(1);
                    produce(set, keep, jobs, tx)
                })
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
            rostrace_threads::let_started_move();
            Ok(EventIter { rx: Some(Mutex::new(rx)), rows: Vec::new().into_iter(), errors })
        })
    })
}

/// The number of events in the traces, and the read errors.
#[pyfunction]
#[pyo3(signature = (paths, jobs=0))]
fn count_events(py: Python<'_>, paths: Vec<PathBuf>, jobs: usize) -> PyResult<(u64, Vec<String>)> {
    py.detach(|| {
        guarded(|| {
            let (set, mut errors) = open(&paths)?;
            let n = set.read().jobs(jobs).decode_ahead().run(|events| {
                let mut n = 0u64;
                while let Some(ev) = events.next() {
                    match ev {
                        Ok(_) => n += 1,
                        Err(e) => errors.push(e.to_string()),
                    }
                }
                n
            });
            Ok((n, errors))
        })
    })
}

/// The summary of the traces as JSON, as `rostrace info --json` writes it.
#[pyfunction]
#[pyo3(signature = (paths, jobs=0))]
fn info(py: Python<'_>, paths: Vec<PathBuf>, jobs: usize) -> PyResult<String> {
    py.detach(|| {
        guarded(|| {
            let (set, errors) = open(&paths)?;
            let info = rostrace_session::info::collect(&set, errors, jobs, &|_| {});
            serde_json::to_string(&info).map_err(|e| PyRuntimeError::new_err(e.to_string()))
        })
    })
}

/// What a recording from Python does along the way: keeps the messages for the Python side,
/// and while the command runs lets Python's signal handlers run, a Ctrl-C (the command got
/// its SIGINT from the terminal too) counting as the CLI counts it.
struct PyObserver {
    messages: Vec<String>,
    ctrl_c: u32,
}

impl rostrace_session::Observer for PyObserver {
    fn say(&mut self, m: rostrace_session::Message) {
        self.messages.push(m.to_string());
    }
    fn wait(&mut self, child: &mut std::process::Child) -> std::io::Result<std::process::ExitStatus> {
        let mut last = Instant::now();
        let ctrl_c = &mut self.ctrl_c;
        let mut said = Vec::new();
        let status = rostrace_session::wait_passing_signals(
            child,
            || {
                if last.elapsed() >= Duration::from_millis(50) {
                    last = Instant::now();
                    if Python::attach(|py| py.check_signals()).is_err() {
                        *ctrl_c += 1;
                    }
                }
                rostrace_session::Received { ints: *ctrl_c, ..Default::default() }
            },
            &mut |m| said.push(m.to_string()),
        );
        self.messages.extend(said);
        status
    }
}

/// Records `command` (the program and its arguments) with `lib` preloaded until it ends:
/// `rostrace record`'s recording. Returns the session directory, whether anything was
/// recorded, the command's exit code (128 + N for signal N, None when it could not be waited
/// for) and what there was to say.
#[pyfunction]
#[pyo3(signature = (command, lib, output=None, name=None, path=None, events=None, light=false, distro=None,
    buffer_size=None, filters=None, append=false, rclpy=true, rotate=None, keep=None))]
#[allow(clippy::too_many_arguments)]
fn record(
    py: Python<'_>,
    command: Vec<std::ffi::OsString>,
    lib: PathBuf,
    output: Option<PathBuf>,
    name: Option<String>,
    path: Option<PathBuf>,
    events: Option<Vec<String>>,
    light: bool,
    distro: Option<String>,
    buffer_size: Option<String>,
    filters: Option<std::collections::HashMap<String, String>>,
    append: bool,
    rclpy: bool,
    rotate: Option<String>,
    keep: Option<usize>,
) -> PyResult<(String, bool, Option<u8>, Vec<String>)> {
    if command.is_empty() {
        return Err(PyValueError::new_err("no command to record"));
    }
    let rotate = rotate.as_deref().map(rostrace_session::Rotate::parse).transpose().map_err(PyValueError::new_err)?;
    let mut o =
        rostrace_session::Options { name, path, light, buffer_size, append, rclpy, rotate, keep, ..Default::default() };
    if let Some(e) = events {
        o.ust = e;
    }
    o.distro = distro.map(|d| tracetools::distro::by_name(&d)).transpose().map_err(PyValueError::new_err)?;
    for (k, v) in filters.unwrap_or_default() {
        let slot = match k.as_str() {
            "select_nodes" => &mut o.select_nodes,
            "ignore_nodes" => &mut o.ignore_nodes,
            "select_topics" => &mut o.select_topics,
            "ignore_topics" => &mut o.ignore_topics,
            "ignore_processes" => &mut o.ignore_processes,
            _ => return Err(PyValueError::new_err(format!("unknown filter {k:?}"))),
        };
        *slot = Some(v);
    }
    let mut obs = PyObserver { messages: Vec::new(), ctrl_c: 0 };
    let r = py.detach(|| guarded(|| Ok(rostrace_session::record(&o, output, &command, &lib, None, &mut obs))))?;
    let r = r.map_err(RecordError::new_err)?;
    let code = r.status.map(rostrace_session::exit_code_of);
    Ok((r.dir.display().to_string(), r.recorded, code, obs.messages))
}

/// The environment that makes a process started by the caller trace into `dir` (rostrace's
/// embedded tracer, `lib` preloaded, the rclpy instrumentation unless `rclpy` is false).
#[pyfunction]
#[pyo3(signature = (dir, lib, distro=None, rclpy=true))]
fn traced_environment(
    dir: PathBuf,
    lib: PathBuf,
    distro: Option<String>,
    rclpy: bool,
) -> PyResult<Vec<(String, std::ffi::OsString)>> {
    let mut o = rostrace_session::Options { rclpy, ..Default::default() };
    o.distro = distro.map(|d| tracetools::distro::by_name(&d)).transpose().map_err(PyValueError::new_err)?;
    std::fs::create_dir_all(&dir).map_err(|e| RecordError::new_err(format!("{}: {e}", dir.display())))?;
    rostrace_session::traced_env(&dir, &o, &lib).map_err(RecordError::new_err)
}

include!(concat!(env!("OUT_DIR"), "/providers.rs"));

/// rostrace's libtracetools.so and LTTng-UST providers, embedded by `build.rs`: an installed
/// wheel records without the `rostrace` command.
static EMBEDDED: rostrace_session::Embedded = rostrace_session::Embedded { lib: LIBRARY, providers: PROVIDERS };

fn embedded_library() -> Option<Result<PathBuf, String>> {
    EMBEDDED.library()
}

/// rostrace's libtracetools.so to preload: `$ROSTRACE_LIB`, else the copy this module carries
/// (written into the cache directory); an error says why there is none.
#[pyfunction]
fn find_library(py: Python<'_>) -> PyResult<String> {
    let found = py.detach(|| guarded(|| Ok(rostrace_session::find_library())))?;
    found.map(|p| p.display().to_string()).map_err(RecordError::new_err)
}

#[pymodule]
fn _rostrace(m: &Bound<'_, PyModule>) -> PyResult<()> {
    rostrace_session::set_embedded_library(embedded_library);
    m.add("TraceError", m.py().get_type::<TraceError>())?;
    m.add("RecordError", m.py().get_type::<RecordError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<ArrowTable>()?;
    m.add_class::<EventIter>()?;
    m.add_class::<Paths>()?;
    m.add_function(wrap_pyfunction!(read_tables, m)?)?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(export_tables, m)?)?;
    m.add_function(wrap_pyfunction!(export_schema, m)?)?;
    m.add_function(wrap_pyfunction!(iter_events, m)?)?;
    m.add_function(wrap_pyfunction!(count_events, m)?)?;
    m.add_function(wrap_pyfunction!(info, m)?)?;
    m.add_function(wrap_pyfunction!(record, m)?)?;
    m.add_function(wrap_pyfunction!(traced_environment, m)?)?;
    m.add_function(wrap_pyfunction!(find_library, m)?)?;
    m.add_class::<sessions::Session>()?;
    m.add_function(wrap_pyfunction!(sessions::begin_session, m)?)?;
    m.add_function(wrap_pyfunction!(sessions::create_session, m)?)?;
    m.add_function(wrap_pyfunction!(sessions::control_session, m)?)?;
    m.add_function(wrap_pyfunction!(sessions::list_sessions, m)?)?;
    Ok(())
}
