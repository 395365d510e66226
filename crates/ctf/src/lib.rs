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
#![warn(missing_docs)]

pub mod decode;
pub mod error;
pub mod json;
pub mod metadata;
mod parallel;
pub mod schema;
pub mod stream;
pub mod summary;
pub mod trace;
pub mod types;
pub mod value;

/// Writing traces: the writer crate, for the readers' tests and tools that write what they read.
pub use rostrace_ctf_write as write;
/// Calendar time of ns since the epoch (shared with the writer).
pub use rostrace_ctf_write::time;

pub use error::{Error, Result};
pub use schema::{Clock, EnvValue, EventClass, Schema, StreamClass};
pub use stream::{Event, Loss, LossKind, PacketFilter, PacketInfo, StreamReader};
pub use trace::{find_traces, find_traces_all, Events, Ints, Place, Read, Trace, TraceSet};
pub use value::{ArrayRef, FieldValue, Member, StructRef};
