//! The event clock: CLOCK_MONOTONIC in ns, and its offset to the Unix epoch (as LTTng's metadata gives it).

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

/// Realtime minus monotonic, in ns: the clock offset of the metadata.
pub fn offset() -> i64 {
    // The smallest bracket of three samples.
    (0..3)
        .map(|_| {
            let a = read(libc::CLOCK_MONOTONIC);
            let r = read(libc::CLOCK_REALTIME);
            let b = read(libc::CLOCK_MONOTONIC);
            (b - a, r - (a + (b - a) / 2))
        })
        .min_by_key(|x| x.0)
        .map(|x| x.1)
        .unwrap_or(0)
}

/// Realtime now, in ns since the Unix epoch.
pub fn realtime() -> i64 {
    read(libc::CLOCK_REALTIME)
}
