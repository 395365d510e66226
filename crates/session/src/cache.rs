//! rostrace's cache directory, where files that a program carries inside itself (the rclpy
//! instrumentation, the `rostrace` binary's libtracetools.so) are written out for the traced
//! processes, once per content.

use std::path::{Path, PathBuf};

/// `$XDG_CACHE_HOME/rostrace`, `~/.cache/rostrace`, or `$TMPDIR/rostrace-UID`.
pub fn cache_dir() -> PathBuf {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(d) = env("XDG_CACHE_HOME") {
        return d.join("rostrace");
    }
    if let Some(h) = env("HOME") {
        return h.join(".cache/rostrace");
    }
    // SAFETY: getuid has no preconditions.
    std::env::temp_dir().join(format!("rostrace-{}", unsafe { libc::getuid() }))
}

/// Writes `data` to `path` unless a file of its length is there, through a temporary file
/// renamed into place, so that a process reading it never sees half of it.
pub fn write_once(path: &Path, data: &[u8]) -> std::io::Result<()> {
    if std::fs::metadata(path).is_ok_and(|m| m.len() == data.len() as u64) {
        return Ok(());
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, data)?;
    std::fs::rename(&tmp, path)
}
