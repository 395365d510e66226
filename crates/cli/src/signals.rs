//! The signals that stop rostrace while it records or follows a command: counted by handlers
//! that only touch atomics, acted on by the waiting loop ([`rostrace_session::Passing`]), so
//! that the command is stopped step by step and its trace always finished.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};

/// The exit code of a command stopped by Ctrl-C (128 + SIGINT), for `record` and `demo` alike.
pub const INTERRUPTED_EXIT: u8 = 130;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static INTS: AtomicU32 = AtomicU32::new(0);
static TERMS: AtomicU32 = AtomicU32::new(0);
static FIRST_TERM: AtomicI32 = AtomicI32::new(0);

/// The signals that ask rostrace to end besides Ctrl-C: a supervisor's (`docker stop`,
/// systemd), a closed terminal's, Ctrl-\.
const TERM_SIGNALS: [libc::c_int; 3] = [libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

extern "C" fn on_sigint(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::Relaxed);
    INTS.fetch_add(1, Ordering::Relaxed);
}

extern "C" fn on_term(sig: libc::c_int) {
    let _ = FIRST_TERM.compare_exchange(0, sig, Ordering::Relaxed, Ordering::Relaxed);
    TERMS.fetch_add(1, Ordering::Relaxed);
}

/// From now on Ctrl-C does not stop rostrace: it reaches the traced processes (same process
/// group), rostrace waits for them, finishes the trace and exits with [`INTERRUPTED_EXIT`].
pub fn catch_ctrl_c() {
    // SAFETY: the handler only updates atomics; `signal` on glibc restarts interrupted waits.
    unsafe { libc::signal(libc::SIGINT, on_sigint as *const () as libc::sighandler_t) };
}

/// From now on neither Ctrl-C nor SIGTERM, SIGHUP or SIGQUIT stops rostrace: the waiting loop
/// passes them on to the traced command ([`rostrace_session::Passing`]) and waits for it, so
/// that the trace is finished.
pub fn catch_stop_signals() {
    catch_ctrl_c();
    for sig in TERM_SIGNALS {
        // SAFETY: the handler only updates atomics.
        unsafe { libc::signal(sig, on_term as *const () as libc::sighandler_t) };
    }
}

/// Whether Ctrl-C was pressed since [`catch_ctrl_c`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Every stop signal received so far.
pub fn received() -> rostrace_session::Received {
    rostrace_session::Received {
        ints: INTS.load(Ordering::Relaxed),
        terms: TERMS.load(Ordering::Relaxed),
        first_term: FIRST_TERM.load(Ordering::Relaxed),
    }
}

/// Whether any stop signal came (Ctrl-C included).
pub fn stopping() -> bool {
    let r = received();
    r.ints > 0 || r.terms > 0
}

/// The exit code of rostrace ended by SIGTERM, SIGHUP or SIGQUIT (128 + the first of them),
/// if one came.
pub fn terminated_exit() -> Option<u8> {
    match FIRST_TERM.load(Ordering::Relaxed) {
        0 => None,
        sig => Some((128 + sig) as u8),
    }
}
