//! Sessions that processes are launched under and that are controlled from outside: their
//! directories, the control file the traced processes poll (`.rostrace-control`: created,
//! recording, paused, stopped), snapshots of flight-recorder sessions, listing.

use crate::lttng::lttng;
use crate::options::{Backend, Options};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use tracetools::tracer::{control_state, Control, CONTROL_FILE, SNAPSHOT_FILE};

/// Marks an LTTng session directory; holds the LTTng session name.
pub(crate) const LTTNG_MARK: &str = ".rostrace-lttng";

/// The default directory of sessions, as ros2_tracing picks it: `$ROS_TRACE_DIR`, else
/// `$ROS_HOME/tracing`, else `~/.ros/tracing`.
pub fn default_path() -> PathBuf {
    if let Some(d) = std::env::var_os("ROS_TRACE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    if let Some(h) = std::env::var_os("ROS_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(h).join("tracing");
    }
    PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| ".".into())).join(".ros/tracing")
}

/// `PREFIX-YYYYMMDDHHMMSS` of the current UTC time.
pub fn timestamped(prefix: &str) -> String {
    let t = rostrace_ctf::time::utc(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as i64).unwrap_or(0),
    );
    format!("{prefix}-{:04}{:02}{:02}{:02}{:02}{:02}", t.year, t.month, t.day, t.hour, t.minute, t.second)
}

/// Writes the state of an embedded session's control file (see [`write_session_file`]).
/// Returns whether the disk was full.
pub fn write_control(dir: &Path, state: &str) -> Result<bool, String> {
    write_session_file(dir, CONTROL_FILE, state)
}

/// Writes one word into a file of a session that traced processes poll: atomically (a new file
/// renamed over it), or, when that cannot be written (a full disk), in place: the word padded
/// with spaces to the file's length, in one write over bytes the file already has, so that no
/// space is needed. Readers take the first word. Returns whether the disk was full.
pub(crate) fn write_session_file(dir: &Path, file: &str, state: &str) -> Result<bool, String> {
    let path = dir.join(file);
    let tmp = dir.join(format!("{file}.tmp"));
    let atomic = std::fs::write(&tmp, format!("{state}\n")).and_then(|_| std::fs::rename(&tmp, &path));
    let Err(first) = atomic else { return Ok(false) };
    let _ = std::fs::remove_file(&tmp);
    let in_place = || -> std::io::Result<()> {
        use std::io::Write as _;
        let len = std::fs::metadata(&path)?.len() as usize;
        if len < state.len() + 1 {
            return Err(std::io::Error::other("the file is too short to be rewritten in place"));
        }
        let mut f = std::fs::OpenOptions::new().write(true).open(&path)?;
        f.write_all(format!("{state:<w$}\n", w = len - 1).as_bytes())
    };
    match in_place() {
        Ok(()) => Ok(true),
        Err(e) => Err(format!("cannot write {}: {first} (in place: {e})", path.display())),
    }
}

/// Creates the session directory `name` under the options' directory of sessions (an existing
/// one only with `append`).
pub(crate) fn make_dir(o: &Options, name: &str) -> Result<PathBuf, String> {
    let dir = o.path.clone().unwrap_or_else(default_path).join(name);
    if dir.exists() && !o.append {
        return Err(format!("trace directory {} already exists: use --append, or another session name", dir.display()));
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

/// A session made by [`create`].
#[derive(Debug)]
pub struct Created {
    /// Its directory.
    pub dir: PathBuf,
    /// Its backend.
    pub backend: Backend,
    /// The libtracetools.so to preload into the processes to trace, or why there is none.
    pub lib: Result<PathBuf, String>,
    /// The LTTng-UST helper libraries to preload too (LTTng backend).
    pub helpers: Vec<PathBuf>,
    /// The environment that makes processes trace into it (embedded backend, library found).
    pub env: Vec<(String, OsString)>,
}

/// A session `name` that processes can be launched under: recording at once (`start`), or
/// not before [`control`] starts it (`create`).
pub fn create(name: &str, o: &Options, recording: bool) -> Result<Created, String> {
    o.check()?;
    if o.rotate.is_some() {
        return Err("--rotate needs a recorder that stays while the session records, to begin each chunk: use \
             `rostrace record --rotate ... -- COMMAND`"
            .into());
    }
    if o.record_clock {
        return Err(
            "--record-clock runs the clock recorder for as long as rostrace runs: use it with `rostrace record` \
             (or run `rostrace clock-recorder` yourself with the session's environment)"
                .into(),
        );
    }
    let state = if recording { "recording" } else { "created" };
    if o.backend == Backend::Lttng {
        o.distro().and_then(crate::lttng_provider_check)?;
        let dir = make_dir(o, name)?;
        crate::lttng::setup(name, &dir, o)?;
        if !recording {
            let _ = lttng(&["stop", name]);
        }
        std::fs::write(dir.join(LTTNG_MARK), name).map_err(|e| format!("{}: {e}", dir.display()))?;
        write_control(&dir, state)?;
        let lib = crate::find_library();
        let helpers = o.helpers().unwrap_or_default().0;
        return Ok(Created { dir, backend: Backend::Lttng, lib, helpers, env: Vec::new() });
    }
    let lib = crate::find_library();
    let dir = make_dir(o, name)?;
    write_control(&dir, state)?;
    // Room for the processes that would start once the disk is full.
    tracetools::tracer::reserve(&dir, true);
    let mut env = match &lib {
        Ok(lib) => crate::environment::embedded_env(&dir, o, Some(lib)),
        Err(_) => Vec::new(),
    };
    // A session's processes are started by hand: the instrumentation is left out (no variable
    // to set) when it cannot be written, as a recording warns.
    if o.rclpy && !env.is_empty() {
        let _ = crate::environment::add_rclpy(&mut env);
    }
    Ok(Created { dir, backend: Backend::Embedded, lib, helpers: Vec::new(), env })
}

/// The directory of the existing session `name` (under `path`, else [`default_path`]).
pub fn session_dir(path: Option<&Path>, name: &str) -> Result<PathBuf, String> {
    let dir = path.map(Path::to_path_buf).unwrap_or_else(default_path).join(name);
    if !dir.join(CONTROL_FILE).exists() {
        return Err(format!("unknown session {name:?} (no {} in {})", CONTROL_FILE, dir.display()));
    }
    Ok(dir)
}

/// What [`control`] does to a session.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Verb {
    /// Start recording (also a stopped session).
    Start,
    /// Stop: traced processes close their trace files.
    Stop,
    /// Record nothing until resumed.
    Pause,
    /// Record again after a pause.
    Resume,
}

/// What [`control`] did.
#[derive(Debug)]
pub struct Controlled {
    /// The session's state now: `recording`, `paused` or `stopped`.
    pub state: &'static str,
    /// The file system of the session was full: the state is written, but the traced processes
    /// could not write all their events.
    pub disk_full: bool,
}

/// Starts, stops, pauses or resumes the session in `dir` (named `name` in messages), embedded
/// or LTTng, and gives the traced processes the time to see it.
pub fn control(dir: &Path, name: &str, verb: Verb) -> Result<Controlled, String> {
    let state = control_state(Some(dir));
    let raw = std::fs::read_to_string(dir.join(CONTROL_FILE)).unwrap_or_default();
    let (next, ok) = match verb {
        Verb::Start => ("recording", state != Control::Recording),
        Verb::Resume => ("recording", state == Control::Paused),
        Verb::Pause => ("paused", state == Control::Recording),
        Verb::Stop => ("stopped", state != Control::Stopped || raw.trim() == "created"),
    };
    if !ok {
        return Err(format!("session {name} is already {}", raw.trim()));
    }
    if let Ok(lname) = std::fs::read_to_string(dir.join(LTTNG_MARK)) {
        // An LTTng session: the same verbs, through lttng.
        match next {
            "recording" => lttng(&["start", &lname]),
            "paused" => lttng(&["stop", &lname]),
            _ => lttng(&["stop", &lname]).or(Ok(String::new())).and_then(|_| lttng(&["destroy", &lname])),
        }?;
    }
    let disk_full = write_control(dir, next)?;
    let embedded = !dir.join(LTTNG_MARK).exists();
    match next {
        "recording" if embedded => tracetools::tracer::reserve(dir, true),
        "stopped" => tracetools::tracer::release(dir),
        _ => {}
    }
    // Traced processes poll every 20 ms.
    std::thread::sleep(std::time::Duration::from_millis(60));
    Ok(Controlled { state: next, disk_full })
}

/// Asks the flight-recorder processes of the session in `dir` to write what they hold, and
/// gives them the time to; returns the snapshot's number.
pub fn snapshot(dir: &Path) -> Result<u64, String> {
    let n =
        std::fs::read_to_string(dir.join(SNAPSHOT_FILE)).ok().and_then(|t| t.trim().parse::<u64>().ok()).unwrap_or(0)
            + 1;
    write_session_file(dir, SNAPSHOT_FILE, &n.to_string())?;
    std::thread::sleep(std::time::Duration::from_millis(100));
    Ok(n)
}

/// A session found by [`list`].
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Listed {
    /// Its name.
    pub name: String,
    /// Its state, as its control file says.
    pub state: String,
    /// Its directory.
    pub dir: PathBuf,
}

/// The sessions in the directory of sessions `root`, by name.
pub fn list(root: &Path) -> Vec<Listed> {
    let mut rows = Vec::new();
    if let Ok(rd) = std::fs::read_dir(root) {
        for e in rd.flatten() {
            let p = e.path();
            if let Ok(s) = std::fs::read_to_string(p.join(CONTROL_FILE)) {
                rows.push(Listed {
                    name: e.file_name().to_string_lossy().into_owned(),
                    state: s.trim().to_string(),
                    dir: p,
                });
            }
        }
    }
    rows.sort();
    rows
}
