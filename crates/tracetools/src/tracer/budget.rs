//! The tracer's memory: a ring per recording thread and the initialization events kept for
//! replay, within `ROSTRACE_MEMORY_BUDGET` together; the sizes from the environment.

use crate::ring::Ring;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

/// The rings of the session's threads and the memory they and the initialization store take.
pub(super) struct Rings {
    ring_size: usize,
    budget: usize,
    allocated: AtomicUsize,
    rings: Mutex<Vec<Arc<Ring>>>,
    /// The trace only counts the process's events (it could not be opened whole): no ring.
    counting_only: bool,
    /// Set, with the condition notified, when a thread records its first event: the writer
    /// wakes at once and flushes often for a while.
    wake: (Mutex<bool>, Condvar),
}

static RINGS: OnceLock<Rings> = OnceLock::new();

/// Sets up the rings of the session (once), sized from the environment.
pub(super) fn set_up(counting_only: bool) {
    let _ = RINGS.set(Rings {
        ring_size: env_size(crate::env::BUFFER_SIZE, 1 << 20),
        budget: env_size(crate::env::MEMORY_BUDGET, 256 << 20),
        allocated: AtomicUsize::new(0),
        rings: Mutex::new(Vec::new()),
        counting_only,
        wake: (Mutex::new(false), Condvar::new()),
    });
}

/// The rings of the session, once it is set up.
#[inline]
pub(super) fn rings() -> Option<&'static Rings> {
    RINGS.get()
}

impl Rings {
    /// A ring for the calling thread, within the memory budget.
    pub(super) fn register(&self) -> Option<Arc<Ring>> {
        if self.counting_only {
            return None;
        }
        let size = self.ring_size.max(4096).next_power_of_two();
        if self.allocated.fetch_add(size, Ordering::Relaxed) + size > self.budget {
            self.allocated.fetch_sub(size, Ordering::Relaxed);
            return None;
        }
        let mut rings = self.rings.lock().unwrap_or_else(|e| e.into_inner());
        let ring = Arc::new(Ring::new(size, tid(), rings.len() as u32));
        rings.push(ring.clone());
        drop(rings);
        self.wake_writer();
        Some(ring)
    }

    /// Every ring so far, in the order they were taken.
    pub(super) fn all(&self) -> Vec<Arc<Ring>> {
        self.rings.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Whether the store of initialization events, `store` bytes now, may take `cost` bytes more
    /// (counted in the budget): it takes at most half of the budget.
    pub(super) fn take_for_store(&self, store: usize, cost: usize) -> bool {
        if store + cost > self.budget / 2 {
            return false;
        }
        if self.allocated.fetch_add(cost, Ordering::Relaxed) + cost > self.budget {
            self.allocated.fetch_sub(cost, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// Wakes the writer thread (a thread recorded its first event).
    fn wake_writer(&self) {
        *self.wake.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.wake.1.notify_one();
    }

    /// Waits `period`, or less when a thread took a ring; whether one did.
    pub(super) fn wait(&self, period: Duration) -> bool {
        let mut woken = self.wake.0.lock().unwrap_or_else(|e| e.into_inner());
        if !*woken {
            woken = self.wake.1.wait_timeout(woken, period).unwrap_or_else(|e| e.into_inner()).0;
        }
        std::mem::take(&mut *woken)
    }
}

/// The calling thread's id (the events' `vtid`).
pub(super) fn tid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

fn env_size(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| parse_size(&v)).unwrap_or(default)
}

/// `1048576`, `512K`, `4M`, `1G`.
pub fn parse_size(v: &str) -> Option<usize> {
    let v = v.trim();
    let (num, mult) = match v.chars().last()? {
        'k' | 'K' => (&v[..v.len() - 1], 1 << 10),
        'm' | 'M' => (&v[..v.len() - 1], 1 << 20),
        'g' | 'G' => (&v[..v.len() - 1], 1 << 30),
        _ => (v, 1),
    };
    num.trim().parse::<usize>().ok().map(|n| n * mult)
}
