//! The sim-time recorder, as CARET's `clock_recorder`: a node `clock_recorder` that follows
//! `/clock` (`rosgraph_msgs/Clock`) and, once per second of wall time, records the ROS time of
//! `/clock` (what a `use_sim_time` node's clock says) as `ros2_caret:sim_time(stamp)`; the event's
//! own timestamp is the system time, so the analysis can map system time to sim time.

use crate::{Context, Executor, Result};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `rosgraph_msgs/msg/Clock`: one `builtin_interfaces/Time` (CDR lays the nested struct out flat).
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct Clock {
    /// Seconds.
    pub sec: i32,
    /// Nanoseconds within the second.
    pub nanosec: u32,
}

impl Clock {
    /// Nanoseconds.
    pub fn nanos(&self) -> i64 {
        self.sec as i64 * 1_000_000_000 + self.nanosec as i64
    }
}

/// What a run of the recorder did.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClockRecorderStats {
    /// `/clock` messages received.
    pub received: u64,
    /// `sim_time` events emitted.
    pub recorded: u64,
    /// Ticks whose sample never came (no `/clock` yet, or none since the tick before).
    pub skipped: u64,
}

/// The QoS of the `/clock` subscription: best effort, volatile, the last sample only. A
/// best-effort reader matches reliable and best-effort writers alike (rclpy's and rclcpp's
/// `/clock` publishers are reliable by default, Gazebo's best effort).
pub fn clock_qos() -> ros2_client::QosProfile {
    ros2_client::QosProfile::subscription_default()
}

/// Runs the recorder on `domain` until `stop` is set: a node `clock_recorder` (namespace `/`)
/// subscribed to `/clock`, and a `period` wall timer (CARET: 1 s). Each tick asks for a sample,
/// which the next `/clock` message gives: `sim_time` with its clock, recorded as it is received,
/// so the event's system time and the sim time it carries are the same instant (CARET's recorder
/// records the last clock received at the tick, up to a publication period old). A tick that
/// finds the previous tick's request unserved (no `/clock` yet, or none since: the publisher
/// paused or ended) records nothing, and says so on stderr once; so does sim time going backwards.
pub fn run_clock_recorder(domain: u16, period: Duration, stop: &AtomicBool) -> Result<ClockRecorderStats> {
    let ctx = Context::with_domain(domain)?;
    let mut node = ctx.create_node("/", "clock_recorder")?;
    // Whether a tick asked for a sample that no /clock has given yet.
    let wanted = Arc::new(AtomicBool::new(false));
    let received = Arc::new(AtomicU64::new(0));
    let recorded = Arc::new(AtomicU64::new(0));
    let skipped = Arc::new(AtomicU64::new(0));
    {
        let (wanted, received, recorded) = (wanted.clone(), received.clone(), recorded.clone());
        let mut previous = i64::MIN;
        node.create_subscription("/clock", "rosgraph_msgs/Clock", &clock_qos(), move |c: Clock, _| {
            received.fetch_add(1, Ordering::Relaxed);
            if !wanted.swap(false, Ordering::Relaxed) {
                return;
            }
            let now = c.nanos();
            if now < previous {
                eprintln!(
                    "clock_recorder: sim time went backwards: {:.9} s after {:.9} s",
                    now as f64 / 1e9,
                    previous as f64 / 1e9
                );
            }
            previous = now;
            tracetools::api::ros2_caret_sim_time(now.max(0) as u64);
            recorded.fetch_add(1, Ordering::Relaxed);
        })?;
    }
    {
        let (wanted, received, skipped) = (wanted.clone(), received.clone(), skipped.clone());
        let started = Instant::now();
        let mut warned = false;
        node.create_timer(period, move || {
            if wanted.swap(true, Ordering::Relaxed) {
                // The previous tick's sample never came.
                skipped.fetch_add(1, Ordering::Relaxed);
                if !warned {
                    if received.load(Ordering::Relaxed) == 0 {
                        eprintln!(
                            "clock_recorder: /clock has not been published yet ({:.0} s): sim_time is not recorded until it is",
                            started.elapsed().as_secs_f64()
                        );
                    } else {
                        eprintln!("clock_recorder: /clock stopped: sim_time is not recorded until it comes again");
                    }
                    warned = true;
                }
            } else {
                warned = false;
            }
        })?;
    }
    let mut exec = Executor::new()?;
    exec.add_node(node)?;
    while !stop.load(Ordering::Relaxed) {
        exec.spin_for(Duration::from_millis(100));
    }
    Ok(ClockRecorderStats {
        received: received.load(Ordering::Relaxed),
        recorded: recorded.load(Ordering::Relaxed),
        skipped: skipped.load(Ordering::Relaxed),
    })
}
