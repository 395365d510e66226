//! What a data packet tells besides its events: its header and context values, and the events
//! and packets its counters say were lost.

use std::path::PathBuf;

/// Magic number of a data packet header.
pub const PACKET_MAGIC: u64 = 0xC1FC_1FC1;

/// Events or packets that the tracer could not record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LossKind {
    /// Events discarded (the `events_discarded` counter went up by this many).
    Events(u64),
    /// Packets missing (gap in `packet_seq_num`).
    Packets(u64),
}

/// A loss of events or packets in one stream, with the time range it happened in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loss {
    /// The data stream file.
    pub path: PathBuf,
    /// What was lost.
    pub kind: LossKind,
    /// Start of the range (ns from origin), when the packets have timestamps.
    pub begin_ns: Option<i64>,
    /// End of the range (ns from origin), when the packets have timestamps.
    pub end_ns: Option<i64>,
}

/// Packet-level values of the current packet.
#[derive(Debug, Clone, Copy, Default)]
pub struct PacketInfo {
    /// Byte offset of the packet in the file.
    pub offset: u64,
    /// Content size in bits.
    pub content_bits: u64,
    /// Packet size in bits.
    pub packet_bits: u64,
    /// `timestamp_begin`, in cycles.
    pub ts_begin: Option<u64>,
    /// `timestamp_end`, in cycles.
    pub ts_end: Option<u64>,
    /// `events_discarded` counter.
    pub events_discarded: Option<u64>,
    /// `packet_seq_num`.
    pub seq_num: Option<u64>,
    /// `cpu_id`.
    pub cpu_id: Option<u64>,
    /// `stream_id` of the packet header.
    pub stream_id: u64,
    /// `stream_instance_id` of the packet header.
    pub stream_instance_id: Option<u64>,
}
