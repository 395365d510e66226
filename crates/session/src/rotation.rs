//! Always-on recording: a recording written in chunks (`record --rotate SIZE|DURATION --keep N`).
//! The recorder names the chunk being written in the session's rotation file; the traced
//! processes follow it (each closes its trace and opens it again in the new chunk, with the
//! initialization events first), so that every chunk, and every run of chunks, is a complete
//! recording. The oldest chunks beyond `keep` are deleted.

use crate::options::Rotate;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracetools::tracer::ROTATE_FILE;

/// Chunks' directory names start with this.
pub const CHUNK_PREFIX: &str = "chunk-";

/// How often the recorder looks at the chunk being written.
const CHECK_PERIOD: Duration = Duration::from_millis(250);

/// The name of chunk `n`, begun at `ns` (Unix time): `chunk-NNNNNN-YYYYMMDD-HHMMSS`, which sorts
/// in the order the chunks were written.
fn chunk_name(n: u64, ns: i64) -> String {
    let t = rostrace_ctf::time::utc(ns);
    format!("{CHUNK_PREFIX}{n:06}-{:04}{:02}{:02}-{:02}{:02}{:02}", t.year, t.month, t.day, t.hour, t.minute, t.second)
}

fn now_ns() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as i64).unwrap_or(0)
}

/// The chunks of the session in `dir`, oldest first.
pub fn chunks(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(CHUNK_PREFIX))
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Bytes of the files at or below `dir` (symbolic links not followed).
fn size_of(dir: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir) else { return 0 };
    rd.flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => size_of(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map(|m| m.len()).unwrap_or(0),
            _ => 0,
        })
        .sum()
}

/// What a rotation did, when it ends.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Rotated {
    /// Chunks begun.
    pub chunks: u64,
    /// Chunks deleted (`keep`).
    pub deleted: u64,
    /// Errors met (a chunk that could not be deleted, the rotation file that could not be written).
    pub errors: Vec<String>,
}

/// The rotation of a recording: a thread that begins a new chunk when the one being written
/// is full or old enough, and deletes the oldest.
pub(crate) struct Rotation {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<Rotated>>,
}

impl Rotation {
    /// Names the first chunk in the session in `dir` (before any traced process starts, so that
    /// all write into it).
    pub(crate) fn first(dir: &Path) -> Result<(), String> {
        crate::control::write_session_file(dir, ROTATE_FILE, &chunk_name(0, now_ns())).map(|_| ())
    }

    /// Starts rotating the session in `dir`, whose first chunk is named.
    pub(crate) fn start(dir: &Path, rotate: Rotate, keep: Option<usize>) -> Result<Rotation, String> {
        let stop = Arc::new(AtomicBool::new(false));
        let (dir, flag) = (dir.to_path_buf(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("rostrace-rotation".into())
            .spawn(move || rotate_loop(&dir, rotate, keep, &flag))
            .map_err(|e| format!("--rotate: cannot start its thread: {e}"))?;
        Ok(Rotation { stop, thread: Some(thread) })
    }

    /// Stops rotating; the chunk being written is the last.
    pub(crate) fn stop(mut self) -> Rotated {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().and_then(|t| t.join().ok()).unwrap_or_default()
    }
}

fn rotate_loop(dir: &Path, rotate: Rotate, keep: Option<usize>, stop: &AtomicBool) -> Rotated {
    let mut done = Rotated { chunks: 1, ..Default::default() };
    let mut begun = Instant::now();
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(CHECK_PERIOD);
        let Some(current) = tracetools::tracer::current_chunk(dir) else { continue };
        let full = match rotate {
            Rotate::Size(bytes) => size_of(&dir.join(&current)) >= bytes,
            Rotate::Every(d) => begun.elapsed() >= d,
        };
        if !full || stop.load(Ordering::Relaxed) {
            continue;
        }
        n += 1;
        let next = chunk_name(n, now_ns());
        if let Err(e) = crate::control::write_session_file(dir, ROTATE_FILE, &next) {
            done.errors.push(e);
            continue;
        }
        begun = Instant::now();
        done.chunks += 1;
        if let Some(keep) = keep {
            // The new chunk is one of those kept (its processes may not have made it yet).
            let done_ones: Vec<PathBuf> = chunks(dir).into_iter().filter(|c| !c.ends_with(&next)).collect();
            for old in done_ones.iter().take((done_ones.len() + 1).saturating_sub(keep)) {
                match std::fs::remove_dir_all(old) {
                    Ok(()) => done.deleted += 1,
                    Err(e) => done.errors.push(format!("cannot delete the chunk {}: {e}", old.display())),
                }
            }
        }
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_names_sort_in_order_and_are_plain() {
        let a = chunk_name(9, 1_700_000_000_000_000_000);
        let b = chunk_name(10, 1_700_000_000_000_000_000);
        assert!(a < b, "{a} {b}");
        assert_eq!(a, "chunk-000009-20231114-221320");
    }
}
