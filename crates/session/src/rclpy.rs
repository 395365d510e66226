//! rclpy's instrumentation for the traced commands: a `sitecustomize.py` and the module it loads
//! (`python/rostrace/rclpy.py`, shipped as `_rostrace_rclpy.py` so that it never hides an
//! installed `rostrace` package), embedded in the binary and written once per content into the
//! cache directory; its directory goes first on `PYTHONPATH`. It imports nothing but the standard
//! library: it works in any virtualenv, with or without the rostrace package.

use std::path::PathBuf;

const SITECUSTOMIZE: &str = include_str!("../python/sitecustomize.py");
const MODULE: &str = include_str!("../../../python/rostrace/rclpy.py");

/// `0` turns the instrumentation off, for every recording of this process and in the traced
/// Pythons.
pub const RCLPY_VAR: &str = "ROSTRACE_RCLPY";

/// Whether [`RCLPY_VAR`] leaves the instrumentation on (anything but `0`).
pub fn enabled() -> bool {
    std::env::var(RCLPY_VAR).map_or(true, |v| v.trim() != "0")
}

/// The directory holding the instrumentation, written if needed; why not when it cannot be
/// written.
pub(crate) fn directory() -> Result<PathBuf, String> {
    // FNV-1a of both files: a new version gets a directory of its own, never a half-written one.
    let mut h: u64 = 0xcbf29ce484222325;
    for b in SITECUSTOMIZE.bytes().chain([0]).chain(MODULE.bytes()) {
        h = (h ^ b as u64).wrapping_mul(0x100000001b3);
    }
    let dir = crate::cache::cache_dir()?.join(format!("rclpy-{h:016x}"));
    crate::cache::private_subdir(&dir)?;
    crate::cache::write_once(&dir.join("_rostrace_rclpy.py"), MODULE.as_bytes())
        .and_then(|_| crate::cache::write_once(&dir.join("sitecustomize.py"), SITECUSTOMIZE.as_bytes()))
        .map_err(|e| format!("cannot write {}: {e}", dir.display()))?;
    Ok(dir)
}
