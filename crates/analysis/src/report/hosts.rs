//! The hosts of recordings of several hosts, and how their clocks were aligned (the alignment
//! itself is the `hosts` module's, before the analysis).

use serde::Serialize;

/// How a host's clock correction was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockSource {
    /// The host the others are aligned to.
    Reference,
    /// From the messages exchanged both ways with the reference host, or with a host aligned to
    /// it (see [`HostClock::via`]).
    Estimated,
    /// Given by the user (`--clock-offset`).
    Given,
    /// Its recorded clock kept: the messages do not tell its offset (one way, or none).
    Recorded,
}

/// A host of the recordings and its clock's alignment to the reference host.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostClock {
    /// The host (the traces' `hostname`).
    pub host: String,
    /// Traces of the host.
    pub traces: usize,
    /// Their indices in the trace set.
    #[serde(skip)]
    pub trace_ids: Vec<u32>,
    /// How its times were corrected.
    pub source: ClockSource,
    /// Its clock minus the reference host's, as estimated or given (ns); its times were moved
    /// back by it. 0 for the reference and for a clock kept as recorded.
    pub offset_ns: i64,
    /// The bounds of that offset from the messages (ns), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lower_ns: Option<i64>,
    /// The upper bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upper_ns: Option<i64>,
    /// The estimate's error bound (half the bounds' gap), when both are known: a latency
    /// between this host and the reference host is known within it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_ns: Option<i64>,
    /// How fast its clock ran against the reference's (parts per million), when the messages
    /// show it (a constant offset does not fit them); 0 otherwise.
    #[serde(skip_serializing_if = "is_zero")]
    pub drift_ppm: f64,
    /// The time (the reference's clock, ns) at which the offset is `offset_ns`, with a drift.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_ns: Option<i64>,
    /// Messages matched from the reference host to this one (from `via` when it is given).
    pub messages_in: u64,
    /// Messages from this host to the reference host (to `via`).
    pub messages_out: u64,
    /// The host it was aligned through, when it exchanged messages both ways with another
    /// host aligned to the reference, not with the reference: its offset is its clock's from
    /// that host's composed with that host's, and its error bound the sum of theirs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}
