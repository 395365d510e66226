//! ROS 2 nodes in Rust, traced with the standard ROS 2 events.
//!
//! A thin layer over [`ros2_client`] (pure-Rust ROS 2 over RustDDS: no ROS 2 installation needed,
//! interoperates with ROS 2 nodes over DDS/RTPS) that emits, through rostrace's tracer
//! (`tracetools::api`), the events `ros2_tracing` defines for rclcpp/rcl/rmw:
//!
//! - creating a [`Context`], [`Node`], [`Publisher`], subscription, timer, service or client emits the
//!   initialization events (`rcl_init`, `rcl_node_init`, `rmw_publisher_init`, `rcl_publisher_init`,
//!   `rcl_subscription_init`, `rclcpp_subscription_callback_added`, `rcl_timer_init`,
//!   `rclcpp_callback_register` with the callback's Rust type name as its symbol, ...);
//! - the [`Executor`] emits `rclcpp_executor_*`, `rmw_take`/`rcl_take`/`rclcpp_take` with the
//!   sample's DDS source timestamp, and `callback_start`/`callback_end` around every callback;
//! - [`Publisher::publish`] emits `rclcpp_publish`, `rcl_publish` and `rmw_publish` carrying the DDS
//!   source timestamp the sample is written with, so publish and take match exactly across processes;
//! - like CARET's `libcaret.so` in an rclcpp process, each process records `ros2_caret:caret_init`
//!   and `ros2_caret:rmw_implementation` once, each publish `ros2_caret:dds_bind_addr_to_stamp`
//!   (message address, source timestamp), and executors and callback groups their `ros2_caret`
//!   events (each node has one mutually exclusive callback group), so CARET's analyzer
//!   (caret_analyze) reads the trace and builds its architecture;
//! - services emit `rmw_take_request`/`rmw_send_response` with the client GID and sequence number,
//!   clients `rmw_send_request`/`rmw_take_response`.
//!
//! Handles in the events are addresses owned by the Rust objects, stable for their lifetime.
//! Events are recorded when the process runs under a rostrace session (`rostrace record`, or
//! `ROSTRACE_SESSION_DIR` set); otherwise each call costs a branch.
//!
//! ```no_run
//! use rostrace_ros2::{default_qos, Context, Executor};
//! # fn main() -> Result<(), rostrace_ros2::Error> {
//! let ctx = Context::new()?;
//! let mut node = ctx.create_node("/", "talker")?;
//! let publisher = node.create_publisher::<String>("/chatter", "std_msgs/String", &default_qos())?;
//! node.create_timer(std::time::Duration::from_millis(100), move || {
//!     publisher.publish("hello".to_string()).ok();
//! })?;
//! let mut exec = Executor::new()?;
//! exec.add_node(node)?;
//! exec.spin_for(std::time::Duration::from_secs(5));
//! # Ok(()) }
//! ```

#![deny(missing_docs)]

mod caret;
mod clock_recorder;
mod context;
mod entity;
mod executor;
mod handles;
mod names;
mod node;
mod publisher;
mod time;

pub use caret::RMW_IMPLEMENTATION;
pub use clock_recorder::{clock_qos, run_clock_recorder, Clock, ClockRecorderStats};
pub use context::{domain_from_env, domain_id, env_domain, Context, MAX_DOMAIN_ID};
pub use executor::Executor;
pub use node::{Client, Node};
pub use publisher::Publisher;
pub use ros2_client;
pub use ros2_client::{MessageInfo, QosProfile};

/// rclcpp's default QoS: reliable, volatile, keep the last 10 samples.
pub const fn default_qos() -> QosProfile {
    QosProfile::publisher_default()
        .durability(ros2_client::qos::Durability::Volatile)
        .history(ros2_client::qos::History::KeepLast { depth: 10 })
}

/// Why creating or using a traced ROS 2 entity failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A node, topic or service name is not a valid ROS 2 name.
    #[error("invalid ROS 2 name {name:?}: {why}")]
    Name {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        why: String,
    },
    /// The middleware could not create an entity.
    #[error("cannot create {what}: {why}")]
    Create {
        /// The entity, e.g. `publisher /chatter`.
        what: String,
        /// The middleware's reason.
        why: String,
    },
    /// Waiting for work failed.
    #[error("executor: {0}")]
    Io(#[from] std::io::Error),
}

/// Result of this crate's fallible calls.
pub type Result<T> = std::result::Result<T, Error>;
