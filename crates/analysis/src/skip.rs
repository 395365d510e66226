//! Which packets an analysis of a late window can pass over: those that end before the window
//! and hold no initialization event (initialization events declare the objects, and are read
//! whatever the window). What a packet holds is learnt by reading it once, so that a follower
//! of a growing recording (`rostrace live`) reads each packet before its window once, not at
//! every analysis ([`PacketIndex`]); the slices of a streamed analysis learn it from one
//! another's passes ([`Learning`]).

use crate::collections::HashMap;
use crate::events::Kind;
use rostrace_ctf::TraceSet;
use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, RwLock};

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
                let mut f = File::default();
                skim(r, |ev| {
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
                    true
                });
                f
            },
            File::then,
        );
        set.clear_packet_filter();
        let streams = Arc::make_mut(&mut self.streams);
        self.last_events = 0;
        for f in files {
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

/// Each event `r` reads, skimmed (which events are where, and when: their payloads are not
/// needed), to `f`, until it returns false.
fn skim(r: &mut rostrace_ctf::StreamReader<'_>, mut f: impl FnMut(&rostrace_ctf::Event<'_>) -> bool) {
    r.skim(true);
    loop {
        match r.advance() {
            Ok(true) => {}
            Ok(false) => break,
            Err(_) => continue,
        }
        if let Some(ev) = r.event() {
            if !f(&ev) {
                break;
            }
        }
    }
}

/// The packets of `set` that end at or after `from` and hold an initialization event before
/// `before`: each stream file skimmed (its events' classes and times alone) up to its first
/// event at or after `before`. Leaves `set` with a packet filter.
/// (`is_init`: [`init_classes`] of `set`.)
fn declaring(set: &mut TraceSet, is_init: &[Vec<bool>], from: i64, before: i64) -> Vec<(OsString, u64)> {
    set.skip_packets(move |_, _, end| end.is_some_and(|e| e < from));
    let found = set.map_streams(
        1,
        |r| {
            let mut out: Vec<(OsString, u64)> = Vec::new();
            skim(r, |ev| {
                if ev.timestamp().is_some_and(|t| t >= before) {
                    return false;
                }
                let offset = ev.packet_offset();
                if is_init[ev.trace_index()][ev.class().index] && out.last().is_none_or(|l| l.1 != offset) {
                    out.push((ev.stream_path().as_os_str().to_owned(), offset));
                }
                true
            });
            out
        },
        |mut a, b| {
            a.extend(b);
            a
        },
    );
    found.into_iter().flatten().collect()
}

/// What the slices of a streamed analysis learn from one another's passes of the packets that
/// declare objects, in place of a first reading of the whole recording ([`PacketIndex::learn`]):
/// the packets met holding an initialization event, and the times of each slice's own ones once
/// its pass is done ([`crate::tables::Declarations`]).
///
/// A slice passes over a packet that ends before its reading when the packet is known to
/// declare nothing: it ends before the time of the first slice not done yet (its events were
/// all of slices done, which met it whole), and none of them met an initialization event in
/// it. The packets after, read at the same time by another slice's pass, it skims first for
/// their initialization events, unless the slice before the first one not done declared
/// nothing of its own time: it then guesses that they declare nothing either, and passes over
/// them too. Once the slices before it are done, a slice that guessed counts the
/// initialization events before its reading: as many as those slices met of their own time,
/// or it is read again, knowing their packets.
pub(crate) struct Learning {
    /// Per stream file, the offsets of the packets known to hold an initialization event: only
    /// added to, so that a reading may look it up as it grows. (Keyed by the path's bytes: a
    /// path hashes component by component, and this is looked up at every packet.)
    packets: Arc<RwLock<HashMap<OsString, BTreeSet<u64>>>>,
    state: Mutex<Learnt>,
    changed: Condvar,
}

#[derive(Default)]
struct Learnt {
    /// Per slice, once its pass is done: the times of the initialization events of its own time.
    own: Vec<Option<Vec<i64>>>,
    /// A reader stopped short: slices waited for may never be done.
    abandoned: bool,
}

/// A reader of slices ([`Learning::reading`]): when dropped before [`Reading::done`], it lets
/// those waiting for its slices go on.
pub(crate) struct Reading<'a> {
    learning: &'a Learning,
    done: bool,
}

impl Reading<'_> {
    /// Its slices are all done.
    pub(crate) fn done(&mut self) {
        self.done = true;
    }
}

impl Drop for Reading<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.learning.lock().abandoned = true;
            self.learning.changed.notify_all();
        }
    }
}

/// Whether `known` has packet `offset` of the stream file `path`.
fn declares(known: &RwLock<HashMap<OsString, BTreeSet<u64>>>, path: &std::path::Path, offset: u64) -> bool {
    // (Poisoned: a reader panicked while adding, and what it held is only added to.)
    let known = known.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    known.get(path.as_os_str()).is_some_and(|s| s.contains(&offset))
}

impl Learning {
    /// Nothing learnt yet, of `slices` slices.
    pub(crate) fn new(slices: usize) -> Learning {
        let state = Learnt { own: vec![None; slices], abandoned: false };
        Learning { packets: Arc::default(), state: Mutex::new(state), changed: Condvar::new() }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Learnt> {
        // (A reader that panicked holding it left it whole: what it holds is only added to.)
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A reader of slices starts.
    pub(crate) fn reading(&self) -> Reading<'_> {
        Reading { learning: self, done: false }
    }

    fn add(&self, packets: impl IntoIterator<Item = (OsString, u64)>) {
        let mut known = self.packets.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        for (path, offset) in packets {
            known.entry(path).or_default().insert(offset);
        }
    }

    /// Sets the packet filter of `set` for slice `k`'s reading, from `begin`, as is known so far
    /// (`from(j)`: the start of slice `j`'s own time; `is_init`: [`init_classes`] of `set`);
    /// guesses when `may_guess` and the slices done allow it. Returns whether it guessed.
    /// `seeded`: the time before which what was declared is known to the pass (a
    /// [`crate::tables::Seed`]'s; `i64::MIN`: none), whose packets it passes over.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn pass_over(
        &self,
        set: &mut TraceSet,
        is_init: &[Vec<bool>],
        k: i64,
        begin: i64,
        seeded: i64,
        may_guess: bool,
        from: impl Fn(i64) -> i64,
    ) -> bool {
        let (mut covered, guess) = {
            let s = self.lock();
            let undone = |j: &i64| s.own.get(*j as usize).is_none_or(Option::is_none);
            let j = (0..k).find(undone).unwrap_or(k);
            let quiet = j > 0 && s.own.get(j as usize - 1).and_then(Option::as_ref).is_some_and(Vec::is_empty);
            let covered = from(j).max(seeded);
            (covered, may_guess && j < k && quiet && covered < begin)
        };
        // The packets the slices not done yet read at the same time, when not guessed: their
        // initialization events found by skimming them (each file up to the slice's reading).
        if covered < begin && !guess {
            self.add(declaring(set, is_init, covered, begin));
            covered = begin;
        }
        // Those known to declare nothing are joined in the index: every later slice passes over
        // them too.
        let known = Arc::clone(&self.packets);
        set.skip_packets(move |path, offset, end| {
            end.is_some_and(|e| e < seeded || (e < begin && e < covered && !declares(&known, path, offset)))
        });
        set.join_passed_over();
        if guess {
            let known = Arc::clone(&self.packets);
            set.skip_packets(move |path, offset, end| {
                end.is_some_and(|e| e < seeded || (e < begin && !declares(&known, path, offset)))
            });
        }
        guess
    }

    /// Slice `k`'s pass is done: it met `d`.
    pub(crate) fn publish(&self, k: i64, d: crate::tables::Declarations) {
        self.add(d.packets);
        if let Some(own) = self.lock().own.get_mut(k as usize) {
            *own = Some(d.own);
        }
        self.changed.notify_all();
    }

    /// Whether slice `k`, whose reading starts at `begin`, met every initialization event
    /// before it from `seeded` on (`before` of them; see [`Learning::pass_over`]): once the
    /// slices before it are done.
    pub(crate) fn met_all(&self, k: i64, begin: i64, seeded: i64, before: u64) -> bool {
        let k = k as usize;
        let mut s = self.lock();
        while !s.abandoned && s.own.iter().take(k).any(Option::is_none) {
            s = self.changed.wait(s).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        // (Abandoned: the analysis has failed, and what this slice met does not matter.)
        s.abandoned
            || s.own.iter().take(k).flatten().flatten().filter(|&&t| seeded <= t && t < begin).count() as u64 == before
    }
}
