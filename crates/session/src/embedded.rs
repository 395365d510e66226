//! Run-time half of embedding rostrace's `libtracetools.so` and LTTng-UST providers in a
//! program (the build-time half is `crates/session/build/embed.rs`): the program's copies are
//! written once per content into the cache directory, every file checked byte for byte, so
//! that no other copy is ever preloaded.

use crate::cache::{cache_dir, private_subdir, write_once};
use std::path::PathBuf;

/// What a program carries: the library (empty when the build could not embed it), its LTTng-UST
/// providers (file name, contents) and a hash of them all (the name of their directory).
pub struct Embedded {
    /// libtracetools.so.
    pub lib: &'static [u8],
    /// The providers, one per distribution.
    pub providers: &'static [(&'static str, &'static [u8])],
    /// A hash of the library and the providers.
    pub hash: u64,
}

impl Embedded {
    /// The library (with the providers beside it), written out if needed, or why it cannot be;
    /// `None` when the program carries none.
    pub fn library(&self) -> Option<Result<PathBuf, String>> {
        if self.lib.is_empty() {
            return None;
        }
        Some(cache_dir().and_then(|root| {
            let dir = root.join(format!("{}-{:016x}", env!("CARGO_PKG_VERSION"), self.hash));
            private_subdir(&dir)?;
            let lib = dir.join("libtracetools.so");
            write_once(&lib, self.lib)
                .and_then(|_| self.providers.iter().try_for_each(|(name, data)| write_once(&dir.join(name), data)))
                .map_err(|e| format!("cannot write it to {}: {e}", dir.display()))?;
            Ok(lib)
        }))
    }
}
