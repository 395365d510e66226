//! The packets of a stream file as indexed once, for readers to step over those their packet
//! filter passes over without reading their headers again (a recording followed live), and
//! the filter itself.

use crate::packet::Loss;
use std::path::Path;

/// Which packets a reader passes over without reading their events: called with the stream
/// file, the packet's byte offset and its end time (ns, when it has one) after its header and
/// context are read; `true` skips its events (its counters of losses are still read).
pub type PacketFilter = dyn Fn(&Path, u64, Option<i64>) -> bool + Send + Sync;

/// Which events a reader passes over without giving them: those before `before_ns` of a class
/// not kept. They are skimmed ([`StreamReader::skim`](crate::StreamReader::skim)): their errors
/// are those of a reading, and stop their packet as it would.
#[derive(Debug, Clone)]
pub struct EventFilter {
    /// Events at or after this time (ns) are all read.
    pub before_ns: i64,
    /// Events before this time (ns) are all passed over, whatever their class (`i64::MIN`:
    /// none is for its time alone).
    pub all_before_ns: i64,
    /// Per trace of the set, per event class index: whether its events are read all the same.
    pub keep: Vec<Vec<bool>>,
}

impl EventFilter {
    /// Whether an event of trace `trace`, class `class`, at `ns` is passed over.
    #[inline]
    pub(crate) fn passes_over(&self, trace: usize, class: usize, ns: Option<i64>) -> bool {
        ns.is_some_and(|t| {
            t < self.all_before_ns
                || (t < self.before_ns && !self.keep.get(trace).and_then(|k| k.get(class)).copied().unwrap_or(true))
        })
    }
}

/// A packet of a stream file as an indexer read it: where it is, what of its header a reader
/// passing over it needs, and the state of the reader after it (see
/// `StreamReader::index_packets`). Kept small: there is one per packet of a recording followed.
#[derive(Debug, Clone)]
pub(crate) struct Indexed {
    pub(crate) offset: u64,
    /// The next packet's offset.
    pub(crate) next: u64,
    /// Its end time (ns), for the packet filter.
    pub(crate) end_ns: Option<i64>,
    /// `timestamp_begin`, in cycles.
    pub(crate) ts_begin: Option<u64>,
    /// Position of its stream class in the schema.
    pub(crate) stream_class: u32,
    /// Whether the indexer came to it in the state the packet before it in the index left (the
    /// initial state for the file's first packet): false after a packet left out (damaged).
    pub(crate) chained: bool,
    /// What the reader carries after it.
    pub(crate) after: Links,
    /// The losses its counters report.
    pub(crate) losses: Box<[Loss]>,
}

impl Indexed {
    /// Whether `f` passes over the packet (a joined run: its first, with the run's end time).
    pub(crate) fn passed_over(&self, path: &Path, f: &PacketFilter) -> bool {
        f(path, self.offset, self.end_ns)
    }

    /// Whether `next`, indexed right after this one, can be joined to it into one entry that
    /// a reader steps over at once as it would over both: it follows on in the state this one
    /// left, in the same stream class, and begins no earlier.
    fn joins(&self, next: &Indexed) -> bool {
        next.chained
            && next.offset == self.next
            && next.stream_class == self.stream_class
            && next.ts_begin.zip(self.ts_begin).is_none_or(|(b, a)| b >= a)
            && next.end_ns.is_some()
            && self.end_ns.is_some()
    }
}

/// Joins, in `index` (a file's packets as indexed), each run of packets that `passed_over`
/// names into one entry: its first packet's offset and state before, its last one's end and
/// state after, their losses, the latest end time. A reader whose packet filter passes over
/// an entry's first packet with that end time steps over the run at once. Returns how many
/// entries are gone.
pub(crate) fn join_runs(index: &mut Vec<Indexed>, passed_over: impl Fn(&Indexed) -> bool) -> usize {
    let before = index.len();
    let mut out: Vec<Indexed> = Vec::with_capacity(before);
    let mut open = false;
    for p in index.drain(..) {
        let over = passed_over(&p);
        match out.last_mut() {
            Some(run) if open && over && run.joins(&p) => {
                run.next = p.next;
                run.end_ns = run.end_ns.max(p.end_ns);
                run.after = p.after;
                if !p.losses.is_empty() {
                    run.losses = run.losses.iter().chain(p.losses.iter()).cloned().collect();
                }
            }
            _ => {
                out.push(p);
                open = over;
            }
        }
    }
    *index = out;
    before - index.len()
}

/// What a reader carries from one packet's header to the next one's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Links {
    pub(crate) prev_discarded: Option<u64>,
    pub(crate) prev_seq: Option<u64>,
    pub(crate) prev_end_ns: Option<i64>,
    pub(crate) floor: u64,
    pub(crate) clock: u64,
}

/// Where an indexer of a stream file left off: the next packet to read, and what it carries.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Resume {
    pub(crate) next_packet: u64,
    pub(crate) stream_class: Option<u64>,
    pub(crate) links: Links,
}
