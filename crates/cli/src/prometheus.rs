//! `rostrace live --prometheus ADDR`: the snapshots' metrics in Prometheus' text exposition
//! format (0.0.4) at `http://ADDR/metrics`.
//!
//! Counters (`_total`, and a summary's `_count` and `_sum`) are totals over the recording so far
//! ([`Totals`]): `live` adds up, at each snapshot, the slice of time from the last cut to a new
//! one out of the snapshot's own analysis (runs by their start, messages by their publication),
//! and sets them from the whole recording's analysis at the end; a summary's quantiles and the
//! gauges are over the snapshot's window. Summaries, not histograms: the analysis gives nearest-rank
//! quantiles of the window (those `live` prints), not bucket counts, and Prometheus cannot
//! compute a window's p99 from buckets as exactly.
//!
//! Label sets are bounded: each of the callback, topic and pair label sets admits at most
//! `--prometheus-max-series` values, the busiest first and then in the order they appear; once
//! admitted a set stays, so that a series never moves; the others are summed into one set whose
//! labels are all `other` (their quantiles are the largest of theirs, an upper bound).
//!
//! The server is std's `TcpListener` (no HTTP dependency to build): a thread accepts, a thread per
//! connection answers, at most [`MAX_CONNECTIONS`] at once. A client cannot hold the server: the
//! request's head must arrive within [`HEAD_DEADLINE`] however slowly its bytes come, the response
//! be taken within [`WRITE_DEADLINE`], and a connection past the limit closes the oldest one
//! still sending its head (else the oldest), so that a scrape is answered while idle or slow
//! clients hold connections open.

use rostrace_analysis::check::{Outcome, Status};
use rostrace_analysis::{Report, Stats};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::io::{ErrorKind, Read as _, Write as _};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Connections served at once; a new one past it closes an older one ([`Connections::admit`]).
pub const MAX_CONNECTIONS: usize = 16;
/// The time a client has to send its request's head, from its connection, whatever its rate.
pub const HEAD_DEADLINE: Duration = Duration::from_secs(3);
/// The time a client has to take the response (Prometheus' default scrape timeout).
pub const WRITE_DEADLINE: Duration = Duration::from_secs(10);

/// The options of `live` for Prometheus.
#[derive(clap::Args, Clone)]
pub struct Options {
    /// Serve the snapshots' metrics for Prometheus at http://ADDR/metrics (e.g. 127.0.0.1:9464;
    /// port 0 picks a free one, printed on stderr).
    #[arg(long, value_name = "ADDR")]
    pub prometheus: Option<String>,
    /// At most N label sets each for callbacks, topics and publisher → subscriber pairs; the
    /// others are summed into one set labelled `other`.
    #[arg(long, value_name = "N", default_value_t = 100, requires = "prometheus")]
    pub prometheus_max_series: usize,
}

/// The metrics served, updated at each snapshot. Clones share them.
#[derive(Clone)]
pub struct Exporter {
    state: Arc<Mutex<State>>,
    /// Where it serves.
    addr: SocketAddr,
}

#[derive(Default)]
struct State {
    /// The exposition served.
    body: String,
    /// The callback, topic, pair and expectation label sets admitted.
    callbacks: Limit,
    topics: Limit,
    pairs: Limit,
    expectations: Limit,
    /// Each counter's value served, by its series: a counter never goes down, also when a later
    /// analysis counts less (a stream file being rewritten, a process's file not read).
    served: HashMap<String, f64>,
}

/// Starts serving on `opts.prometheus`, when given.
pub fn serve(opts: &Options) -> Result<Option<Exporter>, String> {
    let Some(addr) = opts.prometheus.as_deref() else { return Ok(None) };
    if opts.prometheus_max_series == 0 {
        return Err("invalid --prometheus-max-series 0: give at least 1".into());
    }
    let listener = TcpListener::bind(addr).map_err(|e| format!("--prometheus {addr}: {e}"))?;
    let bound = listener.local_addr().map_err(|e| format!("--prometheus {addr}: {e}"))?;
    let limit = Limit { max: opts.prometheus_max_series, ..Limit::default() };
    let state = State::new(limit);
    let exporter = Exporter { state: Arc::new(Mutex::new(state)), addr: bound };
    let shared = exporter.clone();
    std::thread::Builder::new()
        .name("prometheus".into())
        .spawn(move || shared.accept(listener))
        .map_err(|e| format!("--prometheus {addr}: {e}"))?;
    crate::out::errln!("rostrace: Prometheus metrics at http://{}/metrics", exporter.addr);
    Ok(Some(exporter))
}

impl Exporter {
    /// Makes the metrics of a snapshot: `window` is its analysis (quantiles, gauges), `totals`
    /// the counters' values; `span` the window's events (ns since the epoch); `expectations`
    /// those of `--expect` checked against the window.
    pub fn update(&self, window: &Report, totals: &Totals, span: Option<(i64, i64)>, expectations: &[Outcome]) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let body = st.render(window, totals, span, expectations);
        st.body = body;
    }

    fn body(&self) -> String {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).body.clone()
    }

    /// Serves the connections of `listener`, each on a thread of its own, forever.
    fn accept(&self, listener: TcpListener) {
        let open = Arc::new(Mutex::new(Connections::default()));
        for stream in listener.incoming() {
            let stream = match stream {
                Ok(s) => s,
                Err(_) => {
                    // Out of file descriptors, say: the error would repeat at once, in a busy loop.
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
            };
            let Some(id) = Connections::lock(&open).admit(&stream) else { continue };
            let (shared, open2) = (self.clone(), open.clone());
            let served = std::thread::Builder::new().name("prometheus-client".into()).spawn(move || {
                // A client that fails or stalls costs its connection only.
                let _ = shared.respond(stream, id, &open2);
                Connections::lock(&open2).remove(id);
            });
            if served.is_err() {
                Connections::lock(&open).close(id);
            }
        }
    }

    /// Answers one HTTP request: `GET /metrics` (or `HEAD`), else 404 or 405. `id` is the
    /// connection's in `open`.
    fn respond(&self, mut s: TcpStream, id: u64, open: &Mutex<Connections>) -> std::io::Result<()> {
        let head = read_head(&mut s, Instant::now() + HEAD_DEADLINE)?;
        Connections::lock(open).answering(id);
        let line = head.lines().next().unwrap_or("");
        let mut parts = line.split(' ');
        let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let path = target.split('?').next().unwrap_or("");
        let (status, body) = match (method, path) {
            ("GET" | "HEAD", "/metrics") => ("200 OK", self.body()),
            ("GET" | "HEAD", _) => ("404 Not Found", "not found: the metrics are at /metrics\n".to_string()),
            _ => ("405 Method Not Allowed", "only GET and HEAD\n".to_string()),
        };
        let mut response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        if method != "HEAD" {
            response.push_str(&body);
        }
        write_all_by(&mut s, response.as_bytes(), Instant::now() + WRITE_DEADLINE)
    }
}

/// The connections being served, by the order they came in: each a handle on its socket, so
/// that a newer one can close it, and whether its request was read.
#[derive(Default)]
struct Connections {
    next: u64,
    open: BTreeMap<u64, (TcpStream, bool)>,
}

impl Connections {
    fn lock(m: &Mutex<Connections>) -> MutexGuard<'_, Connections> {
        m.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Admits `s`, first closing the oldest connection still sending its head when
    /// [`MAX_CONNECTIONS`] are open (the oldest of all when every one is being answered): a
    /// scrape sends its head at once and is answered in milliseconds, so what is closed is a
    /// client that holds a connection without asking. None when `s` cannot be watched.
    fn admit(&mut self, s: &TcpStream) -> Option<u64> {
        while self.open.len() >= MAX_CONNECTIONS {
            let idle = self.open.iter().find(|(_, (_, answering))| !answering).map(|(id, _)| *id);
            let Some(oldest) = idle.or_else(|| self.open.keys().next().copied()) else { break };
            self.close(oldest);
        }
        let handle = s.try_clone().ok()?;
        let id = self.next;
        self.next += 1;
        self.open.insert(id, (handle, false));
        Some(id)
    }

    /// Marks `id` as being answered: its request was read.
    fn answering(&mut self, id: u64) {
        if let Some(c) = self.open.get_mut(&id) {
            c.1 = true;
        }
    }

    /// Closes `id`'s socket: its thread's read or write fails at once, and the thread ends.
    fn close(&mut self, id: u64) {
        if let Some((s, _)) = self.open.remove(&id) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    fn remove(&mut self, id: u64) {
        self.open.remove(&id);
    }
}

/// The time left until `deadline`, or a timeout error when there is none (a socket's timeout
/// cannot be zero).
fn left(deadline: Instant) -> std::io::Result<Duration> {
    let d = deadline.saturating_duration_since(Instant::now());
    if d.is_zero() {
        Err(std::io::Error::new(ErrorKind::TimedOut, "deadline passed"))
    } else {
        Ok(d)
    }
}

/// The request's head (up to its empty line, at most 16 KiB), all of it by `deadline`: each read
/// waits only for the time left, so a byte now and then does not extend it.
fn read_head(s: &mut TcpStream, deadline: Instant) -> std::io::Result<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 2048];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 16 * 1024 {
        s.set_read_timeout(Some(left(deadline)?))?;
        let n = match s.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// Writes all of `b` by `deadline` (a client reading slowly does not extend it).
fn write_all_by(s: &mut TcpStream, mut b: &[u8], deadline: Instant) -> std::io::Result<()> {
    while !b.is_empty() {
        s.set_write_timeout(Some(left(deadline)?))?;
        match s.write(b) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => b = &b[n..],
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    s.flush()
}

/// The label sets of one kind admitted as series of their own.
#[derive(Default, Clone)]
struct Limit {
    max: usize,
    admitted: HashSet<Vec<String>>,
    /// Those summed into `other`.
    over: HashSet<Vec<String>>,
}

impl Limit {
    /// `labels`, or `other` in each when the bound is reached and it was not admitted before.
    fn key(&mut self, labels: Vec<String>) -> Vec<String> {
        if self.admitted.contains(&labels) {
            return labels;
        }
        if self.admitted.len() < self.max {
            self.admitted.insert(labels.clone());
            return labels;
        }
        let other = vec![OTHER.to_string(); labels.len()];
        self.over.insert(labels);
        other
    }
}

/// The label value of the series that sums those over the bound (node and topic names start with
/// `/`, so it is never a real one).
const OTHER: &str = "other";

/// The counters' values: per callback, topic and pair label set, the runs or messages with
/// their time (a summary's `_count` and `_sum`) and the other counters (a topic's publishes and
/// takes, a pair's messages); and the events read and discarded. Added up from the reports of
/// consecutive slices of time ([`Totals::add`]), or the whole recording's ([`Totals::of`]).
#[derive(Default, Clone)]
pub struct Totals {
    callbacks: BTreeMap<Vec<String>, Total>,
    topics: BTreeMap<Vec<String>, Total>,
    pairs: BTreeMap<Vec<String>, Total>,
    /// Events read.
    pub events: u64,
    /// Events the tracer discarded.
    pub discarded: u64,
}

/// One label set's counters (see [`Totals`]).
#[derive(Default, Clone, Copy)]
struct Total {
    count: u64,
    sum_ns: i128,
    extra: [u64; 2],
}

impl Total {
    fn add(&mut self, t: &Total) {
        self.count += t.count;
        self.sum_ns += t.sum_ns;
        self.extra[0] += t.extra[0];
        self.extra[1] += t.extra[1];
    }

    /// A summary's runs or messages and their time, with the other counters.
    fn of(s: &Stats, extra: [u64; 2]) -> Total {
        Total { count: s.count, sum_ns: s.sum, extra }
    }
}

impl Totals {
    /// The counters of the whole recording, from its report.
    pub fn of(whole: &Report) -> Totals {
        let mut t = Totals { events: whole.events, discarded: whole.discarded_events, ..Totals::default() };
        t.add(whole);
        t
    }

    /// Adds the callbacks and topics of `r` (a slice of time: [`rostrace_analysis::report::slice`]).
    pub fn add(&mut self, r: &Report) {
        for c in &r.callbacks {
            self.callbacks.entry(callback_labels(c)).or_default().add(&Total::of(&c.duration_ns, [0, 0]));
        }
        for x in &r.topics {
            let total = Total::of(&x.pub_to_callback_ns, [x.publishes, x.takes]);
            self.topics.entry(vec![x.name.to_string()]).or_default().add(&total);
            for p in &x.pairs {
                self.pairs
                    .entry(pair_labels(&x.name, p))
                    .or_default()
                    .add(&Total::of(&p.pub_to_callback_ns, [p.count, 0]));
            }
        }
    }
}

/// One series' values: the counters' totals, the rest from the window.
#[derive(Default)]
struct Series {
    /// The counters (`extra`: publishes and takes, or a pair's messages).
    total: Total,
    window_count: u64,
    p50: i64,
    p99: i64,
    max: i64,
    /// Gauges of the window (unmatched, dropped).
    gauges: [Option<u64>; 2],
}

impl Series {
    /// Merged quantiles are the largest of the merged: an upper bound.
    fn add_window(&mut self, s: &Stats) {
        if s.count > 0 {
            self.window_count += s.count;
            self.p50 = self.p50.max(s.p50);
            self.p99 = self.p99.max(s.p99);
            self.max = self.max.max(s.max);
        }
    }
}

type Table = BTreeMap<Vec<String>, Series>;

fn callback_labels(c: &rostrace_analysis::CallbackReport) -> Vec<String> {
    let period = c.timer_period_ns.map(|p| number(p as f64 / 1e9)).unwrap_or_default();
    vec![
        c.node.to_string(),
        c.kind.to_string(),
        c.topic.as_deref().unwrap_or_default().to_string(),
        period,
        c.symbol.to_string(),
    ]
}

fn pair_labels(topic: &str, p: &rostrace_analysis::report::PairReport) -> Vec<String> {
    vec![topic.to_string(), p.publisher_node.to_string(), p.subscription_node.to_string()]
}

/// Sorted busiest first, so that the bound keeps the busiest series of their own.
fn busiest_first(totals: &BTreeMap<Vec<String>, Total>, n: impl Fn(&Total) -> u64) -> Vec<(&Vec<String>, &Total)> {
    let mut v: Vec<_> = totals.iter().collect();
    v.sort_by_key(|(_, x)| std::cmp::Reverse(n(x)));
    v
}

impl State {
    fn new(limit: Limit) -> Self {
        let (callbacks, topics, pairs) = (limit.clone(), limit.clone(), limit.clone());
        State { callbacks, topics, pairs, expectations: limit, ..State::default() }
    }

    /// Per expectation: 1 when the window fails it, 0 when it passes or cannot measure it; past
    /// the bound, the failing ones are summed into `other`.
    fn expectations(&mut self, outcomes: &[Outcome]) -> BTreeMap<Vec<String>, u64> {
        let mut t = BTreeMap::new();
        for o in outcomes {
            let labels = vec![o.line.to_string(), o.subject.clone(), o.metric.clone()];
            *t.entry(self.expectations.key(labels)).or_default() += u64::from(o.status == Status::Fail);
        }
        t
    }

    fn callbacks(&mut self, window: &Report, totals: &Totals) -> Table {
        let mut t = Table::new();
        for (labels, total) in busiest_first(&totals.callbacks, |x| x.count) {
            t.entry(self.callbacks.key(labels.clone())).or_default().total.add(total);
        }
        for c in &window.callbacks {
            t.entry(self.callbacks.key(callback_labels(c))).or_default().add_window(&c.duration_ns);
        }
        t
    }

    fn topics(&mut self, window: &Report, totals: &Totals) -> Table {
        let mut t = Table::new();
        for (labels, total) in busiest_first(&totals.topics, |x| x.extra[0]) {
            t.entry(self.topics.key(labels.clone())).or_default().total.add(total);
        }
        for x in &window.topics {
            let s = t.entry(self.topics.key(vec![x.name.to_string()])).or_default();
            s.add_window(&x.pub_to_callback_ns);
            s.gauges[0] = Some(s.gauges[0].unwrap_or(0) + x.unmatched);
            if let Some(d) = x.dropped {
                s.gauges[1] = Some(s.gauges[1].unwrap_or(0) + d);
            }
        }
        t
    }

    fn pairs(&mut self, window: &Report, totals: &Totals) -> Table {
        let mut t = Table::new();
        for (labels, total) in busiest_first(&totals.pairs, |x| x.extra[0]) {
            t.entry(self.pairs.key(labels.clone())).or_default().total.add(total);
        }
        // The window's matched messages (in `gauges`), for the pair's rate.
        for x in &window.topics {
            for p in &x.pairs {
                let s = t.entry(self.pairs.key(pair_labels(&x.name, p))).or_default();
                s.add_window(&p.pub_to_callback_ns);
                s.gauges[0] = Some(s.gauges[0].unwrap_or(0) + p.count);
            }
        }
        t
    }

    fn render(&mut self, window: &Report, totals: &Totals, span: Option<(i64, i64)>, outcomes: &[Outcome]) -> String {
        let secs = span.map_or(0.0, |(b, e)| (e - b).max(0) as f64 / 1e9);
        let rate = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        let callbacks = self.callbacks(window, totals);
        let topics = self.topics(window, totals);
        let pairs = self.pairs(window, totals);
        let expectations = self.expectations(outcomes);
        let mut o = Out { text: String::new(), served: &mut self.served };
        o.family("rostrace_events_total", "counter", "Events read from the recording.");
        o.counter("rostrace_events_total", &[], totals.events as f64);
        o.family("rostrace_discarded_events_total", "counter", "Events the tracer discarded (buffers full).");
        o.counter("rostrace_discarded_events_total", &[], totals.discarded as f64);
        if let Some((_, e)) = span {
            let last = "The last event of the snapshot (seconds since the epoch).";
            o.family("rostrace_snapshot_timestamp_seconds", "gauge", last);
            o.gauge("rostrace_snapshot_timestamp_seconds", &[], e as f64 / 1e9);
            o.family("rostrace_window_seconds", "gauge", "The length of the snapshot's window (its events' span).");
            o.gauge("rostrace_window_seconds", &[], secs);
        }
        let c_names = ["node", "kind", "topic", "period", "symbol"];
        o.summary("rostrace_callback_duration_seconds", "Callback run time.", &c_names, &callbacks);
        o.family("rostrace_callback_rate_hertz", "gauge", "Callback runs per second over the window.");
        for (k, s) in &callbacks {
            o.gauge("rostrace_callback_rate_hertz", &zip(&c_names, k), rate(s.window_count));
        }
        o.summary("rostrace_topic_latency_seconds", "Publish to subscription callback start.", &["topic"], &topics);
        let counters = [
            ("rostrace_topic_publishes_total", "Messages published."),
            ("rostrace_topic_takes_total", "Messages taken by subscriptions."),
        ];
        for (i, (name, help)) in counters.iter().enumerate() {
            o.family(name, "counter", help);
            for (k, s) in &topics {
                o.counter(name, &zip(&["topic"], k), s.total.extra[i] as f64);
            }
        }
        let gauges = [
            ("rostrace_topic_unmatched_takes", "Takes in the window not matched to their publication."),
            ("rostrace_topic_dropped_messages", "Messages in the window a subscription never took."),
        ];
        for (i, (name, help)) in gauges.iter().enumerate() {
            o.family(name, "gauge", help);
            for (k, s) in &topics {
                // Dropped messages are left out where they cannot be known.
                if let Some(v) = s.gauges[i] {
                    o.gauge(name, &zip(&["topic"], k), v as f64);
                }
            }
        }
        let p_names = ["topic", "publisher", "subscriber"];
        o.summary(
            "rostrace_pair_latency_seconds",
            "Publish to callback start per publisher and subscriber node.",
            &p_names,
            &pairs,
        );
        o.family("rostrace_pair_messages_total", "counter", "Messages matched per publisher and subscriber node.");
        for (k, s) in &pairs {
            o.counter("rostrace_pair_messages_total", &zip(&p_names, k), s.total.extra[0] as f64);
        }
        o.family("rostrace_pair_rate_hertz", "gauge", "Messages matched per second over the window.");
        for (k, s) in &pairs {
            o.gauge("rostrace_pair_rate_hertz", &zip(&p_names, k), rate(s.gauges[0].unwrap_or(0)));
        }
        if !outcomes.is_empty() {
            let help = "Whether the window fails the expectation of --expect (1) or not (0).";
            o.family("rostrace_expectation_failing", "gauge", help);
            for (k, n) in &expectations {
                o.gauge("rostrace_expectation_failing", &zip(&["line", "subject", "metric"], k), *n as f64);
            }
        }
        o.family("rostrace_series_other", "gauge", "Label sets over --prometheus-max-series, summed into `other`.");
        let mut bounded = vec![("callback", &self.callbacks), ("topic", &self.topics), ("pair", &self.pairs)];
        if !outcomes.is_empty() {
            bounded.push(("expectation", &self.expectations));
        }
        for (name, l) in bounded {
            o.gauge("rostrace_series_other", &[("metric", name)], l.over.len() as f64);
        }
        o.text
    }
}

fn zip<'a>(names: &[&'a str], values: &'a [String]) -> Vec<(&'a str, &'a str)> {
    names.iter().zip(values).filter(|(_, v)| !v.is_empty()).map(|(n, v)| (*n, v.as_str())).collect()
}

/// A number as Prometheus reads it.
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

/// A label value escaped as the exposition format asks: backslash, double quote, newline.
fn escape(v: &str) -> String {
    // Backslash first, so that the backslashes added after are not doubled.
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// The exposition being written.
struct Out<'a> {
    text: String,
    served: &'a mut HashMap<String, f64>,
}

impl Out<'_> {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.text, "# HELP {name} {help}\n# TYPE {name} {kind}");
    }

    fn series(name: &str, labels: &[(&str, &str)]) -> String {
        if labels.is_empty() {
            return name.to_string();
        }
        let l: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{}\"", escape(v))).collect();
        format!("{name}{{{}}}", l.join(","))
    }

    fn gauge(&mut self, name: &str, labels: &[(&str, &str)], v: f64) {
        let _ = writeln!(self.text, "{} {}", Self::series(name, labels), number(v));
    }

    /// A counter: never less than what was served before.
    fn counter(&mut self, name: &str, labels: &[(&str, &str)], v: f64) {
        let series = Self::series(name, labels);
        let held = self.served.entry(series.clone()).or_insert(v);
        *held = held.max(v);
        let _ = writeln!(self.text, "{series} {}", number(*held));
    }

    /// A summary per series: quantiles 0.5, 0.99 and 1 (the largest) of the window (NaN when
    /// it had none), `_count` and `_sum` of the whole recording.
    fn summary(&mut self, name: &str, help: &str, names: &[&str], t: &Table) {
        self.family(name, "summary", help);
        for (k, s) in t {
            let labels = zip(names, k);
            for (q, v) in [("0.5", s.p50), ("0.99", s.p99), ("1", s.max)] {
                let mut l = labels.clone();
                l.push(("quantile", q));
                let v = if s.window_count > 0 { v as f64 / 1e9 } else { f64::NAN };
                self.gauge(name, &l, v);
            }
            self.counter(&format!("{name}_count"), &labels, s.total.count as f64);
            self.counter(&format!("{name}_sum"), &labels, s.total.sum_ns as f64 / 1e9);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rostrace_analysis::report::PairReport;
    use rostrace_analysis::{CallbackReport, TopicReport};

    fn stats(count: u64, p50: i64, p99: i64, max: i64) -> Stats {
        Stats { count, p50, p99, max, sum: (p50 as i128) * count as i128, ..Stats::default() }
    }

    fn callback(node: &str, count: u64, p99: i64) -> CallbackReport {
        CallbackReport {
            trace: 0,
            vpid: 1,
            host: "h".into(),
            procname: "p".into(),
            address: 1,
            symbol: "cb".into(),
            node: node.into(),
            kind: "timer",
            unknown_reason: None,
            topic: None,
            timer_period_ns: Some(100_000_000),
            count,
            unfinished: 0,
            intra_process: 0,
            duration_ns: stats(count, p99 / 2, p99, p99),
            period_ns: Stats::default(),
            jitter_ns: None,
            total_ns: 0,
            share: 0.0,
        }
    }

    fn topic(name: &str, publishes: u64, publisher: &str, subscriber: &str) -> TopicReport {
        let latency = stats(publishes, 1_000, 2_000, 3_000);
        TopicReport {
            name: name.into(),
            publishers: vec![publisher.into()],
            subscribers: vec![subscriber.into()],
            publishes,
            takes: publishes,
            matched: publishes,
            unmatched: 1,
            unmatched_reasons: Vec::new(),
            dropped: Some(2),
            by_source_timestamp: publishes,
            by_publish_window: 0,
            intra_process: 0,
            pub_to_take_ns: latency.clone(),
            pub_to_callback_ns: latency.clone(),
            take_to_callback_ns: latency.clone(),
            pairs: vec![PairReport {
                publisher_node: publisher.into(),
                publisher_vpid: 1,
                publisher_host: "h".into(),
                subscription_node: subscriber.into(),
                subscription_vpid: 2,
                subscription_host: "h".into(),
                count: publishes,
                pub_to_take_ns: latency.clone(),
                pub_to_callback_ns: latency,
            }],
        }
    }

    fn report(callbacks: Vec<CallbackReport>, topics: Vec<TopicReport>) -> Report {
        Report { events: 100, callbacks, topics, ..Report::default() }
    }

    fn exporter(max: usize) -> Exporter {
        let state = State::new(Limit { max, ..Limit::default() });
        Exporter { state: Arc::new(Mutex::new(state)), addr: ([127, 0, 0, 1], 0).into() }
    }

    fn line<'a>(body: &'a str, start: &str) -> &'a str {
        body.lines().find(|l| l.starts_with(start)).unwrap_or_else(|| panic!("no {start} in\n{body}"))
    }

    /// Label values are escaped (backslash, double quote, newline), and Prometheus' own checker
    /// reads the exposition.
    #[test]
    fn hostile_names_are_escaped() {
        let evil = "/evil\"node\\x\nnext";
        let r = report(vec![callback(evil, 5, 2_000_000)], vec![topic("/t\"\\\n", 7, evil, "/sub")]);
        let e = exporter(10);
        e.update(&r, &Totals::of(&r), Some((0, 2_000_000_000)), &[outcome(4, evil, Status::Fail)]);
        let body = e.body();
        let escaped = r#"node="/evil\"node\\x\nnext""#;
        let count =
            format!(r#"rostrace_callback_duration_seconds_count{{{escaped},kind="timer",period="0.1",symbol="cb"}} 5"#);
        assert!(body.lines().any(|l| l == count), "{body}");
        let pair = r#"rostrace_pair_latency_seconds_count{topic="/t\"\\\n",publisher="/evil\"node\\x\nnext",subscriber="/sub"} 7"#;
        assert!(body.lines().any(|l| l == pair), "{body}");
        assert!(body.lines().all(|l| l.starts_with("rostrace_") || l.starts_with("# ")), "{body}");
        if rostrace_testkit::require(rostrace_testkit::have("promtool", "--version"), "promtool (Debian's prometheus)")
        {
            let mut child = std::process::Command::new("promtool")
                .args(["check", "metrics"])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            child.stdin.take().unwrap().write_all(body.as_bytes()).unwrap();
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}{}\n{body}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }

    fn outcome(line: usize, subject: &str, status: Status) -> Outcome {
        Outcome {
            subject: format!("callback {subject}"),
            metric: "duration max".into(),
            status,
            measured: Some(2e6),
            unit: rostrace_analysis::check::Unit::Ns,
            limit: rostrace_analysis::check::Bound { low: None, high: Some(1e6) },
            line,
            note: None,
        }
    }

    /// An expectation's gauge is 1 while the window fails it, 0 else; past the bound the failing
    /// ones are summed into `other`.
    #[test]
    fn expectations_are_bounded_gauges() {
        let e = exporter(1);
        let r = report(vec![], vec![]);
        let outcomes = [outcome(3, "/a", Status::Pass), outcome(5, "/b", Status::Fail), outcome(7, "/c", Status::Fail)];
        e.update(&r, &Totals::of(&r), Some((0, 1_000_000_000)), &outcomes);
        let body = e.body();
        let labels = r#"line="3",subject="callback /a",metric="duration max""#;
        assert!(body.contains(&format!("rostrace_expectation_failing{{{labels}}} 0\n")), "{body}");
        let other = r#"line="other",subject="other",metric="other""#;
        assert!(body.contains(&format!("rostrace_expectation_failing{{{other}}} 2\n")), "{body}");
        assert!(body.contains("rostrace_series_other{metric=\"expectation\"} 2\n"), "{body}");
        let outcomes = [outcome(3, "/a", Status::Fail), outcome(5, "/b", Status::Pass)];
        e.update(&r, &Totals::of(&r), Some((0, 1_000_000_000)), &outcomes);
        let body = e.body();
        assert!(body.contains(&format!("rostrace_expectation_failing{{{labels}}} 1\n")), "{body}");
        assert!(body.contains(&format!("rostrace_expectation_failing{{{other}}} 0\n")), "{body}");
        // Without --expect, none of it.
        e.update(&r, &Totals::of(&r), Some((0, 1_000_000_000)), &[]);
        assert!(!e.body().contains("expectation"), "{}", e.body());
    }

    /// Over the bound, the quietest label sets are summed into `other`, and an admitted set
    /// stays admitted when others get busier.
    #[test]
    fn label_sets_are_bounded_and_stable() {
        let e = exporter(2);
        let cbs = |a: u64, d: u64| {
            vec![callback("/a", a, 4), callback("/b", 30, 2), callback("/c", 20, 8), callback("/d", d, 6)]
        };
        let r = report(cbs(40, 10), vec![]);
        e.update(&r, &Totals::of(&r), Some((0, 1_000_000_000)), &[]);
        let body = e.body();
        let other = r#"node="other",kind="other",topic="other",period="other",symbol="other""#;
        assert_eq!(
            line(&body, &format!("rostrace_callback_duration_seconds_count{{{other}}}")).split(' ').nth(1),
            Some("30")
        );
        let max = line(&body, &format!("rostrace_callback_duration_seconds{{{other},quantile=\"0.99\"}}"));
        assert!(max.ends_with(" 0.000000008"), "{max}");
        assert!(body.contains(r#"rostrace_series_other{metric="callback"} 2"#), "{body}");
        assert!(!body.contains(r#"node="/c""#) && !body.contains(r#"node="/d""#), "{body}");
        // /d becomes the busiest: still in `other`, whose series never moves.
        let r = report(cbs(41, 500), vec![]);
        e.update(&r, &Totals::of(&r), Some((0, 1_000_000_000)), &[]);
        let body = e.body();
        assert!(body.contains(r#"node="/a""#) && body.contains(r#"node="/b""#) && !body.contains(r#"node="/d""#));
        let n = line(&body, &format!("rostrace_callback_duration_seconds_count{{{other}}}"));
        assert!(n.ends_with(" 520"), "{n}");
    }

    /// Counters come from the whole recording and never go down; quantiles from the window,
    /// NaN when the window has no runs.
    #[test]
    fn counters_are_totals_and_quantiles_the_window() {
        let e = exporter(10);
        let whole = report(vec![callback("/a", 50, 4_000)], vec![topic("/t", 9, "/p", "/s")]);
        let window = report(vec![callback("/a", 0, 0)], vec![]);
        e.update(&window, &Totals::of(&whole), Some((0, 1_000_000_000)), &[]);
        let body = e.body();
        assert!(line(&body, "rostrace_callback_duration_seconds_count{").ends_with(" 50"), "{body}");
        assert!(line(&body, "rostrace_callback_duration_seconds{").ends_with(" NaN"), "{body}");
        assert!(body.contains("rostrace_topic_publishes_total{topic=\"/t\"} 9\n"), "{body}");
        let fewer = report(vec![callback("/a", 40, 4_000)], vec![topic("/t", 3, "/p", "/s")]);
        e.update(&fewer, &Totals::of(&fewer), Some((0, 1_000_000_000)), &[]);
        let body = e.body();
        assert!(line(&body, "rostrace_callback_duration_seconds_count{").ends_with(" 50"), "{body}");
        assert!(body.contains("rostrace_topic_publishes_total{topic=\"/t\"} 9\n"), "{body}");
        assert!(body.contains("rostrace_topic_unmatched_takes{topic=\"/t\"} 1\n"), "{body}");
        // A pair's messages: a counter of the recording, a rate over the window.
        let pair = r#"{topic="/t",publisher="/p",subscriber="/s"}"#;
        assert!(body.contains(&format!("rostrace_pair_messages_total{pair} 9\n")), "{body}");
        assert!(body.contains(&format!("rostrace_pair_rate_hertz{pair} 3\n")), "{body}");
        assert!(line(&body, "rostrace_callback_duration_seconds{").ends_with(" 0.000002"), "{body}");
    }

    fn http(addr: SocketAddr, request: &str) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    /// Whether the server closed `s` within `wait` (a read ends or fails, not times out).
    fn closed_within(s: &mut TcpStream, wait: Duration) -> bool {
        s.set_read_timeout(Some(wait)).unwrap();
        match s.read(&mut [0u8; 256]) {
            Ok(n) => n == 0,
            Err(e) => !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
        }
    }

    /// A connection past the limit closes the oldest idle one at once, and a scrape is answered
    /// while the others stay open; a client sending its head a byte at a time is closed at the
    /// head's deadline.
    #[test]
    fn stalling_clients_cannot_hold_the_server() {
        let e = serve(&Options { prometheus: Some("127.0.0.1:0".into()), prometheus_max_series: 10 }).unwrap().unwrap();
        let mut idle: Vec<TcpStream> = (0..MAX_CONNECTIONS).map(|_| TcpStream::connect(e.addr).unwrap()).collect();
        // Accepted in order: each registered before the next is accepted.
        std::thread::sleep(Duration::from_millis(200));
        idle.push(TcpStream::connect(e.addr).unwrap());
        assert!(closed_within(&mut idle[0], Duration::from_secs(1)), "the oldest idle connection stays open");
        assert!(!closed_within(&mut idle[1], Duration::from_millis(100)), "more than the oldest closed");
        let start = Instant::now();
        assert!(http(e.addr, "GET /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 200 OK"));
        assert!(start.elapsed() < Duration::from_secs(1), "a scrape took {:?}", start.elapsed());

        let start = Instant::now();
        let mut slow = TcpStream::connect(e.addr).unwrap();
        slow.write_all(b"GET /metrics HTTP/1.1\r\n").unwrap();
        let closed = loop {
            if closed_within(&mut slow, Duration::from_millis(500)) {
                break Some(start.elapsed());
            }
            if start.elapsed() > HEAD_DEADLINE + Duration::from_secs(3) || slow.write_all(b"X").is_err() {
                break None;
            }
        };
        let closed = closed.expect("a client sending a byte every 500 ms is never closed");
        assert!(closed >= HEAD_DEADLINE - Duration::from_millis(100), "closed after {closed:?}");
        assert!(closed < HEAD_DEADLINE + Duration::from_millis(1500), "closed after {closed:?}");
    }

    #[test]
    fn serves_the_metrics_over_http() {
        let opts = Options { prometheus: Some("127.0.0.1:0".into()), prometheus_max_series: 10 };
        let e = serve(&opts).unwrap().unwrap();
        let r = report(vec![callback("/a", 3, 10)], vec![]);
        e.update(&r, &Totals::of(&r), None, &[]);
        let ok = http(e.addr, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        let (head, body) = ok.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(head.contains("Content-Type: text/plain; version=0.0.4"), "{head}");
        assert!(head.contains(&format!("Content-Length: {}", body.len())), "{head}");
        assert_eq!(body, e.body());
        assert!(http(e.addr, "GET / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(http(e.addr, "POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405"));
        let taken = serve(&Options { prometheus: Some(e.addr.to_string()), prometheus_max_series: 10 });
        assert!(taken.err().is_some_and(|m| m.starts_with(&format!("--prometheus {}: ", e.addr))));
        let zero = serve(&Options { prometheus: Some("127.0.0.1:0".into()), prometheus_max_series: 0 });
        assert!(zero.err().is_some_and(|m| m.contains("--prometheus-max-series")));
    }
}
