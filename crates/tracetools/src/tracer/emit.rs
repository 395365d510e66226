//! Recording an event: whether it is wanted, then its time and payload into the calling
//! thread's ring (an initialization event is kept for replay first). The whole of a
//! tracepoint's cost to the traced program is here.

use super::{budget, init};
use crate::catalog::{self, TRACEPOINTS};
use crate::clock;
use crate::ring::Ring;
use rostrace_ctf_write::Payload;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Whether the session records now (see [`set_recording`]).
static RECORDING: AtomicBool = AtomicBool::new(false);
/// The events recorded: a bit per catalog id.
static MASK: [AtomicU64; 4] = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];
/// Whether initialization events are kept for replay (see [`init`]), recorded or not.
static KEEP_INIT: AtomicBool = AtomicBool::new(false);

/// Whether event `id` is recorded now (embedded tracer).
#[inline]
pub fn event_on(id: u16) -> bool {
    RECORDING.load(Ordering::Relaxed) && MASK[(id / 64) as usize & 3].load(Ordering::Relaxed) & (1 << (id % 64)) != 0
}

/// Whether `id` must reach [`emit`]: recorded now, or an initialization event kept for later.
#[inline]
pub fn wanted(id: u16) -> bool {
    event_on(id)
        || (KEEP_INIT.load(Ordering::Relaxed)
            && MASK[(id / 64) as usize & 3].load(Ordering::Relaxed) & (1 << (id % 64)) != 0
            && is_init(id))
}

/// Whether `id` is an initialization event (kept for replay, never evicted from a snapshot).
#[inline]
pub(super) fn is_init(id: u16) -> bool {
    TRACEPOINTS.get(id as usize).is_some_and(|t| t.init)
}

/// Starts or stops recording (the session stays set up).
pub fn set_recording(on: bool) {
    RECORDING.store(on, Ordering::Relaxed);
}

/// Whether the embedded tracer records now.
pub fn recording() -> bool {
    RECORDING.load(Ordering::Relaxed)
}

/// Keeps initialization events for replay, or not (a process whose trace only counts has
/// nothing to replay).
pub(super) fn keep_init_events(on: bool) {
    KEEP_INIT.store(on, Ordering::Relaxed);
}

/// Records only the events whose name matches one of `patterns` (and that the process's
/// distribution has).
pub fn set_events(patterns: &[&str]) {
    let abi = crate::distro::current();
    let ids = catalog::matching(patterns).into_iter().filter(|id| abi.has(&TRACEPOINTS[*id as usize]));
    for m in &MASK {
        m.store(0, Ordering::Relaxed);
    }
    for id in ids {
        MASK[(id / 64) as usize].fetch_or(1 << (id % 64), Ordering::Relaxed);
    }
}

/// Tracepoints of the catalog that are enabled now (embedded tracer), by name.
pub fn enabled_events() -> Vec<String> {
    TRACEPOINTS.iter().enumerate().filter(|(i, _)| event_on(*i as u16)).map(|(_, t)| t.full_name()).collect()
}

/// What a thread keeps to record: its ring (taken at its first event), the buffer its events'
/// payloads are encoded into.
struct Local {
    ring: Option<Arc<Ring>>,
    scratch: Vec<u8>,
    count: u32,
    registered: bool,
}

impl Drop for Local {
    fn drop(&mut self) {
        if let Some(r) = &self.ring {
            r.alive.store(false, Ordering::Release);
        }
    }
}

thread_local! {
    static LOCAL: RefCell<Local> = const { RefCell::new(Local { ring: None, scratch: Vec::new(), count: 0, registered: false }) };
}

/// Events dropped because their thread could not get a ring within the memory budget (or the
/// process's trace only counts): counted in the process's loss file.
static UNBUFFERED: AtomicU64 = AtomicU64::new(0);

/// Events dropped so far for want of a ring (see [`UNBUFFERED`]).
pub(super) fn unbuffered() -> u64 {
    UNBUFFERED.load(Ordering::Relaxed)
}

fn cpu() -> u32 {
    // SAFETY: sched_getcpu has no preconditions.
    let c = unsafe { libc::sched_getcpu() };
    c.max(0) as u32
}

/// Records an event: takes the time, encodes the payload with `f`, appends to this thread's ring.
#[inline]
pub fn emit(id: u16, f: impl FnOnce(&mut Payload<&mut Vec<u8>>)) {
    let ts = clock::stamp();
    if KEEP_INIT.load(Ordering::Relaxed) && is_init(id) {
        keep_init(id, ts, f);
        return;
    }
    push_local(id, ts, |buf| f(&mut Payload::append_to(buf)));
}

/// An initialization event: kept for replay, and recorded if recording.
#[cold]
fn keep_init(id: u16, stamp: u64, f: impl FnOnce(&mut Payload<&mut Vec<u8>>)) {
    if let Some(payload) = init::keep(id, stamp, event_on(id), |buf| f(&mut Payload::append_to(buf))) {
        push_local(id, stamp, |buf| buf.extend_from_slice(&payload));
    }
}

/// Appends one event to the calling thread's ring (registered on first use), with the payload
/// `encode` writes. Events of threads without a ring are counted as discarded.
#[inline]
fn push_local(id: u16, ts: u64, encode: impl FnOnce(&mut Vec<u8>)) {
    let _ = LOCAL.try_with(|l| {
        // A tracepoint reached from inside the tracer (allocator hooks...) is dropped.
        let Ok(mut l) = l.try_borrow_mut() else { return };
        if !l.registered {
            l.registered = true;
            l.ring = budget::rings().and_then(|r| r.register());
        }
        let l = &mut *l;
        let Some(ring) = &l.ring else {
            UNBUFFERED.fetch_add(1, Ordering::Relaxed);
            return;
        };
        if l.count & 255 == 0 {
            ring.cpu.store(cpu(), Ordering::Relaxed);
        }
        l.count = l.count.wrapping_add(1);
        l.scratch.clear();
        encode(&mut l.scratch);
        ring.push(id, ts, &l.scratch);
    });
}
