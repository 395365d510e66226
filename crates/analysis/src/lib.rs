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
#![warn(missing_docs)]

pub mod check;
pub mod collections;
pub mod diff;
mod engine;
pub mod events;
pub mod executor;
mod follow;
pub mod handler;
pub mod link;
pub mod model;
pub mod notes;
mod open;
pub mod paths;
mod pipeline;
pub mod report;
mod ros2;
pub mod services;
pub mod skip;
pub mod stats;
pub mod system;
pub mod tables;
mod window;
mod yaml_io;

pub use follow::{Follower, Sample};
pub use handler::{merge_in_order, At, Context, Fields, Handler, Handlers, Part, TraceInfo};
pub use link::{Flow, LinkedPublication, LinkedRun, LinkedTake, MatchBy};
pub use notes::Note;
pub use open::{Loaded, Open};
pub use pipeline::{
    analyze_collected, analyze_traces, analyze_window, collect, collect_window, Analysis, Options, Processor,
};
pub use report::{CallbackReport, Report, TopicReport};
pub use stats::Stats;
pub use tables::{Collected, ReadError};
pub use window::{parse_time, Bound, Window};
