//! `rostrace live`: follows a recording while it is written. The session's traces are kept open
//! and refreshed every interval (new stream files, new processes, and the packets written since
//! indexed) and the standard analysis runs over the last `--window` of events; a snapshot of
//! callbacks and topics is printed and, with `--jsonl`, written as one JSON line. At the end (the command ended, or Ctrl-C) one analysis of the whole
//! recording gives the final snapshot, whose counts are those of `rostrace analyze`.

mod tui;

use crate::out::fail;
use crate::prometheus::Totals;
use rostrace_analysis::check::{Expectations, Metric, Outcome, Status};
use rostrace_analysis::link::View;
use rostrace_analysis::skip::PacketIndex;
use rostrace_analysis::{Analysis, Bound, Options, Processor, Report, Window};
use rostrace_ctf::TraceSet;
use rostrace_session::{Message, Observer, Recording};
use serde::Serialize;
use std::ffi::OsString;
use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitCode, ExitStatus};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long after a message is published its take is waited for before the counters count
/// it (at most a quarter of the window).
const SETTLE_NS: i64 = 1_000_000_000;

/// Arguments of `rostrace live`.
#[derive(clap::Args)]
pub struct Args {
    /// Session directory to follow (one being recorded by `rostrace record`, or `create` + `start`).
    #[arg(value_name = "SESSION_DIR", required_unless_present = "command", conflicts_with = "command")]
    dir: Option<PathBuf>,
    /// Seconds of events each snapshot analyzes, ending at the last event read.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    window: f64,
    /// Seconds between snapshots.
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    interval: f64,
    /// Alert when a topic's publish → callback latency (p99) is over this many milliseconds.
    #[arg(long, value_name = "MS")]
    max_latency: Option<f64>,
    /// Alert on each expectation of FILE (the YAML `rostrace check --expect` reads) that the
    /// window fails; a `runs` limit is judged on the whole recording, at the end.
    #[arg(long, value_name = "FILE")]
    expect: Option<PathBuf>,
    /// Write each snapshot as one JSON line to FILE (`-` for standard output); the last line is
    /// the whole recording's (`"final": true`).
    #[arg(long, value_name = "FILE")]
    jsonl: Option<PathBuf>,
    /// Print text snapshots, not the terminal UI (the default when standard output is not a
    /// terminal).
    #[arg(long)]
    plain: bool,
    /// Stop following a session directory after this many seconds (default: Ctrl-C).
    #[arg(long, value_name = "SECONDS")]
    duration: Option<f64>,
    #[command(flatten)]
    prometheus: crate::prometheus::Options,
    #[command(flatten)]
    record: crate::record::RecordOptions,
    /// Command to record and follow, as `rostrace record -- COMMAND` does.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// One callback in a snapshot.
#[derive(Serialize)]
struct CallbackRow {
    node: Arc<str>,
    procname: Arc<str>,
    vpid: i64,
    kind: &'static str,
    symbol: Arc<str>,
    topic: Option<Arc<str>>,
    timer_period_ns: Option<i64>,
    count: u64,
    rate_hz: f64,
    p50_ns: i64,
    p99_ns: i64,
    max_ns: i64,
    /// p99 of the time between starts minus the timer period (timers run twice or more).
    jitter_p99_ns: Option<i64>,
}

/// One topic in a snapshot.
#[derive(Serialize)]
struct TopicRow {
    name: Arc<str>,
    publishers: Vec<Arc<str>>,
    subscribers: Vec<Arc<str>>,
    publishes: u64,
    takes: u64,
    rate_hz: f64,
    /// None when no message of the topic was matched in the window.
    latency_p50_ns: Option<i64>,
    latency_p99_ns: Option<i64>,
    unmatched: u64,
    dropped: Option<u64>,
}

/// One publisher → subscriber pair of a topic in a snapshot: the analysis's messages matched
/// between the two nodes. Unmatched takes and drops are the topic's: a take not matched has no
/// publisher, and drops are counted per subscription of the topic.
#[derive(Serialize)]
struct PairRow {
    topic: Arc<str>,
    publisher: Arc<str>,
    publisher_vpid: i64,
    subscriber: Arc<str>,
    subscriber_vpid: i64,
    /// Messages matched.
    count: u64,
    rate_hz: f64,
    latency_p50_ns: i64,
    latency_p99_ns: i64,
}

/// Callback time per thread in a snapshot, and its time on CPU when the trace has kernel events.
#[derive(Serialize)]
struct ThreadRow {
    name: Arc<str>,
    vpid: i64,
    vtid: Option<i64>,
    runs: u64,
    /// Callback time over the window.
    busy: f64,
    /// Time on CPU over the window (kernel `sched_switch`), when recorded.
    cpu: Option<f64>,
}

/// What one interval (or the final analysis) shows.
#[derive(Serialize)]
struct Snapshot {
    /// Whether this is the whole recording's analysis, made at the end.
    #[serde(rename = "final")]
    is_final: bool,
    /// The window analyzed (ns since the epoch), from the report.
    window_ns: Option<(i64, i64)>,
    events: u64,
    discarded_events: u64,
    processes: Vec<String>,
    callbacks: Vec<CallbackRow>,
    topics: Vec<TopicRow>,
    pairs: Vec<PairRow>,
    threads: Vec<ThreadRow>,
    /// Whether the trace has kernel scheduling events (the threads' CPU shares).
    kernel: bool,
    alerts: Vec<String>,
    /// The expectations of `--expect` checked against the window (the whole recording at the end).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    expectations: Vec<Outcome>,
    /// Read errors other than a stream file's last packet still being written.
    read_errors: Vec<String>,
    /// Stream files whose last packet was still being written (read up to it).
    partial_packets: usize,
    /// Packet headers read for this snapshot: those of the packets written since the last one
    /// and of its window (and those holding initialization events), not the whole recording's.
    packets_read: u64,
    /// Entries of the packet index of the traces kept open (0 for the final snapshot, which
    /// opens the recording afresh): one per run of packets passed over and per packet after.
    index_entries: usize,
}

/// What reading the traces for a snapshot took.
#[derive(Clone, Copy, Default)]
struct Reading {
    packets_read: u64,
    index_entries: usize,
}

fn snapshot(
    r: &Report,
    is_final: bool,
    max_latency_ns: Option<i64>,
    expectations: Vec<Outcome>,
    reading: Reading,
) -> Snapshot {
    // The events' span inside the window: the window is open at its end (the last event read).
    let span = r.begin_ns.zip(r.end_ns).map(|(b, e)| match r.window_ns {
        Some((wb, we)) => (wb.max(b), we.min(e)),
        None => (b, e),
    });
    let secs = span.map_or(0.0, |(b, e)| (e - b).max(0) as f64 / 1e9);
    let rate = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    let mut alerts = Vec::new();
    let callbacks: Vec<CallbackRow> = r
        .callbacks
        .iter()
        .map(|c| {
            if let Some(p) = c.timer_period_ns.filter(|&p| p > 0 && c.duration_ns.count > 0 && c.duration_ns.max > p) {
                alerts.push(format!(
                    "{} {}: a run took {:.3} ms, longer than its timer period {:.3} ms",
                    c.node,
                    c.symbol,
                    c.duration_ns.max as f64 / 1e6,
                    p as f64 / 1e6
                ));
            }
            CallbackRow {
                node: c.node.clone(),
                procname: c.procname.clone(),
                vpid: c.vpid,
                kind: c.kind,
                symbol: c.symbol.clone(),
                topic: c.topic.clone(),
                timer_period_ns: c.timer_period_ns,
                count: c.count,
                rate_hz: rate(c.count),
                p50_ns: c.duration_ns.p50,
                p99_ns: c.duration_ns.p99,
                max_ns: c.duration_ns.max,
                jitter_p99_ns: c.jitter_ns.as_ref().filter(|j| j.count > 0).map(|j| j.p99),
            }
        })
        .collect();
    let topics: Vec<TopicRow> = r
        .topics
        .iter()
        .map(|t| {
            let l = &t.pub_to_callback_ns;
            if let Some(m) = max_latency_ns.filter(|&m| l.count > 0 && l.p99 > m) {
                alerts.push(format!(
                    "{}: latency p99 {:.3} ms over --max-latency {:.3} ms",
                    t.name,
                    l.p99 as f64 / 1e6,
                    m as f64 / 1e6
                ));
            }
            TopicRow {
                name: t.name.clone(),
                publishers: t.publishers.clone(),
                subscribers: t.subscribers.clone(),
                publishes: t.publishes,
                takes: t.takes,
                rate_hz: rate(t.publishes),
                latency_p50_ns: (l.count > 0).then_some(l.p50),
                latency_p99_ns: (l.count > 0).then_some(l.p99),
                unmatched: t.unmatched,
                dropped: t.dropped,
            }
        })
        .collect();
    if r.discarded_events > 0 {
        alerts.push(format!("{} events discarded by the tracer (buffers full)", r.discarded_events));
    }
    for o in expectations.iter().filter(|o| o.status == Status::Fail) {
        let subject = crate::format::name(&o.subject);
        alerts.push(format!("expectation line {}: {subject}: {} {}", o.line, o.metric, o.verdict()));
    }
    // A stream file whose last packet is still being written is expected while following a
    // recording: not an error of the trace.
    let (partial, errors): (Vec<_>, Vec<_>) = r.read_errors.iter().partition(|e| e.truncated);
    Snapshot {
        is_final,
        window_ns: span,
        events: r.events,
        discarded_events: r.discarded_events,
        processes: r.processes.iter().map(|p| p.procname.clone()).collect(),
        callbacks,
        topics,
        pairs: pairs(r, &rate),
        threads: threads(r, secs),
        kernel: r.system.cpu_time.is_some(),
        alerts,
        expectations,
        read_errors: errors.into_iter().map(ToString::to_string).collect(),
        partial_packets: partial.len(),
        packets_read: reading.packets_read,
        index_entries: reading.index_entries,
    }
}

fn pairs(r: &Report, rate: &dyn Fn(u64) -> f64) -> Vec<PairRow> {
    let of = |t: &rostrace_analysis::TopicReport| -> Vec<PairRow> {
        t.pairs
            .iter()
            .map(|p| PairRow {
                topic: t.name.clone(),
                publisher: p.publisher_node.clone(),
                publisher_vpid: p.publisher_vpid,
                subscriber: p.subscription_node.clone(),
                subscriber_vpid: p.subscription_vpid,
                count: p.count,
                rate_hz: rate(p.count),
                latency_p50_ns: p.pub_to_callback_ns.p50,
                latency_p99_ns: p.pub_to_callback_ns.p99,
            })
            .collect()
    };
    r.topics.iter().flat_map(of).collect()
}

fn threads(r: &Report, secs: f64) -> Vec<ThreadRow> {
    let share = |ns: i64| if secs > 0.0 { ns as f64 / 1e9 / secs } else { 0.0 };
    let cpu = r.system.cpu_time.as_ref();
    r.per_thread
        .iter()
        .map(|t| ThreadRow {
            name: t.name.clone(),
            vpid: t.vpid,
            vtid: t.vtid,
            runs: t.runs,
            busy: share(t.callback_ns),
            cpu: cpu.map(|c| share(c.threads.iter().filter(|k| Some(k.tid) == t.vtid).map(|k| k.cpu_ns).sum())),
        })
        .collect()
}

/// Where `--jsonl` writes.
enum Jsonl {
    Stdout,
    File(std::io::BufWriter<std::fs::File>),
}

/// Follows the session in `dir`: its analyses and their outputs.
struct Follower {
    dir: PathBuf,
    window_ns: i64,
    max_latency_ns: Option<i64>,
    expect: Option<Expectations>,
    jsonl: Option<Jsonl>,
    text: bool,
    /// Standard output can no longer be written (closed by its reader, or failing): nothing
    /// more is written there, and a followed directory is followed no longer.
    stdout_gone: bool,
    prometheus: Option<crate::prometheus::Exporter>,
    /// The session's traces, kept open and refreshed at each interval: only the packets
    /// written since are indexed.
    set: Option<TraceSet>,
    /// The packets read before, and which hold initialization events: those before the window
    /// that hold none are passed over.
    packets: PacketIndex,
    /// What the last analysis read.
    reading: Reading,
    /// The counters served with `--prometheus`, added up slice of time by slice of time.
    totals: Totals,
    /// Where the slices added to `totals` end: what started (or was published) before it is
    /// counted.
    cut: Option<i64>,
    /// The terminal UI, which shows the snapshots instead of the text until it is dropped.
    ui: Option<tui::Tui>,
    /// The end of the last snapshot's events, and when it was read: the next window ends
    /// about as much later as the time since.
    last_end: Option<(i64, Instant)>,
    /// The start of the last window.
    window_begin: Option<i64>,
    error: Option<String>,
}

impl Follower {
    /// The analysis of `window`; of the whole recording, opened afresh, when `is_final`.
    fn analyze(&mut self, window: Window, is_final: bool) -> Option<Analysis> {
        // Before the first process writes its trace there is nothing to open: not an error.
        // The final analysis opens the finished recording afresh; the others refresh the set
        // kept open (its errors are those of traces being written: the analysis reports the rest).
        if is_final || self.set.is_none() {
            self.set = Some(TraceSet::open(&[&self.dir]).0);
        }
        let set = self.set.as_mut()?;
        if !is_final {
            let _ = set.refresh();
        }
        if set.traces.is_empty() {
            return None;
        }
        // Each packet is read whole once; later, those before the window are passed over when
        // they declare nothing (without reading them again: the set indexed them), so an
        // interval reads about its window, not the recording.
        match window.begin {
            Some(Bound::Absolute(begin)) => {
                self.packets.learn(set);
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
        self.reading = Reading { packets_read: set.packets_read() - before, index_entries: set.index_entries() };
        Some(analysis)
    }

    /// Where the next slice of the counters ends, after one from `from`: before the start of
    /// any run still running at the last event read and a settling time before that event (so
    /// that the messages published before it have been taken), but no further back than half a
    /// window (a run whose end was lost holds the counters back no longer).
    fn next_cut(&self, a: &Analysis, from: i64) -> i64 {
        let Some(end) = a.report.end_ns else { return from };
        let settle = (self.window_ns / 4).min(SETTLE_NS);
        let running = a.runs.iter().filter(|(r, _)| r.end().is_none()).map(|(r, _)| r.start).min();
        (end - settle).min(running.unwrap_or(i64::MAX)).max(end - self.window_ns / 2).max(from)
    }

    /// The counters after analysis `a` (of the whole recording when `all`): those of the next
    /// slice of time added; the whole recording's at the end.
    fn count(&mut self, a: &Analysis, all: bool, is_final: bool) {
        if is_final {
            self.totals = Totals::of(&a.report);
            return;
        }
        let from = self.cut.unwrap_or(i64::MIN);
        let to = self.next_cut(a, from);
        self.totals.add(&rostrace_analysis::report::slice(&View::from(a), from, to));
        self.cut = Some(to);
        // Events read so far (the discarded ones are counted by every analysis, whatever its window).
        self.totals.events = if all { a.report.events } else { self.packets.events() };
        self.totals.discarded = a.report.discarded_events;
    }

    /// The expectations of `--expect` checked against `a`. A window is judged on what it has:
    /// a minimum of runs is meant for the whole recording, so it waits for the final analysis.
    fn check(&self, a: &Analysis, is_final: bool) -> Vec<Outcome> {
        let Some(all) = &self.expect else { return Vec::new() };
        let items = all.items.iter().filter(|e| is_final || e.metric != Metric::Runs).cloned().collect();
        // One thread, as the analysis.
        rostrace_analysis::check::evaluate(a, &Expectations { items }, 1)
    }

    /// One interval: the window ending at the last event, or the whole recording when `is_final`.
    fn tick(&mut self, is_final: bool) {
        let window = match (is_final, self.last_end) {
            (false, Some((end, at))) => {
                let since = at.elapsed().as_nanos() as i64;
                let mut begin = end + since - self.window_ns;
                // The counters' next slice begins at the last cut: its runtime events are read.
                if let Some(cut) = self.cut.filter(|_| self.prometheus.is_some()) {
                    begin = begin.min(cut);
                }
                // Never back (after an interval that took long, the estimate can be): what the
                // last window passed over is joined in the index as passed over for good. The
                // cut is never before the last window's start, so this keeps it in.
                begin = begin.max(self.window_begin.unwrap_or(i64::MIN));
                self.window_begin = Some(begin);
                Window { begin: Some(Bound::Absolute(begin)), end: None }
            }
            _ => Window::default(),
        };
        let all = window.is_all();
        let Some(analysis) = self.analyze(window, is_final) else { return };
        let report = &analysis.report;
        let expectations = self.check(&analysis, is_final);
        let snap = snapshot(report, is_final, self.max_latency_ns, expectations, self.reading);
        if self.prometheus.is_some() {
            self.count(&analysis, all, is_final);
            if let Some(p) = &self.prometheus {
                p.update(report, &self.totals, snap.window_ns, &snap.expectations);
            }
        }
        // The window analyzed runs on to the last event read; its start is the last end seen
        // moved on by the time since, so that it stays about `--window` long without a pass
        // over the files to find their last event first.
        if let Some(e) = report.end_ns {
            self.last_end = Some((e, Instant::now()));
        }
        if let Some(w) = self.jsonl.as_mut() {
            let mut line = serde_json::to_string(&snap).unwrap_or_default();
            line.push('\n');
            match w {
                Jsonl::Stdout if !self.stdout_gone => {
                    let r = crate::out::stdout().write_all(line.as_bytes());
                    self.stdout_written(r);
                }
                Jsonl::Stdout => {}
                Jsonl::File(f) => {
                    if let Err(e) = f.write_all(line.as_bytes()).and_then(|_| f.flush()) {
                        self.error.get_or_insert(format!("--jsonl: {e}"));
                    }
                }
            }
        }
        match self.ui.as_mut() {
            Some(ui) => ui.show(snap),
            None if self.text && !self.stdout_gone => {
                let r = print_text(&snap);
                self.stdout_written(r);
            }
            None => {}
        }
    }

    /// After a write to standard output: a closed pipe ends the output quietly, as for every
    /// command; another error ends it and is the run's error.
    fn stdout_written(&mut self, r: std::io::Result<()>) {
        if let Err(e) = r {
            self.stdout_gone = true;
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                self.error.get_or_insert(e.to_string());
            }
        }
    }

    /// Snapshots every `interval` until `done` says so, or standard output is gone.
    fn follow(&mut self, interval: Duration, mut done: impl FnMut() -> bool) {
        let mut next = Instant::now();
        loop {
            if done() || self.stdout_gone || self.ui.as_ref().is_some_and(tui::Tui::done) {
                break;
            }
            if Instant::now() >= next {
                self.tick(false);
                next = Instant::now() + interval;
            }
            match self.ui.as_mut() {
                Some(ui) => ui.input(Duration::from_millis(50)),
                None => std::thread::sleep(Duration::from_millis(50)),
            }
        }
        // The final snapshot and the recording's messages go to the restored terminal.
        self.ui = None;
    }
}

impl Snapshot {
    /// What the snapshot is of: the window or the whole recording, its events and processes.
    fn summary(&self) -> String {
        let span = self.window_ns.map_or(0.0, |(b, e)| (e - b) as f64 / 1e9);
        format!(
            "{} {:.1} s, {}, {}, {} discarded",
            if self.is_final { "whole recording" } else { "window" },
            span,
            crate::text::count(self.events, "event"),
            crate::text::count(self.processes.len() as u64, "process"),
            self.discarded_events
        )
    }
}

/// A latency in ms with three decimals, `-` when there is none.
fn ms(v: Option<i64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{:.3}", v as f64 / 1e6))
}

/// The snapshot as lines of text, its names escaped (a trace sends no escape sequence to the
/// terminal); an error is standard output's.
fn print_text(s: &Snapshot) -> std::io::Result<()> {
    use crate::format::name as esc;
    let mut o = format!("-- {}\n", s.summary());
    for c in &s.callbacks {
        o.push_str(&format!(
            "callback {} {} {:.1}/s p50 {:.3} ms p99 {:.3} ms max {:.3} ms\n",
            esc(&c.node),
            esc(c.topic.as_deref().unwrap_or(c.kind)),
            c.rate_hz,
            c.p50_ns as f64 / 1e6,
            c.p99_ns as f64 / 1e6,
            c.max_ns as f64 / 1e6
        ));
    }
    for t in &s.topics {
        o.push_str(&format!(
            "topic {} {:.1}/s latency p50 {} ms p99 {} ms unmatched {}\n",
            esc(&t.name),
            t.rate_hz,
            ms(t.latency_p50_ns),
            ms(t.latency_p99_ns),
            t.unmatched
        ));
    }
    for p in &s.pairs {
        o.push_str(&format!(
            "pair {} {} -> {} {:.1}/s latency p50 {:.3} ms p99 {:.3} ms\n",
            esc(&p.topic),
            esc(&p.publisher),
            esc(&p.subscriber),
            p.rate_hz,
            p.latency_p50_ns as f64 / 1e6,
            p.latency_p99_ns as f64 / 1e6
        ));
    }
    for a in &s.alerts {
        o.push_str(&format!("alert {}\n", esc(a)));
    }
    crate::out::out!("{o}")
}

/// The observer of a command recorded by `live`: the follower runs while it waits.
struct Live<'a> {
    follower: Option<Follower>,
    make: &'a dyn Fn(&Path) -> Result<Follower, String>,
    interval: Duration,
    error: Option<String>,
}

impl Observer for Live<'_> {
    fn say(&mut self, m: Message) {
        crate::text::say([m]);
    }
    fn spawning(&mut self) {
        // As `record`: Ctrl-C reaches the command (same process group), SIGTERM, SIGHUP and
        // SIGQUIT are passed on to it, each further one stops it harder; the recording is
        // finished when it ends.
        crate::signals::catch_stop_signals();
    }
    fn started(&mut self, rec: &Recording) {
        match (self.make)(rec.dir()) {
            Ok(f) => self.follower = Some(f),
            Err(e) => self.error = Some(e),
        }
    }
    fn wait(&mut self, child: &mut Child) -> std::io::Result<ExitStatus> {
        let mut passing = rostrace_session::Passing::new(child);
        let mut status = None;
        let mut err = None;
        let mut said = Vec::new();
        let mut done = || {
            match child.try_wait() {
                Ok(Some(s)) => status = Some(s),
                Ok(None) => passing.pass(crate::signals::received(), &mut |m| said.push(m)),
                Err(e) => err = Some(e),
            }
            status.is_some() || err.is_some()
        };
        if let Some(f) = self.follower.as_mut() {
            f.follow(self.interval, &mut done);
        }
        // The terminal UI quit (`q` sent Ctrl-C to the command), or nothing to follow: the
        // command is waited for, signals still passed on.
        while !done() {
            std::thread::sleep(Duration::from_millis(10));
        }
        // Said once the screen is given back (the terminal UI holds it while following).
        crate::text::say(said);
        match (status, err) {
            (Some(s), _) => Ok(s),
            (None, Some(e)) => Err(e),
            (None, None) => child.wait(),
        }
    }
}

fn seconds(name: &str, v: f64) -> Result<Duration, String> {
    if v.is_finite() && v > 0.0 && v <= 86400.0 {
        Ok(Duration::from_secs_f64(v))
    } else {
        Err(format!("invalid {name} {v}: give seconds, above 0"))
    }
}

/// Runs the command.
pub fn run(a: Args) -> std::io::Result<ExitCode> {
    let window = match seconds("--window", a.window) {
        Ok(w) => w,
        Err(e) => return fail(e),
    };
    let interval = match seconds("--interval", a.interval) {
        Ok(w) => w,
        Err(e) => return fail(e),
    };
    let max_latency_ns = a.max_latency.map(|m| (m * 1e6) as i64);
    // A bad expectation file is a usage error, found before anything starts.
    let expect = match a.expect.as_deref().map(crate::check::read_expectations).transpose() {
        Ok(x) => x,
        Err(e) => {
            crate::out::errln!("rostrace: error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let text = a.jsonl.as_deref().is_none_or(|p| p.as_os_str() != "-");
    let ui = text && !a.plain && std::io::stdout().is_terminal();
    let stops_command = a.dir.is_none();
    let jsonl_path = a.jsonl.clone();
    let prometheus = match crate::prometheus::serve(&a.prometheus) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let make = |dir: &Path| -> Result<Follower, String> {
        let jsonl = match jsonl_path.as_deref() {
            None => None,
            Some(p) if p.as_os_str() == "-" => Some(Jsonl::Stdout),
            Some(p) => match std::fs::File::create(p) {
                Ok(f) => Some(Jsonl::File(std::io::BufWriter::new(f))),
                Err(e) => return Err(format!("--jsonl {}: {e}", p.display())),
            },
        };
        let ui = if ui {
            Some(tui::Tui::start(stops_command).map_err(|e| format!("terminal UI: {e} (--plain for text)"))?)
        } else {
            None
        };
        Ok(Follower {
            dir: dir.to_path_buf(),
            window_ns: window.as_nanos() as i64,
            max_latency_ns,
            expect: expect.clone(),
            jsonl,
            text,
            stdout_gone: false,
            prometheus: prometheus.clone(),
            set: None,
            packets: PacketIndex::new(),
            reading: Reading::default(),
            totals: Totals::default(),
            cut: None,
            ui,
            last_end: None,
            window_begin: None,
            error: None,
        })
    };
    if let Some(dir) = &a.dir {
        if !dir.is_dir() {
            return fail(format!("{}: not a session directory", dir.display()));
        }
        let mut f = match make(dir) {
            Ok(f) => f,
            Err(e) => return fail(e),
        };
        let until = match a.duration.map(|d| seconds("--duration", d)).transpose() {
            Ok(d) => d.map(|d| Instant::now() + d),
            Err(e) => return fail(e),
        };
        crate::signals::catch_stop_signals();
        let mut ended = false;
        f.follow(interval, || {
            ended = ended || stopped(dir);
            ended || crate::signals::stopping() || until.is_some_and(|u| Instant::now() >= u)
        });
        f.tick(true);
        if ended {
            crate::out::errln!("rostrace: the recording in {} ended (its session was stopped)", dir.display());
        }
        return finish(f.error);
    }
    let lib = match crate::record::find_library() {
        Ok(l) => l,
        Err(e) => return fail(e),
    };
    let mut live = Live { follower: None, make: &make, interval, error: None };
    let mut options = a.record.to_options();
    if options.backend == rostrace_session::Backend::Lttng && options.flush_interval.is_none() {
        // LTTng writes a sub-buffer out when it is full: a quiet process's events would reach
        // the files (and the screen) only at the end.
        options.flush_interval = Some(interval / 4);
    }
    let r = rostrace_session::record(&options, None, &a.command, &lib, None, &mut live);
    let recorded = match r {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    crate::out::errln!("rostrace: recorded into {}", recorded.dir.display());
    // The recording is finished (every process closed its trace): the whole of it, once.
    let mut error = live.error.take();
    if let Some(mut f) = live.follower.take() {
        f.tick(true);
        error = error.or(f.error);
    }
    if let Some(e) = error {
        return fail(e);
    }
    Ok(match recorded.status {
        Some(s) => ExitCode::from(rostrace_session::exit_code_of(s)),
        None => ExitCode::from(1),
    })
}

/// Whether the session in `dir` was stopped (`rostrace stop`, or the end of `record`): its
/// control file says so. A directory without one (a copied recording) never ends by itself.
fn stopped(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join(tracetools::tracer::CONTROL_FILE))
        .is_ok_and(|s| s.split_whitespace().next() == Some("stopped"))
}

fn finish(error: Option<String>) -> std::io::Result<ExitCode> {
    match error {
        Some(e) => fail(e),
        None => Ok(ExitCode::SUCCESS),
    }
}
