//! Recording ROS 2 processes with rostrace's tracer (no daemon) or LTTng: sessions and their
//! directories, the control files that traced processes poll, the environment that makes them
//! trace, running a command under a recording, and what a recording holds.
//!
//! The `rostrace` CLI (`record`, `create`, `start`, `stop`, `pause`, `resume`, `snapshot`,
//! `list`, `lib`, `demo`) and the Python package (`rostrace.record`, `rostrace.info`) are
//! front ends over this crate: it returns errors and messages, and prints nothing.
//!
//! ```no_run
//! let opts = rostrace_session::Options { path: Some("/tmp/traces".into()), ..Default::default() };
//! let lib = rostrace_session::find_library()?;
//! let mut quiet = rostrace_session::Quiet;
//! let r = rostrace_session::record(&opts, None, &["my_ros2_program".into()], &lib, None, &mut quiet)?;
//! println!("{} ({})", r.dir.display(), if r.recorded { "recorded" } else { "empty" });
//! # Ok::<(), String>(())
//! ```
#![deny(missing_docs)]

mod cache;
mod control;
mod embedded;
mod environment;
pub mod info;
mod library;
mod lttng;
mod options;
mod rclpy;
mod recorders;
mod recording;
mod rotation;
mod run;
pub mod summary;

pub use cache::{cache_dir, private_subdir, usable_path, write_once};
pub use control::{
    control, create, default_path, list, session_dir, snapshot, timestamped, write_control, Controlled, Created,
    Listed, Verb,
};
pub use embedded::Embedded;
pub use environment::traced_env;
pub use library::{find_library, set_embedded_library, LIB_VAR};
pub use lttng::{lttng_provider_check, lttng_provider_dir};
pub use options::{distro_or_env, Backend, Options, Rotate, KERNEL_PRESET, LIGHT_EVENTS};
pub use rclpy::RCLPY_VAR;
pub use recording::{Message, Recording};
pub use rotation::{chunks, Rotated, CHUNK_PREFIX};
pub use run::{exit_code_of, record, signal_name, wait_passing_signals, Observer, Passing, Quiet, Received, Recorded};
