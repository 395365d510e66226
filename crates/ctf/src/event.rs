//! An event as readers hand it out: a view of its class, time, contexts and payload in the
//! stream file's bytes, borrowed until the reader moves on.

use crate::decode::Node;
use crate::packet::PacketInfo;
use crate::schema::{EventClass, StreamClass};
use crate::types::Ty;
use crate::value::{FieldValue, StructRef};
use std::path::Path;
use std::sync::Arc;

/// The current event of a reader (see [`StreamReader::current`]).
pub(crate) struct Current<'a, 'r> {
    pub class: &'a Arc<EventClass>,
    pub sc: Option<&'a StreamClass>,
    pub ts: u64,
    pub ts_ns: Option<i64>,
    pub packet: &'r PacketInfo,
    pub pkt_nodes: &'r [Node],
    /// Nodes of the stream context, the event context and the payload.
    pub scopes: [&'r [Node]; 3],
    /// The file's data.
    pub data: &'a [u8],
    /// The index of the file's trace in its set.
    pub trace: usize,
}

/// An event: its class, time, contexts and payload, borrowed from the reader until it advances.
#[derive(Clone, Copy)]
pub struct Event<'r> {
    pub(crate) class: &'r Arc<EventClass>,
    pub(crate) sc: Option<&'r StreamClass>,
    pub(crate) data: &'r [u8],
    pub(crate) path: &'r Path,
    pub(crate) packet: &'r PacketInfo,
    pub(crate) pkt_nodes: &'r [Node],
    pub(crate) ctx: &'r [Node],
    pub(crate) ectx: &'r [Node],
    pub(crate) payload: &'r [Node],
    pub(crate) ts: u64,
    pub(crate) ts_ns: Option<i64>,
    pub(crate) trace_index: usize,
}

impl<'r> Event<'r> {
    /// Event class name, such as `ros2:callback_start`.
    #[inline]
    pub fn name(&self) -> &'r str {
        &self.class.name
    }

    /// The event class.
    #[inline]
    pub fn class(&self) -> &'r Arc<EventClass> {
        self.class
    }

    /// Time in nanoseconds from the clock's origin (the Unix epoch for LTTng), if the stream has a clock.
    #[inline]
    pub fn timestamp(&self) -> Option<i64> {
        self.ts_ns
    }

    /// Clock value in cycles.
    pub fn cycles(&self) -> u64 {
        self.ts
    }

    /// Position of the trace in its set.
    pub fn trace_index(&self) -> usize {
        self.trace_index
    }

    /// The data stream file.
    pub fn stream_path(&self) -> &'r Path {
        self.path
    }

    /// Byte offset of the current packet in the stream file.
    pub fn packet_offset(&self) -> u64 {
        self.packet.offset
    }

    /// `cpu_id` of the packet context, if any.
    #[inline]
    pub fn cpu_id(&self) -> Option<u64> {
        self.packet.cpu_id
    }

    #[inline]
    fn scope(&self, ty: Option<&'r Ty>, nodes: &'r [Node]) -> Option<StructRef<'r>> {
        let s = ty?.as_struct()?;
        if nodes.is_empty() {
            return None;
        }
        Some(StructRef::new(s, nodes, self.data))
    }

    /// The payload.
    #[inline]
    pub fn payload(&self) -> Option<StructRef<'r>> {
        self.scope(self.class.fields.as_ref(), self.payload)
    }

    /// Payload member by position (see `EventClass::field_index`).
    #[inline]
    pub fn field_at(&self, i: usize) -> Option<FieldValue<'r>> {
        self.payload()?.field_at(i)
    }

    /// Payload member by position as an unsigned integer (see [`StructRef::u64_at`]).
    #[inline]
    pub fn u64_at(&self, i: usize) -> Option<u64> {
        self.payload()?.u64_at(i)
    }

    /// Payload member by name (without leading underscore).
    pub fn field(&self, name: &str) -> Option<FieldValue<'r>> {
        self.payload()?.field(name)
    }

    /// The per-stream event context (`vpid`, `vtid`, `procname` for ROS 2 sessions).
    #[inline]
    pub fn stream_context(&self) -> Option<StructRef<'r>> {
        self.scope(self.sc.and_then(|s| s.event_context.as_ref()), self.ctx)
    }

    /// The event-specific context.
    pub fn event_context(&self) -> Option<StructRef<'r>> {
        self.scope(self.class.context.as_ref(), self.ectx)
    }

    /// A context member by name, from the event-specific context, then the stream's.
    pub fn context_field(&self, name: &str) -> Option<FieldValue<'r>> {
        self.event_context().and_then(|s| s.field(name)).or_else(|| self.stream_context().and_then(|s| s.field(name)))
    }

    /// The packet context of the packet this event is in.
    pub fn packet_context(&self) -> Option<StructRef<'r>> {
        self.scope(self.sc.and_then(|s| s.packet_context.as_ref()), self.pkt_nodes)
    }
}
