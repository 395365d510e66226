//! `rostrace export`: the analysis as Parquet or CSV tables, or as a Perfetto trace.

use crate::args::{Input, StreamArgs, TraceArgs};
use crate::out::{fail, is_stdout, shown, stdout, stdout_is_not_a_directory};
use crate::progress::Progress;
use regex_lite::Regex;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Export formats.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Perfetto trace (a file): callback runs, publications, takes, message flows, latencies.
    Perfetto,
    /// Parquet tables (a directory): the analysis tables and the raw events.
    Parquet,
    /// CSV tables (a directory): as Parquet.
    Csv,
}

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    traces: TraceArgs,
    /// Output format.
    #[arg(long, value_enum)]
    format: Format,
    /// Output: the Perfetto trace file (`-`: standard output), or the directory the tables go
    /// to (created; many recordings can be exported into one directory).
    #[arg(short, long, value_name = "PATH")]
    output: PathBuf,
    /// Name of this recording in the tables (`recording` column, file names): by default the
    /// name of the first trace directory.
    #[arg(long)]
    name: Option<String>,
    /// Raw events to export as tables of their own (`events/<provider>.<event>`; a name that is
    /// not a safe file name gets an escaped one, told on stderr): `all`, `none`, or a regular
    /// expression on event names.
    #[arg(long, default_value = "all", value_name = "all|none|REGEX")]
    events: String,
    /// CSV: write text fields that spreadsheets would run as formulas (starting with `=`, `+`,
    /// `-`, `@`, tab or CR; names in a trace are anyone's) with a `'` before them.
    #[arg(long)]
    csv_safe: bool,
    /// An end-to-end path to export as well, as `rostrace e2e --path` takes it (`/a,/b,/c`; a
    /// topic between two nodes that talk over several): its summary in the `paths` table, every
    /// message followed along it in `path_messages`. Repeatable.
    #[arg(long = "path", value_name = "NODE,...")]
    paths: Vec<String>,
    /// A named path of the --architecture file to export, as --path. Repeatable.
    #[arg(long, value_name = "NAME", requires = "architecture")]
    named_path: Vec<String>,
    #[command(flatten)]
    following: crate::paths::Following,
    /// (Parquet and CSV without --path: a streamed analysis writes the runs, publications,
    /// takes and flows slice by slice, docs/streaming.md.)
    #[command(flatten)]
    stream: StreamArgs,
}

/// The recording's name: `name`, or the first trace's directory name; letters, digits, `.`,
/// `_`, `-` only.
fn recording_name(name: Option<&str>, first: &Path) -> String {
    let raw = match name {
        Some(n) => n.to_string(),
        None => {
            let p = std::fs::canonicalize(first).unwrap_or_else(|_| first.to_path_buf());
            let p = if p.is_file() { p.parent().map(Path::to_path_buf).unwrap_or(p) } else { p };
            p.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "trace".into())
        }
    };
    let s: String = raw.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect();
    // Spark, Hive and Hadoop take a file whose name starts with `.` or `_` for a hidden one.
    if s.is_empty() || s.starts_with('.') || s.starts_with('_') {
        format!("trace{s}")
    } else {
        s
    }
}

pub fn run(a: Args) -> std::io::Result<ExitCode> {
    if a.csv_safe && a.format != Format::Csv {
        return fail("--csv-safe: applies to --format csv only");
    }
    if a.format != Format::Perfetto && is_stdout(&a.output) {
        return stdout_is_not_a_directory("--output", "the tables");
    }
    let keep: Box<dyn Fn(&str) -> bool> = match a.events.as_str() {
        "all" => Box::new(|_| true),
        "none" => Box::new(|_| false),
        re => match Regex::new(re) {
            Ok(re) => Box::new(move |n| re.is_match(n)),
            Err(e) => {
                return fail(format!(
                    "--events: invalid regular expression {re:?}: {}",
                    e.to_string().lines().last().unwrap_or("")
                ))
            }
        },
    };
    let asks_paths = !a.paths.is_empty() || !a.named_path.is_empty();
    if a.format == Format::Perfetto && asks_paths {
        return fail("--path, --named-path: apply to --format parquet and csv");
    }
    let recording = recording_name(a.name.as_deref(), &a.traces.traces[0]);
    let input = match Input::new(&a.traces).architecture_file(a.following.architecture.architecture.as_deref()) {
        Ok(i) => i,
        Err(e) => return fail(e),
    };
    // The tables' sink, made before the analysis: a streamed one writes the instances' tables
    // as it goes.
    let mut sink = None;
    if a.format != Format::Perfetto {
        if let Err(e) = std::fs::create_dir_all(&a.output) {
            return fail(format!("--output {}: {e}", a.output.display()));
        }
        sink = Some(if a.format == Format::Parquet {
            let s = rostrace_export::parquet::ParquetSink::new(&a.output, &recording);
            let file = (s.file().0.to_string(), s.file().1);
            (Box::new(s) as Box<dyn rostrace_export::tables::Sink>, file)
        } else {
            let s = rostrace_export::csv::CsvSink::new(&a.output, &recording).spreadsheet_safe(a.csv_safe);
            let file = (s.file().0.to_string(), s.file().1);
            (Box::new(s) as Box<dyn rostrace_export::tables::Sink>, file)
        });
    }
    let mut input = input;
    if sink.is_some() {
        a.stream.apply(&mut input.options);
    }
    let mut instances = rostrace_export::tables::StreamedInstances::new(&recording);
    let mut streamed_error = None;
    let loaded = match sink.as_mut() {
        Some((s, _)) => input.load_streaming(|slice| {
            if streamed_error.is_none() {
                streamed_error = instances.slice(slice, s.as_mut()).err();
            }
        }),
        _ => input.load(),
    };
    let Some(loaded) = loaded else {
        return Ok(ExitCode::from(1));
    };
    if let Some(e) = streamed_error {
        return fail(e.to_string());
    }
    let mut clean = loaded.clean();
    let rostrace_analysis::Loaded { set, analysis: an, .. } = loaded;
    // The paths, followed before anything is written: a path the trace does not have is an
    // error of its own.
    let mut followed = Vec::new();
    // A streamed analysis's paths: followed over the recording read again, once its tables are
    // written.
    let mut specs = Vec::new();
    let arch = asks_paths.then(|| input.architecture(&an));
    if let Some(arch) = &arch {
        let opt = a.following.options();
        if an.report.streamed.is_some() {
            match arch.paths_asked(&a.paths, &a.named_path, ["--path", "--named-path"]).into_iter().collect() {
                Ok(s) => specs = s,
                Err(e) => return fail(e),
            }
        } else {
            let index = rostrace_analysis::paths::PathIndex::new(&an);
            for f in index.follow(arch, &a.paths, &a.named_path, opt, ["--path", "--named-path"]) {
                match f {
                    Ok(x) => followed.push(x),
                    Err(e) => return fail(e),
                }
            }
        }
    }
    match a.format {
        Format::Perfetto => {
            if an.runs.is_empty() && an.pubs.is_empty() && an.takes.is_empty() {
                // Nothing would go on a track: say so rather than write an empty trace.
                let why = an.report.notes.first().map(|n| format!(" ({})", n.reason)).unwrap_or_default();
                return fail(format!(
                    "{}: no callback runs, publications or takes: nothing to export to Perfetto{why}",
                    a.traces.traces.iter().map(|t| t.display().to_string()).collect::<Vec<_>>().join(", ")
                ));
            }
            let s = if is_stdout(&a.output) {
                // Standard output's errors are its own: `main` ends quietly on a closed pipe.
                rostrace_export::perfetto::write(&an, std::io::BufWriter::with_capacity(1 << 20, stdout()))?
            } else {
                let f = match std::fs::File::create(&a.output) {
                    Ok(f) => f,
                    Err(e) => return fail(format!("--output {}: {e}", a.output.display())),
                };
                match rostrace_export::perfetto::write(&an, std::io::BufWriter::with_capacity(1 << 20, f)) {
                    Ok(s) => s,
                    Err(e) => return fail(format!("--output {}: {e}", a.output.display())),
                }
            };
            crate::out::errln!(
                "{}: {}, {}, {}, {} publications and takes, {}, {:.1} MB; open it in https://ui.perfetto.dev",
                shown(&a.output),
                crate::text::count(s.processes as u64, "process"),
                crate::text::count(s.threads as u64, "thread"),
                crate::text::count(s.slices as u64, "callback run"),
                s.instants,
                crate::text::count(s.flows as u64, "message flow"),
                s.bytes as f64 / 1e6
            );
        }
        Format::Parquet | Format::Csv => {
            let Some((mut sink, file)) = sink else { return fail("no sink for the tables") };
            let written = match an.report.streamed {
                Some(_) => rostrace_export::write_streamed_tables(&an, &recording, sink.as_mut(), instances),
                None => rostrace_export::write_tables(&an, &recording, sink.as_mut()),
            };
            let mut tables = match written {
                Ok(c) => c,
                Err(e) => return fail(e.to_string()),
            };
            if let (Some(arch), false) = (&arch, specs.is_empty()) {
                match follow_streamed(&mut input, arch, &specs, a.following.options(), &recording, sink.as_mut()) {
                    Ok((c, ok)) => {
                        tables.extend(c);
                        clean &= ok;
                    }
                    Err(e) => return fail(e),
                }
            } else if asks_paths {
                let paths: Vec<_> = followed.iter().map(|(s, r)| (s, r)).collect();
                match rostrace_export::write_paths(&recording, &paths, sink.as_mut()) {
                    Ok(c) => tables.extend(c),
                    Err(e) => return fail(e.to_string()),
                }
            }
            let mut progress = Progress::new(set.total_bytes(), "exporting events");
            let written = match rostrace_export::events::write(
                &set,
                &recording,
                &*keep,
                sink.as_mut(),
                &mut |d, total| progress.at(d, total),
                a.traces.jobs,
            ) {
                Ok(x) => x,
                Err(e) => return fail(e.to_string()),
            };
            progress.finish();
            clean &= written.errors.is_empty();
            let events = &written.tables;
            let rows = |c: &rostrace_export::tables::Counts| c.iter().map(|x| x.1).sum::<u64>();
            crate::out::errln!(
                "{}: recording {recording}: {} tables ({} rows), {} event tables ({} events)",
                a.output.display(),
                tables.len(),
                rows(&tables),
                events.len(),
                rows(events)
            );
            for (name, n) in &tables {
                crate::out::errln!("  {name:<18} {n:>9}");
            }
            if let (file, Some(why)) = file {
                crate::out::errln!("  recording {recording:?}: its files are named {file} ({why})");
            }
            for r in &written.renamed {
                crate::out::errln!("  {}: the events named {:?} ({})", r.table, r.event, r.why);
            }
        }
    }
    Ok(if clean { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// The paths `specs` of `arch` followed over the recording of `input` read again, slice by
/// slice, their tables written to `sink`: the tables' counts, and whether it was read without
/// error.
fn follow_streamed(
    input: &mut Input,
    arch: &rostrace_analysis::paths::Architecture,
    specs: &[rostrace_analysis::paths::PathSpec],
    opt: rostrace_analysis::paths::PathOptions,
    recording: &str,
    sink: &mut dyn rostrace_export::tables::Sink,
) -> Result<(rostrace_export::tables::Counts, bool), String> {
    /// Each path's records, written to the sink under its label.
    struct Rows<'x> {
        writer: rostrace_export::StreamedPaths,
        sink: &'x mut dyn rostrace_export::tables::Sink,
        labels: Vec<String>,
        k: usize,
    }
    impl rostrace_analysis::paths::PathOutput for Rows<'_> {
        fn record(&mut self, index: u64, row: &[Option<i64>], status: rostrace_analysis::paths::RecordStatus) {
            self.writer.record(self.sink, &self.labels[self.k], index, row, status);
        }
    }
    impl crate::follow::Select for Rows<'_> {
        fn select(&mut self, k: usize) -> &mut dyn rostrace_analysis::paths::PathOutput {
            self.k = k;
            self
        }
    }
    let labels = specs.iter().map(|s| s.label()).collect();
    let mut rows = Rows { writer: rostrace_export::StreamedPaths::new(recording), sink, labels, k: 0 };
    let with: Vec<_> = specs.iter().map(|s| (s.clone(), opt)).collect();
    let (done, ok) = crate::follow::follow_streamed(input, arch, &with, &[], &mut rows)?;
    let mut pairs = Vec::new();
    for (spec, d) in specs.iter().zip(&done) {
        match d {
            Some(d) => pairs.push((spec, d)),
            None => return Err(format!("the path {} cannot be followed", spec.label())),
        }
    }
    let Rows { writer, sink, .. } = rows;
    let counts = writer.finish(&pairs, sink).map_err(|e| e.to_string())?;
    Ok((counts, ok))
}
