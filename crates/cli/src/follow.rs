//! Paths followed over a recording whose analysis was streamed: read a second time, slice by
//! slice, each path followed in each slice (`e2e`, `paths`, `check`, `export --path`).

use crate::args::Input;
use rostrace_analysis::paths::{
    Architecture, Case, PathIndex, PathOptions, PathOutput, PathSpec, PathStream, StreamedPath,
};

/// Where each of several paths followed slice by slice gives its records ([`follow_streamed`]).
pub trait Select {
    /// Path `k`'s output.
    fn select(&mut self, k: usize) -> &mut dyn PathOutput;
}

/// Records given to nothing.
pub struct Nowhere;

impl PathOutput for Nowhere {}

impl Select for Nowhere {
    fn select(&mut self, _: usize) -> &mut dyn PathOutput {
        self
    }
}

/// The paths `specs` of `arch` (the whole recording's), each with its options, followed over the
/// recording of `input`, read again slice by slice (its analysis was streamed), with the response
/// times of `cases`; path `k` gives its records to `out.select(k)`. Each path's summary (`None`
/// for a path the trace cannot follow), and whether the recording was read without error.
pub fn follow_streamed(
    input: &mut Input,
    arch: &Architecture,
    specs: &[(PathSpec, PathOptions)],
    cases: &[Case],
    out: &mut dyn Select,
) -> Result<(Vec<Option<StreamedPath>>, bool), String> {
    let jobs = input.jobs;
    let mut streams: Vec<Option<PathStream>> =
        specs.iter().map(|(s, opt)| Some(PathStream::new(arch, s, *opt, cases, jobs))).collect();
    input.options.streaming = rostrace_analysis::Streaming::Always;
    let again = input.load_again(|slice| {
        // One index of the slice's tables for every path.
        let mut index = PathIndex::new(slice.tables);
        index.set_jobs(jobs);
        for (k, ps) in streams.iter_mut().enumerate() {
            if let Some(p) = ps {
                if p.slice_indexed(&index, slice.from, slice.to, out.select(k)).is_err() {
                    *ps = None;
                }
            }
        }
    });
    let Some(again) = again else { return Err("the recording could not be read again to follow the paths".into()) };
    let done = streams.into_iter().enumerate().map(|(k, ps)| ps.map(|p| p.finish(out.select(k)))).collect();
    Ok((done, again.clean()))
}
