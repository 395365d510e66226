//! A path followed over a streamed analysis, slice of time by slice of time
//! ([`crate::StreamedSlice`]): each slice's records are made from its tables; those that start in
//! the slice are given out once, in order, with how they went, and added up as they go. Memory is
//! that of one slice's records and of the records whose fate is not known yet (a record stopped
//! short is dropped once a later one gets further, in flight if none does).
//!
//! Counts and the latency's count, sum, mean, min and max equal those of the records of the whole
//! recording ([`super::PathIndex::records`]) for every record that goes its way within the
//! streamed analysis's margin ([`crate::MARGIN_NS`]); percentiles are within
//! [`crate::SKETCH_RELATIVE_ERROR`] beyond 1,024 values. Response times are made per slice from
//! the records it read, each output (each input, in the `all` case) counted by the slice of its
//! time.

use super::arch::Architecture;
use super::index::{PathEnds, PathIndex};
use super::records::{by_case, inputs, leave_out_output, Case, PathCounts, PathRecords, RecordStatus, Segment};
use super::spec::{PathOptions, PathSpec};
use crate::link::View;
use crate::stats::{Sample, Stats};
use std::collections::{BTreeMap, VecDeque};

/// What is given out of a path followed slice by slice ([`PathStream::slice`]).
pub trait PathOutput {
    /// Record `index` (numbered as [`PathRecords::rows`] numbers them), its cells, and how it
    /// went; in order.
    fn record(&mut self, index: u64, row: &[Option<i64>], status: RecordStatus) {
        let _ = (index, row, status);
    }
    /// A response time of `case`: input time, response time (ns); by slice, each slice's by
    /// input.
    fn response(&mut self, case: Case, input: i64, response: i64) {
        let _ = (case, input, response);
    }
}

impl PathOutput for () {}

/// A path followed over the slices of a streamed analysis.
pub struct PathStream<'a> {
    arch: &'a Architecture,
    spec: &'a PathSpec,
    opt: PathOptions,
    cases: Vec<Case>,
    jobs: usize,
    columns: Vec<String>,
    /// Cells of a record (0 until the first slice is followed).
    width: usize,
    segments: Vec<Segment>,
    superseded_at: Vec<usize>,
    counts: PathCounts,
    latency: Sample,
    segment_latency: Vec<Sample>,
    response: Vec<Sample>,
    /// The first output of the path: its inputs are left out of the response times, as
    /// [`PathRecords::response_time`] leaves them out.
    first_output: Option<i64>,
    /// The records from the first whose fate is not known, with their fates where known.
    held: VecDeque<(Vec<Option<i64>>, Option<RecordStatus>)>,
    /// The number of the first held record.
    first_held: u64,
    /// The held records of unknown fate, by how far they got (cells up to their last one).
    open: BTreeMap<usize, Vec<u64>>,
}

/// A path's summary, added up slice by slice ([`PathStream::finish`]).
#[derive(Debug, Clone, Default)]
pub struct StreamedPath {
    /// Column names, as [`PathRecords::columns`].
    pub columns: Vec<String>,
    /// Segments with their latency over the complete records.
    pub segments: Vec<(Segment, Stats)>,
    /// How the records went.
    pub counts: PathCounts,
    /// Latency of the complete records (ns).
    pub latency: Stats,
    /// Response time per case asked for.
    pub response: Vec<(Case, Stats)>,
}

impl StreamedPath {
    /// What [`PathIndex::summary`] tells of the path in memory: its counts and latency.
    pub fn summary(&self) -> super::RecordsSummary {
        super::RecordsSummary { counts: self.counts, latency: self.latency.clone() }
    }
}

impl<'a> PathStream<'a> {
    /// Path `spec` of the whole recording's architecture `arch`, followed with `opt`, with the
    /// response times of `cases`; each slice's records made on `jobs` threads.
    pub fn new(arch: &'a Architecture, spec: &'a PathSpec, opt: PathOptions, cases: &[Case], jobs: usize) -> Self {
        PathStream {
            arch,
            spec,
            opt,
            cases: cases.to_vec(),
            jobs,
            columns: Vec::new(),
            width: 0,
            segments: Vec::new(),
            superseded_at: Vec::new(),
            counts: PathCounts::default(),
            latency: Sample::new(),
            segment_latency: Vec::new(),
            response: cases.iter().map(|_| Sample::new()).collect(),
            first_output: None,
            held: VecDeque::new(),
            first_held: 0,
            open: BTreeMap::new(),
        }
    }

    /// The slice of time from `from` (inclusive) to `to` (exclusive), whose tables are `tables`:
    /// its records that start in it given to `out` with those before them whose fate it tells,
    /// and its response times.
    pub fn slice(&mut self, tables: View<'_>, from: i64, to: i64, out: &mut dyn PathOutput) -> Result<(), String> {
        let mut index = PathIndex::new(tables);
        index.set_jobs(self.jobs);
        self.slice_indexed(&index, from, to, out)
    }

    /// [`PathStream::slice`], the slice's tables indexed (an index that several paths share).
    pub fn slice_indexed(
        &mut self,
        index: &PathIndex,
        from: i64,
        to: i64,
        out: &mut dyn PathOutput,
    ) -> Result<(), String> {
        let r = index.records(self.arch, self.spec, self.opt)?;
        self.slice_records(&r, from, to, out);
        Ok(())
    }

    /// [`PathStream::slice`], the path's records in the slice's tables made already
    /// ([`PathIndex::records`] with this path's architecture, path and options).
    pub fn slice_records(&mut self, r: &PathRecords, from: i64, to: i64, out: &mut dyn PathOutput) {
        if self.width == 0 {
            self.segment_latency = r.segments.iter().map(|_| Sample::new()).collect();
            (self.columns, self.segments, self.superseded_at) =
                (r.columns.clone(), r.segments.clone(), r.superseded_at.clone());
            self.width = r.columns.len();
        }
        let owned = |t: i64| from <= t && t < to;
        for row in &r.rows {
            if row.first().copied().flatten().is_some_and(owned) {
                let reach = row.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
                self.push(row.clone(), reach, out);
            }
        }
        if self.cases.is_empty() {
            return;
        }
        let (mut starts, mut ends) = inputs(&r.rows);
        if self.first_output.is_none() {
            self.first_output = ends.iter().min().copied();
        }
        if let Some(first) = self.first_output {
            leave_out_output(&mut starts, &mut ends, first);
        }
        for (i, &case) in self.cases.iter().enumerate() {
            for (input, response, output) in by_case(&starts, &ends, case) {
                // Each input's in the `all` case, each output's in the others.
                if owned(if case == Case::All { input } else { output }) {
                    self.response[i].add(response);
                    out.response(case, input, response);
                }
            }
        }
    }

    /// [`PathStream::slice`] for the summary only (counts and latency, no segments): the path's
    /// records in the slice's tables as [`PathIndex::ends`] gives them; `out` is given each
    /// record's first and last cells only.
    pub(crate) fn slice_ends(&mut self, e: &PathEnds, from: i64, to: i64, out: &mut dyn PathOutput) {
        if self.width == 0 {
            (self.width, self.superseded_at) = (e.width, e.superseded_at.clone());
        }
        for &(first, last, reach) in &e.rows {
            if first.is_some_and(|t| from <= t && t < to) {
                self.push(vec![first, last], reach, out);
            }
        }
    }

    /// Record `row`, the next one, which has `reach` cells up to its last one: its fate, and
    /// that of the held ones it tells.
    fn push(&mut self, row: Vec<Option<i64>>, reach: usize, out: &mut dyn PathOutput) {
        let width = self.width;
        // Held records that stopped short of this one were dropped.
        let passed: Vec<usize> = self.open.range(..reach).map(|(k, _)| *k).collect();
        for k in passed {
            let status = if self.superseded_at.contains(&k) { RecordStatus::Superseded } else { RecordStatus::Lost };
            for n in self.open.remove(&k).unwrap_or_default() {
                self.held[(n - self.first_held) as usize].1 = Some(status);
            }
        }
        let n = self.first_held + self.held.len() as u64;
        let status = if reach < width {
            self.open.entry(reach).or_default().push(n);
            None
        } else if PathRecords::is_complete(&row) {
            Some(RecordStatus::Complete)
        } else {
            Some(RecordStatus::Lost)
        };
        self.held.push_back((row, status));
        self.give(out);
    }

    /// The held records of known fate, from the first, given out and added up.
    fn give(&mut self, out: &mut dyn PathOutput) {
        while self.held.front().is_some_and(|x| x.1.is_some()) {
            let Some((row, Some(status))) = self.held.pop_front() else { break };
            self.count(&row, status);
            out.record(self.first_held, &row, status);
            self.first_held += 1;
        }
    }

    fn count(&mut self, row: &[Option<i64>], status: RecordStatus) {
        let c = &mut self.counts;
        c.records += 1;
        match status {
            RecordStatus::Complete => c.complete += 1,
            RecordStatus::Superseded => c.superseded += 1,
            RecordStatus::Lost => c.lost += 1,
            RecordStatus::InFlight => c.in_flight += 1,
        }
        c.dropped = c.superseded + c.lost;
        if let (Some(a), Some(b)) = (row.first().copied().flatten(), row.last().copied().flatten()) {
            if b >= a {
                self.latency.add(b - a);
            }
        }
        if PathRecords::is_complete(row) {
            for (s, sample) in self.segments.iter().zip(&mut self.segment_latency) {
                sample.add(row[s.columns.1].unwrap_or(0) - row[s.columns.0].unwrap_or(0));
            }
        }
    }

    /// A uniform random choice of the latencies kept as they are added, for comparing runs
    /// ([`PathStream::finish_with_latencies`]); before the first slice.
    pub(crate) fn keep_latencies(&mut self) {
        self.latency = Sample::with_reservoir(true);
    }

    /// The end of the recording: the records still held were in flight; the summary.
    pub fn finish(self, out: &mut dyn PathOutput) -> StreamedPath {
        self.finish_with_latencies(out).0
    }

    /// [`PathStream::finish`], with the latencies' sample (a choice of them when
    /// [`PathStream::keep_latencies`] was asked).
    pub(crate) fn finish_with_latencies(mut self, out: &mut dyn PathOutput) -> (StreamedPath, Sample) {
        for (_, status) in self.held.iter_mut().filter(|x| x.1.is_none()) {
            *status = Some(RecordStatus::InFlight);
        }
        self.open.clear();
        self.give(out);
        let path = StreamedPath {
            columns: self.columns,
            segments: self.segments.into_iter().zip(&self.segment_latency).map(|(s, l)| (s, l.stats())).collect(),
            counts: self.counts,
            latency: self.latency.stats(),
            response: self.cases.iter().zip(&self.response).map(|(c, s)| (*c, s.stats())).collect(),
        };
        (path, self.latency)
    }
}
