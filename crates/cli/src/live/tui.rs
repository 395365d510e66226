//! The terminal UI of `rostrace live`: the snapshots' callbacks, topics, publisher → subscriber
//! pairs and threads as sortable, filterable tables, redrawn at each snapshot. It shows the
//! numbers of the snapshot it is given and computes none of its own.
//!
//! q and Ctrl-C on a recorded command act as Ctrl-C does without the UI: SIGINT to the process
//! group, which ends the command (and so `live`, after its final analysis). Following a directory
//! they end `live` and signal nothing. The terminal is restored when the UI is dropped, and on a panic by ratatui's hook.

use super::snapshot::Snapshot;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Style, Stylize as _};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Paragraph, Row, Table, Tabs, Wrap};
use ratatui::{DefaultTerminal, Frame};
use std::time::Duration;

/// A value of a table cell, and how its column sorts: names A→Z, numbers largest first.
enum Value {
    Text(String),
    Num(Option<f64>),
}

impl Value {
    fn show(&self, unit: f64, decimals: usize) -> String {
        match self {
            Value::Text(s) => crate::format::name(s).into_owned(),
            Value::Num(Some(v)) => format!("{:.*}", decimals, v / unit),
            Value::Num(None) => "-".into(),
        }
    }
}

/// A column: its header, and how its numbers are shown (divided by `unit`).
struct Column {
    header: &'static str,
    unit: f64,
    decimals: usize,
    width: Constraint,
}

const fn text(header: &'static str, width: Constraint) -> Column {
    Column { header, unit: 1.0, decimals: 0, width }
}

const fn num(header: &'static str, unit: f64, decimals: usize) -> Column {
    Column { header, unit, decimals, width: Constraint::Length(11) }
}

const MS: f64 = 1e6;
const PERCENT: f64 = 0.01;

const CALLBACKS: [Column; 8] = [
    text("node", Constraint::Length(24)),
    text("callback", Constraint::Length(28)),
    text("process", Constraint::Length(12)),
    num("rate/s", 1.0, 1),
    num("p50 ms", MS, 3),
    num("p99 ms", MS, 3),
    num("max ms", MS, 3),
    num("jitter99 ms", MS, 3),
];
const TOPICS: [Column; 7] = [
    text("topic", Constraint::Length(28)),
    text("publishers → subscribers", Constraint::Fill(1)),
    num("rate/s", 1.0, 1),
    num("lat p50 ms", MS, 3),
    num("lat p99 ms", MS, 3),
    num("unmatched", 1.0, 0),
    num("dropped", 1.0, 0),
];
const PAIRS: [Column; 6] = [
    text("topic", Constraint::Length(28)),
    text("publisher → subscriber", Constraint::Fill(1)),
    num("rate/s", 1.0, 1),
    num("messages", 1.0, 0),
    num("lat p50 ms", MS, 3),
    num("lat p99 ms", MS, 3),
];
const THREADS: [Column; 6] = [
    text("thread", Constraint::Length(20)),
    num("tid", 1.0, 0),
    num("pid", 1.0, 0),
    num("runs", 1.0, 0),
    num("callback %", PERCENT, 1),
    num("CPU %", PERCENT, 1),
];

/// The tables, in Tab order.
const TABLES: [(&str, &[Column]); 4] =
    [("Callbacks", &CALLBACKS), ("Topics", &TOPICS), ("Pairs", &PAIRS), ("Threads", &THREADS)];
/// The index of the threads' table in [`TABLES`].
const THREADS_TABLE: usize = 3;

fn ns(v: impl Into<Option<i64>>) -> Option<f64> {
    v.into().map(|v| v as f64)
}

/// A row: its names, then its numbers, and the text the filter looks in.
fn row(names: Vec<String>, numbers: Vec<Option<f64>>, filter: String) -> (Vec<Value>, String) {
    (names.into_iter().map(Value::Text).chain(numbers.into_iter().map(Value::Num)).collect(), filter)
}

/// The rows of table `t` of a snapshot.
fn rows(s: &Snapshot, t: usize) -> Vec<(Vec<Value>, String)> {
    match t {
        0 => s
            .callbacks
            .iter()
            .map(|c| {
                let what = match (&c.topic, c.timer_period_ns) {
                    (Some(t), _) => t.to_string(),
                    (None, Some(p)) => format!("timer {:.0} ms", p as f64 / MS),
                    (None, None) => c.kind.to_string(),
                };
                let filter = format!("{} {what}", c.node);
                let durations = [c.p50_ns, c.p99_ns, c.max_ns].map(ns);
                let numbers = [&[Some(c.rate_hz)], &durations[..], &[c.jitter_p99_ns.and_then(ns)]].concat();
                row(vec![c.node.to_string(), what, c.procname.to_string()], numbers, filter)
            })
            .collect(),
        1 => s
            .topics
            .iter()
            .map(|t| {
                let ends = format!("{} → {}", t.publishers.join(", "), t.subscribers.join(", "));
                let filter = format!("{} {ends}", t.name);
                let counts = [Some(t.unmatched as f64), t.dropped.map(|d| d as f64)];
                let numbers = [&[Some(t.rate_hz), ns(t.latency_p50_ns), ns(t.latency_p99_ns)], &counts[..]].concat();
                row(vec![t.name.to_string(), ends], numbers, filter)
            })
            .collect(),
        2 => s
            .pairs
            .iter()
            .map(|p| {
                let ends = format!("{} → {}", p.publisher, p.subscriber);
                let filter = format!("{} {ends}", p.topic);
                let numbers = vec![Some(p.rate_hz), Some(p.count as f64), ns(p.latency_p50_ns), ns(p.latency_p99_ns)];
                row(vec![p.topic.to_string(), ends], numbers, filter)
            })
            .collect(),
        _ => s
            .threads
            .iter()
            .map(|t| {
                let numbers = vec![t.vtid.and_then(ns), ns(t.vpid), Some(t.runs as f64), Some(t.busy), t.cpu];
                row(vec![t.name.to_string()], numbers, t.name.to_string())
            })
            .collect(),
    }
}

fn compare(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a, b) {
        (Value::Text(a), Value::Text(b)) => a.cmp(b),
        // Largest first, a missing number last.
        (Value::Num(a), Value::Num(b)) => b.partial_cmp(a).unwrap_or(std::cmp::Ordering::Equal),
        _ => std::cmp::Ordering::Equal,
    }
}

/// The UI: the terminal, the last snapshot, and what the user chose to see.
pub(super) struct Tui {
    terminal: DefaultTerminal,
    /// The snapshot shown, and the newest one while paused.
    shown: Option<Snapshot>,
    newest: Option<Snapshot>,
    table: usize,
    /// The sort column of each table.
    sort: [usize; TABLES.len()],
    filter: String,
    editing: bool,
    paused: bool,
    /// Set once q or Ctrl-C was pressed: the recording is being finished.
    stopping: bool,
    /// Whether q stops a recorded command (else it ends the following at once).
    stops_command: bool,
}

impl Tui {
    /// Takes over the terminal (raw mode, alternate screen), until dropped.
    pub(super) fn start(stops_command: bool) -> std::io::Result<Self> {
        // A failure half-way (raw mode on, no alternate screen) is undone too.
        let terminal = ratatui::try_init().inspect_err(|_| ratatui::restore())?;
        Ok(Tui {
            terminal,
            shown: None,
            newest: None,
            table: 0,
            sort: [3, 2, 2, 4],
            filter: String::new(),
            editing: false,
            paused: false,
            stopping: false,
            stops_command,
        })
    }

    /// Shows a new snapshot (kept for later while paused). The screen is cleared first: what
    /// the recorded command wrote to the terminal since is wiped.
    pub(super) fn show(&mut self, s: Snapshot) {
        if self.paused {
            self.newest = Some(s);
        } else {
            self.shown = Some(s);
        }
        let _ = self.terminal.clear();
        self.draw();
    }

    /// Waits up to `timeout` for a key and acts on it.
    pub(super) fn input(&mut self, timeout: Duration) {
        let event = match event::poll(timeout) {
            Ok(true) => event::read(),
            _ => return,
        };
        match event {
            Ok(Event::Key(k)) if k.kind != KeyEventKind::Release => self.key(k),
            Ok(Event::Resize(..)) => {}
            _ => return,
        }
        self.draw();
    }

    fn key(&mut self, k: KeyEvent) {
        if k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL) {
            return self.quit();
        }
        if self.editing {
            match k.code {
                KeyCode::Enter => self.editing = false,
                KeyCode::Esc => {
                    self.editing = false;
                    self.filter.clear();
                }
                KeyCode::Backspace => {
                    self.filter.pop();
                }
                KeyCode::Char(c) => self.filter.push(c),
                _ => {}
            }
            return;
        }
        let columns = TABLES[self.table].1.len();
        match k.code {
            KeyCode::Char('q') => self.quit(),
            KeyCode::Tab => self.table = (self.table + 1) % TABLES.len(),
            KeyCode::BackTab => self.table = (self.table + TABLES.len() - 1) % TABLES.len(),
            KeyCode::Char('s') => self.sort[self.table] = (self.sort[self.table] + 1) % columns,
            KeyCode::Char(c @ '1'..='9') => {
                let i = c as usize - '1' as usize;
                if i < columns {
                    self.sort[self.table] = i;
                }
            }
            KeyCode::Char('/') => self.editing = true,
            KeyCode::Esc => self.filter.clear(),
            KeyCode::Char('p' | ' ') => {
                self.paused = !self.paused;
                if let Some(s) = self.newest.take().filter(|_| !self.paused) {
                    self.shown = Some(s);
                }
            }
            _ => {}
        }
    }

    /// q or Ctrl-C: what Ctrl-C does without the UI (raw mode keeps the terminal from sending it).
    fn quit(&mut self) {
        self.stopping = true;
        if self.stops_command {
            // SAFETY: kill(2) to our own process group; `live` catches SIGINT (an atomic flag).
            unsafe { libc::kill(0, libc::SIGINT) };
        }
    }

    /// Whether following a directory should end (q or Ctrl-C).
    pub(super) fn done(&self) -> bool {
        self.stopping && !self.stops_command
    }

    fn draw(&mut self) {
        let Tui { terminal, shown, table, sort, filter, editing, paused, stopping, .. } = self;
        let v = View {
            snap: shown.as_ref(),
            table: *table,
            sort: sort[*table],
            filter,
            editing: *editing,
            paused: *paused,
            stopping: *stopping,
        };
        // A failed draw (a terminal gone) leaves the next one to try: the recording goes on.
        let _ = terminal.draw(|f| render(f, &v));
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

/// What `render` reads of the UI's state (the terminal is borrowed while drawing).
struct View<'a> {
    snap: Option<&'a Snapshot>,
    table: usize,
    sort: usize,
    filter: &'a str,
    editing: bool,
    paused: bool,
    stopping: bool,
}

fn render(f: &mut Frame, v: &View) {
    let [head, tabs, body, alerts, help] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(2),
        Constraint::Length(1),
    ])
    .areas(f.area());
    f.render_widget(Paragraph::new(header(v)).bold(), head);
    let titles = TABLES.iter().map(|(name, _)| *name);
    f.render_widget(Tabs::new(titles).select(v.table).highlight_style(Style::new().reversed()), tabs);
    match v.snap {
        Some(s) => f.render_widget(table(s, v), body),
        None => f.render_widget(Paragraph::new("waiting for the first events…"), body),
    }
    let alert = v.snap.map(|s| s.alerts.join(" | ")).filter(|a| !a.is_empty());
    let alert = match alert {
        Some(a) => Line::from(format!("alerts: {}", crate::format::terminal(&a))).red(),
        None => Line::from("alerts: none"),
    };
    f.render_widget(Paragraph::new(alert).wrap(Wrap { trim: true }), alerts);
    f.render_widget(Paragraph::new(help_line(v)).reversed(), help);
}

fn header(v: &View) -> String {
    let Some(s) = v.snap else { return "rostrace live".into() };
    let mut h = format!("rostrace live: {}", s.summary());
    if v.paused {
        h.push_str("  [paused]");
    }
    if v.stopping {
        h.push_str("  [stopping: finishing the recording]");
    }
    h
}

fn help_line(v: &View) -> String {
    if v.editing {
        return format!("filter: {}▏ Enter keeps it, Esc clears it", v.filter);
    }
    let filter = if v.filter.is_empty() { String::new() } else { format!("  filter \"{}\"", v.filter) };
    format!("Tab table  s/1-9 sort  / filter  Esc clear  p pause  q quit{filter}")
}

fn table<'a>(s: &Snapshot, v: &View) -> Table<'a> {
    let (_, columns) = TABLES[v.table];
    let needle = v.filter.to_lowercase();
    let mut rows: Vec<_> = rows(s, v.table).into_iter().filter(|(_, f)| f.to_lowercase().contains(&needle)).collect();
    rows.sort_by(|a, b| compare(&a.0[v.sort], &b.0[v.sort]));
    let header = columns.iter().enumerate().map(|(i, c)| {
        let cell = Cell::from(if i == v.sort { format!("{}▼", c.header) } else { c.header.to_string() });
        if i == v.sort {
            cell.reversed()
        } else {
            cell
        }
    });
    let body = rows.iter().map(|(cells, _)| {
        Row::new(cells.iter().zip(columns).map(|(value, c)| Cell::from(value.show(c.unit, c.decimals))))
    });
    let mut t = Table::new(body, columns.iter().map(|c| c.width)).header(Row::new(header).bold());
    if v.table == THREADS_TABLE && !s.kernel {
        t = t.block(
            ratatui::widgets::Block::new()
                .title_bottom("CPU %: no kernel events (record with --with-kernel for the threads' time on CPU)"),
        );
    }
    t
}
