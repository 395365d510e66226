//! The raw events: a table per event name (`events/ros2.callback_start`), a column per context
//! and payload field.

use crate::names::{self, Renamed, Taken};
use crate::schema::{event_columns, Column, Kind};
use crate::tables::{Cell, Counts, Sink, TableWriter};
use rostrace_ctf::types::Ty;
use rostrace_ctf::{FieldValue, StructRef, TraceSet};
use std::borrow::Cow;
use std::collections::HashMap;
use std::io;

/// The column kind of a field type.
fn kind_of(ty: &Ty) -> Kind {
    match ty {
        Ty::Int { t, .. } if t.signed => Kind::I64,
        Ty::Int { .. } => Kind::U64,
        Ty::Float(_) => Kind::F64,
        _ => Kind::Str,
    }
}

/// The table name of an event name: `ros2:callback_start` → `events/ros2.callback_start`; a
/// name that is not a file name so (`..`, `ros2.callback_start`, 300 bytes long) gets an escaped
/// one ending in a hash of the name ([`names::event_dir`]), the same in every export.
pub fn table_name(event: &str) -> String {
    format!("events/{}", names::event_dir(event).0)
}

/// An event table whose name is not its event's name with each `:` made `.`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Renaming {
    /// The table (`events/%2E.~<hash>`).
    pub table: String,
    /// The event name.
    pub event: String,
    /// Why.
    pub why: Renamed,
}

struct Layout {
    name: String,
    event: String,
    renamed: Option<Renamed>,
    columns: Vec<Column>,
}

impl Layout {
    /// The column of `field` (of type `ty`), added when new; a field whose types differ
    /// between classes of the same name becomes a string.
    fn column(&mut self, field: &str, ty: &Ty) -> usize {
        let kind = kind_of(ty);
        match self.columns.iter().position(|c| c.name == field) {
            Some(i) => {
                if self.columns[i].kind != kind {
                    self.columns[i].kind = Kind::Str;
                }
                i
            }
            None => {
                self.columns.push(Column { name: field.to_string(), kind, doc: "" });
                self.columns.len() - 1
            }
        }
    }
}

fn struct_fields(ty: Option<&Ty>) -> Vec<(&str, &Ty)> {
    match ty {
        Some(Ty::Struct(s)) => s.fields.iter().map(|f| (f.name.as_str(), &f.ty)).collect(),
        _ => Vec::new(),
    }
}

fn cell<'a>(v: FieldValue<'a>, kind: Kind) -> Cell<'a> {
    match (v, kind) {
        (FieldValue::U64(x), Kind::U64) => Cell::U64(x),
        (FieldValue::I64(x), Kind::I64) => Cell::I64(x),
        (FieldValue::F64(x), Kind::F64) => Cell::F64(x),
        (FieldValue::U64(x), _) => Cell::Str(Cow::Owned(x.to_string())),
        (FieldValue::I64(x), _) => Cell::Str(Cow::Owned(x.to_string())),
        (FieldValue::F64(x), _) => Cell::Str(Cow::Owned(x.to_string())),
        (FieldValue::Enum { label: Some(l), .. }, _) => Cell::Str(Cow::Borrowed(l)),
        (FieldValue::Enum { value, .. }, _) => Cell::Str(Cow::Owned(value.to_string())),
        (FieldValue::Str(b), _) => Cell::Str(String::from_utf8_lossy(b)),
        (v, _) => {
            let mut out = Vec::new();
            rostrace_ctf::json::json_value(&mut out, &v);
            Cell::Str(Cow::Owned(String::from_utf8_lossy(&out).into_owned()))
        }
    }
}

fn fill<'a>(row: &mut [Cell<'a>], s: Option<StructRef<'a>>, cols: &[usize], kinds: &[Kind]) {
    if let Some(s) = s {
        for ((_, v), &c) in s.iter().zip(cols) {
            row[c] = cell(v, kinds[c]);
        }
    }
}

/// What [`write`] did.
#[derive(Debug, Clone, Default)]
pub struct Written {
    /// Rows per table.
    pub tables: Counts,
    /// Read errors.
    pub errors: Vec<String>,
    /// Events read, of every name (those `keep` refused included).
    pub events: u64,
    /// The event name of each table (table name → event name), of the tables written.
    pub event_names: HashMap<String, String>,
    /// The tables written whose names are not their events' names (see [`table_name`]), by
    /// table name.
    pub renamed: Vec<Renaming>,
}

/// Writes every event of the traces, in time order, to a table per event name (`keep`
/// chooses the names; `progress` gets bytes read and total now and then), decoding on `jobs`
/// threads (0: one per core; the same tables whatever the number). Returns the rows per table,
/// the read errors (the events that could be read are written) and the events read in all.
pub fn write(
    set: &TraceSet,
    recording: &str,
    keep: &dyn Fn(&str) -> bool,
    sink: &mut dyn Sink,
    progress: &mut dyn FnMut(u64, u64),
    jobs: usize,
) -> io::Result<Written> {
    // The layout of each event name, and where each class's fields go.
    let mut layouts: Vec<Layout> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let mut taken = Taken::default();
    // (trace, class index) → (layout, stream context columns, event context columns, payload columns)
    type Map = (usize, Vec<usize>, Vec<usize>, Vec<usize>);
    let mut classes: HashMap<(usize, usize), Map> = HashMap::new();
    for (ti, t) in set.traces.iter().enumerate() {
        for sc in &t.schema.streams {
            for c in &sc.events {
                if !keep(&c.name) {
                    continue;
                }
                let li = *by_name.entry(c.name.clone()).or_insert_with(|| {
                    let (dir, renamed) = taken.event_dir(&c.name);
                    layouts.push(Layout {
                        name: format!("events/{dir}"),
                        event: c.name.clone(),
                        renamed,
                        columns: event_columns(),
                    });
                    layouts.len() - 1
                });
                let l = &mut layouts[li];
                let mut map = |ty: Option<&Ty>| -> Vec<usize> {
                    struct_fields(ty).into_iter().map(|(n, ty)| l.column(n, ty)).collect()
                };
                let stream_ctx = map(sc.event_context.as_ref());
                let event_ctx = map(c.context.as_ref());
                let payload = map(c.fields.as_ref());
                classes.insert((ti, c.index), (li, stream_ctx, event_ctx, payload));
            }
        }
    }
    let kinds: Vec<Vec<Kind>> = layouts.iter().map(|l| l.columns.iter().map(|c| c.kind).collect()).collect();
    let mut writers: Vec<Option<(Box<dyn TableWriter>, u64)>> = (0..layouts.len()).map(|_| None).collect();
    let mut errors = Vec::new();
    let mut read = 0u64;
    let hosts = set.hosts();
    set.read().jobs(jobs).piped().run(|events| -> io::Result<()> {
        let mut n = 0u64;
        loop {
            n += 1;
            if n.is_multiple_of(65536) {
                let (done, total) = events.progress();
                progress(done, total);
            }
            let Some(ev) = events.next() else { break };
            let ev = match ev {
                Ok(ev) => ev,
                Err(e) => {
                    errors.push(e.to_string());
                    continue;
                }
            };
            read += 1;
            let Some((li, sctx, ectx, payload)) = classes.get(&(ev.trace_index(), ev.class().index)) else { continue };
            let w = match &mut writers[*li] {
                Some(w) => w,
                slot => slot.insert((sink.table(&layouts[*li].name, &layouts[*li].columns)?, 0)),
            };
            let k = &kinds[*li];
            let mut row = vec![Cell::Null; k.len()];
            row[0] = Cell::Str(Cow::Borrowed(recording));
            row[1] = Cell::I64(ev.trace_index() as i64);
            row[2] = hosts.get(ev.trace_index()).map(|h| h.as_str()).into();
            row[3] = ev.timestamp().into();
            row[4] = ev.cpu_id().map(|c| c as i64).into();
            fill(&mut row, ev.stream_context(), sctx, k);
            fill(&mut row, ev.event_context(), ectx, k);
            fill(&mut row, ev.payload(), payload, k);
            w.0.row(&row)?;
            w.1 += 1;
        }
        Ok(())
    })?;
    let mut counts = Counts::new();
    let mut event_names = HashMap::new();
    let mut renamed = Vec::new();
    for (l, w) in layouts.iter().zip(writers) {
        if let Some((w, n)) = w {
            w.finish()?;
            counts.push((l.name.clone(), n));
            event_names.insert(l.name.clone(), l.event.clone());
            if let Some(why) = l.renamed {
                renamed.push(Renaming { table: l.name.clone(), event: l.event.clone(), why });
            }
        }
    }
    renamed.sort();
    Ok(Written { tables: counts, errors, events: read, event_names, renamed })
}
