//! DDS source timestamps as the trace records them.

use ros2_client::dds::rustdds::Timestamp;
use ros2_client::ros_time::ROSTime;

/// A source timestamp for a sample about to be written, and the nanoseconds since the epoch the
/// receiving side will see for it (RTPS time has 2^-32 s resolution; both sides convert the same way).
pub(crate) fn source_now() -> (Timestamp, i64) {
    let stamp = Timestamp::now();
    (stamp, ros_nanos(ROSTime::try_from(stamp).ok()))
}

/// Nanoseconds since the epoch of a received sample's source time, 0 when absent.
pub(crate) fn ros_nanos(t: Option<ROSTime>) -> i64 {
    t.map_or(0, |t| t.to_nanos())
}
