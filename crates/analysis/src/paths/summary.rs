//! A path's records summed up, as `rostrace e2e` writes them: segments, latency, how the
//! records went, every complete record, response times, and CARET's records table.

use super::records::{Case, PathCounts, PathRecords, Segment};
use super::spec::{PathOptions, PathSpec};
use super::streamed::StreamedPath;
use crate::stats::Stats;
use serde::Serialize;

/// Values given one per record: held, borrowed, or read back one by one as they are written out
/// (those of a streamed path, kept in a file as they came).
pub enum Each<'a, T> {
    /// Held in memory.
    Held(Vec<T>),
    /// Borrowed.
    Borrowed(&'a [T]),
    /// Read back, each time they are asked for, by the function.
    Read(Box<dyn Fn() -> Box<dyn Iterator<Item = T> + 'a> + 'a>),
}

impl<T: Serialize> Serialize for Each<'_, T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Each::Held(v) => v.serialize(s),
            Each::Borrowed(v) => v.serialize(s),
            Each::Read(f) => s.collect_seq(f()),
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Each<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Each::Held(v) => v.fmt(f),
            Each::Borrowed(v) => v.fmt(f),
            Each::Read(_) => f.write_str("[read back as written]"),
        }
    }
}

/// A path's records summed up (`rostrace e2e`'s JSON): segments, latency, drops, every
/// complete record, response times, and CARET's records table.
#[derive(Debug, Serialize)]
pub struct E2eSummary<'a> {
    /// The path.
    pub path: &'a PathSpec,
    /// CARET's form of the path.
    pub label: String,
    /// Whether the first node's callback is part of the path.
    pub include_first_callback: bool,
    /// Whether the last node's callback is part of the path.
    pub include_last_callback: bool,
    /// How the path crosses each node between its ends ([`super::Architecture::crossings`]).
    pub crossings: Vec<super::arch::Crossing>,
    /// Segment names and kinds, in order.
    pub segments: Vec<SegmentOut>,
    /// Latency of the records that went the whole way (ns).
    pub latency: Stats,
    /// How the records went (in the JSON, its fields beside these).
    #[serde(flatten)]
    pub counts: PathCounts,
    /// Records of several hosts: the times the path goes from a node of one host to a node of
    /// another, and the bound (ns) of what the alignment of their clocks leaves uncertain in
    /// each record's latency (none: a host's clock could not be aligned), from `hosts`'
    /// `path_uncertainty`; set by the caller that has the analysis.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts_crossed: Option<usize>,
    /// The bound, when `hosts_crossed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock_uncertainty_ns: Option<i64>,
    /// Every record that went the whole way.
    pub instances: Each<'a, Instance>,
    /// Per case: (input ns, response time ns).
    pub response_time: Vec<ResponseOut<'a>>,
    /// CARET's records: column names and every row (null where a message did not get).
    pub columns: &'a [String],
    /// The rows, a value (ns) per column.
    pub rows: Each<'a, Vec<Option<i64>>>,
}

/// A segment of the path and its latency.
#[derive(Debug, Serialize)]
pub struct SegmentOut {
    /// Name.
    pub name: String,
    /// `communication`, `node` or `callback` (see [`Segment::kind`]).
    pub kind: &'static str,
    /// Latency (ns).
    pub latency: Stats,
}

/// A record that went the whole way.
#[derive(Debug, Serialize)]
pub struct Instance {
    /// When it started.
    pub start_ns: i64,
    /// When it ended.
    pub end_ns: i64,
    /// End − start.
    pub latency_ns: i64,
    /// Time in each segment.
    pub segments_ns: Vec<i64>,
}

/// Response time in one of CARET's cases.
#[derive(Debug, Serialize)]
pub struct ResponseOut<'a> {
    /// The case's name.
    pub case: &'static str,
    /// Response time (ns).
    pub stats: Stats,
    /// (input ns, response time ns) per record.
    pub instances: Each<'a, (i64, i64)>,
}

/// The summary of the records `r` of path `spec` in `arch`, with the response time in each of
/// `cases`.
pub fn e2e_summary<'a>(
    arch: &super::Architecture,
    spec: &'a PathSpec,
    r: &'a PathRecords,
    opt: PathOptions,
    cases: &[Case],
) -> E2eSummary<'a> {
    let instances =
        r.rows.iter().filter(|row| PathRecords::is_complete(row)).map(|row| Instance::of(row, &r.segments)).collect();
    E2eSummary {
        path: spec,
        label: spec.label(),
        include_first_callback: opt.include_first_callback,
        include_last_callback: opt.include_last_callback,
        crossings: arch.crossings(spec),
        segments: r
            .segment_stats()
            .into_iter()
            .map(|(s, st)| SegmentOut { name: s.name, kind: s.kind, latency: st })
            .collect(),
        latency: r.stats(),
        counts: r.counts(),
        hosts_crossed: None,
        clock_uncertainty_ns: None,
        instances: Each::Held(instances),
        response_time: cases
            .iter()
            .map(|&c| {
                let v = r.response_time(c);
                let mut ns: Vec<i64> = v.iter().map(|x| x.1).collect();
                ResponseOut { case: c.name(), stats: Stats::of(&mut ns), instances: Each::Held(v) }
            })
            .collect(),
        columns: &r.columns,
        rows: Each::Borrowed(&r.rows),
    }
}

/// The summary of path `spec` followed over a streamed analysis, `p`, with its records
/// (`rows`) and each case's response times (`responses`, in `p.response`'s order) as they were
/// given out ([`super::PathOutput`]); the records that went the whole way are read from `rows`.
pub fn streamed_e2e_summary<'a, R: Iterator<Item = Vec<Option<i64>>> + 'a>(
    arch: &super::Architecture,
    spec: &'a PathSpec,
    p: &'a StreamedPath,
    opt: PathOptions,
    rows: impl Fn() -> R + Clone + 'a,
    mut responses: impl FnMut(Case) -> Each<'a, (i64, i64)>,
) -> E2eSummary<'a> {
    let segments: Vec<Segment> = p.segments.iter().map(|x| x.0.clone()).collect();
    let each_row = rows.clone();
    let instances = move || -> Box<dyn Iterator<Item = Instance> + 'a> {
        let segments = segments.clone();
        Box::new(each_row().filter(|row| PathRecords::is_complete(row)).map(move |row| Instance::of(&row, &segments)))
    };
    E2eSummary {
        path: spec,
        label: spec.label(),
        include_first_callback: opt.include_first_callback,
        include_last_callback: opt.include_last_callback,
        crossings: arch.crossings(spec),
        segments: p
            .segments
            .iter()
            .map(|(s, st)| SegmentOut { name: s.name.clone(), kind: s.kind, latency: st.clone() })
            .collect(),
        latency: p.latency.clone(),
        counts: p.counts,
        hosts_crossed: None,
        clock_uncertainty_ns: None,
        instances: Each::Read(Box::new(instances)),
        response_time: p
            .response
            .iter()
            .map(|(c, st)| ResponseOut { case: c.name(), stats: st.clone(), instances: responses(*c) })
            .collect(),
        columns: &p.columns,
        rows: Each::Read(Box::new(move || Box::new(rows()))),
    }
}

impl Instance {
    /// The complete record `row` of a path of `segments`.
    fn of(row: &[Option<i64>], segments: &[Segment]) -> Instance {
        let (s, e) = (row[0].unwrap_or(0), row[row.len() - 1].unwrap_or(0));
        Instance {
            start_ns: s,
            end_ns: e,
            latency_ns: e - s,
            segments_ns: segments
                .iter()
                .map(|g| row[g.columns.1].unwrap_or(0) - row[g.columns.0].unwrap_or(0))
                .collect(),
        }
    }
}
