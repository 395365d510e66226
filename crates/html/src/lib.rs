//! The analysis as one self-contained HTML file: the report's tables, and plots drawn on
//! canvases by a small script of its own (no library, nothing fetched: it opens offline).
//! The data goes in as JSON: the report as `rostrace analyze --json` writes it, and the
//! instances the plots need (callback runs, message flows) as compact columns.

#![deny(missing_docs)]

use rostrace_analysis::diff::Diff;
use rostrace_analysis::{Analysis, Key, Report, StreamedSlice, View, MARGIN_NS};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;

const STYLE: &str = include_str!("report.css");
const SCRIPT: &str = include_str!("report.js");

/// Instances for the plots, as columns (times in µs since `t0_ns`, durations in ns).
#[derive(Serialize, Default)]
struct Instances {
    t0_ns: i64,
    t1_ns: i64,
    /// Threads: label.
    threads: Vec<String>,
    /// Runs: start (µs), duration (ns, -1 unfinished), callback (index in report.callbacks,
    /// -1 unknown), thread (index in `threads`).
    run_s: Vec<i64>,
    run_d: Vec<i64>,
    run_c: Vec<i32>,
    run_t: Vec<u32>,
    /// Topics of the flows.
    topics: Vec<String>,
    /// Flows: publication (µs), its thread, callback start or take (µs), its thread, topic,
    /// latency (ns: publish → callback start, else publish → take).
    fl_p: Vec<i64>,
    fl_pt: Vec<u32>,
    fl_c: Vec<i64>,
    fl_ct: Vec<u32>,
    fl_topic: Vec<u32>,
    fl_lat: Vec<i64>,
    /// Runs of callbacks, and flows of topics, left out of the page with their table rows.
    runs_left_out: u64,
    flows_left_out: u64,
    /// A streamed analysis's page: how its runs and flows were chosen ([`Sampled`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    sampled: Option<Sampling>,
}

/// What a streamed report's plots draw of the runs and messages ([`Sampled`]).
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
struct Sampling {
    /// The recording cut into this many parts of equal time.
    parts: u32,
    /// Callback runs in the analysis, and drawn.
    runs: u64,
    runs_drawn: u64,
    /// Messages matched in the analysis, and drawn.
    flows: u64,
    flows_drawn: u64,
    /// Runs longer than this (ns) are all drawn.
    long_ns: i64,
}

/// A callback run as the plots draw it.
#[derive(Clone, Copy, Debug)]
struct RunPoint {
    key: Key,
    vtid: i64,
    start: i64,
    /// −1: unfinished.
    duration: i64,
}

/// A message as the plots draw it: its publication, and the start of the callback run that
/// took it (else its take), each with its thread (trace, vpid, vtid).
#[derive(Clone, Debug)]
struct FlowPoint {
    topic: Arc<str>,
    published: i64,
    pub_thread: (u32, i64, i64),
    taken: i64,
    take_thread: (u32, i64, i64),
    latency: i64,
}

/// The parts of equal time a streamed report's plots are cut into: in each, a callback's
/// shortest and longest run, a topic's fastest and slowest message, and a longest path's, are
/// drawn (the analysis keeps the paths' as it follows them).
pub const SAMPLED_PARTS: u32 = rostrace_analysis::paths::PATH_PARTS as u32;

/// The runs and messages a streamed report's plots draw, kept as the analysis's slices go by
/// ([`Sampled::slice`], given to [`rostrace_analysis::Open::on_slice`]): a recording of a day
/// has hundreds of millions, which no page can hold. The recording is cut into
/// [`SAMPLED_PARTS`] parts of equal time; in each, every callback's shortest and longest run and
/// every topic's fastest and slowest message are kept, so that the plots keep the extremes
/// (a deadline miss is never thinned away); every run longer than the slices' margin, or
/// unfinished, is kept too. Memory: the system's callbacks and topics times the parts.
#[derive(Default)]
pub struct Sampled {
    span: Option<(i64, i64)>,
    runs: HashMap<(Key, u32), [RunPoint; 2]>,
    /// Runs longer than the margin, unfinished, or ended after their slice's reading: all drawn.
    long: Vec<RunPoint>,
    /// Runs of `long` not ended yet, by (callback handle, thread, start).
    pending: HashMap<(Key, i64, i64), usize>,
    flows: HashMap<(Arc<str>, u32), [FlowPoint; 2]>,
    runs_seen: u64,
    flows_seen: u64,
}

impl Sampled {
    /// Nothing kept yet.
    pub fn new() -> Sampled {
        Sampled::default()
    }

    /// Keeps what the plots draw of `s`: its own runs and messages (those it counts).
    pub fn slice(&mut self, s: &StreamedSlice<'_>) {
        let (first, last) = *self.span.get_or_insert(s.span);
        let width = ((last - first) / SAMPLED_PARTS as i64).max(1);
        let part = |t: i64| (t.saturating_sub(first) / width).clamp(0, SAMPLED_PARTS as i64 - 1) as u32;
        for &(key, vtid, start, end) in &s.ended {
            if let Some(i) = self.pending.remove(&(key, vtid, start)) {
                self.long[i].duration = end - start;
            }
        }
        let t = &s.tables;
        for (i, lr) in t.runs.iter().enumerate() {
            if !s.owns_run(i) {
                continue;
            }
            self.runs_seen += 1;
            let r = &lr.run;
            let key = t.slots[r.slot()];
            let p = RunPoint { key, vtid: r.vtid as i64, start: r.start, duration: r.duration().unwrap_or(-1) };
            if p.duration < 0 {
                // Still running where the slice's reading ended: its end comes with a later
                // slice's, or never.
                self.pending.insert((key, p.vtid, r.start), self.long.len());
                self.long.push(p);
                continue;
            }
            if p.duration > MARGIN_NS {
                self.long.push(p);
                continue;
            }
            keep_extremes(self.runs.entry((key, part(p.start))), p, |x| x.duration);
        }
        for f in t.flows {
            if !s.owns_take(f.take as usize) {
                continue;
            }
            self.flows_seen += 1;
            let p = flow_point(t, f);
            keep_extremes(self.flows.entry((Arc::clone(&f.topic), part(p.published))), p, |x| x.latency);
        }
    }
}

/// Into `slot`, `p` when it is the shortest or the longest by `by` there.
fn keep_extremes<K, T: Clone>(slot: std::collections::hash_map::Entry<'_, K, [T; 2]>, p: T, by: impl Fn(&T) -> i64) {
    use std::collections::hash_map::Entry;
    match slot {
        Entry::Vacant(e) => {
            e.insert([p.clone(), p]);
        }
        Entry::Occupied(mut e) => {
            let [lo, hi] = e.get_mut();
            if by(&p) < by(lo) {
                *lo = p;
            } else if by(&p) > by(hi) {
                *hi = p;
            }
        }
    }
}

/// Flow `f` of the tables `t` as the plots draw it.
fn flow_point(t: &View<'_>, f: &rostrace_analysis::Flow) -> FlowPoint {
    let p = &t.pubs[f.publication as usize].publication;
    let k = &t.takes[f.take as usize].take;
    let (taken, take_thread) = match k.run {
        Some(r) => {
            let run = &t.runs[r as usize].run;
            let key = t.slots[run.slot()];
            (run.start, (key.0, key.1, run.vtid as i64))
        }
        None => (k.ts, (k.trace, k.vpid, k.vtid)),
    };
    FlowPoint {
        topic: Arc::clone(&f.topic),
        published: p.ts,
        pub_thread: (p.trace, p.vpid, p.vtid),
        taken,
        take_thread,
        latency: f.pub_to_callback_ns.unwrap_or(f.pub_to_take_ns),
    }
}

/// A longest path's messages: start (µs since t0), latency (ns), and the mean of each segment.
#[derive(Serialize, Default)]
struct PathInstances {
    s: Vec<i64>,
    lat: Vec<i64>,
    segments: Vec<(String, &'static str, f64)>,
    /// Response time per case (CARET's): case, input times (µs since t0), response times (ns).
    rt: Vec<(&'static str, Vec<i64>, Vec<i64>)>,
    /// The events where a segment begins or ends, in path order (column names).
    stages: Vec<String>,
    /// Messages that went the whole way: start (µs since t0), and their time at each stage
    /// (ns since their start), `stages.len()` values per message.
    ms: Vec<i64>,
    m: Vec<i64>,
}

#[derive(Serialize)]
struct Data<'a> {
    title: &'a str,
    report: &'a Report,
    inst: Instances,
    /// Per path of `report.longest_paths`, in order.
    paths: Vec<PathInstances>,
    /// The tables cut to [`ROWS`] rows in this page, each with its rows in the analysis.
    capped: Vec<Capped>,
    /// This run compared with a baseline run (`rostrace report --baseline`).
    baseline: Option<&'a Diff>,
}

/// Rows a table of the page holds at most: past it, the rows that weigh most (callback time,
/// messages) stay and the page says how many the analysis has (a system of a million nodes
/// would otherwise give a page of several hundred MB that no browser opens).
pub const ROWS: usize = 2000;

/// A table cut to [`ROWS`] rows.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct Capped {
    /// The report's field (`callbacks`, `topics`, ...).
    pub table: &'static str,
    /// Rows in the analysis.
    pub total: usize,
}

/// A copy of the `ROWS` rows of `v` that weigh most by `weight` (in their order otherwise),
/// noting the cut in `capped`; of every row when there are no more.
fn cap<T: Clone, W: Ord>(v: &[T], table: &'static str, capped: &mut Vec<Capped>, weight: impl Fn(&T) -> W) -> Vec<T> {
    if v.len() <= ROWS {
        return v.to_vec();
    }
    capped.push(Capped { table, total: v.len() });
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(weight(&v[i])));
    // The rows kept, in the table's order.
    let mut keep = order[..ROWS].to_vec();
    keep.sort_unstable();
    keep.into_iter().map(|i| v[i].clone()).collect()
}

/// The report as the page holds it, when a table is longer than [`ROWS`]: each such table cut
/// to its heaviest rows; and the tables cut. Only the rows kept are copied (a system of very
/// many nodes would otherwise hold its report twice while the page is made).
fn capped_report(r: &Report) -> (Option<Report>, Vec<Capped>) {
    // Every field named, so that a table added to the report is not copied whole unseen.
    let Report {
        events,
        ros_events,
        begin_ns,
        end_ns,
        window_ns,
        time,
        notes,
        read_errors,
        processes,
        nodes,
        topics,
        callbacks,
        per_process,
        per_node,
        per_thread,
        executors,
        executor_threads,
        services,
        lifecycle_transitions,
        flows_matched,
        flows_unmatched,
        unmatched_callback_ends,
        discarded_events,
        warnings,
        hosts,
        system,
        longest_paths,
        streamed,
    } = r;
    let mut capped = Vec::new();
    let callbacks = cap(callbacks, "callbacks", &mut capped, |c| c.total_ns);
    let per_node = cap(per_node, "per_node", &mut capped, |x| x.callback_ns);
    let per_process = cap(per_process, "per_process", &mut capped, |x| x.callback_ns);
    let per_thread = cap(per_thread, "per_thread", &mut capped, |x| x.callback_ns);
    // Nodes: those with the most callback time (among the time shares kept) first.
    let time_of: HashMap<&str, i64> = per_node.iter().map(|x| (&*x.name, x.callback_ns)).collect();
    let nodes = cap(nodes, "nodes", &mut capped, |n| time_of.get(&*n.name).copied().unwrap_or(-1));
    drop(time_of);
    let topics = cap(topics, "topics", &mut capped, |t| t.publishes + t.takes);
    let services = cap(services, "services", &mut capped, |s| s.requests_sent + s.requests_served);
    let executor_threads =
        cap(executor_threads, "executor_threads", &mut capped, |e| e.get_next_ns + e.wait_ns + e.execute_ns);
    if capped.is_empty() {
        // Nothing cut (the copies are of short tables): the page shows the report itself.
        return (None, capped);
    }
    let cut = Report {
        events: *events,
        ros_events: *ros_events,
        begin_ns: *begin_ns,
        end_ns: *end_ns,
        window_ns: *window_ns,
        time: *time,
        notes: notes.clone(),
        read_errors: read_errors.clone(),
        processes: processes.clone(),
        nodes,
        topics,
        callbacks,
        per_process,
        per_node,
        per_thread,
        executors: executors.clone(),
        executor_threads,
        services,
        lifecycle_transitions: lifecycle_transitions.clone(),
        flows_matched: *flows_matched,
        flows_unmatched: *flows_unmatched,
        unmatched_callback_ends: *unmatched_callback_ends,
        discarded_events: *discarded_events,
        warnings: warnings.clone(),
        hosts: hosts.clone(),
        system: system.clone(),
        longest_paths: longest_paths.clone(),
        streamed: streamed.clone(),
    };
    (Some(cut), capped)
}

/// The instances of the analysis's longest paths (those of its own report).
fn path_instances(a: &Analysis) -> Vec<PathInstances> {
    use rostrace_analysis::paths::Case;
    let t0 = a.report.begin_ns.unwrap_or(0);
    a.longest_path_records()
        .iter()
        .map(|rec| match rec {
            Some(rec) => {
                let us = |x: i64| (x - t0) / 1000;
                let (s, lat) = rec.latencies().into_iter().map(|(x, l)| (us(x), l)).unzip();
                let segments = rec.segment_stats().into_iter().map(|(g, st)| (g.name, g.kind, st.mean)).collect();
                let rt = Case::ALL
                    .into_iter()
                    .map(|c| {
                        let (x, y) = rec.response_time(c).into_iter().map(|(x, y)| (us(x), y)).unzip();
                        (c.name(), x, y)
                    })
                    .collect();
                let cols: Vec<usize> = rec
                    .segments
                    .first()
                    .map(|g| g.columns.0)
                    .into_iter()
                    .chain(rec.segments.iter().map(|g| g.columns.1))
                    .collect();
                let stages = cols.iter().map(|&c| rec.columns[c].clone()).collect();
                let (mut ms, mut m) = (Vec::new(), Vec::new());
                for r in &rec.rows {
                    let Some(at) = cols.iter().map(|&c| r[c]).collect::<Option<Vec<i64>>>() else { continue };
                    ms.push(us(at[0]));
                    m.extend(at.iter().map(|t| t - at[0]));
                }
                PathInstances { s, lat, segments, rt, stages, ms, m }
            }
            None => PathInstances::default(),
        })
        .collect()
}

/// The runs and flows of the page: those of the callbacks and topics of `r` (the report the
/// page shows; `full`, the analysis's, when its tables were cut: the runs and flows of the rows
/// left out are left out too, and counted), from `runs` in the order of their start and `flows`
/// in the order of their publication.
fn instances(
    a: &Analysis,
    r: &Report,
    full: &Report,
    runs: impl Iterator<Item = RunPoint>,
    flows: impl Iterator<Item = FlowPoint>,
) -> Instances {
    let t0 = r.begin_ns.unwrap_or(0);
    let us = |ns: i64| (ns - t0) / 1000;
    let mut inst = Instances { t0_ns: t0, t1_ns: r.end_ns.unwrap_or(t0), ..Default::default() };
    let by_key: HashMap<(u32, i64, u64), i32> =
        r.callbacks.iter().enumerate().map(|(i, c)| ((c.trace, c.vpid, c.address), i as i32)).collect();
    let left_out: std::collections::HashSet<(u32, i64, u64)> =
        full.callbacks.iter().map(|c| (c.trace, c.vpid, c.address)).filter(|k| !by_key.contains_key(k)).collect();
    let shown_topics: Option<std::collections::HashSet<&str>> =
        (r.topics.len() < full.topics.len()).then(|| r.topics.iter().map(|t| &*t.name).collect());
    let procname: HashMap<(u32, i64), &str> =
        a.model.processes.values().map(|p| ((p.trace, p.vpid), p.procname.as_str())).collect();
    // Several hosts: each thread's row named with its host first, so that the rows (in the
    // order of their names) are grouped by host.
    let host: HashMap<(u32, i64), &str> = match r.hosts.len() > 1 {
        true => a.model.processes.values().map(|p| ((p.trace, p.vpid), p.host.as_str())).collect(),
        false => HashMap::new(),
    };
    let mut threads: HashMap<(u32, i64, i64), u32> = HashMap::new();
    let mut thread = |inst: &mut Instances, k: (u32, i64, i64)| -> u32 {
        *threads.entry(k).or_insert_with(|| {
            let name = procname.get(&(k.0, k.1)).copied().unwrap_or("?");
            let label = if k.1 == k.2 { format!("{name} {}", k.1) } else { format!("{name} {} / {}", k.1, k.2) };
            let label = match host.get(&(k.0, k.1)) {
                Some(h) => format!("{h} · {label}"),
                None => label,
            };
            inst.threads.push(label);
            inst.threads.len() as u32 - 1
        })
    };
    for run in runs {
        let k = run.key;
        if left_out.contains(&k) {
            inst.runs_left_out += 1;
            continue;
        }
        let t = thread(&mut inst, (k.0, k.1, run.vtid));
        inst.run_s.push(us(run.start));
        inst.run_d.push(run.duration);
        inst.run_c.push(by_key.get(&k).copied().unwrap_or(-1));
        inst.run_t.push(t);
    }
    let mut topic_ids: HashMap<Arc<str>, u32> = HashMap::new();
    for f in flows {
        if shown_topics.as_ref().is_some_and(|s| !s.contains(&*f.topic)) {
            inst.flows_left_out += 1;
            continue;
        }
        let pt = thread(&mut inst, f.pub_thread);
        let ct = thread(&mut inst, f.take_thread);
        let n = topic_ids.len() as u32;
        let topic = *topic_ids.entry(Arc::clone(&f.topic)).or_insert_with(|| {
            inst.topics.push(f.topic.to_string());
            n
        });
        inst.fl_p.push(us(f.published));
        inst.fl_pt.push(pt);
        inst.fl_c.push(us(f.taken));
        inst.fl_ct.push(ct);
        inst.fl_topic.push(topic);
        inst.fl_lat.push(f.latency);
    }
    inst
}

/// The runs of the analysis in memory, in the order of their start.
fn run_points(a: &Analysis) -> impl Iterator<Item = RunPoint> + '_ {
    let mut order: Vec<usize> = (0..a.runs.len()).collect();
    order.sort_by_key(|&i| a.runs[i].run.start);
    order.into_iter().map(|i| {
        let run = &a.runs[i].run;
        RunPoint {
            key: a.slots[run.slot()],
            vtid: run.vtid as i64,
            start: run.start,
            duration: run.duration().unwrap_or(-1),
        }
    })
}

/// The flows of the analysis in memory, in the order of their publication.
fn flow_points(a: &Analysis) -> impl Iterator<Item = FlowPoint> + '_ {
    let view = View::from(a);
    let mut flows: Vec<&rostrace_analysis::Flow> = a.flows.iter().collect();
    flows.sort_by_key(|f| a.pubs[f.publication as usize].publication.ts);
    flows.into_iter().map(move |f| flow_point(&view, f))
}

/// The analysis `a` (its report, with the longest paths when they were searched) as one HTML
/// page; with `baseline`, its comparison with a baseline run (`a` the new run) as a section.
pub fn render(a: &Analysis, title: &str, baseline: Option<&Diff>) -> String {
    let paths = path_instances(a);
    page(a, title, baseline, paths, |report| instances(a, report, &a.report, run_points(a), flow_points(a)))
}

/// The streamed analysis `a` as one HTML page, its plots drawing the runs and messages of
/// `sampled`, which was given every slice of `a`; with `baseline`, as [`render`].
pub fn render_streamed(a: &Analysis, sampled: Sampled, title: &str, baseline: Option<&Diff>) -> String {
    let Sampled { runs, long, flows, runs_seen, flows_seen, .. } = sampled;
    // (The shortest and longest are one when a part has one run.)
    let mut runs: Vec<RunPoint> = runs
        .into_values()
        .flat_map(|[lo, hi]| {
            let same = lo.start == hi.start && lo.vtid == hi.vtid;
            [Some(lo), (!same).then_some(hi)]
        })
        .flatten()
        .chain(long)
        .collect();
    runs.sort_by_key(|r| (r.start, r.key, r.vtid));
    let mut flows: Vec<FlowPoint> = flows
        .into_values()
        .flat_map(|[lo, hi]| {
            let same = lo.published == hi.published && lo.pub_thread == hi.pub_thread && lo.taken == hi.taken;
            [Some(lo), (!same).then_some(hi)]
        })
        .flatten()
        .collect();
    flows.sort_by(|x, y| (x.published, &x.topic, x.taken).cmp(&(y.published, &y.topic, y.taken)));
    let sampling = Sampling {
        parts: SAMPLED_PARTS,
        runs: runs_seen,
        runs_drawn: runs.len() as u64,
        flows: flows_seen,
        flows_drawn: flows.len() as u64,
        long_ns: a.report.streamed.as_ref().map_or(0, |s| s.margin_ns),
    };
    page(a, title, baseline, sampled_path_instances(a), |report| {
        let mut inst = instances(a, report, &a.report, runs.into_iter(), flows.into_iter());
        inst.sampled = Some(sampling);
        inst
    })
}

/// The messages of a streamed analysis's longest paths kept for a plot (each part's fastest and
/// slowest, [`Analysis::streamed_path_points`]): their latency over time, without the stages.
fn sampled_path_instances(a: &Analysis) -> Vec<PathInstances> {
    let t0 = a.report.begin_ns.unwrap_or(0);
    let Some(lp) = &a.report.longest_paths else { return Vec::new() };
    lp.paths
        .iter()
        .map(|p| {
            let points = a.streamed_path_points(&p.path).unwrap_or_default();
            let (s, lat) = points.iter().map(|&(x, l)| ((x - t0) / 1000, l)).unzip();
            PathInstances { s, lat, ..Default::default() }
        })
        .collect()
}

/// The page of `a`, with its longest paths' messages `paths` and the instances `inst` makes for
/// the report shown.
fn page(
    a: &Analysis,
    title: &str,
    baseline: Option<&Diff>,
    paths: Vec<PathInstances>,
    inst: impl FnOnce(&Report) -> Instances,
) -> String {
    let r = &a.report;
    let (cut, capped) = capped_report(r);
    let report = cut.as_ref().unwrap_or(r);
    let data = Data { title, report, inst: inst(report), paths, capped, baseline };
    let json = script_safe(&serde_json::to_string(&data).unwrap_or_else(|_| "{}".into()));
    let title = escape(title);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · rostrace</title><style>{STYLE}</style></head>\n<body>\
         <header><h1>{title}</h1><span class=\"by\">rostrace report</span></header><main id=\"main\">\
         <noscript>This report draws its tables and plots with JavaScript.</noscript></main>\n\
         <script type=\"application/json\" id=\"data\">{json}</script>\n<script>{SCRIPT}</script>\n</body></html>\n"
    )
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// JSON that can stand inside a `<script>` element whatever its strings hold: `<`, `>` and `&`
/// written as JSON escapes, so that neither `</script>` nor `<!--<script` (which puts HTML's
/// script parser in its "double escaped" state, where the element's end is not seen) can occur.
fn script_safe(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            _ => out.push(c),
        }
    }
    out
}
