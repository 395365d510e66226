//! `rostrace live`: follows a recording while it is written. The session's traces are kept open
//! and refreshed every interval (new stream files, new processes, and the packets written since
//! indexed) and the standard analysis runs over the last `--window` of events; a snapshot of
//! callbacks and topics is printed and, with `--jsonl`, written as one JSON line. At the end (the command ended, or Ctrl-C) one analysis of the whole
//! recording gives the final snapshot, whose counts are those of `rostrace analyze`.

mod snapshot;
mod tui;

use crate::out::fail;
use crate::prometheus::Totals;
use rostrace_analysis::check::{Expectations, Metric, Outcome};
use rostrace_analysis::Analysis;
use rostrace_analysis::View;
use rostrace_session::{Message, Observer, Recording};
use snapshot::{print_text, snapshot, Reading};
use std::ffi::OsString;
use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitCode, ExitStatus};
use std::time::{Duration, Instant};

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
    /// When an expectation of --expect fails in a window, write that window as a recording of
    /// its own below DIR (`<time>-<expectation>/`: the window's packets and the initialization
    /// events, with the window's analysis in analysis.json and the outcomes in
    /// expectations.json): the moment before the failure, not the whole recording. At most one
    /// per window length, and --max-snapshots in all.
    #[arg(long, value_name = "DIR", requires = "expect")]
    snapshot_on_fail: Option<PathBuf>,
    /// The most snapshots --snapshot-on-fail writes.
    #[arg(long, value_name = "N", default_value_t = 10, requires = "snapshot_on_fail")]
    max_snapshots: usize,
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

/// Where `--jsonl` writes.
enum Jsonl {
    Stdout,
    File(std::io::BufWriter<std::fs::File>),
}

/// Follows the session in `dir`: its analyses (the library's [`Follower`]) and their outputs.
struct Follower {
    follower: rostrace_analysis::Follower,
    max_latency_ns: Option<i64>,
    expect: Option<Expectations>,
    jsonl: Option<Jsonl>,
    text: bool,
    /// Standard output can no longer be written (closed by its reader, or failing): nothing
    /// more is written there, and a followed directory is followed no longer.
    stdout_gone: bool,
    prometheus: Option<crate::prometheus::Exporter>,
    /// The counters served with `--prometheus`, added up slice of time by slice of time.
    totals: Totals,
    /// Where the slices added to `totals` end: what started (or was published) before it is
    /// counted.
    cut: Option<i64>,
    /// The terminal UI, which shows the snapshots instead of the text until it is dropped.
    ui: Option<tui::Tui>,
    error: Option<String>,
    /// `--snapshot-on-fail`: where, how many at most, and those written with the end of their window.
    snapshots: Option<Snapshots>,
}

/// The recordings `--snapshot-on-fail` writes.
struct Snapshots {
    dir: PathBuf,
    max: usize,
    /// Each one written: its directory and the end of its window.
    written: Vec<(PathBuf, i64)>,
    /// What to say once the terminal is given back (the terminal UI holds it).
    said: Vec<String>,
}

impl Snapshots {
    /// Writes the window of the last look of `f` when `outcomes` has a failure, the window
    /// begins after the last one written ended, and fewer than the most were written. Returns
    /// what to say, or the error.
    fn take(
        &mut self,
        f: &rostrace_analysis::Follower,
        a: &Analysis,
        outcomes: &[Outcome],
    ) -> Option<Result<String, String>> {
        use rostrace_analysis::check::Status;
        let failed: Vec<&Outcome> = outcomes.iter().filter(|o| o.status == Status::Fail).collect();
        let (begin, end) = (a.report.begin_ns?, a.report.end_ns?);
        if failed.is_empty() || self.written.len() >= self.max || self.written.last().is_some_and(|w| begin <= w.1) {
            return None;
        }
        let t = rostrace_ctf::time::utc(end);
        let what: String = format!("{} {}", failed[0].subject, failed[0].metric)
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' })
            .collect();
        let what = what.split('-').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("-");
        let name = format!(
            "{:04}{:02}{:02}-{:02}{:02}{:02}-{}",
            t.year,
            t.month,
            t.day,
            t.hour,
            t.minute,
            t.second,
            what.chars().take(80).collect::<String>()
        );
        let dest = self.dir.join(name);
        let written = f.save_window(&dest).and_then(|x| {
            write_json(&dest.join("analysis.json"), &a.report)?;
            write_json(&dest.join("expectations.json"), &outcomes)?;
            Ok(x)
        });
        Some(match written {
            Ok(x) => {
                self.written.push((dest.clone(), end));
                Ok(format!(
                    "{} failed: the window written to {} ({} packets, {:.1} MB; its analysis in analysis.json)",
                    failed.iter().map(|o| format!("{} {}", o.subject, o.metric)).collect::<Vec<_>>().join(", "),
                    dest.display(),
                    x.packets,
                    x.bytes as f64 / 1e6
                ))
            }
            Err(e) => Err(format!("--snapshot-on-fail: {e}")),
        })
    }
}

/// Writes `v` as pretty JSON to `path`.
fn write_json(path: &Path, v: &impl serde::Serialize) -> Result<(), String> {
    let text = serde_json::to_string_pretty(v).map_err(|e| e.to_string())? + "\n";
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

impl Follower {
    /// The counters after analysis `a` (of the whole recording when `all`): those of the next
    /// slice of time added; the whole recording's at the end.
    fn count(&mut self, a: &Analysis, all: bool, is_final: bool) {
        if is_final {
            self.totals = Totals::of(&a.report);
            return;
        }
        let from = self.cut.unwrap_or(i64::MIN);
        let to = self.follower.settled(a, from);
        self.totals.add(&rostrace_analysis::report::slice(&View::from(a), from, to));
        self.cut = Some(to);
        // Events read so far (the discarded ones are counted by every analysis, whatever its window).
        self.totals.events = if all { a.report.events } else { self.follower.events_read() };
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
        let sample = if is_final {
            self.follower.whole()
        } else {
            // The counters' next slice begins at the last cut: its runtime events are read.
            self.follower.window(self.cut.filter(|_| self.prometheus.is_some()))
        };
        let Some(sample) = sample else { return };
        let analysis = &sample.analysis;
        let report = &analysis.report;
        let expectations = self.check(analysis, is_final);
        if let (false, Some(s)) = (is_final, self.snapshots.as_mut()) {
            match s.take(&self.follower, analysis, &expectations) {
                Some(Ok(m)) if self.ui.is_some() => s.said.push(m),
                Some(Ok(m)) => crate::out::errln!("rostrace: {m}"),
                Some(Err(e)) => {
                    self.error.get_or_insert(e);
                }
                None => {}
            }
        }
        let reading = Reading { packets_read: sample.packets_read, index_entries: sample.index_entries };
        let snap = snapshot(report, is_final, self.max_latency_ns, expectations, reading);
        if self.prometheus.is_some() {
            self.count(analysis, sample.whole, is_final);
            if let Some(p) = &self.prometheus {
                p.update(report, &self.totals, snap.window_ns, &snap.expectations);
            }
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
        for m in self.snapshots.as_mut().map(|s| std::mem::take(&mut s.said)).unwrap_or_default() {
            crate::out::errln!("rostrace: {m}");
        }
    }
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
    let (snapshot_dir, max_snapshots) = (a.snapshot_on_fail.clone(), a.max_snapshots);
    if let Some(d) = &snapshot_dir {
        if let Err(e) = std::fs::create_dir_all(d) {
            return fail(format!("--snapshot-on-fail {}: {e}", d.display()));
        }
    }
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
            follower: rostrace_analysis::Follower::new(dir, window),
            max_latency_ns,
            expect: expect.clone(),
            jsonl,
            text,
            stdout_gone: false,
            prometheus: prometheus.clone(),
            totals: Totals::default(),
            cut: None,
            ui,
            error: None,
            snapshots: snapshot_dir.clone().map(|dir| Snapshots {
                dir,
                max: max_snapshots,
                written: Vec::new(),
                said: Vec::new(),
            }),
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
