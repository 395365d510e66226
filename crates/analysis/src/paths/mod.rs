//! End-to-end paths: the architecture observed in a trace ([`arch`]), CARET's architecture
//! file ([`yaml`]), path search ([`search`]) and latency and response time along a path,
//! message by message ([`latency`]).

pub mod arch;
pub mod latency;
pub mod search;
pub mod yaml;

pub use arch::{Architecture, Context};
pub use latency::{Case, PathIndex, PathOptions, PathRecords, PathSpec};
pub use search::{SearchLimits, SearchOutcome};
