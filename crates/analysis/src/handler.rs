//! Analyses anyone can add: a [`Handler`] declares the event classes it wants (resolving their
//! fields to indices once, per class), and the [`Processor`](crate::Processor) feeds it their
//! events in the one pass it shares with every other handler and with the ROS 2 model.
//!
//! ```no_run
//! use rostrace_analysis::{At, Context, Handler, Processor, TraceInfo};
//! use rostrace_ctf::{Event, EventClass};
//! use std::collections::HashMap;
//!
//! /// Context switches per CPU, from kernel traces.
//! #[derive(Default)]
//! struct Switches {
//!     per_cpu: HashMap<u64, u64>,
//! }
//!
//! impl Handler for Switches {
//!     fn subscribe(&mut self, trace: &TraceInfo<'_>, class: &EventClass) -> Option<u32> {
//!         (trace.kernel && class.name == "sched_switch").then_some(0)
//!     }
//!     fn event(&mut self, _token: u32, _ev: &Event<'_>, at: &At, _cx: &Context<'_>) {
//!         *self.per_cpu.entry(at.cpu.unwrap_or(0)).or_default() += 1;
//!     }
//! }
//!
//! let (set, _errors) = rostrace_ctf::TraceSet::open(&["/path/to/kernel/trace"]);
//! let mut p = Processor::new();
//! p.add(Switches::default());
//! let analysis = p.analyze(&set, Default::default(), |_, _| {});
//! let switches = analysis.get::<Switches>().unwrap();
//! println!("{:?}", switches.per_cpu);
//! ```

use crate::clocks::ClockShift;
use crate::tables::Collected;
use rostrace_ctf::{Event, EventClass};
use std::any::Any;

/// Where and when an event happened: the keys the analysis groups everything by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct At {
    /// Index of the trace in the trace set.
    pub trace: u32,
    /// Process (the `vpid` context; for a kernel event, the `pid` context when recorded, else 0).
    pub vpid: i64,
    /// Thread (the `vtid` context, else `tid`, else the process).
    pub vtid: i64,
    /// Time, ns since the Unix epoch.
    pub ts: i64,
    /// The CPU of the event's packet (kernel traces, per-CPU buffers).
    pub cpu: Option<u64>,
}

/// A trace of the set, as handlers see it when they subscribe.
#[derive(Debug, Clone, Copy)]
pub struct TraceInfo<'a> {
    /// Index in the trace set ([`At::trace`]).
    pub index: u32,
    /// Whether it is a kernel trace (LTTng's `domain = "kernel"` environment).
    pub kernel: bool,
    /// The trace's host.
    pub hostname: &'a str,
    /// The trace's schema (event classes, environment, clock).
    pub schema: &'a rostrace_ctf::Schema,
    /// The hosts of the set's kernel traces (a userspace trace of one of these hosts can be
    /// joined with its kernel trace by thread id).
    pub kernel_hosts: &'a [String],
}

/// What a handler may read beside its events: the ROS 2 model and instances built so far by
/// the pass (initialization events precede the runtime events that use them), read-only.
pub struct Context<'a> {
    /// The ROS 2 pass: model, callback runs, publications, takes, service calls.
    pub ros2: &'a Collected,
    pub(crate) order: u128,
}

impl<'a> Context<'a> {
    pub(crate) fn new(ros2: &'a Collected, order: u128) -> Context<'a> {
        Context { ros2, order }
    }

    /// The callback run a thread is in at this moment (the innermost), as an index in
    /// [`Collected::runs`].
    pub fn running(&self, at: &At) -> Option<u32> {
        self.ros2.running(at.trace, at.vpid, at.vtid)
    }

    /// The callback handle (trace, process, address) of the run a thread is in at this moment
    /// (the innermost): a key that holds across the slices of a streamed analysis, where run
    /// indices are each slice's own.
    pub fn running_callback(&self, at: &At) -> Option<crate::model::Key> {
        self.ros2.running_callback(at.trace, at.vpid, at.vtid)
    }

    /// The event's place in the time order of all events of the set (time, then stream, then
    /// position in the stream file, compared as numbers): what a handler that splits (see
    /// [`Handler::split`]) merges results kept in event order by.
    pub fn order(&self) -> u128 {
        self.order
    }
}

/// What [`Handler::merge`] needs to take a part's results in.
pub struct Part<'a> {
    pub(crate) runs: &'a [u32],
}

impl Part<'_> {
    /// The index in the whole pass's [`Collected::runs`] of the part's run `local` (as its
    /// [`Context::running`] gave it).
    pub fn run(&self, local: u32) -> u32 {
        self.runs[local as usize]
    }
}

/// An analysis fed by the one pass.
///
/// Before the pass, [`Handler::subscribe`] is called once for every event class of every trace;
/// a handler returns a token of its choice for the classes it wants (an index into its own
/// table of resolved field positions, say) and `None` for the others. During the pass,
/// [`Handler::event`] gets each event of a subscribed class inside the analysis window, in time
/// order across traces, with that token. After the last event, [`Handler::finish`] runs once.
/// The handler owns its results; get it back with [`Processor::get`](crate::Processor::get).
pub trait Handler: Any + Send + Sync {
    /// The token to receive the events of `class` in `trace` with, or `None` not to.
    fn subscribe(&mut self, trace: &TraceInfo<'_>, class: &EventClass) -> Option<u32>;

    /// One event of a subscribed class.
    fn event(&mut self, token: u32, ev: &Event<'_>, at: &At, cx: &Context<'_>);

    /// After the last event.
    fn finish(&mut self, _cx: &Context<'_>) {}

    /// A copy of this handler as it stands after subscribing (its tables, without results), to
    /// share the pass over a set of several traces out across threads: each copy gets the
    /// events of some of the traces, in time order, on a thread of its own; then
    /// [`Handler::merge`] takes each copy's results into the handler registered, and
    /// [`Handler::finish`] runs once, on it. `None` (the default) keeps the pass on one thread
    /// whenever the handler subscribed to an event class of the set. A handler that splits
    /// joins nothing across traces during the pass.
    fn split(&self) -> Option<Box<dyn Handler + Send>> {
        None
    }

    /// Takes in the results of a copy made by [`Handler::split`] (`part` is that copy, to
    /// downcast), which saw other traces' events than the copies merged before it. Of the
    /// indices a copy may have kept from its [`Context`], run indices are mapped ([`Part::run`]);
    /// keep keys (trace, process, address) rather than other indices of [`Collected`]. The copy's run indices are its
    /// part's: map them with [`Part::run`]. Results kept in event order merge by
    /// [`Context::order`]. Parts are merged in turn into the registered handler.
    fn merge(&mut self, _part: Box<dyn Any>, _map: &Part<'_>) {}

    /// Whether [`Handler::shift`] moves every time of the results (`false` by default). The
    /// recordings of several hosts are read once, on the clocks they recorded, when every
    /// handler that subscribed to an event class of the set says so (a handler that subscribed
    /// to none is taken to hold no time: one that builds results in [`Handler::finish`] from
    /// the pass's tables must say so here and move them); the hosts' clocks are then estimated from the
    /// messages they exchanged ([`crate::hosts`]), and what the pass made moved to the aligned
    /// clocks. Otherwise a first pass matches the messages and the analysis reads the
    /// recordings again on the aligned clocks.
    fn shifts(&self) -> bool {
        false
    }

    /// Moves the results to other clocks, once the pass and [`Handler::finish`] are done (when
    /// [`Handler::shifts`]): a time `ts` of trace `t` becomes `by.time(t, ts)`, a duration `d`
    /// becomes `by.duration(t, d)` ([`ClockShift`]).
    fn shift(&mut self, _by: &ClockShift) {}
}

/// Positions of named payload fields in an event class, resolved once: `fields.int(ev, 0)` is
/// then an index, not a string compare, per event.
#[derive(Debug, Clone, Default)]
pub struct Fields(Vec<Option<usize>>);

impl Fields {
    /// The positions of `names` in `class` (`None` for a field the class lacks).
    pub fn of(class: &EventClass, names: &[&str]) -> Fields {
        Fields(names.iter().map(|n| class.field_index(n)).collect())
    }

    /// Whether the class has every field.
    pub fn all(&self) -> bool {
        self.0.iter().all(Option::is_some)
    }

    /// Field `k` (the k-th name given) as an integer.
    #[inline]
    pub fn int(&self, ev: &Event<'_>, k: usize) -> Option<i64> {
        self.0.get(k).copied().flatten().and_then(|i| ev.field_at(i)).and_then(|v| v.as_i64())
    }

    /// Field `k` as an unsigned integer (addresses, sizes).
    #[inline]
    pub fn uint(&self, ev: &Event<'_>, k: usize) -> Option<u64> {
        self.0.get(k).copied().flatten().and_then(|i| ev.field_at(i)).and_then(|v| v.as_u64())
    }

    /// Field `k`, an array or sequence of integers, as bytes (a build id, a GID).
    pub fn bytes(&self, ev: &Event<'_>, k: usize) -> Option<Vec<u8>> {
        let a = self.0.get(k).copied().flatten().and_then(|i| ev.field_at(i))?.as_array()?;
        Some(a.iter().filter_map(|v| v.as_u64()).map(|b| b as u8).collect())
    }

    /// Field `k` as text.
    pub fn str(&self, ev: &Event<'_>, k: usize) -> Option<String> {
        self.0.get(k).copied().flatten().and_then(|i| ev.field_at(i)).and_then(|v| v.as_str().map(|s| s.into_owned()))
    }
}

/// Two lists of results in event order, each with its events' orders (see
/// [`Context::order`]), as one (for [`Handler::merge`]).
pub fn merge_in_order<T>(a: (Vec<T>, Vec<u128>), b: (Vec<T>, Vec<u128>)) -> (Vec<T>, Vec<u128>) {
    let (mut items, mut orders) =
        (Vec::with_capacity(a.0.len() + b.0.len()), Vec::with_capacity(a.1.len() + b.1.len()));
    let (mut ai, mut ao) = (a.0.into_iter(), a.1.into_iter().peekable());
    let (mut bi, mut bo) = (b.0.into_iter(), b.1.into_iter().peekable());
    loop {
        let take_a = match (ao.peek(), bo.peek()) {
            (Some(x), Some(y)) => x < y,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        let (it, o) = if take_a { (ai.next(), ao.next()) } else { (bi.next(), bo.next()) };
        if let (Some(it), Some(o)) = (it, o) {
            items.push(it);
            orders.push(o);
        }
    }
    (items, orders)
}

pub(crate) fn as_any(h: &dyn Handler) -> &dyn Any {
    h
}

pub(crate) fn as_any_mut(h: &mut dyn Handler) -> &mut dyn Any {
    h
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

    /// Adds `handler`, last.
    pub(crate) fn add<H: Handler>(&mut self, handler: H) {
        self.0.push(Box::new(handler));
    }
}
