//! Where rostrace's `libtracetools.so` is, to preload into the traced programs.

use std::path::PathBuf;
use std::sync::OnceLock;

/// The variable naming the libtracetools.so to preload, which wins over every other place.
pub const LIB_VAR: &str = "ROSTRACE_LIB";

static EMBEDDED: OnceLock<fn() -> Option<PathBuf>> = OnceLock::new();

/// Registers where a program that carries libtracetools.so inside itself (the `rostrace`
/// binary) writes it out: the last place [`find_library`] looks, asked only when the others
/// have none, since writing it out takes time and room.
pub fn set_embedded_library(f: fn() -> Option<PathBuf>) {
    let _ = EMBEDDED.set(f);
}

/// `$ROSTRACE_LIB`, or libtracetools.so beside this program (target/<profile>, or its deps/),
/// or the copy embedded in this program ([`set_embedded_library`]).
pub fn find_library() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(LIB_VAR) {
        return Some(PathBuf::from(p));
    }
    let beside = std::env::current_exe().ok().and_then(|exe| {
        let dir = exe.parent()?.to_path_buf();
        // deps/ first: every build of the workspace refreshes it, target/<profile>/ only a build
        // of the library's own package.
        [dir.join("deps/libtracetools.so"), dir.join("libtracetools.so"), dir.join("../lib/libtracetools.so")]
            .into_iter()
            .find(|p| p.exists())
    });
    beside.or_else(|| EMBEDDED.get().and_then(|f| f()))
}
