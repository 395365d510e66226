//! What the pass collects: the [`Model`] (from initialization events) and compact instance
//! records of runtime events (callback runs, publications, takes), linked to each other along
//! each thread. Resolution against the model happens afterwards ([`crate::link`]).

use crate::collections::HashMap;
use crate::model::*;

/// One execution of a callback; compact (24 bytes), as there is one per callback run of the
/// trace.
#[derive(Debug, Clone, Copy)]
pub struct Run {
    /// Index of the callback handle in [`Collected::slots`] (low 31 bits), and whether the run
    /// was flagged intra-process (the high bit).
    slot_intra: u32,
    /// Thread.
    pub vtid: i32,
    /// Start (ns).
    pub start: i64,
    pub(crate) end: i64,
}

pub(crate) const NO_END: i64 = i64::MIN;

/// The bit of [`Run::slot_intra`] that flags an intra-process run.
const INTRA: u32 = 1 << 31;

impl Run {
    /// A run of the callback handle `slot` (below 2^31) on thread `vtid` from `start`, not
    /// ended yet.
    pub(crate) fn new(slot: u32, vtid: i32, intra: bool, start: i64) -> Run {
        debug_assert!(slot < INTRA);
        Run { slot_intra: slot | if intra { INTRA } else { 0 }, vtid, start, end: NO_END }
    }

    /// Index of the callback handle in [`Collected::slots`].
    #[inline]
    pub fn slot(&self) -> usize {
        (self.slot_intra & !INTRA) as usize
    }

    /// `is_intra_process` of `callback_start`.
    #[inline]
    pub fn intra(&self) -> bool {
        self.slot_intra & INTRA != 0
    }

    /// The same run, of the callback handle `slot`.
    pub(crate) fn with_slot(self, slot: u32) -> Run {
        Run { slot_intra: slot | (self.slot_intra & INTRA), ..self }
    }

    /// End (ns), if the trace has it.
    #[inline]
    pub fn end(&self) -> Option<i64> {
        (self.end != NO_END).then_some(self.end)
    }

    /// Its start and end moved by `f` (see [`crate::ClockShift`]).
    pub(crate) fn shift(&mut self, f: impl Fn(i64) -> i64) {
        self.start = f(self.start);
        if self.end != NO_END {
            self.end = f(self.end);
        }
    }

    /// Duration (ns), if the run ended.
    #[inline]
    pub fn duration(&self) -> Option<i64> {
        self.end().map(|e| e - self.start)
    }
}

/// One publication of a message, across the rclcpp/rcl/rmw/DDS layers of one thread. Compact
/// (the layers' times are read through methods, an absent one held as a sentinel rather than
/// an `Option` of twice its size), as there is one per message of the trace.
#[derive(Debug, Clone)]
pub struct Publication {
    /// Trace.
    pub trace: u32,
    /// The callback run ([`Publication::in_run`]), or [`NO_RUN`].
    pub(crate) in_run: u32,
    /// Process.
    pub vpid: i64,
    /// Thread.
    pub vtid: i64,
    /// rcl publisher handle (0 when unknown).
    pub publisher: u64,
    /// rmw publisher handle (0 when unknown).
    pub rmw_publisher: u64,
    /// DDS writer (0 when unknown).
    pub writer: u64,
    /// Message address.
    pub message: u64,
    /// Time of the first layer's event.
    pub ts: i64,
    /// The times of [`Layer`]s, [`NO_TIME`] when absent.
    pub(crate) times: [i64; 6],
    /// Ring buffer and index of an intra-process publication (the first subscription's buffer
    /// it went into).
    pub ring: Option<(u64, u64)>,
    /// Intra-process publication.
    pub intra: bool,
}

const NO_TIME: i64 = i64::MIN;
const NO_RUN: u32 = u32::MAX;

/// The times a [`Publication`] holds besides its first event's.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Layer {
    Rclcpp,
    Rcl,
    Rmw,
    Dds,
    /// The DDS source timestamp of the sample.
    Source,
    /// The publishing thread's next event after `rmw_publish`.
    After,
}

impl Default for Publication {
    fn default() -> Self {
        Publication {
            trace: 0,
            in_run: NO_RUN,
            vpid: 0,
            vtid: 0,
            publisher: 0,
            rmw_publisher: 0,
            writer: 0,
            message: 0,
            ts: 0,
            times: [NO_TIME; 6],
            ring: None,
            intra: false,
        }
    }
}

impl Publication {
    #[inline]
    fn time(&self, l: Layer) -> Option<i64> {
        let t = self.times[l as usize];
        (t != NO_TIME).then_some(t)
    }

    /// Sets the time of a layer (`NO_TIME` is not a time a trace can hold: before 1678).
    #[inline]
    pub(crate) fn set(&mut self, l: Layer, ts: i64) {
        self.times[l as usize] = ts;
    }

    /// Whether the publication has the time of a layer.
    #[inline]
    pub(crate) fn has(&self, l: Layer) -> bool {
        self.times[l as usize] != NO_TIME
    }

    /// Its times moved by `f` (see [`crate::ClockShift`]), but the DDS source timestamp: the
    /// publishing host's clock as recorded, as the takes' source timestamps are.
    pub(crate) fn shift(&mut self, f: impl Fn(i64) -> i64) {
        self.ts = f(self.ts);
        for (l, t) in self.times.iter_mut().enumerate() {
            if *t != NO_TIME && l != Layer::Source as usize {
                *t = f(*t);
            }
        }
    }

    /// Time of `rclcpp_publish`.
    pub fn ts_rclcpp(&self) -> Option<i64> {
        self.time(Layer::Rclcpp)
    }

    /// Time of `rcl_publish`.
    pub fn ts_rcl(&self) -> Option<i64> {
        self.time(Layer::Rcl)
    }

    /// Time of `rmw_publish`.
    pub fn ts_rmw(&self) -> Option<i64> {
        self.time(Layer::Rmw)
    }

    /// Time of the DDS write event.
    pub fn ts_dds(&self) -> Option<i64> {
        self.time(Layer::Dds)
    }

    /// DDS source timestamp of the sample.
    pub fn source_ts(&self) -> Option<i64> {
        self.time(Layer::Source)
    }

    /// Time of the publishing thread's next event after `rmw_publish` (bounds the DDS write).
    pub fn ts_after(&self) -> Option<i64> {
        self.time(Layer::After)
    }

    /// Callback run on this thread during which it was published.
    pub fn in_run(&self) -> Option<u32> {
        (self.in_run != NO_RUN).then_some(self.in_run)
    }

    /// Sets [`Publication::in_run`] (runs are fewer than `u32::MAX`: their indices are `u32`s).
    pub(crate) fn set_in_run(&mut self, run: Option<u32>) {
        self.in_run = run.unwrap_or(NO_RUN);
    }
}

/// One take of a message by a subscription (or a CARET dispatch).
#[derive(Debug, Clone, Default)]
pub struct Take {
    /// Trace.
    pub trace: u32,
    /// Process.
    pub vpid: i64,
    /// Thread.
    pub vtid: i64,
    /// rmw subscription handle (0 for CARET dispatches).
    pub rmw_subscription: u64,
    /// Callback handle, when the event names it (CARET dispatch).
    pub callback: u64,
    /// Message address.
    pub message: u64,
    /// Time.
    pub ts: i64,
    /// Source timestamp (0 when absent).
    pub source_ts: i64,
    /// Whether a message was taken.
    pub taken: bool,
    /// Intra-process delivery: the publication it carries, when known.
    pub intra_pub: Option<u32>,
    /// Intra-process.
    pub intra: bool,
    /// The callback run it led to.
    pub run: Option<u32>,
}

/// The first and last time of `ranges` (each trace's, as [`Collected`] holds them), moved by
/// `time` (trace index, time).
pub(crate) fn range_of(ranges: &[(i64, i64)], time: impl Fn(u32, i64) -> i64) -> Option<(i64, i64)> {
    let each = ranges.iter().enumerate().filter(|(_, r)| r.0 <= r.1);
    each.map(|(t, r)| (time(t as u32, r.0), time(t as u32, r.1))).reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
}

/// Everything one pass collects.
#[derive(Default)]
pub struct Collected {
    /// The model.
    pub model: Model,
    /// Callback runs.
    pub runs: Vec<Run>,
    /// Callback handles of the runs (see [`Run::slot`]).
    pub slots: Vec<Key>,
    /// Publications.
    pub pubs: Vec<Publication>,
    /// Takes.
    pub takes: Vec<Take>,
    /// `callback_end` events without a start, per process (trace, vpid).
    pub unmatched_ends: HashMap<(u32, i64), u64>,
    /// Events read (inside the window).
    pub events: u64,
    /// ROS 2 events inside the window.
    pub ros_events: u64,
    /// The window (ns since the epoch) when one was given.
    pub window: Option<(i64, i64)>,
    /// Events the analysis does not use: (name, count), by name. Kernel events are named
    /// `kernel:<name>`.
    pub unused_events: Vec<(String, u64)>,
    /// First and last event time.
    pub range: Option<(i64, i64)>,
    /// Each trace's first and last event time, by trace index ((`i64::MAX`, `i64::MIN`): none).
    pub(crate) ranges: Vec<(i64, i64)>,
    /// Errors met while reading.
    pub errors: Vec<ReadError>,
    /// Losses (discarded events, lost packets), as text.
    pub losses: Vec<String>,
    /// Discarded events in all.
    pub discarded: u64,
    /// Each trace's directory and host name, by trace index.
    pub traces: Vec<(std::path::PathBuf, String)>,
    /// Open callback runs per thread, innermost last: (callback handle, run).
    pub(crate) open: HashMap<(u32, i64, i64), Vec<(u64, u32)>>,
    /// The slice of time whose unmatched callback ends and topics' counts are counted, when the
    /// pass is a slice's ([`crate::engine::Plan::slice`]).
    pub(crate) counted: Option<(i64, i64)>,
    /// In a slice's pass, each `callback_end` of its time without a start: (trace, vpid, vtid,
    /// callback, time), the end of a run that started in an earlier slice.
    pub(crate) ends_alone: Vec<(u32, i64, i64, u64, i64)>,
    /// In a part of a split pass: the order (see [`crate::Context::order`]) of the event of
    /// each run, publication and take, to merge the parts by.
    pub(crate) orders: Option<Orders>,
    /// The current event's order (in a part of a split pass).
    pub(crate) order: u128,
    /// The initialization events a slice's pass met ([`crate::engine::Plan::declarations`]).
    pub(crate) declarations: Declarations,
    /// What the events before a time declared, when the pass was asked for it
    /// ([`crate::engine::Plan::seed_at`]).
    pub(crate) seed: Option<Seed>,
}

/// What the events before a time declared, as a pass over them would have it: a later slice's
/// pass starts from it rather than reading again every packet before that time that declares
/// objects ([`crate::engine::Plan::seed`]).
#[derive(Debug, Clone)]
pub(crate) struct Seed {
    /// The time: the events before it.
    pub(crate) at: i64,
    /// The model they made, without the counts of the processes' events and the lifecycle
    /// transitions (those of the slice whose pass made it).
    pub(crate) model: Model,
    /// The initialization events met of the traces in parts (see the pass's `replayed`).
    pub(crate) inits: crate::collections::HashSet<(u32, u64)>,
}

/// The initialization events (those that declare objects) a slice's pass met: what the slices
/// of a streamed analysis learn from one another of the packets that declare objects
/// ([`crate::stream`]).
#[derive(Debug, Default)]
pub(crate) struct Declarations {
    /// How many were before the slice's reading.
    pub(crate) before: u64,
    /// The time of each one of the slice's own time.
    pub(crate) own: Vec<i64>,
    /// The packets that hold one: (stream file, byte offset), each once.
    pub(crate) packets: Vec<(std::ffi::OsString, u64)>,
    /// Those of `packets`, by the address of their file's path (the set's, for the pass).
    seen: crate::collections::HashSet<(usize, u64)>,
}

impl Declarations {
    /// One at `ts`, of `ev`'s packet, in a slice of `own` time whose reading starts at `begin`.
    pub(crate) fn note(&mut self, ev: &rostrace_ctf::Event<'_>, ts: i64, begin: i64, own: Option<(i64, i64)>) {
        self.before += u64::from(ts < begin);
        if own.is_some_and(|(a, b)| a <= ts && ts < b) {
            self.own.push(ts);
        }
        let (path, offset) = (ev.stream_path(), ev.packet_offset());
        // (A path compares and hashes component by component: its file is known by where the set
        // holds it.)
        if self.seen.insert((path.as_os_str().as_encoded_bytes().as_ptr() as usize, offset)) {
            self.packets.push((path.as_os_str().to_owned(), offset));
        }
    }
}

/// An error met while reading the traces: its text, and whether it is a stream file's incomplete
/// last packet (the reader's [`rostrace_ctf::Error::Truncated`]), as of a file still being
/// written. In JSON, its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    /// What the reader said.
    pub message: String,
    /// Whether the file ends inside its last packet.
    pub truncated: bool,
}

impl From<&rostrace_ctf::Error> for ReadError {
    fn from(e: &rostrace_ctf::Error) -> Self {
        ReadError { message: e.to_string(), truncated: e.is_truncated() }
    }
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl serde::Serialize for ReadError {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.message)
    }
}

/// The orders of the events of a part's runs, publications and takes.
#[derive(Default)]
pub(crate) struct Orders {
    pub(crate) runs: Vec<u128>,
    pub(crate) pubs: Vec<u128>,
    pub(crate) takes: Vec<u128>,
}

impl Collected {
    /// Each of `losses`, as [`add_loss`](Self::add_loss).
    pub(crate) fn losses_from(&mut self, losses: &[rostrace_ctf::Loss]) {
        for l in losses {
            self.add_loss(l);
        }
    }

    /// Counts a loss the reader reported.
    pub(crate) fn add_loss(&mut self, l: &rostrace_ctf::Loss) {
        if let rostrace_ctf::LossKind::Events(k) = l.kind {
            self.discarded += k;
        }
        self.losses.push(match l.kind {
            rostrace_ctf::LossKind::Events(k) => format!("{}: {k} events discarded", l.path.display()),
            rostrace_ctf::LossKind::Packets(k) => format!("{}: {k} packets lost", l.path.display()),
        });
    }

    /// Adds a run; its index.
    pub(crate) fn push_run(&mut self, run: Run) -> u32 {
        if let Some(o) = &mut self.orders {
            o.runs.push(self.order);
        }
        self.runs.push(run);
        self.runs.len() as u32 - 1
    }

    /// Adds a publication; its index.
    pub(crate) fn push_pub(&mut self, p: Publication) -> u32 {
        if let Some(o) = &mut self.orders {
            o.pubs.push(self.order);
        }
        self.pubs.push(p);
        self.pubs.len() as u32 - 1
    }

    /// Adds a take; its index.
    pub(crate) fn push_take(&mut self, t: Take) -> u32 {
        if let Some(o) = &mut self.orders {
            o.takes.push(self.order);
        }
        self.takes.push(t);
        self.takes.len() as u32 - 1
    }

    /// The callback run thread `vtid` of process (`trace`, `vpid`) is in now (the innermost),
    /// as an index in [`Collected::runs`].
    pub fn running(&self, trace: u32, vpid: i64, vtid: i64) -> Option<u32> {
        self.open.get(&(trace, vpid, vtid)).and_then(|s| s.last()).map(|&(_, run)| run)
    }

    /// The callback handle (trace, vpid, address) of the run thread `vtid` of process
    /// (`trace`, `vpid`) is in now (the innermost).
    pub fn running_callback(&self, trace: u32, vpid: i64, vtid: i64) -> Option<crate::model::Key> {
        self.open.get(&(trace, vpid, vtid)).and_then(|s| s.last()).map(|&(cb, _)| (trace, vpid, cb))
    }
}
