//! Traced publishers.

use crate::handles::Handles;
use ros2_client::dds::rustdds::no_key::DataWriterCdr;
use serde::Serialize;
use std::sync::Arc;
use tracetools::api;

struct Inner<M: Serialize> {
    writer: DataWriterCdr<M>,
    handles: Handles,
    topic: String,
}

/// A publisher on one topic. Cheap to clone (clones share the DDS writer), usable from callbacks.
///
/// Each [`publish`](Publisher::publish) emits `rclcpp_publish`, `rcl_publish` and `rmw_publish`
/// with the DDS source timestamp the sample is written with, then, once the sample is written,
/// CARET's `ros2_caret:dds_bind_addr_to_stamp` (message address, that source timestamp), as
/// CARET's hook of the DDS write does.
pub struct Publisher<M: Serialize> {
    inner: Arc<Inner<M>>,
}

impl<M: Serialize> Clone for Publisher<M> {
    fn clone(&self) -> Self {
        Publisher { inner: self.inner.clone() }
    }
}

/// Why a sample could not be written.
#[derive(Debug, thiserror::Error)]
#[error("publish on {topic}: {why}")]
pub struct PublishError {
    /// The fully qualified topic name.
    pub topic: String,
    /// The middleware's reason.
    pub why: String,
}

impl<M: Serialize> Publisher<M> {
    pub(crate) fn new(writer: DataWriterCdr<M>, handles: Handles, topic: String) -> Publisher<M> {
        Publisher { inner: Arc::new(Inner { writer, handles, topic }) }
    }

    /// Writes `message` with a source timestamp taken now, and traces it.
    pub fn publish(&self, message: M) -> Result<(), PublishError> {
        let h = &self.inner.handles;
        let address = &message as *const M as usize;
        api::rclcpp_publish(h.object(), address);
        api::rcl_publish(h.rcl(), address);
        let (stamp, nanos) = crate::time::source_now();
        api::rmw_publish(h.rmw(), address, nanos);
        let written = self.inner.writer.write(message, Some(stamp));
        // As CARET's hook of the DDS write: the message's address and the sample's source timestamp.
        api::ros2_caret_dds_bind_addr_to_stamp(address, nanos as u64);
        written.map_err(|e| PublishError { topic: self.inner.topic.clone(), why: e.to_string() })
    }

    /// The fully qualified topic name.
    pub fn topic(&self) -> &str {
        &self.inner.topic
    }

    /// The address that stands for this publisher in the trace (`rcl_publisher_init`'s publisher handle).
    pub fn handle(&self) -> usize {
        self.inner.handles.rcl()
    }
}
