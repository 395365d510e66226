//! The safe Rust API: one function per tracepoint of the catalog (`api::rcl_node_init(...)`,
//! `api::ros2_caret_caret_init(...)`), for Rust nodes and client libraries. Pointers are passed
//! as addresses (`usize`), strings as bytes. Each records its event when tracing is on.

use crate::catalog::id;
use crate::tracer::Mode;
use std::ffi::c_void;

include!(concat!(env!("OUT_DIR"), "/api_gen.rs"));
