//! `rostrace events`: every event, one line each, as text or JSON.

use crate::args::TraceArgs;
use crate::format::{json_event, text_event, trace_prefix};
use crate::progress::Progress;
use rostrace_ctf::TraceSet;
use std::io::Write;
use std::process::ExitCode;

/// Output formats.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One line per event, like babeltrace2's text output.
    Text,
    /// One JSON object per line: ts, name, cpu_id, context, fields.
    Jsonl,
}

/// Arguments of `rostrace events`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    traces: TraceArgs,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value = "text")]
    format: Format,
    /// Only events whose name matches (`*` wildcards allowed); repeatable.
    #[arg(long, short = 'n', value_name = "PATTERN")]
    name: Vec<String>,
    /// Stop after this many events.
    #[arg(long, value_name = "N")]
    limit: Option<u64>,
}

/// Runs the command.
pub fn run(a: Args) -> std::io::Result<ExitCode> {
    if let Err(e) = a.traces.reading_only() {
        return crate::out::fail(e);
    }
    let (set, errors) = TraceSet::open_jobs(&a.traces.traces, a.traces.jobs);
    let mut failed = false;
    for e in &errors {
        crate::out::errln!("rostrace: error: {e}");
        failed = true;
    }
    let prefixes: Vec<Option<String>> = set.traces.iter().map(|t| trace_prefix(&t.schema)).collect();
    let mut w = std::io::BufWriter::with_capacity(1 << 16, crate::out::stdout());
    let mut buf = Vec::with_capacity(1 << 16);
    let mut progress = Progress::new(set.total_bytes(), "reading");
    let read = |events: &mut rostrace_ctf::Events| -> std::io::Result<bool> {
        let mut prev = None;
        let mut n = 0u64;
        loop {
            let ev = match events.next() {
                None => break,
                Some(Err(e)) => {
                    crate::out::errln!("rostrace: error: {e}");
                    failed = true;
                    continue;
                }
                Some(Ok(ev)) => ev,
            };
            if !a.name.is_empty() && !a.name.iter().any(|p| tracetools::catalog::glob(p, ev.name())) {
                continue;
            }
            match a.format {
                Format::Jsonl => json_event(&mut buf, &ev),
                Format::Text => {
                    text_event(&mut buf, &ev, prev, prefixes[ev.trace_index()].as_deref());
                    // The delta is from the last event with a time (as babeltrace2 has it).
                    prev = ev.timestamp().or(prev);
                }
            }
            if buf.len() > 1 << 15 {
                w.write_all(&buf)?;
                buf.clear();
            }
            n += 1;
            progress.tick(|| events.progress().0);
            if a.limit.is_some_and(|l| n >= l) {
                break;
            }
        }
        w.write_all(&buf)?;
        w.flush()?;
        progress.finish();
        for l in events.losses() {
            crate::out::errln!("rostrace: warning: {}", crate::text::describe_loss(l));
        }
        Ok(failed)
    };
    let failed = set.read().jobs(a.traces.jobs).piped().run(read)?;
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
