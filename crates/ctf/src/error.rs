//! Errors of the reader. Each names the file and the byte offset where reading failed.

use std::path::PathBuf;

/// A problem found while parsing or resolving metadata text, at a byte offset of that text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataError {
    /// Byte offset into the metadata text.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

impl MetadataError {
    /// A metadata error at `offset`.
    pub fn at(offset: usize, message: impl Into<String>) -> Self {
        MetadataError { offset, message: message.into() }
    }
}

/// Any error of the reader.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file could not be opened or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The system error.
        source: std::io::Error,
    },
    /// The metadata is invalid. `offset` is a byte offset into the metadata file.
    #[error("{}: invalid metadata at byte {offset}: {message}", path.display())]
    Metadata {
        /// The metadata file.
        path: PathBuf,
        /// Byte offset in the file.
        offset: u64,
        /// What is wrong.
        message: String,
    },
    /// A data stream could not be decoded at `offset`; events before it were delivered.
    #[error("{}: cannot decode at byte {offset}: {message}", path.display())]
    Stream {
        /// The data stream file.
        path: PathBuf,
        /// Byte offset in the file.
        offset: u64,
        /// What is wrong.
        message: String,
    },
    /// A data stream file ends inside its last packet, which declares more bytes than the file
    /// has: the packet is incomplete, as one still being written is. Its events before the end
    /// were delivered. (The text is that of [`Error::Stream`].)
    #[error("{}: cannot decode at byte {offset}: {message}", path.display())]
    Truncated {
        /// The data stream file.
        path: PathBuf,
        /// Byte offset in the file: its end.
        offset: u64,
        /// What is wrong.
        message: String,
    },
    /// A file named `metadata` that is not CTF metadata (neither a metadata packet nor TSDL text).
    #[error("{}: not CTF metadata at byte {offset}: {message}", path.display())]
    NotMetadata {
        /// The file.
        path: PathBuf,
        /// Byte offset in the file.
        offset: u64,
        /// What is there instead.
        message: String,
    },
    /// A file beside a trace's metadata that is a copy of one of its data stream files (its
    /// first packet's header and context are those of that file's): not read, so that its
    /// events are not read twice.
    #[error("{}: not read at byte 0: a copy of {} (the same first packet: {message}); its {bytes} bytes are skipped", path.display(), of.display())]
    Duplicate {
        /// The copy.
        path: PathBuf,
        /// The file read in its place.
        of: PathBuf,
        /// The copy's size.
        bytes: u64,
        /// The values of the first packet.
        message: String,
    },
    /// No CTF trace was found at the given path.
    #[error("{}: no CTF trace found (no `metadata` file)", path.display())]
    NoTrace {
        /// The path given.
        path: PathBuf,
    },
}

impl Error {
    /// The file the error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            Error::Io { path, .. }
            | Error::Metadata { path, .. }
            | Error::Stream { path, .. }
            | Error::Truncated { path, .. }
            | Error::NotMetadata { path, .. }
            | Error::Duplicate { path, .. }
            | Error::NoTrace { path } => path,
        }
    }

    /// Whether the error is a stream file's incomplete last packet ([`Error::Truncated`]):
    /// expected of a file still being written, whose next packets are not there yet.
    pub fn is_truncated(&self) -> bool {
        matches!(self, Error::Truncated { .. })
    }
}

/// Result with the reader's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;
