//! Test support shared by the workspace's integration tests (a dev-dependency only).
//!
//! - [`TempDir`]: a fresh directory under the system's temporary directory, removed when the
//!   guard drops, also when the test fails (a panic unwinds through the guard).
//! - [`lttng_lock`]: one LTTng test at a time, across threads and test processes. An LTTng
//!   session records every process of the user that registers the tracepoints, so two tests
//!   with LTTng sessions running at once would record each other's programs.
//! - [`require`]: skip a test whose external tool is missing (saying so on stderr), or fail
//!   when CI demands every tool (`ROSTRACE_REQUIRE_TOOLS=1`).
//! - [`test_data`], [`needs_test_data!`], [`test_data_path`]: the shared test data
//!   (`$ROSTRACE_TEST_DATA`, else `../shared` beside the repository), and the skip of a test that
//!   reads it when it is missing.
//! - [`needs`]: `#[rostrace_testkit::needs(lttng, test_data)]` above `#[test]` compiles the test
//!   as ignored, with the reason, on a machine without them (probed once per build), so that
//!   cargo's summary counts it as not run; the checks above stay in the test, for what it needs
//!   in part only and for `ROSTRACE_REQUIRE_TOOLS=1`, under which nothing is ignored.

#![deny(missing_docs)]

pub use rostrace_testkit_macros::{needs, probed};

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// A temporary directory, removed on drop.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// `$TMPDIR/rostrace-NAME-PID-N`, new and empty.
    pub fn new(name: &str) -> TempDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("rostrace-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        TempDir(p)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// A path inside the directory.
    pub fn join(&self, p: impl AsRef<Path>) -> PathBuf {
        self.0.join(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Copies the directory `src` (recursively) to `dst`, every file writable, to be damaged or
/// added to (the shared traces are read-only).
pub fn copy_writable(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap_or_else(|e| panic!("{}: {e}", dst.display()));
    for e in std::fs::read_dir(src).unwrap_or_else(|e| panic!("{}: {e}", src.display())).flatten() {
        let (from, to) = (e.path(), dst.join(e.file_name()));
        if from.is_dir() {
            copy_writable(&from, &to);
        } else {
            std::fs::copy(&from, &to).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
            let mut perm = std::fs::metadata(&to).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perm.set_readonly(false);
            std::fs::set_permissions(&to, perm).unwrap();
        }
    }
}

/// A fixed pseudo-random sequence (xorshift64), so that a failing round can be replayed.
pub struct XorShift(pub u64);

impl XorShift {
    /// The next number (the seed must not be 0).
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for TempDir {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

/// Held while a test uses LTTng; released on drop.
pub struct LttngLock {
    _file: File,
    _thread: std::sync::MutexGuard<'static, ()>,
}

/// Waits until no other test (thread or process) uses LTTng, then holds the lock until the
/// guard drops. Every test that starts an LTTng session or runs a program with the LTTng backend
/// takes it.
pub fn lttng_lock() -> LttngLock {
    // An OS file lock serializes test processes; the mutex serializes threads of this one
    // (file locks of one process on separately opened files are independent on Linux, but the
    // mutex makes that explicit and independent of the platform).
    static THREADS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let guard = THREADS.lock().unwrap_or_else(|e| e.into_inner());
    let path = std::env::temp_dir().join("rostrace-lttng-tests.lock");
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    file.lock().unwrap_or_else(|e| panic!("lock {}: {e}", path.display()));
    LttngLock { _file: file, _thread: guard }
}

/// The variable naming the shared test data's directory.
pub const TEST_DATA_VAR: &str = "ROSTRACE_TEST_DATA";

/// The shared test data (real traces, other tools' reference outputs, upstream sources):
/// `$ROSTRACE_TEST_DATA`, else `../shared` beside the repository.
pub fn test_data() -> PathBuf {
    match std::env::var_os(TEST_DATA_VAR).filter(|v| !v.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    }
}

/// True when the shared test data is there; otherwise skips (one line on stderr naming the
/// variable) or, under `ROSTRACE_REQUIRE_TOOLS=1`, fails. See [`needs_test_data!`].
pub fn have_test_data() -> bool {
    let d = test_data();
    require(
        d.join("traces").is_dir(),
        &format!("the shared test data ({}; set {TEST_DATA_VAR} to its directory)", d.display()),
    )
}

/// `rel` in the shared test data, when it is there; otherwise `None` after a skip line naming
/// the variable, or a failure under `ROSTRACE_REQUIRE_TOOLS=1`.
pub fn test_data_path(rel: impl AsRef<Path>) -> Option<PathBuf> {
    let p = test_data().join(rel);
    require(p.exists(), &format!("{} (the shared test data; set {TEST_DATA_VAR} to its directory)", p.display()))
        .then_some(p)
}

/// Returns from the test (a skip, said on stderr) when the shared test data is missing; fails
/// instead under `ROSTRACE_REQUIRE_TOOLS=1`.
#[macro_export]
macro_rules! needs_test_data {
    () => {
        if !$crate::have_test_data() {
            return;
        }
    };
}

/// Whether CI demands the external tools (LTTng, babeltrace2) instead of skipping.
pub fn tools_required() -> bool {
    std::env::var("ROSTRACE_REQUIRE_TOOLS").is_ok_and(|v| v == "1")
}

/// True when `what` is usable; otherwise skips (returns false, with a line on stderr) or, in CI,
/// fails.
pub fn require(ok: bool, what: &str) -> bool {
    if ok {
        return true;
    }
    if tools_required() {
        panic!("{what} is required (ROSTRACE_REQUIRE_TOOLS=1) but not available");
    }
    skip(&format!("{what} not available"));
    false
}

/// Says on the process's stderr that a test is skipped (not through the test harness's
/// capture, which hides what a passing test prints), so that a skip is never a silent "ok".
pub fn skip(why: &str) {
    use std::io::Write;
    let name = std::thread::current().name().unwrap_or("test").to_string();
    let _ = writeln!(std::io::stderr().lock(), "{name}: skipping: {why}");
}

/// Whether `cmd arg` runs and succeeds.
pub fn have(cmd: &str, arg: &str) -> bool {
    Command::new(cmd).arg(arg).output().is_ok_and(|o| o.status.success())
}

/// Whether LTTng's tools run.
pub fn have_lttng() -> bool {
    have("lttng", "--version") && have("lttng-sessiond", "--version")
}

/// Starts a session daemon if none is alive.
pub fn ensure_sessiond() {
    let alive = Command::new("pgrep").args(["-x", "lttng-sessiond"]).output().is_ok_and(|o| o.status.success());
    if !alive {
        let st = Command::new("lttng-sessiond").arg("--daemonize").status().expect("lttng-sessiond");
        assert!(st.success(), "cannot start lttng-sessiond");
    }
}

/// Runs `lttng ARGS` (at most 120 s); panics with its output when it fails.
pub fn lttng(args: &[&str]) -> std::process::Output {
    let out = Command::new("timeout").arg("120").arg("lttng").args(args).output().expect("lttng");
    assert!(
        out.status.success(),
        "lttng {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Destroys the LTTng session of that name on drop (a failing test leaves no session behind
/// that would record the next test's programs).
pub struct LttngSession(pub String);

impl LttngSession {
    /// Starts a session daemon if needed, then the session `name` writing to `out`: every
    /// `ros2:*` userspace event with the vpid, vtid and procname context, as `ros2 trace` records.
    pub fn start(name: &str, out: &std::path::Path) -> LttngSession {
        ensure_sessiond();
        let s = LttngSession(name.to_string());
        lttng(&["create", name, &format!("--output={}", out.display())]);
        lttng(&["enable-event", "-u", "ros2:*", "-s", name]);
        lttng(&["add-context", "-u", "-s", name, "-t", "vpid", "-t", "vtid", "-t", "procname"]);
        lttng(&["start", name]);
        s
    }

    /// Stops the session (its trace is complete) and destroys it.
    pub fn stop(self) {
        lttng(&["stop", &self.0]);
    }
}

impl Drop for LttngSession {
    fn drop(&mut self) {
        let _ = Command::new("lttng").args(["destroy", &self.0]).output();
    }
}
