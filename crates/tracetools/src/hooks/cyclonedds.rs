//! Cyclone DDS (`libddsc`): the source timestamp of every sample written, as CARET does it
//! (caret_trace `hooked_trace_points.cpp`).
//!
//! - `dds_write(writer, data)`: the hook takes the timestamp (`dds_time()`, the clock
//!   `dds_write` itself reads) and calls the real `dds_write_ts(writer, data, timestamp)`, which
//!   is what `dds_write` does with a timestamp of its own: the sample, its source timestamp and
//!   the return value are the real function's. Then `dds_bind_addr_to_stamp(data, timestamp)`.
//! - `dds_write_ts(writer, data, timestamp)` (rmw_cyclonedds since Jazzy): the real call, then
//!   `dds_bind_addr_to_stamp(data, timestamp)`.
//!
//! Not hooked: `dds_writecdr` (Humble's and Iron's serialized publications): it takes ownership
//! of the sample, and reading the timestamp it sets after the call (as CARET does) reads memory
//! the writer may already have freed.

use super::Original;
use std::ffi::c_void;

static DDS_WRITE: Original = Original::new(c"dds_write");
static DDS_WRITE_TS: Original = Original::new(c"dds_write_ts");
static DDS_TIME: Original = Original::new(c"dds_time");
/// `DDS_RETCODE_ERROR`, when the real function cannot be found.
const RETCODE_ERROR: i32 = -1;

type WriteTs = unsafe extern "C" fn(i32, *const c_void, i64) -> i32;
type Write = unsafe extern "C" fn(i32, *const c_void) -> i32;

fn record(data: *const c_void, stamp: i64) {
    super::bind_addr_to_stamp(data as usize, stamp as u64);
}

/// Hook of `dds_return_t dds_write(dds_entity_t writer, const void *data)`.
///
/// # Safety
/// Called as Cyclone DDS's `dds_write`.
#[no_mangle]
pub unsafe extern "C" fn dds_write(writer: i32, data: *const c_void) -> i32 {
    if super::backend_on() {
        if let (Some(ts_fn), Some(time)) = (DDS_WRITE_TS.get(), DDS_TIME.get()) {
            // SAFETY: Cyclone's `dds_time_t dds_time(void)`.
            let stamp = unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> i64>(time)() };
            // SAFETY: Cyclone's `dds_write_ts`, with the caller's writer and sample: what the real
            // `dds_write` calls.
            let ret = unsafe { std::mem::transmute::<*mut c_void, WriteTs>(ts_fn)(writer, data, stamp) };
            record(data, stamp);
            return ret;
        }
    }
    match DDS_WRITE.get() {
        // SAFETY: the real `dds_write`, of this signature, with the caller's arguments.
        Some(f) => unsafe { std::mem::transmute::<*mut c_void, Write>(f)(writer, data) },
        None => RETCODE_ERROR,
    }
}

/// Hook of `dds_return_t dds_write_ts(dds_entity_t writer, const void *data, dds_time_t timestamp)`.
///
/// # Safety
/// Called as Cyclone DDS's `dds_write_ts`.
#[no_mangle]
pub unsafe extern "C" fn dds_write_ts(writer: i32, data: *const c_void, timestamp: i64) -> i32 {
    let Some(f) = DDS_WRITE_TS.get() else { return RETCODE_ERROR };
    // SAFETY: the real `dds_write_ts`, of this signature, with the caller's arguments.
    let ret = unsafe { std::mem::transmute::<*mut c_void, WriteTs>(f)(writer, data, timestamp) };
    if super::backend_on() {
        record(data, timestamp);
    }
    ret
}
