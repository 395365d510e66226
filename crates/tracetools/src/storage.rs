//! The embedded tracer's files on a disk that can fill: stream files whose packets, and the
//! packet that would report their loss, are allocated before they are written; the file of each
//! process's trace that counts the events no stream could report; and the room a session keeps
//! for the processes that start once its disk is full.
//!
//! The accounting rests on one rule: a trace only ever needs room it already has to report a
//! loss. A stream file is created with room for its first packet's report, and each packet is
//! written only once room for it and for the report after it is allocated; a process's loss
//! file has its room from the start; and a process that finds the disk full takes room from the
//! session's reserve, made while the disk had some.

use rostrace_ctf_write::{PacketOut, StreamWriter};
use std::fs::File;
use std::io::Write as _;
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};

/// Room kept allocated after a stream's last whole packet: where the packet reporting a loss
/// goes (an empty packet takes 88 bytes).
const ROOM: u64 = 4096;

/// Allocates bytes `at..at + len` of `file` without changing its size. Where the file system
/// cannot (no `fallocate`), nothing is allocated ahead and this succeeds.
fn allocate(file: &File, at: u64, len: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    loop {
        // SAFETY: fallocate on our own open file; KEEP_SIZE leaves its size as it is.
        let r = unsafe { libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, at as i64, len as i64) };
        if r == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) => return Ok(()),
            _ => return Err(e),
        }
    }
}

/// Whether `e` says the disk (or the user's quota) is full.
pub fn is_full(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
}

/// A data stream file: each packet is written once it and the room after it are allocated, so
/// that a full disk fails a write before any byte of it is written (no packet is torn), and the
/// packet that ends the stream and reports its loss always goes into room already allocated.
pub struct TraceFile(File);

impl TraceFile {
    /// Creates the file with room for the packet that would report a loss; on a full disk, an
    /// error, and no file.
    pub fn create(path: &Path) -> std::io::Result<TraceFile> {
        let f = File::create(path)?;
        if let Err(e) = allocate(&f, 0, ROOM) {
            let _ = std::fs::remove_file(path);
            return Err(e);
        }
        Ok(TraceFile(f))
    }
}

impl PacketOut for TraceFile {
    fn append(&mut self, at: u64, buf: &[u8]) -> std::io::Result<()> {
        allocate(&self.0, at, buf.len() as u64 + ROOM)?;
        self.0.write_all_at(buf, at)
    }

    fn rewrite_end(&mut self, at: u64, buf: &[u8]) -> std::io::Result<()> {
        // Into bytes already allocated (see `append`): no new room needed.
        self.0.write_all_at(buf, at)?;
        self.0.set_len(at + buf.len() as u64)
    }

    fn reserve(&mut self, at: u64, len: u64) {
        let _ = allocate(&self.0, at, len);
    }
}

/// Name of the file of a process's trace that counts the events no stream of it could report
/// (a data stream of one packet without events). Removed at exit when it counted nothing.
pub const LOSS_FILE: &str = "channel0_lost";

/// The stream instance id of the loss file.
const LOSS_STREAM: u64 = 2_000_000;

/// The loss file of a process's trace: one packet, no event, whose `events_discarded` counts
/// the events of the process that no stream reports (threads whose stream file could not be
/// created on a full disk, threads beyond the memory budget, everything of a process that
/// started once the disk was full), rewritten in place, in room allocated when it was created.
pub struct LossFile {
    file: File,
    path: PathBuf,
    uuid: [u8; 16],
    discarded: u64,
    written: u64,
    first: u64,
    last: u64,
}

impl LossFile {
    /// Creates it, empty (readers skip empty files), with its room allocated.
    pub fn create(path: &Path, uuid: [u8; 16]) -> std::io::Result<LossFile> {
        let TraceFile(file) = TraceFile::create(path)?;
        Ok(LossFile { file, path: path.to_path_buf(), uuid, discarded: 0, written: 0, first: 0, last: 0 })
    }

    /// Counts `n` events lost, the last of them before `at` (ns).
    pub fn add(&mut self, n: u64, at: u64) {
        if n == 0 {
            return;
        }
        if self.discarded == 0 {
            self.first = at;
        }
        self.discarded += n;
        self.last = self.last.max(at);
    }

    /// Writes the count, when it changed: one packet from the first loss to the last.
    pub fn write(&mut self) -> std::io::Result<()> {
        if self.discarded == self.written {
            return Ok(());
        }
        let mut w = StreamWriter::new(Vec::new(), self.uuid, LOSS_STREAM, 0, 4096);
        w.discard(self.discarded, self.first);
        w.close_packet(self.last)?;
        let packet = w.finish()?;
        self.file.write_all_at(&packet, 0)?;
        self.written = self.discarded;
        Ok(())
    }

    /// At exit: the file goes when it counted nothing.
    pub fn close(self) {
        if self.written == 0 {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The directory, in a session's directory, of the room kept for processes that start once the
/// disk is full: 32 files (`SLOTS`) of 16 KiB (`SLOT_BYTES`), one freed by each such process to write a
/// trace that counts its events. `rostrace` makes it when a recording starts and removes it when
/// it ends; traced processes top it up when they start on a disk with room to spare.
pub const RESERVE_DIR: &str = ".rostrace-reserve";

/// Processes that can start on a full disk and have their events counted (until the reserve is
/// topped up again).
pub const SLOTS: usize = 32;

/// Room for the trace of such a process: its directory (a block on most file systems), its
/// metadata without event classes (one 4 KiB packet), its loss file, a block of its parent
/// directory.
pub const SLOT_BYTES: u64 = 16 << 10;

/// Free bytes of the file system of `path`.
fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt as _;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs is plain integers, for which all zeros is a value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: statvfs writes into the struct given; `c` is NUL-terminated.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

/// Tops the reserve of the session in `root` up to its 32 slots, as far as the disk has room.
/// `always`: whatever room is left (rostrace, as a recording starts); else only on a disk with
/// much more room than the reserve takes (a traced process: none of the room a process that
/// found the disk full freed is taken back).
pub fn reserve(root: &Path, always: bool) {
    let dir = root.join(RESERVE_DIR);
    if !always && free_bytes(root).is_none_or(|f| f < 16 * SLOTS as u64 * SLOT_BYTES) {
        return;
    }
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    for i in 0..SLOTS {
        let path = dir.join(format!("slot-{i}"));
        let Ok(mut f) = std::fs::OpenOptions::new().write(true).create_new(true).open(&path) else { continue };
        let ok = {
            use std::os::fd::AsRawFd;
            // SAFETY: fallocate on the file just created.
            match unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, SLOT_BYTES as i64) } {
                0 => true,
                _ if matches!(
                    std::io::Error::last_os_error().raw_os_error(),
                    Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS)
                ) =>
                {
                    f.write_all(&vec![0; SLOT_BYTES as usize]).and_then(|_| f.sync_all()).is_ok()
                }
                _ => false,
            }
        };
        if !ok {
            let _ = std::fs::remove_file(&path);
            return;
        }
    }
}

/// Frees one slot of the session's reserve (for a process that found the disk full); whether
/// there was one.
pub fn claim(root: &Path) -> bool {
    let dir = root.join(RESERVE_DIR);
    (0..SLOTS).any(|i| std::fs::remove_file(dir.join(format!("slot-{i}"))).is_ok())
}

/// Removes the session's reserve (rostrace, when its recording ends).
pub fn release(root: &Path) {
    let _ = std::fs::remove_dir_all(root.join(RESERVE_DIR));
}

/// Writes `bytes` to `path` whole or not at all: written beside it under a hidden name (which
/// readers skip), then renamed; on an error nothing is left. (An empty or cut `metadata` makes
/// babeltrace2 refuse the whole session.)
pub fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    let r = (|| {
        let f = File::create(&tmp)?;
        allocate(&f, 0, bytes.len() as u64)?;
        f.write_all_at(bytes, 0)?;
        std::fs::rename(&tmp, path)
    })();
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}
