//! The analysis as rows of the tables of [`crate::schema`], written to a [`Sink`].

use crate::schema::{self, Column};
use rostrace_analysis::paths::{PathCounts, PathRecords, PathSpec, RecordStatus, StreamedPath};
use rostrace_analysis::ExecutorHandler;
use rostrace_analysis::MatchBy;
use rostrace_analysis::ServiceHandler;
use rostrace_analysis::Stats;
use rostrace_analysis::{Analysis, LinkedPublication, LinkedRun, LinkedTake};
use rostrace_analysis::{Key, Model};
use std::borrow::Cow;
use std::collections::HashMap;
use std::io;

/// Rows per Arrow record batch and per Parquet row group.
pub(crate) const BATCH: usize = 64 * 1024;

/// A cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell<'a> {
    /// No value.
    Null,
    /// Signed integer.
    I64(i64),
    /// Unsigned integer.
    U64(u64),
    /// Floating point number.
    F64(f64),
    /// Boolean.
    Bool(bool),
    /// String.
    Str(Cow<'a, str>),
}

impl Cell<'_> {
    /// The cell as a signed integer column holds it (none: null, or not representable).
    pub fn to_i64(&self) -> Option<i64> {
        match self {
            Cell::I64(v) => Some(*v),
            Cell::U64(v) => i64::try_from(*v).ok(),
            Cell::Bool(v) => Some(*v as i64),
            _ => None,
        }
    }

    /// The cell as an unsigned integer column holds it.
    pub fn to_u64(&self) -> Option<u64> {
        match self {
            Cell::U64(v) => Some(*v),
            Cell::I64(v) => u64::try_from(*v).ok(),
            _ => None,
        }
    }

    /// The cell as a floating point column holds it.
    pub fn to_f64(&self) -> Option<f64> {
        match self {
            Cell::F64(v) => Some(*v),
            Cell::I64(v) => Some(*v as f64),
            Cell::U64(v) => Some(*v as f64),
            _ => None,
        }
    }

    /// The cell as a boolean column holds it.
    pub fn to_bool(&self) -> Option<bool> {
        match self {
            Cell::Bool(v) => Some(*v),
            _ => None,
        }
    }

    /// The cell as a string column holds it.
    pub fn to_text(&self) -> Option<Cow<'_, str>> {
        match self {
            Cell::Null => None,
            Cell::Str(s) => Some(Cow::Borrowed(s)),
            Cell::I64(v) => Some(Cow::Owned(v.to_string())),
            Cell::U64(v) => Some(Cow::Owned(v.to_string())),
            Cell::F64(v) => Some(Cow::Owned(v.to_string())),
            Cell::Bool(v) => Some(Cow::Owned(v.to_string())),
        }
    }
}

impl<'a> From<&'a str> for Cell<'a> {
    fn from(s: &'a str) -> Self {
        Cell::Str(Cow::Borrowed(s))
    }
}

impl From<String> for Cell<'_> {
    fn from(s: String) -> Self {
        Cell::Str(Cow::Owned(s))
    }
}

impl From<i64> for Cell<'_> {
    fn from(v: i64) -> Self {
        Cell::I64(v)
    }
}

impl From<u64> for Cell<'_> {
    fn from(v: u64) -> Self {
        Cell::U64(v)
    }
}

impl From<bool> for Cell<'_> {
    fn from(v: bool) -> Self {
        Cell::Bool(v)
    }
}

impl<'a, T: Into<Cell<'a>>> From<Option<T>> for Cell<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Cell::Null, Into::into)
    }
}

/// Where a table's rows go.
pub trait TableWriter {
    /// One row, a cell per column.
    fn row(&mut self, cells: &[Cell<'_>]) -> io::Result<()>;
    /// The table is complete.
    fn finish(self: Box<Self>) -> io::Result<()>;
}

/// Where tables go.
pub trait Sink {
    /// A table named `name` (`callbacks`, `events/ros2.callback_start`) with these columns.
    /// This crate's sinks refuse a name that is not a path of file names below their directory
    /// ([`crate::names::check_table`]).
    fn table(&mut self, name: &str, columns: &[Column]) -> io::Result<Box<dyn TableWriter>>;
}

/// How many rows each table got.
pub type Counts = Vec<(String, u64)>;

/// A table being written; where the schema has the trace's host after the trace, its cell is
/// added here to each row, from the trace's index.
struct Counted<'h> {
    w: Box<dyn TableWriter>,
    n: u64,
    width: usize,
    host_at: Option<usize>,
    traces: Cow<'h, [(std::path::PathBuf, String)]>,
}

impl Counted<'_> {
    fn row(&mut self, cells: &[Cell<'_>]) -> io::Result<()> {
        self.n += 1;
        let Some(at) = self.host_at else {
            debug_assert_eq!(cells.len(), self.width);
            return self.w.row(cells);
        };
        debug_assert_eq!(cells.len() + 1, self.width);
        let host = cells[at - 1].to_i64().and_then(|t| self.traces.get(t as usize)).map(|t| t.1.as_str());
        let mut row = Vec::with_capacity(self.width);
        row.extend_from_slice(&cells[..at]);
        row.push(host.into());
        row.extend_from_slice(&cells[at..]);
        self.w.row(&row)
    }
}

fn open<'h>(
    sink: &mut dyn Sink,
    t: &schema::Table,
    traces: Cow<'h, [(std::path::PathBuf, String)]>,
) -> io::Result<Counted<'h>> {
    // (The traces and processes tables have a host column of their own, not right after the trace.)
    let host_at =
        t.columns.iter().position(|c| c.name == "host").filter(|&i| i > 0 && t.columns[i - 1].name == "trace");
    Ok(Counted { w: sink.table(t.name, &t.columns)?, n: 0, width: t.columns.len(), host_at, traces })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn node_name(m: &Model, node: Option<u32>) -> Option<String> {
    node.map(|n| m.nodes.get(n).full_name())
}

fn nz(v: u64) -> Option<u64> {
    (v != 0).then_some(v)
}

fn key_cells(k: Key) -> [Cell<'static>; 2] {
    [Cell::I64(k.0 as i64), Cell::I64(k.1)]
}

/// A row of a model object: recording, trace, vpid, handle, then `rest`.
fn keyed<'a>(recording: &'a str, k: Key, rest: impl IntoIterator<Item = Cell<'a>>) -> Vec<Cell<'a>> {
    let mut v = vec![Cell::Str(Cow::Borrowed(recording)), Cell::I64(k.0 as i64), Cell::I64(k.1), Cell::U64(k.2)];
    v.extend(rest);
    v
}

/// A row of an instance (a run, a publication, a take): recording, its index, trace, vpid,
/// vtid, then `rest`.
fn instance<'a>(
    recording: &'a str,
    i: usize,
    at: (u32, i64, i64),
    rest: impl IntoIterator<Item = Cell<'a>>,
) -> Vec<Cell<'a>> {
    let mut v = vec![
        Cell::Str(Cow::Borrowed(recording)),
        Cell::I64(i as i64),
        Cell::I64(at.0 as i64),
        Cell::I64(at.1),
        Cell::I64(at.2),
    ];
    v.extend(rest);
    v
}

/// Mean, p99 and max of `s`, empty when it has no value.
fn stats_cells(s: &rostrace_analysis::Stats) -> [Cell<'static>; 3] {
    let some = s.count > 0;
    [if some { Cell::F64(s.mean) } else { Cell::Null }, some.then_some(s.p99).into(), some.then_some(s.max).into()]
}

/// Writes every table of the analysis (not the raw events: [`crate::events::write`]).
/// `trace_dirs` and `hosts` are the traces' directories and host names, by trace index. The
/// instances' tables of a streamed analysis were written as it went (`streamed`).
pub fn write(
    a: &Analysis,
    services: Option<&ServiceHandler>,
    executors: Option<&ExecutorHandler>,
    traces: &[(String, String)],
    recording: &str,
    sink: &mut dyn Sink,
    streamed: Option<StreamedInstances>,
) -> io::Result<Counts> {
    let mut counts = Counts::new();
    model_tables(a, traces, recording, sink, &mut counts)?;
    match streamed {
        None => instance_tables(a, recording, sink, &mut counts)?,
        Some(s) => counts.extend(s.finish(sink, &a.traces)?),
    }
    // (A streamed analysis's service calls were written with its instances.)
    let services = if a.report.streamed.is_some() { None } else { Some(services) };
    handler_tables(a, services, executors, recording, sink, &mut counts)?;
    debug_assert!(schema::tables()
        .iter()
        .all(|d| schema::PATH_TABLES.contains(&d.name) || counts.iter().any(|(n, _)| n == d.name)));
    Ok(counts)
}

/// The model's tables: traces, processes, nodes, endpoints, timers, services, callbacks, topics.
fn model_tables(
    a: &Analysis,
    traces: &[(String, String)],
    recording: &str,
    sink: &mut dyn Sink,
    counts: &mut Counts,
) -> io::Result<()> {
    let m = &a.model;
    let r = &a.report;
    let rec = || Cell::Str(Cow::Borrowed(recording));
    let mut t = open(sink, &schema::table("traces"), Cow::Borrowed(&a.traces))?;
    for (i, (dir, host)) in traces.iter().enumerate() {
        t.row(&[rec(), Cell::I64(i as i64), dir.as_str().into(), host.as_str().into()])?;
    }
    done(t, "traces", counts)?;

    let mut procs: Vec<_> = m.processes.values().collect();
    procs.sort_by_key(|p| (p.trace, p.vpid));
    let mut t = open(sink, &schema::table("processes"), Cow::Borrowed(&a.traces))?;
    for p in procs {
        t.row(&[
            rec(),
            Cell::I64(p.trace as i64),
            Cell::I64(p.vpid),
            p.host.as_str().into(),
            p.procname.as_str().into(),
            Cell::I64(p.events as i64),
            Cell::I64(p.ros_events as i64),
            p.tracetools_version.as_deref().into(),
            p.distribution.as_deref().into(),
        ])?;
    }
    done(t, "processes", counts)?;

    let mut t = open(sink, &schema::table("nodes"), Cow::Borrowed(&a.traces))?;
    for n in &m.nodes.items {
        let rest = [n.full_name().into(), n.namespace.as_str().into(), Cell::I64(n.created_ns)];
        t.row(&keyed(recording, n.key, rest))?;
    }
    done(t, "nodes", counts)?;

    for (name, reg) in [("publishers", &m.publishers), ("subscriptions", &m.subscriptions)] {
        let mut t = open(sink, &schema::table(name), Cow::Borrowed(&a.traces))?;
        for e in &reg.items {
            let rest = [
                nz(e.rmw).into(),
                node_name(m, e.node).into(),
                e.topic.as_str().into(),
                Cell::I64(e.depth as i64),
                (!e.gid.is_empty()).then(|| hex(&e.gid)).into(),
                Cell::I64(e.created_ns),
            ];
            t.row(&keyed(recording, e.key, rest))?;
        }
        done(t, name, counts)?;
    }

    let mut t = open(sink, &schema::table("timers"), Cow::Borrowed(&a.traces))?;
    // Node timers: an executor's own (rclpy's spin_once timeout timers) are left out.
    let executor_timers = m.executor_timers();
    for (_, x) in m.timers.items.iter().enumerate().filter(|(i, _)| !executor_timers[*i]) {
        let rest = [node_name(m, x.node).into(), Cell::I64(x.period_ns), Cell::I64(x.created_ns)];
        t.row(&keyed(recording, x.key, rest))?;
    }
    done(t, "timers", counts)?;

    let mut t = open(sink, &schema::table("services"), Cow::Borrowed(&a.traces))?;
    for (side, reg) in [("server", &m.services), ("client", &m.clients)] {
        for x in &reg.items {
            let rest = [
                nz(x.rmw).into(),
                side.into(),
                node_name(m, x.node).into(),
                x.name.as_str().into(),
                Cell::I64(x.created_ns),
            ];
            t.row(&keyed(recording, x.key, rest))?;
        }
    }
    done(t, "services", counts)?;

    let mut t = open(sink, &schema::table("callbacks"), Cow::Borrowed(&a.traces))?;
    for c in &r.callbacks {
        let d = &c.duration_ns;
        let has = d.count > 0;
        t.row(&[
            rec(),
            Cell::I64(c.trace as i64),
            Cell::I64(c.vpid),
            Cell::U64(c.address),
            (&*c.node).into(),
            c.kind.into(),
            c.topic.as_deref().into(),
            c.timer_period_ns.into(),
            (&*c.symbol).into(),
            Cell::I64(c.count as i64),
            Cell::I64(c.unfinished as i64),
            Cell::I64(c.total_ns),
            has.then_some(d.min).into(),
            if has { Cell::F64(d.mean) } else { Cell::Null },
            has.then_some(d.p50).into(),
            has.then_some(d.p90).into(),
            has.then_some(d.p99).into(),
            has.then_some(d.max).into(),
            if c.period_ns.count > 0 { Cell::F64(c.period_ns.mean) } else { Cell::Null },
        ])?;
    }
    done(t, "callbacks", counts)?;

    let mut t = open(sink, &schema::table("topics"), Cow::Borrowed(&a.traces))?;
    for x in &r.topics {
        let cells = [
            rec(),
            (&*x.name).into(),
            Cell::I64(x.publishes as i64),
            Cell::I64(x.takes as i64),
            Cell::I64(x.matched as i64),
            Cell::I64(x.unmatched as i64),
            x.dropped.map(|d| d as i64).into(),
        ];
        t.row(
            &cells
                .into_iter()
                .chain(stats_cells(&x.pub_to_take_ns))
                .chain(stats_cells(&x.pub_to_callback_ns))
                .collect::<Vec<_>>(),
        )?;
    }
    done(t, "topics", counts)?;

    let mut t = open(sink, &schema::table("topic_pairs"), Cow::Borrowed(&a.traces))?;
    for x in &r.topics {
        for p in &x.pairs {
            let cells = [
                rec(),
                (&*x.name).into(),
                (&*p.publisher_node).into(),
                Cell::I64(p.publisher_vpid),
                (&*p.publisher_host).into(),
                (&*p.subscription_node).into(),
                Cell::I64(p.subscription_vpid),
                (&*p.subscription_host).into(),
                Cell::I64(p.count as i64),
            ];
            t.row(
                &cells
                    .into_iter()
                    .chain(stats_cells(&p.pub_to_take_ns))
                    .chain(stats_cells(&p.pub_to_callback_ns))
                    .collect::<Vec<_>>(),
            )?;
        }
    }
    done(t, "topic_pairs", counts)?;
    Ok(())
}

/// The instances' tables: callback runs, publications, takes, flows.
fn instance_tables(a: &Analysis, recording: &str, sink: &mut dyn Sink, counts: &mut Counts) -> io::Result<()> {
    let r = &a.report;
    // Runs, with their callback's node and kind.
    let by_key: HashMap<Key, usize> =
        r.callbacks.iter().enumerate().map(|(i, c)| ((c.trace, c.vpid, c.address), i)).collect();
    let callback = |k: Key| by_key.get(&k).map(|&j| (&*r.callbacks[j].node, r.callbacks[j].kind));
    let view = rostrace_analysis::View::from(a);
    let mut t = open(sink, &schema::table("callback_runs"), Cow::Borrowed(&a.traces))?;
    for (i, x) in a.runs.iter().enumerate() {
        t.row(&run_row(recording, i as u64, &view, x, callback))?;
    }
    done(t, "callback_runs", counts)?;
    let number = |i: u32| Some(i as u64);
    let mut t = open(sink, &schema::table("publications"), Cow::Borrowed(&a.traces))?;
    for (i, x) in a.pubs.iter().enumerate() {
        t.row(&publication_row(recording, i as u64, x, number))?;
    }
    done(t, "publications", counts)?;
    let mut t = open(sink, &schema::table("takes"), Cow::Borrowed(&a.traces))?;
    for (i, x) in a.takes.iter().enumerate() {
        t.row(&take_row(recording, i as u64, &a.model, x, number))?;
    }
    done(t, "takes", counts)?;
    let mut t = open(sink, &schema::table("flows"), Cow::Borrowed(&a.traces))?;
    for f in &a.flows {
        t.row(&flow_row(recording, &view, &a.traces, f, (f.publication as u64, f.take as u64)))?;
    }
    done(t, "flows", counts)?;
    Ok(())
}

/// A row of `callback_runs`: run `x` of `a`, numbered `i`; `callback`: the node and kind of a
/// callback handle.
fn run_row<'a>(
    recording: &'a str,
    i: u64,
    a: &rostrace_analysis::View<'_>,
    x: &LinkedRun,
    callback: impl Fn(Key) -> Option<(&'a str, &'a str)>,
) -> Vec<Cell<'a>> {
    let run = &x.run;
    let k = a.slots[run.slot()];
    let c = callback(k).unwrap_or(("", "unknown"));
    run_cells(recording, i, k, run.vtid as i64, run.start, run.end(), run.intra(), c)
}

/// The cells of a row of `callback_runs`: run `i` of callback handle `k` on thread `vtid`,
/// from `start` to `end`, whose callback's node and kind are `callback`.
#[allow(clippy::too_many_arguments)]
fn run_cells<'a>(
    recording: &'a str,
    i: u64,
    k: Key,
    vtid: i64,
    start: i64,
    end: Option<i64>,
    intra: bool,
    callback: (&'a str, &'a str),
) -> Vec<Cell<'a>> {
    instance(
        recording,
        i as usize,
        (k.0, k.1, vtid),
        [
            Cell::U64(k.2),
            callback.0.into(),
            callback.1.into(),
            Cell::I64(start),
            end.into(),
            end.map(|e| e - start).into(),
            Cell::Bool(intra),
        ],
    )
}

/// A row of `publications`; `run`: the number of a run of the tables.
fn publication_row<'a>(
    recording: &'a str,
    i: u64,
    x: &'a LinkedPublication,
    run: impl Fn(u32) -> Option<u64>,
) -> Vec<Cell<'a>> {
    let (p, topic) = (&x.publication, &x.topic);
    instance(
        recording,
        i as usize,
        (p.trace, p.vpid, p.vtid),
        [
            topic.as_deref().into(),
            nz(p.publisher).into(),
            Cell::U64(p.message),
            Cell::I64(p.ts),
            p.ts_rclcpp().into(),
            p.ts_rcl().into(),
            p.ts_rmw().into(),
            p.ts_dds().into(),
            p.source_ts().into(),
            Cell::Bool(p.intra),
            p.in_run().and_then(run).map(|x| x as i64).into(),
        ],
    )
}

/// A row of `takes`; `run`: the number of a run of the tables.
fn take_row<'a>(
    recording: &'a str,
    i: u64,
    m: &'a Model,
    x: &LinkedTake,
    run: impl Fn(u32) -> Option<u64>,
) -> Vec<Cell<'a>> {
    let LinkedTake { take: k, subscription: sub } = x;
    let topic = sub.map(|s| m.subscriptions.get(s).topic.as_str());
    instance(
        recording,
        i as usize,
        (k.trace, k.vpid, k.vtid),
        [
            topic.into(),
            nz(k.rmw_subscription).into(),
            Cell::U64(k.message),
            Cell::I64(k.ts),
            (k.source_ts != 0).then_some(k.source_ts).into(),
            Cell::Bool(k.taken),
            Cell::Bool(k.intra),
            k.run.and_then(run).map(|x| x as i64).into(),
        ],
    )
}

/// A row of `flows`: `f` of `a`, its publication and take numbered `numbers`.
fn flow_row<'a>(
    recording: &'a str,
    a: &rostrace_analysis::View<'_>,
    traces: &'a [(std::path::PathBuf, String)],
    f: &'a rostrace_analysis::Flow,
    numbers: (u64, u64),
) -> Vec<Cell<'a>> {
    let p = &a.pubs[f.publication as usize].publication;
    let k = &a.takes[f.take as usize].take;
    let by = match f.by {
        MatchBy::SourceTimestamp => "source_timestamp",
        MatchBy::PublishWindow => "publish_window",
        MatchBy::IntraProcess => "intra_process",
    };
    let host = |t: u32| traces.get(t as usize).map(|h| h.1.as_str()).into();
    vec![
        Cell::Str(Cow::Borrowed(recording)),
        Cell::I64(numbers.0 as i64),
        Cell::I64(numbers.1 as i64),
        (&*f.topic).into(),
        by.into(),
        Cell::I64(p.ts),
        Cell::I64(k.ts),
        k.run.map(|x| a.runs[x as usize].run.start).into(),
        Cell::I64(f.pub_to_take_ns),
        f.pub_to_callback_ns.into(),
        host(p.trace),
        host(k.trace),
    ]
}

/// The instances' tables of a streamed analysis, written slice by slice as the analysis adds
/// them up ([`rostrace_analysis::Open::on_slice`]): each run, publication and take in the
/// slice it belongs to, each message in the slice of its take, numbered as in one analysis of
/// the whole recording. Its rows are those [`write_tables`](crate::write_tables) writes from
/// the analysis in memory, in the same order, but for a publication made, or a take taken, in
/// a callback run that started more than the margin before it (its run left empty).
pub struct StreamedInstances {
    recording: String,
    /// The five tables, opened at the first slice (the traces' hosts are known then).
    tables: Option<[Counted<'static>; 5]>,
    /// Runs still running where their slice's reading ended, written when a later slice ends
    /// them (or at the end, unfinished).
    pending: Vec<Pending>,
}

/// A run of [`StreamedInstances::pending`].
struct Pending {
    number: u64,
    key: Key,
    vtid: i64,
    start: i64,
    intra: bool,
    callback: (String, String),
}

impl Pending {
    fn cells<'a>(&'a self, recording: &'a str, end: Option<i64>) -> Vec<Cell<'a>> {
        let c = (self.callback.0.as_str(), self.callback.1.as_str());
        run_cells(recording, self.number, self.key, self.vtid, self.start, end, self.intra, c)
    }
}

const INSTANCE_TABLES: [&str; 5] = ["callback_runs", "publications", "takes", "flows", "service_calls"];

/// The tables of [`INSTANCE_TABLES`], opened, with the traces' hosts.
fn open_instances(sink: &mut dyn Sink, traces: &[(std::path::PathBuf, String)]) -> io::Result<[Counted<'static>; 5]> {
    let traces: Cow<'static, [(std::path::PathBuf, String)]> = Cow::Owned(traces.to_vec());
    let [a, b, c, d, e] = INSTANCE_TABLES.map(|n| open(sink, &schema::table(n), traces.clone()));
    Ok([a?, b?, c?, d?, e?])
}

impl StreamedInstances {
    /// Nothing written yet, for `recording`.
    pub fn new(recording: &str) -> StreamedInstances {
        StreamedInstances { recording: recording.to_string(), tables: None, pending: Vec::new() }
    }

    /// Writes the rows of `s` to `sink`'s tables.
    pub fn slice(&mut self, s: &rostrace_analysis::StreamedSlice<'_>, sink: &mut dyn Sink) -> io::Result<()> {
        if self.tables.is_none() {
            self.tables = Some(open_instances(sink, s.traces)?);
        }
        let Some([runs, pubs, takes, flows, services]) = &mut self.tables else { return Ok(()) };
        let (a, rec) = (&s.tables, self.recording.as_str());
        let run = |i: u32| s.run_number(i as usize);
        for &(key, vtid, start, end) in &s.ended {
            if let Some(k) = self.pending.iter().position(|p| (p.key, p.vtid, p.start) == (key, vtid, start)) {
                let p = self.pending.remove(k);
                runs.row(&p.cells(rec, Some(end)))?;
            }
        }
        for (i, x) in a.runs.iter().enumerate().filter(|(i, _)| s.owns_run(*i)) {
            let n = s.run_number(i).unwrap_or_default();
            if x.run.end().is_none() {
                let key = a.slots[x.run.slot()];
                let (node, kind) = s.callback(key).unwrap_or(("", "unknown"));
                let callback = (node.to_string(), kind.to_string());
                let (vtid, start, intra) = (x.run.vtid as i64, x.run.start, x.run.intra());
                self.pending.push(Pending { number: n, key, vtid, start, intra, callback });
                continue;
            }
            runs.row(&run_row(rec, n, a, x, |k| s.callback(k)))?;
        }
        for (i, x) in a.pubs.iter().enumerate().filter(|(i, _)| s.owns_publication(*i)) {
            pubs.row(&publication_row(rec, s.publication_number(i).unwrap_or_default(), x, run))?;
        }
        for (i, x) in a.takes.iter().enumerate().filter(|(i, _)| s.owns_take(*i)) {
            takes.row(&take_row(rec, s.take_number(i).unwrap_or_default(), a.model, x, run))?;
        }
        for f in a.flows.iter().filter(|f| s.owns_take(f.take as usize)) {
            let numbers = (s.publication_number(f.publication as usize), s.take_number(f.take as usize));
            if let (Some(p), Some(t)) = numbers {
                flows.row(&flow_row(rec, a, s.traces, f, (p, t)))?;
            }
        }
        service_rows(services, rec, a.model, s.services, |t| s.from <= t && t < s.to, run)?;
        Ok(())
    }

    /// Closes the tables (empty ones when no slice came), with their row counts.
    pub fn finish(self, sink: &mut dyn Sink, traces: &[(std::path::PathBuf, String)]) -> io::Result<Counts> {
        let mut counts = Counts::new();
        let mut tables = match self.tables {
            Some(t) => t,
            None => open_instances(sink, traces)?,
        };
        for p in &self.pending {
            tables[0].row(&p.cells(&self.recording, None))?;
        }
        for (t, name) in tables.into_iter().zip(INSTANCE_TABLES) {
            done(t, name, &mut counts)?;
        }
        Ok(counts)
    }
}

/// The handlers' tables: service calls (unless `services` is `None`: written already),
/// executor threads.
fn handler_tables(
    a: &Analysis,
    services: Option<Option<&ServiceHandler>>,
    executors: Option<&ExecutorHandler>,
    recording: &str,
    sink: &mut dyn Sink,
    counts: &mut Counts,
) -> io::Result<()> {
    let rec = || Cell::Str(Cow::Borrowed(recording));
    if let Some(services) = services {
        let mut t = open(sink, &schema::table("service_calls"), Cow::Borrowed(&a.traces))?;
        if let Some(s) = services {
            service_rows(&mut t, recording, &a.model, s, |_| true, |r| Some(r as u64))?;
        }
        done(t, "service_calls", counts)?;
    }

    let mut t = open(sink, &schema::table("executor_threads"), Cow::Borrowed(&a.traces))?;
    if let Some(e) = executors {
        let mut v: Vec<_> = e.threads.iter().collect();
        v.sort_by_key(|(k, _)| **k);
        for ((tr, vpid, vtid), p) in v {
            t.row(&[
                rec(),
                Cell::I64(*tr as i64),
                Cell::I64(*vpid),
                Cell::I64(*vtid),
                Cell::I64(p.get_next_ns),
                Cell::I64(p.wait_ns),
                Cell::I64(p.execute_ns),
                Cell::I64(p.executions as i64),
            ])?;
        }
    }
    done(t, "executor_threads", counts)?;
    Ok(())
}

/// The `service_calls` rows of `s`'s calls at times `keep` keeps (clients' by their request,
/// servers' by their take), the runs that served them numbered by `run`.
fn service_rows(
    t: &mut Counted,
    recording: &str,
    m: &Model,
    s: &ServiceHandler,
    keep: impl Fn(i64) -> bool,
    run: impl Fn(u32) -> Option<u64>,
) -> io::Result<()> {
    // Services and clients by (trace, vpid, rmw handle), the calls' keys.
    let names: HashMap<(&str, Key), &str> = [("client", &m.clients), ("server", &m.services)]
        .into_iter()
        .flat_map(|(side, reg)| reg.items.iter().map(move |x| ((side, (x.key.0, x.key.1, x.rmw)), x.name.as_str())))
        .collect();
    let rows = s.client_calls.iter().map(|c| ("client", c.client, c.vtid, c.seq, c.ts_send, c.response, None));
    let rows =
        rows.chain(s.server_calls.iter().map(|c| ("server", c.service, c.vtid, c.seq, c.ts_take, c.response, c.run)));
    for (side, key, vtid, seq, at, response, served_by) in rows.filter(|r| keep(r.4)) {
        let [tr, vp] = key_cells(key);
        t.row(&[
            Cell::Str(Cow::Borrowed(recording)),
            tr,
            vp,
            Cell::I64(vtid),
            side.into(),
            Cell::U64(key.2),
            names.get(&(side, key)).copied().into(),
            Cell::I64(seq),
            Cell::I64(at),
            response.map(|x| x.0).into(),
            served_by.and_then(&run).map(|x| x as i64).into(),
        ])?;
    }
    Ok(())
}

fn done(t: Counted, name: &str, counts: &mut Counts) -> io::Result<()> {
    counts.push((name.to_string(), t.n));
    t.w.finish()
}

/// Writes the [`schema::PATH_TABLES`] of `paths` (each path and its records).
pub fn write_paths(recording: &str, paths: &[(&PathSpec, &PathRecords)], sink: &mut dyn Sink) -> io::Result<Counts> {
    let mut counts = Counts::new();
    let mut t = open(sink, &schema::table("paths"), Cow::Borrowed(&[]))?;
    for (spec, r) in paths {
        t.row(&path_row(recording, spec, &r.counts(), &r.stats()))?;
    }
    done(t, "paths", &mut counts)?;
    let mut t = open(sink, &schema::table("path_messages"), Cow::Borrowed(&[]))?;
    for (spec, r) in paths {
        let label = spec.label();
        for (i, (row, status)) in r.rows.iter().zip(r.statuses()).enumerate() {
            t.row(&message_row(recording, &label, i as u64, row, status))?;
        }
    }
    done(t, "path_messages", &mut counts)?;
    Ok(counts)
}

/// A path's row of the `paths` table.
fn path_row<'a>(recording: &'a str, spec: &PathSpec, c: &PathCounts, s: &Stats) -> Vec<Cell<'a>> {
    let some = s.count > 0;
    let int = |v: i64| -> Cell<'static> { some.then_some(v).into() };
    vec![
        Cell::Str(Cow::Borrowed(recording)),
        spec.label().into(),
        spec.nodes.join(",").into(),
        spec.topics.join(",").into(),
        Cell::I64(c.records as i64),
        Cell::I64(c.complete as i64),
        Cell::I64(c.superseded as i64),
        Cell::I64(c.lost as i64),
        Cell::I64(c.in_flight as i64),
        if some { Cell::F64(s.mean) } else { Cell::Null },
        int(s.min),
        int(s.p50),
        int(s.p99),
        int(s.max),
    ]
}

/// Record `i` of a path (`label`) in the `path_messages` table.
fn message_row<'a>(
    recording: &'a str,
    label: &'a str,
    i: u64,
    row: &[Option<i64>],
    status: RecordStatus,
) -> [Cell<'a>; 7] {
    let start = row.first().copied().flatten();
    let end = row.iter().rev().find_map(|c| *c);
    let latency = match (status, start, row.last().copied().flatten()) {
        (RecordStatus::Complete, Some(a), Some(b)) if b >= a => Some(b - a),
        _ => None,
    };
    [
        Cell::Str(Cow::Borrowed(recording)),
        Cell::Str(Cow::Borrowed(label)),
        Cell::I64(i as i64),
        start.into(),
        end.into(),
        latency.into(),
        status.name().into(),
    ]
}

/// The [`schema::PATH_TABLES`] of paths followed over a streamed analysis
/// ([`rostrace_analysis::paths::PathStream`]): each record written to `path_messages` as it is
/// given out ([`StreamedPaths::record`]), the `paths` table at the end from their
/// summaries. The rows of several paths are written slice by slice, each path's in order.
pub struct StreamedPaths {
    recording: String,
    messages: Option<Counted<'static>>,
    error: Option<io::Error>,
}

impl StreamedPaths {
    /// Nothing written yet, for `recording`.
    pub fn new(recording: &str) -> StreamedPaths {
        StreamedPaths { recording: recording.to_string(), messages: None, error: None }
    }

    /// Record `index` of the path labelled `label`, and how it went, written to `sink` (an
    /// error of writing is kept for [`StreamedPaths::finish`]).
    pub fn record(&mut self, sink: &mut dyn Sink, label: &str, index: u64, row: &[Option<i64>], status: RecordStatus) {
        if self.error.is_some() {
            return;
        }
        if self.messages.is_none() {
            match open(sink, &schema::table("path_messages"), Cow::Borrowed(&[])) {
                Ok(t) => self.messages = Some(t),
                Err(e) => {
                    self.error = Some(e);
                    return;
                }
            }
        }
        if let Some(t) = &mut self.messages {
            if let Err(e) = t.row(&message_row(&self.recording, label, index, row, status)) {
                self.error = Some(e);
            }
        }
    }

    /// The `paths` table of `paths` (each path and its summary) written, and `path_messages`
    /// finished; the first error of writing, if any.
    pub fn finish(self, paths: &[(&PathSpec, &StreamedPath)], sink: &mut dyn Sink) -> io::Result<Counts> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let mut counts = Counts::new();
        let mut t = open(sink, &schema::table("paths"), Cow::Borrowed(&[]))?;
        for (spec, p) in paths {
            t.row(&path_row(&self.recording, spec, &p.counts, &p.latency))?;
        }
        done(t, "paths", &mut counts)?;
        let t = match self.messages {
            Some(t) => t,
            None => open(sink, &schema::table("path_messages"), Cow::Borrowed(&[]))?,
        };
        done(t, "path_messages", &mut counts)?;
        Ok(counts)
    }
}
