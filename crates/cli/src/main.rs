//! `rostrace`: the command-line tool. Thin: each subcommand is a module over the libraries.

mod analyze;
mod events;
mod format;
mod info;
mod progress;

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
    /// Print the events of one or more traces, in time order.
    Events(events::Args),
    /// Summarize traces: time range, event counts, streams, processes, losses, ROS 2 distro.
    Info(info::Args),
    /// Analyze ROS 2 traces: nodes, topics, callbacks, message latency, time per process/node/thread.
    Analyze(analyze::Args),
}

/// Paths of traces as given on the command line.
#[derive(clap::Args, Clone)]
pub struct TraceArgs {
    /// Trace directories (searched recursively for CTF traces) or metadata files.
    #[arg(required = true, value_name = "TRACE")]
    pub traces: Vec<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.command {
        Command::Events(a) => events::run(a),
        Command::Info(a) => info::run(a),
        Command::Analyze(a) => analyze::run(a),
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return ExitCode::SUCCESS;
            }
            eprintln!("rostrace: {e}");
            ExitCode::from(2)
        }
    }
}
