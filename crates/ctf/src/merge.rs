//! The time-ordered merge of a set's stream files: events in time order (ties: stream, then
//! byte offset), with each stream's errors and losses where they were met; the streams read
//! here, decoded ahead by workers, or merged on another thread.

use crate::error::{Error, Result};
use crate::event::{Current, Event};
use crate::packet::{Loss, LossKind};
use crate::parallel::{ParStreams, Piped};
use crate::stream::StreamReader;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Two integers of an event's stream context, as [`Events::next_ints`] gives them.
pub type Ints = [Option<u64>; 2];

/// The streams being merged: read here, or decoded ahead by workers; or merged already by
/// another thread. (One per `Events`, never moved while read: the piped variant's batch is
/// kept inline, not boxed, as it is read at every event.)
#[allow(clippy::large_enum_variant)]
enum Streams<'a, 's> {
    Seq(Vec<StreamReader<'a>>),
    Par(ParStreams<'a, 's>),
    Piped(Piped<'a>),
}

/// Where the reader of stream `i` is, as a [`Place`].
fn place(at: Option<(Option<i64>, u64)>, i: usize) -> Place {
    match at {
        None => (false, i as u128),
        Some((ts, off)) => (true, order_of(ts, i, off)),
    }
}

/// Time-ordered events of a [`TraceSet`](crate::TraceSet); a lending iterator (each event borrows it until the next call).
pub struct Events<'a, 's> {
    streams: Streams<'a, 's>,
    heap: BinaryHeap<Reverse<u128>>,
    current: Option<usize>,
    started: bool,
    delivered: bool,
    errors: VecDeque<Error>,
    losses: Vec<Loss>,
    /// For [`Read::traces`](crate::Read::traces): the streams' indices in the set, errors and losses placed.
    placed: Option<Placed>,
}

/// Where an error or a loss comes in the merge of all events: after the event of this order
/// (see [`Events::order`]), or, before any event of its stream, first, by stream.
pub type Place = (bool, u128);

/// What [`Read::traces`](crate::Read::traces) keeps: each stream's index among all streams of the set, and
/// the errors and losses with their places.
struct Placed {
    ids: Vec<usize>,
    errors: Vec<(Place, Error)>,
    losses: Vec<(Place, Loss)>,
}

/// The order of an event in the merge: time, then the stream's index, then the byte offset.
#[inline]
pub(crate) fn order_of(ts: Option<i64>, stream: usize, offset: u64) -> u128 {
    let t = ts.unwrap_or(i64::MIN);
    (((t as u64) ^ (1 << 63)) as u128) << 64 | ((stream as u128 & 0xFF_FFFF) << 40) | (offset as u128 & ((1 << 40) - 1))
}

impl<'a, 's> Events<'a, 's> {
    /// The merge of `readers`, read and decoded in this thread.
    pub(crate) fn read_here(readers: Vec<StreamReader<'a>>) -> Self {
        Events::new(Streams::Seq(readers))
    }

    /// The merge of streams decoded ahead by workers.
    pub(crate) fn decoded_ahead(streams: ParStreams<'a, 's>) -> Self {
        Events::new(Streams::Par(streams))
    }

    /// The events merged already by another thread.
    pub(crate) fn piped(piped: Piped<'a>) -> Self {
        Events::new(Streams::Piped(piped))
    }

    /// The merge of `readers`, some of the set's (`ids`: their indices among all of the set's
    /// streams), with their errors and losses placed (see [`Read::traces`](crate::Read::traces)).
    pub(crate) fn placed(mut readers: Vec<StreamReader<'a>>, ids: Vec<usize>) -> Self {
        for r in &mut readers {
            r.placed = true;
        }
        let mut e = Events::new(Streams::Seq(readers));
        e.placed = Some(Placed { ids, errors: Vec::new(), losses: Vec::new() });
        e
    }

    fn new(streams: Streams<'a, 's>) -> Self {
        Events {
            streams,
            heap: BinaryHeap::new(),
            current: None,
            started: false,
            delivered: false,
            errors: VecDeque::new(),
            losses: Vec::new(),
            placed: None,
        }
    }

    fn len(&self) -> usize {
        match &self.streams {
            Streams::Seq(r) => r.len(),
            Streams::Par(p) => p.len(),
            Streams::Piped(_) => 0,
        }
    }

    /// Merge key: time (order-preserving as unsigned), then reader index.
    #[inline]
    fn key(&self, i: usize) -> u128 {
        let t = match &self.streams {
            Streams::Seq(r) => r[i].timestamp(),
            Streams::Par(p) => p.timestamp(i),
            Streams::Piped(_) => None,
        };
        let t = t.unwrap_or(i64::MIN);
        (((t as u64) ^ (1 << 63)) as u128) << 64 | i as u128
    }

    /// Advances stream `i` to its next event; returns whether it has one. Errors are queued.
    fn step(&mut self, i: usize) -> bool {
        match &mut self.streams {
            Streams::Seq(readers) => loop {
                let r = readers[i].advance();
                let reader = &mut readers[i];
                if !reader.losses.is_empty() {
                    match &mut self.placed {
                        Some(p) => {
                            let places = reader.loss_places.drain(..);
                            for (at, l) in places.zip(reader.losses.drain(..)) {
                                p.losses.push((place(at, p.ids[i]), l));
                            }
                        }
                        None => self.losses.append(&mut reader.losses),
                    }
                }
                match r {
                    Ok(has) => return has,
                    Err(e) => match &mut self.placed {
                        Some(p) => p.errors.push((place(reader.place(), p.ids[i]), e)),
                        None => self.errors.push_back(e),
                    },
                }
            },
            Streams::Par(p) => p.step(i, &mut self.errors, &mut self.losses),
            Streams::Piped(_) => false,
        }
    }

    /// The next event in time order, or an error of one stream (the others go on).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<Result<Event<'_>>> {
        self.next_ordered().map(|x| x.1)
    }

    /// [`next`](Self::next), with the event's [`order`](Self::order) (0 with an error).
    #[inline]
    pub fn next_ordered(&mut self) -> Option<(u128, Result<Event<'_>>)> {
        if matches!(self.streams, Streams::Piped(_)) {
            return self.next_piped().map(|(o, _, r)| (o, r));
        }
        self.next_merged()
    }

    /// [`next_ordered`](Self::next_ordered), with the integers of the event's stream context
    /// read by the reading thread under [`Read::with_ints`](crate::Read::with_ints) on two threads
    /// (each `Some` when the member is there and an integer, as [`StructRef::u64_at`](crate::StructRef::u64_at) reads
    /// it); `None` when they were not read there (one thread, or no stream context): the
    /// taker reads what it needs itself.
    #[inline]
    pub fn next_ints(&mut self) -> Option<(u128, Option<Ints>, Result<Event<'_>>)> {
        if matches!(self.streams, Streams::Piped(_)) {
            return self.next_piped();
        }
        self.next_merged().map(|(o, r)| (o, None, r))
    }

    /// [`next_ordered`](Self::next_ordered) from the merge in this thread.
    #[inline(never)]
    fn next_merged(&mut self) -> Option<(u128, Result<Event<'_>>)> {
        let order = match self.advance()? {
            Ok(order) => order,
            Err(e) => return Some((0, Err(e))),
        };
        let i = self.current?;
        let ev = match &self.streams {
            Streams::Seq(r) => r[i].event(),
            Streams::Par(p) => p.event(i),
            Streams::Piped(_) => None,
        }?;
        Some((order, Ok(ev)))
    }

    #[inline]
    fn next_piped(&mut self) -> Option<(u128, Option<Ints>, Result<Event<'_>>)> {
        let Streams::Piped(p) = &mut self.streams else { return None };
        match p.step(&mut self.losses) {
            Ok(false) => None,
            Err(e) => Some((0, None, Err(e))),
            Ok(true) => {
                let p = &*p;
                let e = p.event()?;
                Some((p.order(), p.ints(), Ok(e)))
            }
        }
    }

    /// Moves the merge on to its next item: the current event (its order), or an error;
    /// `None` at the end.
    pub(crate) fn advance(&mut self) -> Option<Result<u128>> {
        if !self.started {
            self.start();
        } else if let (true, Some(i)) = (self.delivered, self.current) {
            self.delivered = false;
            if self.step(i) {
                let k = self.key(i);
                if let Some(mut top) = self.heap.peek_mut() {
                    if top.0 < k {
                        // Swap with the earliest other stream: one sift instead of a push and a pop.
                        let next = std::mem::replace(&mut *top, Reverse(k));
                        self.current = Some(next.0 as u64 as usize);
                    }
                }
            } else {
                self.current = self.heap.pop().map(|Reverse(k)| k as u64 as usize);
            }
        }
        if let Some(e) = self.errors.pop_front() {
            return Some(Err(e));
        }
        self.current?;
        self.delivered = true;
        Some(Ok(self.order()))
    }

    /// Reads each stream's first event.
    fn start(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        for i in 0..self.len() {
            if self.step(i) {
                let k = self.key(i);
                self.heap.push(Reverse(k));
            }
        }
        self.current = self.heap.pop().map(|Reverse(k)| k as u64 as usize);
    }

    /// The order of the current event in the merge of all events of the set (see
    /// [`Read::traces`](crate::Read::traces)): time, then stream, then byte offset in the stream file,
    /// compared as numbers. (With decoding threads, [`Read::decode_ahead`](crate::Read::decode_ahead), the offset is
    /// left out.)
    pub fn order(&self) -> u128 {
        if let Streams::Piped(p) = &self.streams {
            return p.order();
        }
        let Some(i) = self.current else { return 0 };
        match &self.streams {
            Streams::Seq(r) => {
                let g = self.placed.as_ref().map_or(i, |p| p.ids[i]);
                order_of(r[i].timestamp(), g, r[i].event_offset().unwrap_or(0))
            }
            Streams::Par(p) => order_of(p.timestamp(i), i, 0),
            Streams::Piped(_) => 0,
        }
    }

    /// With [`Read::traces`](crate::Read::traces): the errors met so far, each with its place in the merge
    /// of all events (sorting by place, a stable sort, gives the order in which
    /// [`TraceSet::events`](crate::TraceSet::events) returns them).
    pub fn placed_errors(&mut self) -> Vec<(Place, Error)> {
        self.placed.as_mut().map(|p| std::mem::take(&mut p.errors)).unwrap_or_default()
    }

    /// With [`Read::traces`](crate::Read::traces): the losses met so far, each with its place (see
    /// [`placed_errors`](Self::placed_errors)).
    pub fn placed_losses(&mut self) -> Vec<(Place, Loss)> {
        self.placed.as_mut().map(|p| std::mem::take(&mut p.losses)).unwrap_or_default()
    }

    /// Losses (discarded events, lost packets) seen so far.
    pub fn losses(&self) -> &[Loss] {
        &self.losses
    }

    /// Events discarded so far, in all.
    pub fn discarded_events(&self) -> u64 {
        self.losses
            .iter()
            .map(|l| match l.kind {
                LossKind::Events(n) => n,
                _ => 0,
            })
            .sum()
    }

    /// Bytes of data read so far and in all.
    pub fn progress(&self) -> (u64, u64) {
        match &self.streams {
            Streams::Seq(r) => r.iter().fold((0, 0), |(d, t), r| (d + r.bytes_done(), t + r.bytes_total())),
            Streams::Par(p) => p.progress(),
            Streams::Piped(p) => p.progress(),
        }
    }

    /// Read here ([`TraceSet::events`](crate::TraceSet::events)): the index of the stream file of the current event
    /// among all of the set, and the event, its class and stream class borrowed for as long
    /// as the schema lives.
    pub(crate) fn current_read_here(&self) -> Option<(usize, Current<'a, '_>)> {
        match &self.streams {
            Streams::Seq(r) => {
                let i = self.current?;
                Some((i, r[i].current()?))
            }
            _ => None,
        }
    }
}

impl<'a> crate::parallel::Merged<'a> for Events<'a, '_> {
    fn advance(&mut self) -> Option<Result<u128>> {
        Events::advance(self)
    }
    fn losses(&self) -> &[Loss] {
        Events::losses(self)
    }
    fn current_read_here(&self) -> Option<(usize, Current<'a, '_>)> {
        Events::current_read_here(self)
    }
    fn progress(&self) -> (u64, u64) {
        Events::progress(self)
    }
}
