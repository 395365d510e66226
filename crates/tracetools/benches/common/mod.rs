//! What the tracer benchmarks share: the C program of the tests, built against the library of
//! this build, and LTTng.

#![allow(dead_code)] // each benchmark uses some of it

use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory of this build's `libtracetools.so`.
pub fn lib_dir() -> PathBuf {
    let deps = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
    if deps.join("libtracetools.so").exists() {
        deps
    } else {
        deps.parent().unwrap().to_path_buf()
    }
}

/// `tests/c/flows.c` compiled into `dir/flows` against this build's `libtracetools.so`.
pub fn flows(dir: &Path) -> PathBuf {
    let lib = lib_dir();
    let prog = dir.join("flows");
    tracetools::compile_c(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/flows.c"), &prog, &lib).expect("cc");
    prog
}

/// Runs `lttng ARGS` (at most 2 minutes); whether it succeeded.
pub fn lttng(args: &[&str]) -> bool {
    Command::new("timeout").arg("120").arg("lttng").args(args).output().is_ok_and(|o| o.status.success())
}

/// Whether LTTng's tools are there, with a session daemon started if none runs.
pub fn lttng_ready() -> bool {
    if !Command::new("lttng").arg("--version").output().is_ok_and(|o| o.status.success()) {
        return false;
    }
    if !Command::new("pgrep").args(["-x", "lttng-sessiond"]).output().is_ok_and(|o| o.status.success()) {
        let _ = Command::new("lttng-sessiond").arg("--daemonize").status();
    }
    true
}
