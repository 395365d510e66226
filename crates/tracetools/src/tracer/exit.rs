//! The end of the process: the trace written whole at exit, and on a fatal signal before the
//! signal acts (a crash, or SIGTERM and SIGINT that the program does not handle itself).

use super::{emit, session};
use std::sync::atomic::{AtomicBool, Ordering};

/// Writes the trace at exit and on fatal signals (once the session started).
pub(super) fn install() {
    // SAFETY: registering a plain extern "C" function, which catches panics.
    unsafe { libc::atexit(at_exit) };
    install_signal_handlers();
}

extern "C" fn at_exit() {
    crate::ffi::guard(session::flush);
}

const FATAL: [libc::c_int; 7] =
    [libc::SIGSEGV, libc::SIGBUS, libc::SIGILL, libc::SIGFPE, libc::SIGABRT, libc::SIGTERM, libc::SIGINT];
static mut PREVIOUS: [std::mem::MaybeUninit<libc::sigaction>; 7] = [std::mem::MaybeUninit::uninit(); 7];

/// SIGTERM and SIGINT stop a program that does not handle them; one that does (rclcpp) shuts
/// down cleanly and writes everything at exit.
fn stops_politely(sig: libc::c_int) -> bool {
    sig == libc::SIGTERM || sig == libc::SIGINT
}
static HANDLING: AtomicBool = AtomicBool::new(false);
/// How long a fatal signal's handler waits for the writer, at most (ms).
const FATAL_WAIT_MS: u32 = 2000;

fn install_signal_handlers() {
    for (k, sig) in FATAL.iter().enumerate() {
        // SAFETY: reading and setting signal dispositions; PREVIOUS is written before the handler can run.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(*sig, std::ptr::null(), &mut old) != 0 {
                continue;
            }
            // Leave signals the application handles or ignores itself (SIGTERM, SIGINT) alone.
            if stops_politely(*sig) && old.sa_sigaction != libc::SIG_DFL {
                continue;
            }
            (*std::ptr::addr_of_mut!(PREVIOUS))[k] = std::mem::MaybeUninit::new(old);
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_fatal as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESETHAND;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(*sig, &sa, std::ptr::null_mut());
        }
    }
}

extern "C" fn on_fatal(sig: libc::c_int, _info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // Installed with SA_RESETHAND, this handler finds the default disposition when the signal
    // reached it directly. Otherwise the application installed its own handler later (rclcpp
    // does, after rcl_init) and calls this one as the previous handler: SIGTERM and SIGINT are
    // then its to handle (a clean shutdown writes everything at exit), nothing is done here.
    if stops_politely(sig) {
        // SAFETY: reading the current disposition.
        let current = unsafe {
            let mut cur: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, std::ptr::null(), &mut cur);
            cur.sa_sigaction
        };
        if current != libc::SIG_DFL {
            return;
        }
    }
    // Write what the rings hold, then let the signal act. The writer thread may be writing (it
    // holds the lock for a moment, longer when the CPU is busy): wait for it, bounded (the
    // crash may have happened in the writer itself).
    if !HANDLING.swap(true, Ordering::SeqCst) && session::started() {
        emit::set_recording(false);
        for _ in 0..FATAL_WAIT_MS {
            if session::try_end() {
                break;
            }
            let ms = libc::timespec { tv_sec: 0, tv_nsec: 1_000_000 };
            // SAFETY: nanosleep is async-signal-safe.
            unsafe { libc::nanosleep(&ms, std::ptr::null_mut()) };
        }
    }
    if let Some(k) = FATAL.iter().position(|x| *x == sig) {
        // SAFETY: restoring the disposition saved at install time, then re-raising.
        unsafe {
            let prev = (*std::ptr::addr_of!(PREVIOUS))[k].assume_init();
            libc::sigaction(sig, &prev, std::ptr::null_mut());
            libc::raise(sig);
        }
    }
}
