//! End-to-end paths: a path as asked for ([`spec`]), the architecture observed in a trace
//! ([`arch`]), CARET's architecture file ([`yaml`]), path search ([`search`]), a path's records
//! message by message made from an analysis ([`index`]), what they tell (latency, drops,
//! response time: [`records`]) and their summary ([`summary`]), and paths ranked by latency
//! ([`rank`]); a path followed over a streamed analysis ([`streamed`]); the age of the data a
//! node takes, per source ([`age`]).
//!
//! ```no_run
//! use rostrace_analysis::paths::{search, Architecture, Endpoint, PathIndex, PathOptions, SearchLimits};
//! let (set, _errors) = rostrace_ctf::TraceSet::open(&["trace/"]);
//! let a = rostrace_analysis::analyze_traces(&set, |_, _| {});
//! let arch = Architecture::from_analysis(&a);
//! let index = PathIndex::new(&a);
//! let (from, to) = (arch.endpoint("/sensor").unwrap(), arch.endpoint("/actuator").unwrap());
//! search(&arch, &from, &[], &to, SearchLimits::default(), |path| {
//!     let records = index.records(&arch, &path, PathOptions::default()).unwrap();
//!     println!("{}: mean {} ns", path.label(), records.stats().mean);
//!     true
//! });
//! ```

pub mod age;
pub mod arch;
pub mod index;
mod longest;
pub mod rank;
pub mod records;
pub mod search;
pub mod spec;
pub mod streamed;
pub mod summary;
mod threads;
pub mod yaml;

pub use age::{age_paths, data_age, AgePaths, AgeTable, DataAge, InputAge, SourceAge};
pub use arch::{Architecture, Context, Crossing, ServiceHop};
pub use index::PathIndex;
pub use longest::PATH_PARTS;
pub(crate) use longest::{records as longest_records, LongestStream, PathPoints, Searched, SliceRecords};
pub use rank::{
    find, longest_of, longest_paths, longest_with_architecture, rank, rank_streamed, search_query, Found, LongestPaths,
    Query, RankedPath,
};
pub use records::{Case, PathCounts, PathRecords, RecordStatus, RecordsSummary, Segment};
pub use search::{search, search_paths, SearchLimits, SearchOutcome};
pub use spec::{Endpoint, PathOptions, PathSpec};
pub use streamed::{PathOutput, PathStream, StreamedPath};
pub use summary::{e2e_summary, streamed_e2e_summary, E2eSummary, Each, Instance, ResponseOut, SegmentOut};
