//! `rostrace report`: the analysis as one self-contained, interactive HTML file.

use crate::TraceArgs;
use rostrace_analysis::diff::{diff_runs, Run, Thresholds};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    traces: TraceArgs,
    /// The HTML file to write.
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
    thresholds: crate::diff::ThresholdArgs,
}

/// Analyzes `traces` and writes the report to `out`, compared with the run `baseline` when
/// given; Ok(false) when a trace could not be read whole (the report still holds what could be).
pub fn write(
    traces: &[PathBuf],
    out: &Path,
    title: Option<&str>,
    baseline: Option<(&Path, &Thresholds)>,
    jobs: usize,
) -> Result<bool, String> {
    let base = baseline.map(|(b, t)| crate::load::run("--baseline", b, jobs).map(|r| (r, t))).transpose()?;
    let options = rostrace_analysis::Options { longest_paths: true, ..Default::default() };
    let Some(loaded) = crate::load::analyze(traces, jobs, &options) else { return Err("no trace to report".into()) };
    let a = loaded.analysis;
    let diff = base.as_ref().map(|(b, t)| diff_runs(b.as_diff_run(), Run::Trace(&a), t));
    let title = match title {
        Some(t) => t.to_string(),
        None => {
            let p = std::fs::canonicalize(&traces[0]).unwrap_or_else(|_| traces[0].clone());
            p.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "trace".into())
        }
    };
    let html = rostrace_html::render(&a, &title, diff.as_ref());
    std::fs::write(out, &html).map_err(|e| format!("--output {}: {e}", out.display()))?;
    crate::out::errln!("report written to {} ({:.1} MB)", out.display(), html.len() as f64 / 1e6);
    Ok(loaded.clean && base.is_none_or(|(b, _)| b.clean()))
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
    match write(&a.traces.traces, &a.output, a.title.as_deref(), a.baseline.as_deref().map(|b| (b, &t)), a.traces.jobs)
    {
        Ok(true) => Ok(ExitCode::SUCCESS),
        Ok(false) => Ok(ExitCode::from(1)),
        Err(e) => {
            crate::out::errln!("rostrace: error: {e}");
            Ok(ExitCode::from(1))
        }
    }
}
