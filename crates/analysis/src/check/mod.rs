//! Expectations about a traced system, checked against its analysis (`rostrace check`): a
//! YAML file of limits per callback, topic (or publisher → subscriber pair), end-to-end path,
//! process and thread, and for the whole trace ([`parse`]); each limit checked against an
//! [`crate::Analysis`] to pass, fail (with the value measured) or be not in the trace
//! ([`evaluate`]); and a file suggested from a good run, which passes on it ([`suggest`]).
//!
//! ```yaml
//! callbacks:
//! - node: /filter_node          # and one or more of: topic, timer_period, service, symbol (a regex)
//!   topic: /topic1
//!   runs: 40                    # at least
//!   duration: {p50: 2ms, p99: 10ms, max: 20ms}
//!   period: {p50: [90ms, 110ms], max: 200ms}
//! topics:
//! - topic: /topic1
//!   frequency: [8, 12]          # Hz
//!   latency: {p99: 1ms, max: 5ms}
//!   dropped: 0
//! paths:
//! - path: /sensor,/filter,/actuator
//!   latency: {p99: 300ms}
//!   drop_rate: 5%
//! processes:
//! - process: talker
//!   busy: 0.3
//! trace:
//!   discarded_events: 0
//!   unmatched_takes: 0
//! ```
//!
//! ```no_run
//! let (set, _errors) = rostrace_ctf::TraceSet::open(&["trace/"]);
//! let a = rostrace_analysis::analyze_traces(&set, |_, _| {});
//! let expect = rostrace_analysis::check::parse(&std::fs::read_to_string("expect.yaml").unwrap()).unwrap();
//! for o in rostrace_analysis::check::evaluate(&a, &expect, 0) {
//!     println!("{:?} {} {} {:?}", o.status, o.subject, o.metric, o.measured);
//! }
//! ```

mod eval;
mod model;
mod parse;
mod suggest;
pub mod units;

pub use eval::{evaluate, evaluate_followed, paths_of, Followed};
pub use model::{Bound, Expectation, Expectations, Metric, Outcome, Stat, Status, Subject};
pub use parse::parse;
pub use suggest::{suggest, MARGIN};
pub use units::Unit;
