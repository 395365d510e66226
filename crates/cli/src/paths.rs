//! `rostrace architecture`, `rostrace paths` and `rostrace e2e`: the architecture of a traced
//! system, the paths through it, and end-to-end latency along a path, message by message.

use crate::args::{ArchitectureArg, Input, TraceArgs};
use crate::format::name as esc;
use crate::out::fail;
use rostrace_analysis::paths::{
    age_paths, data_age, e2e_summary, find, rank_streamed, search_query, streamed_e2e_summary, yaml, AgeTable,
    Architecture, Case, Found, PathIndex, PathOptions, Query, SearchLimits,
};

use rostrace_analysis::Analysis;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `rostrace architecture`.
#[derive(clap::Args)]
pub struct ArchArgs {
    #[command(flatten)]
    traces: TraceArgs,
    /// Write the architecture (CARET's YAML) to FILE instead of standard output (`-`: standard
    /// output all the same).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Apply an architecture file first (CARET's YAML: its message contexts and named paths).
    #[arg(long, value_name = "FILE")]
    architecture: Option<PathBuf>,
    #[command(flatten)]
    stream: crate::args::StreamArgs,
}

/// How paths are followed: the architecture file and CARET's two options (`paths`, `e2e`,
/// `export --path`).
#[derive(clap::Args)]
pub struct Following {
    #[command(flatten)]
    pub architecture: ArchitectureArg,
    /// Start each path at the start of the first node's callback that published, not at the
    /// publication (CARET's include_first_callback).
    #[arg(long)]
    include_first_callback: bool,
    /// End each path at the end of the last node's callback, not at its start (CARET's
    /// include_last_callback).
    #[arg(long)]
    include_last_callback: bool,
}

impl Following {
    /// CARET's options.
    pub fn options(&self) -> PathOptions {
        PathOptions {
            include_first_callback: self.include_first_callback,
            include_last_callback: self.include_last_callback,
        }
    }
}

/// Arguments shared by `paths` and `e2e`.
#[derive(clap::Args)]
pub struct PathArgs {
    #[command(flatten)]
    following: Following,
    /// Also write the results as JSON to FILE (`-`: standard output, instead of the text).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// Arguments of `rostrace paths`.
#[derive(clap::Args)]
pub struct SearchArgs {
    #[command(flatten)]
    traces: TraceArgs,
    /// Where paths start: a node (`/ns/name`) or a topic.
    #[arg(long, value_name = "NODE|TOPIC")]
    from: String,
    /// Where paths end: a node or a topic.
    #[arg(long, value_name = "NODE|TOPIC")]
    to: String,
    /// A node or topic the paths pass, in order (repeatable).
    #[arg(long, value_name = "NODE|TOPIC")]
    through: Vec<String>,
    /// Most nodes on a path (CARET's max_node_depth).
    #[arg(long, default_value_t = 15)]
    max_depth: usize,
    /// Most paths to find.
    #[arg(long, default_value_t = 1000)]
    max_paths: usize,
    /// Most states the search expands (nodes put on the path being built): its work, bounded
    /// where many nodes share topics and the simple paths grow exponentially.
    #[arg(long, default_value_t = SearchLimits::DEFAULT_MAX_EXPANSIONS)]
    max_expansions: usize,
    /// Paths shown in the text (0: all).
    #[arg(long, default_value_t = 20)]
    top: usize,
    #[command(flatten)]
    common: PathArgs,
    #[command(flatten)]
    stream: crate::args::StreamArgs,
}

/// Arguments of `rostrace e2e`.
#[derive(clap::Args)]
pub struct E2eArgs {
    #[command(flatten)]
    traces: TraceArgs,
    /// The path: nodes, comma-separated, with the topic between two nodes where they
    /// communicate over several (`/a,/b,/c` or `/a,/t1,/b,/t2,/c`).
    #[arg(long, value_name = "NODE,...", conflicts_with = "name")]
    path: Option<String>,
    /// A named path of the --architecture file.
    #[arg(long, value_name = "PATH", requires = "architecture")]
    name: Option<String>,
    /// Response-time case: all, best, worst, worst-with-external-latency (default: every one).
    #[arg(long, value_name = "CASE", value_parser = parse_case)]
    case: Option<Case>,
    #[command(flatten)]
    common: PathArgs,
    #[command(flatten)]
    stream: crate::args::StreamArgs,
}

/// Arguments of `rostrace age`.
#[derive(clap::Args)]
pub struct AgeArgs {
    #[command(flatten)]
    traces: TraceArgs,
    /// The node whose inputs' data age is measured.
    #[arg(long, value_name = "NODE")]
    to: String,
    /// Only the data of this source node (repeatable; default: every source, a node publishing
    /// a topic none of its inputs feeds).
    #[arg(long, value_name = "NODE")]
    from: Vec<String>,
    /// Most nodes on a path (CARET's max_node_depth).
    #[arg(long, default_value_t = 15)]
    max_depth: usize,
    /// Most paths to follow from each source.
    #[arg(long, default_value_t = 1000)]
    max_paths: usize,
    /// Most states each search expands.
    #[arg(long, default_value_t = SearchLimits::DEFAULT_MAX_EXPANSIONS)]
    max_expansions: usize,
    #[command(flatten)]
    common: PathArgs,
    #[command(flatten)]
    stream: crate::args::StreamArgs,
}

fn parse_case(s: &str) -> Result<Case, String> {
    Case::from_name(s).ok_or_else(|| format!("expected all, best, worst or worst-with-external-latency, not {s:?}"))
}

/// Why the trace may show no path: the notes about what it lacks, and an empty architecture.
fn explain_missing(a: &Analysis, arch: &Architecture) {
    if arch.communications.is_empty() {
        crate::out::errln!(
            "rostrace: the trace shows no communication between nodes: it needs the initialization events \
             (rcl_node_init, rcl_publisher_init, rcl_subscription_init; recorded when the session starts \
             before the processes, or replayed by `rostrace start`)"
        );
    }
    for n in &a.report.notes {
        if n.metric.contains("latency") || n.metric.contains("callback") || n.metric.contains("ROS 2 analysis") {
            crate::out::errln!("rostrace: note: {}", n.summary());
        }
    }
}

/// The traces analysed for their paths, with the architecture file `file` applied: streamed
/// (`stream`) when the recording is long, the paths then followed over a second reading, the
/// tables kept when not. `Err`: what the command returns (nothing could be read).
/// A recording loaded for the path commands: what reads it again (a streamed analysis follows
/// paths over a second reading), whether it was read whole, its analysis, and its architecture
/// (with the architecture file applied).
struct Opened {
    input: Input,
    clean: bool,
    an: Analysis,
    arch: Architecture,
}

/// The error `e` about a path in `an` (architecture `arch`), after saying why nodes or topics
/// may be missing.
fn missing(an: &Analysis, arch: &Architecture, e: String) -> std::io::Result<ExitCode> {
    explain_missing(an, arch);
    fail(e)
}

/// `traces` loaded, with the architecture `file` if given, streamed as `stream` says.
fn load(
    traces: &TraceArgs,
    file: Option<&std::path::Path>,
    stream: &crate::args::StreamArgs,
) -> Result<Opened, std::io::Result<ExitCode>> {
    let mut input = Input::new(traces).architecture_file(file).map_err(fail)?;
    stream.apply(&mut input.options);
    // (A consumer of the slices: the analysis may stream, and keeps its tables when it does not.)
    let loaded = input.load_streaming(|_| {}).ok_or(Ok(ExitCode::from(1)))?;
    let (clean, an) = (loaded.clean(), loaded.analysis);
    let arch = input.architecture(&an);
    Ok(Opened { input, clean, an, arch })
}

/// `rostrace architecture`.
pub fn architecture_cmd(a: ArchArgs) -> std::io::Result<ExitCode> {
    let Opened { clean, an, arch, .. } = match load(&a.traces, a.architecture.as_deref(), &a.stream) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let text = yaml::export(&arch);
    match a.output.as_deref().filter(|p| !crate::out::is_stdout(p)) {
        Some(p) => {
            if let Err(e) = std::fs::write(p, &text) {
                return fail(format!("-o {}: {e}", p.display()));
            }
            let paths: Vec<_> = arch.nodes.iter().flat_map(|n| &n.paths).collect();
            let observed = paths.iter().filter(|p| p.source == "observed").count();
            let from_file = paths.iter().filter(|p| p.source == "architecture file").count();
            let linked = paths.iter().filter(|p| p.source == "message link").count();
            let inferred = paths.iter().filter(|p| p.source == "inferred").count();
            let services = paths.iter().filter(|p| p.source == "service call").count();
            crate::out::errln!(
                "{}: {} nodes, {} callbacks, {} communications, {} executors, {} node paths ({} observed \
                 callback_chain, {} from message links, {} through service calls, {} from the architecture file, \
                 {} inferred use_latest_message, {} use_latest_message by default), {} named paths",
                p.display(),
                arch.nodes.len(),
                arch.nodes.iter().map(|n| n.callbacks.len()).sum::<usize>(),
                arch.communications.len(),
                arch.executors.len(),
                paths.len(),
                observed,
                linked,
                services,
                from_file,
                inferred,
                paths.len() - observed - linked - services - from_file - inferred,
                arch.named_paths.len()
            );
        }
        None => std::io::Write::write_all(&mut crate::out::stdout(), text.as_bytes())?,
    }
    if arch.nodes.is_empty() {
        explain_missing(&an, &arch);
    }
    Ok(if clean { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// The search's limits as given on the command line, checked.
fn search_limits(max_depth: usize, max_paths: usize, max_expansions: usize) -> Result<SearchLimits, &'static str> {
    match (max_depth < 2, max_paths == 0, max_expansions == 0) {
        (true, _, _) | (_, true, _) => Err("--max-depth must be 2 or more and --max-paths 1 or more"),
        (_, _, true) => Err("--max-expansions must be 1 or more"),
        _ => Ok(SearchLimits { max_depth, max_paths, max_expansions }),
    }
}

/// `rostrace paths`.
pub fn paths_cmd(a: SearchArgs) -> std::io::Result<ExitCode> {
    let limits = match search_limits(a.max_depth, a.max_paths, a.max_expansions) {
        Ok(l) => l,
        Err(e) => return fail(e),
    };
    let Opened { mut input, mut clean, an, arch } =
        match load(&a.traces, a.common.following.architecture.architecture.as_deref(), &a.stream) {
            Ok(x) => x,
            Err(code) => return code,
        };
    let query = Query {
        from: &a.from,
        through: &a.through,
        to: &a.to,
        labels: ["--from", "--through", "--to"],
        limits,
        options: a.common.following.options(),
    };
    let found = match an.report.streamed {
        None => find(&an, &arch, &query, a.traces.jobs),
        // The paths searched in the architecture, then followed over the recording read again.
        Some(_) => search_query(&arch, &query).and_then(|(specs, outcome)| {
            let with: Vec<_> = specs.iter().map(|s| (s.clone(), query.options)).collect();
            let (done, ok) =
                crate::follow::follow_streamed(&mut input, &arch, &with, &[], &mut crate::follow::Nowhere)?;
            clean &= ok;
            let followed = specs.into_iter().zip(done).filter_map(|(s, d)| Some((s, d?))).collect();
            Ok(Found { ranked: rank_streamed(&arch, followed), outcome })
        }),
    };
    let Found { ranked, outcome } = match found {
        Ok(x) => x,
        Err(e) => return missing(&an, &arch, e),
    };
    #[derive(Serialize)]
    struct Out<'a> {
        from: &'a str,
        to: &'a str,
        through: &'a [String],
        max_depth: usize,
        max_paths: usize,
        truncated_at_max_paths: bool,
        truncated_at_max_depth: bool,
        /// Only when true (the output is otherwise what it was before the budget).
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        truncated_at_max_expansions: bool,
        paths: &'a [rostrace_analysis::paths::RankedPath],
    }
    let out = Out {
        from: &a.from,
        to: &a.to,
        through: &a.through,
        max_depth: a.max_depth,
        max_paths: a.max_paths,
        truncated_at_max_paths: outcome.truncated_paths,
        truncated_at_max_depth: outcome.truncated_depth,
        truncated_at_max_expansions: outcome.truncated_work,
        paths: &ranked,
    };
    if let Err(e) = crate::out::emit(a.common.json.as_deref(), &out, || {
        crate::text::paths::render_paths(
            crate::text::paths::Search {
                from: &a.from,
                to: &a.to,
                through: &a.through,
                include_first_callback: a.common.following.include_first_callback,
                include_last_callback: a.common.following.include_last_callback,
                top: a.top,
            },
            &ranked,
        )
    })? {
        return fail(e);
    }
    if outcome.truncated_paths {
        crate::out::errln!(
            "rostrace: warning: the search stopped at --max-paths {}: there are more paths",
            a.max_paths
        );
    }
    if outcome.truncated_depth {
        crate::out::errln!("rostrace: note: some branches were cut at --max-depth {} nodes", a.max_depth);
    }
    if outcome.truncated_work {
        crate::out::errln!(
            "rostrace: warning: the search stopped at its work budget (--max-expansions {}): there may be more \
             paths; raise --max-expansions, or lower --max-depth or add --through",
            a.max_expansions
        );
    }
    if ranked.is_empty() && outcome.truncated_work {
        crate::out::errln!("rostrace: no path from {} to {} found within the work budget", a.from, a.to);
    } else if ranked.is_empty() {
        crate::out::errln!("rostrace: no path from {} to {} in the trace", a.from, a.to);
        explain_missing(&an, &arch);
    }
    Ok(if clean { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// `rostrace e2e`.
pub fn e2e_cmd(a: E2eArgs) -> std::io::Result<ExitCode> {
    if a.path.is_none() && a.name.is_none() {
        return fail("give the path: --path NODE,NODE,... or --architecture FILE --name PATH");
    }
    let Opened { mut input, mut clean, an, arch } =
        match load(&a.traces, a.common.following.architecture.architecture.as_deref(), &a.stream) {
            Ok(x) => x,
            Err(code) => return code,
        };
    let spec = match (&a.path, &a.name) {
        (Some(p), _) => arch.parse_path(p, "--path"),
        (None, Some(n)) => arch.named_path(n, "--name"),
        (None, None) => unreachable!("checked above"),
    };
    let spec = match spec {
        Ok(s) => s,
        Err(e) => return missing(&an, &arch, e),
    };
    let opt = a.common.following.options();
    let cases: Vec<Case> = match a.case {
        Some(c) => vec![c],
        None => Case::ALL.to_vec(),
    };
    let index;
    let records;
    let mut spill = None;
    let streamed;
    let mut out = if an.report.streamed.is_some() {
        // The recording read again, slice by slice, the path followed in each; its records kept
        // in files for the JSON only (the text is the summary's).
        let files = || format!("the records' files in {}", std::env::temp_dir().display());
        if a.common.json.is_some() {
            match crate::spill::Spill::new(&cases) {
                Ok(s) => spill = Some(s),
                Err(e) => return fail(format!("{}: {e}", files())),
            }
        }
        let to: &mut dyn crate::follow::Select = match &mut spill {
            Some(s) => s,
            None => &mut crate::follow::Nowhere,
        };
        streamed = match crate::follow::follow_streamed(&mut input, &arch, &[(spec.clone(), opt)], &cases, to) {
            Ok((mut done, ok)) => {
                clean &= ok;
                match done.pop().flatten() {
                    Some(p) => p,
                    None => return fail(format!("the path {} cannot be followed", spec.label())),
                }
            }
            Err(e) => return fail(e),
        };
        match &mut spill {
            Some(s) => {
                if let Err(e) = s.done() {
                    return fail(format!("{}: {e}", files()));
                }
                streamed_e2e_summary(&arch, &spec, &streamed, opt, s.rows(), |c| s.responses(c))
            }
            None => streamed_e2e_summary(&arch, &spec, &streamed, opt, std::iter::empty, |_| {
                rostrace_analysis::paths::Each::Held(Vec::new())
            }),
        }
    } else {
        index = PathIndex::new(&an);
        records = match index.records(&arch, &spec, opt) {
            Ok(r) => r,
            Err(e) => return missing(&an, &arch, e),
        };
        e2e_summary(&arch, &spec, &records, opt, &cases)
    };
    if !an.report.hosts.is_empty() {
        let (crossed, bound) = rostrace_analysis::hosts::path_uncertainty(&an, &spec.nodes);
        (out.hosts_crossed, out.clock_uncertainty_ns) = (Some(crossed), bound.filter(|_| crossed > 0));
    }
    if let Err(e) = crate::out::emit(a.common.json.as_deref(), &out, || crate::text::paths::render_e2e(&out))? {
        return fail(e);
    }
    if out.counts.records == 0 {
        crate::out::errln!("rostrace: {} published no {} in the trace", esc(&spec.nodes[0]), esc(&spec.topics[0]));
        explain_missing(&an, &arch);
    } else if out.counts.complete == 0 {
        crate::out::errln!("rostrace: no message went the whole way along the path");
        explain_missing(&an, &arch);
    }
    drop(out);
    drop(spill);
    Ok(if clean { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// `rostrace age`.
pub fn age_cmd(a: AgeArgs) -> std::io::Result<ExitCode> {
    let limits = match search_limits(a.max_depth, a.max_paths, a.max_expansions) {
        Ok(l) => l,
        Err(e) => return fail(e),
    };
    let Opened { mut input, mut clean, an, arch } =
        match load(&a.traces, a.common.following.architecture.architecture.as_deref(), &a.stream) {
            Ok(x) => x,
            Err(code) => return code,
        };
    let p = match age_paths(&arch, &a.from, &a.to, ["--from", "--to"], limits) {
        Ok(p) => p,
        Err(e) => return missing(&an, &arch, e),
    };
    let opt = a.common.following.options();
    let age = match an.report.streamed {
        None => data_age(&PathIndex::new(&an), &arch, &p, opt),
        // The paths followed over the recording read again, their records gathered as they come.
        Some(_) => {
            struct Table(AgeTable);
            impl crate::follow::Select for Table {
                fn select(&mut self, k: usize) -> &mut dyn rostrace_analysis::paths::PathOutput {
                    self.0.current(k)
                }
            }
            let mut t = Table(AgeTable::new(&p));
            let with: Vec<_> = p.paths.iter().map(|(_, s)| (s.clone(), opt)).collect();
            match crate::follow::follow_streamed(&mut input, &arch, &with, &[], &mut t) {
                Ok((_, ok)) => clean &= ok,
                Err(e) => return fail(e),
            }
            t.0.finish(&p)
        }
    };
    if let Err(e) = crate::out::emit(a.common.json.as_deref(), &age, || crate::text::paths::render_age(&age, opt))? {
        return fail(e);
    }
    if p.outcome.truncated_paths || p.outcome.truncated_work {
        crate::out::errln!(
            "rostrace: warning: a search stopped at its limits (--max-paths {}, --max-expansions {}): the data of some \
             paths may be younger than said",
            a.max_paths,
            a.max_expansions
        );
    }
    if p.paths.is_empty() {
        crate::out::errln!("rostrace: no path from a source to {} in the trace", esc(&p.sink));
        explain_missing(&an, &arch);
    }
    Ok(if clean { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
