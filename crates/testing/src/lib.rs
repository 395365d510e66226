//! Tracing in Rust tests: the processes a test starts are recorded by rostrace's embedded tracer
//! (no daemon, no LTTng), the recording is analyzed as `rostrace analyze` does, and the test
//! asserts on the analysis, as ros2_tracing's `TraceTestCase` and Python's `rostrace.testing` do.
//! Each limit is checked by `rostrace check`'s evaluation (`rostrace_analysis::check`), so a
//! failure says the value measured and the limit, as `rostrace check` does.
//!
//! ```no_run
//! use rostrace_testing::{Callback, Topic, Tracing};
//! use std::process::Command;
//! use std::time::Duration;
//!
//! let mut t = Tracing::new("target/trace-controller").unwrap();
//! let controller = t.spawn(Command::new("ros2").args(["run", "my_pkg", "controller"])).unwrap();
//! // ... drive the system; processes still running at `finish` are interrupted, then waited for
//! let traced = t.finish().unwrap();
//! traced.assert_no_drops();
//! traced.assert_callback(
//!     Callback::node("/controller").timer_period(Duration::from_millis(10)).runs_at_least(100).p99_below(Duration::from_millis(2)),
//! );
//! traced.assert_topic(Topic::new("/cmd_vel").latency_p99_below(Duration::from_millis(5)));
//! ```
#![deny(missing_docs)]

mod limits;
mod tracing;

pub use limits::{Callback, Limits, Path, Topic};
pub use tracing::{Traced, Tracing};
