//! The engine: one pass over every event of the trace set, in time order, to the ROS 2 model
//! and instances ([`crate::tables`]) and to every registered [`Handler`] ([`collect`]). The pass
//! is planned once ([`plan`]), runs over the whole set or over parts of it on several threads
//! ([`pass`], [`split`]), and the parts are merged in the order of one pass ([`merge`]).

mod merge;
mod pass;
mod plan;
mod split;

use crate::handler::{Context, Handlers};
use crate::tables::Collected;
use crate::window::Window;
use pass::ids_of;
use pass::Pass;
pub(crate) use plan::Plan;
use rostrace_ctf::TraceSet;

/// One pass over `set` with `handlers`, on `jobs` threads (0: one per core; 1: the calling
/// thread only): the ROS 2 model and instances, and every handler fed. `progress(done, total)`
/// is called now and then with bytes read, and once all is read.
///
/// With several traces and several threads, the traces are shared out over the threads, each
/// reading and handling its traces' events in time order; the parts are then merged in the
/// order of one pass over the set. The result is the same. The handlers run on one thread when
/// a handler that subscribed to an event class does not split (see
/// [`Handler::split`](crate::Handler::split)), or when a kernel trace is in the set (its events
/// meet the processes of the other traces of its host), or with one trace; the reading is then
/// on a second thread, when there is one.
pub(crate) fn collect(
    handlers: &mut Handlers,
    jobs: usize,
    set: &TraceSet,
    window: Window,
    progress: impl FnMut(u64, u64),
) -> Collected {
    let plan = Plan::new(set, &mut handlers.0);
    collect_planned(handlers, jobs, set, window, &plan, progress)
}

/// The pass planned over `set`: each handler subscribed to the event classes it wants (see
/// [`Plan::subscribed`]). The plan holds on through corrections of the set's clocks
/// ([`TraceSet::correct_clocks`]): it knows the traces' event classes, not their times.
pub(crate) fn plan(handlers: &mut Handlers, set: &TraceSet) -> Plan {
    Plan::new(set, &mut handlers.0)
}

/// [`collect`] with the plan made by [`plan`] over `set`, with the same handlers.
pub(crate) fn collect_planned(
    handlers: &mut Handlers,
    jobs: usize,
    set: &TraceSet,
    window: Window,
    plan: &Plan,
    mut progress: impl FnMut(u64, u64),
) -> Collected {
    let c = match split::collect_split(handlers, jobs, set, window, plan, &mut progress) {
        Some(c) => c,
        None => pass(handlers, jobs, set, window, plan, &mut progress),
    };
    let c = finish(handlers, c, set, plan.slice.is_none());
    // All read (a reader reports only now and then: it may not have said so).
    let total = set.total_bytes();
    progress(total, total);
    c
}

/// The pass on this thread (the reading on a second one, when there is one).
fn pass(
    handlers: &mut Handlers,
    jobs: usize,
    set: &TraceSet,
    window: Window,
    plan: &Plan,
    mut progress: impl FnMut(u64, u64),
) -> Collected {
    let mut pass = Pass::new(plan, window, false);
    // Reading, decoding and merging on a second thread, when there is one, which also
    // reads each event's process and thread ids (as `ids` reads them) while the event is
    // in its core's cache; the handlers here. (One thread has a loop of its own, where the
    // ids are read here: the same loop over both is slower there.)
    let handlers = &mut handlers.0;
    if rostrace_threads::threads(jobs) < 2 {
        set.read().jobs(jobs).piped().run(|events| {
            loop {
                // (The event is handled where it was returned, not moved out of it: see
                // `Pass::handle_item`.)
                let due = match events.next_ordered() {
                    None => break,
                    Some((order, ref r)) => pass.handle_item(r, order, None, handlers),
                };
                if pass.past_end {
                    break;
                }
                if due {
                    let (d, total) = events.progress();
                    progress(d, total);
                }
            }
            pass.c.losses_from(events.losses());
        });
    } else {
        set.read().jobs(jobs).with_ints(["vpid", "vtid"]).run(|events| {
            loop {
                let due = match events.next_ints() {
                    None => break,
                    Some((order, ints, ref r)) => pass.handle_item(r, order, ints.map(ids_of), handlers),
                };
                if pass.past_end {
                    break;
                }
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
    c
}

/// What the pass collected, made compact, and each handler's [`Handler::finish`] called.
/// (A slice's tables are not made compact: they are given back before long, and copying them to
/// do so costs more than they would save.)
fn finish(handlers: &mut Handlers, mut c: Collected, set: &TraceSet, compact: bool) -> Collected {
    // The events are read: what follows works on what the pass kept.
    set.release_pages();
    c.traces = set.traces.iter().map(|t| t.dir.clone()).zip(set.hosts()).collect();
    if compact {
        c.runs.shrink_to_fit();
        c.pubs.shrink_to_fit();
        c.takes.shrink_to_fit();
        c.model.shrink_to_fit();
    }
    let cx = Context::new(&c, 0);
    for h in &mut handlers.0 {
        h.finish(&cx);
    }
    c
}
