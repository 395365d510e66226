//! Where events go, chosen once per process from its environment: nowhere, the embedded
//! tracer (a session directory is set), or LTTng-UST. The first question of every tracepoint.

use super::{emit, exit, session};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;

/// Where events go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Nowhere.
    Off,
    /// The embedded tracer.
    Embedded,
    /// LTTng-UST.
    Lttng,
}

const UNINIT: u8 = 0;
const OFF: u8 = 1;
const EMBEDDED: u8 = 2;
const LTTNG: u8 = 3;

static MODE: AtomicU8 = AtomicU8::new(UNINIT);

/// Read by the header's macros before calling in: 0 once tracing is known to be off.
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static ros_trace_maybe_active: AtomicU8 = AtomicU8::new(1);
static INIT: Mutex<()> = Mutex::new(());

/// The backend of this process (set up on first use).
#[inline]
pub fn mode() -> Mode {
    match MODE.load(Ordering::Relaxed) {
        EMBEDDED => Mode::Embedded,
        LTTNG => Mode::Lttng,
        OFF => Mode::Off,
        _ => init(),
    }
}

/// Whether tracing is known to be off in this process: the one check of the disabled path.
#[inline(always)]
pub fn is_off() -> bool {
    MODE.load(Ordering::Relaxed) == OFF
}

#[cold]
fn init() -> Mode {
    let _g = INIT.lock().unwrap_or_else(|e| e.into_inner());
    match MODE.load(Ordering::Acquire) {
        EMBEDDED => return Mode::Embedded,
        LTTNG => return Mode::Lttng,
        OFF => return Mode::Off,
        _ => {}
    }
    let m = choose();
    if m == Mode::Off {
        ros_trace_maybe_active.store(0, Ordering::Relaxed);
    }
    MODE.store(
        match m {
            Mode::Off => OFF,
            Mode::Embedded => EMBEDDED,
            Mode::Lttng => LTTNG,
        },
        Ordering::Release,
    );
    m
}

fn choose() -> Mode {
    if std::env::var("TRACETOOLS_RUNTIME_DISABLE").is_ok_and(|v| v == "1") {
        if std::env::var("TRACETOOLS_VERBOSE").is_ok_and(|v| v == "1") {
            eprintln!("ROS 2 tracing disabled");
        }
        return Mode::Off;
    }
    if let Err(e) = crate::distro::from_env() {
        eprintln!("rostrace: {e}: not tracing (set ROSTRACE_DISTRO to one of them)");
        return Mode::Off;
    }
    let patterns = std::env::var(crate::env::EVENTS).unwrap_or_else(|_| "*".into());
    emit::set_events(&patterns.split(',').collect::<Vec<_>>());
    match std::env::var(crate::env::BACKEND).as_deref() {
        Ok(crate::env::BACKEND_LTTNG) => match crate::lttng::load() {
            Ok(()) => Mode::Lttng,
            Err(e) => {
                eprintln!("rostrace: LTTng backend unavailable, not tracing: {e}");
                Mode::Off
            }
        },
        _ => match std::env::var_os(crate::env::SESSION_DIR) {
            Some(_) if !crate::filter::setup(&String::from_utf8_lossy(&session::procname())) => Mode::Off,
            Some(dir) => match session::start(PathBuf::from(dir)) {
                Ok(()) => {
                    exit::install();
                    // SAFETY: registering a plain extern "C" function, called in the child of a fork.
                    unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
                    let on = session::control_state(session::root()) == session::Control::Recording;
                    // (A process whose trace only counts has nothing to replay.)
                    emit::keep_init_events(!session::only_counts());
                    emit::set_recording(on);
                    Mode::Embedded
                }
                Err(e) => {
                    eprintln!("rostrace: cannot trace: {e}");
                    Mode::Off
                }
            },
            None => Mode::Off,
        },
    }
}

extern "C" fn in_child() {
    // A child forked without exec does not trace: the writer thread did not survive the fork.
    MODE.store(OFF, Ordering::Relaxed);
    ros_trace_maybe_active.store(0, Ordering::Relaxed);
    emit::set_recording(false);
}

/// The directory this process's trace is written to, when the embedded tracer is on.
pub fn trace_dir() -> Option<PathBuf> {
    let _ = mode();
    session::dir()
}
