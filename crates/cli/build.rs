//! Embeds rostrace's `libtracetools.so` and its LTTng-UST provider in the `rostrace` binary
//! (see `crates/session/build/embed.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;

include!("../session/build/embed.rs");

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    embed_tracer(&manifest.join("../.."));
}
