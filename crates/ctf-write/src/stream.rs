//! Data stream files: packets of events in LTTng's layout, and what happens when a write fails.

use std::io::Write;

/// Size of the packet header and context, in bytes.
pub const PACKET_PREAMBLE: usize = 32 + 52;

/// Where a stream's packets go: a file, or memory. When a write fails (a full disk), the
/// stream is cut back to its last whole packet and a small packet there reports the loss.
pub trait PacketOut {
    /// Appends `buf`; `at` is where it goes (the end of what was written).
    fn append(&mut self, at: u64, buf: &[u8]) -> std::io::Result<()>;
    /// Writes `buf` at `at` and ends the stream after it (what was after `at` is cut off).
    fn rewrite_end(&mut self, at: u64, buf: &[u8]) -> std::io::Result<()>;
    /// Reserves room for `len` bytes at `at` without growing the stream, so that the packet
    /// reporting a loss can still be written when the disk is full (best effort).
    fn reserve(&mut self, _at: u64, _len: u64) {}
}

impl PacketOut for std::fs::File {
    fn append(&mut self, _at: u64, buf: &[u8]) -> std::io::Result<()> {
        self.write_all(buf)
    }

    fn rewrite_end(&mut self, at: u64, buf: &[u8]) -> std::io::Result<()> {
        use std::io::{Seek, SeekFrom};
        // Write first, then cut: the bytes at `at` are already allocated (reserved, or written
        // by the failed write), so this needs no new room on a full disk.
        self.seek(SeekFrom::Start(at))?;
        self.write_all(buf)?;
        self.set_len(at + buf.len() as u64)
    }

    fn reserve(&mut self, at: u64, len: u64) {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: fallocate on our own open file; KEEP_SIZE leaves its size as it is.
            unsafe { libc::fallocate(self.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, at as i64, len as i64) };
        }
        let _ = (at, len);
    }
}

impl PacketOut for Vec<u8> {
    fn append(&mut self, _at: u64, buf: &[u8]) -> std::io::Result<()> {
        self.extend_from_slice(buf);
        Ok(())
    }

    fn rewrite_end(&mut self, at: u64, buf: &[u8]) -> std::io::Result<()> {
        self.truncate(at as usize);
        self.extend_from_slice(buf);
        Ok(())
    }
}

/// Size of the packet that reports a loss: an empty packet (header and context), 8-aligned.
const LOSS_PACKET: usize = PACKET_PREAMBLE.div_ceil(8) * 8;

/// The packet at the end of a stream that could not be written further: where it is, the
/// values it keeps when it is written again with a new count, and why the stream ended.
struct Tail {
    at: u64,
    seq: u64,
    ts_begin: u64,
    error: std::io::Error,
}

/// The same error, for a second owner.
fn copy_error(e: &std::io::Error) -> std::io::Error {
    match e.raw_os_error() {
        Some(n) => std::io::Error::from_raw_os_error(n),
        None => std::io::Error::new(e.kind(), e.to_string()),
    }
}

/// One data stream file being written: whole packets, LTTng's layout. When a packet cannot be
/// written (a full disk), the stream ends there: it is cut back to its last whole packet, a small
/// packet after it reports the events lost, and every later event is counted in it, so that
/// events recorded + discarded = events emitted.
pub struct StreamWriter<W: PacketOut> {
    out: W,
    uuid: [u8; 16],
    instance: u64,
    cpu: u32,
    packet_size: usize,
    buf: Vec<u8>,
    ts_begin: u64,
    ts_last: u64,
    seq: u64,
    discarded: u64,
    /// `discarded` as the last packet written says it.
    reported: u64,
    events_in_packet: u64,
    /// Bytes of whole packets written.
    end: u64,
    /// Set when a write failed: the stream ends with this packet.
    tail: Option<Tail>,
}

/// Bytes one event takes in a stream (header, context, payload), at most.
pub fn event_size(payload_len: usize, procname_len: usize) -> usize {
    let _ = procname_len;
    2 + 4 + 8 + 4 + 4 + 17 + payload_len
}

/// Room kept reserved after the last whole packet of a file.
const RESERVE: u64 = 4096;

impl<W: PacketOut> StreamWriter<W> {
    /// A stream with packets of `packet_size` bytes (a multiple of 4096; bigger events get bigger packets).
    pub fn new(mut out: W, uuid: [u8; 16], instance: u64, cpu: u32, packet_size: usize) -> Self {
        let packet_size = packet_size.max(4096).div_ceil(4096) * 4096;
        out.reserve(0, RESERVE);
        StreamWriter {
            out,
            uuid,
            instance,
            cpu,
            packet_size,
            buf: Vec::with_capacity(packet_size),
            ts_begin: 0,
            ts_last: 0,
            seq: 0,
            discarded: 0,
            reported: 0,
            events_in_packet: 0,
            end: 0,
            tail: None,
        }
    }

    /// Counts `n` events that could not be recorded, the last of them at time `at` (reported
    /// in the next packet's `events_discarded`). That packet ends no earlier than `at`, since a
    /// reader places a packet's discarded events between the previous packet's end and its
    /// own; events given later are not placed before `at`.
    pub fn discard(&mut self, n: u64, at: u64) {
        self.discarded += n;
        if n > 0 {
            self.ts_last = self.ts_last.max(at);
        }
    }

    /// Events discarded so far.
    pub fn discarded(&self) -> u64 {
        self.discarded
    }

    /// Whether a write failed: the stream ends, and later events are counted as discarded.
    pub fn ended(&self) -> bool {
        self.tail.is_some()
    }

    /// The failed write's error, when the stream ended at one.
    pub fn failure(&self) -> Option<&std::io::Error> {
        self.tail.as_ref().map(|t| &t.error)
    }

    fn start_packet(&mut self, ts: u64) {
        self.buf.clear();
        self.buf.extend_from_slice(&0xC1FC_1FC1u32.to_le_bytes());
        self.buf.extend_from_slice(&self.uuid);
        self.buf.extend_from_slice(&0u32.to_le_bytes());
        self.buf.extend_from_slice(&self.instance.to_le_bytes());
        self.buf.resize(PACKET_PREAMBLE, 0); // context, filled when the packet is closed
        self.ts_begin = ts;
        self.ts_last = ts;
        self.events_in_packet = 0;
    }

    /// Appends one event; packets are closed and written when full. Timestamps must not decrease.
    pub fn event(
        &mut self,
        id: u32,
        ts: u64,
        vpid: i32,
        vtid: i32,
        procname: &[u8],
        payload: &[u8],
    ) -> std::io::Result<()> {
        if self.tail.is_some() {
            // The stream ended at a failed write: counted, reported by its last packet.
            self.discarded += 1;
            self.ts_last = self.ts_last.max(ts);
            return Ok(());
        }
        let need = event_size(payload.len(), procname.len());
        // Time never goes back within a stream (a packet starts no earlier than the last one
        // ended).
        let ts = ts.max(self.ts_last);
        if self.buf.is_empty() {
            self.start_packet(ts);
        } else if self.buf.len() + need > self.packet_size {
            if let Err(e) = self.close_packet(self.ts_last) {
                // The stream ended there: this event is counted with the others.
                self.discarded += 1;
                self.ts_last = self.ts_last.max(ts);
                return Err(e);
            }
            self.start_packet(ts);
        }
        // Large header: compact (u16 id, u32 time) when the id fits and the clock did not move
        // by 2^32 or more since the previous event; else extended (full id and time).
        if id < 65535 && ts - self.ts_last < (1 << 32) && self.events_in_packet > 0 {
            self.buf.extend_from_slice(&(id as u16).to_le_bytes());
            self.buf.extend_from_slice(&(ts as u32).to_le_bytes());
        } else {
            self.buf.extend_from_slice(&65535u16.to_le_bytes());
            self.buf.extend_from_slice(&id.to_le_bytes());
            self.buf.extend_from_slice(&ts.to_le_bytes());
        }
        self.buf.extend_from_slice(&vpid.to_le_bytes());
        self.buf.extend_from_slice(&vtid.to_le_bytes());
        let n = procname.iter().position(|b| *b == 0).unwrap_or(procname.len()).min(16);
        self.buf.extend_from_slice(&procname[..n]);
        self.buf.resize(self.buf.len() + 17 - n, 0);
        self.buf.extend_from_slice(payload);
        self.ts_last = ts;
        self.events_in_packet += 1;
        Ok(())
    }

    /// Closes the current packet (if it has events) with end time `ts_end` and writes it out.
    pub fn close_packet(&mut self, ts_end: u64) -> std::io::Result<()> {
        self.write_packet(ts_end, false).map(drop)
    }

    /// Writes the events so far as a packet of their own, no bigger than they need (8-byte
    /// aligned), and hands it to the operating system: what a periodic flush (LTTng's switch
    /// timer) does, so that a process killed later loses nothing written before.
    pub fn switch_packet(&mut self) -> std::io::Result<()> {
        self.write_packet(self.ts_last, true).map(drop)
    }

    /// Whether there is something to write: events, or discarded events no packet reported
    /// yet (then an empty packet carries the count).
    fn pending(&mut self) -> bool {
        if self.buf.is_empty() && self.discarded != self.reported {
            self.start_packet(self.ts_last);
        }
        !self.buf.is_empty()
    }

    /// Fills the packet context of the packet in `buf` and pads it to `size` bytes.
    fn seal(&mut self, ts_end: u64, size: usize, seq: u64) {
        let content = self.buf.len();
        let ctx = &mut self.buf[32..PACKET_PREAMBLE];
        ctx[0..8].copy_from_slice(&self.ts_begin.to_le_bytes());
        ctx[8..16].copy_from_slice(&ts_end.max(self.ts_last).to_le_bytes());
        ctx[16..24].copy_from_slice(&((content * 8) as u64).to_le_bytes());
        ctx[24..32].copy_from_slice(&((size * 8) as u64).to_le_bytes());
        ctx[32..40].copy_from_slice(&seq.to_le_bytes());
        ctx[40..48].copy_from_slice(&self.discarded.to_le_bytes());
        ctx[48..52].copy_from_slice(&self.cpu.to_le_bytes());
        self.buf.resize(size, 0);
    }

    /// An empty packet at `ts` with sequence number 0 that reports no discarded event: what a
    /// stream starts with when its first packet reports discarded events. (A reader cannot tell
    /// how many of the events a stream's first packet counts were discarded before it:
    /// babeltrace2 then only says that events may have been discarded. After this packet, it
    /// counts them.)
    fn lead_packet(&self, ts: u64) -> Vec<u8> {
        let mut p = Vec::with_capacity(LOSS_PACKET);
        p.extend_from_slice(&0xC1FC_1FC1u32.to_le_bytes());
        p.extend_from_slice(&self.uuid);
        p.extend_from_slice(&0u32.to_le_bytes());
        p.extend_from_slice(&self.instance.to_le_bytes());
        // timestamp_begin, timestamp_end, content_size, packet_size, packet_seq_num, events_discarded
        for v in [ts, ts, PACKET_PREAMBLE as u64 * 8, LOSS_PACKET as u64 * 8, 0, 0] {
            p.extend_from_slice(&v.to_le_bytes());
        }
        p.extend_from_slice(&self.cpu.to_le_bytes());
        p.resize(LOSS_PACKET, 0);
        p
    }

    /// Writes the stream's last packet (after a failed write) again with the count so far
    /// (after a [lead packet](Self::lead_packet) when it is the stream's first).
    fn write_tail(&mut self) -> std::io::Result<()> {
        let Some(&Tail { at, seq, ts_begin, .. }) = self.tail.as_ref() else { return Ok(()) };
        let last = self.ts_last;
        let mut bytes = if seq == 0 { self.lead_packet(ts_begin) } else { Vec::new() };
        self.start_packet(ts_begin);
        self.ts_last = last;
        self.seal(last, LOSS_PACKET, seq.max(1));
        bytes.extend_from_slice(&self.buf);
        let r = self.out.rewrite_end(at, &bytes);
        self.buf.clear();
        r?;
        self.reported = self.discarded;
        Ok(())
    }

    /// Writes the current packet, if there is one: `compact`, or with no event, as big as its
    /// content; else padded to the stream's packet size. Whether a packet was written.
    fn write_packet(&mut self, ts_end: u64, compact: bool) -> std::io::Result<bool> {
        if self.tail.is_some() {
            // (Events are counted, not buffered, once the stream ended.)
            if self.discarded == self.reported {
                return Ok(false);
            }
            return self.write_tail().map(|()| true);
        }
        if !self.pending() {
            return Ok(false);
        }
        let size = if compact || self.events_in_packet == 0 {
            self.buf.len().div_ceil(8) * 8
        } else {
            self.buf.len().max(self.packet_size).div_ceil(4096) * 4096
        };
        // The stream's first packet, reporting discarded events: a lead packet before it.
        let lead = if self.seq == 0 && self.discarded > 0 { self.lead_packet(self.ts_begin) } else { Vec::new() };
        let (lead_len, seq) = (lead.len() as u64, self.seq + !lead.is_empty() as u64);
        self.seal(ts_end, size, seq);
        let written = if lead.is_empty() {
            self.out.append(self.end, &self.buf)
        } else {
            let mut both = lead;
            both.extend_from_slice(&self.buf);
            self.out.append(self.end, &both)
        };
        match written {
            Ok(()) => {
                self.buf.clear();
                self.seq = seq + 1;
                self.end += lead_len + size as u64;
                self.reported = self.discarded;
                self.out.reserve(self.end, RESERVE);
                Ok(true)
            }
            Err(e) => {
                // A full disk: the packet's events are lost, and the stream ends with a packet
                // that reports them (and every later event).
                self.discarded += self.events_in_packet;
                let at = self.end;
                let returned = copy_error(&e);
                self.tail = Some(Tail { at, seq: self.seq, ts_begin: self.ts_last, error: e });
                if self.write_tail().is_err() {
                    // Not even that: at least no torn packet is left behind.
                    let _ = self.out.rewrite_end(at, &[]);
                }
                Err(returned)
            }
        }
    }

    /// Closes the last packet (and writes the count of the stream's last packet, when it ended
    /// at a failed write); returns the output.
    pub fn finish(mut self) -> std::io::Result<W> {
        let end = self.ts_last;
        self.close_packet(end)?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A disk that fills at the second packet: half of it is written, then the write fails.
    struct FullOnce {
        out: Vec<u8>,
        writes: u32,
    }

    impl PacketOut for FullOnce {
        fn append(&mut self, at: u64, b: &[u8]) -> std::io::Result<()> {
            assert_eq!(at, self.out.len() as u64);
            self.writes += 1;
            if self.writes >= 2 {
                self.out.extend_from_slice(&b[..b.len() / 2]);
                return Err(std::io::Error::other("no space left on device"));
            }
            self.out.extend_from_slice(b);
            Ok(())
        }

        fn rewrite_end(&mut self, at: u64, buf: &[u8]) -> std::io::Result<()> {
            self.out.rewrite_end(at, buf)
        }
    }

    /// A packet that reports discarded events ends no earlier than the last of them, and the
    /// events after it do not go back before them.
    #[test]
    fn a_packet_reporting_discards_ends_after_them() {
        let mut w = StreamWriter::new(Vec::new(), [0; 16], 0, 0, 4096);
        w.event(0, 10, 1, 1, b"p", b"").unwrap();
        w.event(0, 20, 1, 1, b"p", b"").unwrap();
        w.discard(7, 500);
        w.switch_packet().unwrap();
        w.event(0, 450, 1, 1, b"p", b"").unwrap(); // taken before 500, written after
        w.event(0, 600, 1, 1, b"p", b"").unwrap();
        let out = w.finish().unwrap();
        let mut packets = Vec::new();
        let mut at = 0;
        while at < out.len() {
            let u = |i: usize| u64::from_le_bytes(out[at + 32 + i..at + 40 + i].try_into().unwrap());
            packets.push((u(0), u(8), u(40)));
            at += u(24) as usize / 8;
        }
        // The lead packet (none discarded before it); the first: 10..500, 7 discarded; the
        // second: 500..600 (the late event not before 500).
        assert_eq!(packets, [(10, 10, 0), (10, 500, 7), (500, 600, 7)]);
    }

    /// Events discarded after the last packet: an empty packet reports them (the count stays
    /// exact), on a switch and at the end.
    #[test]
    fn discards_after_the_last_packet_are_reported() {
        let mut w = StreamWriter::new(Vec::new(), [0; 16], 0, 0, 4096);
        w.event(0, 10, 1, 1, b"p", b"").unwrap();
        w.switch_packet().unwrap();
        w.switch_packet().unwrap(); // nothing new: nothing written
        w.discard(2, 20);
        w.switch_packet().unwrap();
        w.discard(3, 30);
        let packets = packets(&w.finish().unwrap());
        // (content bytes, sequence number, events discarded so far)
        assert_eq!(packets.len(), 3, "{packets:?}");
        assert!(packets[0].0 > PACKET_PREAMBLE as u64 && packets[0].2 == 0, "{packets:?}");
        assert_eq!(&packets[1..], &[(PACKET_PREAMBLE as u64, 1, 2), (PACKET_PREAMBLE as u64, 2, 5)]);
    }

    /// Events that fill packets on a disk that fills: each is in the packet written or counted,
    /// the one whose packet could not be written too.
    #[test]
    fn every_event_is_written_or_counted_when_a_full_packet_cannot_be_written() {
        let mut w = StreamWriter::new(FullOnce { out: Vec::new(), writes: 0 }, [0; 16], 0, 0, 4096);
        let mut failures = 0;
        for i in 0..20 {
            failures += w.event(0, i, 1, 1, b"p", &[7; 1000]).is_err() as u64;
        }
        assert_eq!(failures, 1);
        let discarded = w.discarded();
        let out = w.finish().unwrap().out;
        // The first packet holds what fit of the first events: 3 of 1,039 bytes each.
        assert_eq!(out.len(), 4096 + LOSS_PACKET);
        assert_eq!(discarded, 20 - 3);
        let ctx = &out[4096 + 32..4096 + PACKET_PREAMBLE];
        assert_eq!(u64::from_le_bytes(ctx[40..48].try_into().unwrap()), 17);
    }

    /// (content bytes, sequence number, events discarded) of each packet of a stream.
    fn packets(out: &[u8]) -> Vec<(u64, u64, u64)> {
        let mut at = 0;
        let mut v = Vec::new();
        while at < out.len() {
            let ctx = &out[at + 32..at + PACKET_PREAMBLE];
            let u = |i: usize| u64::from_le_bytes(ctx[i..i + 8].try_into().unwrap());
            v.push((u(16) / 8, u(32), u(40)));
            at += (u(24) / 8) as usize;
        }
        v
    }

    /// A stream whose first packet reports discarded events starts with an empty packet that
    /// reports none (so that readers can count them): when it is written, and when it is the
    /// packet that ends a stream that could not be written (a full disk).
    #[test]
    fn a_stream_whose_first_packet_reports_discards_starts_with_an_empty_one() {
        let empty = PACKET_PREAMBLE as u64;
        let mut w = StreamWriter::new(Vec::new(), [0; 16], 0, 0, 4096);
        w.discard(5, 10);
        w.event(0, 20, 1, 1, b"p", b"").unwrap();
        w.switch_packet().unwrap();
        w.discard(1, 30);
        let p = packets(&w.finish().unwrap());
        assert_eq!(p.len(), 3, "{p:?}");
        assert_eq!(p[0], (empty, 0, 0));
        assert_eq!((p[1].1, p[1].2, p[2]), (1, 5, (empty, 2, 6)));
        // Only discards, as the tracer's loss file writes them.
        let mut w = StreamWriter::new(Vec::new(), [0; 16], 0, 0, 4096);
        w.discard(9, 10);
        w.close_packet(40).unwrap();
        assert_eq!(packets(&w.finish().unwrap()), [(empty, 0, 0), (empty, 1, 9)]);
        // Its first packet could not be written: the lead packet, then the one that counts.
        let mut w = StreamWriter::new(FullOnce { out: Vec::new(), writes: 1 }, [0; 16], 0, 0, 4096);
        w.discard(2, 5);
        for i in 0..3 {
            w.event(0, 10 + i, 1, 1, b"p", b"").unwrap();
        }
        assert!(w.switch_packet().is_err());
        w.event(0, 50, 1, 1, b"p", b"").unwrap();
        assert_eq!(packets(&w.finish().unwrap().out), [(empty, 0, 0), (empty, 1, 6)]);
        // And none when nothing was discarded before the first packet.
        let mut w = StreamWriter::new(Vec::new(), [0; 16], 0, 0, 4096);
        w.event(0, 20, 1, 1, b"p", b"").unwrap();
        w.switch_packet().unwrap();
        w.discard(1, 30);
        assert_eq!(packets(&w.finish().unwrap()).iter().map(|p| (p.1, p.2)).collect::<Vec<_>>(), [(0, 0), (1, 1)]);
    }

    #[test]
    fn a_stream_that_cannot_be_written_ends_with_a_packet_counting_every_later_event() {
        let mut w = StreamWriter::new(FullOnce { out: Vec::new(), writes: 0 }, [0; 16], 0, 0, 4096);
        for packet in 0..3u64 {
            for i in 0..3 {
                w.event(0, packet * 100 + i, 1, 1, b"p", b"").unwrap();
            }
            assert_eq!(w.close_packet(packet * 100 + 10).is_err(), packet == 1);
            assert_eq!(w.ended(), packet >= 1);
        }
        w.discard(4, 400);
        // The second packet's events, the third's, and 4 the ring could not keep.
        assert_eq!(w.discarded(), 10);
        let out = w.finish().unwrap().out;
        // The first packet whole; the torn second one cut off, replaced by the packet that
        // reports the loss: the next sequence number, and the final count.
        assert_eq!(out.len(), 4096 + LOSS_PACKET);
        let ctx = &out[4096 + 32..4096 + PACKET_PREAMBLE];
        let u = |i: usize| u64::from_le_bytes(ctx[i..i + 8].try_into().unwrap());
        assert_eq!((u(16), u(24), u(32), u(40)), (PACKET_PREAMBLE as u64 * 8, LOSS_PACKET as u64 * 8, 1, 10));
        assert_eq!((u(0), u(8)), (102, 400), "from the last event written to the last one lost");
    }
}
