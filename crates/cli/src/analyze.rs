//! `rostrace analyze`: the ROS 2 model, callbacks, topics and latencies of traces.

use crate::args::{Input, LongestArgs, ScopeArgs, StreamArgs, TraceArgs};
use crate::out::{emit, fail};
use crate::text::count;
use crate::text::{render, sim_lines, width};
use rostrace_analysis::diff::Samples;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `rostrace analyze`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    traces: TraceArgs,
    /// Also write the results as JSON to FILE (`-` for standard output, instead of the text report).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Rows of each table in the text report (0: all).
    #[arg(long, default_value_t = 25)]
    top: usize,
    #[command(flatten)]
    scope: ScopeArgs,
    /// Do not abbreviate: full symbols and lists, lines as long as they need.
    #[arg(long)]
    wide: bool,
    /// The time base of the times printed (trace span, window; in the JSON `begin_ns`, `end_ns`,
    /// `window_ns` and the memory peaks and timelines): `system` (the trace's clock), or `sim`
    /// (ROS time of `/clock`, mapped from the trace's `ros2_caret:sim_time` samples: record with
    /// `rostrace record --record-clock`). Durations and latencies stay in system time, and so do
    /// `--begin` and `--end`.
    #[arg(long, value_enum, default_value = "system", value_name = "BASE")]
    time: TimeBase,
    /// Also save, in the JSON (as `diff_samples`), the samples `rostrace diff` compares (every
    /// callback duration, topic latency and longest path's latency), so that this JSON can stand
    /// for the trace as a run of `rostrace diff` or `rostrace report --baseline`.
    #[arg(long, requires = "json")]
    samples: bool,
    #[command(flatten)]
    stream: StreamArgs,
    #[command(flatten)]
    longest: LongestArgs,
}

/// The report as `--json` writes it, with the samples of `--samples`.
#[derive(serde::Serialize)]
struct Json<'a> {
    #[serde(flatten)]
    report: &'a rostrace_analysis::Report,
    #[serde(skip_serializing_if = "Option::is_none")]
    diff_samples: Option<&'a Samples>,
}

/// The time base of `--time`.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum TimeBase {
    /// The trace's clock (ns since the epoch).
    System,
    /// ROS time of `/clock`.
    Sim,
}

impl Args {
    /// Analysis of `traces`, with the text report's `top` rows, and JSON to `json` if given.
    pub fn new(traces: Vec<PathBuf>, json: Option<PathBuf>, top: usize) -> Args {
        Args {
            traces: TraceArgs { traces, jobs: 0, clock_offset: Vec::new(), no_align: false },
            json,
            top,
            scope: ScopeArgs::default(),
            wide: false,
            time: TimeBase::System,
            samples: false,
            stream: StreamArgs::default(),
            longest: LongestArgs::default(),
        }
    }
}

/// Runs the command.
pub fn run(a: Args) -> std::io::Result<ExitCode> {
    // Nothing here asks for the architecture once the paths are found, nor for the runtime
    // tables once the report is made, but the samples.
    let input = match Input::new(&a.traces).scope(&a.scope) {
        Ok(i) => i.options(|o| {
            a.longest.apply(o);
            o.release_architecture = true;
            o.release_tables = !a.samples;
            o.diff_samples = a.samples;
            a.stream.apply(o);
        }),
        Err(e) => return fail(e),
    };
    let window = input.options.window;
    let Some(loaded) = input.load() else {
        return Ok(ExitCode::from(1));
    };
    let clean = loaded.clean();
    let rostrace_analysis::Loaded { set, analysis: mut an, .. } = loaded;
    let samples = a.samples.then(|| Samples::of(&an, &[]));
    let diff_samples = samples.as_ref();
    let mut report = std::mem::take(&mut an.report);
    let r = &report;
    let width = width(a.wide);
    let sim = match a.time {
        TimeBase::System => None,
        TimeBase::Sim => match r.system.sim_time.as_ref().and_then(|s| s.fit) {
            Some(f) => Some(f),
            None => {
                let n = r.system.sim_time.as_ref().map_or(0, |s| s.samples);
                let traces: Vec<String> = a.traces.traces.iter().map(|t| t.display().to_string()).collect();
                return fail(format!(
                    "--time sim: {} {} {} (ros2_caret:sim_time); at least 2 are needed to map system time to \
                     sim time: record with `rostrace record --record-clock` (CARET: ros2 caret record --record-clock), \
                     while something publishes /clock",
                    traces.join(", "),
                    if n == 1 { "has" } else { "have" },
                    count(n, "sim_time sample")
                ));
            }
        },
    };
    let no_events = r.events == 0;
    let written = match sim {
        None => emit(a.json.as_deref(), &Json { report: r, diff_samples }, || render(r, a.top, width)),
        Some(f) => {
            // The text in system time (with the sim time lines), the JSON in sim time: the
            // text is made before the report's times are mapped, when it is printed.
            let prints_text = a.json.as_deref().is_none_or(|p| p.as_os_str() != "-");
            let text = if prints_text { render(&report, a.top, width) } else { String::new() };
            report.map_times("sim", |t| f.to_sim(t));
            emit(a.json.as_deref(), &Json { report: &report, diff_samples }, || {
                let (head, rest) = text.split_once('\n').unwrap_or((&text, ""));
                format!("{head}\n{}{rest}", sim_lines(&report, f.slope, width))
            })
        }
    };
    if let Err(e) = written? {
        return fail(e);
    }
    if no_events && window.begin.is_some() | window.end.is_some() {
        crate::out::errln!("rostrace: warning: no event in the window");
    }
    // The process ends next (`analyze`; `demo` after its report), and the kernel takes its
    // memory back at once, faster than freeing the model, the tables and the mappings piece
    // by piece (docs/benchmarks.md, "Design measurements").
    std::mem::forget((an, report, set));
    Ok(if clean { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
