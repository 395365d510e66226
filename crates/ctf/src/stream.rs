//! Reading one data stream file: the packet state machine, from packet to packet (header,
//! context, counters, losses, damage), then event by event, in order.

use crate::decode::{decode, decode_scope, skip_scope, Cursor, DecodeError, Node, State};
use crate::error::Error;
use crate::event::{Current, Event};
use crate::headers::{FileId, HeaderReads};
use crate::index::{EventFilter, Indexed, Links, PacketFilter, Resume};
use crate::packet::{Loss, LossKind, PacketInfo, PACKET_MAGIC};
use crate::schema::{EventClass, Schema, StreamClass};
use crate::value::StructRef;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Why a packet could not be read.
enum PacketError {
    /// The stream cannot go on (its framing is lost).
    Fatal(Error),
    /// A damaged value in a sound frame: the stream goes on, with the packet's events or not.
    Damaged { error: Error, keep_events: bool },
}

impl From<Error> for PacketError {
    fn from(e: Error) -> Self {
        PacketError::Fatal(e)
    }
}

/// Reads the packets and events of one data stream file.
pub struct StreamReader<'a> {
    /// The data file path.
    pub path: &'a Path,
    data: &'a [u8],
    schema: &'a Schema,
    /// Packets whose events are passed over.
    skip: Option<&'a PacketFilter>,
    /// Events passed over, not given ([`StreamReader::set_event_filter`]).
    event_filter: Option<&'a EventFilter>,
    /// Which file the data is a mapping of, when known.
    pub(crate) file_id: Option<FileId>,
    /// Where packet headers are read from rather than the data: a walk over the headers alone.
    headers: Option<Box<HeaderReads>>,
    /// The file's packets indexed before (see [`Indexed`]): those the filter passes over are
    /// stepped over without reading their headers again.
    index: &'a [Indexed],
    /// Counts the packet headers this reader decodes.
    counter: Option<&'a AtomicU64>,
    /// Position of the trace in its set.
    pub trace_index: usize,
    sc: Option<&'a StreamClass>,
    clock_offset_ns: Option<i64>,
    clock_freq: u64,
    /// The largest clock value whose time in ns fits (see [`crate::Clock::max_cycles`]).
    max_cycles: u64,
    next_packet: u64,
    pos: u64,
    content_end: u64,
    truncated: bool,
    st: State,
    hdr_nodes: Vec<Node>,
    pkt_nodes: Vec<Node>,
    /// Current packet's values.
    pub packet: PacketInfo,
    prev_discarded: Option<u64>,
    prev_seq: Option<u64>,
    prev_end_ns: Option<i64>,
    /// The last packet's beginning (cycles): a later packet may not begin before it, nor before
    /// the stream's last event.
    floor: u64,
    /// Losses seen so far (drained by the merger).
    pub losses: Vec<Loss>,
    class: Option<&'a Arc<EventClass>>,
    ts: u64,
    ts_ns: Option<i64>,
    ctx: Vec<Node>,
    ectx: Vec<Node>,
    payload: Vec<Node>,
    scratch: Vec<Node>,
    /// Events' contexts and payloads passed over rather than decoded ([`StreamReader::skim`]).
    skim: bool,
    done: bool,
    /// The page size, when the data is a mapped file whose pages behind the reader may be given
    /// back (else 0).
    page: u64,
    /// Bytes from the start already given back.
    released: u64,
    /// Pages are given back in steps of at least this many bytes.
    step: u64,
    /// Where the reader stops: the end of the data, or a packet boundary (a part of the file).
    limit: u64,
    /// Where its part begins (0 for the whole file).
    origin: u64,
    /// Whether it stopped at `limit` (by framing, not by an error).
    at_limit: bool,
    /// For a part not yet warmed up: where it ends.
    pending_end: Option<u64>,
    /// The byte offset of the last event read (its time is `ts_ns`).
    last_at: Option<u64>,
    /// Whether losses are placed (see [`StreamReader::place`]) as they are met.
    pub(crate) placed: bool,
    /// Where each loss in `losses` was met, when placed.
    pub(crate) loss_places: Vec<Option<(Option<i64>, u64)>>,
}

/// What a reader carries from one packet to the next: equal at a packet boundary, two readers
/// read the rest of the file alike. (The decoder's registers are not in it: every value read
/// through them is decoded in the same event or packet.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Carry {
    next_packet: u64,
    sc: Option<u64>,
    prev_discarded: Option<u64>,
    prev_seq: Option<u64>,
    prev_end_ns: Option<i64>,
    floor: u64,
    ts: u64,
    clock: u64,
}

impl<'a> StreamReader<'a> {
    /// A reader at the start of `data`, the content of the file `path` of a trace with `schema`.
    pub fn new(path: &'a Path, data: &'a [u8], schema: &'a Schema, trace_index: usize) -> Self {
        StreamReader {
            path,
            data,
            schema,
            skip: None,
            event_filter: None,
            file_id: None,
            headers: None,
            index: &[],
            counter: None,
            trace_index,
            sc: None,
            clock_offset_ns: None,
            clock_freq: 1_000_000_000,
            max_cycles: u64::MAX,
            next_packet: 0,
            pos: 0,
            content_end: 0,
            truncated: false,
            // (The registers and the node buffers, written at every event, are made by the
            // thread that reads: see `read_packet`.)
            st: State::default(),
            hdr_nodes: Vec::new(),
            pkt_nodes: Vec::new(),
            packet: PacketInfo::default(),
            prev_discarded: None,
            prev_seq: None,
            prev_end_ns: None,
            floor: 0,
            losses: Vec::new(),
            class: None,
            ts: 0,
            ts_ns: None,
            ctx: Vec::new(),
            ectx: Vec::new(),
            payload: Vec::new(),
            scratch: Vec::new(),
            skim: false,
            done: data.is_empty(),
            page: 0,
            released: 0,
            step: u64::MAX,
            limit: data.len() as u64,
            origin: 0,
            at_limit: false,
            pending_end: None,
            last_at: None,
            placed: false,
            loss_places: Vec::new(),
        }
    }

    /// The packet boundaries a file can be cut at into parts of about `every` bytes, each with
    /// where a reader should start to be where a reader of the whole file is at the cut: the
    /// last packet before it that has events (the stream's last event time is carried over),
    /// or the packet just before it when none has. Found by reading the packet headers only,
    /// as far as the framing can be followed; none when packets have no begin time, nor, unless
    /// `damaged_too`, when a packet is damaged (its file is read whole).
    pub(crate) fn cuts(&self, every: u64, damaged_too: bool) -> Vec<(u64, u64)> {
        let mut r = StreamReader::new(self.path, self.data, self.schema, self.trace_index);
        r.read_headers_from_file(self.file_id);
        // Reading a header every packet in the mapping faults its neighbours in too: the pages
        // passed are given back as this reader gives back those it reads, or the whole file
        // would stay resident.
        (r.page, r.step) = (self.page, self.step);
        let mut cuts = Vec::new();
        let (mut prev, mut with_events, mut last_cut) = (None, None, 0);
        while !r.done && r.next_packet < r.limit {
            let at = r.next_packet;
            if let Some(p) = prev {
                if at - last_cut >= every && r.limit - at >= every / 2 {
                    cuts.push((with_events.unwrap_or(p), at));
                    last_cut = at;
                }
            }
            match r.read_packet() {
                Ok(()) | Err(PacketError::Damaged { keep_events: true, .. }) if r.pos < r.content_end => {
                    with_events = Some(at);
                }
                // A damaged packet's neighbours are read whole, unless asked: a reader starting
                // after it may not start as a reader of the whole file would be there.
                Err(PacketError::Damaged { .. }) if !damaged_too => return Vec::new(),
                Ok(()) | Err(PacketError::Damaged { .. }) => {}
                Err(PacketError::Fatal(_)) => break,
            }
            // Without a packet begin time, a reader starting inside the file cannot know the
            // clock's upper bits: the file is read whole.
            if r.packet.ts_begin.is_none() {
                return Vec::new();
            }
            if r.truncated {
                break;
            }
            prev = Some(at);
        }
        cuts
    }

    /// A reader of the packets from `start` to `end` (packet boundaries), to be started with
    /// [`warm_up`](Self::warm_up) from the packet at `warm` (see [`cuts`](Self::cuts)).
    pub(crate) fn part(&self, warm: u64, start: u64, end: u64) -> StreamReader<'a> {
        let mut r = StreamReader::new(self.path, self.data, self.schema, self.trace_index);
        r.skip = self.skip;
        r.event_filter = self.event_filter;
        r.index = self.index;
        r.counter = self.counter;
        r.page = self.page;
        r.step = self.step;
        // Pages before the part are another reader's to give back.
        r.released = start.next_multiple_of(self.page.max(1));
        r.next_packet = warm;
        r.limit = start;
        r.origin = start;
        r.pending_end = Some(end);
        r
    }

    /// Brings a reader made by [`part`](Self::part) to the start of its part, its state that
    /// of a reader of the whole file there when the packets from `warm` on leave it so: they
    /// are read, their events, errors and losses left out. Returns what it carries at the start
    /// of its part (`None` when those packets did not end there). Nothing for other readers.
    pub(crate) fn warm_up(&mut self) -> Option<Carry> {
        let end = self.pending_end.take()?;
        while !matches!(self.advance(), Ok(false)) {}
        let carry = self.carry_at_limit();
        self.losses.clear();
        self.limit = end;
        self.at_limit = false;
        // A part that could not be reached is not read (the part before goes on instead).
        self.done = carry.is_none();
        carry
    }

    /// What the reader carries to the next packet, when it stopped at its limit.
    pub(crate) fn carry_at_limit(&self) -> Option<Carry> {
        self.at_limit.then(|| self.carry())
    }

    fn carry(&self) -> Carry {
        Carry {
            next_packet: self.next_packet,
            sc: self.sc.map(|s| s.id),
            prev_discarded: self.prev_discarded,
            prev_seq: self.prev_seq,
            prev_end_ns: self.prev_end_ns,
            floor: self.floor,
            ts: self.ts,
            clock: self.st.clock,
        }
    }

    /// Stops at `end` (a packet boundary) instead of the end of the file, before reading.
    pub(crate) fn set_limit(&mut self, end: u64) {
        self.limit = end;
    }

    /// Where the reader stops.
    pub(crate) fn limit(&self) -> u64 {
        self.limit
    }

    /// Reads on to `end` (a packet boundary) after stopping at its limit.
    pub(crate) fn extend(&mut self, end: u64) {
        if self.at_limit {
            self.origin = self.limit;
            self.limit = end;
            self.at_limit = false;
            self.done = false;
        }
    }

    /// Declares the data a read-only mapping of a file that stays as it is: the pages the
    /// reader has gone past are given back to the system as it goes, in steps of `step` bytes
    /// and at the end (they are read from the file again if an event still looks at them),
    /// which keeps memory flat on large traces.
    ///
    /// Each step is a `madvise` call, which in a process with several threads running
    /// interrupts the others' cores to flush their TLBs: steps should be few.
    ///
    /// # Safety
    /// The data must be a private or shared read-only memory mapping of a file, that nothing
    /// writes to while it is read.
    pub unsafe fn set_mapped(&mut self, step: u64) {
        #[cfg(unix)]
        {
            // SAFETY: sysconf has no preconditions.
            self.page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(0) as u64;
            self.step = step.max(self.page);
        }
    }

    /// Gives back the whole pages of the data before `upto`.
    fn release(&mut self, upto: u64) {
        if self.page == 0 {
            return;
        }
        let upto = upto / self.page * self.page;
        if upto <= self.released {
            return;
        }
        #[cfg(unix)]
        // SAFETY: the range is page-aligned and within the mapping (the mapping starts at a page
        // boundary and covers its last page whole); `set_mapped`'s contract makes dropping
        // the pages harmless: they are read from the file again when touched.
        unsafe {
            let base = self.data.as_ptr().add(self.released as usize) as *mut libc::c_void;
            libc::madvise(base, (upto - self.released) as usize, libc::MADV_DONTNEED);
        }
        self.released = upto;
    }

    /// Bytes of the file (or of the part of it this reader reads) consumed so far.
    pub fn bytes_done(&self) -> u64 {
        if self.done {
            self.bytes_total()
        } else {
            (self.packet.offset + self.pos / 8).saturating_sub(self.origin)
        }
    }

    /// Size of the file (or of the part of it this reader reads).
    pub fn bytes_total(&self) -> u64 {
        self.limit - self.origin
    }

    fn error(&self, byte: u64, message: impl Into<String>) -> Error {
        Error::Stream { path: self.path.to_path_buf(), offset: byte, message: message.into() }
    }

    /// The error of a file that ends inside the packet at `offset` of `packet_bits` bits:
    /// [`Error::Truncated`], at the file's end.
    fn truncated_error(&self, offset: u64, packet_bits: u64) -> Error {
        let declares =
            if packet_bits > 0 { format!("declares {} bytes", packet_bits / 8) } else { "starts its header".into() };
        Error::Truncated {
            path: self.path.to_path_buf(),
            offset: self.data.len() as u64,
            message: format!("file truncated: packet at byte {offset} {declares} but the file ends first"),
        }
    }

    fn decode_error(&self, e: DecodeError) -> Error {
        self.error(self.packet.offset + e.bit / 8, e.message)
    }

    #[inline]
    fn to_ns(&self, cycles: u64) -> Option<i64> {
        let off = self.clock_offset_ns?;
        if self.clock_freq == 1_000_000_000 && cycles <= i64::MAX as u64 {
            return Some(off.saturating_add(cycles as i64));
        }
        let ns = if self.clock_freq == 1_000_000_000 {
            cycles
        } else {
            self.schema.clocks[self.sc?.clock?].cycles_to_ns(cycles)
        };
        Some((off as i128 + ns as i128).clamp(i64::MIN as i128, i64::MAX as i128) as i64)
    }

    /// Advances to the next event. `Ok(false)` at the end of the file. After an error in a
    /// packet, the next call goes on with the next packet when the packet's size is known.
    pub fn advance(&mut self) -> Result<bool, Error> {
        loop {
            if self.done {
                self.class = None;
                return Ok(false);
            }
            if self.pos >= self.content_end {
                if self.truncated {
                    self.done = true;
                    return Err(self.truncated_error(self.packet.offset, self.packet.packet_bits));
                }
                if self.next_packet >= self.data.len() as u64 {
                    self.done = true;
                    self.class = None;
                    // The mapping covers the last page whole.
                    self.release((self.data.len() as u64).next_multiple_of(self.page.max(1)));
                    return Ok(false);
                }
                if self.next_packet >= self.limit {
                    // The end of a part: the page it ends in may be the next part's.
                    self.done = true;
                    self.at_limit = true;
                    self.class = None;
                    self.release(self.limit);
                    return Ok(false);
                }
                if self.step_over_indexed() {
                    continue;
                }
                match self.read_packet() {
                    Ok(()) => {
                        self.skip_if_filtered();
                        continue;
                    }
                    Err(PacketError::Fatal(e)) => {
                        self.done = true;
                        return Err(e);
                    }
                    // Its framing is sound: the stream goes on, with the packet's events or after them.
                    Err(PacketError::Damaged { error, keep_events }) => {
                        if !keep_events {
                            self.pos = self.content_end;
                        }
                        return Err(error);
                    }
                }
            }
            let start = self.pos;
            match self.read_event() {
                Ok(given) if self.pos > start => {
                    if given {
                        return Ok(true);
                    }
                }
                Ok(_) => {
                    self.done = true;
                    return Err(self.error(self.packet.offset + start / 8, "event of size zero: cannot make progress"));
                }
                Err(e) => {
                    // An event cut by the end of the file is that of a file still being written.
                    let cut = self.packet.content_bits > self.content_end;
                    let e = if cut && e.past_end {
                        self.truncated_error(self.packet.offset, self.packet.packet_bits)
                    } else {
                        self.decode_error(e)
                    };
                    // Skip the rest of this packet; framing tells where the next one starts.
                    self.pos = self.content_end;
                    if self.truncated {
                        self.done = true;
                    }
                    return Err(e);
                }
            }
        }
    }

    /// Passes over the events of the packet just read when the filter says so. The stream's
    /// clock is set again by the next packet's begin time, so the events after are read as
    /// they would be. A packet still being written (truncated) is read.
    fn skip_if_filtered(&mut self) {
        if let Some(f) = self.skip {
            if !self.truncated && f(self.path, self.packet.offset, self.packet.ts_end.and_then(|e| self.to_ns(e))) {
                self.pos = self.content_end;
            }
        }
    }

    /// With `on`, the events' contexts and payloads are passed over rather than decoded: an
    /// event read has its class, time and place, and no context or payload fields. For a reader
    /// that wants no more (which events are where, and when); faster where the layouts are
    /// fixed (LTTng's are, but for strings and sequences).
    pub fn skim(&mut self, on: bool) {
        self.skim = on;
    }

    /// Reads the packet headers from the file, the one mapped (`id`), rather than through the
    /// mapping, where it can be opened: for a walk over the headers alone ([`crate::headers`]).
    pub(crate) fn read_headers_from_file(&mut self, id: Option<FileId>) {
        self.headers = HeaderReads::open(self.path, id, self.data.len() as u64).map(Box::new);
    }

    /// Sets the filter of packets whose events are passed over.
    pub fn set_packet_filter(&mut self, f: Option<&'a PacketFilter>) {
        self.skip = f;
    }

    /// Sets the filter of events passed over: read as far as needed to go on, but not given.
    pub fn set_event_filter(&mut self, f: Option<&'a EventFilter>) {
        self.event_filter = f;
    }

    /// Sets the packets of the file indexed before ([`Indexed`]), to step over those the
    /// filter passes over without reading them, and a counter of the packet headers read.
    pub(crate) fn set_index(&mut self, index: &'a [Indexed], counter: Option<&'a AtomicU64>) {
        self.index = index;
        self.counter = counter;
    }

    /// Makes `sc` the stream class of the packets read, with its clock.
    fn enter(&mut self, sc: &'a StreamClass) {
        if self.sc.map(|p| p.id) != Some(sc.id) {
            self.sc = Some(sc);
            match sc.clock {
                Some(ci) => {
                    let clock = &self.schema.clocks[ci];
                    self.clock_offset_ns = Some(clock.offset_ns());
                    self.clock_freq = clock.freq;
                    self.max_cycles = clock.max_cycles();
                }
                None => (self.clock_offset_ns, self.max_cycles) = (None, u64::MAX),
            }
        }
    }

    /// What the reader carries to the next packet's losses and checks.
    fn links(&self) -> Links {
        Links {
            prev_discarded: self.prev_discarded,
            prev_seq: self.prev_seq,
            prev_end_ns: self.prev_end_ns,
            floor: self.floor,
            clock: self.st.clock,
        }
    }

    fn set_links(&mut self, l: Links) {
        self.prev_discarded = l.prev_discarded;
        self.prev_seq = l.prev_seq;
        self.prev_end_ns = l.prev_end_ns;
        self.floor = l.floor;
        self.st.clock = l.clock;
    }

    /// Steps over the next packet when it was indexed, the filter passes over it, and the
    /// reader comes to it as the indexer did (so that reading its header again would leave the
    /// reader as the index says): its losses are counted, its header is not read again.
    fn step_over_indexed(&mut self) -> bool {
        let Some(f) = self.skip else { return false };
        let at = self.next_packet;
        let i = self.index.partition_point(|p| p.offset < at);
        let Some(p) = self.index.get(i).filter(|p| p.offset == at && p.chained) else { return false };
        let before = if i == 0 { Links::default() } else { self.index[i - 1].after };
        // A packet beginning before the last event read would be damaged for this reader.
        // (A packet with a begin time sets the clock: the clock before it does not matter.)
        let mut mine = self.links();
        if p.ts_begin.is_some() {
            mine.clock = before.clock;
        }
        let same = before == mine && p.ts_begin.is_none_or(|b| b >= self.ts);
        if !same || p.next > self.limit || !f(self.path, at, p.end_ns) {
            return false;
        }
        let Some(sc) = self.schema.streams.get(p.stream_class as usize) else { return false };
        self.enter(sc);
        self.set_links(p.after);
        self.packet = PacketInfo { offset: at, ..PacketInfo::default() };
        self.next_packet = p.next;
        self.truncated = false;
        self.pos = 0;
        self.content_end = 0;
        for loss in &p.losses {
            self.push_loss(loss.clone());
        }
        true
    }

    /// Where an indexer of the file stands, to go on later from there (see
    /// [`index_packets`](Self::index_packets)).
    pub(crate) fn resume_point(&self) -> Resume {
        Resume { next_packet: self.next_packet, stream_class: self.sc.map(|s| s.id), links: self.links() }
    }

    /// Puts a new reader of the file where an indexer left off.
    pub(crate) fn resume(&mut self, r: &Resume) {
        if let Some(sc) = r.stream_class.and_then(|id| self.schema.stream(id)) {
            self.enter(sc);
        }
        self.set_links(r.links);
        self.next_packet = r.next_packet;
        self.done = r.next_packet >= self.data.len() as u64;
    }

    /// Reads the headers of the whole packets from where the reader is, and appends each
    /// sound one to `out`, with the reader's state before and after it; stops before a packet
    /// still being written (or one that cannot be read: it is examined again by the next
    /// indexing). Returns how many packet headers it read.
    /// Stops after a packet that ends after `until` (ns), when given.
    pub(crate) fn index_packets(&mut self, out: &mut Vec<Indexed>, until: Option<i64>) -> u64 {
        let mut n = 0;
        while self.next_packet < self.data.len() as u64 {
            if let (Some(u), Some(Indexed { end_ns: Some(e), .. })) = (until, out.last()) {
                if *e > u {
                    break;
                }
            }
            let (at, back) = (self.next_packet, self.resume_point());
            n += 1;
            let r = self.read_packet();
            if self.truncated || matches!(r, Err(PacketError::Fatal(_))) {
                self.losses.clear();
                self.resume(&back);
                break;
            }
            let losses = std::mem::take(&mut self.losses).into_boxed_slice();
            if r.is_ok() {
                let sc = self.sc.expect("packet read");
                let stream_class = self.schema.streams.iter().position(|s| s.id == sc.id).unwrap_or(u32::MAX as usize);
                let chained = match out.last() {
                    Some(last) => last.next == at && last.after == back.links,
                    None => at == 0 && back.links == Links::default(),
                };
                out.push(Indexed {
                    offset: at,
                    next: self.next_packet,
                    end_ns: self.packet.ts_end.and_then(|e| self.to_ns(e)),
                    ts_begin: self.packet.ts_begin,
                    stream_class: stream_class as u32,
                    chained,
                    after: self.links(),
                    losses,
                });
            }
        }
        n
    }

    /// A packet header or context that cannot be read: the file ends inside it (still being
    /// written), or it is damaged.
    fn header_error(&self, start: u64, scope: &str, e: DecodeError) -> Error {
        if e.past_end {
            self.truncated_error(start, 0)
        } else {
            self.error(start + e.bit / 8, format!("packet {scope}: {}", e.message))
        }
    }

    fn read_packet(&mut self) -> Result<(), PacketError> {
        if let Some(c) = self.counter {
            c.fetch_add(1, Ordering::Relaxed);
        }
        if self.st.regs.len() != self.schema.registers {
            // Made here, by the thread that reads, rather than by the one that made the reader:
            // the registers and the node buffers (which grow as the events need) then lie in
            // that thread's memory, not in cache lines beside another reader's, which another
            // thread writes at every event (docs/benchmarks.md, "Design measurements").
            self.st.regs = vec![0; self.schema.registers];
        }
        let start = self.next_packet;
        let mut bad_magic = None;
        let r = self.read_frame(start, &mut bad_magic);
        let Some(m) = bad_magic else { return r };
        // A packet whose magic is damaged, but whose header and context are read and whose
        // size leads to the end of the file or to a packet with the magic, is skipped alone;
        // otherwise there is no telling where packets are, and the rest of the file is skipped.
        let next = self.next_packet;
        let len = self.data.len() as u64;
        let framed = r.is_ok() && !self.truncated && (next == len || self.magic_at(next));
        let what = format!("bad packet magic {m:#x} (expected {PACKET_MAGIC:#x})");
        if framed {
            // The packet is there all the same: no packet is lost.
            self.prev_seq = self.prev_seq.map(|p| p + 1).or(self.packet.seq_num);
            let skipped = self.packet.packet_bits / 8;
            let error = self.error(start, format!("{what}: the packet's {skipped} bytes are skipped"));
            return Err(PacketError::Damaged { error, keep_events: false });
        }
        let m =
            format!("{what}: no packet can be found there; the rest of the file, {} bytes, is skipped", len - start);
        Err(PacketError::Fatal(self.error(start, m)))
    }

    /// Whether the 4 bytes at `at` are the packet magic (in either byte order).
    fn magic_at(&self, at: u64) -> bool {
        let Some(b) = self.data.get(at as usize..).and_then(|d| d.get(..4)) else { return false };
        let b = [b[0], b[1], b[2], b[3]];
        [u32::from_le_bytes(b), u32::from_be_bytes(b)].contains(&(PACKET_MAGIC as u32))
    }

    /// Reads the header and context of the packet at `start` and sets the reader up to read
    /// its events. A magic other than the packet magic is put in `bad_magic`, and the packet
    /// read as far as its framing (its time and counters are not taken).
    fn read_frame(&mut self, start: u64, bad_magic: &mut Option<u64>) -> Result<(), PacketError> {
        let avail_bits = (self.data.len() as u64 - start).saturating_mul(8);
        let mut framed = None;
        if let Some(mut h) = self.headers.take() {
            if let Some(bytes) = h.at(start) {
                let whole = bytes.len() as u64 * 8 >= avail_bits;
                framed = self.decode_frame(bytes, 0, start, avail_bits, whole, bad_magic).transpose();
            }
            // A header that could not be read so (longer than what is read, or the file no longer
            // readable) will not be the next time: the rest of the walk reads the mapping.
            if framed.is_some() {
                self.headers = Some(h);
            }
        }
        let (info, pos) = match framed {
            Some(r) => r?,
            // (All of the file's bytes are there: the frame is decoded, or an error.)
            None => {
                self.decode_frame(self.data, start as usize, start, avail_bits, true, bad_magic)?.unwrap_or_default()
            }
        };
        self.finish_frame(info, pos, start, avail_bits, bad_magic)
    }

    /// The header and context of the packet at `start`, decoded from `data` (whose byte `base`
    /// is the packet's first), and the bit after them in the packet. `whole`: whether `data`
    /// holds the rest of the file; if not, `None` when the frame goes past its end.
    fn decode_frame(
        &mut self,
        data: &[u8],
        base: usize,
        start: u64,
        avail_bits: u64,
        whole: bool,
        bad_magic: &mut Option<u64>,
    ) -> Result<Option<(PacketInfo, u64)>, PacketError> {
        let end = if whole { avail_bits } else { ((data.len() - base) as u64 * 8).min(avail_bits) };
        let mut c = Cursor { data, base, pos: 0, end };
        self.st.clock_updates = false;
        self.hdr_nodes.clear();
        self.pkt_nodes.clear();
        *bad_magic = None;
        let mut info = PacketInfo { offset: start, ..Default::default() };
        if let Some(t) = &self.schema.packet_header {
            match decode(t, &mut c, &mut self.st, &mut self.hdr_nodes) {
                Err(e) if e.past_end && !whole => return Ok(None),
                r => r.map_err(|e| self.header_error(start, "header", e))?,
            }
            let s = StructRef::new(t.as_struct().expect("scope is a struct"), &self.hdr_nodes, data);
            if let Some(m) = s.field("magic").and_then(|v| v.as_u64()) {
                if m != PACKET_MAGIC {
                    *bad_magic = Some(m);
                }
            }
            info.stream_id = s.field("stream_id").and_then(|v| v.as_u64()).unwrap_or(0);
            info.stream_instance_id = s.field("stream_instance_id").and_then(|v| v.as_u64());
        }
        let sc = match self.schema.stream(info.stream_id) {
            Some(sc) => sc,
            None if self.schema.streams.len() == 1 && self.schema.packet_header.is_none() => &self.schema.streams[0],
            None => {
                return Err(PacketError::Fatal(
                    self.error(start, format!("packet refers to unknown stream class {}", info.stream_id)),
                ))
            }
        };
        self.enter(sc);
        if let Some(t) = &sc.packet_context {
            match decode(t, &mut c, &mut self.st, &mut self.pkt_nodes) {
                Err(e) if e.past_end && !whole => return Ok(None),
                r => r.map_err(|e| self.header_error(start, "context", e))?,
            }
            let s = StructRef::new(t.as_struct().expect("scope is a struct"), &self.pkt_nodes, data);
            let get = |n: &str| s.field(n).and_then(|v| v.as_u64());
            info.content_bits = get("content_size").unwrap_or(0);
            info.packet_bits = get("packet_size").unwrap_or(0);
            info.ts_begin = get("timestamp_begin");
            info.ts_end = get("timestamp_end");
            info.events_discarded = get("events_discarded");
            info.seq_num = get("packet_seq_num");
            info.cpu_id = get("cpu_id");
            if s.field("packet_size").is_none() {
                info.packet_bits = avail_bits;
            }
            if s.field("content_size").is_none() {
                info.content_bits = info.packet_bits;
            }
        } else {
            info.packet_bits = avail_bits;
            info.content_bits = avail_bits;
        }
        Ok(Some((info, c.pos)))
    }

    /// Sets the reader up to read the events of the packet framed by `info`, whose events start
    /// at bit `pos`.
    fn finish_frame(
        &mut self,
        info: PacketInfo,
        pos: u64,
        start: u64,
        avail_bits: u64,
        bad_magic: &mut Option<u64>,
    ) -> Result<(), PacketError> {
        if info.packet_bits == 0 || !info.packet_bits.is_multiple_of(8) {
            return Err(PacketError::Fatal(
                self.error(start, format!("invalid packet size {} bits", info.packet_bits)),
            ));
        }
        if info.content_bits > info.packet_bits {
            return Err(PacketError::Fatal(self.error(
                start,
                format!("content size {} bits larger than packet size {} bits", info.content_bits, info.packet_bits),
            )));
        }
        if pos > info.content_bits {
            let m = format!("packet content size {} bits smaller than its header", info.content_bits);
            return Err(PacketError::Fatal(self.error(start, m)));
        }
        self.truncated = info.packet_bits > avail_bits;
        self.content_end = info.content_bits.min(avail_bits);
        self.pos = pos;
        self.next_packet = start + info.packet_bits / 8;
        // (Headers read from the file map no pages: there are none to give back.)
        if self.headers.is_none() && start >= self.released.saturating_add(self.step) {
            self.release(start);
        }
        self.st.clock_updates = true;
        self.packet = info;
        if bad_magic.is_some() {
            return Ok(());
        }
        // Time must not go backwards within a stream: a packet that begins after it ends, or
        // before the stream's previous event, has a damaged timestamp; its events (whose times
        // derive from it) are skipped.
        let floor = self.floor.max(self.ts);
        if let Some(b) = info.ts_begin {
            let damaged = match info.ts_end {
                // (0: the end was never written, as in a trace recovered by lttng-crash.)
                Some(e) if e < b && e != 0 => Some(format!("timestamp_begin {b} is after timestamp_end {e}")),
                _ if b > self.max_cycles => Some(format!("timestamp_begin {b} {}", self.past_clock())),
                Some(e) if e > self.max_cycles => Some(format!("timestamp_end {e} {}", self.past_clock())),
                _ if b < floor => Some(format!("timestamp_begin {b} is before the stream's previous event ({floor})")),
                _ => None,
            };
            if let Some(why) = damaged {
                // The packet is there all the same: no packet is lost.
                self.prev_seq = self.prev_seq.map(|p| p + 1).or(info.seq_num);
                let error = self.error(start, format!("damaged packet: {why}; its events are skipped"));
                return Err(PacketError::Damaged { error, keep_events: false });
            }
            self.st.clock = b;
            self.floor = b;
        }
        self.losses(&info)
    }

    /// What is wrong with a clock value past [`max_cycles`](Self::max_cycles).
    fn past_clock(&self) -> String {
        let name = self.sc.and_then(|sc| sc.clock).map_or("", |c| self.schema.clocks[c].name.as_str());
        format!(
            "is past the last time clock `{name}` can give in ns from the origin (2262-04-11T23:47:16Z, where a \
             signed 64-bit integer ends)"
        )
    }

    /// Losses the packet's counters report. Counters that go backwards or jump further than the
    /// time between the packets allows are damaged: an error, the packet's events kept, and the
    /// counter's earlier value stays the reference.
    fn losses(&mut self, info: &PacketInfo) -> Result<(), PacketError> {
        let begin_ns = self.prev_end_ns;
        let end_ns = info.ts_end.and_then(|e| self.to_ns(e));
        let span = |a: Option<i64>, b: Option<i64>| match (a, b) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a).max(0) as u64),
            _ => None,
        };
        let mut damaged: Vec<String> = Vec::new();
        if let Some(d) = info.events_discarded {
            let p = self.prev_discarded.unwrap_or(0);
            // At most one event per nanosecond could have been discarded (the first packet:
            // since the tracer started, unknown: 2^40).
            let most = match (self.prev_discarded, span(begin_ns, end_ns)) {
                (Some(_), Some(ns)) => ns.saturating_add(1 << 20),
                _ => 1 << 40,
            };
            if d < p {
                damaged.push(format!("events_discarded went from {p} down to {d}"));
            } else if d - p > most {
                damaged.push(format!("events_discarded jumped from {p} to {d}, more than could be discarded"));
            } else {
                if d > p {
                    let kind = LossKind::Events(d - p);
                    self.push_loss(Loss { path: self.path.to_path_buf(), kind, begin_ns, end_ns });
                }
                self.prev_discarded = Some(d);
            }
        }
        if let Some(q) = info.seq_num {
            let b = info.ts_begin.and_then(|b| self.to_ns(b));
            // A damaged number is taken as the next one (the packet is there).
            match self.prev_seq {
                Some(p) if q < p => {
                    damaged.push(format!("packet_seq_num went from {p} down to {q}"));
                    self.prev_seq = Some(p + 1);
                }
                Some(p) if q == p => {}
                Some(p) => {
                    // At most a packet per microsecond could have been lost.
                    let most = span(begin_ns, b).map_or(1 << 32, |ns| ns / 1000 + 16);
                    if q - p - 1 > most {
                        damaged.push(format!("packet_seq_num jumped from {p} to {q}, more packets than could be lost"));
                        self.prev_seq = Some(p + 1);
                    } else {
                        if q > p + 1 {
                            let kind = LossKind::Packets(q - p - 1);
                            self.push_loss(Loss { path: self.path.to_path_buf(), kind, begin_ns, end_ns: b });
                        }
                        self.prev_seq = Some(q);
                    }
                }
                None => self.prev_seq = Some(q),
            }
        }
        self.prev_end_ns = end_ns.or(self.prev_end_ns);
        if damaged.is_empty() {
            return Ok(());
        }
        let error =
            self.error(info.offset, format!("damaged packet context: {}; its events are kept", damaged.join("; ")));
        Err(PacketError::Damaged { error, keep_events: true })
    }

    /// Reads the next event of the packet; whether it is given (not passed over: see
    /// [`set_event_filter`](Self::set_event_filter)).
    fn read_event(&mut self) -> Result<bool, DecodeError> {
        let sc = self.sc.expect("packet read");
        let mut c = Cursor { data: self.data, base: self.packet.offset as usize, pos: self.pos, end: self.content_end };
        let st = &mut self.st;
        let id = if let Some(fast) = sc.header_fast {
            fast.decode(&mut c, st)?
        } else if let Some(h) = &sc.event_header {
            st.event_id = None;
            self.scratch.clear();
            decode(h, &mut c, st, &mut self.scratch)?;
            st.event_id.unwrap_or(0)
        } else {
            0
        };
        let class = match sc.event(id) {
            Some(ec) => ec,
            None => {
                return Err(DecodeError {
                    bit: self.pos,
                    message: format!("unknown event class id {id} in stream class {}", sc.id),
                    past_end: false,
                })
            }
        };
        if let Some(f) = self.event_filter {
            if f.passes_over(self.trace_index, class.index, self.to_ns(self.st.clock)) {
                return self.pass_over(c, sc, class).map(|()| false);
            }
        }
        let st = &mut self.st;
        self.ctx.clear();
        self.ectx.clear();
        self.payload.clear();
        let scopes =
            [(&sc.event_context, &mut self.ctx), (&class.context, &mut self.ectx), (&class.fields, &mut self.payload)];
        for (t, out) in scopes {
            let Some(t) = t else { continue };
            if self.skim {
                skip_scope(t, &mut c, st, &mut self.scratch)?;
            } else {
                decode_scope(t, &mut c, st, out)?;
            }
        }
        self.take_event(class, c.pos).map(|()| true)
    }

    /// The rest of an event passed over ([`set_event_filter`](Self::set_event_filter)), from
    /// `c`, after its header: skimmed, with the errors and the place a decoding ends at.
    #[cold]
    #[inline(never)]
    fn pass_over(
        &mut self,
        mut c: Cursor<'_>,
        sc: &StreamClass,
        class: &'a Arc<EventClass>,
    ) -> Result<(), DecodeError> {
        self.ctx.clear();
        self.ectx.clear();
        self.payload.clear();
        for t in [&sc.event_context, &class.context, &class.fields].into_iter().flatten() {
            skip_scope(t, &mut c, &mut self.st, &mut self.scratch)?;
        }
        self.take_event(class, c.pos)
    }

    /// The event of `class` read up to bit `end` of the packet made the current one, its time
    /// checked.
    #[inline(always)]
    fn take_event(&mut self, class: &'a Arc<EventClass>, end: u64) -> Result<(), DecodeError> {
        let clock = self.st.clock;
        // Time goes forward within a stream: otherwise the event's timestamp is damaged, and so
        // are the times of the packet's later events (each relative to the one before). (An
        // event before its packet's beginning or after its end is tolerated, as babeltrace2
        // does: LTTng and barectf wrote some.)
        if clock < self.ts {
            return Err(DecodeError {
                bit: self.pos,
                message: format!(
                    "damaged event timestamp {clock} (before the stream's previous event); the rest of the packet is skipped"
                ),
                past_end: false,
            });
        }
        if clock > self.max_cycles {
            let message = format!("event timestamp {clock} {}; the rest of the packet is skipped", self.past_clock());
            return Err(DecodeError { bit: self.pos, message, past_end: false });
        }
        self.class = Some(class);
        self.ts = clock;
        self.last_at = Some(self.packet.offset + self.pos / 8);
        self.pos = end;
        self.ts_ns = self.to_ns(self.ts);
        Ok(())
    }

    /// The values of the header and context of the first packet, when they can be read (its
    /// time or magic damaged or not); for a reader at the start of the file.
    pub(crate) fn first_packet(&mut self) -> Option<PacketInfo> {
        match self.read_packet() {
            Ok(()) | Err(PacketError::Damaged { .. }) => Some(self.packet),
            Err(PacketError::Fatal(_)) => None,
        }
    }

    /// Where the reader is among the events of its file: `None` before the first event, else
    /// the time and byte offset of the last event read.
    pub fn place(&self) -> Option<(Option<i64>, u64)> {
        self.last_at.map(|at| (self.ts_ns, at))
    }

    /// Byte offset of the current event in the file.
    pub fn event_offset(&self) -> Option<u64> {
        self.last_at
    }

    fn push_loss(&mut self, loss: Loss) {
        if self.placed {
            self.loss_places.push(self.place());
        }
        self.losses.push(loss);
    }

    /// Time of the current event in ns from the origin, when its stream has a clock.
    #[inline]
    pub fn timestamp(&self) -> Option<i64> {
        self.ts_ns
    }

    /// The current event, after [`advance`](Self::advance) returned `Ok(true)`.
    pub fn event(&self) -> Option<Event<'_>> {
        let class = self.class?;
        Some(Event {
            class,
            sc: self.sc,
            data: self.data,
            path: self.path,
            packet: &self.packet,
            pkt_nodes: &self.pkt_nodes,
            ctx: &self.ctx,
            ectx: &self.ectx,
            payload: &self.payload,
            ts: self.ts,
            ts_ns: self.ts_ns,
            trace_index: self.trace_index,
        })
    }

    /// The current event, with its class and stream class for as long as the schema lives (an
    /// [`Event`] borrows them from the reader), for copying it out.
    pub(crate) fn current(&self) -> Option<Current<'a, '_>> {
        Some(Current {
            class: self.class?,
            sc: self.sc,
            ts: self.ts,
            ts_ns: self.ts_ns,
            packet: &self.packet,
            pkt_nodes: &self.pkt_nodes,
            scopes: [&self.ctx, &self.ectx, &self.payload],
            data: self.data,
            trace: self.trace_index,
        })
    }
}
