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
use super::spec::{PathOptions, PathSpec};
use super::streamed::PathStream;
use crate::link::View;
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

/// The longest paths followed slice by slice.
pub(crate) struct LongestStream<'c> {
    searched: &'c OnceLock<Searched>,
    /// Each path followed (`None`: one the trace cannot follow, left out as in memory), from
    /// the first slice on.
    streams: Option<Vec<Option<PathStream<'c>>>>,
    jobs: usize,
}

impl<'c> LongestStream<'c> {
    /// Paths to be searched in the first slice's architecture (`searched` empty), or those of
    /// `searched`; the records of a slice made here on `jobs` threads, when not made already.
    pub(crate) fn new(searched: &'c OnceLock<Searched>, jobs: usize) -> Self {
        LongestStream { searched, streams: None, jobs }
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
        let streams = self.streams.get_or_insert_with(|| {
            let (arch, paths, _) = searched;
            paths.iter().map(|p| Some(PathStream::new(arch, p, PathOptions::default(), &[], jobs))).collect()
        });
        if streams.iter().all(Option::is_none) {
            return;
        }
        let made = made.unwrap_or_else(|| records(searched, tables, jobs));
        for (ps, r) in streams.iter_mut().zip(made) {
            match (ps.as_mut(), r) {
                (Some(p), Ok(e)) => p.slice_ends(&e, from, to, &mut ()),
                (Some(_), Err(_)) => *ps = None,
                (None, _) => {}
            }
        }
    }

    /// The paths ranked, when `whole` (the whole recording's architecture) is the one they were
    /// searched in; `None` otherwise (or when no slice was added).
    pub(crate) fn finish(self, whole: &Architecture) -> Option<LongestPaths> {
        let (arch, paths, lp) = self.searched.get()?;
        // (Compared as written, as `rostrace architecture` writes them.)
        if super::yaml::export(arch) != super::yaml::export(whole) {
            return None;
        }
        let followed = paths
            .iter()
            .cloned()
            .zip(self.streams.unwrap_or_default())
            .filter_map(|(p, s)| Some((p, s?.finish(&mut ()))));
        Some(LongestPaths { paths: rank_streamed(arch, followed.collect()), ..lp.clone() })
    }
}
