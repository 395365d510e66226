//! A set of traces read together: opened from paths, kept up to date with traces being
//! written, and read as one time-ordered stream of events (on one thread or several), or
//! stream file by stream file.

use crate::error::Error;
use crate::find::find_traces_all;
use crate::index::{EventFilter, PacketFilter};
use crate::merge::{order_of, Events};
use crate::parallel::{FileRef, ParStreams, Piped};
use crate::schema::Clock;
use crate::stream::StreamReader;
use crate::trace::Trace;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A set of traces read together.
pub struct TraceSet {
    /// The traces, sorted by directory.
    pub traces: Vec<Trace>,
    /// Mapped data kept resident while read (see [`RESIDENT_BUDGET`]).
    budget: u64,
    /// Packets whose events every reader of the set passes over.
    pub(crate) skip: Option<std::sync::Arc<PacketFilter>>,
    /// Events every reader of the set passes over.
    event_filter: Option<std::sync::Arc<EventFilter>>,
    /// The paths the set was opened on, where [`refresh`](Self::refresh) looks for new traces.
    roots: Vec<PathBuf>,
    /// Packet headers read by the set's readers, and by its indexing.
    packets_read: AtomicU64,
    packets_indexed: u64,
}

/// [`TraceSet::map_streams`] cuts no file into parts smaller than this.
const PART_MIN: u64 = 1 << 20;

/// What the last packets of each stream file of a set hold ([`TraceSet::tails`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tails {
    /// The time of the set's last event (`None` when no event has one).
    pub last: Option<i64>,
    /// Per trace, per event class index: how many of its events they hold.
    pub classes: Vec<Vec<u64>>,
}

/// [`TraceSet::last_time`] reads the packets of about this many bytes at each file's end.
const LAST_PART: u64 = 64 << 10;

/// Mapped trace data up to this size stays resident while it is read; beyond it, the readers
/// give back the pages they have gone past.
pub const RESIDENT_BUDGET: u64 = 128 << 20;

/// How readers of stream files of `total` bytes in all give back pages when `at_once` of them
/// are read at the same time (all of them in a merge, one per thread when each thread reads
/// files or parts of files whole): not at all when the files fit the `budget` (giving back
/// costs every other core running the process's threads an interrupt); else in steps that
/// keep the files being read within it, never smaller than 256 KiB.
fn release_step(total: u64, at_once: u64, budget: u64) -> Option<u64> {
    (total > budget).then(|| (budget / at_once.max(1)).max(256 << 10))
}

impl TraceSet {
    /// Opens every trace found at or below `paths`. Traces that fail to open are returned as errors
    /// beside the set of those that opened.
    pub fn open<P: AsRef<Path>>(paths: &[P]) -> (TraceSet, Vec<Error>) {
        TraceSet::open_jobs(paths, 1)
    }

    /// [`open`](Self::open) on `jobs` threads (0: one per core), the traces' metadata parsed
    /// at the same time; the same set and errors, in the same order.
    pub fn open_jobs<P: AsRef<Path>>(paths: &[P], jobs: usize) -> (TraceSet, Vec<Error>) {
        let mut dirs = Vec::new();
        let mut errors = Vec::new();
        for p in paths {
            let (d, e) = find_traces_all(p.as_ref());
            dirs.extend(d);
            errors.extend(e);
        }
        dirs.sort();
        dirs.dedup();
        let mut traces = Vec::new();
        for r in rostrace_threads::map_in_order(jobs, dirs, |d| Trace::open(&d)) {
            match r {
                Ok((t, e)) => {
                    traces.push(t);
                    errors.extend(e);
                }
                Err(e) => errors.push(e),
            }
        }
        let roots = paths.iter().map(|p| p.as_ref().to_path_buf()).collect();
        let set = TraceSet {
            traces,
            budget: RESIDENT_BUDGET,
            skip: None,
            event_filter: None,
            roots,
            packets_read: AtomicU64::new(0),
            packets_indexed: 0,
        };
        (set, errors)
    }

    /// The same traces opened again: mappings, a packet index and a packet filter of their own,
    /// for a reader of another part of them on another thread. Their indices are those of this
    /// set unless one of them could not be opened again (an error then).
    pub fn reopen(&self) -> (TraceSet, Vec<Error>) {
        let dirs: Vec<&Path> = self.traces.iter().map(|t| t.dir.as_path()).collect();
        TraceSet::open(&dirs)
    }

    /// Per trace: the index of the first trace of its UUID. Traces of one UUID are parts of one
    /// trace, as babeltrace2 merges them: the chunks of a rotated recording (rostrace's
    /// `record --rotate`, LTTng's rotation), or LTTng's snapshots of one session. A copy of a
    /// trace (each of its stream files of the same name and first packet as one of the first
    /// trace of its UUID) is its own, as is a trace without a UUID.
    pub fn identities(&self) -> Vec<usize> {
        let mut first: std::collections::HashMap<[u8; 16], usize> = std::collections::HashMap::new();
        let firsts = |t: &Trace| -> Vec<_> {
            t.streams
                .iter()
                .map(|s| {
                    (
                        s.path.file_name().map(|n| n.to_os_string()),
                        s.first.as_ref().and_then(crate::trace::same_packet_key),
                    )
                })
                .collect()
        };
        let mut out = Vec::with_capacity(self.traces.len());
        for (ti, t) in self.traces.iter().enumerate() {
            out.push(match t.schema.uuid {
                Some(u) => {
                    let f = *first.entry(u).or_insert(ti);
                    let of_first = firsts(&self.traces[f]);
                    let copy = f != ti
                        && !t.streams.is_empty()
                        && firsts(t).iter().all(|k| k.1.is_some() && of_first.contains(k));
                    if copy {
                        ti
                    } else {
                        f
                    }
                }
                None => ti,
            });
        }
        out
    }

    /// The host of each trace: its `hostname` (empty without one), and where traces of one host
    /// name come from several machines (rostrace's traces say which in `machine_id`), the
    /// machine's id after it, `name#1a2b3c4d`: two machines of one name, or a host and its clone,
    /// stay apart.
    pub fn hosts(&self) -> Vec<String> {
        let named: Vec<(String, String)> = self
            .traces
            .iter()
            .map(|t| {
                let machine = match t.schema.env("machine_id") {
                    Some(crate::EnvValue::Str(s)) => s.clone(),
                    _ => String::new(),
                };
                (t.hostname(), machine)
            })
            .collect();
        named
            .iter()
            .map(|(h, m)| {
                let others = named.iter().any(|(x, y)| x == h && !y.is_empty() && y != m);
                match others && !m.is_empty() {
                    true => format!("{h}#{}", &m[..m.len().min(8)]),
                    false => h.clone(),
                }
            })
            .collect()
    }

    /// Moves the times of trace `trace` by `ns` (its clocks' offsets from the origin): a host's
    /// clock corrected to another's (events of several hosts). Before the set is read: the
    /// readers made afterwards, and the time-ordered merge, use the times moved.
    pub fn shift_clocks(&mut self, trace: usize, ns: i64) {
        self.correct_clocks(trace, -ns, 0.0, 0);
    }

    /// Corrects the times of trace `trace` for a clock that read `offset_ns + drift · (t −
    /// at_ns)` ahead of the right time `t` (`drift` a fraction: 50e-6 for a clock 50 ppm fast):
    /// a time `h` it recorded becomes `(h − offset_ns + drift · at_ns) / (1 + drift)`, through its
    /// clocks' offsets and frequencies. Before the set is read, as
    /// [`shift_clocks`](Self::shift_clocks).
    pub fn correct_clocks(&mut self, trace: usize, offset_ns: i64, drift: f64, at_ns: i64) {
        let Some(t) = self.traces.get_mut(trace) else { return };
        let mut schema = (*t.schema).clone();
        for c in &mut schema.clocks {
            *c = c.corrected(offset_ns, drift, at_ns);
        }
        t.schema = std::sync::Arc::new(schema);
    }

    /// How [`correct_clocks`](Self::correct_clocks) with the same arguments moves the times of
    /// trace `trace` (those of its first clock, the events' clock of every trace LTTng and
    /// rostrace write): for times read before the correction, to be moved as a reader made
    /// after it would read them. `None` for a trace without a clock or out of range.
    pub fn clock_correction(&self, trace: usize, offset_ns: i64, drift: f64, at_ns: i64) -> Option<ClockCorrection> {
        let from = self.traces.get(trace)?.schema.clocks.first()?.clone();
        let to = from.corrected(offset_ns, drift, at_ns);
        Some(ClockCorrection { from, to })
    }

    /// Brings the set up to date with its traces being written: finds the traces that
    /// appeared under the paths it was opened on, reads metadata that grew again, maps the
    /// stream files that grew again, adds those that appeared, and indexes the packets written
    /// since the last refresh (the first refresh indexes them all; the last packet of a file,
    /// still being written, is examined again by the next one). Readings of the set then step
    /// over the indexed packets that the packet filter passes over without reading them again,
    /// so that a reader of the recent packets of a growing recording reads those, whatever
    /// its length. Returns the errors met (a trace that cannot be opened, metadata being
    /// written).
    pub fn refresh(&mut self) -> Vec<Error> {
        let mut errors = Vec::new();
        let mut dirs = Vec::new();
        for root in &self.roots {
            // (Finding no trace is not an error here: the set may be waiting for its first one.)
            let (d, e) = find_traces_all(root);
            dirs.extend(d);
            errors.extend(e.into_iter().filter(|e| !matches!(e, Error::NoTrace { .. })));
        }
        for t in &mut self.traces {
            t.refresh(&mut errors);
        }
        for d in dirs {
            if let Err(i) = self.traces.binary_search_by(|t| t.dir.cmp(&d)) {
                match Trace::open(&d) {
                    Ok((t, e)) => {
                        self.traces.insert(i, t);
                        errors.extend(e);
                    }
                    Err(e) => errors.push(e),
                }
            }
        }
        for t in &mut self.traces {
            for s in &mut t.streams {
                self.packets_indexed += s.index(&t.schema);
            }
        }
        errors
    }

    /// Indexes, as [`refresh`](Self::refresh) does, the packets of the stream files as they are
    /// (neither looking for new traces nor mapping grown files again) up to the first one of
    /// each file that ends after `until_ns`: a reading that moves through a recording
    /// (streamed analysis) indexes it as it goes, joining what it passed over
    /// ([`join_passed_over`](Self::join_passed_over)), so that its index stays the size of
    /// what it reads at once, however long the recording.
    pub fn index_until(&mut self, until_ns: i64) {
        for t in &mut self.traces {
            for s in &mut t.streams {
                self.packets_indexed += s.index_until(&t.schema, Some(until_ns));
            }
        }
    }

    /// Joins, in each stream file's index, each run of packets that the packet filter passes
    /// over into one entry, which readings then step over at once: for a reader of a moving
    /// window of a recording being followed, whose index would otherwise keep an entry per
    /// packet and be walked entry by entry at each reading. Right only when every later filter
    /// passes over what this one does (a window that moves on). Returns how many entries are gone.
    pub fn join_passed_over(&mut self) -> usize {
        let Some(f) = self.skip.clone() else { return 0 };
        let mut gone = 0;
        for s in self.traces.iter_mut().flat_map(|t| &mut t.streams) {
            let path = s.path.clone();
            gone += crate::index::join_runs(&mut s.index, |p| p.passed_over(&path, &*f));
        }
        gone
    }

    /// Entries in the stream files' indexes (see [`join_passed_over`](Self::join_passed_over)).
    pub fn index_entries(&self) -> usize {
        self.traces.iter().flat_map(|t| &t.streams).map(|s| s.index.len()).sum()
    }

    /// Packet headers read by the readings of the set so far (not by its indexing).
    pub fn packets_read(&self) -> u64 {
        self.packets_read.load(Ordering::Relaxed)
    }

    /// Packet headers read by [`refresh`](Self::refresh) so far.
    pub fn packets_indexed(&self) -> u64 {
        self.packets_indexed
    }

    /// Gives back the pages of the stream files' mappings that are resident (a reading that
    /// comes after reads them from the files again): for a reader done with a pass, so that the
    /// data it went over does not stay in its memory while it works on what it kept.
    pub fn release_pages(&self) {
        for s in self.traces.iter().flat_map(|t| &t.streams) {
            if let Some(m) = &s.map {
                // SAFETY: a read-only shared mapping of a file: a page given back is read from
                // the file again when next touched, with the same bytes.
                let _ = unsafe { m.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
            }
        }
    }

    /// Total size of the data stream files.
    pub fn total_bytes(&self) -> u64 {
        self.traces.iter().map(Trace::bytes).sum()
    }

    /// Sets how much mapped data stays resident while read (default [`RESIDENT_BUDGET`]). For
    /// tests.
    #[doc(hidden)]
    pub fn set_resident_budget(&mut self, bytes: u64) {
        self.budget = bytes;
    }

    /// Passes over the events of the packets `f` names, in every reading of the set: for a
    /// reader that wants only some of the time (a window) and knows which packets before it
    /// hold nothing it needs. Their losses are still counted.
    pub fn skip_packets(&mut self, f: impl Fn(&Path, u64, Option<i64>) -> bool + Send + Sync + 'static) {
        self.skip = Some(std::sync::Arc::new(f));
    }

    /// Passes over, in every reading of the set, the events `f` names: for a reader of a window
    /// that reads the packets before it only for some of their events (what declares objects).
    pub fn pass_over_events(&mut self, f: EventFilter) {
        self.event_filter = Some(std::sync::Arc::new(f));
    }

    /// Reads every packet's events again, and every event ([`pass_over_events`](Self::pass_over_events)).
    pub fn clear_packet_filter(&mut self) {
        self.skip = None;
        self.event_filter = None;
    }

    /// A reader of each stream file, `at_once` of them being read at the same time (all of
    /// them when `None`).
    fn readers(&self, at_once: Option<usize>) -> (Vec<StreamReader<'_>>, Vec<FileRef<'_>>) {
        let mut readers = Vec::new();
        let mut files = Vec::new();
        let n: usize = self.traces.iter().map(|t| t.streams.len()).sum();
        let step = release_step(self.total_bytes(), at_once.unwrap_or(n) as u64, self.budget);
        for (ti, t) in self.traces.iter().enumerate() {
            for s in &t.streams {
                let mut r = StreamReader::new(&s.path, s.data(), &t.schema, ti);
                r.set_packet_filter(self.skip.as_deref());
                r.set_event_filter(self.event_filter.as_deref());
                r.file_id = s.id;
                r.set_index(&s.index, Some(&self.packets_read));
                if let (Some(step), Some(_)) = (step, &s.map) {
                    // SAFETY: a read-only mapping of the file (traces are not written while read).
                    unsafe { r.set_mapped(step) };
                }
                readers.push(r);
                files.push((s.path.as_path(), s.data(), ti));
            }
        }
        (readers, files)
    }

    /// Runs `f` on a reader of each data stream file, on `jobs` threads (0: as many as there are
    /// cores), the largest first; the results in stream order (traces in order, each trace's
    /// files by name). For what needs no time order across streams (counts, ranges).
    ///
    /// With several threads, a file of at least a quarter of a thread's share of the data (and
    /// 2 MiB) is cut at packet boundaries (found from the packet headers, in this thread) into
    /// parts of an eighth of a share, read at the same time, each on a reader that first reads
    /// the packets before its part back to the last one with events (to start where a reader
    /// of the whole file would be); `merge` adds the results of a file's parts up, in file
    /// order. The results are those of one reader per file: a part whose start state differs
    /// from where the part before it left off is read again by that part's reader going on,
    /// and the parts after one whose reader stopped (an error that ends the file, or `f`
    /// stopping early) are dropped. A file with a damaged packet context (counters or begin
    /// time) is read whole: the parts after the damage would mostly be read again.
    pub fn map_streams<R: Send>(
        &self,
        jobs: usize,
        f: impl Fn(&mut StreamReader<'_>) -> R + Sync,
        merge: impl Fn(R, R) -> R,
    ) -> Vec<R> {
        let every = match rostrace_threads::threads(jobs) {
            1 => u64::MAX,
            n => (self.total_bytes() / (n as u64 * 8)).max(PART_MIN),
        };
        self.map_streams_in_parts(jobs, every, false, f, merge).0
    }

    /// [`map_streams`](Self::map_streams) with files of at least twice `every` bytes cut into
    /// parts of about `every` bytes, whatever the threads, files with damaged packets too when
    /// `damaged_too`; also returns how many parts were read again by the reader of the part
    /// before them. For tests.
    #[doc(hidden)]
    pub fn map_streams_in_parts<R: Send>(
        &self,
        jobs: usize,
        every: u64,
        damaged_too: bool,
        f: impl Fn(&mut StreamReader<'_>) -> R + Sync,
        merge: impl Fn(R, R) -> R,
    ) -> (Vec<R>, usize) {
        let threads = rostrace_threads::threads(jobs);
        let (readers, _) = self.readers(Some(threads));
        let mut again = 0;
        // (file, part, its size, its reader)
        let mut items: Vec<(usize, usize, u64, StreamReader<'_>)> = Vec::new();
        // Whether a file is read in parts.
        let mut parted = Vec::new();
        for (i, mut r) in readers.into_iter().enumerate() {
            let size = r.bytes_total();
            let cuts = if size >= every.saturating_mul(2) { r.cuts(every, damaged_too) } else { Vec::new() };
            parted.push(!cuts.is_empty());
            let ends: Vec<u64> = cuts.iter().map(|c| c.1).chain([size]).collect();
            for (k, &(warm, start)) in cuts.iter().enumerate() {
                items.push((i, k + 1, ends[k + 1] - start, r.part(warm, start, ends[k + 1])));
            }
            if let Some(&(_, first_end)) = cuts.first() {
                r.set_limit(first_end);
            }
            items.push((i, 0, ends[0], r));
        }
        items.sort_by_key(|&(i, k, size, _)| (std::cmp::Reverse(size), i, k));
        // Each part's reader warms up on its thread; a reader is kept for what follows only
        // when its file has other parts (else it is dropped on the thread that made its buffers).
        let mut done = rostrace_threads::map_in_order(jobs, items, |(i, k, _, mut r)| {
            let carry = r.warm_up();
            let out = f(&mut r);
            (i, k, parted[i].then_some(r), carry, out)
        });
        done.sort_by_key(|(i, k, ..)| (*i, *k));
        let mut out: Vec<R> = Vec::new();
        let mut parts = done.into_iter().peekable();
        while let Some((i, _, prev, _, mut acc)) = parts.next() {
            // The file's other parts, in order (a file read in parts has each part's reader).
            let Some(mut prev) = prev else {
                out.push(acc);
                continue;
            };
            let mut stopped = false;
            while let Some((_, _, r, carry, res)) = parts.next_if(|p| p.0 == i) {
                let (false, Some(r)) = (stopped, r) else { continue };
                let end = r.limit();
                match prev.carry_at_limit() {
                    None => stopped = true,
                    Some(c) if Some(c) == carry => {
                        acc = merge(acc, res);
                        prev = r;
                    }
                    Some(_) => {
                        prev.extend(end);
                        acc = merge(acc, f(&mut prev));
                        again += 1;
                    }
                }
            }
            out.push(acc);
        }
        (out, again)
    }

    /// All events of all traces, merged in time order (ties: trace, then stream file order),
    /// decoded in this thread.
    pub fn events(&self) -> Events<'_, '_> {
        let (readers, _) = self.readers(None);
        Events::read_here(readers)
    }

    /// A reading of the events with options ([`Read`]): on several threads, of some traces, with
    /// two integers of each event's stream context; then [`Read::run`].
    pub fn read(&self) -> Read<'_> {
        Read { set: self, jobs: 1, how: How::Here, traces: None }
    }

    /// The events of the traces `traces` (see [`Read::traces`]).
    fn events_of(&self, traces: &[usize]) -> Events<'_, '_> {
        let (all, _) = self.readers(None);
        let mut ids = Vec::new();
        let mut readers = Vec::new();
        for (i, r) in all.into_iter().enumerate() {
            if traces.contains(&r.trace_index) {
                ids.push(i);
                readers.push(r);
            }
        }
        Events::placed(readers, ids)
    }

    /// The time of the first event that [`events`](Self::events) returns (after its errors):
    /// `Some(None)` when it has no time, `None` when the set has no event. Reads up to each
    /// stream file's first event.
    pub fn first_time(&self) -> Option<Option<i64>> {
        let (readers, _) = self.readers(None);
        let mut first: Option<(u128, Option<i64>)> = None;
        for (i, mut r) in readers.into_iter().enumerate() {
            loop {
                match r.advance() {
                    Ok(true) => {
                        let k = order_of(r.timestamp(), i, 0);
                        if first.is_none_or(|f| k < f.0) {
                            first = Some((k, r.timestamp()));
                        }
                        break;
                    }
                    Ok(false) => break,
                    Err(_) => {}
                }
            }
        }
        first.map(|f| f.1)
    }

    /// The time of the last event of the set (`None` when no event has one), on `jobs` threads
    /// (0: as many as there are cores). Reads each stream file's last packets: its events are in
    /// time order, so the last packets with events hold its latest one. (A file whose packets
    /// cannot be cut where they start, for want of a begin time, is read whole.)
    pub fn last_time(&self, jobs: usize) -> Option<i64> {
        self.tails(jobs).last
    }

    /// What the last packets of each stream file hold (see [`last_time`](Self::last_time)): the
    /// time of the set's last event, and how many events of each class they hold (per trace,
    /// by class index): a sample of the events of the recording's programs past their start,
    /// read in about 64 KiB a file.
    pub fn tails(&self, jobs: usize) -> Tails {
        let (readers, _) = self.readers(None);
        let tail = |r: StreamReader<'_>| {
            let size = r.bytes_total();
            let mut r = match r.cuts(LAST_PART, true).last() {
                Some(&(warm, start)) => {
                    let mut p = r.part(warm, start, size);
                    // (A part that cannot be reached as a whole reading would reach it: the file.)
                    if p.warm_up().is_none() {
                        r
                    } else {
                        p
                    }
                }
                None => r,
            };
            let (mut last, mut classes) = (None, Vec::<(usize, usize)>::new());
            loop {
                match r.advance() {
                    Ok(true) => {
                        last = last.max(r.timestamp());
                        if let Some(ev) = r.event() {
                            classes.push((ev.trace_index(), ev.class().index));
                        }
                    }
                    Ok(false) => break,
                    Err(_) => {}
                }
            }
            (last, classes)
        };
        let mut out = Tails { last: None, classes: self.traces.iter().map(|t| t.schema.per_class(|_| 0)).collect() };
        for (last, classes) in rostrace_threads::map_in_order(jobs, readers, tail) {
            out.last = out.last.max(last);
            for (t, c) in classes {
                if let Some(n) = out.classes.get_mut(t).and_then(|v| v.get_mut(c)) {
                    *n += 1;
                }
            }
        }
        out
    }

    /// The events decoded ahead on `jobs` threads (see [`Read::decode_ahead`]).
    fn with_events<R>(&self, jobs: usize, f: impl FnOnce(&mut Events<'_, '_>) -> R) -> R {
        let (readers, files) = self.readers(None);
        let workers = rostrace_threads::threads(jobs).saturating_sub(1).min(readers.len().saturating_sub(1));
        if workers == 0 {
            return f(&mut Events::read_here(readers));
        }
        let shared = crate::parallel::Shared::new(readers);
        std::thread::scope(|s| {
            for k in 1..=workers {
                rostrace_threads::spawn_off(s, k, || shared.work());
            }
            rostrace_threads::let_started_move();
            // The workers stop however `f` ends.
            struct Stop<'x, 'a>(&'x crate::parallel::Shared<'a>);
            impl Drop for Stop<'_, '_> {
                fn drop(&mut self) {
                    self.0.stop();
                }
            }
            let _stop = Stop(&shared);
            f(&mut Events::decoded_ahead(ParStreams::new(&shared, files)))
        })
    }

    /// The events read on another thread (see [`Read::piped`]).
    fn piped<R>(&self, jobs: usize, ints: Option<[&'static str; 2]>, f: impl FnOnce(&mut Events<'_, '_>) -> R) -> R {
        let (readers, files) = self.readers(None);
        if rostrace_threads::threads(jobs) < 2 {
            return f(&mut Events::read_here(readers));
        }
        let (full_tx, full_rx) = std::sync::mpsc::sync_channel(crate::parallel::PIPED_DEPTH);
        let (free_tx, free_rx) = std::sync::mpsc::channel();
        let n = files.len();
        std::thread::scope(|s| {
            let read = move || {
                // The readers, written at every event, in this thread's memory (see
                // `spawn_off`'s reasons, and `StreamReader::read_packet`'s).
                let mut mine = Vec::with_capacity(readers.len());
                mine.extend(readers);
                crate::parallel::pipe(&mut Events::read_here(mine), n, full_tx, free_rx, ints)
            };
            rostrace_threads::spawn_off(s, 1, read);
            rostrace_threads::let_started_move();
            f(&mut Events::piped(Piped::new(full_rx, free_tx, files)))
        })
    }
}

/// The events of a [`TraceSet`], merged in time order as [`TraceSet::events`] gives them (the
/// same events, errors and losses in the same order), read as asked:
///
/// ```no_run
/// # let (set, _) = rostrace_ctf::TraceSet::open(&["trace"]);
/// let n = set.read().jobs(0).decode_ahead().run(|events| {
///     let mut n = 0;
///     while let Some(Ok(_)) = events.next() {
///         n += 1;
///     }
///     n
/// });
/// # let _ = n;
/// ```
#[must_use = "a reading does nothing until `run`"]
pub struct Read<'s> {
    set: &'s TraceSet,
    jobs: usize,
    how: How,
    traces: Option<Vec<usize>>,
}

/// Where the events are read and decoded.
enum How {
    Here,
    Ahead,
    Piped(Option<[&'static str; 2]>),
}

impl Read<'_> {
    /// Threads (0: as many as there are cores; 1, the default: this one only).
    pub fn jobs(mut self, jobs: usize) -> Self {
        self.jobs = jobs;
        self
    }

    /// With several threads: the others decode ahead, this one merges. For a consumer that
    /// does little per event.
    pub fn decode_ahead(mut self) -> Self {
        self.how = How::Ahead;
        self
    }

    /// With several threads: another thread reads, decodes and merges, so that this one only
    /// takes the events, in batches small enough to stay in the cores' caches. For a consumer
    /// whose own work per event is about that of reading it (an analysis pass).
    /// [`Events::losses`] grows at the same steps as with one thread. A panic of the reading
    /// thread is passed on (its events are not ended early quietly).
    pub fn piped(mut self) -> Self {
        self.how = How::Piped(None);
        self
    }

    /// [`piped`](Self::piped), and the integer members `names` of each event's stream context
    /// read on the thread that reads, while the event is in its core's cache, and given with the
    /// event by [`Events::next_ints`]: what a taker reads of every event (a process id, a thread
    /// id), moved to the other thread.
    pub fn with_ints(mut self, names: [&'static str; 2]) -> Self {
        self.how = How::Piped(Some(names));
        self
    }

    /// Only the traces `traces` (indices in the set), read on this thread. Their errors and
    /// losses are not returned between the events but kept with their places in the merge of
    /// the whole set ([`Events::placed_errors`], [`Events::placed_losses`]), and each event's
    /// [`Events::order`] is its order in that merge: readers of disjoint parts of a set, on
    /// several threads, give results that can be put in the order of one reader of the set.
    pub fn traces(mut self, traces: &[usize]) -> Self {
        self.traces = Some(traces.to_vec());
        self
    }

    /// Runs `f` with the events.
    pub fn run<R>(self, f: impl FnOnce(&mut Events<'_, '_>) -> R) -> R {
        let set = self.set;
        if let Some(t) = &self.traces {
            return f(&mut set.events_of(t));
        }
        match self.how {
            How::Here => f(&mut set.events()),
            How::Ahead => set.with_events(self.jobs, f),
            How::Piped(ints) => set.piped(self.jobs, ints, f),
        }
    }
}

/// A clock's times before and after [`TraceSet::correct_clocks`] ([`TraceSet::clock_correction`]).
#[derive(Debug, Clone)]
pub struct ClockCorrection {
    from: Clock,
    to: Clock,
}

impl ClockCorrection {
    /// The time (ns) that a reader of the corrected clock reads for the clock value read as `ns`
    /// before the correction: exactly, for a clock of at most 1 GHz (each of its values a time
    /// of its own); within a nanosecond for a faster one, with a rate corrected (several of
    /// its values read as one time before).
    pub fn time(&self, ns: i64) -> i64 {
        self.to.to_ns(self.from.cycles_at(ns))
    }

    /// The duration on the corrected clock of `d`, a duration on the clock as recorded.
    pub fn duration(&self, d: i64) -> i64 {
        match self.from.freq == self.to.freq {
            true => d,
            false => (d as f64 * self.from.freq as f64 / self.to.freq as f64).round() as i64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_correction_moves_times_as_the_corrected_clock_reads_them() {
        for freq in [1_000_000_000, 999_000_999, 2_400_000_000] {
            let c = Clock {
                name: "monotonic".into(),
                description: None,
                uuid: None,
                freq,
                offset_s: 1_700_000_000,
                offset_cycles: 123_456,
                precision: 0,
                absolute: false,
                declared_at: 0,
            };
            for (offset, drift) in [(37_000_000, 0.0), (-2_500_000_000, 0.0), (5_000, 1e-3), (0, -50e-6)] {
                let to = c.corrected(offset, drift, 1_700_000_100_000_000_000);
                let k = ClockCorrection { from: c.clone(), to: to.clone() };
                for cycles in [0, 1, 999, 123_456_789_012, 86_400_000_000_000, 400_000_000_000_000] {
                    // A clock faster than 1 GHz has several values in a nanosecond: one of them.
                    let within = if freq > 1_000_000_000 { 1 } else { 0 };
                    let (got, want) = (k.time(c.to_ns(cycles)), to.to_ns(cycles));
                    assert!((got - want).abs() <= within, "{freq} Hz, {offset} ns, {drift}: {cycles}: {got} {want}");
                }
            }
        }
    }
}
