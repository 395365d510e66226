//! `libtracetools.so` is loaded into every traced process: it links the CTF writer and no part
//! of the reader (its crate, its memory maps and searches, serde, error derives), which would
//! grow the library and what it brings into a ROS 2 process.

use std::process::Command;

/// Crates of the reader's side that the library must not link.
const READER: &[&str] = &["rostrace-ctf", "memmap2", "memchr", "serde", "serde_derive", "thiserror"];

#[test]
fn the_tracer_library_links_no_reader_crate() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| env!("CARGO").to_string());
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    // Normal dependencies only: the tests' own (the reader among them) are not in the library.
    let out = Command::new(cargo)
        .args(["tree", "--offline", "-e", "normal", "--prefix", "none", "--format", "{p}", "--manifest-path"])
        .arg(manifest)
        .args(["-p", "rostrace-tracetools"])
        .output()
        .expect("cargo runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&out.stderr));
    let names: Vec<&str> = text.lines().filter_map(|l| l.split_whitespace().next()).collect();
    // The listing is the one meant: the library and its writer are in it.
    for want in ["rostrace-tracetools", "rostrace-ctf-write"] {
        assert!(names.contains(&want), "{want} not in cargo tree's listing:\n{text}");
    }
    let found: Vec<&&str> = READER.iter().filter(|r| names.contains(r)).collect();
    assert!(found.is_empty(), "libtracetools.so links {found:?}:\n{text}");
}
