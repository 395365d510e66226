//! What CARET's `libcaret.so` (caret_trace, LD_PRELOADed into an rclcpp process) records for a
//! process beside the `ros2:` events, so that CARET's analyzer (caret_analyze) reads traces of
//! these nodes like those of a traced rclcpp + DDS process:
//!
//! - once per process, `ros2_caret:caret_init(clock_offset, distribution)`: the tracer's clock
//!   (CLOCK_MONOTONIC, LTTng's and the embedded tracer's event clock) read then, and the ROS 2
//!   distribution (`$ROS_DISTRO`, as caret_trace records it, else the distribution whose event
//!   layout the tracer writes). caret_analyze keeps the runtime events of a process only if that
//!   process recorded `caret_init` (when any process of the trace did).
//! - once per process, `ros2_caret:rmw_implementation`: the middleware, [`RMW_IMPLEMENTATION`].
//! - per publication, `ros2_caret:dds_bind_addr_to_stamp(message, source timestamp)` once the
//!   sample is written (in [`crate::Publisher::publish`]), as caret_trace's hook of the DDS write.
//! - the executors and callback groups, as caret_trace's hooks of rclcpp's constructors and
//!   `CallbackGroup::add_*` record them (caret_analyze gives a node the callbacks of its callback
//!   groups only): `construct_executor` (`single_threaded_executor`, as [`crate::Executor`] is),
//!   each node's one callback group (mutually exclusive, like rclcpp's default group: an executor
//!   runs the callbacks of a node one at a time) with `callback_group_add_timer`/`_subscription`/
//!   `_service`/`_client` as entities are created, and the group's executor when the node is
//!   added to one: from Jazzy through the executor's entities collector
//!   (`executor_entity_collector_to_executor`, `callback_group_to_executor_entity_collector`),
//!   before Jazzy `add_callback_group`, as caret_trace does for each distribution.

use std::sync::{Once, OnceLock};
use tracetools::api;

/// The middleware this layer publishes and takes through, as `rmw_implementation` names it: not an
/// rmw package (ros2-client talks DDS/RTPS itself, over RustDDS), so none of the rmw names.
pub const RMW_IMPLEMENTATION: &str = "ros2_client_rustdds";

static INIT: Once = Once::new();

/// The type of every callback group: each node has one, whose callbacks an executor runs one at a time.
const GROUP_TYPE: &[u8] = b"mutually_exclusive";

/// CLOCK_MONOTONIC now, in ns: the clock of the tracer's events (`init_timestamp`).
pub(crate) fn monotonic_ns() -> i64 {
    tracetools::tracer::monotonic() as i64
}

/// The distribution `caret_init` records.
fn distribution() -> &'static str {
    static D: OnceLock<String> = OnceLock::new();
    D.get_or_init(|| match std::env::var("ROS_DISTRO") {
        Ok(d) if !d.trim().is_empty() => d.trim().to_string(),
        _ => tracetools::distro::current().name.to_string(),
    })
}

/// Whether caret_trace of the distribution records executors through their entities collector
/// (Jazzy and later, by name as caret_analyze compares them: first letter from `j`).
fn collector_events() -> bool {
    distribution().bytes().next().is_some_and(|c| c.to_ascii_lowercase() >= b'j')
}

/// A new executor, `executor` its address and `collector` its entities collector's.
pub(crate) fn executor_created(executor: usize, collector: usize) {
    let now = monotonic_ns();
    api::ros2_caret_construct_executor(executor, b"single_threaded_executor", now);
    if collector_events() {
        api::ros2_caret_executor_entity_collector_to_executor(executor, collector, now);
    }
}

/// The callback group `group` added to `executor` (entities collector `collector`).
pub(crate) fn group_added(executor: usize, collector: usize, group: usize) {
    let now = monotonic_ns();
    if collector_events() {
        api::ros2_caret_callback_group_to_executor_entity_collector(collector, group, GROUP_TYPE, now);
    } else {
        api::ros2_caret_add_callback_group(executor, group, GROUP_TYPE, now);
    }
}

/// Emits `caret_init` and `rmw_implementation`, the first time it is called in the process.
pub(crate) fn process_init() {
    INIT.call_once(|| {
        let now = monotonic_ns();
        api::ros2_caret_rmw_implementation(RMW_IMPLEMENTATION.as_bytes(), now);
        api::ros2_caret_caret_init(now, distribution().as_bytes());
    });
}
