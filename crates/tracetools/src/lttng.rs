//! The LTTng-UST backend: the provider library built from the catalog, loaded at run time so
//! that libtracetools works on machines without LTTng.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

include!(concat!(env!("OUT_DIR"), "/lttng_gen.rs"));

static TABLE: OnceLock<Table> = OnceLock::new();

unsafe fn sym(h: *mut c_void, name: &CStr) -> Option<*mut c_void> {
    let p = libc::dlsym(h, name.as_ptr());
    (!p.is_null()).then_some(p)
}

/// Calls `f` with the provider's functions, if loaded.
#[inline]
pub fn with<R>(f: impl FnOnce(&Table) -> R) -> Option<R> {
    TABLE.get().map(f)
}

/// Where the provider library of the process's distribution may be: `$ROSTRACE_LTTNG_PROVIDER`
/// (the library, or a directory holding `librostrace_lttng_<distro>.so`), beside this library,
/// where it was built.
fn candidates() -> Vec<String> {
    let file = crate::lttng_provider_name(crate::distro::current());
    let mut v = Vec::new();
    if let Ok(p) = std::env::var(crate::env::LTTNG_PROVIDER) {
        let path = std::path::Path::new(&p);
        if path.is_dir() {
            v.push(path.join(&file).to_string_lossy().into_owned());
        } else {
            v.push(p);
        }
    }
    // SAFETY: dladdr on the address of a function of this library.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(candidates as *const c_void, &mut info) != 0 && !info.dli_fname.is_null() {
            let me = CStr::from_ptr(info.dli_fname).to_string_lossy().into_owned();
            if let Some(dir) = std::path::Path::new(&me).parent() {
                v.push(dir.join(&file).to_string_lossy().into_owned());
            }
        }
    }
    v.push(crate::lttng_provider(crate::distro::current()).to_string_lossy().into_owned());
    v
}

/// Loads the provider; an error says why the LTTng backend is unavailable.
pub fn load() -> Result<(), String> {
    if TABLE.get().is_some() {
        return Ok(());
    }
    // liblttng-ust, loaded with the provider, registers with the session daemon in its
    // constructor; without a registration timeout it returns at once and the first events are
    // missed. Wait up to 3 s for a live daemon, as a statically linked provider would.
    if std::env::var_os("LTTNG_UST_REGISTER_TIMEOUT").is_none() {
        std::env::set_var("LTTNG_UST_REGISTER_TIMEOUT", "3000");
    }
    let mut why = Vec::new();
    for path in candidates() {
        if !std::path::Path::new(&path).exists() {
            why.push(format!("{path}: not found"));
            continue;
        }
        let c = CString::new(path.clone()).map_err(|e| e.to_string())?;
        // SAFETY: loading a shared library by path.
        let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        if h.is_null() {
            // SAFETY: dlerror returns a C string or null.
            let e = unsafe { libc::dlerror() };
            let msg = if e.is_null() {
                "dlopen failed".into()
            } else {
                // SAFETY: not null: dlerror's message, NUL-terminated, valid until the next dl call.
                unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
            };
            why.push(format!("{path}: {msg}"));
            continue;
        }
        // SAFETY: `h` is the provider library.
        match unsafe { load_table(h) } {
            Some(t) => {
                let _ = TABLE.set(t);
                return Ok(());
            }
            None => why.push(format!("{path}: missing functions")),
        }
    }
    Err(why.join("; "))
}
