//! Running a command as the benchmarks do: its wall time and its own peak memory.

use std::process::{Command, Stdio};
use std::time::Instant;

/// Runs `cmd` (output discarded): wall time in s, peak RSS in MB of that process, and whether
/// it exited with 0.
#[allow(clippy::zombie_processes)] // waited for with wait4, for its own resource usage
pub fn measure(cmd: &mut Command) -> (f64, f64, bool) {
    let t = Instant::now();
    let child = cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn");
    let mut status = 0;
    // SAFETY: rusage is plain integers, for which all zeros is a value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 writes the status and usage it is given, for our own child.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
    let secs = t.elapsed().as_secs_f64();
    assert!(pid > 0, "wait4");
    (secs, ru.ru_maxrss as f64 / 1024.0, libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0)
}
