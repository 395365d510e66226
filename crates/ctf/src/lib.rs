//! Reading CTF 1.8 traces, as written by LTTng (and other producers): metadata, packets,
//! events, and many traces merged in time order.
//!
//! ```no_run
//! let (set, errors) = rostrace_ctf::TraceSet::open(&["/path/to/trace"]);
//! for e in &errors { eprintln!("{e}"); }
//! let mut events = set.events();
//! while let Some(ev) = events.next() {
//!     let ev = ev.expect("decodable");
//!     println!("{} {:?}", ev.name(), ev.timestamp());
//! }
//! ```
#![deny(missing_docs)]
#![warn(unnameable_types)]

mod decode;
mod error;
mod event;
mod extract;
mod find;
mod headers;
mod index;
pub mod json;
mod merge;
pub mod metadata;
mod packet;
mod parallel;
mod positions;
mod schema;
mod set;
mod stream;
pub mod summary;
mod trace;
pub mod types;
mod value;

/// Writing traces: the writer crate, for the readers' tests and tools that write what they read.
pub use rostrace_ctf_write as write;
/// Calendar time of ns since the epoch (shared with the writer).
pub use rostrace_ctf_write::time;

pub use error::{Error, MetadataError, Result};
pub use event::Event;
pub use extract::Extracted;
pub use find::{find_traces, find_traces_all};
pub use index::{EventFilter, PacketFilter};
pub use merge::{Events, Ints, Place};
pub use packet::{Loss, LossKind, PacketInfo, PACKET_MAGIC};
pub use positions::{Positions, TracePositions};
pub use schema::{Clock, EnvValue, EventClass, Schema, StreamClass};
pub use set::{ClockCorrection, Read, Tails, TraceSet, RESIDENT_BUDGET};
pub use stream::StreamReader;
pub use trace::{StreamFile, Trace};
pub use value::{ArrayRef, FieldValue, Member, StructRef};
