//! Following a recording while it is written: its traces are kept open and refreshed at each
//! look (new stream files, new processes, the packets written since indexed), and the standard
//! analysis runs over the last window of events; the packets before the window that declare
//! nothing are passed over without being read again, so a look reads about its window, not the
//! recording. At the end, [`Follower::whole`] analyses the finished recording, opened afresh.
//!
//! ```no_run
//! let mut f = rostrace_analysis::Follower::new("/path/to/session", std::time::Duration::from_secs(10));
//! if let Some(s) = f.window(None) {
//!     println!("{} events in the window", s.analysis.report.events);
//! }
//! // … later, once the recording is finished:
//! let whole = f.whole();
//! ```

use crate::skip::PacketIndex;
use crate::{Analysis, Bound, Options, Processor, Window};
use rostrace_ctf::TraceSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long after a message is published its take is waited for before it counts as settled
/// (at most a quarter of the window).
const SETTLE_NS: i64 = 1_000_000_000;

/// Follows the recording in a directory: one analysis per look.
pub struct Follower {
    dir: PathBuf,
    window_ns: i64,
    /// The recording's traces, kept open and refreshed at each look: only the packets written
    /// since are indexed.
    set: Option<TraceSet>,
    /// The packets read before, and which hold initialization events: those before the window
    /// that hold none are passed over.
    packets: PacketIndex,
    /// The end of the last look's events, and when it was read: the next window ends about as
    /// much later as the time since.
    last_end: Option<(i64, Instant)>,
    /// The start of the last window.
    window_begin: Option<i64>,
}

/// One look at a followed recording.
pub struct Sample {
    /// The analysis of the window (of the whole recording for [`Follower::whole`]).
    pub analysis: Analysis,
    /// Whether the analysis covers the recording from its start (the first look, and the whole).
    pub whole: bool,
    /// Packet headers read for this look: those of the packets written since the last one and of
    /// its window (and those holding initialization events), not the whole recording's.
    pub packets_read: u64,
    /// Entries of the packet index of the traces kept open (0 for [`Follower::whole`], which
    /// opens the recording afresh): one per run of packets passed over and per packet after.
    pub index_entries: usize,
}

impl Follower {
    /// Follows the recording in `dir` (a session directory, or any directory of traces), each
    /// look analysing the last `window` of its events.
    pub fn new(dir: impl Into<PathBuf>, window: Duration) -> Follower {
        Follower {
            dir: dir.into(),
            window_ns: i64::try_from(window.as_nanos()).unwrap_or(i64::MAX),
            set: None,
            packets: PacketIndex::new(),
            last_end: None,
            window_begin: None,
        }
    }

    /// The next look: the window ending at the last event read (the recording so far, the first
    /// time), beginning no later than `keep_from` when given (what an earlier look left to count).
    /// `None` while no trace is there yet (the first process has not written its trace).
    pub fn window(&mut self, keep_from: Option<i64>) -> Option<Sample> {
        let window = match self.last_end {
            Some((end, at)) => {
                let since = i64::try_from(at.elapsed().as_nanos()).unwrap_or(i64::MAX);
                let mut begin = end.saturating_add(since).saturating_sub(self.window_ns);
                if let Some(k) = keep_from {
                    begin = begin.min(k);
                }
                // Never back (after a look that took long, the estimate can be): what the last
                // window passed over is joined in the index as passed over for good. `keep_from`
                // is never before the last window's start, so this keeps it in.
                begin = begin.max(self.window_begin.unwrap_or(i64::MIN));
                self.window_begin = Some(begin);
                Window { begin: Some(Bound::Absolute(begin)), end: None }
            }
            None => Window::default(),
        };
        let sample = self.analyze(window, false)?;
        // The window runs on to the last event read; its start is the last end seen moved on by
        // the time since, so that it stays about as long as asked without a pass over the files
        // to find their last event first.
        if let Some(e) = sample.analysis.report.end_ns {
            self.last_end = Some((e, Instant::now()));
        }
        Some(sample)
    }

    /// The whole recording, opened afresh (its counts are those of one analysis of it); `None`
    /// when it has no trace.
    pub fn whole(&mut self) -> Option<Sample> {
        self.analyze(Window::default(), true)
    }

    /// Writes what the last look at a window read as a recording of its own in `dest` (a new
    /// directory): each trace's metadata and the packets of the window, with those before it
    /// that declare what the window uses (initialization events), copied byte for byte. So
    /// the moment a look found wrong is kept, not the hour around it, and it analyses alone as
    /// the look did. Packets are whole: the copy may begin a little before the window.
    pub fn save_window(&self, dest: &std::path::Path) -> Result<rostrace_ctf::Extracted, String> {
        let set = self.set.as_ref().ok_or_else(|| "nothing recorded yet".to_string())?;
        if dest.exists() {
            return Err(format!("{} exists already", dest.display()));
        }
        let skip = set.packet_filter();
        let keep = move |path: &std::path::Path, offset: u64, end: Option<i64>| {
            skip.as_ref().is_none_or(|f| !f(path, offset, end))
        };
        set.extract(&self.dir, dest, &keep).map_err(|e| format!("{}: {e}", dest.display()))
    }

    /// Events read so far by the looks at windows (each packet counted once).
    pub fn events_read(&self) -> u64 {
        self.packets.events()
    }

    /// Where what analysis `a` (a look's) says is settled, counting on from `from`: before the
    /// start of any run still running at the last event read and a settling time before that
    /// event (so that the messages published before it have been taken), but no further back
    /// than half a window (a run whose end was lost holds it back no longer); never before `from`.
    pub fn settled(&self, a: &Analysis, from: i64) -> i64 {
        let Some(end) = a.report.end_ns else { return from };
        let settle = (self.window_ns / 4).min(SETTLE_NS);
        let running = a.runs.iter().filter(|r| r.run.end().is_none()).map(|r| r.run.start).min();
        (end - settle).min(running.unwrap_or(i64::MAX)).max(end - self.window_ns / 2).max(from)
    }

    /// The analysis of `window`; of the whole recording, opened afresh, when `afresh`.
    fn analyze(&mut self, window: Window, afresh: bool) -> Option<Sample> {
        // Before the first process writes its trace there is nothing to open: not an error.
        // The others refresh the set kept open (its errors are those of traces being written:
        // the analysis reports the rest).
        if afresh || self.set.is_none() {
            self.set = Some(TraceSet::open(&[&self.dir]).0);
        }
        let set = self.set.as_mut()?;
        if !afresh {
            let _ = set.refresh();
        }
        if set.traces.is_empty() {
            return None;
        }
        // Each packet is read whole once; later, those before the window are passed over when
        // they declare nothing (without reading them again: the set indexed them).
        match window.begin {
            Some(Bound::Absolute(begin)) => {
                self.packets.learn(set, 1);
                self.packets.skip_before(set, begin);
                // The window only moves on: what is passed over now always will be, so the
                // index keeps one entry for it, not one per packet.
                set.join_passed_over();
            }
            _ => set.clear_packet_filter(),
        }
        let options = Options { window, nodes: None, topics: None, longest_paths: false, ..Options::default() };
        let mut p = Processor::standard();
        // One thread: the followed processes keep the other cores.
        p.set_jobs(1);
        let before = set.packets_read();
        let analysis = p.run(set, &options, |_, _| {});
        Some(Sample {
            whole: window.is_all(),
            packets_read: set.packets_read() - before,
            index_entries: set.index_entries(),
            analysis,
        })
    }
}
