//! The engine: one pass over every event of the trace set, in time order, to the ROS 2 model
//! and instances ([`crate::tables`]) and to every registered [`Handler`]. The pass is planned
//! once ([`plan`]), runs over the whole set or over parts of it on several threads ([`pass`],
//! [`split`]), and the parts are merged in the order of one pass ([`merge`]).

mod merge;
mod pass;
mod plan;
mod split;

use crate::handler::{as_any, as_any_mut, Context, Handler};
use crate::tables::Collected;
use crate::window::Window;
use pass::ids_of;
use pass::Pass;
use plan::Plan;
use rostrace_ctf::TraceSet;

/// Runs the pass with handlers.
///
/// [`Processor::standard`] holds the handlers behind `rostrace analyze`'s report (executor phases,
/// CPU time, scheduling, memory, function profile, message age); [`Processor::new`] none. Add your
/// own with [`Processor::add`], run with [`Processor::analyze`] (the [`crate::Analysis`], which
/// then holds the handlers: read each one's results with [`crate::Analysis::get`]) or
/// [`Processor::collect`] (the ROS 2 tables only; then [`Processor::get`]).
#[derive(Default)]
pub struct Processor {
    pub(crate) handlers: Handlers,
    pub(crate) jobs: usize,
}

impl Processor {
    /// A processor with no handler but the ROS 2 pass.
    pub fn new() -> Processor {
        Processor::default()
    }

    /// Threads (0, the default: one per core; 1: the calling thread only): for a set of several
    /// traces, the pass shared out by trace (see [`Processor::collect`]), and the longest
    /// paths' search. The pass over one trace (or a set that cannot be shared out) reads,
    /// decodes and merges the events on a second thread, which hands them over merged, in
    /// batches, while the calling thread handles them ([`TraceSet::with_events_piped`]); the
    /// handlers stay on one thread. The results are the same whatever the number.
    pub fn set_jobs(&mut self, jobs: usize) -> &mut Processor {
        self.jobs = jobs;
        self
    }

    /// Registers `handler`; it gets its events in the next run.
    pub fn add<H: Handler>(&mut self, handler: H) -> &mut Processor {
        self.handlers.0.push(Box::new(handler));
        self
    }

    /// The first registered handler of type `H` (after [`Processor::collect`]; after an
    /// analysis, [`crate::Analysis::get`]).
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
    pub fn collect(&mut self, set: &TraceSet, window: Window, mut progress: impl FnMut(u64, u64)) -> Collected {
        let c = self.pass(set, window, &mut progress);
        // All read (a reader reports only now and then: it may not have said so).
        let total = set.total_bytes();
        progress(total, total);
        c
    }

    /// [`Processor::collect`], split over threads when it can be.
    fn pass(&mut self, set: &TraceSet, window: Window, mut progress: impl FnMut(u64, u64)) -> Collected {
        let plan = Plan::new(set, &mut self.handlers.0);
        if let Some(c) = self.collect_split(set, window, &plan, &mut progress) {
            return c;
        }
        let mut pass = Pass::new(&plan, window, false);
        // Reading, decoding and merging on a second thread, when there is one, which also
        // reads each event's process and thread ids (as `ids` reads them) while the event is
        // in its core's cache; the handlers here. (One thread has a loop of its own, where the
        // ids are read here: the same loop over both is slower there.)
        let handlers = &mut self.handlers.0;
        if rostrace_threads::threads(self.jobs) < 2 {
            set.read().jobs(self.jobs).piped().run(|events| {
                loop {
                    // (The event is handled where it was returned, not moved out of it: see
                    // `Pass::handle_item`.)
                    let due = match events.next_ordered() {
                        None => break,
                        Some((order, ref r)) => pass.handle_item(r, order, None, handlers),
                    };
                    if due {
                        let (d, total) = events.progress();
                        progress(d, total);
                    }
                }
                pass.c.losses_from(events.losses());
            });
        } else {
            set.read().jobs(self.jobs).with_ints(["vpid", "vtid"]).run(|events| {
                loop {
                    let due = match events.next_ints() {
                        None => break,
                        Some((order, ints, ref r)) => pass.handle_item(r, order, ints.map(ids_of), handlers),
                    };
                    if due {
                        let (d, total) = events.progress();
                        progress(d, total);
                    }
                }
                pass.c.losses_from(events.losses());
            });
        }
        let mut c = pass.finish(set);
        c.model.resolve_owners();
        self.finish(c, set)
    }

    pub(super) fn finish(&mut self, mut c: Collected, set: &TraceSet) -> Collected {
        // The events are read: what follows works on what the pass kept.
        set.release_pages();
        c.traces = set.traces.iter().map(|t| (t.dir.clone(), t.hostname())).collect();
        c.runs.shrink_to_fit();
        c.pubs.shrink_to_fit();
        c.takes.shrink_to_fit();
        c.model.shrink_to_fit();
        let cx = Context::new(&c, 0);
        for h in &mut self.handlers.0 {
            h.finish(&cx);
        }
        c
    }
}

/// The handlers of a pass, in the order they were added; after the analysis, in the
/// [`crate::Analysis`] with their results.
#[derive(Default)]
pub struct Handlers(pub(crate) Vec<Box<dyn Handler>>);

impl Handlers {
    /// The first handler of type `H`.
    pub fn get<H: Handler>(&self) -> Option<&H> {
        self.0.iter().find_map(|h| as_any(h.as_ref()).downcast_ref::<H>())
    }

    /// The first handler of type `H`, mutable (e.g. to take its tables).
    pub fn get_mut<H: Handler>(&mut self) -> Option<&mut H> {
        self.0.iter_mut().find_map(|h| as_any_mut(h.as_mut()).downcast_mut::<H>())
    }
}
