//! The executors of a demo process spun for the demo's duration.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Spins `exec` until `duration` has passed or `stop` is set.
pub(crate) fn spin(exec: &mut rostrace_ros2::Executor, duration: Duration, stop: &AtomicBool) {
    let end = Instant::now() + duration;
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= end {
            break;
        }
        exec.spin_for((end - now).min(Duration::from_millis(100)));
    }
}
