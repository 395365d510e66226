//! Which packets an analysis of a late window can pass over: those that end before the window
//! and hold no initialization event (initialization events declare the objects, and are read
//! whatever the window). What a packet holds is learnt by reading it once, so that a follower
//! of a growing recording (`rostrace live`) reads each packet before its window once, not at
//! every analysis.

use crate::collections::HashMap;
use crate::events::Kind;
use rostrace_ctf::TraceSet;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

/// What is known of each stream file's packets: those before `learnt` have been read, and
/// `init` are the ones among them that hold an initialization event.
#[derive(Debug, Clone, Default)]
struct Stream {
    learnt: u64,
    init: BTreeSet<u64>,
}

/// What [`PacketIndex::learn`] sees of a stream file (or of a part of one, from where the part
/// before it ends).
#[derive(Default)]
struct File {
    /// Its path, once an event was read.
    path: Option<PathBuf>,
    /// The offset of the last packet read.
    last: u64,
    /// The packets with an initialization event.
    init: BTreeSet<u64>,
    /// The events before the last packet, and in it.
    before: u64,
    at_last: u64,
    /// The first and last event time.
    range: Option<(i64, i64)>,
}

impl File {
    /// `self` followed by `next`, what was read of the rest of the file.
    fn then(mut self, next: File) -> File {
        if next.path.is_none() {
            return self;
        }
        self.path = next.path;
        self.before += self.at_last + next.before;
        self.at_last = next.at_last;
        self.last = self.last.max(next.last);
        self.init.extend(next.init);
        if let Some(r) = next.range {
            self.range = Some(self.range.map_or(r, |(a, b)| (a.min(r.0), b.max(r.1))));
        }
        self
    }
}

/// Per trace of `set` and event class index: whether its events are initialization events.
pub(crate) fn init_classes(set: &TraceSet) -> Vec<Vec<bool>> {
    set.traces.iter().map(|t| t.schema.per_class(|ec| Kind::of(&ec.name).is_some_and(Kind::is_init))).collect()
}

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
    /// still be written), and notes which hold an initialization event; on `jobs` threads (0:
    /// as many as there are cores), each stream file on its own (what a packet holds needs no
    /// time order across files). Leaves `set` without a packet filter.
    pub fn learn(&mut self, set: &mut TraceSet, jobs: usize) {
        let known = Arc::clone(&self.streams);
        set.skip_packets(move |path, offset, _| known.get(path).is_some_and(|s| offset < s.learnt));
        let is_init = init_classes(set);
        let files = set.map_streams(
            jobs,
            |r| {
                // (Which events are where, and when: their payloads are not needed.)
                r.skim(true);
                let mut f = File::default();
                loop {
                    match r.advance() {
                        Ok(true) => {}
                        Ok(false) => break,
                        Err(_) => continue,
                    }
                    let Some(ev) = r.event() else { continue };
                    if let Some(ts) = ev.timestamp() {
                        f.range = Some(f.range.map_or((ts, ts), |(a, b)| (a.min(ts), b.max(ts))));
                    }
                    if f.path.is_none() {
                        f.path = Some(ev.stream_path().to_path_buf());
                    }
                    let offset = ev.packet_offset();
                    if offset > f.last {
                        (f.before, f.at_last) = (f.before + f.at_last, 0);
                        f.last = offset;
                    }
                    f.at_last += 1;
                    if is_init[ev.trace_index()][ev.class().index] {
                        f.init.insert(offset);
                    }
                }
                f
            },
            File::then,
        );
        set.clear_packet_filter();
        let streams = Arc::make_mut(&mut self.streams);
        self.last_events = 0;
        for f in files {
            if let Some(r) = f.range {
                self.range = Some(self.range.map_or(r, |(a, b)| (a.min(r.0), b.max(r.1))));
            }
            let Some(path) = f.path else { continue };
            self.events += f.before;
            self.last_events += f.at_last;
            let s = streams.entry(path).or_default();
            s.learnt = s.learnt.max(f.last);
            s.init.extend(f.init.into_iter().filter(|&o| o < f.last));
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
