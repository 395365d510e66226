//! `rostrace`: the command-line tool. Thin: each subcommand is a module over the libraries.

mod analyze;
mod demo;
mod embedded;
mod events;
mod export;
mod format;
mod info;
mod paths;
mod progress;
mod record;
mod report;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// ROS 2 tracing and trace analysis.
#[derive(Parser)]
#[command(name = "rostrace", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the demo ROS 2 system (Rust nodes over DDS) traced for a few seconds, then analyze it.
    Demo(demo::Args),
    /// Print the events of one or more traces, in time order.
    Events(events::Args),
    /// Summarize traces: time range, event counts, streams, processes, losses, ROS 2 distro.
    Info(info::Args),
    /// Analyze ROS 2 traces: nodes, topics, callbacks, message latency, time per process/node/thread.
    Analyze(analyze::Args),
    /// The architecture of the traced system (nodes, callbacks, communications, node paths,
    /// executors) as CARET's architecture YAML.
    Architecture(paths::ArchArgs),
    /// Find the paths between two nodes or topics, ranked by mean end-to-end latency.
    Paths(paths::SearchArgs),
    /// End-to-end latency and response time along a path, message by message, per segment.
    E2e(paths::E2eArgs),
    /// The analysis as one self-contained, interactive HTML report (plots and tables).
    Report(report::Args),
    /// Export the analysis: Parquet or CSV tables for notebooks and fleets, or a Perfetto trace.
    Export(export::Args),
    /// Trace a command (and everything it spawns) until it exits or Ctrl-C, then summarize.
    Record(record::RecordArgs),
    /// Create a session that processes can be launched under, not recording until `start`.
    Create(record::StartArgs),
    /// Start recording a session (creating it if needed); initialization events are written first.
    Start(record::StartArgs),
    /// Stop a session: traced processes close their trace files.
    Stop(record::NameArgs),
    /// Pause a session: nothing is recorded until `resume`.
    Pause(record::NameArgs),
    /// Resume a paused session.
    Resume(record::NameArgs),
    /// Write what a flight-recorder session (--snapshot-mode) holds.
    Snapshot(record::NameArgs),
    /// List sessions and their state.
    List(record::ListArgs),
    /// Print the path of rostrace's libtracetools.so (for LD_PRELOAD), or of its LTTng-UST provider.
    Lib(record::LibArgs),
    /// Record sim time (`/clock`) into the session of the environment (run by `record --record-clock`).
    #[command(hide = true)]
    ClockRecorder(record::ClockArgs),
}

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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.command {
        Command::Demo(a) => demo::run(a),
        Command::Events(a) => events::run(a),
        Command::Info(a) => info::run(a),
        Command::Analyze(a) => analyze::run(a),
        Command::Architecture(a) => paths::architecture_cmd(a),
        Command::Paths(a) => paths::paths_cmd(a),
        Command::E2e(a) => paths::e2e_cmd(a),
        Command::Export(a) => export::run(a),
        Command::Report(a) => report::run(a),
        Command::Record(a) => record::record(a),
        Command::Create(a) => record::create(a, false),
        Command::Start(a) => record::start(a),
        Command::Stop(a) => record::control(a, "stop"),
        Command::Pause(a) => record::control(a, "pause"),
        Command::Resume(a) => record::control(a, "resume"),
        Command::Snapshot(a) => record::snapshot(a),
        Command::List(a) => record::list(a),
        Command::Lib(a) => record::lib(a),
        Command::ClockRecorder(a) => record::clock_recorder(a),
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return ExitCode::SUCCESS;
            }
            eprintln!("rostrace: {e}");
            ExitCode::from(1)
        }
    }
}
