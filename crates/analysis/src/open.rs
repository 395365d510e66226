//! Traces opened and analysed, the one way every front end does it (the CLI's analysing
//! commands, the Python package): the traces at some paths opened, analysed by a [`Processor`]
//! with [`Options`], and every error of opening and reading kept, in order.
//!
//! ```no_run
//! let loaded = rostrace_analysis::Open::new(&["/path/to/session"])
//!     .jobs(1)
//!     .on_error(|e| eprintln!("error: {e}"))
//!     .progress(|done, total| eprintln!("{done} of {total} bytes"))
//!     .analyze();
//! match loaded {
//!     Ok(l) => println!("{} callbacks, {} errors", l.analysis.report.callbacks.len(), l.errors.len()),
//!     Err(errors) => eprintln!("no trace could be opened ({} errors)", errors.len()),
//! }
//! ```

use crate::pipeline::{Analysis, Options, Processor};
use crate::tables::ReadError;
use rostrace_ctf::TraceSet;
use std::path::{Path, PathBuf};

/// Traces opened and analysed ([`Open::analyze`]).
pub struct Loaded {
    /// The traces (left to the caller, which may leave them to the process's end).
    pub set: TraceSet,
    /// The analysis.
    pub analysis: Analysis,
    /// The errors of opening the traces, then those of reading them, each in the order met.
    pub errors: Vec<ReadError>,
}

impl Loaded {
    /// Whether every trace was opened and read without error.
    pub fn clean(&self) -> bool {
        self.errors.is_empty()
    }
}

/// How to open and analyse traces: the paths (trace directories, searched recursively, or
/// metadata files), the threads, the [`Options`] and the [`Processor`] (the standard one by
/// default), and callbacks for the progress and the errors.
pub struct Open<'a> {
    paths: Vec<PathBuf>,
    jobs: usize,
    options: Options,
    processor: Option<Processor>,
    on_error: Box<dyn FnMut(&ReadError) + 'a>,
    progress: Box<dyn FnMut(u64, u64) + 'a>,
    on_slice: Option<OnSlice<'a>>,
}

/// A consumer of the slices of a streamed analysis ([`Open::on_slice`]).
type OnSlice<'a> = Box<dyn FnMut(&crate::StreamedSlice<'_>) + 'a>;

impl<'a> Open<'a> {
    /// The traces at `paths`, to be analysed with [`Processor::standard`] and the default
    /// [`Options`], on one thread per core.
    pub fn new<P: AsRef<Path>>(paths: &[P]) -> Open<'a> {
        Open {
            paths: paths.iter().map(|p| p.as_ref().to_path_buf()).collect(),
            jobs: 0,
            options: Options::default(),
            processor: None,
            on_error: Box::new(|_| {}),
            on_slice: None,
            progress: Box::new(|_, _| {}),
        }
    }

    /// Threads (0, the default: one per core; 1: the calling thread only) for opening the
    /// traces and for the analysis ([`Processor::set_jobs`]). The results are the same whatever
    /// the number.
    pub fn jobs(mut self, jobs: usize) -> Self {
        self.jobs = jobs;
        self
    }

    /// What to analyse beyond the whole trace (window, filters, longest paths).
    pub fn options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }

    /// The processor to run (its handlers), instead of [`Processor::standard`]; its threads are
    /// set to [`Open::jobs`].
    pub fn processor(mut self, processor: Processor) -> Self {
        self.processor = Some(processor);
        self
    }

    /// Called with each error as it is met: those of opening the traces before the analysis
    /// starts, those of reading them once it is done.
    pub fn on_error(mut self, f: impl FnMut(&ReadError) + 'a) -> Self {
        self.on_error = Box::new(f);
        self
    }

    /// Called now and then with the bytes read so far and the bytes to read, and once all is
    /// read.
    pub fn progress(mut self, f: impl FnMut(u64, u64) + 'a) -> Self {
        self.progress = Box::new(f);
        self
    }

    /// Called with each slice of a streamed analysis ([`crate::Streaming`]), in order, as it is
    /// added up: for a consumer of every run, publication, take and message (an export) that
    /// keeps no more of them than the analysis does. Not called when the analysis is in memory
    /// (its [`Analysis::runs`] and the rest hold them all then).
    pub fn on_slice(mut self, f: impl FnMut(&crate::StreamedSlice<'_>) + 'a) -> Self {
        self.on_slice = Some(Box::new(f));
        self
    }

    /// Opens the traces and analyses them; the errors of opening them when none could be
    /// opened (none for no path given).
    pub fn analyze(self) -> Result<Loaded, Vec<ReadError>> {
        let Open { paths, jobs, options, processor, mut on_error, progress, on_slice } = self;
        let (mut set, open_errors) = TraceSet::open_jobs(&paths, jobs);
        let mut errors: Vec<ReadError> = open_errors.iter().map(ReadError::from).collect();
        for e in &errors {
            on_error(e);
        }
        if set.traces.is_empty() {
            return Err(errors);
        }
        let standard = processor.is_none();
        // A consumer of the slices has the runs and messages: they need not be kept.
        let takes_tables = on_slice.is_some();
        let analysis = if let Some(span) = crate::stream::wanted(&set, &options, jobs, standard, takes_tables) {
            let slice = options.slice_bytes.unwrap_or(crate::SLICE_BYTES);
            let mut on_slice = on_slice.unwrap_or_else(|| Box::new(|_| {}));
            crate::stream::analyze(&mut set, &options, jobs, slice, span, progress, &mut *on_slice)
        } else {
            let mut p = processor.unwrap_or_else(Processor::standard);
            p.set_jobs(jobs);
            // Several hosts: their clocks aligned.
            let mut a = p.run_aligned(&mut set, &options, progress);
            if options.streaming == crate::Streaming::Always {
                if let Some(why) = crate::stream::refusal(&set, &options, standard, takes_tables) {
                    a.report.warnings.push(format!("analysed in memory, not streamed: {why}"));
                }
            }
            a
        };
        for e in &analysis.report.read_errors {
            on_error(e);
        }
        errors.extend(analysis.report.read_errors.iter().cloned());
        Ok(Loaded { set, analysis, errors })
    }
}
