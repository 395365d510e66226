//! Fast DDS: the source timestamp of every sample rmw_fastrtps writes.
//!
//! CARET hooks `eprosima::fastrtps::rtps::WriterHistory::set_fragments(CacheChange_t*)` and reads
//! the change's `sourceTimestamp`. In the Fast DDS of the ROS 2 wheels (2.14 for Jazzy, 3.2 for
//! Kilted) that call never leaves the library (it is bound inside `libfastrtps.so` /
//! `libfastdds.so`: no PLT relocation), so no preloaded library can see it. The call that does
//! cross libraries is rmw_fastrtps's `DataWriter::write_w_timestamp(data, handle, timestamp)`,
//! which `rmw_publish` makes since Jazzy with the timestamp it also records in `ros2:rmw_publish`:
//! the sample's source timestamp. That is what is hooked, for both major versions (the
//! namespaces changed in 3.x: `eprosima::fastrtps::Time_t` became `eprosima::fastdds::dds::Time_t`,
//! `void *` data became `const void *`, and `ReturnCode_t` a plain `int32_t`).
//!
//! The event is CARET's Fast DDS one, `dds_bind_addr_to_stamp(addr = 0, source_stamp)`: the
//! DDS layer does not see the ROS message, the `rcl_publish` before it on the same thread does.

use super::Original;
use std::ffi::c_void;

/// `eprosima::fastrtps::Time_t` (2.x) and `eprosima::fastdds::dds::Time_t` (3.x): the same two fields.
#[repr(C)]
pub struct Time {
    seconds: i32,
    nanosec: u32,
}

impl Time {
    fn to_ns(&self) -> u64 {
        (self.seconds as i64 * 1_000_000_000 + self.nanosec as i64) as u64
    }
}

/// Fast DDS 2.x: `eprosima::fastdds::dds::DataWriter::write_w_timestamp(void*,
/// eprosima::fastrtps::rtps::InstanceHandle_t const&, eprosima::fastrtps::Time_t const&)`.
static ORIG_2: Original = Original::new(
    c"_ZN8eprosima7fastdds3dds10DataWriter17write_w_timestampEPvRKNS_8fastrtps4rtps16InstanceHandle_tERKNS4_6Time_tE",
);
/// Fast DDS 3.x: `eprosima::fastdds::dds::DataWriter::write_w_timestamp(void const*,
/// eprosima::fastdds::rtps::InstanceHandle_t const&, eprosima::fastdds::dds::Time_t const&)`.
static ORIG_3: Original = Original::new(
    c"_ZN8eprosima7fastdds3dds10DataWriter17write_w_timestampEPKvRKNS0_4rtps16InstanceHandle_tERKNS1_6Time_tE",
);

/// The return value of both: `ReturnCode_t` (2.x: a class holding one `uint32_t`, returned in
/// a register; 3.x: `int32_t`). `RETCODE_ERROR` when the real function cannot be found.
type WriteTs = unsafe extern "C" fn(*mut c_void, *const c_void, *const c_void, *const Time) -> u32;
const RETCODE_ERROR: u32 = 1;

#[inline(always)]
unsafe fn write_w_timestamp(
    orig: &Original,
    this: *mut c_void,
    data: *const c_void,
    handle: *const c_void,
    ts: *const Time,
) -> u32 {
    let Some(f) = orig.get() else { return RETCODE_ERROR };
    // SAFETY: the real function, with the arguments it was called with.
    let ret = unsafe { std::mem::transmute::<*mut c_void, WriteTs>(f)(this, data, handle, ts) };
    if super::backend_on() && !ts.is_null() {
        // SAFETY: the caller's timestamp, alive for the call.
        let stamp = unsafe { (*ts).to_ns() };
        super::bind_addr_to_stamp(0, stamp);
    }
    ret
}

/// The Fast DDS 2.x hook.
///
/// # Safety
/// Called as `DataWriter::write_w_timestamp` by code linked against Fast DDS 2.x.
#[export_name = "_ZN8eprosima7fastdds3dds10DataWriter17write_w_timestampEPvRKNS_8fastrtps4rtps16InstanceHandle_tERKNS4_6Time_tE"]
pub unsafe extern "C" fn hook_write_w_timestamp_2(
    this: *mut c_void,
    data: *const c_void,
    handle: *const c_void,
    ts: *const Time,
) -> u32 {
    // SAFETY: the arguments this hook was called with, as Fast DDS 2.x's function.
    unsafe { write_w_timestamp(&ORIG_2, this, data, handle, ts) }
}

/// The Fast DDS 3.x hook.
///
/// # Safety
/// Called as `DataWriter::write_w_timestamp` by code linked against Fast DDS 3.x.
#[export_name = "_ZN8eprosima7fastdds3dds10DataWriter17write_w_timestampEPKvRKNS0_4rtps16InstanceHandle_tERKNS1_6Time_tE"]
pub unsafe extern "C" fn hook_write_w_timestamp_3(
    this: *mut c_void,
    data: *const c_void,
    handle: *const c_void,
    ts: *const Time,
) -> u32 {
    // SAFETY: the arguments this hook was called with, as Fast DDS 3.x's function.
    unsafe { write_w_timestamp(&ORIG_3, this, data, handle, ts) }
}
