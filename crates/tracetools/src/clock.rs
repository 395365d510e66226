//! The event clock. Events carry CLOCK_MONOTONIC nanoseconds (LTTng's clock, with its offset to
//! the Unix epoch in the metadata). Reading that clock costs a vDSO call; where the kernel's
//! monotonic clock itself counts the CPU's time-stamp counter (clocksource `tsc`, an invariant
//! TSC), the tracepoint reads the TSC instead ([`stamp`]) and the writer thread converts each
//! stamp to the kernel clock's nanoseconds ([`StampClock`]) with calibration points (TSC,
//! CLOCK_MONOTONIC) it takes every flush period: readers still get the kernel clock.

use std::sync::atomic::{AtomicBool, Ordering};

#[allow(clippy::unnecessary_cast)] // time_t and c_long are not i64 everywhere
fn read(clock: libc::clockid_t) -> i64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid timespec.
    unsafe { libc::clock_gettime(clock, &mut t) };
    t.tv_sec as i64 * 1_000_000_000 + t.tv_nsec as i64
}

/// CLOCK_MONOTONIC now, in ns.
#[inline]
pub fn monotonic() -> u64 {
    read(libc::CLOCK_MONOTONIC) as u64
}

/// Two clocks read at the same instant: `inner` between two reads of `outer`, the tightest
/// bracket of three, as (the middle of the bracket, `inner`); None if `outer` went backwards
/// every time.
fn bracket(outer: impl Fn() -> u64, inner: impl Fn() -> u64) -> Option<(u64, u64)> {
    (0..3)
        .filter_map(|_| {
            let a = outer();
            let v = inner();
            let b = outer();
            (b >= a).then(|| (b - a, (a + (b - a) / 2, v)))
        })
        .min_by_key(|x| x.0)
        .map(|x| x.1)
}

/// Realtime minus monotonic, in ns: the clock offset of the metadata.
pub fn offset() -> i64 {
    bracket(monotonic, || realtime() as u64).map_or(0, |(mono, real)| real as i64 - mono as i64)
}

/// Realtime now, in ns since the Unix epoch.
pub fn realtime() -> i64 {
    read(libc::CLOCK_REALTIME)
}

/// Whether [`stamp`] reads the TSC.
static TSC: AtomicBool = AtomicBool::new(false);

/// An event's stamp: the TSC when the tracer uses it ([`use_tsc`]), else CLOCK_MONOTONIC ns.
/// [`StampClock::ns`] turns it into CLOCK_MONOTONIC ns.
#[inline(always)]
pub fn stamp() -> u64 {
    #[cfg(target_arch = "x86_64")]
    if TSC.load(Ordering::Relaxed) {
        // SAFETY: rdtsc exists on every x86_64 CPU.
        return unsafe { core::arch::x86_64::_rdtsc() };
    }
    monotonic()
}

/// Whether the TSC can stand for the kernel's monotonic clock here: x86_64, the kernel's
/// clocksource is `tsc` (it found the TSC invariant and synchronized across CPUs, and counts
/// CLOCK_MONOTONIC with it), and `ROSTRACE_CLOCK` is not `monotonic`.
pub fn tsc_usable() -> bool {
    if !cfg!(target_arch = "x86_64") || std::env::var(crate::env::CLOCK).is_ok_and(|v| v == "monotonic") {
        return false;
    }
    let source = std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    if !source.is_ok_and(|s| s.trim() == "tsc") {
        return false;
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = cpuinfo.lines().find(|l| l.starts_with("flags")).unwrap_or("");
    flags.split_whitespace().any(|f| f == "constant_tsc") && flags.split_whitespace().any(|f| f == "nonstop_tsc")
}

/// Makes [`stamp`] read the TSC when [`tsc_usable`]; returns whether it does. Called once, by
/// the session before any event is recorded.
pub fn use_tsc() -> bool {
    let on = tsc_usable();
    TSC.store(on, Ordering::Relaxed);
    on
}

/// Whether stamps are TSC values.
pub fn stamps_are_tsc() -> bool {
    TSC.load(Ordering::Relaxed)
}

#[cfg(target_arch = "x86_64")]
fn tsc_ordered() -> u64 {
    // SAFETY: lfence and rdtsc exist on every x86_64 CPU. The fence keeps the read after every
    // load before it (the rings' heads: the stamps of the events drained are older).
    unsafe {
        core::arch::x86_64::_mm_lfence();
        let t = core::arch::x86_64::_rdtsc();
        core::arch::x86_64::_mm_lfence();
        t
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn tsc_ordered() -> u64 {
    monotonic()
}

/// Calibration points kept: with one per flush period (20 ms), the last 20 s.
const POINTS: usize = 1024;

/// Converts stamps to CLOCK_MONOTONIC ns: a line through consecutive calibration points (TSC,
/// ns), each read as the midpoint of the tightest of three TSC brackets around a clock read.
/// The map is one continuous, increasing, piecewise-linear function, fixed once its points
/// exist, so the stamps of every thread keep their order and their converted times never
/// change. A stamp newer than the last point takes a new point first (read after the stamp's
/// event was loaded: later); stamps older than the oldest point kept follow the oldest segment.
/// No allocation: usable from a signal handler.
pub struct StampClock {
    tsc: bool,
    /// (TSC, ns), in time order from `first`, `len` of them (a circular buffer).
    points: Box<[(u64, u64); POINTS]>,
    first: usize,
    len: usize,
}

impl Default for StampClock {
    fn default() -> Self {
        StampClock::new()
    }
}

impl StampClock {
    /// The converter of this process's stamps (identity when they are ns already).
    pub fn new() -> StampClock {
        let mut c = StampClock { tsc: stamps_are_tsc(), points: Box::new([(0, 0); POINTS]), first: 0, len: 0 };
        c.sample();
        c
    }

    fn at(&self, k: usize) -> (u64, u64) {
        self.points[(self.first + k) % POINTS]
    }

    /// Takes a calibration point now (nothing when stamps are ns).
    pub fn sample(&mut self) {
        if !self.tsc {
            return;
        }
        let Some(p) = bracket(tsc_ordered, monotonic) else { return };
        if self.len > 0 {
            let last = self.at(self.len - 1);
            // Strictly increasing in both, or the map would not be.
            if p.0 <= last.0 || p.1 <= last.1 {
                return;
            }
        }
        if self.len == POINTS {
            self.first = (self.first + 1) % POINTS;
            self.len -= 1;
        }
        self.points[(self.first + self.len) % POINTS] = p;
        self.len += 1;
    }

    /// CLOCK_MONOTONIC ns of `stamp`.
    pub fn ns(&mut self, stamp: u64) -> u64 {
        if !self.tsc {
            return stamp;
        }
        if self.len < 2 || stamp > self.at(self.len - 1).0 {
            self.sample();
        }
        if self.len < 2 {
            // No slope yet (a clock that did not move): the one point's time.
            return self.at(0).1;
        }
        // The segment holding the stamp, searched from the newest (where drained events are).
        let mut k = self.len - 1;
        while k > 1 && self.at(k - 1).0 > stamp {
            k -= 1;
        }
        let (t0, n0) = self.at(k - 1);
        let (t1, n1) = self.at(k);
        let (dt, dn) = ((t1 - t0) as u128, (n1 - n0) as u128);
        if stamp >= t0 {
            // Within the segment, or past the newest point (when no later point could be taken).
            n0 + ((stamp - t0) as u128 * dn / dt) as u64
        } else {
            n0.saturating_sub(((t0 - stamp) as u128 * dn / dt) as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_convert_to_the_monotonic_clock() {
        // Whatever the machine's clock, the converter gives monotonic ns that keep the stamps' order.
        let on = use_tsc();
        let mut c = StampClock::new();
        let mut last = 0;
        for round in 0..20 {
            let before = monotonic();
            let s = stamp();
            let after = monotonic();
            std::thread::sleep(std::time::Duration::from_millis(2));
            if round % 3 == 0 {
                c.sample();
            }
            let ns = c.ns(s);
            // Within the calibration's error of when it was read.
            assert!(ns + 2_000 >= before && ns <= after + 2_000, "tsc {on}: {ns} not in [{before}, {after}]");
            assert!(ns >= last, "tsc {on}: {ns} after {last}");
            last = ns;
        }
        // Stamps converted again give the same time.
        let s = stamp();
        let a = c.ns(s);
        c.sample();
        assert_eq!(c.ns(s), a);
    }
}
