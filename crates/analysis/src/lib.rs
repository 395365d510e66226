//! ROS 2 trace analysis: events to the ROS 2 model (processes, nodes, topics, publishers,
//! subscriptions, timers, services, clients, callbacks, executors, callback groups), to tables of
//! instances (callback runs, publications, takes, message flows), to metrics and statistics.
//!
//! Everything is keyed by (trace, vpid, address) and time, since pointers are only unique
//! within a process and get reused. One streaming pass over the events; memory grows with
//! the number of instances, not with the trace.
//!
//! The pass is open: a [`Handler`] of your own declares the events it wants and gets them in the
//! same pass, beside the ROS 2 model ([`Processor`]). The executor phases and the system
//! analyses (CPU time, scheduling, memory, function profile, message age: [`system`]) are
//! handlers too.
//!
//! ```no_run
//! let (set, _errors) = rostrace_ctf::TraceSet::open(&["/path/to/session"]);
//! let a = rostrace_analysis::analyze_traces(&set, |_, _| {});
//! for cb in &a.report.callbacks {
//!     println!("{} {} {:.0} ns", cb.symbol, cb.count, cb.duration_ns.mean);
//! }
//! ```
//!
//! The items are at the crate's root; the four parts with a vocabulary of their own keep their
//! modules: [`check`] (expectations), [`diff`] (two runs compared), [`paths`] (end-to-end paths)
//! and [`system`] (the kernel and function analyses), and [`report`] holds the report's sections.
#![deny(missing_docs)]

pub mod check;
mod clocks;
mod collections;
pub mod diff;
mod engine;
mod events;
mod executor;
mod follow;
mod handler;
pub mod hosts;
mod link;
mod model;
mod notes;
mod open;
pub mod paths;
mod pipeline;
pub mod report;
mod ros2;
mod samples;
mod services;
mod skip;
mod stats;
mod stream;
mod streaming;
pub mod system;
mod tables;
mod window;
mod yaml_io;

pub use clocks::ClockShift;
pub use collections::{FastHasher, HashMap, HashSet};
pub use events::{ClassInfo, Kind, F};
pub use executor::{ExecutorHandler, ExecutorPhases};
pub use follow::{Follower, Sample};
pub use handler::{merge_in_order, At, Context, Fields, Handler, Handlers, Part, TraceInfo};
pub use link::{Flow, LinkedPublication, LinkedRun, LinkedTake, MatchBy, View};
pub use model::{
    Callback, CallbackGroup, Executor, Key, Lifecycle, LinkKind, MessageLink, Model, Node, Owner, OwnerRef, Process,
    Publisher, Registry, Service, Subscription, Timer, Versions,
};
pub use notes::{notes, Inputs, Note};
pub use open::{Loaded, Open};
pub use pipeline::{
    analyze_collected, analyze_traces, analyze_window, collect, collect_window, Analysis, Options, Processor,
};
pub use report::{CallbackReport, Report, TopicReport};
pub use services::{ClientCall, ServerCall, ServiceHandler};
pub use skip::PacketIndex;
pub use stats::{Stats, SKETCH_RELATIVE_ERROR};
pub use stream::StreamedSlice;
pub use streaming::{Streamed, Streaming, AUTO_BYTES, AUTO_MESSAGE_SHARE, MARGIN_NS, SLICE_BYTES};
pub use tables::{Collected, Publication, ReadError, Run, Take};
pub use window::{parse_time, Bound, Window};
