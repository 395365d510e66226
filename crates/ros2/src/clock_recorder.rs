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
    /// Periods with no sample recorded (no `/clock` yet, or none since the sample before).
    pub skipped: u64,
}

/// The QoS of the `/clock` subscription: best effort, volatile, the last sample only. A
/// best-effort reader matches reliable and best-effort writers alike (rclpy's and rclcpp's
/// `/clock` publishers are reliable by default, Gazebo's best effort).
pub fn clock_qos() -> ros2_client::QosProfile {
    ros2_client::QosProfile::subscription_default()
}

/// Runs the recorder on `domain` until `stop` is set: a node `clock_recorder` (namespace `/`)
/// subscribed to `/clock`. The first `/clock` received is recorded as `sim_time`, and then the
/// first one received once `period` (CARET: 1 s) of wall time has passed since the last one
/// recorded, as it is received: so samples are `period` apart (to one publication period), and
/// the event's system time and the sim time it carries are the same instant (CARET's recorder
/// records, on a wall timer, the last clock received, up to a publication period old). A `period`
/// wall timer watches: a period with nothing recorded (no `/clock` yet, or none since: the
/// publisher paused or ended) is counted, and said on stderr once; so is sim time going backwards.
pub fn run_clock_recorder(domain: u16, period: Duration, stop: &AtomicBool) -> Result<ClockRecorderStats> {
    let ctx = Context::with_domain(domain)?;
    let mut node = ctx.create_node("/", "clock_recorder")?;
    let started = Instant::now();
    // Nanoseconds from `started` to the last sample recorded, plus one: 0 while there is none.
    let last = Arc::new(AtomicU64::new(0));
    let received = Arc::new(AtomicU64::new(0));
    let recorded = Arc::new(AtomicU64::new(0));
    let skipped = Arc::new(AtomicU64::new(0));
    let since = move |at: u64| started.elapsed().saturating_sub(Duration::from_nanos(at.saturating_sub(1)));
    {
        let (last, received, recorded) = (last.clone(), received.clone(), recorded.clone());
        let mut previous = i64::MIN;
        node.create_subscription("/clock", "rosgraph_msgs/Clock", &clock_qos(), move |c: Clock, _| {
            received.fetch_add(1, Ordering::Relaxed);
            let at = last.load(Ordering::Relaxed);
            if at != 0 && since(at) < period {
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
            last.store(started.elapsed().as_nanos() as u64 + 1, Ordering::Relaxed);
            recorded.fetch_add(1, Ordering::Relaxed);
        })?;
    }
    {
        let (last, received, skipped) = (last.clone(), received.clone(), skipped.clone());
        let mut warned = false;
        node.create_timer(period, move || {
            let at = last.load(Ordering::Relaxed);
            // A sample is due a period after the last; the publication after it may take a while.
            let late = if at == 0 { true } else { since(at) >= period * 2 };
            if late {
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
