//! Where rostrace's `libtracetools.so` is, to preload into the traced programs.

use std::path::PathBuf;
use std::sync::OnceLock;

/// The variable naming the libtracetools.so to preload, which wins over every other place.
pub const LIB_VAR: &str = "ROSTRACE_LIB";

/// What a program that carries libtracetools.so inside itself gives [`find_library`]: where
/// it wrote its copy, or why it could not (its cache directory refused, unwritable...), or
/// `None` when it carries none.
pub type Embedded = fn() -> Option<Result<PathBuf, String>>;

static EMBEDDED: OnceLock<Embedded> = OnceLock::new();

/// Registers where a program that carries libtracetools.so inside itself (the `rostrace`
/// binary) writes it out: the last place [`find_library`] looks, asked only when the others
/// have none, since writing it out takes time and room.
pub fn set_embedded_library(f: Embedded) {
    let _ = EMBEDDED.set(f);
}

/// `$ROSTRACE_LIB`, or libtracetools.so beside this program (target/<profile>, or its deps/),
/// or the copy embedded in this program ([`set_embedded_library`]); else why none can be
/// preloaded. A path is given absolute, and refused when it holds a separator of
/// `LD_PRELOAD` (`:` or white space), which would split it.
pub fn find_library() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os(LIB_VAR).filter(|p| !p.is_empty()) {
        let p = std::path::absolute(&p).map_err(|e| format!("{LIB_VAR}={}: {e}", p.to_string_lossy()))?;
        crate::cache::usable_path(&p).map_err(|why| format!("{LIB_VAR}={} {why}", p.display()))?;
        return Ok(p);
    }
    let beside = std::env::current_exe().ok().and_then(|exe| {
        let dir = exe.parent()?.to_path_buf();
        // deps/ first: every build of the workspace refreshes it, target/<profile>/ only a build
        // of the library's own package.
        [dir.join("deps/libtracetools.so"), dir.join("libtracetools.so"), dir.join("../lib/libtracetools.so")]
            .into_iter()
            .find(|p| p.exists())
    });
    let beside = match beside {
        Some(p) => match crate::cache::usable_path(&p) {
            Ok(()) => return Ok(p),
            Err(why) => Some(format!("the libtracetools.so beside rostrace, {}, {why}", p.display())),
        },
        None => None,
    };
    match EMBEDDED.get().and_then(|f| f()) {
        Some(found) => found.map_err(|e| format!("cannot use the libtracetools.so embedded in this program: {e}")),
        None => Err(beside.unwrap_or_else(|| {
            format!(
                "libtracetools.so not found beside rostrace, and this program embeds none (build it: cargo build \
                 --release, and set {LIB_VAR})"
            )
        })),
    }
}
