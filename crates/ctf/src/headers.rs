//! Packet headers read from a stream file with positioned reads rather than through its mapping,
//! for a walk over the headers alone (indexing a file, cutting it into parts). Touching a
//! header in the mapping maps the pages around it too (the kernel's fault-around), which the
//! walk then gives back: on packets of 64 KiB that is every page of the file, mapped and
//! unmapped once more per walk, for a few bytes of each packet.

use std::path::Path;

/// Which file a mapping is of: (device, inode). A file at the same path with another identity
/// (replaced since it was mapped) is not read this way.
pub(crate) type FileId = (u64, u64);

/// The identity of the open file `file`, where the platform gives one.
pub(crate) fn file_id(file: &std::fs::File) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        file.metadata().ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        None
    }
}

/// Bytes read at each packet's start: more than LTTng's header and context (about 90 bytes).
/// A header that does not fit is read through the mapping.
const HEADER_READ: usize = 512;

/// Bytes of the file asked ahead of the headers read ([`HeaderReads::at`]).
const AHEAD: u64 = 8 << 20;

/// A stream file opened for reading its packet headers.
pub(crate) struct HeaderReads {
    file: std::fs::File,
    /// The length of the mapping: nothing after it is read.
    len: u64,
    buf: Vec<u8>,
    /// The file is asked to be read ahead up to there.
    ahead: u64,
}

impl HeaderReads {
    /// The file at `path`, when it is still the one mapped (`id`) and at least `len` bytes long.
    pub(crate) fn open(path: &Path, id: Option<FileId>, len: u64) -> Option<HeaderReads> {
        let id = id?;
        let file = std::fs::File::open(path).ok()?;
        let size = file.metadata().ok()?.len();
        (file_id(&file) == Some(id) && size >= len).then(|| HeaderReads {
            file,
            len,
            buf: vec![0; HEADER_READ],
            ahead: 0,
        })
    }

    /// The bytes from `at` on, as many as were read (up to the end of the mapping); `None` when
    /// they cannot be read.
    ///
    /// Reads of a few bytes every packet are not seen as sequential by the kernel, which then
    /// reads ahead little: from a file not in the page cache, each header would wait for the
    /// disk on its own. The file is asked to be read ahead ([`AHEAD`] bytes at a time, as a
    /// sequential reading of the mapping is), which also brings in the packets that a reading
    /// after the walk reads.
    pub(crate) fn at(&mut self, at: u64) -> Option<&[u8]> {
        let n = (self.len.checked_sub(at)?).min(HEADER_READ as u64) as usize;
        #[cfg(target_os = "linux")]
        if at + AHEAD / 2 >= self.ahead && self.ahead.max(at) < self.len {
            use std::os::fd::AsRawFd;
            let from = self.ahead.max(at);
            // (Not 0, which would be the rest of the file, past the mapping.)
            let len = AHEAD.min(self.len - from);
            // SAFETY: an advice on an open file descriptor's range: no memory is involved.
            unsafe { libc::posix_fadvise(self.file.as_raw_fd(), from as i64, len as i64, libc::POSIX_FADV_WILLNEED) };
            self.ahead = from + len;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileExt;
            self.file.read_exact_at(&mut self.buf[..n], at).ok()?;
            Some(&self.buf[..n])
        }
        #[cfg(not(unix))]
        {
            let _ = n;
            None
        }
    }
}
