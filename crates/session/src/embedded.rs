//! Run-time half of embedding rostrace's `libtracetools.so` and LTTng-UST providers in a
//! program (the build-time half is `crates/session/build/embed.rs`): the program's copies are
//! written once per content into the cache directory, every file checked byte for byte, so
//! that no other copy is ever preloaded.

use crate::cache::{cache_dir, private_subdir, write_once};
use std::path::PathBuf;

/// What a program carries: the library (empty when the build could not embed it) and its
/// LTTng-UST providers (file name, contents).
pub struct Embedded {
    /// libtracetools.so.
    pub lib: &'static [u8],
    /// The providers, one per distribution.
    pub providers: &'static [(&'static str, &'static [u8])],
}

impl Embedded {
    /// The library (with the providers beside it), written out if needed, or why it cannot be;
    /// `None` when the program carries none.
    pub fn library(&self) -> Option<Result<PathBuf, String>> {
        if self.lib.is_empty() {
            return None;
        }
        Some(cache_dir().and_then(|root| {
            // One directory per content: programs of other builds never share a file.
            let dir = root.join(format!("{}-{:016x}", env!("CARGO_PKG_VERSION"), self.hash()));
            private_subdir(&dir)?;
            let lib = dir.join("libtracetools.so");
            write_once(&lib, self.lib)
                .and_then(|_| self.providers.iter().try_for_each(|(name, data)| write_once(&dir.join(name), data)))
                .map_err(|e| format!("cannot write it to {}: {e}", dir.display()))?;
            Ok(lib)
        }))
    }

    /// A hash (FNV-1a) of the library and the providers.
    fn hash(&self) -> u64 {
        let fnv = |data: &[u8]| {
            data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ *b as u64).wrapping_mul(0x100_0000_01b3))
        };
        self.providers.iter().fold(fnv(self.lib), |h, (_, data)| h.rotate_left(17) ^ fnv(data))
    }
}
