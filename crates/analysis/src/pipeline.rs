//! The pipeline, in order: the pass ([`crate::engine`]) → linking ([`crate::link`]) → the longest
//! paths, when asked for ([`crate::paths`]) → the report ([`crate::report`]) → the filter by node
//! and topic. Its one product is the [`Analysis`], which every consumer (text, HTML, exports,
//! Python) reads.

use crate::handler::{Handler, Handlers};
use crate::link::{link, Flow, Linked, LinkedPublication, LinkedRun, LinkedTake, Tables, View};
use crate::model::{Key, Model};
use crate::paths::Architecture;
use crate::report::Report;
use crate::tables::Collected;
use crate::window::Window;
use regex_lite::Regex;
use rostrace_ctf::TraceSet;
use std::borrow::Cow;

/// Everything an analysis found: the model, the linked tables, the report (with the longest
/// paths when asked for) and the handlers that ran, with their results.
pub struct Analysis {
    /// The model.
    pub model: Model,
    /// Each trace's directory and host name, by trace index.
    pub traces: Vec<(std::path::PathBuf, String)>,
    /// Callback runs, with the callback object each belongs to (None: no initialization event).
    pub runs: Vec<LinkedRun>,
    /// Callback handles of the runs (see `Run::slot`).
    pub slots: Vec<Key>,
    /// Publications, with their topic.
    pub pubs: Vec<LinkedPublication>,
    /// Takes, with their subscription.
    pub takes: Vec<LinkedTake>,
    /// Matched flows.
    pub flows: Vec<Flow>,
    /// The report.
    pub report: Report,
    /// The handlers of the pass, with their results ([`Analysis::get`]).
    pub handlers: Handlers,
    /// The architecture the longest paths were searched in, when they were
    /// ([`Analysis::architecture`]).
    pub architecture: Option<Architecture>,
    /// The records of the report's longest paths ([`Analysis::longest_path_records`]).
    longest_records: std::sync::OnceLock<Vec<Option<crate::paths::PathRecords>>>,
    /// A streamed analysis's samples for [`crate::diff`], chosen as its slices went by
    /// ([`Options::diff_samples`]).
    pub(crate) streamed_samples: Option<crate::samples::Samples>,
    /// A streamed analysis's longest paths' messages kept for a plot, per path followed.
    pub(crate) streamed_path_points: crate::paths::PathPoints,
}

impl Analysis {
    /// The linked tables and the handlers, with the report still empty.
    pub(crate) fn new(t: Tables, handlers: Handlers) -> Analysis {
        // (Also the analysis a streamed one is made into: crate::stream.)
        let Tables { model, traces, runs, slots, pubs, takes, flows } = t;
        Analysis {
            model,
            traces,
            runs,
            slots,
            pubs,
            takes,
            flows,
            report: Report::default(),
            handlers,
            architecture: None,
            longest_records: std::sync::OnceLock::new(),
            streamed_samples: None,
            streamed_path_points: Vec::new(),
        }
    }

    /// Makes the report of the linked tables (see [`Options::release_tables`]).
    fn make_report(&mut self, linked: Linked, release_tables: bool) {
        self.make_report_beside(linked, release_tables, None::<fn(View<'_>)>);
    }

    /// [`make_report`](Self::make_report), with `beside` run over the tables at the same time on
    /// another thread, and its result. The tables the report does not need are given back
    /// between its steps when nothing runs beside it, else once both are done.
    fn make_report_beside<R: Send>(
        &mut self,
        linked: Linked,
        release_tables: bool,
        beside: Option<impl for<'v> FnOnce(View<'v>) -> R + Send>,
    ) -> Option<R> {
        let Analysis { model, runs, slots, pubs, takes, flows, handlers, report, .. } = self;
        let view = View { model, runs, slots, pubs, takes, flows, handlers };
        let release = |pubs: &mut Vec<_>, takes: &mut Vec<_>, flows: &mut Vec<_>| {
            if release_tables {
                (*pubs, *takes, *flows) = (Vec::new(), Vec::new(), Vec::new());
            }
        };
        match beside {
            Some(task) => {
                let (out, made) = std::thread::scope(|s| {
                    let h = rostrace_threads::spawn_off(s, 1, move || task(view));
                    rostrace_threads::let_started_move();
                    let made = crate::report::begin(model, &view, linked).finish(&view);
                    (h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)), made)
                });
                *report = made;
                release(pubs, takes, flows);
                Some(out)
            }
            None => {
                let reporting = crate::report::begin(model, &view, linked);
                release(pubs, takes, flows);
                *report = reporting.finish(&View { model, runs, slots, pubs, takes, flows, handlers });
                None
            }
        }
    }

    /// The records (each message along the path, at each stage) of the report's longest paths,
    /// in their order; `None` for a path that cannot be followed. Made when first asked for,
    /// once, with the architecture the paths were found in.
    pub fn longest_path_records(&self) -> &[Option<crate::paths::PathRecords>] {
        self.longest_records.get_or_init(|| {
            let Some(lp) = &self.report.longest_paths else { return Vec::new() };
            let arch = self.architecture();
            let index = crate::paths::PathIndex::new(self);
            lp.paths.iter().map(|p| index.records(&arch, &p.path, Default::default()).ok()).collect()
        })
    }

    /// In a streamed analysis that followed its longest paths, the messages of `path` that went
    /// the whole way kept for a plot: in each of [`crate::paths::PATH_PARTS`] equal parts of the
    /// recording, the fastest and the slowest (start, latency in ns), in time order. `None` for a
    /// path not followed so, or an analysis in memory (whose records are all there,
    /// [`Analysis::longest_path_records`]).
    pub fn streamed_path_points(&self, path: &crate::paths::PathSpec) -> Option<&[(i64, i64)]> {
        self.streamed_path_points.iter().find(|f| &f.path == path).map(|f| f.points.as_slice())
    }

    /// The architecture of the analyzed system (nodes, callbacks, communications), as the
    /// longest paths' search built it, or built now.
    pub fn architecture(&self) -> Cow<'_, Architecture> {
        match &self.architecture {
            Some(a) => Cow::Borrowed(a),
            None => Cow::Owned(Architecture::from_analysis(self)),
        }
    }

    /// The first handler of type `H` that ran in the pass, with its results.
    pub fn get<H: Handler>(&self) -> Option<&H> {
        self.handlers.get()
    }

    /// The first handler of type `H`, mutable (e.g. to take its tables).
    pub fn get_mut<H: Handler>(&mut self) -> Option<&mut H> {
        self.handlers.get_mut()
    }
}

impl<'a> From<&'a Analysis> for View<'a> {
    fn from(a: &'a Analysis) -> View<'a> {
        View {
            model: &a.model,
            runs: &a.runs,
            slots: &a.slots,
            pubs: &a.pubs,
            takes: &a.takes,
            flows: &a.flows,
            handlers: &a.handlers,
        }
    }
}

/// What to analyze beyond the whole trace: a time window, the nodes and topics to report, and
/// whether to search the longest end-to-end paths.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The runtime events analyzed.
    pub window: Window,
    /// Only the nodes whose `/namespace/name` matches (and their callbacks, topics, time
    /// shares, services, paths).
    pub nodes: Option<Regex>,
    /// Only the topics whose name matches (and their callbacks, nodes and paths).
    pub topics: Option<Regex>,
    /// Search the report's ten longest paths ([`crate::paths::longest_of`]).
    pub longest_paths: bool,
    /// Follow them in a streamed analysis too (in its one reading, or a second when its first
    /// slice's architecture is not the whole recording's): about a fifth more time on
    /// message-heavy recordings. Else a streamed report leaves them out and says so.
    pub stream_longest_paths: bool,
    /// Give the architecture the longest paths were searched in back once they are found, before
    /// the report is made, when nothing asks for it afterwards: the report's rows and the
    /// architecture, each as large as the system, are then not held at once
    /// ([`Analysis::architecture`] builds it again if asked for).
    pub release_architecture: bool,
    /// Give the publications, takes and flows back once the report's topics are made, when
    /// nothing asks for them afterwards (a report printed or written as JSON): the tables and
    /// the rows of the report's other sections are then not held at once. The analysis's
    /// [`pubs`](Analysis::pubs), [`takes`](Analysis::takes) and [`flows`](Analysis::flows) are
    /// then empty: what is made of them afterwards ([`Analysis::longest_path_records`], the
    /// samples of [`crate::diff`]) finds no message, and an architecture built again afterwards
    /// ([`Analysis::architecture`] after [`Options::release_architecture`]) sees no callback
    /// publishing (every node path `use_latest_message`): keep the architecture to ask for it.
    pub release_tables: bool,
    /// Hosts whose clock offset is known (host name, its clock minus the reference host's, ns),
    /// instead of estimated from the messages (see [`crate::hosts`]); used by [`crate::Open`].
    pub clock_offsets: Vec<(String, i64)>,
    /// Keep the recorded clocks of several hosts as they are (no alignment).
    pub keep_clocks: bool,
    /// Align the clocks of several hosts by reading their recordings twice (a first pass
    /// matches the messages, the second analyses on the aligned clocks), even where one pass
    /// would do ([`Processor::run_aligned`]): the same results, in a different order where
    /// the hosts' events interleave differently; what the one pass is tested against.
    pub align_in_two_passes: bool,
    /// Whether the analysis is streamed, slice of time by slice of time, in memory bounded by
    /// the system's size rather than the recording's length (see [`Streaming`](crate::Streaming)).
    pub streaming: crate::Streaming,
    /// The size of a streamed analysis's slices, in bytes of stream files
    /// ([`SLICE_BYTES`](crate::SLICE_BYTES) when `None`).
    pub slice_bytes: Option<u64>,
    /// The samples [`crate::diff`] compares are asked for ([`crate::samples::Samples::of`]). In
    /// memory they are made of the tables, which are then kept; a streamed analysis keeps a
    /// uniform random choice of each callback's, topic's and pair's values as its slices go
    /// by, with the statistics of all of them.
    pub diff_samples: bool,
}

impl Options {
    /// Whether a path goes through a node [`Options::nodes`] matches and a topic
    /// [`Options::topics`] matches (when given).
    pub fn keeps_path(&self, p: &crate::paths::PathSpec) -> bool {
        self.nodes.as_ref().is_none_or(|re| p.nodes.iter().any(|n| re.is_match(n)))
            && self.topics.as_ref().is_none_or(|re| p.topics.iter().any(|t| re.is_match(t)))
    }
}

/// Runs the pipeline with handlers.
///
/// [`Processor::standard`] holds the handlers behind `rostrace analyze`'s report (executor phases,
/// CPU time, scheduling, memory, function profile, message age); [`Processor::new`] none. Add your
/// own with [`Processor::add`], run with [`Processor::analyze`] or [`Processor::run`] (the
/// [`Analysis`], which then holds the handlers: read each one's results with [`Analysis::get`])
/// or [`Processor::collect`] (the ROS 2 tables only; then [`Processor::get`]).
#[derive(Default)]
pub struct Processor {
    pub(crate) handlers: Handlers,
    pub(crate) jobs: usize,
}

/// How many callback runs, publications and takes per node a recording must hold for its longest
/// paths to be searched beside its report ([`Processor::report`]).
const BESIDE_PER_NODE: usize = 1000;

impl Processor {
    /// A processor with no handler but the ROS 2 pass.
    pub fn new() -> Processor {
        Processor::default()
    }

    /// A processor with the handlers of `rostrace analyze`.
    pub fn standard() -> Processor {
        let mut p = Processor::new();
        p.add(crate::executor::ExecutorHandler::default());
        p.add(crate::services::ServiceHandler::default());
        crate::system::add_standard(&mut p.handlers);
        p
    }

    /// Threads (0, the default: one per core; 1: the calling thread only): for a set of several
    /// traces, the pass shared out by trace (see [`Processor::collect`]), and the longest
    /// paths' search. The pass over one trace (or a set that cannot be shared out) reads,
    /// decodes and merges the events on a second thread, which hands them over merged, in
    /// batches, while the calling thread handles them ([`TraceSet::read`]); the handlers stay
    /// on one thread. The results are the same whatever the number.
    pub fn set_jobs(&mut self, jobs: usize) -> &mut Processor {
        self.jobs = jobs;
        self
    }

    /// Registers `handler`; it gets its events in the next run.
    pub fn add<H: Handler>(&mut self, handler: H) -> &mut Processor {
        self.handlers.add(handler);
        self
    }

    /// The first registered handler of type `H` (after [`Processor::collect`]; after an
    /// analysis, [`Analysis::get`]).
    pub fn get<H: Handler>(&self) -> Option<&H> {
        self.handlers.get()
    }

    /// The first registered handler of type `H`, mutable (e.g. to take its tables).
    pub fn get_mut<H: Handler>(&mut self) -> Option<&mut H> {
        self.handlers.get_mut()
    }

    /// One pass over `set`: the ROS 2 model and instances, and every handler fed.
    ///
    /// With several traces and several threads ([`Processor::set_jobs`]), the traces are
    /// shared out over the threads, each reading and handling its traces' events in time
    /// order; the parts are then merged in the order of one pass over the set. The result is
    /// the same. The handlers run on one thread when a handler that subscribed to an event
    /// class does not split (see [`Handler::split`]), or when a kernel trace is in the set (its
    /// events meet the processes of the other traces of its host), or with one trace; the
    /// reading is then on a second thread, when there is one.
    pub fn collect(&mut self, set: &TraceSet, window: Window, progress: impl FnMut(u64, u64)) -> Collected {
        crate::engine::collect(&mut self.handlers, self.jobs, set, window, progress)
    }

    /// The whole pipeline: one pass over `set`, the report (filtered by node and topic) and,
    /// when asked for, the longest paths. `progress(done, total)` is called now and then with
    /// bytes read.
    pub fn run(self, set: &TraceSet, options: &Options, progress: impl FnMut(u64, u64)) -> Analysis {
        let jobs = self.jobs;
        let (an, linked) = self.linked(set, options.window, progress);
        Processor::report(an, linked, options, jobs)
    }

    /// The longest paths when asked for, the report, and its filter by node and topic.
    ///
    /// With more than one thread, and a recording of many more callback runs, publications and
    /// takes than nodes, the paths are searched on a thread of their own while the report is
    /// made (the report's sections need none of the paths). The search's and the report's
    /// working tables grow with the system, the tables they both read with the recording: held
    /// at once, they then cost little beside those tables. With many nodes for what they did,
    /// they are made one after the other, so that the two are not held at once, and the tables
    /// the report does not need are given back between its steps.
    pub(crate) fn report(mut an: Analysis, linked: Linked, options: &Options, jobs: usize) -> Analysis {
        let keep = |p: &crate::paths::PathSpec| options.keeps_path(p);
        let instances = an.runs.len() + an.pubs.len() + an.takes.len();
        let beside = instances >= BESIDE_PER_NODE * an.model.nodes.items.len().max(1);
        // (The architecture is kept only when asked for: given back before the report when made
        // before it.)
        let search = |v: View<'_>| {
            let (lp, arch) = crate::paths::longest_with_architecture(v, keep, jobs);
            (lp, (!options.release_architecture).then_some(arch))
        };
        let found = if options.longest_paths && beside && rostrace_threads::threads(jobs) > 1 {
            an.make_report_beside(linked, options.release_tables, Some(search))
        } else {
            let found = options.longest_paths.then(|| search(View::from(&an)));
            an.make_report(linked, options.release_tables);
            found
        };
        let lp = found.map(|(lp, arch)| {
            an.architecture = arch;
            lp
        });
        an.report.longest_paths = lp;
        an.report.filter(options.nodes.as_ref(), options.topics.as_ref());
        an
    }

    /// One pass over `set` (runtime events inside `window`), then the report of the ROS 2 model
    /// and of the standard handlers that are registered. `progress(done, total)` is called now
    /// and then with bytes read.
    pub fn analyze(self, set: &TraceSet, window: Window, progress: impl FnMut(u64, u64)) -> Analysis {
        let (mut an, linked) = self.linked(set, window, progress);
        an.make_report(linked, false);
        an
    }

    /// One pass over `set`, its tables linked, and no report (the messages matched, for the
    /// alignment of hosts' clocks).
    pub(crate) fn linked_only(self, set: &TraceSet) -> Analysis {
        self.linked(set, Window::default(), |_, _| {}).0
    }

    /// One pass over `set`, its tables linked: the analysis with the report still empty, and
    /// what the report needs besides the tables.
    fn linked(mut self, set: &TraceSet, window: Window, progress: impl FnMut(u64, u64)) -> (Analysis, Linked) {
        let c = self.collect(set, window, progress);
        let (tables, linked) = link(c, rostrace_threads::threads(self.jobs));
        (Analysis::new(tables, self.handlers), linked)
    }
}

/// Resolves the collected data of a pass and computes every metric (with the handlers of that
/// pass, for the report's sections that come from them).
pub fn analyze_collected(c: Collected, handlers: Handlers) -> Analysis {
    let (tables, linked) = link(c, 1);
    let mut a = Analysis::new(tables, handlers);
    a.make_report(linked, false);
    a
}

/// Reads the traces once and computes the whole analysis (the ROS 2 model and the standard
/// handlers: [`Processor::standard`]). `progress(done, total)` is called now and then with
/// bytes read.
pub fn analyze_traces(set: &TraceSet, progress: impl FnMut(u64, u64)) -> Analysis {
    analyze_window(set, Window::default(), progress)
}

/// [`analyze_traces`] over the runtime events inside `window` only.
pub fn analyze_window(set: &TraceSet, window: Window, progress: impl FnMut(u64, u64)) -> Analysis {
    Processor::standard().analyze(set, window, progress)
}

/// Reads every event once and collects the model and the instances (no handler but the ROS 2
/// pass; [`Processor`] adds others).
pub fn collect(set: &TraceSet, progress: impl FnMut(u64, u64)) -> Collected {
    collect_window(set, Window::default(), progress)
}

/// [`collect`], keeping only the runtime events inside `window`.
pub fn collect_window(set: &TraceSet, window: Window, progress: impl FnMut(u64, u64)) -> Collected {
    Processor::new().collect(set, window, progress)
}
