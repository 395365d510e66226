//! The arguments the analysing commands share, as clap parses them (the groups [`TraceArgs`],
//! [`ScopeArgs`], [`ArchitectureArg`], [`ThresholdArgs`], each flattened into the commands it
//! applies to), and what they are once validated ([`Input`]): made once per command, before
//! anything is read, and then what every analysing command reads its traces with.

use rostrace_analysis::diff::Thresholds;
use rostrace_analysis::paths::{yaml, Architecture};
use rostrace_analysis::{parse_time, Analysis, Bound, Loaded, Options, Window};
use std::path::{Path, PathBuf};

/// Paths of traces as given on the command line.
#[derive(clap::Args, Clone)]
pub struct TraceArgs {
    /// Trace directories (searched recursively for CTF traces) or metadata files.
    #[arg(required = true, value_name = "TRACE")]
    pub traces: Vec<PathBuf>,
    /// Threads (0: one per core): reading the traces; for the analyses, the pass over the events
    /// (shared out by trace, or, on one trace, reading on a second thread while this one handles
    /// the events) and the work beside it (path search, report). The output is the same whatever
    /// the number.
    #[arg(short = 'j', long = "jobs", value_name = "N", default_value_t = 0)]
    pub jobs: usize,
    /// Recordings of several hosts: HOST's clock is NS ahead of the reference host's (`37ms`,
    /// `-2.5s`, ns without a unit), instead of the offset estimated from the messages they
    /// exchange (docs/multi-host.md). Repeatable.
    #[arg(long, value_name = "HOST=NS", value_parser = parse_clock_offset)]
    pub clock_offset: Vec<(String, i64)>,
    /// Recordings of several hosts: keep their recorded clocks, not aligned.
    #[arg(long, conflicts_with = "clock_offset")]
    pub no_align: bool,
}

impl TraceArgs {
    /// For the commands that read events without analysing them: the clocks of several hosts
    /// are aligned by the analysis, so `--clock-offset` and `--no-align` are refused.
    pub fn reading_only(&self) -> Result<(), String> {
        match (self.clock_offset.is_empty(), self.no_align) {
            (true, false) => Ok(()),
            _ => Err("--clock-offset and --no-align apply to the analysing commands (analyze, report, check, paths, e2e, export, diff): events and info show the recorded times".into()),
        }
    }
}

/// `HOST=OFFSET` of `--clock-offset`: ns, or with a unit (s, ms, us, ns).
fn parse_clock_offset(v: &str) -> Result<(String, i64), String> {
    let (host, off) = v.split_once('=').ok_or_else(|| format!("{v:?}: give HOST=OFFSET, e.g. robot1=37ms"))?;
    let off = off.trim();
    let (num, unit) = off.split_at(off.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(off.len()));
    let scale = match unit {
        "" | "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return Err(format!("{v:?}: the offset's unit is s, ms, us or ns")),
    };
    let n: f64 = num.trim().parse().map_err(|_| format!("{v:?}: {off:?} is not a number"))?;
    if host.is_empty() || !(n * scale).is_finite() || (n * scale).abs() > 1e18 {
        return Err(format!("{v:?}: give HOST=OFFSET, e.g. robot1=37ms"));
    }
    Ok((host.to_string(), (n * scale).round() as i64))
}

/// Whether a streamed report follows its longest paths (docs/streaming.md).
#[derive(clap::Args, Clone, Default)]
pub struct LongestArgs {
    /// Follow the ten longest paths in a streamed analysis too (an analysis in memory always
    /// does): in the same reading, or in a second one when the first slice's architecture is
    /// not the whole recording's; about a fifth more time on message-heavy recordings.
    #[arg(long)]
    pub longest_paths: bool,
}

impl LongestArgs {
    /// Into `o`: the longest paths searched, and followed when streamed if asked.
    pub fn apply(&self, o: &mut Options) {
        o.longest_paths = true;
        o.stream_longest_paths = self.longest_paths;
    }
}

/// Whether the analysis is streamed (docs/streaming.md).
#[derive(clap::Args, Clone)]
pub struct StreamArgs {
    /// Stream the analysis, slice of time by slice of time, in memory bounded by the system's
    /// size rather than the recording's length: `auto` (recordings of more than 1 GiB, and
    /// those of two slices or more full of messages), `always` or `never`. A streamed analysis follows `analyze`'s longest paths only with
    /// `--longest-paths`, follows paths in a second reading, and reads percentiles of more than
    /// 1,024 values from a sketch of 0.5 % relative accuracy (docs/streaming.md).
    #[arg(long, value_enum, default_value = "auto", value_name = "WHEN")]
    pub stream: Stream,
    /// Size of a streamed analysis's slices, in bytes of recording (`512K`, `64M`, `1G`).
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = parse_slice)]
    pub slice_size: u64,
}

impl Default for StreamArgs {
    fn default() -> StreamArgs {
        StreamArgs { stream: Stream::Auto, slice_size: rostrace_analysis::SLICE_BYTES }
    }
}

impl StreamArgs {
    /// Into `o`.
    pub fn apply(&self, o: &mut Options) {
        o.streaming = match self.stream {
            Stream::Auto => rostrace_analysis::Streaming::Auto,
            Stream::Always => rostrace_analysis::Streaming::Always,
            Stream::Never => rostrace_analysis::Streaming::Never,
        };
        o.slice_bytes = Some(self.slice_size);
    }
}

/// `--stream`.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum Stream {
    /// Recordings of more than 1 GiB, and those of two slices or more full of messages (a
    /// tenth of their ROS 2 events or more are publications).
    Auto,
    /// Whenever the analysis can be.
    Always,
    /// In memory.
    Never,
}

/// `--slice-size`: a size in bytes, `K`, `M` or `G`.
fn parse_slice(v: &str) -> Result<u64, String> {
    match tracetools::tracer::parse_size(v) {
        Some(n) if n > 0 => Ok(n as u64),
        _ => Err(format!("{v:?}: give a size such as 64M, 512K or 1G")),
    }
}

/// What part of the traces to analyse: a time window, and the nodes and topics reported.
#[derive(clap::Args, Clone, Default)]
pub struct ScopeArgs {
    /// Analyze from TIME: seconds after the trace start (`2.5`, `+2.5s`, `1500ms`), or an absolute
    /// time (ns since the epoch, or `2021-10-06T12:00:00.5Z`). Initialization events before it
    /// are still read.
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub begin: Option<String>,
    /// Analyze until TIME (same forms as --begin).
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub end: Option<String>,
    /// Only nodes whose `/namespace/name` matches REGEX (and their callbacks, topics, time shares).
    #[arg(long, value_name = "REGEX")]
    pub nodes: Option<String>,
    /// Only topics whose name matches REGEX (and the callbacks and nodes of those topics).
    #[arg(long, value_name = "REGEX")]
    pub topics: Option<String>,
}

/// An architecture file applied to the trace's, as `paths` and `e2e` take it.
#[derive(clap::Args, Clone, Default)]
pub struct ArchitectureArg {
    /// An architecture file (CARET's YAML) whose message contexts and named paths override what
    /// the trace shows.
    #[arg(long, value_name = "FILE")]
    pub architecture: Option<PathBuf>,
}

/// The thresholds of a significant change, as `diff` and `report --baseline` take them.
#[derive(clap::Args)]
pub struct ThresholdArgs {
    /// The p-value of the Mann–Whitney test below which a change can be significant
    /// [default: 0.001].
    #[arg(long, value_name = "P")]
    alpha: Option<f64>,
    /// The least |Cliff's delta| (0..1) for a change to be significant [default: 0.33].
    #[arg(long, value_name = "D")]
    min_delta: Option<f64>,
    /// The least relative change of the median for a change to be significant (0.1: 10 %)
    /// [default: 0.1].
    #[arg(long, value_name = "R")]
    min_change: Option<f64>,
}

impl ThresholdArgs {
    /// The thresholds, or the error naming the argument out of its range.
    pub fn thresholds(&self) -> Result<Thresholds, String> {
        let d = Thresholds::default();
        let t = Thresholds {
            alpha: self.alpha.unwrap_or(d.alpha),
            min_delta: self.min_delta.unwrap_or(d.min_delta),
            min_change: self.min_change.unwrap_or(d.min_change),
        };
        if !(t.alpha > 0.0 && t.alpha <= 1.0) {
            return Err(format!("--alpha {}: not in (0, 1]", t.alpha));
        }
        if !(0.0..=1.0).contains(&t.min_delta) {
            return Err(format!("--min-delta {}: not in [0, 1]", t.min_delta));
        }
        if t.min_change.is_nan() || t.min_change < 0.0 {
            return Err(format!("--min-change {}: not a number at least 0", t.min_change));
        }
        Ok(t)
    }

    /// The first threshold argument given on the command line, if any.
    pub fn given(&self) -> Option<&'static str> {
        [("--alpha", self.alpha), ("--min-delta", self.min_delta), ("--min-change", self.min_change)]
            .into_iter()
            .find_map(|(name, v)| v.map(|_| name))
    }
}

/// An architecture file, read and parsed.
pub struct ArchitectureFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// What it says.
    pub arch: Architecture,
}

/// The shared arguments of an analysing command, validated: the traces to read and on how many
/// threads, what to analyse ([`Options`]: the time window, the nodes and topics), and the
/// architecture file to apply.
pub struct Input {
    /// Trace directories or metadata files.
    pub traces: Vec<PathBuf>,
    /// Threads (0: one per core).
    pub jobs: usize,
    /// The window and the node and topic filters; the rest as the command sets it.
    pub options: Options,
    /// `--architecture`, read and parsed.
    pub architecture: Option<ArchitectureFile>,
}

impl Input {
    /// The traces of `t`, the whole of them, no architecture file.
    pub fn new(t: &TraceArgs) -> Input {
        let mut i = Input::of(t.traces.clone(), t.jobs);
        (i.options.clock_offsets, i.options.keep_clocks) = (t.clock_offset.clone(), t.no_align);
        i
    }

    /// The traces at `traces`, on `jobs` threads.
    pub fn of(traces: Vec<PathBuf>, jobs: usize) -> Input {
        Input { traces, jobs, options: Options::default(), architecture: None }
    }

    /// With the window and filters of `s`; the error names the argument.
    pub fn scope(mut self, s: &ScopeArgs) -> Result<Input, String> {
        self.options.window = window(s)?;
        let [nodes, topics] = [("--nodes", &s.nodes), ("--topics", &s.topics)].map(|(name, v)| {
            v.as_deref()
                .map(|v| {
                    regex_lite::Regex::new(v).map_err(|e| {
                        format!(
                            "{name}: invalid regular expression {v:?}: {}",
                            e.to_string().lines().last().unwrap_or("")
                        )
                    })
                })
                .transpose()
        });
        (self.options.nodes, self.options.topics) = (nodes?, topics?);
        Ok(self)
    }

    /// With the architecture file at `path` (`--architecture`), read and parsed; the error
    /// names the argument and the file.
    pub fn architecture_file(mut self, path: Option<&Path>) -> Result<Input, String> {
        if let Some(f) = path {
            let text = std::fs::read_to_string(f).map_err(|e| format!("--architecture {}: {e}", f.display()))?;
            let arch = yaml::import(&text).map_err(|e| format!("--architecture {}: {e}", f.display()))?;
            self.architecture = Some(ArchitectureFile { path: f.to_path_buf(), arch });
        }
        Ok(self)
    }

    /// With the options of the command besides the shared ones (`longest_paths`, the tables
    /// released), the window and filters kept.
    pub fn options(mut self, f: impl FnOnce(&mut Options)) -> Input {
        f(&mut self.options);
        self
    }

    /// The traces opened and analysed, with progress on a terminal and every error printed;
    /// `None` when no trace opened.
    pub fn load(&self) -> Option<Loaded> {
        crate::load::analyze(&self.traces, self.jobs, self.options.clone(), None, false)
    }

    /// [`load`](Self::load), with each slice of a streamed analysis given to `on_slice` as it
    /// is added up.
    pub fn load_streaming(&self, mut on_slice: impl FnMut(&rostrace_analysis::StreamedSlice<'_>)) -> Option<Loaded> {
        crate::load::analyze(&self.traces, self.jobs, self.options.clone(), Some(&mut on_slice), false)
    }

    /// [`load_streaming`](Self::load_streaming), a second time: the errors of reading, printed
    /// by the first, not printed again.
    pub fn load_again(&self, mut on_slice: impl FnMut(&rostrace_analysis::StreamedSlice<'_>)) -> Option<Loaded> {
        crate::load::analyze(&self.traces, self.jobs, self.options.clone(), Some(&mut on_slice), true)
    }

    /// The architecture of `a`, with the architecture file applied; what the file says that
    /// the trace does not have is warned about.
    pub fn architecture(&self, a: &Analysis) -> Architecture {
        let mut arch = a.architecture().into_owned();
        if let Some(f) = &self.architecture {
            for u in arch.apply(&f.arch) {
                crate::out::errln!(
                    "rostrace: warning: --architecture {}: {}",
                    f.path.display(),
                    crate::format::name(&u)
                );
            }
        }
        arch
    }
}

/// The window of `--begin` and `--end`; the error names the argument.
fn window(s: &ScopeArgs) -> Result<Window, String> {
    let mut window = Window::default();
    for (name, v, slot) in [("--begin", &s.begin, &mut window.begin), ("--end", &s.end, &mut window.end)] {
        if let Some(v) = v {
            *slot = Some(parse_time(v).map_err(|e| format!("{name}: {e}"))?);
        }
    }
    if let (Some(b), Some(e)) = (window.begin, window.end) {
        let same_kind =
            matches!((b, e), (Bound::Relative(_), Bound::Relative(_)) | (Bound::Absolute(_), Bound::Absolute(_)));
        let (Bound::Relative(x) | Bound::Absolute(x), Bound::Relative(y) | Bound::Absolute(y)) = (b, e);
        if same_kind && x > y {
            return Err(format!(
                "--begin ({}) is after --end ({})",
                s.begin.as_deref().unwrap_or(""),
                s.end.as_deref().unwrap_or("")
            ));
        }
    }
    Ok(window)
}
