//! What a streamed analysis is ([`crate::stream`]): whether an analysis streams, how its slices
//! are cut, and what the report says of it. Apart from the streaming itself, so that the
//! options and the report, which the streaming makes, can name them.

use serde::Serialize;

/// Whether an analysis is streamed ([`Options::streaming`](crate::Options::streaming)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Streaming {
    /// In memory, whatever the recording's size (the default of the library).
    #[default]
    Never,
    /// Streamed when the analysis asks for nothing a streamed one leaves out (docs/streaming.md)
    /// and the recording's stream files hold more than [`AUTO_BYTES`], or at least two slices
    /// ([`Options::slice_bytes`](crate::Options::slice_bytes)) of a recording full of messages:
    /// one whose files' last packets hold at least [`AUTO_MESSAGE_SHARE`] of messages published
    /// among their ROS 2 events. (An analysis in memory links every message of the recording at once, and
    /// takes the longer the more there are; one of few messages and many processes is faster in
    /// memory, and smaller, up to where memory runs short.)
    Auto,
    /// Streamed whenever the analysis asks for nothing a streamed one leaves out.
    Always,
}

/// The size of recording from which [`Streaming::Auto`] streams whatever it holds: 1 GiB of
/// stream files, whose analysis in memory needs about as much again.
pub const AUTO_BYTES: u64 = 1 << 30;

/// The share of messages published among the ROS 2 events of a recording's last packets from
/// which [`Streaming::Auto`] streams a recording of two slices or more: a tenth (a chain of
/// nodes passing messages on has about a sixth; Autoware's callback traces, a twenty-fifth).
pub const AUTO_MESSAGE_SHARE: f64 = 0.1;

/// How much of the recording a slice holds, about: 64 MiB of stream files.
pub const SLICE_BYTES: u64 = 64 << 20;

/// How far around its slice a slice's pass reads: a callback run longer than this, or a message
/// taken later than this after its publication, is not seen whole (2 s).
pub const MARGIN_NS: i64 = 2_000_000_000;

/// How a streamed analysis was made ([`crate::Report::streamed`]).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Streamed {
    /// Slices of time.
    pub slices: u64,
    /// Each slice's length (ns).
    pub slice_ns: i64,
    /// The margin read on either side of a slice (ns): see [`MARGIN_NS`].
    pub margin_ns: i64,
    /// The relative accuracy of percentiles of more than 1,024 values.
    pub percentile_relative_error: f64,
    /// What a streamed report leaves out.
    pub not_computed: Vec<&'static str>,
    /// Readings of the recording: 1, or 2 when `analyze`'s longest paths were followed in a
    /// second reading (the whole recording's architecture was not its first slice's).
    pub readings: u32,
    /// Initialization events read again: those a slice's pass met before its reading, from
    /// where what the slice before it on its thread kept of the declarations ends (docs/streaming.md).
    /// At most about as many as the recording holds, however many slices.
    pub declarations_again: u64,
}
