//! A path's records summed up, as `rostrace e2e` writes them: segments, latency, how the
//! records went, every complete record, response times, and CARET's records table.

use super::records::{Case, PathCounts, PathRecords};
use super::spec::{PathOptions, PathSpec};
use crate::stats::Stats;
use serde::Serialize;

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
    pub instances: Vec<Instance>,
    /// Per case: (input ns, response time ns).
    pub response_time: Vec<ResponseOut>,
    /// CARET's records: column names and every row (null where a message did not get).
    pub columns: &'a [String],
    /// The rows, a value (ns) per column.
    pub rows: &'a [Vec<Option<i64>>],
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
pub struct ResponseOut {
    /// The case's name.
    pub case: &'static str,
    /// Response time (ns).
    pub stats: Stats,
    /// (input ns, response time ns) per record.
    pub instances: Vec<(i64, i64)>,
}

/// The summary of the records `r` of path `spec`, with the response time in each of `cases`.
pub fn e2e_summary<'a>(spec: &'a PathSpec, r: &'a PathRecords, opt: PathOptions, cases: &[Case]) -> E2eSummary<'a> {
    let instances = r
        .rows
        .iter()
        .filter(|row| PathRecords::is_complete(row))
        .map(|row| {
            let (s, e) = (row[0].unwrap_or(0), row[row.len() - 1].unwrap_or(0));
            Instance {
                start_ns: s,
                end_ns: e,
                latency_ns: e - s,
                segments_ns: r
                    .segments
                    .iter()
                    .map(|g| row[g.columns.1].unwrap_or(0) - row[g.columns.0].unwrap_or(0))
                    .collect(),
            }
        })
        .collect();
    E2eSummary {
        path: spec,
        label: spec.label(),
        include_first_callback: opt.include_first_callback,
        include_last_callback: opt.include_last_callback,
        segments: r
            .segment_stats()
            .into_iter()
            .map(|(s, st)| SegmentOut { name: s.name, kind: s.kind, latency: st })
            .collect(),
        latency: r.stats(),
        counts: r.counts(),
        hosts_crossed: None,
        clock_uncertainty_ns: None,
        instances,
        response_time: cases
            .iter()
            .map(|&c| {
                let v = r.response_time(c);
                let mut ns: Vec<i64> = v.iter().map(|x| x.1).collect();
                ResponseOut { case: c.name(), stats: Stats::of(&mut ns), instances: v }
            })
            .collect(),
        columns: &r.columns,
        rows: &r.rows,
    }
}
