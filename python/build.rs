//! Embeds rostrace's `libtracetools.so` and its LTTng-UST providers in the native module, so
//! that `rostrace.record()` from an installed wheel preloads them (see
//! `crates/session/build/embed.rs`).

use std::path::PathBuf;

include!("../crates/session/build/embed.rs");

fn main() {
    embed_tracer();
}
