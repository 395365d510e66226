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
//! let (set, _errors) = ctf::TraceSet::open(&["/path/to/session"]);
//! let a = analysis::analyze_traces(&set, |_, _| {});
//! for cb in &a.report.callbacks {
//!     println!("{} {} {:.0} ns", cb.symbol, cb.count, cb.duration_ns.mean);
//! }
//! ```
#![warn(missing_docs)]

pub mod events;
pub mod executor;
pub mod handler;
pub mod hash;
pub mod model;
pub mod notes;
pub mod pass;
pub mod paths;
pub mod processor;
pub mod report;
mod ros2;
pub mod services;
pub mod stats;
pub mod system;

pub use handler::{merge_in_order, At, Context, Fields, Handler, Part, TraceInfo};
pub use notes::Note;
pub use pass::{Bound, Collected, Window};
pub use processor::Processor;
pub use report::{Analysis, CallbackReport, Flow, MatchBy, Report, TopicReport};
pub use stats::Stats;

/// Reads the traces once and computes the whole analysis (the ROS 2 model and the standard
/// handlers: [`Processor::standard`]). `progress(done, total)` is called now and then with
/// bytes read.
pub fn analyze_traces(set: &ctf::TraceSet, progress: impl FnMut(u64, u64)) -> Analysis {
    analyze_window(set, Window::default(), progress)
}

/// [`analyze_traces`] over the runtime events inside `window` only.
pub fn analyze_window(set: &ctf::TraceSet, window: Window, progress: impl FnMut(u64, u64)) -> Analysis {
    Processor::standard().analyze(set, window, progress)
}
