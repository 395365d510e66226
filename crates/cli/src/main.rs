//! `rostrace`: the command-line tool. Thin: each subcommand is a module over the libraries.

mod analyze;
mod args;
mod check;
mod demo;
mod diff;
mod embedded;
mod events;
mod export;
mod follow;
mod format;
mod info;
mod live;
mod load;
mod out;
mod paths;
mod progress;
mod prometheus;
mod record;
mod report;
mod signals;
mod spill;
mod text;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Large blocks mapped on their own, and kept from one slice of a streamed analysis to the next.
#[global_allocator]
static ALLOCATOR: rostrace_alloc::Allocator = rostrace_alloc::Allocator;

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
    Demo(Lazy<demo::Args>),
    /// Print the events of one or more traces, in time order.
    Events(Lazy<events::Args>),
    /// Summarize traces: time range, event counts, streams, processes, losses, ROS 2 distro.
    Info(Lazy<info::Args>),
    /// Analyze ROS 2 traces: nodes, topics, callbacks, message latency, time per process/node/thread.
    Analyze(Lazy<analyze::Args>),
    /// Check a trace against expected limits (callbacks, topics, paths, processes): pass or
    /// fail per expectation, JUnit XML for CI; --suggest writes limits from a good run.
    Check(Lazy<check::Args>),
    /// Compare two runs per callback and topic: p50, p99, max and rate, with a Mann–Whitney
    /// test and an effect size so that noise is not called a regression (exit 1 on a change).
    Diff(Lazy<diff::Args>),
    /// The architecture of the traced system (nodes, callbacks, communications, node paths,
    /// executors) as CARET's architecture YAML.
    Architecture(Lazy<paths::ArchArgs>),
    /// Find the paths between two nodes or topics, ranked by mean end-to-end latency.
    Paths(Lazy<paths::SearchArgs>),
    /// End-to-end latency and response time along a path, message by message, per segment.
    E2e(Lazy<paths::E2eArgs>),
    /// How old the data behind each message a node takes is, per source (sensor to node).
    Age(Lazy<paths::AgeArgs>),
    /// The analysis as one self-contained, interactive HTML report (plots and tables).
    Report(Lazy<report::Args>),
    /// Export the analysis: Parquet or CSV tables for notebooks and fleets, or a Perfetto trace.
    Export(Lazy<export::Args>),
    /// Trace a command (and everything it spawns) until it exits or Ctrl-C, then summarize.
    Record(Lazy<record::RecordArgs>),
    /// Follow a recording while it is written (a session directory, or a command recorded
    /// here): callbacks and topics over a sliding window, every interval.
    Live(Lazy<live::Args>),
    /// Create a session that processes can be launched under, not recording until `start`.
    Create(Lazy<record::StartArgs>),
    /// Start recording a session (creating it if needed); initialization events are written first.
    Start(Lazy<record::StartArgs>),
    /// Stop a session: traced processes close their trace files.
    Stop(Lazy<record::NameArgs>),
    /// Pause a session: nothing is recorded until `resume`.
    Pause(Lazy<record::NameArgs>),
    /// Resume a paused session.
    Resume(Lazy<record::NameArgs>),
    /// Write what a flight-recorder session (--snapshot-mode) holds.
    Snapshot(Lazy<record::NameArgs>),
    /// List sessions and their state.
    List(Lazy<record::ListArgs>),
    /// Print the path of rostrace's libtracetools.so (for LD_PRELOAD), or of its LTTng-UST provider.
    Lib(Lazy<record::LibArgs>),
    /// Record sim time (`/clock`) into the session of the environment (run by `record --record-clock`).
    #[command(hide = true)]
    ClockRecorder(Lazy<record::ClockArgs>),
}

/// A subcommand's arguments, added to its command only when that command is built: when it is
/// the one given (or its help is asked for): building all the commands' arguments is a
/// noticeable part of a short run (docs/benchmarks.md, "Design measurements").
struct Lazy<T>(T);

impl<T: clap::Args> clap::Args for Lazy<T> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.defer(keeping_about::<T, false>)
    }
    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        cmd.defer(keeping_about::<T, true>)
    }
}

/// `T`'s arguments added to `cmd`, whose description stays as it is: the subcommand's own (the
/// arguments' struct has a doc comment too, which clap applies first when not deferred).
fn keeping_about<T: clap::Args, const UPDATE: bool>(cmd: clap::Command) -> clap::Command {
    let (about, long) = (cmd.get_about().cloned(), cmd.get_long_about().cloned());
    let cmd = if UPDATE { T::augment_args_for_update(cmd) } else { T::augment_args(cmd) };
    let cmd = match about {
        Some(a) => cmd.about(a),
        None => cmd.about(None::<&'static str>),
    };
    match long {
        Some(l) => cmd.long_about(l),
        None => cmd.long_about(None::<&'static str>),
    }
}

impl<T: clap::FromArgMatches> clap::FromArgMatches for Lazy<T> {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(m).map(Lazy)
    }
    fn from_arg_matches_mut(m: &mut clap::ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches_mut(m).map(Lazy)
    }
    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(m)
    }
    fn update_from_arg_matches_mut(&mut self, m: &mut clap::ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches_mut(m)
    }
}

/// The command line parsed; clap's error otherwise (exit 2), with a hint where a command to
/// trace was given without `--` before it.
fn parse() -> Cli {
    let e = match Cli::try_parse() {
        Ok(cli) => return cli,
        Err(e) => e,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sub = args.iter().find(|a| !a.starts_with('-'));
    let traces = matches!(sub.map(String::as_str), Some("record" | "live" | "demo"));
    if traces && e.kind() == clap::error::ErrorKind::UnknownArgument && !args.iter().any(|a| a == "--") {
        let sub = sub.map(String::as_str).unwrap_or("record");
        let _ = e.print();
        crate::out::errln!(
            "\nhint: put `--` before the command to trace: rostrace {sub} [OPTIONS] -- COMMAND [ARGS]..."
        );
        std::process::exit(2);
    }
    e.exit()
}

fn main() -> ExitCode {
    let cli = parse();
    // This binary carries libtracetools.so: the last place the session library looks for it.
    rostrace_session::set_embedded_library(embedded::library);
    let r = match cli.command {
        Command::Demo(Lazy(a)) => demo::run(a),
        Command::Events(Lazy(a)) => events::run(a),
        Command::Info(Lazy(a)) => info::run(a),
        Command::Analyze(Lazy(a)) => analyze::run(a),
        Command::Check(Lazy(a)) => check::run(a),
        Command::Diff(Lazy(a)) => diff::run(a),
        Command::Architecture(Lazy(a)) => paths::architecture_cmd(a),
        Command::Paths(Lazy(a)) => paths::paths_cmd(a),
        Command::E2e(Lazy(a)) => paths::e2e_cmd(a),
        Command::Age(Lazy(a)) => paths::age_cmd(a),
        Command::Export(Lazy(a)) => export::run(a),
        Command::Report(Lazy(a)) => report::run(a),
        Command::Record(Lazy(a)) => record::record(a),
        Command::Live(Lazy(a)) => live::run(a),
        Command::Create(Lazy(a)) => record::create(a, false),
        Command::Start(Lazy(a)) => record::start(a),
        Command::Stop(Lazy(a)) => record::control(a, rostrace_session::Verb::Stop),
        Command::Pause(Lazy(a)) => record::control(a, rostrace_session::Verb::Pause),
        Command::Resume(Lazy(a)) => record::control(a, rostrace_session::Verb::Resume),
        Command::Snapshot(Lazy(a)) => record::snapshot(a),
        Command::List(Lazy(a)) => record::list(a),
        Command::Lib(Lazy(a)) => record::lib(a),
        Command::ClockRecorder(Lazy(a)) => record::clock_recorder(a),
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            // Standard output closed by its reader (`| head`): it has read what it wanted.
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return ExitCode::SUCCESS;
            }
            crate::out::errln!("rostrace: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Each subcommand, once built (its arguments added late), keeps its own description (the
    /// one `rostrace --help` lists), not its arguments' struct's, and has its arguments.
    #[test]
    fn lazily_built_subcommands_keep_their_descriptions() {
        let listed: Vec<(String, Option<String>)> = Cli::command()
            .get_subcommands()
            .map(|s| (s.get_name().to_string(), s.get_about().map(|a| a.to_string())))
            .collect();
        assert_eq!(listed.len(), 23);
        let mut built = Cli::command();
        built.build();
        for (name, about) in listed {
            let sub = built.find_subcommand(&name).expect("subcommand");
            assert!(about.is_some(), "{name}");
            assert_eq!(sub.get_about().map(|a| a.to_string()), about, "{name}");
            assert!(sub.get_arguments().any(|a| a.get_id() != "help"), "{name} has no arguments");
        }
    }

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }
}
