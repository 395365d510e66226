//! The traced ROS 2 context: one DDS participant per context, like `rclcpp::Context`.

use crate::handles::Handles;
use crate::{Error, Result};
use ros2_client::dds::rustdds;
use ros2_client::ContextOptions;
use std::sync::Arc;

/// The largest DDS domain id ROS 2 accepts.
pub const MAX_DOMAIN_ID: u16 = 232;

/// The domain id a `ROS_DOMAIN_ID` value names: `Some(0)` when empty, `None` when it is not
/// one (0 to [`MAX_DOMAIN_ID`]), as rcl reads it.
pub fn domain_id(v: &str) -> Option<u16> {
    let v = v.trim();
    if v.is_empty() {
        return Some(0);
    }
    v.parse::<u16>().ok().filter(|d| *d <= MAX_DOMAIN_ID)
}

/// The DDS domain `ROS_DOMAIN_ID` names (0 when unset or empty), as rcl reads it, or why it
/// names none.
pub fn env_domain() -> std::result::Result<u16, String> {
    let v = std::env::var("ROS_DOMAIN_ID").unwrap_or_default();
    domain_id(&v).ok_or_else(|| format!("ROS_DOMAIN_ID={v:?} is not a DDS domain (0 to {MAX_DOMAIN_ID})"))
}

/// [`env_domain`], as a context creation error.
pub fn domain_from_env() -> Result<u16> {
    env_domain().map_err(|why| Error::Create { what: "context".into(), why })
}

/// What the nodes of one context share.
pub(crate) struct Shared {
    pub(crate) ros: ros2_client::Context,
    /// The DDS publisher the traced data writers belong to (so the source timestamp of each sample is ours).
    pub(crate) dds_publisher: rustdds::Publisher,
    handles: Handles,
}

/// A ROS 2 context over one DDS domain participant. Creating it emits `rcl_init`.
#[derive(Clone)]
pub struct Context {
    pub(crate) shared: Arc<Shared>,
}

impl Context {
    /// A context on the domain of `ROS_DOMAIN_ID` (0 when unset), as rcl does.
    pub fn new() -> Result<Context> {
        Context::with_domain(domain_from_env()?)
    }

    /// A context on DDS domain `domain` (0 to 232). The first context of the process also emits
    /// CARET's `caret_init` and `rmw_implementation`, as CARET's libcaret.so does in an rclcpp process.
    pub fn with_domain(domain: u16) -> Result<Context> {
        let what = || format!("context on domain {domain}");
        let ros = ros2_client::Context::with_options(ContextOptions::new().domain_id(domain))
            .map_err(|e| Error::Create { what: what(), why: e.to_string() })?;
        let qos = rustdds::QosPolicies::from(ros2_client::DEFAULT_PUBLISHER_QOS);
        let dds_publisher = ros
            .domain_participant()
            .create_publisher(&qos)
            .map_err(|e| Error::Create { what: what(), why: e.to_string() })?;
        let shared = Arc::new(Shared { ros, dds_publisher, handles: Handles::new() });
        tracetools::api::rcl_init(shared.handles.object());
        crate::caret::process_init();
        Ok(Context { shared })
    }

    /// The DDS domain id.
    pub fn domain_id(&self) -> u16 {
        self.shared.ros.domain_id()
    }

    /// The address that stands for this context in the trace (`rcl_init`'s context handle).
    pub fn handle(&self) -> usize {
        self.shared.handles.object()
    }
}
