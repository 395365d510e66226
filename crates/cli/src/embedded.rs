//! rostrace's `libtracetools.so` and LTTng-UST provider, embedded in the binary by `build.rs`,
//! written out once per content into a cache directory when no library is found beside the
//! program (an installed `rostrace`).

use rostrace_session::{cache_dir as cache_root, write_once};
use std::path::PathBuf;

static LIB: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libtracetools.so"));
include!(concat!(env!("OUT_DIR"), "/providers.rs"));

/// The embedded libtracetools.so (with the LTTng providers beside it), written out if needed;
/// `None` when this build embeds none, or it cannot be written (the reason on stderr).
pub fn library() -> Option<PathBuf> {
    if LIB.is_empty() {
        return None;
    }
    let dir = cache_root().join(format!("{}-{CONTENT_HASH:016x}", env!("CARGO_PKG_VERSION")));
    let lib = dir.join("libtracetools.so");
    let r = std::fs::create_dir_all(&dir)
        .and_then(|_| write_once(&lib, LIB))
        .and_then(|_| PROVIDERS.iter().try_for_each(|(name, data)| write_once(&dir.join(name), data)));
    match r {
        Ok(()) => Some(lib),
        Err(e) => {
            eprintln!("rostrace: warning: cannot write the embedded libtracetools.so to {}: {e}", dir.display());
            None
        }
    }
}
