//! rostrace's `libtracetools.so` and LTTng-UST provider, embedded in the binary by `build.rs`,
//! written out when no library is found beside the program (an installed `rostrace`).

use std::path::PathBuf;

include!(concat!(env!("OUT_DIR"), "/providers.rs"));

static EMBEDDED: rostrace_session::Embedded = rostrace_session::Embedded { lib: LIBRARY, providers: PROVIDERS };

/// The embedded libtracetools.so, written out if needed, or why it cannot be; `None` when
/// this build embeds none.
pub fn library() -> Option<Result<PathBuf, String>> {
    EMBEDDED.library()
}
