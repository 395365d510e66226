//! System analyses, each a [`Handler`](crate::Handler): CPU time per thread and scheduling
//! during callback runs (kernel scheduling events), message age (CARET's dispatch events).
//! They report when the trace has their events.

mod carried;
pub mod cpu_time;
pub mod memory;
pub mod message_age;
pub mod profile;
mod report;
pub mod scheduling;
pub mod sim_time;
pub mod symbols;
mod totals;

pub(crate) use carried::Carried;
pub use cpu_time::{CpuTime, ThreadCpu};
pub use memory::{Memory, ThreadMemory};
pub use message_age::MessageAge;
pub use profile::{FunctionProfile, Profile};
pub use report::{
    CallbackId, CallbackSched, CallbackStats, CpuTimeReport, MemoryReport, NodeCpu, ProcessCpu, ProcessMemory,
    ProfileReport, SchedulingReport, SystemReport, ThreadWakeups,
};
pub use scheduling::{RunSched, Scheduling};
pub use sim_time::{SimClock, SimTime, SimTimeReport};
pub(crate) use totals::{clear as totals_clear, SystemTotals};

use crate::handler::Handlers;

/// Adds the system handlers of `rostrace analyze` ([`crate::Processor::standard`]).
pub(crate) fn add_standard(h: &mut Handlers) {
    h.add(CpuTime::default());
    h.add(Scheduling::default());
    h.add(MessageAge::default());
    h.add(Memory::default());
    h.add(Profile::default());
    h.add(SimTime::default());
}
