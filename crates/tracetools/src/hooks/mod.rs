//! CARET's hooked tracepoints: functions of the DDS libraries and of rclcpp, interposed by
//! this library when it is preloaded (`rostrace record` preloads it), that emit CARET's
//! `ros2_caret:` events with CARET's names and fields.
//!
//! A hook is an exported function with the hooked function's symbol name (C, or the C++
//! mangled name). Since the preloaded library comes first in the symbol search order, calls
//! made through the dynamic linker (the PLT) reach the hook, which calls the real function
//! (`dlsym(RTLD_NEXT)`, looked up once), returns exactly what it returned, and records an event
//! after it. With tracing off (no session) a hook is the real call plus one load and a branch.
//! A hooked library that is absent costs nothing: its hooks are never called.
//!
//! | hook | event | where |
//! |---|---|---|
//! | `rcl_init` (tracetools' own) | `caret_init`, `rmw_implementation` | once per process |
//! | Fast DDS 2.x `DataWriter::write_w_timestamp` | `dds_bind_addr_to_stamp(0, stamp)` | [`fastdds`] |
//! | Fast DDS 3.x `DataWriter::write_w_timestamp` | `dds_bind_addr_to_stamp(0, stamp)` | [`fastdds`] |
//! | Cyclone DDS `dds_write`, `dds_write_ts` | `dds_bind_addr_to_stamp(message, stamp)` | [`cyclonedds`] |
//! | rclcpp executors and callback groups | `construct_executor`, … | [`rclcpp`] |

pub mod cyclonedds;
pub mod fastdds;
pub mod rclcpp;

use std::cell::Cell;
use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicPtr, AtomicU8, Ordering};

/// The real function behind a hook: `dlsym(RTLD_NEXT, name)`, looked up once.
pub(crate) struct Original {
    name: &'static CStr,
    addr: AtomicPtr<c_void>,
    /// 0: not looked up, 1: found, 2: absent.
    state: AtomicU8,
}

impl Original {
    pub(crate) const fn new(name: &'static CStr) -> Self {
        Original { name, addr: AtomicPtr::new(std::ptr::null_mut()), state: AtomicU8::new(0) }
    }

    /// The real function's address, or None when no library after this one defines it.
    #[inline]
    pub(crate) fn get(&self) -> Option<*mut c_void> {
        match self.state.load(Ordering::Acquire) {
            1 => Some(self.addr.load(Ordering::Relaxed)),
            2 => None,
            _ => self.lookup(),
        }
    }

    #[cold]
    fn lookup(&self) -> Option<*mut c_void> {
        // SAFETY: a NUL-terminated name; RTLD_NEXT searches the libraries loaded after this one.
        let mut p = unsafe { libc::dlsym(libc::RTLD_NEXT, self.name.as_ptr()) };
        if p.is_null() {
            // Not in the global scope: a library loaded with dlopen(RTLD_LOCAL), as
            // rmw_implementation loads the rmw library and with it the DDS library.
            p = in_local_libraries(self.name).unwrap_or(std::ptr::null_mut());
        }
        self.addr.store(p, Ordering::Relaxed);
        self.state.store(if p.is_null() { 2 } else { 1 }, Ordering::Release);
        (!p.is_null()).then_some(p)
    }
}

/// `name` in a loaded library other than this one, found through a handle of each library
/// (`dlopen(RTLD_NOLOAD)`: the libraries a program loaded with `RTLD_LOCAL` too).
fn in_local_libraries(name: &CStr) -> Option<*mut c_void> {
    let paths = loaded_objects();
    let ours = object_of(in_local_libraries as *const c_void);
    for path in paths {
        // SAFETY: a loaded library's path; RTLD_NOLOAD only takes a reference to it.
        let h = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        if h.is_null() {
            continue;
        }
        // SAFETY: a valid handle and name.
        let p = unsafe { libc::dlsym(h, name.as_ptr()) };
        // SAFETY: the handle from dlopen above (the library stays loaded: it was before).
        unsafe { libc::dlclose(h) };
        // The handle's search covers its dependencies, which may include this library.
        if !p.is_null() && object_of(p) != ours {
            return Some(p);
        }
    }
    None
}

/// The base address of the object holding `addr`.
fn object_of(addr: *const c_void) -> usize {
    // SAFETY: Dl_info is pointers and integers, for which all zeros is a value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is a valid out-parameter.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 {
        0
    } else {
        info.dli_fbase as usize
    }
}

/// A symbol anywhere in the process (`dlsym(RTLD_DEFAULT)`), or None.
pub(crate) fn symbol(name: &CStr) -> Option<*mut c_void> {
    // SAFETY: a NUL-terminated name.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!p.is_null()).then_some(p)
}

/// Whether a backend is on in this process, when the hooks record (whatever a session of the
/// embedded tracer does: the backend drops what a paused session does not take).
#[inline]
pub(crate) fn backend_on() -> bool {
    !crate::tracer::is_off()
}

/// The time CARET's init events carry in `init_timestamp` (the tracer's clock, ns).
pub(crate) fn init_timestamp() -> i64 {
    crate::clock::monotonic() as i64
}

thread_local! {
    /// What the last `rcl_publish` of this thread said about its publisher: 0 none (or already
    /// used by a DDS write), 1 recorded, 2 filtered out. CARET's `trace_filter_is_rcl_publish_recorded`:
    /// the DDS layer cannot tell which publisher writes, so its events follow the `rcl_publish`
    /// before them on the same thread.
    static PUBLISH: Cell<u8> = const { Cell::new(0) };
}

/// Called by `ros_trace_rcl_publish`: whether the publication is recorded (node/topic filters;
/// nothing to note without filters).
#[inline]
pub(crate) fn note_rcl_publish(publisher_handle: usize) {
    if crate::filter::active() {
        let allowed = crate::filter::allows(publisher_handle);
        let _ = PUBLISH.try_with(|p| p.set(if allowed { 1 } else { 2 }));
    }
}

/// Whether a DDS write of this thread is recorded (not after a filtered-out `rcl_publish`);
/// consumes the `rcl_publish` mark.
#[inline]
pub(crate) fn dds_write_allowed() -> bool {
    !crate::filter::active() || PUBLISH.try_with(|p| p.replace(0) != 2).unwrap_or(true)
}

/// CARET's `dds_bind_addr_to_stamp` of a DDS write (the sample's address where the DDS layer
/// gives it, and its source timestamp), unless the `rcl_publish` before it was filtered out.
pub(crate) fn bind_addr_to_stamp(addr: usize, stamp: u64) {
    crate::ffi::guard(|| {
        if dds_write_allowed() {
            crate::api::ros2_caret_dds_bind_addr_to_stamp(addr, stamp);
        }
    });
}

/// Called by `ros_trace_rcl_init`: CARET's once-per-process events, `caret_init` (the clock
/// offset CARET's analysis uses to place re-emitted initialization events, and the
/// distribution) and `rmw_implementation` (the rmw library in use).
pub(crate) fn process_init() {
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        let now = init_timestamp();
        let distro =
            std::env::var(crate::env::ROS_DISTRO).unwrap_or_else(|_| crate::distro::current().name.to_string());
        crate::api::ros2_caret_caret_init(now, distro.as_bytes());
        if let Some(rmw) = rmw_implementation() {
            crate::api::ros2_caret_rmw_implementation(rmw.as_bytes(), now);
        }
    });
}

/// The rmw implementation of this process: `RMW_IMPLEMENTATION`, else the `librmw_*` library
/// loaded (rmw_implementation loads it before `rcl_init` returns), like CARET's lookup.
pub fn rmw_implementation() -> Option<String> {
    if let Some(v) = std::env::var("RMW_IMPLEMENTATION").ok().filter(|v| !v.is_empty()) {
        return Some(v);
    }
    loaded_rmw()
}

/// The paths of the loaded objects (the program and its libraries), in load order.
fn loaded_objects() -> Vec<std::ffi::CString> {
    unsafe extern "C" fn each(info: *mut libc::dl_phdr_info, _: usize, data: *mut c_void) -> libc::c_int {
        // SAFETY: the loader hands a valid entry; `data` is our Vec.
        let (info, out) = unsafe { (&*info, &mut *(data as *mut Vec<std::ffi::CString>)) };
        if !info.dlpi_name.is_null() {
            // SAFETY: not null: the loader's NUL-terminated path of a loaded object.
            let path = unsafe { CStr::from_ptr(info.dlpi_name) };
            if !path.is_empty() {
                out.push(path.to_owned());
            }
        }
        0
    }
    let mut paths: Vec<std::ffi::CString> = Vec::new();
    // SAFETY: the callback only copies the names (whatever is done with them is done after,
    // outside the loader's lock).
    unsafe { libc::dl_iterate_phdr(Some(each), &mut paths as *mut _ as *mut c_void) };
    paths
}

/// The first `librmw_<name>.so` loaded other than rmw's own front libraries.
fn loaded_rmw() -> Option<String> {
    let front = ["rmw", "rmw_implementation", "rmw_dds_common", "rmw_fastrtps_shared_cpp", "rmw_security_common"];
    loaded_objects().iter().find_map(|path| {
        let path = path.to_string_lossy();
        let file = path.rsplit('/').next().unwrap_or("");
        let name = file.strip_prefix("lib").and_then(|f| f.split(".so").next())?;
        (name.starts_with("rmw_") && !front.contains(&name) && !name.contains("__")).then(|| name.to_string())
    })
}
