//! Safety at the C boundary: no panic unwinds out, null pointers and bad strings are recorded safely.

use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f`, swallowing any panic (a traced application must never crash because of tracing).
#[inline]
pub fn guard(f: impl FnOnce()) {
    let _ = catch_unwind(AssertUnwindSafe(f));
}

/// Runs `f`, returning `default` if it panics.
#[inline]
pub fn guard_or<T>(default: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(default)
}

/// The bytes of a C string; `(null)` for a null pointer, as LTTng records it.
///
/// # Safety
/// `p` is null or points to a NUL-terminated string.
pub unsafe fn c_str<'a>(p: *const c_char) -> &'a [u8] {
    if p.is_null() {
        b"(null)"
    } else {
        CStr::from_ptr(p).to_bytes()
    }
}

/// The bytes of a GID (16, or 24 up to Jazzy: the process's ABI); zeros for a null pointer.
///
/// # Safety
/// `p` is null or points to a GID of the process's ABI.
pub unsafe fn gid<'a>(p: *const u8) -> &'a [u8] {
    let n = crate::distro::current().gid_size;
    if p.is_null() {
        &[0; crate::distro::MAX_GID_SIZE][..n]
    } else {
        std::slice::from_raw_parts(p, n)
    }
}

/// An array of `n` pointers as addresses; empty for a null pointer.
///
/// # Safety
/// `p` is null or points to `n` pointers.
pub unsafe fn pointers(p: *const *const c_void, n: usize) -> Vec<usize> {
    if p.is_null() {
        Vec::new()
    } else {
        std::slice::from_raw_parts(p, n).iter().map(|x| *x as usize).collect()
    }
}

/// A C string of `b` up to its first NUL.
pub fn to_cstring(b: &[u8]) -> CString {
    let n = b.iter().position(|c| *c == 0).unwrap_or(b.len());
    CString::new(&b[..n]).unwrap_or_default()
}

/// A GID array from `b`, as large as any ABI's (cut or padded with zeros).
pub fn gid_array(b: &[u8]) -> [u8; crate::distro::MAX_GID_SIZE] {
    let mut g = [0; crate::distro::MAX_GID_SIZE];
    let n = b.len().min(crate::distro::MAX_GID_SIZE);
    g[..n].copy_from_slice(&b[..n]);
    g
}
