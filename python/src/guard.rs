//! What every entry point shares: the exceptions rostrace raises, and the guard that turns a
//! Rust panic into a `RuntimeError` (a file of its own, so that the entry points in every file
//! import it and it imports none of them).

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

pyo3::create_exception!(_rostrace, TraceError, PyValueError, "A trace that cannot be read.");
pyo3::create_exception!(_rostrace, RecordError, PyRuntimeError, "A recording that could not be made.");

/// Runs `f`, turning a panic into a `RuntimeError` (a bug of rostrace's, never the caller's), and
/// giving back the `KeyboardInterrupt` that `Progress::tick` unwound with.
pub(crate) fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let p = match p.downcast::<Interrupted>() {
                Ok(i) => return Err(i.0),
                Err(p) => p,
            };
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown".into());
            Err(PyRuntimeError::new_err(format!("rostrace: internal error (please report it): {msg}")))
        }
    }
}

/// A signal handler's exception (`KeyboardInterrupt` on Ctrl-C) raised while Rust works: it
/// unwinds the work to `guarded`, which gives it to Python as it is.
pub(crate) struct Interrupted(pub(crate) PyErr);
