//! rclpy's instrumentation for the traced commands: a `sitecustomize.py` and the module it loads
//! (`python/rostrace/rclpy.py`, shipped as `_rostrace_rclpy.py` so that it never hides an
//! installed `rostrace` package), embedded in the binary and written once per content into the
//! cache directory; its directory goes first on `PYTHONPATH`. It imports nothing but the standard
//! library: it works in any virtualenv, with or without the rostrace package.

use std::path::PathBuf;

const SITECUSTOMIZE: &str = include_str!("../python/sitecustomize.py");
const MODULE: &str = include_str!("../../../python/rostrace/rclpy.py");

/// Whether `ROSTRACE_RCLPY` leaves the instrumentation on (anything but `0`).
pub fn enabled() -> bool {
    std::env::var("ROSTRACE_RCLPY").map_or(true, |v| v.trim() != "0")
}

/// The directory holding the instrumentation, written if needed; `None` (the reason on stderr)
/// when it cannot be written.
fn directory() -> Option<PathBuf> {
    // FNV-1a of both files: a new version gets a directory of its own, never a half-written one.
    let mut h: u64 = 0xcbf29ce484222325;
    for b in SITECUSTOMIZE.bytes().chain([0]).chain(MODULE.bytes()) {
        h = (h ^ b as u64).wrapping_mul(0x100000001b3);
    }
    let dir = crate::embedded::cache_root().join(format!("rclpy-{h:016x}"));
    let r = std::fs::create_dir_all(&dir)
        .and_then(|_| crate::embedded::write_once(&dir.join("_rostrace_rclpy.py"), MODULE.as_bytes()))
        .and_then(|_| crate::embedded::write_once(&dir.join("sitecustomize.py"), SITECUSTOMIZE.as_bytes()));
    match r {
        Ok(()) => Some(dir),
        Err(e) => {
            eprintln!("rostrace: warning: rclpy callbacks will not be traced: cannot write {}: {e}", dir.display());
            None
        }
    }
}

/// The directory to put first on the traced processes' `PYTHONPATH` (written if needed), unless
/// `ROSTRACE_RCLPY=0`.
pub fn python_path() -> Option<PathBuf> {
    if !enabled() {
        return None;
    }
    directory()
}
