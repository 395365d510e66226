//! The embedded tracer: which backend is on, per-thread rings, the writer thread that turns
//! them into an LTTng-layout CTF trace, and flushing at exit and on fatal signals.
//!
//! Configuration, from the environment of the traced process:
//! - `ROSTRACE_SESSION_DIR`: where to write (turns the embedded tracer on);
//! - `ROSTRACE_BACKEND`: `embedded` (default) or `lttng`;
//! - `ROSTRACE_EVENTS`: comma-separated `*` patterns of events to record (default: all);
//! - `ROSTRACE_BUFFER_SIZE`: bytes of each thread's ring (default 1 MiB);
//! - `ROSTRACE_MEMORY_BUDGET`: bytes of all rings together and of the initialization events kept
//!   for replay (at most half of it; default 256 MiB); threads beyond it record nothing and their
//!   events are counted as discarded, and initialization events beyond it are not kept (a replay
//!   counts them as discarded);
//! - `ROSTRACE_CLOCK=monotonic`: read CLOCK_MONOTONIC at each event, never the TSC (see `clock`);
//! - `TRACETOOLS_RUNTIME_DISABLE=1`: no tracing at all.
//!
//! A room per job. A tracepoint's path goes through each once: `backend` (is tracing on, and
//! where to), `emit` (is the event wanted; its time and payload into the thread's ring), then
//! the ring; an initialization event is kept by `init` on the way, and a thread's first event
//! takes its ring from `budget`. The writer thread is `session`'s; `exit` writes what is left
//! at exit and on fatal signals.

mod backend;
mod budget;
mod emit;
mod exit;
mod init;
mod session;

pub use crate::clock::{monotonic, tsc_usable};
pub use crate::filter::{check as check_filter, configured_in_env as filters_in_env};
pub use crate::storage::{release, reserve, LOSS_FILE, RESERVE_DIR};
pub use backend::{is_off, mode, trace_dir, Mode};
pub use budget::parse_size;
pub use emit::{emit, enabled_events, event_on, recording, set_events, set_recording, wanted};
pub use session::{
    control_state, current_chunk, flush, Control, CONTROL_FILE, ROTATE_FILE, SNAPSHOT_FILE, WRITE_FAILED_FILE,
};
