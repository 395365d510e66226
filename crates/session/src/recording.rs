//! A recording in progress: the session directory and backend set up, the environment of the
//! traced processes, and its end.

use crate::control::{make_dir, timestamped, write_control};
use crate::environment::{add_rclpy, embedded_env};
use crate::lttng::lttng;
use crate::options::{Backend, Options};
use crate::recorders::{lock_session, other_recorders, recorder_file};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use tracetools::env;
use tracetools::tracer::CONTROL_FILE;

/// Something to tell the user, which the front end shows as it can (`rostrace: ` and the
/// message on stderr for the CLI).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// Something went wrong.
    Error(String),
    /// Something may be wrong.
    Warning(String),
    /// Something worth knowing.
    Note(String),
    /// What is going on.
    Info(String),
}

impl std::fmt::Display for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Message::Error(m) => write!(f, "error: {m}"),
            Message::Warning(m) => write!(f, "warning: {m}"),
            Message::Note(m) => write!(f, "note: {m}"),
            Message::Info(m) => f.write_str(m),
        }
    }
}

/// A recording in progress: the session directory and backend are set up, the traced processes
/// get their environment from [`Recording::env`], and [`Recording::finish`] stops it.
pub struct Recording {
    name: String,
    dir: PathBuf,
    backend: Backend,
    snapshot_mode: bool,
    remove_on_abort: bool,
    filtered: bool,
    env: Vec<(String, OsString)>,
    record_clock: bool,
    /// The clock recorder (`record_clock`), while it runs.
    clock: Option<std::process::Child>,
    /// What its setup had to say ([`Recording::take_messages`]).
    said: Vec<Message>,
    /// The rotation (`rotate`), while it runs.
    rotation: Option<crate::rotation::Rotation>,
    keep: Option<usize>,
}

impl Recording {
    /// Checks the options, creates the session directory (`dir`, or the session's under the
    /// options' path) and starts the backend. `lib` is the libtracetools.so to preload (none for
    /// programs that link rostrace's tracer themselves).
    pub fn begin(o: &Options, prefix: &str, dir: Option<PathBuf>, lib: Option<&Path>) -> Result<Recording, String> {
        o.check()?;
        let (name, dir) = match dir {
            Some(d) => {
                let name =
                    d.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| timestamped(prefix));
                if d.exists() && !o.append && std::fs::read_dir(&d).map(|mut e| e.next().is_some()).unwrap_or(true) {
                    return Err(format!("trace directory {} already exists and is not empty", d.display()));
                }
                std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
                (name, d)
            }
            None => {
                let name = o.name.clone().unwrap_or_else(|| timestamped(prefix));
                let d = make_dir(o, &name)?;
                (name, d)
            }
        };
        let mut r = Recording {
            name,
            dir,
            backend: o.backend,
            snapshot_mode: o.snapshot_mode,
            remove_on_abort: !o.append,
            filtered: !o.filters().is_empty() || tracetools::tracer::filters_in_env(),
            env: Vec::new(),
            record_clock: o.record_clock,
            clock: None,
            said: Vec::new(),
            rotation: None,
            keep: o.keep,
        };
        match o.backend {
            Backend::Embedded => r.begin_embedded(o, lib)?,
            Backend::Lttng => r.begin_lttng(o, lib)?,
        }
        if o.rclpy {
            if let Err(e) = add_rclpy(&mut r.env) {
                r.said.push(Message::Warning(e));
            }
        }
        Ok(r)
    }

    fn begin_embedded(&mut self, o: &Options, lib: Option<&Path>) -> Result<(), String> {
        // Marked as one of the session's recorders, and recording, at once for the others.
        let lock = lock_session(&self.dir);
        let marked = std::fs::File::create(recorder_file(&self.dir))
            .map_err(|e| format!("{}: {e}", self.dir.display()))
            .and_then(|_| write_control(&self.dir, "recording"));
        drop(lock);
        if let Err(e) = marked {
            let _ = self.abort_in_place();
            return Err(e);
        }
        // Room for the processes that would start once the disk is full.
        tracetools::tracer::reserve(&self.dir, true);
        if let Some(rotate) = o.rotate {
            // The first chunk named before any traced process starts: all write into it.
            let started = crate::rotation::Rotation::first(&self.dir)
                .and_then(|_| crate::rotation::Rotation::start(&self.dir, rotate, o.keep));
            match started {
                Ok(r) => self.rotation = Some(r),
                Err(e) => {
                    let _ = self.abort_in_place();
                    return Err(e);
                }
            }
        }
        self.env = embedded_env(&self.dir, o, lib);
        Ok(())
    }

    fn begin_lttng(&mut self, o: &Options, lib: Option<&Path>) -> Result<(), String> {
        // Known: the options' check accepted it.
        let abi = o.distro()?;
        let provider = crate::lttng_provider_dir(abi)
            .ok_or_else(|| crate::lttng::missing(abi))
            .and_then(|dir| crate::lttng::setup(&self.name, &self.dir, o).map(|_| dir));
        let provider = match provider {
            Ok(dir) => dir,
            Err(e) => {
                if self.remove_on_abort {
                    let _ = std::fs::remove_dir_all(&self.dir);
                }
                return Err(e);
            }
        };
        self.env.push((env::BACKEND.into(), env::BACKEND_LTTNG.into()));
        if let Some(abi) = o.distro {
            self.env.push((env::DISTRO.into(), abi.name.into()));
        }
        self.env.push((env::LTTNG_PROVIDER.into(), provider.into()));
        // Known: the setup found them.
        let (helpers, _) = o.helpers().unwrap_or_default();
        let preload: Vec<&Path> = lib.into_iter().chain(helpers.iter().map(PathBuf::as_path)).collect();
        if !preload.is_empty() {
            let mut v = OsString::new();
            for (i, p) in preload.iter().enumerate() {
                if i > 0 {
                    v.push(":");
                }
                v.push(p);
            }
            self.env.push(("LD_PRELOAD".into(), v));
        }
        Ok(())
    }

    /// What the setup had to say (a warning when the rclpy instrumentation cannot be written),
    /// once.
    pub fn take_messages(&mut self) -> Vec<Message> {
        std::mem::take(&mut self.said)
    }

    /// The environment of the traced processes.
    pub fn env(&self) -> &[(String, OsString)] {
        &self.env
    }

    /// The session directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The session name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The backend.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// With `record_clock`, starts the clock recorder: `program clock-recorder --domain DOMAIN`
    /// (the `rostrace` binary), traced in the session like the demo's processes, on DDS domain
    /// `domain`. It runs until [`Recording::finish`].
    pub fn start_clock(&mut self, program: &Path, domain: u16) -> Result<(), String> {
        if !self.record_clock {
            return Ok(());
        }
        let mut cmd = Command::new(program);
        cmd.arg("clock-recorder").stdin(std::process::Stdio::null()).env_remove(env::BACKEND);
        cmd.args(["--domain", &domain.to_string()]);
        // It links rostrace's tracer: no preload.
        for (k, v) in self.env.iter().filter(|(k, _)| k != "LD_PRELOAD" && k != "LD_LIBRARY_PATH") {
            cmd.env(k, v);
        }
        let child = cmd.spawn().map_err(|e| format!("--record-clock: cannot start the clock recorder: {e}"))?;
        self.clock = Some(child);
        Ok(())
    }

    /// Stops the clock recorder (SIGTERM; it writes its trace and exits), if it runs.
    fn stop_clock(&mut self, say: &mut Vec<Message>) {
        let Some(mut c) = self.clock.take() else { return };
        if matches!(c.try_wait(), Ok(None)) {
            // SAFETY: kill(2) with our own child's pid.
            unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGTERM) };
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while matches!(c.try_wait(), Ok(None)) && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            if matches!(c.try_wait(), Ok(None)) {
                say.push(Message::Error("the clock recorder did not stop 10 s after SIGTERM: killed".into()));
                let _ = c.kill();
            }
        }
        match c.wait() {
            Ok(s) if !s.success() => say.push(Message::Error(format!("the clock recorder ended with {s}"))),
            Err(e) => say.push(Message::Error(format!("the clock recorder: {e}"))),
            _ => {}
        }
    }

    /// Undoes [`Recording::begin`] when the traced processes could not start; returns what
    /// there is to say.
    pub fn abort(mut self) -> Vec<Message> {
        self.abort_in_place()
    }

    fn abort_in_place(&mut self) -> Vec<Message> {
        let mut say = Vec::new();
        self.stop_clock(&mut say);
        if let Some(r) = self.rotation.take() {
            r.stop();
        }
        let lock = lock_session(&self.dir);
        let _ = std::fs::remove_file(recorder_file(&self.dir));
        let others = other_recorders(&self.dir);
        drop(lock);
        if self.backend == Backend::Lttng {
            let _ = lttng(&["destroy", &self.name]);
        }
        if self.remove_on_abort {
            let _ = std::fs::remove_dir_all(&self.dir);
        } else if others == 0 {
            tracetools::tracer::release(&self.dir);
        }
        say
    }

    /// Keeps the session directory when nothing was recorded, as ros2_tracing keeps a session's
    /// (launch's `Trace` action): [`Recording::finish`] then only says so.
    pub fn keep_directory(&mut self) {
        self.remove_on_abort = false;
    }

    /// Stops the recording once the traced processes ended (LTTng: snapshot if asked, stop,
    /// destroy). Returns whether something was recorded, and what there is to say (an error
    /// once); when nothing was recorded, says why (no process of `command` emitted an event)
    /// and removes the session directory it created.
    pub fn finish(mut self, command: &str) -> (bool, Vec<Message>) {
        let mut say = Vec::new();
        self.stop_clock(&mut say);
        self.stop_rotation(&mut say);
        let others = self.stop_backend(&mut say);
        if rostrace_ctf::find_traces(&self.dir).is_err() {
            say.push(Message::Error(format!(
                "nothing was recorded: no process of `{command}` emitted a ROS 2 event \
                 (no ros_trace_* call into libtracetools.so). Trace a ROS 2 program: its rcl, rclcpp and \
                 rmw call libtracetools; a program of your own calls it through tracetools/tracetools.h{}",
                if self.filtered { "; or the node, topic and process filters excluded everything" } else { "" }
            )));
            if others > 0 {
                // The others may still record: the session stays.
            } else if self.remove_on_abort {
                let _ = std::fs::remove_dir_all(&self.dir);
            } else {
                let _ = std::fs::remove_file(self.dir.join(CONTROL_FILE));
            }
            return (false, say);
        }
        (true, say)
    }

    /// Stops the rotation, if the recording rotates: the chunk being written is the last; says
    /// how many chunks there were and where.
    fn stop_rotation(&mut self, say: &mut Vec<Message>) {
        let Some(r) = self.rotation.take() else { return };
        let done = r.stop();
        say.extend(done.errors.into_iter().map(Message::Error));
        let kept = crate::rotation::chunks(&self.dir).len();
        let deleted = match (done.deleted, self.keep) {
            (0, _) | (_, None) => String::new(),
            (n, Some(k)) => format!(", the {n} oldest deleted (--keep {k})"),
        };
        say.push(Message::Info(format!(
            "recorded in {} chunk{}{deleted}: {kept} in {} (each one, or several together, is a recording)",
            done.chunks,
            if done.chunks == 1 { "" } else { "s" },
            self.dir.display()
        )));
    }

    /// Stops LTTng, or marks this recorder gone and stops the session if it was the last;
    /// returns the other recorders still recording into it.
    fn stop_backend(&mut self, say: &mut Vec<Message>) -> usize {
        if self.backend == Backend::Lttng {
            if self.snapshot_mode {
                let _ = lttng(&["snapshot", "record", "-s", &self.name]);
            }
            let _ = lttng(&["stop", &self.name]);
            let _ = lttng(&["destroy", &self.name]);
            return 0;
        }
        // The last recorder of the session stops it; the others leave it recording.
        let lock = lock_session(&self.dir);
        let _ = std::fs::remove_file(recorder_file(&self.dir));
        let others = other_recorders(&self.dir);
        if others == 0 {
            if let Err(e) = write_control(&self.dir, "stopped") {
                say.push(Message::Error(e));
            }
            tracetools::tracer::release(&self.dir);
        }
        drop(lock);
        if others > 0 {
            say.push(Message::Info(format!(
                "session {} goes on recording: {others} other recorder{} still record{} into it, and the last one stops it",
                self.name,
                if others > 1 { "s" } else { "" },
                if others > 1 { "" } else { "s" }
            )));
        }
        others
    }
}
