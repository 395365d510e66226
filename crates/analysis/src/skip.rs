//! Which packets an analysis of a late window can pass over: those that end before the window
//! and hold no initialization event (initialization events declare the objects, and are read
//! whatever the window). What a packet holds is learnt by reading it once, so that a follower
//! of a growing recording (`rostrace live`) reads each packet before its window once, not at
//! every analysis.

use crate::collections::HashMap;
use crate::events::Kind;
use rostrace_ctf::TraceSet;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What is known of each stream file's packets: those before `learnt` have been read, and
/// `init` are the ones among them that hold an initialization event.
#[derive(Debug, Clone, Default)]
struct Stream {
    learnt: u64,
    init: BTreeSet<u64>,
}

/// What [`PacketIndex::learn`] sees of a stream file: its path, the last packet read, the
/// packets with an initialization event, the events before the last packet and in it.
type Seen = (PathBuf, u64, BTreeSet<u64>, [u64; 2]);

/// The packets of a recording known to hold no initialization event.
#[derive(Debug, Default)]
pub struct PacketIndex {
    streams: Arc<HashMap<PathBuf, Stream>>,
    /// Events of the packets learnt, and of the last packets read after them.
    events: u64,
    last_events: u64,
    /// The first and last event time read.
    range: Option<(i64, i64)>,
}

impl PacketIndex {
    /// Knows no packet.
    pub fn new() -> PacketIndex {
        PacketIndex::default()
    }

    /// Reads the packets of `set` not read yet, but for each stream file's last one (it may
    /// still be written), and notes which hold an initialization event. Leaves `set` without
    /// a packet filter.
    pub fn learn(&mut self, set: &mut TraceSet) {
        let known = Arc::clone(&self.streams);
        set.skip_packets(move |path, offset, _| known.get(path).is_some_and(|s| offset < s.learnt));
        // Per stream file (by the address of its path in the set): its path, the last packet
        // seen, the packets with an initialization event, the events of that last packet and
        // of those before it.
        // (Looked up at every event: hashed fast.)
        let mut seen: HashMap<*const Path, Seen> = HashMap::default();
        let mut is_init: HashMap<(usize, usize), bool> = HashMap::default();
        let mut range = self.range;
        set.read().run(|events| {
            while let Some(r) = events.next() {
                let Ok(ev) = r else { continue };
                if let Some(ts) = ev.timestamp() {
                    range = Some(range.map_or((ts, ts), |(a, b)| (a.min(ts), b.max(ts))));
                }
                let path = ev.stream_path();
                let s =
                    seen.entry(path as *const Path).or_insert_with(|| (path.to_path_buf(), 0, BTreeSet::new(), [0, 0]));
                let offset = ev.packet_offset();
                if offset > s.1 {
                    (s.3[0], s.3[1]) = (s.3[0] + s.3[1], 0);
                    s.1 = offset;
                }
                s.3[1] += 1;
                let init = *is_init
                    .entry((ev.trace_index(), ev.class().index))
                    .or_insert_with(|| Kind::of(ev.name()).is_some_and(Kind::is_init));
                if init {
                    s.2.insert(offset);
                }
            }
        });
        set.clear_packet_filter();
        self.range = range;
        let streams = Arc::make_mut(&mut self.streams);
        self.last_events = 0;
        for (_, (path, last, init, [before, at_last])) in seen {
            self.events += before;
            self.last_events += at_last;
            let s = streams.entry(path).or_default();
            s.learnt = s.learnt.max(last);
            s.init.extend(init.into_iter().filter(|&o| o < last));
        }
    }

    /// The events of the packets read so far: those of the recording as it was at the last
    /// [`learn`](Self::learn).
    pub fn events(&self) -> u64 {
        self.events + self.last_events
    }

    /// The first and last event time of the packets read so far.
    pub fn range(&self) -> Option<(i64, i64)> {
        self.range
    }

    /// Passes over, in `set`, the packets learnt to hold no initialization event that end
    /// before `begin_ns`.
    pub fn skip_before(&self, set: &mut TraceSet, begin_ns: i64) {
        let known = Arc::clone(&self.streams);
        set.skip_packets(move |path, offset, end| {
            end.is_some_and(|e| e < begin_ns)
                && known.get(path).is_some_and(|s| offset < s.learnt && !s.init.contains(&offset))
        });
    }
}
