//! rostrace's `libtracetools.so`: a drop-in for ROS 2's tracetools.
//!
//! ROS 2 code (rcl, rclcpp, rmw) calls `ros_trace_*` functions; this library provides all of
//! them with upstream's signatures (42 tracepoints of ros2_tracing 8.10.1), plus CARET's
//! `ros2_caret` events and a safe Rust API ([`api`]) over the same catalog. Events go to:
//!
//! - the **embedded tracer** (default): when `ROSTRACE_SESSION_DIR` is set, each process writes
//!   its own LTTng-layout CTF trace below it, from per-thread lock-free buffers drained by a
//!   background thread; no daemon. Full buffers drop events and count them.
//! - **LTTng-UST**, with `ROSTRACE_BACKEND=lttng`: a tracepoint provider built from the same
//!   catalog is loaded at run time, so this library also works where LTTng is not installed.
//!
//! `TRACETOOLS_RUNTIME_DISABLE=1` turns tracing off. Nothing unwinds across the C ABI.
#![deny(missing_docs)]
#![warn(unnameable_types)]

pub mod api;
pub mod catalog;
mod clock;
pub mod distro;
pub mod env;
mod ffi;
mod filter;
mod hooks;
mod lttng;
mod ring;
mod storage;
pub mod tracer;
mod utils;

/// Every rclcpp symbol the library hooks for CARET's events (mangled names).
pub use hooks::rclcpp::SYMBOLS as HOOKED_RCLCPP_SYMBOLS;

mod abi {
    //! The C ABI: `ros_trace_X`, `ros_trace_enabled_X`, `ros_trace_do_X` for every `ros2` tracepoint.
    use crate::tracer::Mode;
    use std::ffi::{c_char, c_void};

    include!(concat!(env!("OUT_DIR"), "/abi_gen.rs"));
    include!(concat!(env!("OUT_DIR"), "/caret_abi_gen.rs"));

    /// Whether tracing support is compiled in: always.
    #[no_mangle]
    pub extern "C" fn ros_trace_compile_status() -> bool {
        true
    }

    /// Whether a backend is active in this process.
    #[no_mangle]
    pub extern "C" fn ros_trace_runtime_status() -> bool {
        crate::ffi::guard_or(false, || crate::tracer::mode() != Mode::Off)
    }
}

/// The newest tracetools version this library mirrors (Rolling's); `rcl_init` records the
/// version of the process's distribution ([`distro`]).
pub const VERSION: &str = env!("ROSTRACE_TRACETOOLS_VERSION");

/// Size of GID arrays in Rolling's ABI (`TRACETOOLS_GID_STORAGE_SIZE`; 24 up to Jazzy, see [`distro`]).
pub const GID_SIZE: usize = 16;

/// Directory holding the generated C header `tracetools/tracetools.h`.
pub const INCLUDE_DIR: &str = env!("ROSTRACE_INCLUDE_DIR");

/// Where the LTTng-UST provider libraries were built, `librostrace_lttng_<distro>.so` (they are
/// also looked up beside libtracetools.so).
pub const LTTNG_PROVIDER_DIR: &str = env!("ROSTRACE_LTTNG_PROVIDER_DIR");

/// The file name of a distribution's LTTng-UST provider.
pub fn lttng_provider_name(abi: &distro::Abi) -> String {
    format!("librostrace_lttng_{}.so", abi.name)
}

/// A distribution's LTTng-UST provider, where it was built.
pub fn lttng_provider(abi: &distro::Abi) -> std::path::PathBuf {
    std::path::Path::new(LTTNG_PROVIDER_DIR).join(lttng_provider_name(abi))
}

/// Compiles a C program against the generated header and links it to `libtracetools.so` in
/// `lib_dir` (found there at run time, whatever `LD_LIBRARY_PATH` says). Used by the tests and
/// benchmarks; handy to try the C ABI.
pub fn compile_c(source: &std::path::Path, output: &std::path::Path, lib_dir: &std::path::Path) -> std::io::Result<()> {
    let st = std::process::Command::new(std::env::var_os("CC").unwrap_or_else(|| "cc".into()))
        .args(["-O2", "-Wall", "-Werror", "-std=c11", "-pthread", "-I", INCLUDE_DIR])
        .arg(source)
        .arg("-o")
        .arg(output)
        .arg(format!("-L{}", lib_dir.display()))
        .arg(format!("-Wl,--disable-new-dtags,-rpath,{}", lib_dir.display()))
        .arg("-ltracetools")
        .status()?;
    if st.success() {
        Ok(())
    } else {
        Err(std::io::Error::other(format!("compiling {} failed ({st})", source.display())))
    }
}
