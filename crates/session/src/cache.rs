//! rostrace's cache directory, where files that a program carries inside itself (the rclpy
//! instrumentation, the `rostrace` binary's libtracetools.so) are written out for the traced
//! processes, once per content.
//!
//! What is written there is preloaded or imported into the traced programs, often as root: the
//! directory is private (ours, mode 0700, never a symbolic link, else refused) and a file is
//! used only once its bytes are checked to be the ones this program carries. Its path goes
//! into `LD_PRELOAD`, `LD_LIBRARY_PATH` and `PYTHONPATH`: it is absolute and holds none of
//! their separators, else refused.

use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The cache directory, created if needed: `$XDG_CACHE_HOME/rostrace`, else
/// `~/.cache/rostrace`, else (no `HOME`: a system service, a container) `$XDG_RUNTIME_DIR/rostrace`,
/// else `rostrace-UID` in the temporary directory. Refused, with the reason, when its path is
/// relative or holds a separator of the variables it goes into, or when the directory is not
/// this user's own (another user made it first, or it is a symbolic link).
pub fn cache_dir() -> Result<PathBuf, String> {
    let env = |k: &'static str| std::env::var_os(k).filter(|v| !v.is_empty()).map(|v| (k, PathBuf::from(v)));
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let (dir, from) = if let Some((k, d)) = env("XDG_CACHE_HOME") {
        (d.join("rostrace"), k)
    } else if let Some((k, h)) = env("HOME") {
        (h.join(".cache/rostrace"), k)
    } else if let Some((k, r)) = env("XDG_RUNTIME_DIR") {
        (r.join("rostrace"), k)
    } else {
        (std::env::temp_dir().join(format!("rostrace-{uid}")), "TMPDIR")
    };
    usable_path(&dir).map_err(|why| format!("the cache directory {} (from {from}) {why}", dir.display()))?;
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    private_dir(&dir, uid)?;
    Ok(dir)
}

/// Why `p` cannot be put into `LD_PRELOAD`, `LD_LIBRARY_PATH` or `PYTHONPATH` as one absolute
/// entry, if it cannot: relative (it would be looked up from the traced program's directory),
/// or holding `:`, `;` or white space (they split those lists).
pub fn usable_path(p: &Path) -> Result<(), String> {
    if !p.is_absolute() {
        return Err("is not an absolute path".into());
    }
    let s = p.as_os_str().as_encoded_bytes();
    match s.iter().find(|&&b| b == b':' || b == b';' || b.is_ascii_whitespace()) {
        Some(&b) => Err(format!(
            "holds {:?}, which splits LD_PRELOAD, LD_LIBRARY_PATH and PYTHONPATH: set XDG_CACHE_HOME to a path without it",
            b as char
        )),
        None => Ok(()),
    }
}

/// Makes `dir` (mode 0700) unless it is there, then checks that it is a directory of `uid`'s
/// (not a link to one), which nobody else can write, and closes it to group and others.
fn private_dir(dir: &Path, uid: u32) -> Result<(), String> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot create {}: {e}", dir.display())),
    }
    let m = std::fs::symlink_metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let refuse = |why: String| {
        Err(format!(
            "refusing the cache directory {}: {why}; it could hold code planted by another user, run by the traced \
             programs (remove it, or set XDG_CACHE_HOME to a directory of your own)",
            dir.display()
        ))
    };
    if m.file_type().is_symlink() {
        return refuse("it is a symbolic link".into());
    }
    if !m.is_dir() {
        return refuse("it is not a directory".into());
    }
    if m.uid() != uid {
        return refuse(format!("it belongs to uid {}, not to this user (uid {uid})", m.uid()));
    }
    if m.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("cannot make {} private (mode 0700): {e}", dir.display()))?;
    }
    Ok(())
}

/// Makes `dir` inside the cache directory, private like it.
pub fn private_subdir(dir: &Path) -> Result<(), String> {
    // SAFETY: geteuid has no preconditions.
    private_dir(dir, unsafe { libc::geteuid() })
}

/// Writes `data` to `path` unless a file of this user's holding exactly these bytes is there,
/// through a temporary file renamed into place, so that a process reading it never sees half of
/// it, and a file of other bytes (a planted or damaged copy, a link) is replaced, never used.
pub fn write_once(path: &Path, data: &[u8]) -> std::io::Result<()> {
    if holds(path, data) {
        return Ok(());
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| std::io::Write::write_all(&mut f, data))
        .and_then(|()| std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o644)))
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Whether `path` is a regular file (not a link) of this user's, writable by nobody else,
/// holding exactly `data`.
fn holds(path: &Path, data: &[u8]) -> bool {
    let Ok(m) = std::fs::symlink_metadata(path) else { return false };
    // SAFETY: geteuid has no preconditions.
    let ours = m.uid() == unsafe { libc::geteuid() } && m.mode() & 0o022 == 0;
    if !m.is_file() || !ours || m.len() != data.len() as u64 {
        return false;
    }
    let Ok(mut f) = std::fs::File::open(path) else { return false };
    let mut buf = vec![0u8; 1 << 16];
    let mut at = 0;
    loop {
        match f.read(&mut buf) {
            Ok(0) => return at == data.len(),
            Ok(n) if data.get(at..at + n) == Some(&buf[..n]) => at += n,
            Ok(_) => return false,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_split_or_move_are_refused() {
        assert!(usable_path(Path::new("/home/u/.cache/rostrace")).is_ok());
        assert!(usable_path(Path::new("cache/rostrace")).unwrap_err().contains("absolute"));
        for p in ["/a:b/rostrace", "/a;b/rostrace", "/a b/rostrace", "/a\tb"] {
            assert!(usable_path(Path::new(p)).unwrap_err().contains("splits"), "{p}");
        }
    }

    #[test]
    fn a_file_of_other_bytes_is_replaced_and_a_link_is_never_followed() {
        let d = std::env::temp_dir().join(format!("rostrace-cache-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        private_subdir(&d).unwrap();
        let f = d.join("lib.so");
        write_once(&f, b"ours").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"ours");
        // Same length, other bytes: replaced.
        std::fs::write(&f, b"evil").unwrap();
        write_once(&f, b"ours").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"ours");
        // A link to a file holding the right bytes is not ours to trust: replaced by a file.
        let other = d.join("other");
        std::fs::write(&other, b"ours").unwrap();
        std::fs::remove_file(&f).unwrap();
        std::os::unix::fs::symlink(&other, &f).unwrap();
        write_once(&f, b"ours").unwrap();
        assert!(std::fs::symlink_metadata(&f).unwrap().is_file());
        // A directory made open to others is closed again; a link in its place is refused.
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
        private_subdir(&d).unwrap();
        assert_eq!(std::fs::metadata(&d).unwrap().mode() & 0o777, 0o700);
        let link = d.with_extension("link");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&d, &link).unwrap();
        assert!(private_subdir(&link).unwrap_err().contains("symbolic link"));
        std::fs::remove_file(&link).unwrap();
        std::fs::remove_dir_all(&d).unwrap();
    }
}
