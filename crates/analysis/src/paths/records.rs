//! A path's records, message by message, and what they tell: latency, how the records went
//! (complete, dropped, in flight), the latency per segment, response time.

use crate::collections::HashMap;
use crate::stats::Stats;
use serde::Serialize;

/// One segment of a path: a communication (its topic) or a node path (`node/callback`).
#[derive(Debug, Clone, Serialize)]
pub struct Segment {
    /// Topic, or `<node>/<callback>` for a node path.
    pub name: String,
    /// `communication` (publish → callback start), `node` (callback start → publish) or
    /// `callback` (the last callback, start → end).
    pub kind: &'static str,
    /// First and last column of the segment in the records.
    pub columns: (usize, usize),
}

/// The records of a path: one row per message, a column per event along it; `None` where the
/// message did not get (dropped, or the trace ended).
#[derive(Debug, Clone, Default, Serialize)]
pub struct PathRecords {
    /// Column names, CARET's (`/topic1/rclcpp_publish_timestamp/0`, ...).
    pub columns: Vec<String>,
    /// Rows, sorted by their first column.
    pub rows: Vec<Vec<Option<i64>>>,
    /// Segments, in path order.
    pub segments: Vec<Segment>,
    /// How far (in cells) a record gets when it stops at the input of a node that publishes the
    /// latest message it took (CARET's `use_latest_message`): stopping there, it was superseded
    /// by a newer input, not lost.
    #[serde(skip)]
    pub superseded_at: Vec<usize>,
}

/// How a path's records went: how many there are, and how many went the whole way, were
/// dropped on the way (superseded or lost), or were still on the way when the trace ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PathCounts {
    /// Records (messages of the first topic, more where a node republishes).
    pub records: usize,
    /// Records that went the whole way.
    pub complete: usize,
    /// Records dropped on the way: superseded and lost.
    pub dropped: usize,
    /// Of those, superseded by a newer message at a node that publishes the latest it took: a
    /// record that stopped at such a node's input while a later record got further.
    pub superseded: usize,
    /// Of those, lost: stopped elsewhere while a later record got further (not taken, or not
    /// forwarded).
    pub lost: usize,
    /// Records still on the way when the trace ended.
    pub in_flight: usize,
}

impl PathCounts {
    /// Of `records` records, `complete` of them complete, with `reach` (per record in time
    /// order: cells up to its last one), the records' `width` and the reaches that mean
    /// superseded.
    pub(crate) fn of(
        records: usize,
        complete: usize,
        reach: impl DoubleEndedIterator<Item = usize>,
        width: usize,
        superseded_at: &[usize],
    ) -> PathCounts {
        let mut out = PathCounts { records, complete, ..PathCounts::default() };
        for s in stopped(reach, width, superseded_at).flatten() {
            match s {
                RecordStatus::Superseded => out.superseded += 1,
                RecordStatus::Lost => out.lost += 1,
                _ => out.in_flight += 1,
            }
        }
        out.dropped = out.superseded + out.lost;
        out
    }
}

/// How each record that stopped short of the path's `width` cells went (`None` for the others),
/// from `reach` (per record in time order: cells up to its last one), newest first: dropped
/// when a later record got further (superseded where `superseded_at` says), else in flight.
fn stopped<'a>(
    reach: impl DoubleEndedIterator<Item = usize> + 'a,
    width: usize,
    superseded_at: &'a [usize],
) -> impl Iterator<Item = Option<RecordStatus>> + 'a {
    let mut best_later = 0;
    reach.rev().map(move |k| {
        let s = (k < width).then(|| match best_later > k {
            true if superseded_at.contains(&k) => RecordStatus::Superseded,
            true => RecordStatus::Lost,
            false => RecordStatus::InFlight,
        });
        best_later = best_later.max(k);
        s
    })
}

/// How one record went ([`PathRecords::statuses`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordStatus {
    /// It went the whole way.
    Complete,
    /// Stopped at the input of a node that publishes the latest message it took, while a later
    /// record got further.
    Superseded,
    /// Stopped elsewhere while a later record got further.
    Lost,
    /// Still on the way when the trace ended.
    InFlight,
}

impl RecordStatus {
    /// `complete`, `superseded`, `lost` or `in_flight`.
    pub fn name(self) -> &'static str {
        match self {
            RecordStatus::Complete => "complete",
            RecordStatus::Superseded => "superseded",
            RecordStatus::Lost => "lost",
            RecordStatus::InFlight => "in_flight",
        }
    }
}

/// What [`PathIndex::summary`](super::PathIndex::summary) tells of a path.
#[derive(Debug, Clone, Default)]
pub struct RecordsSummary {
    /// How the records went.
    pub counts: PathCounts,
    /// Latency of the complete records (ns).
    pub latency: Stats,
}

/// Response-time cases (CARET's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Case {
    /// For each input, the earliest output that follows it.
    All,
    /// For each output, from its newest input.
    Best,
    /// For each output, from its oldest input.
    Worst,
    /// For each output, from the input before its oldest one.
    WorstWithExternalLatency,
}

impl Case {
    /// Every case.
    pub const ALL: [Case; 4] = [Case::All, Case::Best, Case::Worst, Case::WorstWithExternalLatency];

    /// CARET's name.
    pub fn name(self) -> &'static str {
        match self {
            Case::All => "all",
            Case::Best => "best",
            Case::Worst => "worst",
            Case::WorstWithExternalLatency => "worst-with-external-latency",
        }
    }

    /// From CARET's name.
    pub fn from_name(s: &str) -> Option<Case> {
        Case::ALL.into_iter().find(|c| c.name() == s)
    }
}

impl PathRecords {
    /// (first column, last − first) of every record that has both, in order; negative ones
    /// (reordered clocks) left out.
    pub fn latencies(&self) -> Vec<(i64, i64)> {
        self.rows
            .iter()
            .filter_map(|r| match (r.first().copied().flatten(), r.last().copied().flatten()) {
                (Some(a), Some(b)) if b >= a => Some((a, b - a)),
                _ => None,
            })
            .collect()
    }

    /// Whether record `r` reached the end (an intra-process hop has no `rcl_publish` and
    /// `dds_write` cells: only the first and last cells count).
    pub fn is_complete(r: &[Option<i64>]) -> bool {
        r.first().is_some_and(Option::is_some) && r.last().is_some_and(Option::is_some)
    }

    /// Records that reached the end.
    pub fn complete(&self) -> usize {
        self.rows.iter().filter(|r| PathRecords::is_complete(r)).count()
    }

    /// Records that did not reach the end: (dropped, in flight). A record is dropped where it
    /// stops when a later record (a later input) got further than it; otherwise it was still
    /// in flight when the trace ended. [`PathRecords::counts`] tells superseded from lost.
    pub fn incomplete(&self) -> (usize, usize) {
        let c = self.counts();
        (c.dropped, c.in_flight)
    }

    /// How the records went: complete, superseded, lost, in flight.
    pub fn counts(&self) -> PathCounts {
        PathCounts::of(self.rows.len(), self.complete(), self.reaches(), self.columns.len(), &self.superseded_at)
    }

    /// Each record's cells up to its last one, in order.
    fn reaches(&self) -> impl DoubleEndedIterator<Item = usize> + '_ {
        self.rows.iter().map(|r| r.iter().rposition(Option::is_some).map_or(0, |i| i + 1))
    }

    /// How each record went, in order (what [`PathRecords::counts`] counts).
    pub fn statuses(&self) -> Vec<RecordStatus> {
        let stopped = stopped(self.reaches(), self.columns.len(), &self.superseded_at);
        let mut out: Vec<RecordStatus> = stopped
            .zip(self.rows.iter().rev())
            .map(|(s, r)| match s {
                Some(s) => s,
                // (Every cell, so also the first: complete. A record has its first cell.)
                None if PathRecords::is_complete(r) => RecordStatus::Complete,
                None => RecordStatus::Lost,
            })
            .collect();
        out.reverse();
        out
    }

    /// Segment statistics: per segment, the statistics of its latency over the complete
    /// records (their means add up to the mean of the complete records' latency).
    pub fn segment_stats(&self) -> Vec<(Segment, Stats)> {
        self.segment_latencies()
            .into_iter()
            .zip(&self.segments)
            .map(|((_, mut v), s)| (s.clone(), Stats::of(&mut v)))
            .collect()
    }

    /// Response time per `case`: (input time, response time), by input time. O(n log n).
    pub fn response_time(&self, case: Case) -> Vec<(i64, i64)> {
        let (mut starts, mut ends) = inputs(&self.rows);
        // As caret_analyze v0.7.3: the inputs of the earliest output are left out (the first
        // output may follow inputs from before the trace began).
        if let Some(&first) = ends.iter().min() {
            leave_out_output(&mut starts, &mut ends, first);
        }
        by_case(&starts, &ends, case).into_iter().map(|(s, r, _)| (s, r)).collect()
    }

    /// Per segment, the latency of each complete record (ns).
    pub fn segment_latencies(&self) -> Vec<(String, Vec<i64>)> {
        self.segments
            .iter()
            .map(|s| {
                let v = self
                    .rows
                    .iter()
                    .filter(|r| PathRecords::is_complete(r))
                    .map(|r| r[s.columns.1].unwrap_or(0) - r[s.columns.0].unwrap_or(0))
                    .collect();
                (s.name.clone(), v)
            })
            .collect()
    }

    /// Statistics of the latencies.
    pub fn stats(&self) -> Stats {
        let mut v: Vec<i64> = self.latencies().into_iter().map(|x| x.1).collect();
        Stats::of(&mut v)
    }
}

/// Per distinct input (first column) of `rows` (sorted by their first column), the earliest
/// output: (inputs, outputs), by input. An input whose record ends early takes the earliest
/// output of the later records.
pub(crate) fn inputs(rows: &[Vec<Option<i64>>]) -> (Vec<i64>, Vec<i64>) {
    let mut starts: Vec<i64> = Vec::new();
    let mut ends: Vec<i64> = Vec::new();
    let mut at: HashMap<i64, usize> = HashMap::default();
    let mut min_end: Option<i64> = None;
    for r in rows.iter().rev() {
        let end = match r.last().copied().flatten() {
            Some(e) => e,
            None => match min_end {
                Some(e) => e,
                None => continue,
            },
        };
        let Some(start) = r.first().copied().flatten() else { continue };
        if end < start {
            continue;
        }
        match at.get(&start) {
            None => {
                at.insert(start, starts.len());
                starts.push(start);
                ends.push(end);
                min_end = Some(min_end.map_or(end, |m| m.min(end)));
            }
            Some(&i) => {
                if end < ends[i] {
                    ends[i] = end;
                    min_end = Some(min_end.map_or(end, |m| m.min(end)));
                }
            }
        }
    }
    starts.reverse();
    ends.reverse();
    (starts, ends)
}

/// The inputs whose output is `output` left out.
pub(crate) fn leave_out_output(starts: &mut Vec<i64>, ends: &mut Vec<i64>, output: i64) {
    let keep: Vec<bool> = ends.iter().map(|&e| e != output).collect();
    let mut k = keep.iter();
    starts.retain(|_| *k.next().unwrap_or(&true));
    let mut k = keep.iter();
    ends.retain(|_| *k.next().unwrap_or(&true));
}

/// Response time in `case` of the inputs `starts` and their outputs `ends` ([`inputs`]):
/// (input, response time, output), by input.
pub(crate) fn by_case(starts: &[i64], ends: &[i64], case: Case) -> Vec<(i64, i64, i64)> {
    let mut out: Vec<(i64, i64, i64)> = match case {
        Case::All => starts.iter().zip(ends).map(|(s, e)| (*s, e - s, *e)).collect(),
        Case::Best | Case::Worst => {
            let mut per_end: HashMap<i64, usize> = HashMap::default();
            let mut v: Vec<(i64, i64)> = Vec::new();
            for (s, e) in starts.iter().zip(ends) {
                match per_end.get(e) {
                    None => {
                        per_end.insert(*e, v.len());
                        v.push((*s, *e));
                    }
                    Some(&i) => {
                        let better = if case == Case::Best { *s > v[i].0 } else { *s < v[i].0 };
                        if better {
                            v[i].0 = *s;
                        }
                    }
                }
            }
            v.into_iter().map(|(s, e)| (s, e - s, e)).collect()
        }
        Case::WorstWithExternalLatency => {
            let mut per_end: HashMap<i64, usize> = HashMap::default();
            // (start, end, previous start)
            let mut v: Vec<(i64, i64, i64)> = Vec::new();
            for i in 1..starts.len() {
                let (s, e, prev) = (starts[i], ends[i], starts[i - 1]);
                match per_end.get(&e) {
                    None => {
                        per_end.insert(e, v.len());
                        v.push((s, e, prev));
                    }
                    Some(&j) => {
                        if s < v[j].0 {
                            v[j] = (s, e, prev);
                        }
                    }
                }
            }
            v.sort_by_key(|x| x.0);
            return v.into_iter().map(|(_, e, prev)| (prev, e - prev, e)).collect();
        }
    };
    out.sort_by_key(|x| x.0);
    out
}
