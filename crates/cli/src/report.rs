//! `rostrace report`: the analysis as one self-contained, interactive HTML file.

use crate::args::{Input, LongestArgs, StreamArgs, ThresholdArgs, TraceArgs};
use rostrace_analysis::diff::{diff_runs, Run, Thresholds};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    traces: TraceArgs,
    /// The HTML file to write (`-`: standard output).
    #[arg(short, long, value_name = "FILE", default_value = "report.html")]
    output: PathBuf,
    /// Title (default: the first trace's directory name).
    #[arg(long)]
    title: Option<String>,
    /// Add a section comparing this run with BASE (as `rostrace diff BASE TRACE`): a trace
    /// directory or metadata file, or a JSON file saved with `rostrace analyze --json FILE --samples`.
    #[arg(long, value_name = "BASE")]
    baseline: Option<PathBuf>,
    /// With `--baseline`: when a change is significant (as for `rostrace diff`).
    #[command(flatten)]
    thresholds: ThresholdArgs,
    /// (A streamed report's plots draw each callback's shortest and longest runs per part of
    /// the recording, docs/streaming.md.)
    #[command(flatten)]
    stream: StreamArgs,
    /// (Streamed, its paths' plots draw each part's fastest and slowest message.)
    #[command(flatten)]
    longest: LongestArgs,
}

/// Analyzes `traces` and renders the report, compared with the run `baseline` when given; with
/// false when a trace could not be read whole (the report still holds what could be).
fn render(
    traces: &[PathBuf],
    title: Option<&str>,
    baseline: Option<(&Path, &Thresholds)>,
    jobs: usize,
    stream: &StreamArgs,
    longest: &LongestArgs,
) -> Result<(String, bool), String> {
    let base = baseline
        .map(|(b, t)| {
            let options = |o: &mut rostrace_analysis::Options| {
                stream.apply(o);
                longest.apply(o);
            };
            crate::load::run("--baseline", b, jobs, options).map(|r| (r, t))
        })
        .transpose()?;
    let mut input = Input::of(traces.to_vec(), jobs).options(|o| longest.apply(o));
    stream.apply(&mut input.options);
    input.options.diff_samples = base.is_some();
    let mut sampled = rostrace_html::Sampled::new();
    let Some(loaded) = input.load_streaming(|s| sampled.slice(s)) else { return Err("no trace to report".into()) };
    let clean = loaded.clean();
    let a = loaded.analysis;
    let diff = base.as_ref().map(|(b, t)| diff_runs(b.as_diff_run(), Run::Trace(&a), t));
    let title = match title {
        Some(t) => t.to_string(),
        None => {
            let p = std::fs::canonicalize(&traces[0]).unwrap_or_else(|_| traces[0].clone());
            p.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "trace".into())
        }
    };
    let html = match a.report.streamed {
        Some(_) => rostrace_html::render_streamed(&a, sampled, &title, diff.as_ref()),
        None => rostrace_html::render(&a, &title, diff.as_ref()),
    };
    Ok((html, clean && base.is_none_or(|(b, _)| b.clean())))
}

/// [`render`]s the report and writes it to `out` (`-`: standard output); Ok(false) when a trace
/// could not be read whole. An error writing standard output is the outer one (`main` ends
/// quietly on a closed pipe), any other the inner one.
pub fn write(
    traces: &[PathBuf],
    out: &Path,
    title: Option<&str>,
    baseline: Option<(&Path, &Thresholds)>,
    jobs: usize,
    stream: &StreamArgs,
    longest: &LongestArgs,
) -> std::io::Result<Result<bool, String>> {
    let (html, clean) = match render(traces, title, baseline, jobs, stream, longest) {
        Ok(x) => x,
        Err(e) => return Ok(Err(e)),
    };
    if crate::out::is_stdout(out) {
        crate::out::stdout().write_all(html.as_bytes())?;
    } else if let Err(e) = std::fs::write(out, &html) {
        return Ok(Err(format!("--output {}: {e}", out.display())));
    }
    crate::out::errln!("report written to {} ({:.1} MB)", crate::out::shown(out), html.len() as f64 / 1e6);
    Ok(Ok(clean))
}

pub fn run(a: Args) -> std::io::Result<ExitCode> {
    if let Some(arg) = a.thresholds.given().filter(|_| a.baseline.is_none()) {
        // A usage error, as clap's own.
        crate::out::errln!("rostrace: error: {arg} applies to the comparison with --baseline, which is not given");
        return Ok(ExitCode::from(2));
    }
    let t = match a.thresholds.thresholds() {
        Ok(t) => t,
        Err(e) => return crate::out::fail(e),
    };
    let baseline = a.baseline.as_deref().map(|b| (b, &t));
    match write(&a.traces.traces, &a.output, a.title.as_deref(), baseline, a.traces.jobs, &a.stream, &a.longest)? {
        Ok(true) => Ok(ExitCode::SUCCESS),
        Ok(false) => Ok(ExitCode::from(1)),
        Err(e) => {
            crate::out::errln!("rostrace: error: {e}");
            Ok(ExitCode::from(1))
        }
    }
}
