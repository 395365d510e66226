//! Embeds rostrace's `libtracetools.so` and its LTTng-UST providers in the `rostrace` binary
//! (see `crates/session/build/embed.rs`).

use std::path::PathBuf;

include!("../session/build/embed.rs");

fn main() {
    embed_tracer();
}
