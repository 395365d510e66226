//! Helpers shared by the CLI's integration tests.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
#[allow(unused_imports)]
pub use testkit::{have_lttng, lttng_lock, require, skip, tools_required, LttngSession, TempDir};

/// The shared test material (`../shared` beside the repository, or `$ROSTRACE_SHARED`).
pub fn shared() -> PathBuf {
    if let Ok(p) = std::env::var("ROSTRACE_SHARED") {
        return PathBuf::from(p);
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    p.canonicalize().unwrap_or(p)
}

/// Where tools/ros2-venvs.sh and tools/data-venv.sh put their virtualenvs.
pub fn venv_root() -> PathBuf {
    std::env::var_os("ROSTRACE_VENV_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/rostrace-ci-cache/venvs"))
}

/// The repository root.
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

/// The rostrace binary under test.
pub fn rostrace() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rostrace"))
}
