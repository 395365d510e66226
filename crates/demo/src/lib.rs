//! The demo system: a small ROS 2 system written in Rust with ros2-client, traced with rostrace.
//!
//! Two processes, seven nodes, shaped like the systems users trace:
//!
//! - `sensing`: `/sensing/lidar` (100 Hz timer → `/sensing/points_raw`), `/sensing/imu` (50 Hz timer →
//!   `/sensing/imu`), `/sensing/lidar_filter` (`/sensing/points_raw` → `/sensing/points_filtered`) and
//!   `/map/map_server` (service `/map/speed_limit`);
//! - `control`: `/localization/fusion` (two inputs, `/sensing/points_filtered` and `/sensing/imu` →
//!   `/localization/pose`, on its own executor thread), `/planning/planner` (20 Hz timer using the
//!   latest pose → `/control/cmd_vel`, and a client of `/map/speed_limit` at 2 Hz) and
//!   `/control/actuator` (the sink of `/control/cmd_vel`).
//!
//! Timers tick at fixed phases on the monotonic clock (lidar at 0, IMU at 5 ms, planner at 7 ms
//! past the multiples of their periods), so that two runs see the same timer phases and
//! `rostrace diff` compares like with like. Callbacks do simulated work of varying length. Each process counts what it published and
//! received, so that a test can check every received message against the trace.

#![deny(missing_docs)]

mod control;
pub mod msgs;
mod sensing;
mod spin;
mod tally;
pub mod work;

pub use tally::Tally;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// One process of the demo.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The lidar, IMU, lidar filter and map server.
    Sensing,
    /// Fusion, planner and actuator.
    Control,
}

impl Role {
    /// Both processes, in start order.
    pub const ALL: [Role; 2] = [Role::Sensing, Role::Control];

    /// The process name (`sensing`, `control`).
    pub fn name(self) -> &'static str {
        match self {
            Role::Sensing => "sensing",
            Role::Control => "control",
        }
    }

    /// The role of a process name.
    pub fn from_name(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.name() == name)
    }
}

/// The demo's nodes (fully qualified names).
pub const NODES: [&str; 7] = [
    "/sensing/lidar",
    "/sensing/imu",
    "/sensing/lidar_filter",
    "/map/map_server",
    "/localization/fusion",
    "/planning/planner",
    "/control/actuator",
];

/// The demo's topics, with their publishing and subscribing nodes.
pub const TOPICS: [(&str, &str, &[&str]); 5] = [
    ("/sensing/points_raw", "/sensing/lidar", &["/sensing/lidar_filter"]),
    ("/sensing/imu", "/sensing/imu", &["/localization/fusion"]),
    ("/sensing/points_filtered", "/sensing/lidar_filter", &["/localization/fusion"]),
    ("/localization/pose", "/localization/fusion", &["/planning/planner"]),
    ("/control/cmd_vel", "/planning/planner", &["/control/actuator"]),
];

/// The demo's timers: node and period.
pub const TIMERS: [(&str, Duration); 3] = [
    ("/sensing/lidar", Duration::from_millis(10)),
    ("/sensing/imu", Duration::from_millis(20)),
    ("/planning/planner", Duration::from_millis(50)),
];

/// The demo's service: name, server node, client node.
pub const SERVICE: (&str, &str, &str) = ("/map/speed_limit", "/map/map_server", "/planning/planner");

/// Runs one process of the demo on DDS domain `domain` for `duration` (or until `stop` is set), and
/// returns what it counted.
pub fn run(role: Role, domain: u16, duration: Duration, stop: &AtomicBool) -> rostrace_ros2::Result<Tally> {
    match role {
        Role::Sensing => sensing::run(domain, duration, stop),
        Role::Control => control::run(domain, duration, stop),
    }
}
