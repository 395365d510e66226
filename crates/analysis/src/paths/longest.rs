//! `rostrace analyze`'s longest paths in a streamed analysis, in its one reading: searched in
//! the architecture of the first slice and followed slice by slice as the slices are added.
//! They stand when the architecture of the whole recording is the same as the first slice's
//! (the same nodes, callbacks, topics and node paths); otherwise the paths of the whole
//! recording's architecture are followed in a second reading. The records of a slice are made
//! by the thread that read it ([`records`]) once the paths are known; the thread that adds the
//! slices up only follows them.

use super::arch::{Architecture, Publishing};
use super::index::{PathEnds, PathIndex};
use super::rank::{analyze_candidates, rank_streamed, LongestPaths};
use super::records::RecordStatus;
use super::spec::{PathOptions, PathSpec};
use super::streamed::{PathOutput, PathStream};
use crate::link::View;
use crate::stats::Sample;
use std::sync::OnceLock;

/// The architecture the paths were searched in, the paths, and what was searched.
pub(crate) type Searched = (Architecture, Vec<PathSpec>, LongestPaths);

/// Each path's records in a slice's tables, their first and last cells (`Err`: a path the
/// trace cannot follow).
pub(crate) type SliceRecords = Vec<Result<PathEnds, String>>;

/// The records of the paths of `searched` in a slice's `tables`, made on `jobs` threads.
pub(crate) fn records(searched: &Searched, tables: View<'_>, jobs: usize) -> SliceRecords {
    let (arch, paths, _) = searched;
    let mut index = PathIndex::new(tables);
    index.set_jobs(jobs);
    paths.iter().map(|p| index.ends(arch, p, PathOptions::default())).collect()
}

/// How many equal parts of the recording a streamed report's path plots draw the extremes of.
pub const PATH_PARTS: usize = 1000;

/// A path's messages that went the whole way, thinned for a plot: in each of [`PATH_PARTS`]
/// equal parts of the recording's `span`, the fastest and the slowest one (its start and its
/// latency, ns).
pub(crate) struct Extremes {
    span: (i64, i64),
    parts: Vec<Option<[(i64, i64); 2]>>,
}

impl Extremes {
    fn new(span: (i64, i64)) -> Extremes {
        Extremes { span, parts: vec![None; PATH_PARTS] }
    }

    /// The messages kept, in time order.
    fn points(self) -> Vec<(i64, i64)> {
        let mut v: Vec<(i64, i64)> = self.parts.into_iter().flatten().flatten().collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

impl PathOutput for Extremes {
    fn record(&mut self, _: u64, row: &[Option<i64>], status: RecordStatus) {
        let (Some(&Some(a)), Some(&Some(b))) = (row.first(), row.last()) else { return };
        if status != RecordStatus::Complete || b < a {
            return;
        }
        let (from, to) = self.span;
        let width = (to - from).max(1) as i128;
        let k = (((a - from).max(0) as i128 * PATH_PARTS as i128 / width) as usize).min(PATH_PARTS - 1);
        let m = (a, b - a);
        let slot = self.parts[k].get_or_insert([m, m]);
        if m.1 < slot[0].1 {
            slot[0] = m;
        }
        if m.1 > slot[1].1 {
            slot[1] = m;
        }
    }
}

/// The longest paths followed slice by slice.
pub(crate) struct LongestStream<'c> {
    searched: &'c OnceLock<Searched>,
    /// Each path followed, with its messages kept for a plot (`None`: one the trace cannot
    /// follow, left out as in memory), from the first slice on.
    streams: Option<Vec<Option<(PathStream<'c>, Extremes)>>>,
    /// The recording's time (ns).
    span: (i64, i64),
    /// Whether a choice of each path's latencies is kept ([`PathStream::keep_latencies`]).
    choose: bool,
    jobs: usize,
}

impl<'c> LongestStream<'c> {
    /// Paths to be searched in the first slice's architecture (`searched` empty), or those of
    /// `searched`, over a recording of time `span`, keeping a choice of each one's latencies when
    /// `choose`; the records of a slice made here on `jobs` threads, when not made already.
    pub(crate) fn new(searched: &'c OnceLock<Searched>, span: (i64, i64), choose: bool, jobs: usize) -> Self {
        LongestStream { searched, streams: None, span, choose, jobs }
    }

    /// The slice of time from `from` to `to`, whose tables are `tables`, who was seen
    /// publishing during which callback's runs up to it being `seen`; `made`: the paths'
    /// records in it, when made already.
    pub(crate) fn slice(
        &mut self,
        tables: View<'_>,
        (from, to): (i64, i64),
        seen: &Publishing,
        made: Option<SliceRecords>,
    ) {
        let searched = self.searched.get_or_init(|| {
            let arch = Architecture::from_seen(tables, seen);
            let (paths, lp) = analyze_candidates(&arch);
            (arch, paths, lp)
        });
        let jobs = self.jobs;
        let (span, choose) = (self.span, self.choose);
        let streams = self.streams.get_or_insert_with(|| {
            let (arch, paths, _) = searched;
            let stream = |p| {
                let mut s = PathStream::new(arch, p, PathOptions::default(), &[], jobs);
                if choose {
                    s.keep_latencies();
                }
                s
            };
            paths.iter().map(|p| Some((stream(p), Extremes::new(span)))).collect()
        });
        if streams.iter().all(Option::is_none) {
            return;
        }
        let made = made.unwrap_or_else(|| records(searched, tables, jobs));
        for (ps, r) in streams.iter_mut().zip(made) {
            match (ps.as_mut(), r) {
                (Some((p, x)), Ok(e)) => p.slice_ends(&e, from, to, x),
                (Some(_), Err(_)) => *ps = None,
                (None, _) => {}
            }
        }
    }

    /// The paths ranked, with the messages of each kept for a plot, when `whole` (the whole
    /// recording's architecture) is the one they were searched in; `None` otherwise (or when no
    /// slice was added).
    pub(crate) fn finish(self, whole: &Architecture) -> Option<(LongestPaths, PathPoints)> {
        let (arch, paths, lp) = self.searched.get()?;
        // (Compared as written, as `rostrace architecture` writes them.)
        if super::yaml::export(arch) != super::yaml::export(whole) {
            return None;
        }
        let mut points = Vec::new();
        let followed = paths.iter().cloned().zip(self.streams.unwrap_or_default()).filter_map(|(p, s)| {
            let (s, x) = s?;
            let (followed, latencies) = s.finish_with_latencies(&mut ());
            let chosen = latencies.chosen().is_some().then_some(latencies);
            points.push(Followed { path: p.clone(), chosen, points: x.points() });
            Some((p, followed))
        });
        let ranked = rank_streamed(arch, followed.collect());
        Some((LongestPaths { paths: ranked, ..lp.clone() }, points))
    }
}

/// A path followed in a streamed analysis: its messages kept for a plot ([`Extremes`]: start and
/// latency, ns), and a choice of its latencies when asked for.
pub(crate) struct Followed {
    pub(crate) path: PathSpec,
    pub(crate) points: Vec<(i64, i64)>,
    pub(crate) chosen: Option<Sample>,
}

/// The paths followed in a streamed analysis.
pub(crate) type PathPoints = Vec<Followed>;
