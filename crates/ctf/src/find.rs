//! Finding the CTF traces at or below a path: every directory holding a `metadata` file that
//! is CTF metadata, and an error for each file of that name that is not.

use crate::error::{Error, Result};
use crate::metadata::not_metadata;
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// Finds every directory holding a CTF `metadata` file at or below `path`, sorted. When there is
/// none, the error says why: a `metadata` file that is not CTF metadata, or no `metadata` file.
pub fn find_traces(path: &Path) -> Result<Vec<PathBuf>> {
    let (dirs, mut errors) = find_traces_all(path);
    if dirs.is_empty() {
        // find_traces_all gives at least one error when it finds no trace.
        return Err(errors.swap_remove(0));
    }
    Ok(dirs)
}

/// Finds every directory holding a CTF `metadata` file at or below `path`, sorted, and an error
/// for each file named `metadata` that is not CTF metadata (or for `path` itself, when it cannot
/// be read or holds no trace at all).
pub fn find_traces_all(path: &Path) -> (Vec<PathBuf>, Vec<Error>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(source) => return (out, vec![Error::Io { path: path.to_path_buf(), source }]),
    };
    if meta.is_file() {
        if path.file_name().is_some_and(|n| n == "metadata") {
            match check_metadata_file(path) {
                Ok(()) => out.push(path.parent().unwrap_or(Path::new(".")).to_path_buf()),
                Err(e) => errors.push(e),
            }
        }
    } else {
        walk(path, &mut out, &mut errors, 0);
    }
    out.sort();
    out.dedup();
    if out.is_empty() && errors.is_empty() {
        errors.push(Error::NoTrace { path: path.to_path_buf() });
    }
    (out, errors)
}

/// Whether the file at `path` starts like CTF metadata; if not, an error naming it (at byte 0:
/// what the file starts with).
fn check_metadata_file(path: &Path) -> Result<()> {
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    let mut head = Vec::with_capacity(64);
    std::fs::File::open(path).and_then(|f| f.take(64).read_to_end(&mut head)).map_err(io)?;
    match not_metadata(&head) {
        None => Ok(()),
        Some(message) => Err(Error::NotMetadata { path: path.to_path_buf(), offset: 0, message }),
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>, errors: &mut Vec<Error>, depth: usize) {
    if depth > 32 {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() || (ft.is_symlink() && p.is_dir()) {
            walk(&p, out, errors, depth + 1);
        } else if e.file_name() == "metadata" {
            match check_metadata_file(&p) {
                Ok(()) => out.push(dir.to_path_buf()),
                Err(err) => errors.push(err),
            }
        }
    }
}
