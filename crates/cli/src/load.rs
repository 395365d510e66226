//! What the analysing subcommands share: opening the traces and analysing them, with progress
//! on a terminal and every error printed.

use crate::progress::Progress;
use rostrace_analysis::diff::Samples;
use rostrace_analysis::{Loaded, Open, Options};
use std::path::{Path, PathBuf};

/// Opens `traces` and analyses them with `options` on `jobs` threads (the standard handlers),
/// with progress on a terminal and the errors of opening and reading printed as they are met
/// (not `again`: a second reading, whose errors the first one printed); `None` when no trace
/// opened.
pub fn analyze(
    traces: &[PathBuf],
    jobs: usize,
    options: Options,
    on_slice: Option<&mut dyn FnMut(&rostrace_analysis::StreamedSlice<'_>)>,
    again: bool,
) -> Option<Loaded> {
    let mut progress: Option<Progress> = None;
    let mut open = Open::new(traces).jobs(jobs).options(options);
    if let Some(f) = on_slice {
        open = open.on_slice(f);
    }
    let (what, then) = match again {
        true => ("reading again", "reading again: events read; following"),
        false => ("analyzing", "analyzing: events read; linking and reporting"),
    };
    let loaded = open
        .on_error(|e| {
            if !again {
                crate::out::errln!("rostrace: error: {e}")
            }
        })
        .progress(|done, total| progress.get_or_insert_with(|| Progress::new(total, what).then(then)).at(done, total))
        .analyze();
    if let Some(p) = &progress {
        p.finish();
    }
    loaded.ok()
}

/// One run of `rostrace diff` (or `report --baseline`): a trace analysed, or the samples saved
/// in a `rostrace analyze --json FILE --samples` file.
pub enum Run {
    /// A trace directory or metadata file, analysed.
    Trace(Box<Loaded>),
    /// A saved JSON file's samples.
    Saved(Samples),
}

impl Run {
    /// The run as the comparison takes it.
    pub fn as_diff_run(&self) -> rostrace_analysis::diff::Run<'_> {
        match self {
            Run::Trace(l) => rostrace_analysis::diff::Run::Trace(&l.analysis),
            Run::Saved(s) => rostrace_analysis::diff::Run::Saved(s),
        }
    }

    /// Whether it was read without error (a saved run always is, once loaded).
    pub fn clean(&self) -> bool {
        match self {
            Run::Trace(l) => l.clean(),
            Run::Saved(_) => true,
        }
    }
}

/// The run at `path` (`arg`: the argument it was given as, for errors): a JSON file (a file
/// whose first character other than white space is `{`, which neither form of CTF metadata can
/// begin with) is read as saved samples, anything else analysed as a trace, with `options` set
/// (streaming) beside the samples a comparison takes.
pub fn run(arg: &str, path: &Path, jobs: usize, options: impl FnOnce(&mut Options)) -> Result<Run, String> {
    if !is_json(path) {
        let mut o = Options { longest_paths: true, diff_samples: true, ..Options::default() };
        options(&mut o);
        let options = o;
        return analyze(&[path.to_path_buf()], jobs, options, None, false)
            .map(|l| Run::Trace(Box::new(l)))
            .ok_or_else(|| format!("{arg} {}: no trace could be read", path.display()));
    }
    #[derive(serde::Deserialize)]
    struct Saved {
        diff_samples: Option<Samples>,
    }
    let bytes = std::fs::read(path).map_err(|e| format!("{arg} {}: {e}", path.display()))?;
    let saved: Saved = serde_json::from_slice(&bytes)
        .map_err(|e| format!("{arg} {}: not a JSON file of rostrace analyze: {e}", path.display()))?;
    let samples = saved.diff_samples.ok_or_else(|| {
        format!(
            "{arg} {}: holds no samples to compare; save the run with `rostrace analyze TRACE --json FILE --samples`",
            path.display()
        )
    })?;
    samples.check().map_err(|e| format!("{arg} {}: diff_samples: {e}", path.display()))?;
    Ok(Run::Saved(samples))
}

fn is_json(path: &Path) -> bool {
    use std::io::Read;
    let Ok(f) = std::fs::File::open(path) else { return false };
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = Vec::with_capacity(256);
    let _ = f.take(256).read_to_end(&mut head);
    head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}
