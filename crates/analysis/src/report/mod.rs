//! The report of the linked tables, one section per file: callbacks ([`callbacks`]), time per
//! process, node and thread and executor phases ([`threads`]), topics ([`topics`]), nodes,
//! executors and lifecycles ([`nodes`]), services ([`services`]); the notes
//! ([`crate::notes`]) and the system analyses ([`crate::system`]) beside them.

mod callbacks;
mod filter;
mod hosts;
mod names;
mod nodes;
pub(crate) mod services;
mod threads;
mod topics;
mod totals;

pub use callbacks::CallbackReport;
pub use hosts::{ClockSource, HostClock};
pub use nodes::{ExecutorReport, NodeReport, TransitionReport};
pub use services::ServiceReport;
pub(crate) use services::{exchanged, ServiceTotals};
pub use threads::{ExecutorThread, TimeShare};
pub use topics::{PairReport, ReasonCount, TopicReport};
pub(crate) use totals::{Added, Grid, Totals};

use crate::link::Linked;
use crate::link::{LinkedPublication, LinkedTake, View};
use crate::model::Process;
use crate::tables::ReadError;
use serde::Serialize;

/// The whole result, for the terminal report and JSON.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// Events read.
    pub events: u64,
    /// ROS 2 events used.
    pub ros_events: u64,
    /// First event (ns).
    pub begin_ns: Option<i64>,
    /// Last event (ns).
    pub end_ns: Option<i64>,
    /// The time window analyzed (ns since the epoch), when one was given.
    pub window_ns: Option<(i64, i64)>,
    /// The time base of the times since the epoch when it is not the trace's clock: `sim` after
    /// [`Report::map_times`] to sim time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<&'static str>,
    /// What the trace cannot show, and why.
    pub notes: Vec<crate::notes::Note>,
    /// Errors met while reading (also among the warnings).
    pub read_errors: Vec<ReadError>,
    /// Processes.
    pub processes: Vec<Process>,
    /// Nodes.
    pub nodes: Vec<NodeReport>,
    /// Topics.
    pub topics: Vec<TopicReport>,
    /// Callbacks, by total time.
    pub callbacks: Vec<CallbackReport>,
    /// Callback time per process.
    pub per_process: Vec<TimeShare>,
    /// Callback time per node.
    pub per_node: Vec<TimeShare>,
    /// Callback time per thread.
    pub per_thread: Vec<TimeShare>,
    /// Executors and callback groups.
    pub executors: Vec<ExecutorReport>,
    /// Executor phases per thread.
    pub executor_threads: Vec<ExecutorThread>,
    /// Services with request/response instances.
    pub services: Vec<ServiceReport>,
    /// Lifecycle transitions.
    pub lifecycle_transitions: Vec<TransitionReport>,
    /// Messages matched in all.
    pub flows_matched: u64,
    /// Takes not matched in all.
    pub flows_unmatched: u64,
    /// `callback_end` without a start.
    pub unmatched_callback_ends: u64,
    /// Discarded events.
    pub discarded_events: u64,
    /// Warnings.
    pub warnings: Vec<String>,
    /// The hosts of recordings of several hosts, and how their clocks were aligned (none for
    /// one host): see [`crate::hosts`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostClock>,
    /// System analyses (kernel and userspace events beside the ROS 2 ones), when the trace has
    /// their events.
    pub system: crate::system::SystemReport,
    /// The longest end-to-end paths between sources and sinks, when asked for
    /// ([`crate::paths::longest_paths`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub longest_paths: Option<crate::paths::LongestPaths>,
    /// How the analysis was streamed, when it was ([`crate::Streaming`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streamed: Option<crate::Streamed>,
}

impl Report {
    /// Maps the times since the epoch (span, window, memory peaks and timelines) with `f` into
    /// the time base `base` (e.g. `sim`); durations and latencies stay as they are. Open ends
    /// of a window (`i64::MIN`, `i64::MAX`) stay open.
    pub fn map_times(&mut self, base: &'static str, f: impl Fn(i64) -> i64) {
        let g = |t: i64| if t == i64::MIN || t == i64::MAX { t } else { f(t) };
        self.begin_ns = self.begin_ns.map(g);
        self.end_ns = self.end_ns.map(g);
        self.window_ns = self.window_ns.map(|(a, b)| (g(a), g(b)));
        if let Some(m) = &mut self.system.memory {
            for p in &mut m.processes {
                p.max_at_ns = g(p.max_at_ns);
                for point in &mut p.timeline {
                    point.0 = g(point.0);
                }
            }
        }
        self.time = Some(base);
    }
}

/// The callbacks and topics of what `a` holds from `from` (inclusive) to `to` (exclusive), the
/// rest of the report left empty: each callback's runs that started then; each topic's
/// publications and takes made then, and the messages (matched publications and takes, and
/// their latencies) published then. Consecutive slices of time add up to the counts of the
/// whole time: a follower of a recording being written keeps its totals so, from analyses of
/// its recent events, each slice taken once what starts in it is complete.
pub fn slice(a: &View<'_>, from: i64, to: i64) -> Report {
    let inside = |t: i64| from <= t && t < to;
    let runs: Vec<_> = a.runs.iter().filter(|r| inside(r.run.start)).copied().collect();
    let names = names::Names::new(a.model);
    let callbacks = callbacks::section(&View { runs: &runs, ..*a }, &names).callbacks;
    let flows: Vec<_> =
        a.flows.iter().filter(|f| inside(a.pubs[f.publication as usize].publication.ts)).cloned().collect();
    let mut tally = crate::link::TopicTally::default();
    for LinkedPublication { publication: p, topic } in a.pubs {
        if let Some(topic) = topic.as_ref().filter(|_| inside(p.ts)) {
            tally.entry(topic.clone()).or_default().pubs += 1;
        }
    }
    for LinkedTake { take: t, subscription: sub } in a.takes {
        if let Some(s) = sub.filter(|_| t.taken && inside(t.ts)) {
            // The topic's shared name: no string made per take.
            tally.entry(names.text(&a.model.subscriptions.get(s).topic)).or_default().takes += 1;
        }
    }
    let topics = topics::section(a.model, &View { flows: &flows, ..*a }, &tally, &names);
    Report { callbacks, topics, ..Report::default() }
}

/// The report being made, in two steps: the topics first ([`begin`], from the runtime tables:
/// publications, takes and flows), then the rest ([`Reporting::finish`], which needs none of
/// those tables), so that a caller that keeps no table can give them back in between and not
/// hold them beside the rows of every section.
pub(crate) struct Reporting<'m> {
    names: names::Names<'m>,
    linked: Linked,
    topics: Vec<TopicReport>,
    flows_matched: u64,
    flows_unmatched: u64,
}

/// The first step of the report of linked tables (see [`crate::link`]): the topics section.
/// `model` is `a`'s, borrowed for as long as the report is being made (the tables of `a` for
/// this step only).
pub(crate) fn begin<'m>(model: &'m crate::model::Model, a: &View<'_>, mut linked: Linked) -> Reporting<'m> {
    let names = names::Names::new(model);
    let tally = std::mem::take(&mut linked.topics);
    let topics = topics::section(model, a, &tally, &names);
    let flows_unmatched: u64 = tally.values().map(|t| t.unmatched).sum();
    Reporting { names, linked, topics, flows_matched: a.flows.len() as u64, flows_unmatched }
}

impl<'m> Reporting<'m> {
    /// The report, with the sections of the model, of the callback runs and of the standard
    /// handlers among the analysis's (`a`'s publications, takes and flows are not read).
    pub(crate) fn finish(self, a: &View<'m>) -> Report {
        let Reporting { names, linked: l, topics, flows_matched, flows_unmatched } = self;
        let Linked {
            unmatched_ends,
            ends_alone: _,
            events,
            ros_events,
            range,
            ranges: _,
            errors,
            discarded,
            window,
            unused_events,
            mut warnings,
            topics: _,
        } = l;
        let m = &a.model;
        let duration = range.map(|(a, b)| (b - a).max(1)).unwrap_or(1);

        let cbs = callbacks::section(a, &names);
        for cb in &cbs.callbacks {
            if cb.unfinished > 0 {
                warnings.push(format!(
                    "callback {:#x} of process {} ({}) started {} time(s) without ending before the trace did",
                    cb.address, cb.vpid, cb.symbol, cb.unfinished
                ));
            }
        }
        let unmatched_total: u64 = unmatched_ends.values().sum();
        if unmatched_total > 0 {
            warnings.push(format!(
                "{unmatched_total} callback_end event(s) without a callback_start ({} started mid-callback)",
                if window.is_some() { "the window" } else { "the trace" }
            ));
        }
        let shares = threads::time_shares(&cbs.tally, cbs.total_ns, duration, &names);
        let notes = crate::notes::notes(
            m,
            &crate::notes::Inputs {
                unused_events: &unused_events,
                unknown_callbacks: &cbs.tally.unknown_callbacks,
                open_runs: &cbs.tally.open_runs,
                unmatched_ends: &unmatched_ends,
                service_runs: &cbs.tally.service_runs,
            },
        );
        let system = {
            let names: crate::collections::HashMap<(u32, i64, u64), (&str, &str)> =
                cbs.callbacks.iter().map(|c| ((c.trace, c.vpid, c.address), (&*c.node, &*c.symbol))).collect();
            crate::system::SystemReport::of(a.handlers, &names)
        };
        // The sections' working tables are given back before the next section is made, so that
        // the largest of them is not held beside the rows of all the others.
        let callbacks = cbs.callbacks;
        drop(cbs.tally);
        if flows_unmatched > 0 {
            warnings.push(format!("{flows_unmatched} taken message(s) could not be matched to their publication"));
        }
        warnings.extend(topics::negative_latencies(&topics));
        let services = services::section(a);
        warnings.extend(services::negative_latencies(&services));
        let mut processes: Vec<Process> = m.processes.values().cloned().collect();
        processes.sort_by_key(|p| (p.trace, p.vpid));
        Report {
            system,
            longest_paths: None,
            events,
            ros_events,
            begin_ns: range.map(|r| r.0),
            end_ns: range.map(|r| r.1),
            window_ns: window,
            time: None,
            notes,
            read_errors: errors,
            processes,
            nodes: nodes::section(m, &names),
            flows_matched,
            flows_unmatched,
            topics,
            callbacks,
            per_process: shares.per_process,
            per_node: shares.per_node,
            per_thread: shares.per_thread,
            executors: nodes::executors(m),
            executor_threads: threads::executor_threads(a, &names),
            services,
            lifecycle_transitions: nodes::lifecycle_transitions(m),
            unmatched_callback_ends: unmatched_total,
            discarded_events: discarded,
            warnings,
            hosts: Vec::new(),
            streamed: None,
        }
    }
}
