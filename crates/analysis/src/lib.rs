//! ROS 2 trace analysis: events to the ROS 2 model (processes, nodes, topics, publishers,
//! subscriptions, timers, services, clients, callbacks, executors, callback groups), to tables of
//! instances (callback runs, publications, takes, message flows), to metrics and statistics.
//!
//! Everything is keyed by (trace, vpid, address) and time, since pointers are only unique
//! within a process and get reused. One streaming pass over the events; memory grows with
//! the number of instances, not with the trace.
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
pub mod model;
pub mod notes;
pub mod pass;
pub mod report;
pub mod stats;

pub use notes::Note;
pub use pass::{Bound, Window};
pub use report::{Analysis, CallbackReport, Flow, MatchBy, Report, TopicReport};
pub use stats::Stats;

/// Reads the traces once and computes the whole analysis. `progress(done, total)` is called
/// now and then with bytes read.
pub fn analyze_traces(set: &ctf::TraceSet, progress: impl FnMut(u64, u64)) -> Analysis {
    report::analyze(pass::collect(set, progress))
}

/// [`analyze_traces`] over the runtime events inside `window` only.
pub fn analyze_window(set: &ctf::TraceSet, window: Window, progress: impl FnMut(u64, u64)) -> Analysis {
    report::analyze(pass::collect_window(set, window, progress))
}
