//! What a trace's metadata declares: clocks, environment, stream classes and event classes.

use crate::types::{ByteOrder, Ty};
use std::sync::Arc;

/// A clock class.
#[derive(Debug, Clone, PartialEq)]
pub struct Clock {
    /// Name (`monotonic` for LTTng).
    pub name: String,
    /// Description, if given.
    pub description: Option<String>,
    /// UUID, if given.
    pub uuid: Option<[u8; 16]>,
    /// Frequency in Hz.
    pub freq: u64,
    /// Offset from the origin, seconds part (normalized so that `offset_cycles < freq`).
    pub offset_s: i64,
    /// Offset from the origin, cycles part.
    pub offset_cycles: u64,
    /// Precision in cycles.
    pub precision: u64,
    /// Whether the origin is the Unix epoch for every host.
    pub absolute: bool,
    /// Byte offset of its declaration in the metadata text (0 for the default clock).
    pub declared_at: usize,
}

impl Clock {
    /// Nanoseconds of `cycles` at this clock's frequency (as babeltrace2 converts them).
    pub fn cycles_to_ns(&self, cycles: u64) -> u64 {
        if self.freq == 1_000_000_000 {
            cycles
        } else {
            let d = 1e9 * (cycles as f64) / (self.freq as f64);
            if d >= u64::MAX as f64 {
                u64::MAX
            } else {
                d as u64
            }
        }
    }

    /// Nanoseconds from the clock's origin of the offset.
    pub fn offset_ns(&self) -> i64 {
        (self.offset_s as i128 * 1_000_000_000 + self.cycles_to_ns(self.offset_cycles) as i128)
            .clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    /// The largest clock value whose time in ns from the origin fits a signed 64-bit integer
    /// (2262-04-11T23:47:16Z from the Unix epoch): past it, [`to_ns`](Self::to_ns) saturates,
    /// and babeltrace2 refuses the trace.
    pub fn max_cycles(&self) -> u64 {
        let off = self.offset_ns() as i128;
        let fits = |c: u64| off + self.cycles_to_ns(c) as i128 <= i64::MAX as i128;
        if fits(u64::MAX) {
            return u64::MAX;
        }
        // (`cycles_to_ns` never decreases: the last value that fits is found by bisection.)
        let (mut lo, mut hi) = (0u64, u64::MAX);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Nanoseconds from the origin (the Unix epoch for LTTng) of a clock value.
    pub fn to_ns(&self, cycles: u64) -> i64 {
        (self.offset_ns() as i128 + self.cycles_to_ns(cycles) as i128).clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    /// The clock value whose time ([`to_ns`](Self::to_ns)) is `ns`, or the largest whose time
    /// is before it (0 before the offset).
    pub fn cycles_at(&self, ns: i64) -> u64 {
        let d = ns as i128 - self.offset_ns() as i128;
        if d <= 0 {
            return 0;
        }
        if self.freq == 1_000_000_000 {
            return d.min(u64::MAX as i128) as u64;
        }
        let mut c = (d as f64 * self.freq as f64 / 1e9).round().clamp(0.0, u64::MAX as f64) as u64;
        // The float's rounding, stepped back over: a few cycles at most.
        while c > 0 && self.to_ns(c) > ns {
            c -= 1;
        }
        while c < u64::MAX && self.to_ns(c + 1) <= ns {
            c += 1;
        }
        c
    }

    /// This clock corrected for one that read `offset_ns + drift · (t − at_ns)` ahead of the
    /// right time `t` (see [`TraceSet::correct_clocks`](crate::TraceSet::correct_clocks)): its
    /// offset and frequency changed.
    pub fn corrected(&self, offset_ns: i64, drift: f64, at_ns: i64) -> Clock {
        let mut c = self.clone();
        let old = c.offset_s as i128 * 1_000_000_000 + c.cycles_to_ns(c.offset_cycles) as i128;
        // ns(cycles) = old + cycles·1e9/freq becomes old' + cycles·1e9/freq', with
        // freq' = freq·(1 + drift) and old' = (old − offset + drift·at) / (1 + drift).
        let (total, freq) = if drift == 0.0 {
            (old - offset_ns as i128, c.freq.max(1))
        } else {
            // (x + d·at)/(1 + d) = x − (x − at)·d/(1 + d): the product is small, exact in f64.
            let moved = old - offset_ns as i128;
            let k = drift / (1.0 + drift);
            let freq = (c.freq.max(1) as f64 * (1.0 + drift)).round().max(1.0) as u64;
            (moved - ((moved - at_ns as i128) as f64 * k).round() as i128, freq)
        };
        let (s, rem) = (total.div_euclid(1_000_000_000), total.rem_euclid(1_000_000_000));
        c.freq = freq;
        c.offset_s = s.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        c.offset_cycles = (rem * freq as i128 / 1_000_000_000) as u64;
        c
    }
}

/// A value of the `env` block.
#[derive(Debug, Clone, PartialEq)]
pub enum EnvValue {
    /// Integer.
    Int(i64),
    /// String.
    Str(String),
}

/// An event class.
#[derive(Debug, Clone, PartialEq)]
pub struct EventClass {
    /// Id within its stream class.
    pub id: u64,
    /// Name, such as `ros2:callback_start`.
    pub name: String,
    /// Stream class id.
    pub stream_id: u64,
    /// Log level, if declared.
    pub loglevel: Option<i64>,
    /// EMF URI, if declared.
    pub model_emf_uri: Option<String>,
    /// Event-specific context type.
    pub context: Option<Ty>,
    /// Payload type (a structure).
    pub fields: Option<Ty>,
    /// Index of this class in the trace's flat list of event classes.
    pub index: usize,
}

impl EventClass {
    /// Position of the payload member `name` (without leading underscore), usable with `Event::field_at`.
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.as_ref()?.as_struct()?.index_of(name)
    }

    /// Names of the payload members, in order.
    pub fn field_names(&self) -> Vec<&str> {
        match self.fields.as_ref().and_then(|t| t.as_struct()) {
            Some(s) => s.fields.iter().map(|f| f.name.as_str()).collect(),
            None => Vec::new(),
        }
    }
}

/// A stream class.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamClass {
    /// Id (the `stream_id` of the packet header).
    pub id: u64,
    /// Packet context type.
    pub packet_context: Option<Ty>,
    /// Event header type.
    pub event_header: Option<Ty>,
    /// Per-stream event context type.
    pub event_context: Option<Ty>,
    /// Event classes, looked up by id with [`StreamClass::event`].
    pub events: Vec<Arc<EventClass>>,
    /// Dense lookup table: event id to position in `events` (u32::MAX when absent).
    pub(crate) by_id: Vec<u32>,
    /// Index of the clock that timestamps its events.
    pub clock: Option<usize>,
    /// The event header is LTTng's `event_header_large` or `event_header_compact`.
    pub(crate) header_fast: Option<crate::decode::HeaderFast>,
}

impl StreamClass {
    /// The event class with this id.
    pub fn event(&self, id: u64) -> Option<&Arc<EventClass>> {
        if (id as usize) < self.by_id.len() {
            let k = self.by_id[id as usize];
            if k != u32::MAX {
                return Some(&self.events[k as usize]);
            }
            return None;
        }
        self.events.iter().find(|e| e.id == id)
    }
}

/// Everything the metadata of one trace declares.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    /// CTF major version.
    pub major: u64,
    /// CTF minor version.
    pub minor: u64,
    /// Trace UUID.
    pub uuid: Option<[u8; 16]>,
    /// Default byte order.
    pub byte_order: ByteOrder,
    /// Packet header type.
    pub packet_header: Option<Ty>,
    /// Environment, in declaration order.
    pub env: Vec<(String, EnvValue)>,
    /// Clocks.
    pub clocks: Vec<Clock>,
    /// Stream classes.
    pub streams: Vec<StreamClass>,
    /// Number of registers the decoder needs (lengths and tags).
    pub registers: usize,
}

impl Schema {
    /// The stream class with this id.
    pub fn stream(&self, id: u64) -> Option<&StreamClass> {
        self.streams.iter().find(|s| s.id == id)
    }

    /// An environment value by key.
    pub fn env(&self, key: &str) -> Option<&EnvValue> {
        self.env.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// All event classes of all stream classes.
    pub fn event_classes(&self) -> impl Iterator<Item = &Arc<EventClass>> {
        self.streams.iter().flat_map(|s| s.events.iter())
    }

    /// A table indexed by [`EventClass::index`]: `f` of each event class.
    pub fn per_class<T>(&self, mut f: impl FnMut(&Arc<EventClass>) -> T) -> Vec<T> {
        let mut v: Vec<(usize, T)> = self.event_classes().map(|ec| (ec.index, f(ec))).collect();
        v.sort_unstable_by_key(|(i, _)| *i);
        v.into_iter().map(|(_, t)| t).collect()
    }
}
