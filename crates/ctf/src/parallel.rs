//! Decoding stream files on several threads: workers decode each stream's events ahead into
//! batches (owned copies of the decoded nodes), and the merger in the calling thread takes them in
//! the same time order, with the same errors and losses at the same places, as the one-thread
//! reader.

use crate::decode::Node;
use crate::error::Error;
use crate::event::{Current, Event};
use crate::packet::{Loss, PacketInfo};
use crate::schema::{EventClass, StreamClass};
use crate::stream::StreamReader;
use rostrace_threads::awake;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// A stream file's path and data, and its trace's index.
pub(crate) type FileRef<'a> = (&'a Path, &'a [u8], usize);

/// One decoded event of a batch: where its nodes are.
struct Rec<'a> {
    class: &'a Arc<EventClass>,
    ts: u64,
    ts_ns: Option<i64>,
    packet: u32,
    nodes: u32,
    lens: [u32; 3],
}

/// A packet of a batch: its values, stream class and context nodes.
struct Pkt<'a> {
    info: PacketInfo,
    sc: Option<&'a StreamClass>,
    nodes: (u32, u32),
}

impl<'a> Pkt<'a> {
    /// An event of this packet, of the file `file`, whose packet context nodes are in
    /// `pkt_nodes` (at `self.nodes`), with the nodes of its three scopes and its clock value and
    /// time.
    #[inline]
    fn event<'e>(
        &'e self,
        file: FileRef<'e>,
        pkt_nodes: &'e [Node],
        class: &'e Arc<EventClass>,
        [ctx, ectx, payload]: [&'e [Node]; 3],
        (ts, ts_ns): (u64, Option<i64>),
    ) -> Event<'e> {
        let (path, data, trace_index) = file;
        let packet = &self.info;
        let pkt_nodes = &pkt_nodes[self.nodes.0 as usize..self.nodes.1 as usize];
        Event { class, sc: self.sc, data, path, packet, pkt_nodes, ctx, ectx, payload, ts, ts_ns, trace_index }
    }
}

/// Events decoded ahead from one stream, with the errors and losses met before each.
pub(crate) struct Batch<'a> {
    recs: Vec<Rec<'a>>,
    nodes: Vec<Node>,
    packets: Vec<Pkt<'a>>,
    /// (index of the event they come before, error).
    errors: VecDeque<(usize, Error)>,
    losses: VecDeque<(usize, Loss)>,
    /// Bytes of the file decoded after this batch.
    bytes_done: u64,
    /// The stream ends after this batch.
    last: bool,
}

impl<'a> Batch<'a> {
    fn new() -> Self {
        Batch {
            recs: Vec::new(),
            nodes: Vec::new(),
            packets: Vec::new(),
            errors: VecDeque::new(),
            losses: VecDeque::new(),
            bytes_done: 0,
            last: false,
        }
    }

    /// Decodes up to `max` events (or about `max * 16` nodes) of `r` into the batch.
    fn fill(&mut self, r: &mut StreamReader<'a>, max: usize) {
        self.recs.clear();
        self.nodes.clear();
        self.packets.clear();
        self.errors.clear();
        self.losses.clear();
        self.last = false;
        while self.recs.len() < max && self.nodes.len() < max * 16 {
            let res = r.advance();
            for l in r.losses.drain(..) {
                self.losses.push_back((self.recs.len(), l));
            }
            match res {
                Ok(true) => {
                    let Some(ev) = r.current() else { continue };
                    if self.packets.last().is_none_or(|p| p.info.offset != ev.packet.offset) {
                        let start = self.nodes.len() as u32;
                        self.nodes.extend_from_slice(ev.pkt_nodes);
                        let end = self.nodes.len() as u32;
                        self.packets.push(Pkt { info: *ev.packet, sc: ev.sc, nodes: (start, end) });
                    }
                    let start = self.nodes.len() as u32;
                    let mut lens = [0u32; 3];
                    for (k, s) in ev.scopes.into_iter().enumerate() {
                        self.nodes.extend_from_slice(s);
                        lens[k] = s.len() as u32;
                    }
                    let packet = (self.packets.len() - 1) as u32;
                    self.recs.push(Rec { class: ev.class, ts: ev.ts, ts_ns: ev.ts_ns, packet, nodes: start, lens });
                }
                Ok(false) => {
                    self.last = true;
                    break;
                }
                Err(e) => self.errors.push_back((self.recs.len(), e)),
            }
        }
        self.bytes_done = r.bytes_done();
    }
}

/// What the workers and the merger share.
struct State<'a> {
    /// Each stream's reader, when no thread is decoding it (and it has not ended).
    readers: Vec<Option<StreamReader<'a>>>,
    /// Batches decoded and not yet taken, per stream.
    ready: Vec<VecDeque<Batch<'a>>>,
    /// Whether the stream's last batch has been decoded.
    ended: Vec<bool>,
    /// Batches given back, to be filled again.
    free: Vec<Batch<'a>>,
    /// The stream the merger waits for.
    wanted: Option<usize>,
    /// The merger is done: workers stop.
    stop: bool,
}

pub(crate) struct Shared<'a> {
    state: Mutex<State<'a>>,
    cond: Condvar,
    /// Events per batch.
    max: usize,
    /// Batches decoded ahead per stream.
    ahead: usize,
}

impl<'a> Shared<'a> {
    pub(crate) fn new(readers: Vec<StreamReader<'a>>) -> Self {
        let n = readers.len();
        // About 32 Ki events decoded ahead in all (a few MiB), at least 64 per stream.
        let max = (32768 / n.max(1)).clamp(64, 1024);
        Shared {
            state: Mutex::new(State {
                readers: readers.into_iter().map(Some).collect(),
                ready: (0..n).map(|_| VecDeque::new()).collect(),
                ended: vec![false; n],
                free: Vec::new(),
                wanted: None,
                stop: false,
            }),
            cond: Condvar::new(),
            max,
            ahead: 2,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<'a>> {
        // A worker that panicked leaves its stream out; the others are still sound.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A worker: decodes batches ahead, the stream the merger waits for first, then the streams
    /// with the fewest batches ready, until the merger stops.
    pub(crate) fn work(&self) {
        let mut st = self.lock();
        loop {
            if st.stop {
                return;
            }
            let pick = match st.wanted {
                Some(w) if st.readers[w].is_some() => Some(w),
                _ => (0..st.readers.len())
                    .filter(|&i| st.readers[i].is_some() && st.ready[i].len() < self.ahead)
                    .min_by_key(|&i| st.ready[i].len()),
            };
            let Some(i) = pick else {
                if st.ended.iter().all(|e| *e) {
                    return;
                }
                st = self.cond.wait(st).unwrap_or_else(|p| p.into_inner());
                continue;
            };
            let b;
            (st, b) = self.decode(st, i);
            st.ready[i].push_back(b);
            self.cond.notify_all();
        }
    }

    /// Decodes the next batch of stream `i`, whose reader is in `st`, with the lock released
    /// meanwhile; the lock again, with the reader put back (or the stream marked ended).
    fn decode<'g>(&'g self, mut st: MutexGuard<'g, State<'a>>, i: usize) -> (MutexGuard<'g, State<'a>>, Batch<'a>) {
        let mut r = st.readers[i].take().expect("a stream with its reader");
        let mut b = st.free.pop().unwrap_or_else(Batch::new);
        drop(st);
        b.fill(&mut r, self.max);
        let mut st = self.lock();
        if b.last {
            st.ended[i] = true;
        } else {
            st.readers[i] = Some(r);
        }
        (st, b)
    }

    /// The next batch of stream `i`, decoded here when no worker has it under way.
    fn take(&self, i: usize) -> Batch<'a> {
        let mut st = self.lock();
        loop {
            if let Some(b) = st.ready[i].pop_front() {
                if st.wanted == Some(i) {
                    st.wanted = None;
                }
                self.cond.notify_all();
                return b;
            }
            if st.readers[i].is_some() {
                // (No worker decodes this stream meanwhile: its reader is here.)
                return self.decode(st, i).1;
            }
            st.wanted = Some(i);
            self.cond.notify_all();
            st = self.cond.wait(st).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn give_back(&self, b: Batch<'a>) {
        self.lock().free.push(b);
    }

    /// Tells the workers to stop.
    pub(crate) fn stop(&self) {
        self.lock().stop = true;
        self.cond.notify_all();
    }
}

/// The merger's side of one stream: the batch it reads and where.
struct Cursor<'a> {
    batch: Option<Batch<'a>>,
    /// Index of the next event of the batch.
    next: usize,
    done: bool,
}

/// The streams of a set, decoded by workers, read one event at a time by the merger.
pub(crate) struct ParStreams<'a, 's> {
    shared: &'s Shared<'a>,
    files: Vec<FileRef<'a>>,
    cursors: Vec<Cursor<'a>>,
    bytes: Vec<u64>,
}

impl<'a, 's> ParStreams<'a, 's> {
    pub(crate) fn new(shared: &'s Shared<'a>, files: Vec<FileRef<'a>>) -> Self {
        let n = files.len();
        ParStreams {
            shared,
            cursors: (0..n).map(|_| Cursor { batch: None, next: 0, done: false }).collect(),
            bytes: vec![0; n],
            files,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.files.len()
    }

    /// Advances stream `i` to its next event, passing on the errors and losses met before it;
    /// whether it has one.
    pub(crate) fn step(&mut self, i: usize, errors: &mut VecDeque<Error>, losses: &mut Vec<Loss>) -> bool {
        let c = &mut self.cursors[i];
        if c.done {
            return false;
        }
        loop {
            if let Some(b) = &mut c.batch {
                let at = c.next;
                while b.errors.front().is_some_and(|(k, _)| *k <= at) {
                    errors.extend(b.errors.pop_front().map(|(_, e)| e));
                }
                while b.losses.front().is_some_and(|(k, _)| *k <= at) {
                    losses.extend(b.losses.pop_front().map(|(_, l)| l));
                }
                if at < b.recs.len() {
                    c.next += 1;
                    return true;
                }
                self.bytes[i] = b.bytes_done;
                let last = b.last;
                self.shared.give_back(c.batch.take().expect("a batch"));
                if last {
                    c.done = true;
                    return false;
                }
            }
            c.batch = Some(self.shared.take(i));
            c.next = 0;
        }
    }

    fn rec(&self, i: usize) -> Option<(&Batch<'a>, &Rec<'a>)> {
        let c = &self.cursors[i];
        let b = c.batch.as_ref()?;
        Some((b, b.recs.get(c.next.checked_sub(1)?)?))
    }

    /// Time of stream `i`'s current event.
    #[inline]
    pub(crate) fn timestamp(&self, i: usize) -> Option<i64> {
        self.rec(i).and_then(|(_, r)| r.ts_ns)
    }

    /// Stream `i`'s current event.
    pub(crate) fn event(&self, i: usize) -> Option<Event<'_>> {
        let (b, r) = self.rec(i)?;
        let p = &b.packets[r.packet as usize];
        let (path, data, trace_index) = self.files[i];
        let mut at = r.nodes as usize;
        let mut scope = |k: usize| {
            let s = &b.nodes[at..at + r.lens[k] as usize];
            at += r.lens[k] as usize;
            s
        };
        let scopes = [scope(0), scope(1), scope(2)];
        Some(p.event((path, data, trace_index), &b.nodes, r.class, scopes, (r.ts, r.ts_ns)))
    }

    /// Bytes decoded and taken so far, and in all.
    pub(crate) fn progress(&self) -> (u64, u64) {
        (self.bytes.iter().sum(), self.files.iter().map(|f| f.1.len() as u64).sum())
    }
}

/// One event of a [`Piped`] batch (48 bytes: what crosses from one core to the other is most of
/// the cost): its class, clock value, order in the merge (which holds its time and stream
/// file), and where its nodes are (its payload's end where the next event's nodes begin).
struct PipedRec<'a> {
    class: &'a Arc<EventClass>,
    ts: u64,
    order: [u64; 2],
    nodes: u32,
    ctx: u32,
    ectx: u32,
    /// The packet's index in the batch (below [`PACKET`]), and flags: [`NO_TIME`], [`INTS`],
    /// [`INT`].
    packet: u32,
}

/// The event has no time.
const NO_TIME: u32 = 1 << 31;
/// The integers asked for were looked for in the event's stream context.
const INTS: u32 = 1 << 30;
/// Each integer asked for was found.
const INT: [u32; 2] = [1 << 29, 1 << 28];
/// The packet index's bits.
const PACKET: u32 = (1 << 28) - 1;

/// Events already merged in time order by another thread, with the errors met between them
/// and the losses met while each was read.
pub(crate) struct PipedBatch<'a> {
    recs: Vec<PipedRec<'a>>,
    /// When asked for, each event's integers of the stream context (see
    /// [`crate::Read::with_ints`]), beside the records so that these stay
    /// 48 bytes when none are.
    ints: Vec<[u64; 2]>,
    nodes: Vec<Node>,
    packets: Vec<Pkt<'a>>,
    pkt_nodes: Vec<Node>,
    /// (index of the event they come before, error).
    errors: VecDeque<(usize, Error)>,
    /// (the call of `Events::next_ordered` (0: the batch's first) after which they are known, loss).
    losses: VecDeque<(usize, Loss)>,
    progress: (u64, u64),
    /// The events end after this batch.
    last: bool,
}

impl<'a> PipedBatch<'a> {
    fn new() -> Self {
        PipedBatch {
            recs: Vec::new(),
            ints: Vec::new(),
            nodes: Vec::new(),
            packets: Vec::new(),
            pkt_nodes: Vec::new(),
            errors: VecDeque::new(),
            losses: VecDeque::new(),
            progress: (0, 0),
            last: false,
        }
    }

    /// Empty, its memory kept.
    fn clear(&mut self) {
        self.recs.clear();
        self.ints.clear();
        self.nodes.clear();
        self.packets.clear();
        self.pkt_nodes.clear();
        self.errors.clear();
        self.losses.clear();
        self.last = false;
    }
}

/// Events in a batch.
const PIPED_EVENTS: usize = 1024;
/// Batches in flight between the two threads: enough for neither to wait for the other where
/// the events cost one more to read and the other more to handle (docs/benchmarks.md, "Design
/// measurements").
pub(crate) const PIPED_DEPTH: usize = 8;

fn recv_spinning<T>(rx: &std::sync::mpsc::Receiver<T>) -> Result<T, std::sync::mpsc::RecvError> {
    use std::sync::mpsc::TryRecvError;
    let attempt = || match rx.try_recv() {
        Ok(t) => Some(Ok(t)),
        Err(TryRecvError::Disconnected) => Some(Err(std::sync::mpsc::RecvError)),
        Err(TryRecvError::Empty) => None,
    };
    awake(attempt).unwrap_or_else(|| rx.recv())
}

fn send_spinning<T>(tx: &std::sync::mpsc::SyncSender<T>, t: T) -> Result<(), std::sync::mpsc::SendError<T>> {
    use std::sync::mpsc::TrySendError;
    // (The item, given back by each attempt that finds the channel full.)
    let mut item = Some(t);
    let attempt = || match tx.try_send(item.take()?) {
        Ok(()) => Some(Ok(())),
        Err(TrySendError::Disconnected(t)) => Some(Err(std::sync::mpsc::SendError(t))),
        Err(TrySendError::Full(t)) => {
            item = Some(t);
            None
        }
    };
    match (awake(attempt), item) {
        (Some(r), _) => r,
        (None, Some(t)) => tx.send(t),
        // (Not met: an attempt gives nothing only when the channel gave the item back.)
        (None, None) => Ok(()),
    }
}

/// What the reading side of a pipe ([`pipe`]) takes its events from: the one-thread merge of
/// the set's streams.
pub(crate) trait Merged<'a> {
    /// Moves the merge on to its next item: the current event (its order), or an error;
    /// `None` at the end.
    fn advance(&mut self) -> Option<Result<u128, Error>>;
    /// The losses met so far.
    fn losses(&self) -> &[Loss];
    /// The index of the current event's stream file among all of the set, and the event.
    fn current_read_here(&self) -> Option<(usize, Current<'a, '_>)>;
    /// Bytes read so far, of all.
    fn progress(&self) -> (u64, u64);
}

/// The reading side of [`crate::Read::piped`]: takes `events` (one thread's
/// merge of `files` stream files) batch by batch, and sends the batches to the taking side
/// until the events end or it is gone.
pub(crate) fn pipe<'a>(
    events: &mut impl Merged<'a>,
    files: usize,
    full: std::sync::mpsc::SyncSender<PipedBatch<'a>>,
    free: std::sync::mpsc::Receiver<PipedBatch<'a>>,
    ints: Option<[&'static str; 2]>,
) {
    let mut positions = ints.map(crate::positions::TracePositions::new);
    let mut made = 0;
    let mut seen_losses = 0;
    // Each file's packet in the batch: (batch number, index).
    let mut last_packet: Vec<(u64, u32)> = vec![(u64::MAX, 0); files];
    for n in 0u64.. {
        let mut b = match free.try_recv() {
            Ok(b) => b,
            Err(_) if made <= PIPED_DEPTH => {
                made += 1;
                PipedBatch::new()
            }
            Err(_) => match recv_spinning(&free) {
                Ok(b) => b,
                Err(_) => return,
            },
        };
        b.clear();
        for call in 0.. {
            // (Errors count: a damaged stretch with few events is handed over as it goes.)
            if b.recs.len() + b.errors.len() >= PIPED_EVENTS {
                break;
            }
            let next = events.advance();
            let losses = events.losses();
            if losses.len() > seen_losses {
                b.losses.extend(losses[seen_losses..].iter().map(|l| (call, l.clone())));
                seen_losses = losses.len();
            }
            let order = match next {
                None => {
                    b.last = true;
                    break;
                }
                Some(Err(e)) => {
                    b.errors.push_back((b.recs.len(), e));
                    continue;
                }
                Some(Ok(order)) => order,
            };
            // (Always there after an event of the merge read here.)
            let Some((file, ev)) = events.current_read_here() else {
                debug_assert!(false, "no current event after an event of the merge");
                continue;
            };
            let mut flags = 0;
            if let Some(pos) = &mut positions {
                let mut values = [0; 2];
                // As `Event::stream_context` finds the stream context.
                let ty = ev.sc.and_then(|s| s.event_context.as_ref()).and_then(|t| t.as_struct());
                if let (Some(ty), false) = (ty, ev.scopes[0].is_empty()) {
                    flags |= INTS;
                    let ctx = crate::StructRef::new(ty, ev.scopes[0], ev.data);
                    for (k, v) in pos.u64s(ev.trace, &ctx).into_iter().enumerate() {
                        if let Some(v) = v {
                            values[k] = v;
                            flags |= INT[k];
                        }
                    }
                }
                b.ints.push(values);
            }
            let nodes = b.nodes.len() as u32;
            let [ctx, ectx, _] = ev.scopes;
            // (Node by node, into the room made for them: a few each, where a call to copy
            // them cost more than copying them.)
            let total: usize = ev.scopes.iter().map(|s| s.len()).sum();
            b.nodes.reserve(total);
            let room = &mut b.nodes.spare_capacity_mut()[..total];
            let mut k = 0;
            for s in ev.scopes {
                for n in s {
                    room[k].write(*n);
                    k += 1;
                }
            }
            // SAFETY: the `total` nodes after the length were written just above.
            unsafe { b.nodes.set_len(b.nodes.len() + total) };
            let lp = &mut last_packet[file];
            if lp.0 != n || b.packets[lp.1 as usize].info.offset != ev.packet.offset {
                let start = b.pkt_nodes.len() as u32;
                b.pkt_nodes.extend_from_slice(ev.pkt_nodes);
                b.packets.push(Pkt { info: *ev.packet, sc: ev.sc, nodes: (start, b.pkt_nodes.len() as u32) });
                *lp = (n, b.packets.len() as u32 - 1);
            }
            b.recs.push(PipedRec {
                class: ev.class,
                ts: ev.ts,
                order: [(order >> 64) as u64, order as u64],
                nodes,
                ctx: ctx.len() as u32,
                ectx: ectx.len() as u32,
                packet: lp.1 | flags | if ev.ts_ns.is_none() { NO_TIME } else { 0 },
            });
        }
        b.progress = events.progress();
        let last = b.last;
        if send_spinning(&full, b).is_err() || last {
            return;
        }
    }
}

/// The taking side of [`crate::Read::piped`].
pub(crate) struct Piped<'a> {
    full: std::sync::mpsc::Receiver<PipedBatch<'a>>,
    free: std::sync::mpsc::Sender<PipedBatch<'a>>,
    files: Vec<FileRef<'a>>,
    batch: Option<PipedBatch<'a>>,
    /// Index of the next event of the batch.
    next: usize,
    /// Items (events, errors, the end) taken from the batch.
    calls: usize,
    progress: (u64, u64),
    done: bool,
}

impl<'a> Piped<'a> {
    pub(crate) fn new(
        full: std::sync::mpsc::Receiver<PipedBatch<'a>>,
        free: std::sync::mpsc::Sender<PipedBatch<'a>>,
        files: Vec<FileRef<'a>>,
    ) -> Self {
        let total = files.iter().map(|f| f.1.len() as u64).sum();
        Piped { full, free, files, batch: None, next: 0, calls: 0, progress: (0, total), done: false }
    }

    /// Moves to the next event: `Ok(true)` when there is one, `Err` for an error before it.
    /// The losses met while reading it are added to `losses`, as the reading side's merge
    /// added them.
    #[inline]
    pub(crate) fn step(&mut self, losses: &mut Vec<Loss>) -> Result<bool, Error> {
        if let Some(b) = &self.batch {
            // No error before the next event, and no loss met while reading it.
            if self.next < b.recs.len()
                && b.errors.front().is_none_or(|(k, _)| *k > self.next)
                && b.losses.front().is_none_or(|(c, _)| *c > self.calls)
            {
                self.next += 1;
                self.calls += 1;
                return Ok(true);
            }
        }
        self.step_on(losses)
    }

    /// [`step`](Self::step) when an error or a loss comes, or the batch ends.
    fn step_on(&mut self, losses: &mut Vec<Loss>) -> Result<bool, Error> {
        loop {
            if self.done {
                return Ok(false);
            }
            if let Some(b) = &mut self.batch {
                let item = if b.errors.front().is_some_and(|(k, _)| *k <= self.next) {
                    b.errors.pop_front().map(|(_, e)| Err(e))
                } else if self.next < b.recs.len() {
                    self.next += 1;
                    Some(Ok(true))
                } else if b.last {
                    self.done = true;
                    Some(Ok(false))
                } else {
                    None
                };
                if let Some(item) = item {
                    while b.losses.front().is_some_and(|(c, _)| *c <= self.calls) {
                        losses.extend(b.losses.pop_front().map(|(_, l)| l));
                    }
                    self.calls += 1;
                    return item;
                }
                if let Some(b) = self.batch.take() {
                    // (The reading side may be gone: the batch is dropped then.)
                    let _ = self.free.send(b);
                }
            }
            match recv_spinning(&self.full) {
                Ok(b) => {
                    self.progress = b.progress;
                    self.batch = Some(b);
                    self.next = 0;
                    self.calls = 0;
                }
                Err(_) => {
                    // The reading side sends the last batch before it ends: without it, it
                    // panicked. Its events are not ended quietly: the panic goes on here.
                    panic!("the thread reading the traces stopped before their end");
                }
            }
        }
    }

    #[inline]
    fn rec(&self) -> Option<(&PipedBatch<'a>, &PipedRec<'a>)> {
        let b = self.batch.as_ref()?;
        Some((b, b.recs.get(self.next.checked_sub(1)?)?))
    }

    /// The order of the current event.
    #[inline]
    pub(crate) fn order(&self) -> u128 {
        self.rec().map_or(0, |(_, r)| (r.order[0] as u128) << 64 | r.order[1] as u128)
    }

    /// The current event.
    #[inline]
    pub(crate) fn event(&self) -> Option<Event<'_>> {
        let (b, r) = self.rec()?;
        let p = &b.packets[(r.packet & PACKET) as usize];
        let (path, data, trace_index) = self.files[(r.order[1] >> 40) as usize & 0xFF_FFFF];
        let at = r.nodes as usize;
        let (c, e) = (at + r.ctx as usize, at + r.ctx as usize + r.ectx as usize);
        let end = b.recs.get(self.next).map_or(b.nodes.len(), |n| n.nodes as usize);
        let ts_ns = (r.packet & NO_TIME == 0).then_some((r.order[0] ^ (1 << 63)) as i64);
        let scopes = [&b.nodes[at..c], &b.nodes[c..e], &b.nodes[e..end]];
        Some(p.event((path, data, trace_index), &b.pkt_nodes, r.class, scopes, (r.ts, ts_ns)))
    }

    pub(crate) fn progress(&self) -> (u64, u64) {
        self.progress
    }

    /// The integers of the current event's stream context asked for, when it has one.
    #[inline]
    pub(crate) fn ints(&self) -> Option<[Option<u64>; 2]> {
        let (b, r) = self.rec()?;
        let v = b.ints.get(self.next - 1).filter(|_| r.packet & INTS != 0)?;
        Some([0, 1].map(|k| (r.packet & INT[k] != 0).then_some(v[k])))
    }
}
