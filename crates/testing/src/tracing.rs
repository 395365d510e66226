//! A recording of the processes a test starts ([`Tracing`]) and its analysis ([`Traced`]).

use crate::limits::Limits;
use rostrace_analysis::check::{self, Bound, Expectation, Expectations, Metric, Outcome, Status, Subject};
use rostrace_analysis::Analysis;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// How long a process still running at [`Tracing::finish`] has, after SIGINT, to end (and write
/// its trace) before it is killed.
const GRACE: Duration = Duration::from_secs(10);

/// A recording in progress: processes started with [`Tracing::spawn`] or [`Tracing::run`] (or
/// with [`Tracing::env`]) trace into its session directory with the embedded tracer.
pub struct Tracing {
    dir: PathBuf,
    env: Vec<(String, OsString)>,
    children: Vec<Child>,
}

impl Tracing {
    /// A recording into the session directory `dir` (made), with rostrace's default options
    /// (the ROS 2 distribution from `ROS_DISTRO`, rclpy instrumented) and the libtracetools.so
    /// that `rostrace_session::find_library` finds (`ROSTRACE_LIB`, else beside the test).
    pub fn new(dir: impl Into<PathBuf>) -> Result<Tracing, String> {
        let lib = rostrace_session::find_library()
            .map_err(|e| format!("{e} (`rostrace lib` prints one to set ROSTRACE_LIB to)"))?;
        Tracing::with_options(dir, &rostrace_session::Options::default(), &lib)
    }

    /// A recording into `dir` with these options (distribution, events, rclpy) and library.
    pub fn with_options(
        dir: impl Into<PathBuf>,
        options: &rostrace_session::Options,
        lib: &Path,
    ) -> Result<Tracing, String> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let env = rostrace_session::traced_env(&dir, options, lib)?;
        Ok(Tracing { dir, env, children: Vec::new() })
    }

    /// The session directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The variables that make a process trace into this recording.
    pub fn env(&self) -> &[(String, OsString)] {
        &self.env
    }

    /// Starts `cmd` traced; a process still running at [`Tracing::finish`] is interrupted, then
    /// waited for.
    pub fn spawn(&mut self, cmd: &mut Command) -> std::io::Result<&mut Child> {
        let child = cmd.envs(self.env.iter().map(|(k, v)| (k, v))).spawn()?;
        self.children.push(child);
        Ok(self.children.last_mut().expect("just pushed"))
    }

    /// Runs `cmd` traced to its end.
    pub fn run(&mut self, cmd: &mut Command) -> std::io::Result<ExitStatus> {
        self.spawn(cmd)?.wait()
    }

    /// Ends the processes still running (SIGINT, SIGKILL after `grace`).
    fn end_processes(&mut self, grace: Duration) {
        for c in &mut self.children {
            if !matches!(c.try_wait(), Ok(None)) {
                continue;
            }
            // SAFETY: a signal to a child of this process, not yet waited for.
            unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGINT) };
            let start = Instant::now();
            while matches!(c.try_wait(), Ok(None)) && start.elapsed() < grace {
                std::thread::sleep(Duration::from_millis(20));
            }
            if matches!(c.try_wait(), Ok(None)) {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }

    /// Ends the processes still running, then reads and analyzes the recording.
    pub fn finish(mut self) -> Result<Traced, String> {
        self.end_processes(GRACE);
        let (set, errors) = rostrace_ctf::TraceSet::open(std::slice::from_ref(&self.dir));
        if set.traces.is_empty() {
            return Err(format!("{}: nothing was recorded (no traced process ran)", self.dir.display()));
        }
        if let Some(e) = errors.first() {
            return Err(e.to_string());
        }
        let analysis = rostrace_analysis::analyze_traces(&set, |_, _| {});
        Ok(Traced { dir: std::mem::take(&mut self.dir), analysis })
    }
}

impl Drop for Tracing {
    /// A test that fails before [`Tracing::finish`] leaves no process behind.
    fn drop(&mut self) {
        self.end_processes(Duration::ZERO);
    }
}

/// A finished recording and its analysis (as `rostrace analyze` makes it), with assertions.
pub struct Traced {
    /// The session directory.
    pub dir: PathBuf,
    /// The analysis: its report holds every callback, topic, process and thread.
    pub analysis: Analysis,
}

impl Traced {
    /// The outcomes of `limits` (as `rostrace check` gives them).
    pub fn check(&self, limits: &dyn Limits) -> Vec<Outcome> {
        self.evaluate(limits.expectations())
    }

    fn evaluate(&self, items: Vec<Expectation>) -> Vec<Outcome> {
        check::evaluate(&self.analysis, &Expectations { items }, 1)
    }

    /// Panics, saying the value measured and the limit of each, unless every limit passes.
    fn assert(&self, outcomes: Vec<Outcome>) -> Vec<Outcome> {
        let failed: Vec<String> = outcomes
            .iter()
            .filter(|o| o.status != Status::Pass)
            .map(|o| format!("  {}: {} {}", o.subject, o.metric, o.verdict()))
            .collect();
        if !failed.is_empty() {
            panic!("in the trace {}:\n{}", self.dir.display(), failed.join("\n"));
        }
        outcomes
    }

    /// Every limit of a [`crate::Callback`] passes on each matching callback (at least one).
    pub fn assert_callback(&self, limits: crate::Callback) -> Vec<Outcome> {
        self.assert(self.check(&limits))
    }

    /// Every limit of a [`crate::Topic`] passes.
    pub fn assert_topic(&self, limits: crate::Topic) -> Vec<Outcome> {
        self.assert(self.check(&limits))
    }

    /// Every limit of a [`crate::Path`] passes, and a message went the whole way.
    pub fn assert_path(&self, limits: crate::Path) -> Vec<Outcome> {
        self.assert(self.check(&limits))
    }

    /// The tracer discarded no event.
    pub fn assert_no_drops(&self) {
        let bound = Bound { low: None, high: Some(0.0) };
        let e = Expectation { subject: Subject::Trace, metric: Metric::DiscardedEvents, bound, line: 0 };
        self.assert(self.evaluate(vec![e]));
    }
}
