//! A per-thread, single-producer single-consumer ring of event records: the traced thread
//! appends without locks or system calls, the writer thread drains. A full ring drops the
//! event and counts it.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

const HEADER: usize = 16;
const PAD: u16 = u16::MAX;

/// A value alone on its cache line: the producer's and the consumer's positions do not share one.
#[repr(align(64))]
struct Line<T>(T);

/// The ring of one thread.
pub struct Ring {
    buf: Box<[UnsafeCell<u8>]>,
    mask: usize,
    head: Line<AtomicUsize>,
    tail: Line<AtomicUsize>,
    /// The producer's last view of `tail` (only the producer uses it): it reads `tail`, a line
    /// the consumer writes, only when that view leaves too little room.
    seen_tail: Line<UnsafeCell<usize>>,
    /// Events dropped because the ring was full.
    pub discarded: AtomicU64,
    /// Thread id.
    pub vtid: i32,
    /// CPU the thread ran on recently.
    pub cpu: AtomicU32,
    /// Stream number (data file `channel0_<n>`).
    pub index: u32,
    /// False once the thread has exited.
    pub alive: AtomicBool,
}

// SAFETY: one producer writes bytes in [head, ...) before publishing head with Release; the
// consumer reads bytes in [tail, head) after loading head with Acquire, then publishes tail.
unsafe impl Sync for Ring {}
// SAFETY: the buffer is owned (a box) and the other fields are atomics or plain values: nothing
// in it is tied to the thread that made it.
unsafe impl Send for Ring {}

impl Ring {
    /// A ring of `capacity` bytes (rounded up to a power of two, at least 4 KiB).
    pub fn new(capacity: usize, vtid: i32, index: u32) -> Ring {
        let cap = capacity.max(4096).next_power_of_two();
        let buf: Box<[UnsafeCell<u8>]> = (0..cap).map(|_| UnsafeCell::new(0)).collect();
        // Touch every page now, so that the traced thread does not take page faults later.
        for off in (0..cap).step_by(4096) {
            // SAFETY: the buffer is not shared yet.
            unsafe { std::ptr::write_volatile(buf[off].get(), 0) };
        }
        Ring {
            buf,
            mask: cap - 1,
            head: Line(AtomicUsize::new(0)),
            tail: Line(AtomicUsize::new(0)),
            seen_tail: Line(UnsafeCell::new(0)),
            discarded: AtomicU64::new(0),
            vtid,
            cpu: AtomicU32::new(0),
            index,
            alive: AtomicBool::new(true),
        }
    }

    /// Capacity in bytes.
    pub fn capacity(&self) -> usize {
        self.mask + 1
    }

    fn ptr(&self, off: usize) -> *mut u8 {
        self.buf[off].get()
    }

    /// Appends a record (producer side). Returns false, counting a discarded event, when full.
    #[inline]
    pub fn push(&self, id: u16, ts: u64, payload: &[u8]) -> bool {
        let need = (HEADER + payload.len() + 7) & !7;
        let cap = self.capacity();
        let head = self.head.0.load(Ordering::Relaxed);
        let off = head & self.mask;
        let room = cap - off;
        let total = if need <= room { need } else { room + need };
        // SAFETY: only the producer (this thread) touches `seen_tail`.
        let seen = unsafe { &mut *self.seen_tail.0.get() };
        if head + total - *seen > cap {
            *seen = self.tail.0.load(Ordering::Acquire);
        }
        if need > cap / 2 || head + total - *seen > cap {
            self.discarded.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        let mut h = head;
        // SAFETY: [h, h + total) is free (checked against tail) and only this thread writes it.
        unsafe {
            if need > room {
                std::ptr::copy_nonoverlapping((room as u32).to_le_bytes().as_ptr(), self.ptr(off), 4);
                std::ptr::copy_nonoverlapping(PAD.to_le_bytes().as_ptr(), self.ptr(off + 4), 2);
                h += room;
            }
            let o = h & self.mask;
            let p = self.ptr(o);
            std::ptr::copy_nonoverlapping((need as u32).to_le_bytes().as_ptr(), p, 4);
            std::ptr::copy_nonoverlapping(id.to_le_bytes().as_ptr(), p.add(4), 2);
            let pad = (need - HEADER - payload.len()) as u16;
            std::ptr::copy_nonoverlapping(pad.to_le_bytes().as_ptr(), p.add(6), 2);
            std::ptr::copy_nonoverlapping(ts.to_le_bytes().as_ptr(), p.add(8), 8);
            std::ptr::copy_nonoverlapping(payload.as_ptr(), p.add(HEADER), payload.len());
        }
        self.head.0.store(h + need, Ordering::Release);
        true
    }

    /// Hands every record to `f(id, ts, payload)` (consumer side), then frees their space.
    pub fn drain(&self, mut f: impl FnMut(u16, u64, &[u8])) -> usize {
        let head = self.head.0.load(Ordering::Acquire);
        let mut t = self.tail.0.load(Ordering::Relaxed);
        let mut n = 0;
        while t < head {
            let off = t & self.mask;
            // SAFETY: [t, head) was published by the producer.
            let (len, id, pad, ts) = unsafe {
                let p = self.ptr(off);
                let mut l = [0u8; 4];
                let mut i = [0u8; 2];
                let mut d = [0u8; 2];
                let mut s = [0u8; 8];
                std::ptr::copy_nonoverlapping(p, l.as_mut_ptr(), 4);
                std::ptr::copy_nonoverlapping(p.add(4), i.as_mut_ptr(), 2);
                if u16::from_le_bytes(i) != PAD {
                    std::ptr::copy_nonoverlapping(p.add(6), d.as_mut_ptr(), 2);
                    std::ptr::copy_nonoverlapping(p.add(8), s.as_mut_ptr(), 8);
                }
                (
                    u32::from_le_bytes(l) as usize,
                    u16::from_le_bytes(i),
                    u16::from_le_bytes(d) as usize,
                    u64::from_le_bytes(s),
                )
            };
            if len == 0 {
                break;
            }
            if id != PAD {
                // SAFETY: the record lies within the ring, contiguous.
                let payload =
                    unsafe { std::slice::from_raw_parts(self.ptr(off + HEADER) as *const u8, len - HEADER - pad) };
                f(id, ts, payload);
                n += 1;
            }
            t += len;
        }
        self.tail.0.store(t, Ordering::Release);
        n
    }

    /// Whether there is nothing to drain.
    pub fn is_empty(&self) -> bool {
        self.head.0.load(Ordering::Acquire) == self.tail.0.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn wraps_and_counts_drops() {
        let r = Ring::new(4096, 1, 0);
        let mut got = Vec::new();
        for round in 0..50u64 {
            for k in 0..7u64 {
                let payload = vec![k as u8; (k * 37 % 300) as usize];
                assert!(r.push(k as u16, round * 10 + k, &payload));
            }
            r.drain(|id, ts, p| got.push((id, ts, p.len())));
        }
        assert_eq!(got.len(), 350);
        assert_eq!(got[8], (1, 11, 37));
        // Full: events are dropped and counted.
        let mut ok = 0;
        for _ in 0..100 {
            ok += r.push(1, 0, &[0; 100]) as u32;
        }
        assert_eq!(ok as u64 + r.discarded.load(Ordering::Relaxed), 100);
        assert!(r.discarded.load(Ordering::Relaxed) > 0);
    }

    #[test]
    fn concurrent_producer_consumer() {
        let r = Arc::new(Ring::new(1 << 14, 1, 0));
        let p = r.clone();
        let h = std::thread::spawn(move || {
            for i in 0..200_000u64 {
                p.push((i % 100) as u16, i, &i.to_le_bytes());
            }
        });
        let mut last = None;
        let mut seen = 0u64;
        loop {
            let done = h.is_finished();
            r.drain(|_, ts, p| {
                assert_eq!(u64::from_le_bytes(p.try_into().unwrap()), ts);
                assert!(last.is_none_or(|l| ts > l));
                last = Some(ts);
                seen += 1;
            });
            if done && r.is_empty() {
                break;
            }
        }
        h.join().unwrap();
        assert_eq!(seen + r.discarded.load(Ordering::Relaxed), 200_000);
    }
}
