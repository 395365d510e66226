//! Always-on recording: a recording written in chunks (`record --rotate SIZE|DURATION --keep N`).
//! The recorder names the chunk being written in the session's rotation file; the traced
//! processes follow it (each closes its trace and opens it again in the new chunk, with the
//! initialization events first), so that every chunk, and every run of chunks, is a complete
//! recording. The oldest chunks beyond `keep` are deleted.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracetools::tracer::ROTATE_FILE;

/// When a chunk ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rotate {
    /// When the chunk's files reach this many bytes.
    Size(u64),
    /// When the chunk has been written this long.
    Every(Duration),
}

/// Chunks' directory names start with this.
pub const CHUNK_PREFIX: &str = "chunk-";

/// How often the recorder looks at the chunk being written.
const CHECK_PERIOD: Duration = Duration::from_millis(250);

impl Rotate {
    /// Parses `--rotate`: a size (`500K`, `100M`, `2G`, bytes without a suffix) or a duration
    /// with its unit (`30s`, `10min`, `2h`, `1d`). `10m` is refused: megabytes or minutes.
    pub fn parse(v: &str) -> Result<Rotate, String> {
        let t = v.trim();
        let bad = |why: &str| Err(format!("invalid --rotate {v:?}: {why}"));
        let digits = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
        let (num, unit) = t.split_at(digits);
        let Ok(n) = num.parse::<f64>() else {
            return bad("give a size (100M, 2G) or a duration (30s, 10min, 1h)");
        };
        if !(n.is_finite() && n > 0.0) {
            return bad("give a size or duration above 0");
        }
        let seconds = match unit {
            "s" | "sec" => Some(1.0),
            "min" => Some(60.0),
            "h" => Some(3600.0),
            "d" => Some(86400.0),
            "m" => return bad("10M is a size (MiB), 10min a duration: say which"),
            _ => None,
        };
        if let Some(s) = seconds {
            let d = n * s;
            if d < 1.0 {
                return bad("a chunk lasts at least 1 s");
            }
            return Ok(Rotate::Every(Duration::from_secs_f64(d.min(365.0 * 86400.0))));
        }
        let mult: u64 = match unit {
            "" => 1,
            "k" | "K" => 1 << 10,
            "M" => 1 << 20,
            "g" | "G" => 1 << 30,
            _ => return bad("sizes end in K, M or G; durations in s, min, h or d"),
        };
        let bytes = (n * mult as f64) as u64;
        if bytes < 64 << 10 {
            return bad("a chunk holds at least 64K");
        }
        Ok(Rotate::Size(bytes))
    }
}

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
    fn sizes_and_durations_are_told_apart() {
        assert_eq!(Rotate::parse("100M"), Ok(Rotate::Size(100 << 20)));
        assert_eq!(Rotate::parse("2G"), Ok(Rotate::Size(2 << 30)));
        assert_eq!(Rotate::parse("512k"), Ok(Rotate::Size(512 << 10)));
        assert_eq!(Rotate::parse("30s"), Ok(Rotate::Every(Duration::from_secs(30))));
        assert_eq!(Rotate::parse("10min"), Ok(Rotate::Every(Duration::from_secs(600))));
        assert_eq!(Rotate::parse("1.5h"), Ok(Rotate::Every(Duration::from_secs(5400))));
        for bad in ["10m", "", "0s", "M", "5x", "1K", "0.5s", "-3s"] {
            assert!(Rotate::parse(bad).is_err(), "{bad:?} accepted");
        }
        assert!(Rotate::parse("10m").unwrap_err().contains("10min"));
    }

    #[test]
    fn chunk_names_sort_in_order_and_are_plain() {
        let a = chunk_name(9, 1_700_000_000_000_000_000);
        let b = chunk_name(10, 1_700_000_000_000_000_000);
        assert!(a < b, "{a} {b}");
        assert_eq!(a, "chunk-000009-20231114-221320");
    }
}
