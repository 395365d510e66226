//! tracetools' C++ helpers that rclcpp calls for every callback's symbol:
//! `tracetools::detail::demangle_symbol` and `tracetools::detail::get_symbol_funcptr`
//! (`tracetools/utils.hpp`, called by the `tracetools::get_symbol` templates that rclcpp's
//! `TRACETOOLS_GET_SYMBOL` expands to). A C++ node linked against tracetools needs them from
//! whichever `libtracetools.so` it loads, so this library exports them under upstream's mangled
//! names, with upstream's behaviour for the process's distribution ([`crate::distro`]):
//!
//! | | Humble (4.1) | Iron and later (6.x, 8.x) |
//! |---|---|---|
//! | `demangle_symbol(const char *)` | the demangled name, else the mangled one, else `UNKNOWN_demangling_failed` | the demangled name (malloc'd) or null |
//! | `get_symbol_funcptr` | `(void *)`: `UNKNOWN` when `dladdr` finds nothing | `(const void *)`: null when `dladdr` finds nothing |
//! | who frees | nobody (upstream leaks the demangled string) | the caller, with `free` |
//!
//! Demangling is libstdc++'s `abi::__cxa_demangle`, as upstream's, looked up in the process
//! (every C++ caller has libstdc++ loaded), so this library does not depend on libstdc++.
//! Deliberate difference: in Humble's mode every string returned is a malloc'd copy (upstream
//! returns the mangled input or a literal when demangling fails), so that a caller of either
//! convention may free it; the text is upstream's.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

/// `TRACETOOLS_SYMBOL_UNKNOWN`.
const UNKNOWN: &CStr = c"UNKNOWN";
/// Humble's text when demangling fails and there is no mangled name either.
const DEMANGLING_FAILED: &CStr = c"UNKNOWN_demangling_failed";

type CxaDemangle = unsafe extern "C" fn(*const c_char, *mut c_char, *mut usize, *mut c_int) -> *mut c_char;

/// `abi::__cxa_demangle` of the process's libstdc++, when it has one.
fn cxa_demangle() -> Option<CxaDemangle> {
    static F: OnceLock<Option<CxaDemangle>> = OnceLock::new();
    *F.get_or_init(|| {
        // SAFETY: a NUL-terminated name.
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"__cxa_demangle".as_ptr()) };
        // SAFETY: the symbol, when found, is libstdc++'s __cxa_demangle, of this signature.
        (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, CxaDemangle>(p) })
    })
}

/// Humble's convention (4.x) rather than Iron's and later ones.
fn humble() -> bool {
    crate::distro::current().number.0 < 5
}

/// A malloc'd copy of `s`, which a C caller may free.
fn malloc_copy(s: &CStr) -> *mut c_char {
    // SAFETY: a NUL-terminated string.
    unsafe { libc::strdup(s.as_ptr()) }
}

/// `__cxa_demangle(mangled)`: the malloc'd demangled name, or null.
///
/// # Safety
/// `mangled` is null or a NUL-terminated string.
unsafe fn demangled(mangled: *const c_char) -> *mut c_char {
    if mangled.is_null() {
        return std::ptr::null_mut();
    }
    let Some(f) = cxa_demangle() else { return std::ptr::null_mut() };
    let mut status: c_int = 1;
    let d = f(mangled, std::ptr::null_mut(), std::ptr::null_mut(), &mut status);
    if status == 0 {
        d
    } else {
        if !d.is_null() {
            libc::free(d.cast());
        }
        std::ptr::null_mut()
    }
}

/// The demangled name of `mangled`, with the distribution's convention for failures.
///
/// # Safety
/// `mangled` is null or a NUL-terminated string.
unsafe fn demangle(mangled: *const c_char) -> *mut c_char {
    let d = demangled(mangled);
    if !d.is_null() || !humble() {
        return d;
    }
    if mangled.is_null() {
        malloc_copy(DEMANGLING_FAILED)
    } else {
        malloc_copy(CStr::from_ptr(mangled))
    }
}

/// The demangled name of the function at `funcptr`: `dladdr`'s symbol name, demangled.
///
/// # Safety
/// `funcptr` is any address.
unsafe fn symbol_of(funcptr: *const c_void) -> *mut c_char {
    let mut info: libc::Dl_info = std::mem::zeroed();
    if libc::dladdr(funcptr, &mut info) == 0 {
        return if humble() { malloc_copy(UNKNOWN) } else { std::ptr::null_mut() };
    }
    demangle(info.dli_sname)
}

/// `char * tracetools::detail::demangle_symbol(const char * mangled)` (Humble: `const char *`;
/// the mangled name does not carry the return type, so it is one symbol for every distro).
///
/// # Safety
/// `mangled` is null or a NUL-terminated string.
#[export_name = "_ZN10tracetools6detail15demangle_symbolEPKc"]
pub unsafe extern "C" fn demangle_symbol(mangled: *const c_char) -> *mut c_char {
    crate::ffi::guard_or(std::ptr::null_mut(), || demangle(mangled))
}

/// `char * tracetools::detail::get_symbol_funcptr(const void * funcptr)` (Iron and later).
///
/// # Safety
/// `funcptr` is any address.
#[export_name = "_ZN10tracetools6detail18get_symbol_funcptrEPKv"]
pub unsafe extern "C" fn get_symbol_funcptr(funcptr: *const c_void) -> *mut c_char {
    crate::ffi::guard_or(std::ptr::null_mut(), || symbol_of(funcptr))
}

/// `const char * tracetools::detail::get_symbol_funcptr(void * funcptr)` (Humble).
///
/// # Safety
/// `funcptr` is any address.
#[export_name = "_ZN10tracetools6detail18get_symbol_funcptrEPv"]
pub unsafe extern "C" fn get_symbol_funcptr_humble(funcptr: *mut c_void) -> *mut c_char {
    crate::ffi::guard_or(std::ptr::null_mut(), || symbol_of(funcptr))
}
