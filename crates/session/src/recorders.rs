//! Each recorder of an embedded session (`record`, `demo`, a Python `record`; several with
//! `append`) marks itself with a file `.rostrace-recorder-<pid>-<start time>` (empty: it takes
//! no room on a full disk); the session stops when the last live one ends.

use std::path::{Path, PathBuf};

const RECORDER_FILE: &str = ".rostrace-recorder";

/// When process `pid` started (clock ticks since boot), to tell it from a later process of the
/// same number.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name, which may hold spaces and parentheses: field 22 is the 20th.
    stat[stat.rfind(')')? + 1..].split_whitespace().nth(19)?.parse().ok()
}

/// Holds an exclusive lock on the session directory while its recorders come and go (the lock
/// goes with the file).
pub(crate) fn lock_session(dir: &Path) -> Option<std::fs::File> {
    use std::os::fd::AsRawFd as _;
    let f = std::fs::File::open(dir).ok()?;
    // SAFETY: flock on a descriptor we own.
    while unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return None;
        }
    }
    Some(f)
}

/// This process's recorder file in `dir`.
pub(crate) fn recorder_file(dir: &Path) -> PathBuf {
    let pid = std::process::id();
    dir.join(format!("{RECORDER_FILE}-{pid}-{}", start_time(pid).unwrap_or(0)))
}

/// The other recorders of the session that still run (the files of those that ended without
/// saying so, killed, are removed).
pub(crate) fn other_recorders(dir: &Path) -> usize {
    let mine = recorder_file(dir);
    let Ok(rd) = std::fs::read_dir(dir) else { return 0 };
    let mut n = 0;
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(RECORDER_FILE).and_then(|r| r.strip_prefix('-')) else { continue };
        if e.path() == mine {
            continue;
        }
        let alive = rest
            .split_once('-')
            .and_then(|(pid, start)| Some((pid.parse::<u32>().ok()?, start.parse::<u64>().ok()?)))
            .is_some_and(|(pid, start)| start_time(pid) == Some(start));
        if alive {
            n += 1;
        } else {
            let _ = std::fs::remove_file(e.path());
        }
    }
    n
}
