//! Helpers shared by the CLI's integration tests.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// The shared test material (`../shared` beside the repository, or `$ROSTRACE_SHARED`).
pub fn shared() -> PathBuf {
    if let Ok(p) = std::env::var("ROSTRACE_SHARED") {
        return PathBuf::from(p);
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    p.canonicalize().unwrap_or(p)
}

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Whether CI demands the external tools (LTTng, babeltrace2) instead of skipping.
pub fn tools_required() -> bool {
    std::env::var("ROSTRACE_REQUIRE_TOOLS").is_ok_and(|v| v == "1")
}

/// True when `what` is usable; otherwise skips (returns false) or, in CI, fails.
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

/// Says on the real stderr (not the test harness's capture, which a passing test hides) that
/// a test is skipped, so that a skip is never a silent "ok".
pub fn skip(why: &str) {
    use std::io::Write;
    let name = std::thread::current().name().unwrap_or("test").to_string();
    let _ = writeln!(std::io::stderr().lock(), "{name}: skipping: {why}");
}

/// Whether babeltrace2's Python bindings can be imported.
pub fn have_bt2_python() -> bool {
    Command::new("/usr/bin/python3").args(["-c", "import bt2"]).output().is_ok_and(|o| o.status.success())
}

/// Whether the babeltrace2 command runs.
pub fn have_babeltrace2() -> bool {
    Command::new("babeltrace2").arg("--version").output().is_ok_and(|o| o.status.success())
}

/// The rostrace binary under test.
pub fn rostrace() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rostrace"))
}

/// Whether the lttng command runs.
pub fn have_lttng() -> bool {
    Command::new("lttng").arg("--version").output().is_ok_and(|o| o.status.success())
}
