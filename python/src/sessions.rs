//! Sessions for front ends written in Python (launch's `Trace` action, the `ros2 trace`
//! command): a recording begun and finished around processes started by someone else, and the
//! session control of `rostrace create`, `start`, `stop`, `pause`, `resume`, `list`.

use crate::guard::{guarded, RecordError};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rostrace_session::{Backend, Options, Recording, Verb};
use std::ffi::OsString;
use std::path::PathBuf;

/// A session's options from the front end's arguments.
#[allow(clippy::too_many_arguments)]
fn options(
    name: Option<String>,
    path: Option<PathBuf>,
    ust: Option<Vec<String>>,
    kernel: Vec<String>,
    context: Vec<String>,
    backend: &str,
    append: bool,
    buffer_size: Option<String>,
    snapshot_mode: bool,
    distro: Option<String>,
    rclpy: bool,
) -> PyResult<Options> {
    let backend = match backend {
        "embedded" => Backend::Embedded,
        "lttng" => Backend::Lttng,
        b => return Err(PyValueError::new_err(format!("unknown backend {b:?} (embedded or lttng)"))),
    };
    let mut o = Options {
        name,
        path,
        kernel,
        context,
        backend,
        append,
        buffer_size,
        snapshot_mode,
        rclpy,
        ..Default::default()
    };
    if let Some(ust) = ust {
        o.ust = ust;
    }
    o.distro = distro.map(|d| tracetools::distro::by_name(&d)).transpose().map_err(PyValueError::new_err)?;
    Ok(o)
}

/// A recording of the processes that will be started with its environment (`env`), until
/// [`Session::finish`]: launch's `Trace` action.
#[pyclass(unsendable, module = "rostrace._rostrace")]
pub struct Session {
    rec: Option<Recording>,
    dir: PathBuf,
    name: String,
    env: Vec<(String, OsString)>,
    messages: Vec<String>,
}

#[pymethods]
impl Session {
    /// The session directory.
    #[getter]
    fn dir(&self) -> String {
        self.dir.display().to_string()
    }

    /// The session's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// The environment that makes a process trace into the session: (name, value) pairs.
    #[getter]
    fn env(&self) -> Vec<(String, OsString)> {
        self.env.clone()
    }

    /// What the setup had to say.
    #[getter]
    fn messages(&self) -> Vec<String> {
        self.messages.clone()
    }

    /// Finishes the recording (the traced processes are told to close their traces; LTTng's
    /// session is stopped and destroyed): whether anything was recorded, and what there is to
    /// say. Once; later calls return (False, []).
    fn finish(&mut self, py: Python<'_>, command: &str) -> PyResult<(bool, Vec<String>)> {
        let Some(rec) = self.rec.take() else { return Ok((false, Vec::new())) };
        let command = command.to_string();
        let (recorded, said) = py.detach(|| guarded(|| Ok(rec.finish(&command))))?;
        Ok((recorded, said.into_iter().map(|m| m.to_string()).collect()))
    }
}

/// Begins a recording named `name` in `path` (default: `$ROS_TRACE_DIR`, else
/// `$ROS_HOME/tracing`, else `~/.ros/tracing`), `lib` preloaded into the processes started with
/// its environment (default: rostrace's, see `find_library`).
#[pyfunction]
#[pyo3(signature = (name, path=None, events=None, kernel=Vec::new(), context=Vec::new(), backend="embedded",
    append=false, buffer_size=None, snapshot_mode=false, distro=None, rclpy=true, lib=None))]
#[allow(clippy::too_many_arguments)]
pub fn begin_session(
    py: Python<'_>,
    name: String,
    path: Option<PathBuf>,
    events: Option<Vec<String>>,
    kernel: Vec<String>,
    context: Vec<String>,
    backend: &str,
    append: bool,
    buffer_size: Option<String>,
    snapshot_mode: bool,
    distro: Option<String>,
    rclpy: bool,
    lib: Option<PathBuf>,
) -> PyResult<Session> {
    let o =
        options(Some(name), path, events, kernel, context, backend, append, buffer_size, snapshot_mode, distro, rclpy)?;
    let lib = match lib {
        Some(l) => l,
        None => py.detach(|| guarded(|| Ok(rostrace_session::find_library())))?.map_err(RecordError::new_err)?,
    };
    let mut rec = py
        .detach(|| guarded(|| Ok(Recording::begin(&o, "session", None, Some(&lib)))))?
        .map_err(RecordError::new_err)?;
    rec.keep_directory();
    let messages = rec.take_messages().into_iter().map(|m| m.to_string()).collect();
    Ok(Session {
        dir: rec.dir().to_path_buf(),
        name: rec.name().to_string(),
        env: rec.env().to_vec(),
        rec: Some(rec),
        messages,
    })
}

/// What `create_session` returns to Python: (directory, env, libtracetools.so or None).
type Created = (String, Vec<(String, OsString)>, Option<String>);

/// `rostrace create` (`start`: `rostrace start` of a new session): a session that processes
/// started later with `env` record into, recording at once or from `control_session(..,
/// "start")`. Returns (directory, env, libtracetools.so or None with why).
#[pyfunction]
#[pyo3(signature = (name, path=None, events=None, kernel=Vec::new(), context=Vec::new(), backend="embedded",
    append=false, buffer_size=None, start=false, distro=None, rclpy=true))]
#[allow(clippy::too_many_arguments)]
pub fn create_session(
    py: Python<'_>,
    name: String,
    path: Option<PathBuf>,
    events: Option<Vec<String>>,
    kernel: Vec<String>,
    context: Vec<String>,
    backend: &str,
    append: bool,
    buffer_size: Option<String>,
    start: bool,
    distro: Option<String>,
    rclpy: bool,
) -> PyResult<Created> {
    let o = options(None, path, events, kernel, context, backend, append, buffer_size, false, distro, rclpy)?;
    let created =
        py.detach(|| guarded(|| Ok(rostrace_session::create(&name, &o, start))))?.map_err(RecordError::new_err)?;
    let mut env = created.env;
    if created.backend == Backend::Lttng {
        // The processes load rostrace's library in its LTTng mode, as `rostrace create` says.
        if let Ok(lib) = &created.lib {
            let mut preload = OsString::from(lib);
            for h in &created.helpers {
                preload.push(":");
                preload.push(h);
            }
            env.push((tracetools::env::BACKEND.into(), tracetools::env::BACKEND_LTTNG.into()));
            env.push(("LD_PRELOAD".into(), preload));
        }
    }
    Ok((created.dir.display().to_string(), env, created.lib.ok().map(|l| l.display().to_string())))
}

/// Starts, stops, pauses or resumes session `name` in `path` (the default directory of
/// sessions when None): its state afterwards.
#[pyfunction]
#[pyo3(signature = (name, verb, path=None))]
pub fn control_session(py: Python<'_>, name: String, verb: &str, path: Option<PathBuf>) -> PyResult<String> {
    let verb = match verb {
        "start" => Verb::Start,
        "stop" => Verb::Stop,
        "pause" => Verb::Pause,
        "resume" => Verb::Resume,
        v => return Err(PyValueError::new_err(format!("unknown verb {v:?} (start, stop, pause or resume)"))),
    };
    let done = py.detach(|| {
        guarded(|| {
            Ok(rostrace_session::session_dir(path.as_deref(), &name)
                .and_then(|dir| rostrace_session::control(&dir, &name, verb)))
        })
    })?;
    let c = done.map_err(RecordError::new_err)?;
    if c.disk_full {
        return Err(RecordError::new_err(format!(
            "session {name} is {}, but its file system is full: the traced processes could not write all their events",
            c.state
        )));
    }
    Ok(c.state.to_string())
}

/// The sessions in `path` (the default directory of sessions when None): (name, state,
/// directory).
#[pyfunction]
#[pyo3(signature = (path=None))]
pub fn list_sessions(path: Option<PathBuf>) -> Vec<(String, String, String)> {
    let root = path.unwrap_or_else(rostrace_session::default_path);
    rostrace_session::list(&root).into_iter().map(|l| (l.name, l.state, l.dir.display().to_string())).collect()
}
