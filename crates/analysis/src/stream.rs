//! Streamed analysis: a recording too long to hold in memory analysed slice of time by slice
//! of time. Each slice's pass reads its time and a margin on either side (so that a callback
//! run that starts in it ends, and a message published in it is taken, inside what is read),
//! with the packets before it that declare objects; it counts only what starts in the slice.
//! Its tables are linked, folded into the totals ([`crate::report::Totals`]) and given back
//! before the next slice is read. Memory is that of one slice and of the totals (the size of
//! the system), whatever the number of events: the packet index grows as slices are read and
//! shrinks as they pass. A callback run still running where its slice's reading ends is carried
//! to the slice that reads its end.
//!
//! Counts, sums, means, minima and maxima equal those of one analysis of the whole recording,
//! for every message taken within the margin after its publication;
//! percentiles are exact for a callback or topic of up to 1,024 values, then within
//! [`SKETCH_RELATIVE_ERROR`](crate::stats::SKETCH_RELATIVE_ERROR). The system analyses whose
//! state lasts as long as the recording are kept from slice to slice and fed each slice's own
//! events ([`Carried`]); the slices are then read one after another. The longest paths are
//! followed only when asked for ([`Options::stream_longest_paths`]): in the same reading, or a
//! second one when the first slice's architecture is not the whole recording's. Without, the
//! report says it leaves them out ([`Streamed::not_computed`]).

use crate::engine;
use crate::handler::Handlers;
use crate::link::{link, Tables, View};
use crate::paths::arch::Architecture;
use crate::paths::rank::{self, LongestPaths};
use crate::paths::{LongestStream, PathPoints, Searched, SliceRecords};
use crate::pipeline::{Analysis, Options};
use crate::report::{Grid, Totals};
use crate::skip::Learning;
use crate::stats::Sample;
use crate::streaming::{Streamed, Streaming, AUTO_BYTES, AUTO_MESSAGE_SHARE, MARGIN_NS};
use crate::system::{Carried, SystemTotals};
use crate::tables::Seed;
use crate::window::{Bound, Window};
use rostrace_ctf::TraceSet;
use std::sync::{Arc, OnceLock};

/// Why `options` cannot be streamed over `set`, when it cannot: `standard`, with the standard
/// handlers; `takes_tables`, with a consumer of each slice's tables ([`crate::Open::on_slice`]).
pub(crate) fn refusal(set: &TraceSet, options: &Options, standard: bool, takes_tables: bool) -> Option<&'static str> {
    let mut hosts = set.hosts();
    hosts.dedup();
    if !standard {
        Some("handlers of your own are fed the whole recording")
    } else if !options.window.is_all() {
        Some("a time window is analysed in memory")
    } else if !options.release_tables && !takes_tables && !options.diff_samples {
        Some("the callback runs and messages are asked for")
    } else if hosts.len() > 1 {
        Some("recordings of several hosts are aligned on the whole recording")
    } else {
        None
    }
}

/// Whether `options` streams its analysis over `set` ([`Options::streaming`]): when it does,
/// the recording's span, which the streamed analysis is cut in slices of ([`analyze`]). Reads
/// on `jobs` threads: for [`Streaming::Auto`], what the recording's last packets hold.
pub(crate) fn wanted(
    set: &TraceSet,
    options: &Options,
    jobs: usize,
    standard: bool,
    takes_tables: bool,
) -> Option<(i64, i64)> {
    let can = || refusal(set, options, standard, takes_tables).is_none();
    let (bytes, slice) = (set.total_bytes(), options.slice_bytes.unwrap_or(crate::SLICE_BYTES));
    match options.streaming {
        Streaming::Never => None,
        Streaming::Auto if bytes > AUTO_BYTES => can().then(|| span(set, jobs, None)),
        Streaming::Auto if bytes >= slice.saturating_mul(2) => {
            let tails = set.tails(jobs);
            (message_share(&tails, set) >= AUTO_MESSAGE_SHARE && can()).then(|| span(set, jobs, Some(tails)))
        }
        Streaming::Auto => None,
        Streaming::Always => can().then(|| span(set, jobs, None)),
    }
}

/// The recording's span, from the first events of its stream files and the last ones of their
/// last packets (in `tails`, when they were read already); (0, 0) when no event has a time.
fn span(set: &TraceSet, jobs: usize, tails: Option<rostrace_ctf::Tails>) -> (i64, i64) {
    let last = tails.map_or_else(|| set.last_time(jobs), |t| t.last);
    match (set.first_time().flatten(), last) {
        (Some(a), Some(b)) => (a, b.max(a)),
        _ => (0, 0),
    }
}

/// The share of messages among the ROS 2 events of `tails` (of `set`): the publications of the
/// layer that recorded the most (`rclcpp_publish`, `rcl_publish`, `rmw_publish`, the DDS
/// writes), each message being one of each.
fn message_share(tails: &rostrace_ctf::Tails, set: &TraceSet) -> f64 {
    use crate::events::Kind;
    const LAYERS: [Kind; 4] = [Kind::RclcppPublish, Kind::RclPublish, Kind::RmwPublish, Kind::DdsWrite];
    let (mut published, mut ros) = ([0u64; LAYERS.len()], 0u64);
    for (t, counts) in set.traces.iter().zip(&tails.classes) {
        let kinds = t.schema.per_class(|ec| Kind::of(&ec.name));
        for (kind, &n) in kinds.iter().zip(counts) {
            if let Some(kind) = kind {
                ros += n;
                if let Some(l) = LAYERS.iter().position(|k| k == kind) {
                    published[l] += n;
                }
            }
        }
    }
    let messages = published.into_iter().max().unwrap_or(0);
    if ros == 0 {
        0.0
    } else {
        messages as f64 / ros as f64
    }
}

/// What a slice's pass made: its linked tables, what the report needs besides, the executor
/// phases and service calls of its time, and its system handlers that carry no state from one
/// slice to the next (message age, sim time), fed what it read, keeping what is of its time.
struct Slice {
    tables: Tables,
    linked: crate::link::Linked,
    executor: crate::executor::ExecutorHandler,
    services: crate::ServiceHandler,
    system: Handlers,
    /// The records of `analyze`'s longest paths in its tables, once the paths are known.
    paths: Option<SliceRecords>,
    /// The initialization events its pass met before its reading ([`Streamed::declarations_again`]).
    again: u64,
}

/// A slice of a streamed analysis, as it is added up ([`crate::Open::on_slice`]): its linked
/// tables (what its pass read: its time and the margins around it) and where the instances in
/// them stand among the whole recording's, numbered as the analysis in memory numbers them
/// (its [`Analysis::runs`], [`Analysis::pubs`], [`Analysis::takes`] indices).
pub struct StreamedSlice<'a> {
    /// The slice's linked tables.
    pub tables: View<'a>,
    /// Each trace's directory and host name, by trace index.
    pub traces: &'a [(std::path::PathBuf, String)],
    /// Its time: from (inclusive) to (exclusive).
    pub from: i64,
    /// See [`StreamedSlice::from`].
    pub to: i64,
    /// The recording's time, from its first event to the end of its last slice (ns): where the
    /// slices lie.
    pub span: (i64, i64),
    runs: Numbers,
    pubs: Numbers,
    takes: Numbers,
    /// Each callback handle's node and kind (the report's), for the runs of the slice.
    callbacks: crate::HashMap<crate::Key, (std::sync::Arc<str>, &'static str)>,
    /// The runs of earlier slices, still running where those slices' reading ended, that
    /// ended in this one: (callback handle, thread id, start, end).
    pub ended: Vec<(crate::Key, i64, i64, i64)>,
    /// The service calls of what the slice read (those of the slice: taken by their server, or
    /// sent by their client, in its time); their runs are the tables' (see
    /// [`StreamedSlice::run_number`]).
    pub services: &'a crate::ServiceHandler,
}

impl StreamedSlice<'_> {
    /// Whether run `i` of the tables started in the slice (each run is the slice's of one).
    pub fn owns_run(&self, i: usize) -> bool {
        self.runs.owned(i)
    }
    /// Whether publication `i` was made in the slice.
    pub fn owns_publication(&self, i: usize) -> bool {
        self.pubs.owned(i)
    }
    /// Whether take `i` was made in the slice.
    pub fn owns_take(&self, i: usize) -> bool {
        self.takes.owned(i)
    }
    /// Run `i`'s index in the whole recording; `None` for a run that started before the margin.
    pub fn run_number(&self, i: usize) -> Option<u64> {
        self.runs.of(i)
    }
    /// Publication `i`'s index in the whole recording.
    pub fn publication_number(&self, i: usize) -> Option<u64> {
        self.pubs.of(i)
    }
    /// Take `i`'s index in the whole recording.
    pub fn take_number(&self, i: usize) -> Option<u64> {
        self.takes.of(i)
    }
    /// The node and kind (`timer`, `subscription`, ...) of the callback of handle `key`, as the
    /// report names them.
    pub fn callback(&self, key: crate::Key) -> Option<(&str, &str)> {
        self.callbacks.get(&key).map(|(n, k)| (&**n, *k))
    }
}

/// The numbers in the whole recording of a slice's instances (runs, publications or takes), in
/// their tables' order: those of the slice follow the ones before it; those in the margin after
/// it are the next slice's first; those in the margin before it the last ones before it.
struct Numbers {
    /// Each instance's number, or `None` when they are in time order: instance `i`'s is then
    /// `first + i - before`.
    of: Option<Vec<Option<u64>>>,
    /// How many are before the slice, and in all.
    before: u64,
    len: usize,
    first: u64,
    owned: u64,
}

impl Numbers {
    /// The instances at `times`, in the tables' order, of a slice from `from` to `to` whose first
    /// one is `first` in the whole recording.
    fn new(times: impl Iterator<Item = i64> + Clone, from: i64, to: i64, first: u64) -> Numbers {
        let (mut before, mut owned, mut sorted, mut last, mut len) = (0u64, 0u64, true, i64::MIN, 0);
        for t in times.clone() {
            len += 1;
            sorted &= last <= t;
            last = t;
            before += u64::from(t < from);
            owned += u64::from(from <= t && t < to);
        }
        if sorted {
            return Numbers { of: None, before, len, first, owned };
        }
        let (mut b, mut o, mut a) = (0, 0, 0);
        let of = times
            .map(|t| {
                if t < from {
                    b += 1;
                    (first + b).checked_sub(before + 1)
                } else if t < to {
                    o += 1;
                    Some(first + o - 1)
                } else {
                    a += 1;
                    Some(first + owned + a - 1)
                }
            })
            .collect();
        Numbers { of: Some(of), before, len, first, owned }
    }

    fn owned(&self, i: usize) -> bool {
        self.of(i).is_some_and(|n| n >= self.first && n < self.first + self.owned)
    }

    fn of(&self, i: usize) -> Option<u64> {
        match &self.of {
            Some(of) => of.get(i).copied().flatten(),
            None if i < self.len => (self.first + i as u64).checked_sub(self.before),
            None => None,
        }
    }
}

/// What a slice's pass feeds besides its own analysis: the system handlers that carry state
/// (when the slices are read one after another), and the longest paths to make the records of.
struct Along<'a> {
    carried: Option<&'a mut Carried>,
    longest: Option<&'a OnceLock<Searched>>,
}

/// The slices of a recording: their times, and what each one's pass reads.
struct Slices {
    grid: Grid,
    /// Per trace and event class: whether it declares objects (what a pass reads before its
    /// window; it passes over the other events there).
    init: Vec<Vec<bool>>,
    /// How many sets read the slices, each every `every`-th slice.
    every: i64,
}

/// What a slice's pass starts from of the objects declared before it (the copy the slice before
/// it on its set kept), and the time of which it keeps a copy for the next ([`Slices::seed_at`]).
#[derive(Clone, Copy)]
struct Seeds<'a> {
    from: Option<&'a Arc<Seed>>,
    keep_at: Option<i64>,
}

impl Seeds<'_> {
    /// The time before which the pass is given no event: what its copy holds (`i64::MIN`: none).
    fn at(&self) -> i64 {
        self.from.map_or(i64::MIN, |s| s.at)
    }
}

/// What a reader of slices keeps from one slice to the next it reads.
#[derive(Default)]
struct OnSet {
    /// The tables' sizes of its last slice.
    room: [usize; 3],
    /// What was declared before a time that its last slice's pass kept ([`Slices::seed_at`]).
    seed: Option<Arc<Seed>>,
}

impl Slices {
    /// The recording's time, from its first event to the end of its last slice (ns).
    fn span(&self) -> (i64, i64) {
        let Grid { first, slice_ns, slices, .. } = self.grid;
        (first, first.saturating_add(slices.saturating_mul(slice_ns)))
    }

    /// Slice `k`'s time, from (inclusive) to (exclusive): the first one from the start of time,
    /// the last one to its end.
    fn time(&self, k: i64) -> (i64, i64) {
        let Grid { first, slice_ns, slices, .. } = self.grid;
        let from = if k == 0 { i64::MIN } else { first.saturating_add(k * slice_ns) };
        let to = if k == slices - 1 { i64::MAX } else { first.saturating_add((k + 1) * slice_ns) };
        (from, to)
    }

    /// What slice `k`'s pass reads: its window (its time and the margin on either side), where
    /// the reading starts and where it ends.
    fn reading(&self, k: i64) -> (Window, i64, i64) {
        let (from, to) = self.time(k);
        let margin = self.grid.margin_ns;
        let window = Window {
            begin: (from != i64::MIN).then(|| Bound::Absolute(from.saturating_sub(margin))),
            end: (to != i64::MAX).then(|| Bound::Absolute(to.saturating_add(margin))),
        };
        (window, from.saturating_sub(margin), to.saturating_add(margin))
    }

    /// The time of which slice `k`'s pass keeps what was declared before it, for the next slice
    /// read on its set, `k + every` (`None`: there is none): before the next slice's reading
    /// and before the end of slice `k`'s (at the start of the slice after `k`).
    fn seed_at(&self, k: i64, every: i64) -> Option<i64> {
        let next = k + every;
        (next < self.grid.slices).then(|| self.time(k + 1).0.min(self.reading(next).1))
    }

    /// Slice `k`'s events read over `set` through its window, the packets before it that
    /// declare nothing passed over as `learnt` knows them (guessed when `may_guess` and the
    /// slices done allow it), fed to `carried` too; `room`: the tables' sizes to make room for.
    /// `seeds`: what was declared before a time, which the pass starts from rather than read the
    /// packets before it again, and the time of which to keep a copy for the next slice.
    /// Returns what it collected, its handlers, and whether it guessed.
    #[allow(clippy::too_many_arguments)]
    fn read(
        &self,
        set: &mut TraceSet,
        learnt: &Learning,
        k: i64,
        jobs: usize,
        room: [usize; 3],
        carried: Option<&mut Carried>,
        may_guess: bool,
        seeds: Seeds<'_>,
    ) -> (crate::tables::Collected, Handlers, bool) {
        let (from, to) = self.time(k);
        let (window, begin, _) = self.reading(k);
        let seeded = seeds.at();
        let guessed = match window.begin {
            Some(_) => {
                let guessed = learnt.pass_over(set, &self.init, k, begin, seeded, may_guess, |j| self.time(j).0);
                // In the packets it reads before its window, only what declares objects, and
                // nothing of what its seed holds.
                let filter =
                    rostrace_ctf::EventFilter { before_ns: begin, all_before_ns: seeded, keep: self.init.clone() };
                set.pass_over_events(filter);
                guessed
            }
            None => {
                set.clear_packet_filter();
                false
            }
        };
        let mut handlers = Handlers::default();
        // Executor phases: those of the slice's own time, added to the slices' before.
        handlers.add(crate::executor::ExecutorHandler { within: Some((from, to)), ..Default::default() });
        // Service calls: those of what it reads, the slice's counted by their time.
        handlers.add(crate::ServiceHandler::default());
        handlers.add(crate::system::MessageAge::sliced((from, to)));
        handlers.add(crate::system::SimTime::sliced((from, to)));
        if let Some(c) = carried {
            c.within = (from, to);
            handlers.add(std::mem::take(c));
        }
        let mut plan = engine::plan(&mut handlers, set);
        plan.slice = Some((from, to));
        plan.room = room;
        plan.declarations = Some(begin);
        plan.seed = seeds.from.cloned();
        plan.seed_at = seeds.keep_at;
        let c = engine::collect_planned(&mut handlers, jobs, set, window, &plan, |_, _| {});
        (c, handlers, guessed)
    }

    /// Slice `k`'s pass over `set` (the packets before its window that declare nothing, as
    /// `learnt` knows them, passed over), linked; `room`: the tables' sizes of the slice before
    /// on this set, updated; `along`: the system handlers that carry state, fed the events of
    /// the slice's time, and the longest paths, whose records it makes once they are known.
    fn pass(
        &self,
        set: &mut TraceSet,
        learnt: &Learning,
        k: i64,
        jobs: usize,
        on: &mut OnSet,
        along: Along<'_>,
    ) -> Slice {
        let Along { mut carried, longest } = along;
        let room = &mut on.room;
        let (_, begin, end) = self.reading(k);
        // What the slice before it on this set kept of what was declared (see `seed_at`).
        let seed = on.seed.take();
        let seeds = Seeds { from: seed.as_ref(), keep_at: self.seed_at(k, self.every) };
        // The packets up to the slice's end indexed, so that the next slice on this set steps
        // over those before it without reading their headers again: those it passes over are
        // joined into one entry, and the index holds about a slice's packets.
        set.index_until(end);
        // (State carried from slice to slice is fed once: its slices are read in their order, and
        // each knows what the ones before it declared.)
        let may_guess = carried.is_none();
        let (mut c, mut handlers, guessed) =
            self.read(set, learnt, k, jobs, *room, carried.as_deref_mut(), may_guess, seeds);
        // (What it declares in its own time is the same whatever it passed over before it.)
        let d = std::mem::take(&mut c.declarations);
        let (before, mut again) = (d.before, d.before);
        learnt.publish(k, d);
        if guessed && !learnt.met_all(k, begin, seeds.at(), before) {
            // A packet it passed over unread declared objects: read again, knowing them.
            (c, handlers, _) = self.read(set, learnt, k, jobs, *room, None, false, seeds);
            again = c.declarations.before;
        }
        on.seed = c.seed.take().map(Arc::new);
        // Room for an eighth more than this slice had, in the next.
        *room = [c.runs.len(), c.pubs.len(), c.takes.len()].map(|n| n + n / 8);
        let executor = handlers.get_mut::<crate::executor::ExecutorHandler>().map(std::mem::take).unwrap_or_default();
        let services = handlers.get_mut::<crate::ServiceHandler>().map(std::mem::take).unwrap_or_default();
        if let Some(c) = carried {
            *c = handlers.get_mut::<Carried>().map(std::mem::take).unwrap_or_default();
        }
        let mut system = Handlers::default();
        system.add(handlers.get_mut::<crate::system::MessageAge>().map(std::mem::take).unwrap_or_default());
        system.add(handlers.get_mut::<crate::system::SimTime>().map(std::mem::take).unwrap_or_default());
        let (tables, linked) = link(c, rostrace_threads::threads(jobs));
        // The paths are searched in the first slice's architecture, made by the thread that adds
        // the slices up: the others wait for them.
        let mut with_services = Handlers::default();
        with_services.add(services);
        let paths = longest
            .filter(|l| k > 0 || l.get().is_some())
            .map(|l| crate::paths::longest_records(l.wait(), tables.view(&with_services), jobs));
        let services = with_services.get_mut::<crate::ServiceHandler>().map(std::mem::take).unwrap_or_default();
        Slice { tables, linked, executor, services, system, paths, again }
    }
}

/// The streamed analysis of `set`, with slices of about `slice_bytes` each over its `span` (from
/// [`wanted`]: the recording's first and last event times). With several
/// threads, as many slices are read at once, each on a thread of its own and on the set opened
/// again (a packet filter of its own); they are added up in their order.
pub(crate) fn analyze(
    set: &mut TraceSet,
    options: &Options,
    jobs: usize,
    slice_bytes: u64,
    span: (i64, i64),
    progress: impl FnMut(u64, u64),
    on_slice: &mut dyn FnMut(&StreamedSlice<'_>),
) -> Analysis {
    // Each slice's tables are made of the blocks the ones before gave back, their pages in place.
    let _keeping =
        rostrace_alloc::keep_freed(usize::try_from(slice_bytes.saturating_mul(KEPT_SLICES)).unwrap_or(usize::MAX));
    analyze_with(set, options, jobs, (slice_bytes, span), progress, on_slice, None)
}

/// How many slices' worth of bytes (of the recording) the blocks kept between slices may weigh
/// ([`rostrace_alloc::keep_freed`]): about what the tables of the slices being made and added up
/// at once give back.
const KEPT_SLICES: u64 = 3;

/// [`analyze`], in slices of `cut.0` bytes over the recording's span `cut.1`; `preset`: the longest paths to follow (searched already, in the whole
/// recording's architecture: a second reading), and whether to keep a choice of their latencies
/// (for the samples of the first reading), else `analyze`'s are searched in the first slice's
/// architecture when asked for.
fn analyze_with(
    set: &mut TraceSet,
    options: &Options,
    jobs: usize,
    cut: (u64, (i64, i64)),
    mut progress: impl FnMut(u64, u64),
    on_slice: &mut dyn FnMut(&StreamedSlice<'_>),
    preset: Option<(&OnceLock<Searched>, bool)>,
) -> Analysis {
    let total = set.total_bytes();
    let (slice_bytes, (first, last)) = cut;
    let slices = total.div_ceil(slice_bytes.max(1)).max(1) as i64;
    let slice_ns = ((last - first) / slices + 1).max(1);
    let grid = Grid { first, slice_ns, slices, margin_ns: MARGIN_NS };
    let mut plan = Slices { grid, init: crate::skip::init_classes(set), every: 1 };
    let mut totals = Totals::new(grid, options.diff_samples);
    let mut last = Default::default();
    // The numbers of the first run, publication and take of the next slice.
    let mut firsts = [0u64; 3];
    // Who publishes during which callback's runs, for the architecture of the whole recording.
    let mut publishing = crate::paths::arch::Publishing::default();
    // The system analyses: those that carry state from slice to slice, and the totals. (A
    // second reading, for the longest paths alone, computes none.)
    let mut carried = Carried::default();
    if preset.is_none() {
        // (Subscribed once here, to learn whether the recording has their events.)
        let mut h = Handlers::default();
        h.add(Carried::standard());
        engine::plan(&mut h, set);
        carried = h.get_mut::<Carried>().map(std::mem::take).unwrap_or_default();
    }
    let mut system = SystemTotals::<Sample>::new(Some(plan.span()));
    // `analyze`'s longest paths, searched in the first slice's architecture (or preset).
    let own = OnceLock::new();
    let searched = preset.map_or(&own, |p| p.0);
    let follows = ((options.longest_paths && options.stream_longest_paths) || preset.is_some()).then_some(searched);
    let mut longest =
        follows.map(|l| LongestStream::new(l, plan.span(), options.diff_samples || preset.is_some_and(|p| p.1), jobs));
    // The other readers' sets: the same traces opened again and indexed. (With events for the
    // system analyses that carry state, one reader reads the slices in their order.)
    let workers = if carried.subscribed() { 1 } else { rostrace_threads::threads(jobs).min(slices as usize) };
    let mut others: Vec<TraceSet> =
        (1..workers).map(|_| set.reopen().0).filter(|o| o.traces.len() == set.traces.len()).collect();
    plan.every = others.len() as i64 + 1;
    let mut again = 0;
    let mut add = |k: i64, slice: Slice, carried: Option<&mut Carried>| {
        let Slice { tables: t, linked, executor, services, system: slice_system, paths, again: a } = slice;
        again += a;
        system.add(&slice_system);
        if let Some(c) = carried {
            system.add(&c.handlers);
            crate::system::totals_clear(&mut c.handlers);
        }
        // (The service calls are the view's, for the paths through them.)
        let mut handlers = Handlers::default();
        handlers.add(services);
        let view = t.view(&handlers);
        let services = handlers.get::<crate::ServiceHandler>().expect("added");
        publishing.extend(crate::paths::arch::Architecture::seen_publishing(view));
        let (from, to) = plan.time(k);
        totals.add_executor(&executor.threads);
        totals.add_services(&t.model, services, from, to);
        let crate::report::Added { callbacks, ended } = totals.add(&view, linked, from, to);
        let s = StreamedSlice {
            runs: Numbers::new(t.runs.iter().map(|r| r.run.start), from, to, firsts[0]),
            pubs: Numbers::new(t.pubs.iter().map(|p| p.publication.ts), from, to, firsts[1]),
            takes: Numbers::new(t.takes.iter().map(|x| x.take.ts), from, to, firsts[2]),
            tables: view,
            traces: &t.traces,
            from,
            to,
            span: plan.span(),
            callbacks,
            ended,
            services,
        };
        on_slice(&s);
        if let Some(l) = longest.as_mut() {
            l.slice(s.tables, (from, to), &publishing, paths);
        }
        firsts = [firsts[0] + s.runs.owned, firsts[1] + s.pubs.owned, firsts[2] + s.takes.owned];
        // (Its model declares every object so far: the last one's, every object.)
        last = (t.model, t.traces);
        progress((k as u64 + 1) * total / slices as u64, total);
    };
    let learnt = Learning::new(slices as usize);
    if others.is_empty() {
        let mut on = OnSet::default();
        for k in 0..slices {
            let along = Along { carried: Some(&mut carried), longest: follows };
            let slice = plan.pass(set, &learnt, k, jobs, &mut on, along);
            add(k, slice, Some(&mut carried));
        }
    } else {
        let n = others.len() as i64 + 1;
        let (plan, learnt) = (&plan, &learnt);
        std::thread::scope(|s| {
            let mut results = Vec::new();
            for (w, set) in std::iter::once(&mut *set).chain(others.iter_mut()).enumerate() {
                // A slice made is handed over when it is added up: one per reader held at once, besides
                // the one being read.
                let (tx, rx) = std::sync::mpsc::sync_channel(0);
                results.push(rx);
                rostrace_threads::spawn_off(s, w, move || {
                    // (A reader that stops short, its slices never done, lets those waiting for
                    // them go on: the analysis has failed.)
                    let mut reading = learnt.reading();
                    let mut on = OnSet::default();
                    for k in (w as i64..plan.grid.slices).step_by(n as usize) {
                        let along = Along { carried: None, longest: follows };
                        if tx.send(plan.pass(set, learnt, k, 1, &mut on, along)).is_err() {
                            return;
                        }
                    }
                    reading.done();
                });
            }
            rostrace_threads::let_started_move();
            for k in 0..slices {
                match results[(k % n) as usize].recv() {
                    Ok(slice) => add(k, slice, None),
                    // A reader that stopped short has panicked: the scope passes its panic on.
                    Err(_) => break,
                }
            }
            // (Readers waiting for the paths of a first slice never added go on.)
            let _ = searched.set(Searched::default());
        });
    }
    drop(others);
    set.clear_packet_filter();
    let (mut model, traces) = last;
    let mut samples = options.diff_samples.then(|| totals.diff_samples());
    // (The executor phases are the report's and, for the exports, a handler's as in memory.)
    let mut handlers = Handlers::default();
    handlers.add(crate::executor::ExecutorHandler { threads: totals.executor().clone(), within: None });
    let mut report = totals.report(&mut model);
    carried.finish();
    let names: crate::HashMap<crate::Key, (&str, &str)> =
        report.callbacks.iter().map(|c| ((c.trace, c.vpid, c.address), (&*c.node, &*c.symbol))).collect();
    let system = system.report(&carried.handlers, &names);
    report.system = system;
    report.streamed = Some(Streamed {
        slices: slices as u64,
        slice_ns,
        margin_ns: MARGIN_NS,
        percentile_relative_error: crate::stats::SKETCH_RELATIVE_ERROR,
        not_computed: if options.longest_paths && follows.is_none() { vec!["longest paths"] } else { Vec::new() },
        readings: 1,
        declarations_again: again,
    });
    let tables = Tables {
        model,
        traces,
        runs: Vec::new(),
        slots: Vec::new(),
        pubs: Vec::new(),
        takes: Vec::new(),
        flows: Vec::new(),
    };
    let mut a = Analysis::new(tables, handlers);
    let whole = (longest.is_some() || !options.release_architecture)
        .then(|| crate::paths::arch::Architecture::from_seen(&a, &publishing));
    if let (Some(l), Some(whole)) = (longest, &whole) {
        let lp = match l.finish(whole) {
            Some(lp) => Some(lp),
            None if preset.is_some() => None,
            None => {
                if let Some(s) = report.streamed.as_mut() {
                    s.readings = 2;
                }
                longest_read_again(set, options, jobs, cut, whole, &mut progress)
            }
        };
        if let Some((lp, points)) = lp {
            let lp = rank::analyze_top(lp, |p| options.keeps_path(p));
            if let Some(s) = samples.as_mut() {
                path_samples(&lp, &points, s);
            }
            report.longest_paths = Some(lp);
            a.streamed_path_points = points;
        }
    }
    report.filter(options.nodes.as_ref(), options.topics.as_ref());
    if !options.release_architecture {
        a.architecture = whole;
    }
    a.report = report;
    a.streamed_samples = samples;
    a
}

/// The report's longest paths `lp`, each with the choice of its latencies kept as it was followed
/// (`followed`), into the samples of the run `s`: those it compares ([`crate::diff`]).
fn path_samples(lp: &LongestPaths, followed: &PathPoints, s: &mut crate::samples::Samples) {
    for p in &lp.paths {
        let Some(chosen) = followed.iter().find(|f| f.path == p.path).and_then(|f| f.chosen.as_ref()) else { continue };
        s.paths_followed.push(p.path.clone());
        if chosen.count() > 0 {
            s.path.insert(p.label.clone(), chosen.chosen().unwrap_or_default().to_vec());
            s.whole.entry("path".to_string()).or_default().insert(p.label.clone(), chosen.stats());
        }
    }
}

/// `analyze`'s longest paths in the whole recording's architecture `arch`, followed over `set`
/// read again slice by slice (when the first slice's architecture was not the whole
/// recording's).
fn longest_read_again(
    set: &mut TraceSet,
    options: &Options,
    jobs: usize,
    cut: (u64, (i64, i64)),
    arch: &Architecture,
    progress: &mut dyn FnMut(u64, u64),
) -> Option<(LongestPaths, PathPoints)> {
    let (paths, lp) = rank::analyze_candidates(arch);
    let searched = OnceLock::from((arch.clone(), paths, lp));
    let again = Options { longest_paths: false, release_architecture: true, diff_samples: false, ..options.clone() };
    let a = analyze_with(set, &again, jobs, cut, progress, &mut |_| {}, Some((&searched, options.diff_samples)));
    Some((a.report.longest_paths?, a.streamed_path_points))
}
