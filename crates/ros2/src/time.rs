//! DDS source timestamps as the trace records them.

use ros2_client::dds::rustdds::Timestamp;
use ros2_client::ros_time::ROSTime;

/// A source timestamp for a sample about to be written, and the nanoseconds since the epoch the
/// trace records for it.
///
/// RTPS time has 2^-32 s resolution, and implementations may convert nanoseconds to it and back
/// differently (RustDDS truncates both ways, so its own round trip loses up to 1 ns; Fast DDS
/// truncates on receipt too; others round). The fraction written here is the smallest at or
/// above the nanosecond, so every receiver that truncates or rounds gets exactly the nanoseconds
/// recorded at publication, and a take matches its publish across DDS implementations.
pub(crate) fn source_now() -> (Timestamp, i64) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(0));
    (stamp_of(nanos), nanos)
}

/// The RTPS timestamp of `nanos` since the epoch, with the fraction rounded up.
fn stamp_of(nanos: i64) -> Timestamp {
    let nanos = nanos.max(0) as u64;
    let (secs, sub) = (nanos / 1_000_000_000, nanos % 1_000_000_000);
    let frac = (sub << 32).div_ceil(1_000_000_000);
    Timestamp::from_ticks((secs << 32) + frac)
}

/// Nanoseconds since the epoch of a received sample's source time, 0 when absent.
pub(crate) fn ros_nanos(t: Option<ROSTime>) -> i64 {
    t.map_or(0, |t| t.to_nanos())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Truncating and rounding decoders both give back the nanoseconds.
    #[test]
    fn fraction_round_trips() {
        for nanos in [
            0i64,
            1,
            2,
            3,
            999_999_999,
            1_700_000_000_123_456_789,
            1_700_000_000_999_999_999,
            1_633_891_126_851_470_196,
        ] {
            let ticks = stamp_of(nanos).to_ticks();
            let (secs, frac) = ((ticks >> 32) as i64, ticks & 0xffff_ffff);
            let truncated = secs * 1_000_000_000 + ((frac * 1_000_000_000) >> 32) as i64;
            let rounded = secs * 1_000_000_000 + ((frac * 1_000_000_000 + (1 << 31)) >> 32) as i64;
            assert_eq!((truncated, rounded), (nanos, nanos), "{nanos}");
            assert_eq!(ros_nanos(ROSTime::try_from(stamp_of(nanos)).ok()), nanos);
        }
        let mut x = 12345u64;
        for _ in 0..100_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let nanos = (x >> 4) as i64 % 4_000_000_000_000_000_000;
            let ticks = stamp_of(nanos).to_ticks();
            let (secs, frac) = ((ticks >> 32) as i64, ticks & 0xffff_ffff);
            assert_eq!(secs * 1_000_000_000 + ((frac * 1_000_000_000) >> 32) as i64, nanos);
        }
    }
}
