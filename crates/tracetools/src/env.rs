//! The environment the tracer reads: the contract between a recorder (`rostrace record`,
//! `rostrace demo`, the session control) and the traced processes. Each name is defined here
//! once; the recorder sets them with these constants.

/// Where to write (turns the embedded tracer on): the session directory.
pub const SESSION_DIR: &str = "ROSTRACE_SESSION_DIR";
/// `lttng`: the LTTng-UST backend instead of the embedded tracer.
pub const BACKEND: &str = "ROSTRACE_BACKEND";
/// The value of [`BACKEND`] that selects LTTng-UST.
pub const BACKEND_LTTNG: &str = "lttng";
/// The events to record (comma-separated patterns, `*` wildcards; default all).
pub const EVENTS: &str = "ROSTRACE_EVENTS";
/// The distribution whose ABI the process uses (else `ROS_DISTRO`, else Rolling's).
pub const DISTRO: &str = "ROSTRACE_DISTRO";
/// ROS 2's own variable, set by every setup script: the ABI when [`DISTRO`] is not set.
pub const ROS_DISTRO: &str = "ROS_DISTRO";
/// Bytes of each thread's ring.
pub const BUFFER_SIZE: &str = "ROSTRACE_BUFFER_SIZE";
/// Bytes the process may use for its rings and the initialization store.
pub const MEMORY_BUDGET: &str = "ROSTRACE_MEMORY_BUDGET";
/// Flight recorder: bytes of the events kept in memory (written on a snapshot and at exit).
pub const SNAPSHOT: &str = "ROSTRACE_SNAPSHOT";
/// `monotonic`: read `CLOCK_MONOTONIC` rather than the TSC.
pub const CLOCK: &str = "ROSTRACE_CLOCK";
/// The LTTng-UST provider library to load (LTTng backend).
pub const LTTNG_PROVIDER: &str = "ROSTRACE_LTTNG_PROVIDER";
/// Filters: nodes, topics and processes recorded or not, each a colon-separated list of regular
/// expressions (see [`crate::tracer::check_filter`]; docs/recording.md, "Filters").
pub const SELECT_NODES: &str = "ROSTRACE_SELECT_NODES";
/// See [`SELECT_NODES`].
pub const IGNORE_NODES: &str = "ROSTRACE_IGNORE_NODES";
/// See [`SELECT_NODES`].
pub const SELECT_TOPICS: &str = "ROSTRACE_SELECT_TOPICS";
/// See [`SELECT_NODES`].
pub const IGNORE_TOPICS: &str = "ROSTRACE_IGNORE_TOPICS";
/// See [`SELECT_NODES`].
pub const IGNORE_PROCESSES: &str = "ROSTRACE_IGNORE_PROCESSES";
