//! Writing CTF 1.8 traces laid out as LTTng-UST writes them: TSDL metadata with the same
//! types and scopes, data streams of packets with LTTng's packet header and context and its
//! large event header, and the `vpid`, `vtid`, `procname` event context. Readers treat the
//! result like any LTTng trace (babeltrace2, Trace Compass, `rostrace-ctf`).
//!
//! The writer is apart from the reader (as babeltrace2's `sink.ctf.fs` is from its
//! `src.ctf.fs`): the tracer library links this crate alone.
//!
//! ```
//! use rostrace_ctf_write::{metadata_text, EventDecl, FieldDecl, FieldType, Payload, StreamWriter, TraceDecl};
//! let decl = TraceDecl {
//!     uuid: [1; 16],
//!     clock_offset_ns: 0,
//!     clock_uuid: [2; 16],
//!     env: vec![("hostname".into(), "h".into())],
//!     events: vec![EventDecl {
//!         name: "ros2:rcl_init".into(),
//!         fields: vec![FieldDecl { name: "context_handle".into(), ty: FieldType::Pointer }],
//!     }],
//! };
//! let tsdl = metadata_text(&decl);
//! let mut stream = StreamWriter::new(Vec::new(), decl.uuid, 0, 0, 4096);
//! stream.event(0, 1_000, 42, 42, b"node", &Payload::new().u64(0x10).bytes).unwrap();
//! let packets = stream.finish().unwrap();
//! assert!(tsdl.contains("ros2:rcl_init") && packets.len() % 8 == 0);
//! ```
#![deny(missing_docs)]

mod metadata;
mod payload;
mod stream;
pub mod time;

pub use metadata::{metadata_text, packetize_metadata, EventDecl, FieldDecl, FieldType, TraceDecl};
pub use payload::{Address, Payload};
pub use stream::{event_size, PacketOut, StreamWriter, PACKET_PREAMBLE};
