//! From the syntax tree to a [`Schema`]: type aliases, scopes, field paths, registers.

use super::ast::*;
use crate::error::MetadataError;
use crate::schema::{Clock, EnvValue, EventClass, Schema, StreamClass};
use crate::types::*;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Builds the schema from parsed statements.
pub fn resolve(stmts: &[Stmt]) -> Result<Schema, MetadataError> {
    let mut r = Resolver::default();
    r.prescan(stmts)?;
    r.top(stmts)?;
    r.finish()
}

/// Removes one leading underscore, as CTF 1.8 says of field names.
pub fn strip(name: &str) -> &str {
    name.strip_prefix('_').unwrap_or(name)
}

#[derive(Clone)]
enum Slot {
    Int { uid: u32, signed: bool, unsigned_int: bool, mappings: Option<Vec<EnumMapping>> },
    Struct(Vec<(String, Slot)>),
    Other,
}

fn slot_of(ty: &Ty) -> Slot {
    match ty {
        Ty::Int { t, uid, .. } => Slot::Int { uid: *uid, signed: t.signed, unsigned_int: !t.signed, mappings: None },
        Ty::Enum { t, uid, .. } => {
            Slot::Int { uid: *uid, signed: t.int.signed, unsigned_int: false, mappings: Some(t.mappings.clone()) }
        }
        Ty::Struct(s) => Slot::Struct(s.fields.iter().map(|f| (f.raw_name.clone(), slot_of(&f.ty))).collect()),
        _ => Slot::Other,
    }
}

/// A declared name's type, in the syntax tree.
#[derive(Clone, Copy)]
struct Alias<'a> {
    ty: &'a TypeSpec,
    subs: &'a [Subscript],
}

#[derive(Default)]
struct Resolver<'a> {
    byte_order: Option<ByteOrder>,
    clocks: Vec<Clock>,
    clock_names: HashMap<String, usize>,
    scopes: Vec<HashMap<String, Alias<'a>>>,
    lexical: Vec<Vec<(String, Slot)>>,
    dynamic: Vec<(&'static str, Vec<(String, Slot)>)>,
    uid: u32,
    regs: HashMap<u32, u16>,
    depth: usize,
    major: u64,
    minor: u64,
    has_trace: bool,
    uuid: Option<[u8; 16]>,
    packet_header: Option<Ty>,
    env: Vec<(String, EnvValue)>,
    streams: Vec<StreamClass>,
    pending_events: Vec<(&'a [Stmt], usize)>,
    event_count: usize,
    /// (stream id, event id) of the events declared: a duplicate is found in one look-up, not
    /// by a scan of the stream's events (quadratic in metadata of many event classes).
    event_ids: HashSet<(u64, u64)>,
}

fn attr_int(a: &Attr) -> Result<i128, MetadataError> {
    match &a.value {
        Value::Int(v) => Ok(*v),
        Value::Ident(s) if s == "true" || s == "TRUE" => Ok(1),
        Value::Ident(s) if s == "false" || s == "FALSE" => Ok(0),
        _ => Err(MetadataError::at(a.offset, format!("`{}` needs an integer", a.key))),
    }
}

fn attr_uint(a: &Attr) -> Result<u64, MetadataError> {
    let v = attr_int(a)?;
    u64::try_from(v).map_err(|_| MetadataError::at(a.offset, format!("`{}` out of range: {v}", a.key)))
}

fn attr_text(a: &Attr) -> String {
    match &a.value {
        Value::Int(v) => v.to_string(),
        Value::Str(s) | Value::Ident(s) => s.clone(),
    }
}

fn parse_uuid(s: &str, offset: usize) -> Result<[u8; 16], MetadataError> {
    let hex: Vec<u8> = s.bytes().filter(|c| *c != b'-').collect();
    if hex.len() != 32 {
        return Err(MetadataError::at(offset, format!("invalid UUID \"{s}\"")));
    }
    let mut out = [0u8; 16];
    for i in 0..16 {
        let pair = std::str::from_utf8(&hex[2 * i..2 * i + 2]).unwrap_or("zz");
        out[i] =
            u8::from_str_radix(pair, 16).map_err(|_| MetadataError::at(offset, format!("invalid UUID \"{s}\"")))?;
    }
    Ok(out)
}

fn parse_byte_order(a: &Attr, trace: Option<ByteOrder>) -> Result<ByteOrder, MetadataError> {
    match attr_text(a).as_str() {
        "le" | "little_endian" => Ok(ByteOrder::Little),
        "be" | "big_endian" | "network" => Ok(ByteOrder::Big),
        "native" => Ok(trace.unwrap_or(ByteOrder::Little)),
        other => Err(MetadataError::at(a.offset, format!("unknown byte order `{other}`"))),
    }
}

fn parse_encoding(a: &Attr) -> Result<Encoding, MetadataError> {
    match attr_text(a).as_str() {
        "none" | "NONE" => Ok(Encoding::None),
        "UTF8" | "utf8" => Ok(Encoding::Utf8),
        "ASCII" | "ascii" => Ok(Encoding::Ascii),
        other => Err(MetadataError::at(a.offset, format!("unknown encoding `{other}`"))),
    }
}

impl<'a> Resolver<'a> {
    fn next_uid(&mut self) -> u32 {
        self.uid += 1;
        self.uid
    }

    /// Finds the trace byte order and the clocks before anything uses them.
    fn prescan(&mut self, stmts: &[Stmt]) -> Result<(), MetadataError> {
        for s in stmts {
            if let Stmt::Block { kind: BlockKind::Trace, body, .. } = s {
                for b in body {
                    if let Stmt::Assign(a) = b {
                        if a.key == "byte_order" {
                            self.byte_order = Some(parse_byte_order(a, None)?);
                        }
                    }
                }
            }
        }
        for s in stmts {
            if let Stmt::Block { kind: BlockKind::Clock, body, offset } = s {
                let c = self.clock(body, *offset)?;
                self.clock_names.insert(c.name.clone(), self.clocks.len());
                self.clocks.push(c);
            }
        }
        Ok(())
    }

    fn clock(&self, body: &[Stmt], offset: usize) -> Result<Clock, MetadataError> {
        let mut c = Clock {
            name: String::new(),
            description: None,
            uuid: None,
            freq: 1_000_000_000,
            offset_s: 0,
            offset_cycles: 0,
            precision: 0,
            absolute: false,
            declared_at: offset,
        };
        let mut offset_cycles: i128 = 0;
        let mut offset_s: i128 = 0;
        for s in body {
            if let Stmt::Assign(a) = s {
                match a.key.as_str() {
                    "name" => c.name = attr_text(a),
                    "description" => c.description = Some(attr_text(a)),
                    "uuid" => c.uuid = Some(parse_uuid(&attr_text(a), a.offset)?),
                    "freq" => c.freq = attr_uint(a)?,
                    "precision" => c.precision = attr_uint(a)?,
                    "offset_s" => offset_s = attr_int(a)?,
                    "offset" => offset_cycles = attr_int(a)?,
                    "absolute" => c.absolute = attr_int(a)? != 0,
                    _ => {}
                }
            }
        }
        if c.name.is_empty() {
            return Err(MetadataError::at(offset, "clock without a name"));
        }
        if c.freq == 0 {
            return Err(MetadataError::at(offset, "clock frequency is 0"));
        }
        let f = c.freq as i128;
        offset_s += offset_cycles.div_euclid(f);
        offset_cycles = offset_cycles.rem_euclid(f);
        c.offset_s = i64::try_from(offset_s).map_err(|_| MetadataError::at(offset, "clock offset out of range"))?;
        c.offset_cycles = offset_cycles as u64;
        Ok(c)
    }

    fn top(&mut self, stmts: &'a [Stmt]) -> Result<(), MetadataError> {
        self.scopes.push(HashMap::new());
        for s in stmts {
            match s {
                Stmt::Block { kind: BlockKind::Trace, body, .. } => self.trace_block(body)?,
                Stmt::Block { kind: BlockKind::Env, body, .. } => {
                    for b in body {
                        if let Stmt::Assign(a) = b {
                            let v = match &a.value {
                                Value::Int(i) => EnvValue::Int(*i as i64),
                                Value::Str(s) | Value::Ident(s) => EnvValue::Str(s.clone()),
                            };
                            self.env.push((a.key.clone(), v));
                        }
                    }
                }
                Stmt::Block { kind: BlockKind::Clock, .. } | Stmt::Block { kind: BlockKind::Callsite, .. } => {}
                Stmt::Block { kind: BlockKind::Stream, body, offset } => self.stream_block(body, *offset)?,
                Stmt::Block { kind: BlockKind::Event, body, offset } => {
                    self.pending_events.push((body, *offset));
                }
                other => {
                    self.declare(other)?;
                }
            }
        }
        let events = std::mem::take(&mut self.pending_events);
        for (body, offset) in events {
            self.event_block(body, offset)?;
        }
        Ok(())
    }

    /// Maps unmapped integers named `name` to the trace's clock, as babeltrace2 does: the only
    /// clock, or a default 1 GHz clock when there is none.
    fn auto_map(&mut self, t: &mut Ty, name: &str, offset: usize) -> Result<(), MetadataError> {
        let mut need = false;
        visit_named_ints(t, name, &mut |it| need |= it.clock.is_none());
        if !need {
            return Ok(());
        }
        let ci = match self.clocks.len() {
            0 => {
                self.clocks.push(Clock {
                    name: "default".into(),
                    description: None,
                    uuid: None,
                    freq: 1_000_000_000,
                    offset_s: 0,
                    offset_cycles: 0,
                    precision: 0,
                    absolute: false,
                    declared_at: 0,
                });
                0
            }
            1 => 0,
            _ => {
                return Err(MetadataError::at(
                    offset,
                    format!("`{name}` is mapped to no clock and the trace has several clocks"),
                ))
            }
        };
        visit_named_ints(t, name, &mut |it| {
            if it.clock.is_none() {
                it.clock = Some(ci)
            }
        });
        Ok(())
    }

    /// Registers a typealias, typedef or named type declaration in the current scope.
    fn declare(&mut self, s: &'a Stmt) -> Result<bool, MetadataError> {
        match s {
            Stmt::Typealias { ty, subs, name, .. } => {
                self.register_named(ty);
                self.scopes.last_mut().unwrap().insert(name.clone(), Alias { ty, subs });
                Ok(true)
            }
            Stmt::Typedef { ty, decls } => {
                self.register_named(ty);
                for d in decls {
                    self.scopes.last_mut().unwrap().insert(d.name.clone(), Alias { ty, subs: &d.subs });
                }
                Ok(true)
            }
            Stmt::TypeDecl(ty) => {
                self.register_named(ty);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// A struct/enum/variant with a name and a body declares that name.
    fn register_named(&mut self, ty: &'a TypeSpec) {
        let key = match ty {
            TypeSpec::Struct { name: Some(n), body: Some(_), .. } => format!("struct {n}"),
            TypeSpec::Enum { name: Some(n), entries: Some(_), .. } => format!("enum {n}"),
            TypeSpec::Variant { name: Some(n), body: Some(_), .. } => format!("variant {n}"),
            _ => return,
        };
        self.scopes.last_mut().unwrap().insert(key, Alias { ty, subs: &[] });
    }

    fn lookup(&self, name: &str) -> Option<Alias<'a>> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    fn trace_block(&mut self, body: &'a [Stmt]) -> Result<(), MetadataError> {
        self.scopes.push(HashMap::new());
        self.has_trace = true;
        self.major = 1;
        for s in body {
            match s {
                Stmt::Assign(a) => match a.key.as_str() {
                    "major" => self.major = attr_uint(a)?,
                    "minor" => self.minor = attr_uint(a)?,
                    "uuid" => self.uuid = Some(parse_uuid(&attr_text(a), a.offset)?),
                    _ => {}
                },
                Stmt::TypeAssign { key, ty, subs, offset } if key == "packet.header" => {
                    let t = self.scope_type(ty, subs, *offset)?;
                    self.dynamic.push(("trace.packet.header", top_slots(&t)));
                    self.packet_header = Some(t);
                }
                other => {
                    self.declare(other)?;
                }
            }
        }
        self.scopes.pop();
        if self.major != 1 {
            return Err(MetadataError::at(0, format!("unsupported CTF version {}.{}", self.major, self.minor)));
        }
        if self.byte_order.is_none() {
            return Err(MetadataError::at(0, "the trace block has no byte_order"));
        }
        Ok(())
    }

    fn stream_block(&mut self, body: &'a [Stmt], offset: usize) -> Result<(), MetadataError> {
        self.scopes.push(HashMap::new());
        let mark = self.dynamic.len();
        let mut sc = StreamClass {
            id: 0,
            packet_context: None,
            event_header: None,
            event_context: None,
            events: Vec::new(),
            by_id: Vec::new(),
            clock: None,
            header_fast: None,
        };
        // Scopes must be resolved in decoding order whatever their order in the text.
        let mut assigns: Vec<(&str, &TypeSpec, &Vec<Subscript>, usize)> = Vec::new();
        for s in body {
            match s {
                Stmt::Assign(a) if a.key == "id" => sc.id = attr_uint(a)?,
                Stmt::TypeAssign { key, ty, subs, offset } => assigns.push((key.as_str(), ty, subs, *offset)),
                other => {
                    self.declare(other)?;
                }
            }
        }
        for scope in ["packet.context", "event.header", "event.context"] {
            for (key, ty, subs, off) in assigns.iter().filter(|a| a.0 == scope) {
                let mut t = self.scope_type(ty, subs, *off)?;
                let name: &'static str = match *key {
                    "packet.context" => "stream.packet.context",
                    "event.header" => "stream.event.header",
                    _ => "stream.event.context",
                };
                self.dynamic.push((name, top_slots(&t)));
                match *key {
                    "packet.context" => {
                        self.auto_map(&mut t, "timestamp_begin", *off)?;
                        self.auto_map(&mut t, "timestamp_end", *off)?;
                        sc.packet_context = Some(t)
                    }
                    "event.header" => {
                        self.auto_map(&mut t, "timestamp", *off)?;
                        mark_ids(&mut t);
                        sc.clock = first_clock(&t);
                        sc.event_header = Some(t)
                    }
                    _ => sc.event_context = Some(t),
                }
            }
        }
        if sc.clock.is_none() {
            sc.clock = sc.packet_context.as_ref().and_then(first_clock);
        }
        if self.streams.iter().any(|s| s.id == sc.id) {
            return Err(MetadataError::at(offset, format!("stream class {} declared twice", sc.id)));
        }
        self.dynamic.truncate(mark);
        self.scopes.pop();
        self.streams.push(sc);
        Ok(())
    }

    fn event_block(&mut self, body: &'a [Stmt], offset: usize) -> Result<(), MetadataError> {
        self.scopes.push(HashMap::new());
        let mut ec = EventClass {
            id: 0,
            name: String::new(),
            stream_id: 0,
            loglevel: None,
            model_emf_uri: None,
            context: None,
            fields: None,
            index: 0,
        };
        let mut has_id = false;
        let mut has_stream = false;
        let mut assigns = Vec::new();
        for s in body {
            match s {
                Stmt::Assign(a) => match a.key.as_str() {
                    "name" => ec.name = attr_text(a),
                    "id" => {
                        ec.id = attr_uint(a)?;
                        has_id = true
                    }
                    "stream_id" => {
                        ec.stream_id = attr_uint(a)?;
                        has_stream = true
                    }
                    "loglevel" => ec.loglevel = Some(attr_int(a)? as i64),
                    "model.emf.uri" => ec.model_emf_uri = Some(attr_text(a)),
                    _ => {}
                },
                Stmt::TypeAssign { key, ty, subs, offset } => assigns.push((key.as_str(), ty, subs, *offset)),
                other => {
                    self.declare(other)?;
                }
            }
        }
        if !has_stream && self.streams.len() == 1 {
            ec.stream_id = self.streams[0].id;
        }
        if !self.streams.iter().any(|s| s.id == ec.stream_id) {
            if self.streams.is_empty() && !has_stream {
                self.streams.push(StreamClass {
                    id: 0,
                    packet_context: None,
                    event_header: None,
                    event_context: None,
                    events: Vec::new(),
                    by_id: Vec::new(),
                    clock: None,
                    header_fast: None,
                });
            } else {
                return Err(MetadataError::at(
                    offset,
                    format!("event `{}` refers to unknown stream {}", ec.name, ec.stream_id),
                ));
            }
        }
        let si = self.streams.iter().position(|s| s.id == ec.stream_id).unwrap();
        if !has_id && !self.streams[si].events.is_empty() {
            return Err(MetadataError::at(offset, format!("event `{}` has no id", ec.name)));
        }
        if !self.event_ids.insert((ec.stream_id, ec.id)) {
            return Err(MetadataError::at(
                offset,
                format!("event id {} declared twice in stream {}", ec.id, ec.stream_id),
            ));
        }
        // Stream scopes are visible to the event's paths.
        let mark = self.dynamic.len();
        {
            let sc = &self.streams[si];
            let mut d = Vec::new();
            if let Some(t) = &sc.packet_context {
                d.push(("stream.packet.context", top_slots(t)));
            }
            if let Some(t) = &sc.event_header {
                d.push(("stream.event.header", top_slots(t)));
            }
            if let Some(t) = &sc.event_context {
                d.push(("stream.event.context", top_slots(t)));
            }
            self.dynamic.extend(d);
        }
        for scope in ["context", "fields"] {
            for (_, ty, subs, off) in assigns.iter().filter(|a| a.0 == scope) {
                let t = self.scope_type(ty, subs, *off)?;
                if scope == "context" {
                    self.dynamic.push(("event.context", top_slots(&t)));
                    ec.context = Some(t);
                } else {
                    self.dynamic.push(("event.fields", top_slots(&t)));
                    ec.fields = Some(t);
                }
            }
        }
        self.dynamic.truncate(mark);
        self.scopes.pop();
        ec.index = self.event_count;
        self.event_count += 1;
        self.streams[si].events.push(Arc::new(ec));
        Ok(())
    }

    /// A dynamic scope's type: must be a structure.
    fn scope_type(&mut self, ty: &'a TypeSpec, subs: &'a [Subscript], offset: usize) -> Result<Ty, MetadataError> {
        self.lexical.clear();
        let t = self.ty(ty, subs, offset)?;
        match t {
            Ty::Struct(_) => Ok(t),
            _ => Err(MetadataError::at(offset, "a dynamic scope must be a structure")),
        }
    }

    fn ty(&mut self, spec: &'a TypeSpec, subs: &'a [Subscript], offset: usize) -> Result<Ty, MetadataError> {
        self.depth += 1;
        if self.depth > 100 {
            self.depth -= 1;
            return Err(MetadataError::at(offset, "types nested too deeply (recursive alias?)"));
        }
        let r = self.ty_inner(spec, subs, offset);
        self.depth -= 1;
        r
    }

    fn ty_inner(&mut self, spec: &'a TypeSpec, subs: &'a [Subscript], offset: usize) -> Result<Ty, MetadataError> {
        if let Some((last, outer)) = subs.split_last() {
            // `T x[a][b]` is an array of `a` arrays of `b` T: the last subscript is innermost.
            let elem = self.ty(spec, outer, offset)?;
            return self.wrap(elem, last, offset);
        }
        match spec {
            TypeSpec::Integer(attrs) => {
                let t = self.int_type(attrs, offset)?;
                let uid = self.next_uid();
                Ok(Ty::Int { t, reg: NO_REG, uid, is_id: false })
            }
            TypeSpec::Float(attrs) => self.float_type(attrs, offset),
            TypeSpec::String(attrs) => {
                let mut enc = Encoding::Utf8;
                for a in attrs {
                    if a.key == "encoding" {
                        enc = parse_encoding(a)?;
                    }
                }
                Ok(Ty::String(enc))
            }
            TypeSpec::Enum { name, base, entries } => {
                let entries: &[EnumEntry] = match entries {
                    Some(e) => e,
                    None => {
                        let n = name.as_deref().unwrap_or("");
                        match self.lookup(&format!("enum {n}")) {
                            Some(Alias { ty, .. }) => return self.ty(ty, &[], offset),
                            None => return Err(MetadataError::at(offset, format!("unknown enum `{n}`"))),
                        }
                    }
                };
                let int = match base {
                    Some(b) => match self.ty(b, &[], offset)? {
                        Ty::Int { t, .. } => t,
                        _ => return Err(MetadataError::at(offset, "an enum's container must be an integer")),
                    },
                    None => match self.lookup("int") {
                        Some(Alias { ty, subs }) => match self.ty(ty, subs, offset)? {
                            Ty::Int { t, .. } => t,
                            _ => return Err(MetadataError::at(offset, "`int` is not an integer")),
                        },
                        None => {
                            return Err(MetadataError::at(offset, "enum without a container type and no `int` alias"))
                        }
                    },
                };
                let mut mappings = Vec::with_capacity(entries.len());
                let mut next: i128 = 0;
                for e in entries {
                    let start = e.start.unwrap_or(next);
                    let end = e.end.unwrap_or(start);
                    let (start, end) = if start <= end { (start, end) } else { (end, start) };
                    next = end + 1;
                    mappings.push(EnumMapping { label: e.label.clone(), start, end });
                }
                let uid = self.next_uid();
                Ok(Ty::Enum { t: Box::new(EnumType { int, mappings }), reg: NO_REG, uid, is_id: false })
            }
            TypeSpec::Struct { name, body, align } => match body {
                Some(b) => self.struct_type(b, *align, offset),
                None => {
                    let n = name.as_deref().unwrap_or("");
                    match self.lookup(&format!("struct {n}")) {
                        Some(Alias { ty: TypeSpec::Struct { body: Some(b), align: a2, .. }, .. }) => {
                            self.struct_type(b, align.or(*a2), offset)
                        }
                        _ => Err(MetadataError::at(offset, format!("unknown struct `{n}`"))),
                    }
                }
            },
            TypeSpec::Variant { name, tag, body } => {
                let (body, tag) = match body {
                    Some(b) => (b, tag.as_deref()),
                    None => {
                        let n = name.as_deref().unwrap_or("");
                        match self.lookup(&format!("variant {n}")) {
                            Some(Alias { ty: TypeSpec::Variant { body: Some(b), tag: t2, .. }, .. }) => {
                                (b, tag.as_deref().or(t2.as_deref()))
                            }
                            _ => return Err(MetadataError::at(offset, format!("unknown variant `{n}`"))),
                        }
                    }
                };
                let tag = tag.ok_or_else(|| MetadataError::at(offset, "variant without a tag"))?;
                self.variant_type(body, tag, offset)
            }
            TypeSpec::Named(n) => match self.lookup(n) {
                Some(Alias { ty, subs }) => self.ty(ty, subs, offset),
                None => Err(MetadataError::at(offset, format!("unknown type `{n}`"))),
            },
        }
    }

    fn wrap(&mut self, elem: Ty, sub: &Subscript, offset: usize) -> Result<Ty, MetadataError> {
        let text = match &elem {
            Ty::Int { t, .. } if t.size == 8 && t.encoding != Encoding::None && t.align % 8 == 0 => {
                Some((t.encoding, t.align))
            }
            _ => None,
        };
        match sub {
            Subscript::Len(n) => Ok(match text {
                Some((enc, align)) => Ty::TextArray { len: *n, enc, align },
                None => Ty::Array { elem: Box::new(elem), len: *n },
            }),
            Subscript::Path(p) => {
                let slot = self.find(p, offset)?;
                let reg = match slot {
                    Slot::Int { uid, unsigned_int: true, .. } => self.reg_for(uid),
                    _ => {
                        return Err(MetadataError::at(
                            offset,
                            format!("sequence length `{p}` is not an unsigned integer"),
                        ))
                    }
                };
                Ok(match text {
                    Some((enc, align)) => Ty::TextSequence { len_reg: reg, enc, align },
                    None => Ty::Sequence { elem: Box::new(elem), len_reg: reg },
                })
            }
        }
    }

    fn reg_for(&mut self, uid: u32) -> u16 {
        let n = self.regs.len() as u16;
        *self.regs.entry(uid).or_insert(n)
    }

    /// Resolves a field path (relative to the structures being built, or absolute) to a slot.
    fn find(&self, path: &str, offset: usize) -> Result<Slot, MetadataError> {
        let abs = [
            "trace.packet.header",
            "stream.packet.context",
            "stream.event.header",
            "stream.event.context",
            "event.context",
            "event.fields",
        ];
        let not_found = || MetadataError::at(offset, format!("field `{path}` not found"));
        for a in abs {
            if let Some(rest) = path.strip_prefix(a).and_then(|r| r.strip_prefix('.')) {
                // The scope being built is in `lexical`, finished ones in `dynamic`.
                let parts: Vec<&str> = rest.split('.').collect();
                if let Some((_, fields)) = self.dynamic.iter().rev().find(|(n, _)| *n == a) {
                    return descend(fields, &parts).ok_or_else(not_found);
                }
                if let Some(frame) = self.lexical.first() {
                    return descend(frame, &parts).ok_or_else(not_found);
                }
                return Err(not_found());
            }
        }
        let parts: Vec<&str> = path.split('.').collect();
        for frame in self.lexical.iter().rev() {
            if let Some(s) = descend(frame, &parts) {
                return Ok(s);
            }
        }
        for (_, fields) in self.dynamic.iter().rev() {
            if let Some(s) = descend(fields, &parts) {
                return Ok(s);
            }
        }
        Err(not_found())
    }

    fn struct_type(&mut self, body: &'a [Stmt], align: Option<u64>, offset: usize) -> Result<Ty, MetadataError> {
        self.scopes.push(HashMap::new());
        self.lexical.push(Vec::new());
        let r = self.struct_fields(body, offset);
        self.lexical.pop();
        self.scopes.pop();
        let fields = r?;
        let min = align.unwrap_or(1);
        if min == 0 || !min.is_power_of_two() || min > 1 << 20 {
            return Err(MetadataError::at(offset, format!("invalid struct alignment {min}")));
        }
        let a = fields.iter().map(|f| f.ty.align()).max().unwrap_or(1).max(min as u32);
        Ok(Ty::Struct(Box::new(StructType { fields, align: a, flat: None })))
    }

    fn struct_fields(&mut self, body: &'a [Stmt], offset: usize) -> Result<Vec<Field>, MetadataError> {
        let mut fields: Vec<Field> = Vec::new();
        for s in body {
            match s {
                Stmt::Field { ty, decls } => {
                    self.register_named(ty);
                    for d in decls {
                        let t = self.ty(ty, &d.subs, d.offset)?;
                        if fields.iter().any(|f| f.raw_name == d.name) {
                            return Err(MetadataError::at(d.offset, format!("duplicate field `{}`", d.name)));
                        }
                        self.lexical.last_mut().unwrap().push((d.name.clone(), slot_of(&t)));
                        fields.push(Field { name: strip(&d.name).to_string(), raw_name: d.name.clone(), ty: t });
                    }
                }
                Stmt::Assign(a) => {
                    return Err(MetadataError::at(a.offset, format!("unexpected `{} = ...` in a structure", a.key)))
                }
                Stmt::TypeAssign { offset, .. } | Stmt::Block { offset, .. } => {
                    return Err(MetadataError::at(*offset, "unexpected declaration in a structure"))
                }
                other => {
                    self.declare(other)?;
                }
            }
        }
        let _ = offset;
        Ok(fields)
    }

    fn variant_type(&mut self, body: &'a [Stmt], tag: &str, offset: usize) -> Result<Ty, MetadataError> {
        let slot = self.find(tag, offset)?;
        let (uid, signed, mappings) = match slot {
            Slot::Int { uid, signed, mappings: Some(m), .. } => (uid, signed, m),
            _ => return Err(MetadataError::at(offset, format!("variant tag `{tag}` is not an enumeration"))),
        };
        self.scopes.push(HashMap::new());
        self.lexical.push(Vec::new());
        let mut options: Vec<Field> = Vec::new();
        let mut err = None;
        for s in body {
            match s {
                Stmt::Field { ty, decls } => {
                    for d in decls {
                        match self.ty(ty, &d.subs, d.offset) {
                            Ok(t) => options.push(Field {
                                name: strip(&d.name).to_string(),
                                raw_name: d.name.clone(),
                                ty: t,
                            }),
                            Err(e) => {
                                err = Some(e);
                                break;
                            }
                        }
                    }
                }
                other => {
                    if let Err(e) = self.declare(other) {
                        err = Some(e);
                    }
                }
            }
            if err.is_some() {
                break;
            }
        }
        self.lexical.pop();
        self.scopes.pop();
        if let Some(e) = err {
            return Err(e);
        }
        let mut select = Vec::new();
        for m in &mappings {
            let k = options
                .iter()
                .position(|o| o.raw_name == m.label)
                .or_else(|| options.iter().position(|o| strip(&o.raw_name) == m.label))
                .or_else(|| options.iter().position(|o| strip(&o.raw_name) == strip(&m.label)));
            if let Some(k) = k {
                select.push((m.start, m.end, k));
            }
        }
        let tag_reg = self.reg_for(uid);
        Ok(Ty::Variant(Box::new(VariantType { options, tag_reg, tag_signed: signed, select })))
    }

    fn int_type(&mut self, attrs: &[Attr], offset: usize) -> Result<IntType, MetadataError> {
        let mut size = None;
        let mut align = None;
        let mut t = IntType {
            size: 0,
            align: 0,
            signed: false,
            byte_order: self.byte_order.unwrap_or(ByteOrder::Little),
            base: 10,
            encoding: Encoding::None,
            clock: None,
            read: IntRead::Bits,
        };
        for a in attrs {
            match a.key.as_str() {
                "size" => size = Some(attr_uint(a)?),
                "align" => align = Some(attr_uint(a)?),
                "signed" => t.signed = attr_int(a)? != 0,
                "byte_order" => t.byte_order = parse_byte_order(a, self.byte_order)?,
                "base" => {
                    t.base = match &a.value {
                        Value::Int(v) if matches!(*v, 2 | 8 | 10 | 16) => *v as u8,
                        Value::Ident(s) => match s.as_str() {
                            "decimal" | "dec" | "d" | "i" | "u" => 10,
                            "hexadecimal" | "hex" | "x" | "X" | "p" => 16,
                            "octal" | "oct" | "o" => 8,
                            "binary" | "b" => 2,
                            _ => return Err(MetadataError::at(a.offset, format!("invalid integer base `{s}`"))),
                        },
                        _ => return Err(MetadataError::at(a.offset, "invalid integer base")),
                    }
                }
                "encoding" => t.encoding = parse_encoding(a)?,
                "map" => {
                    let p = attr_text(a);
                    let name = p.strip_prefix("clock.").and_then(|r| r.strip_suffix(".value"));
                    match name.and_then(|n| self.clock_names.get(n)) {
                        Some(&i) => t.clock = Some(i),
                        None => {
                            return Err(MetadataError::at(a.offset, format!("integer mapped to unknown clock `{p}`")))
                        }
                    }
                }
                _ => {}
            }
        }
        let size = size.ok_or_else(|| MetadataError::at(offset, "integer without a size"))?;
        if size == 0 || size > 64 {
            return Err(MetadataError::at(offset, format!("integer size {size} is not between 1 and 64")));
        }
        t.size = size as u32;
        let align = align.unwrap_or(if size % 8 == 0 { 8 } else { 1 });
        if align == 0 || !align.is_power_of_two() || align > 1 << 20 {
            return Err(MetadataError::at(offset, format!("invalid alignment {align}")));
        }
        t.align = align as u32;
        Ok(t.finish())
    }

    fn float_type(&mut self, attrs: &[Attr], offset: usize) -> Result<Ty, MetadataError> {
        let mut f =
            FloatType { exp_dig: 0, mant_dig: 0, align: 8, byte_order: self.byte_order.unwrap_or(ByteOrder::Little) };
        for a in attrs {
            match a.key.as_str() {
                "exp_dig" => f.exp_dig = attr_uint(a)? as u32,
                "mant_dig" => f.mant_dig = attr_uint(a)? as u32,
                "align" => f.align = attr_uint(a)? as u32,
                "byte_order" => f.byte_order = parse_byte_order(a, self.byte_order)?,
                _ => {}
            }
        }
        if !matches!((f.exp_dig, f.mant_dig), (8, 24) | (11, 53)) {
            return Err(MetadataError::at(
                offset,
                format!("unsupported floating point (exp_dig {}, mant_dig {})", f.exp_dig, f.mant_dig),
            ));
        }
        if f.align == 0 || !f.align.is_power_of_two() {
            return Err(MetadataError::at(offset, format!("invalid alignment {}", f.align)));
        }
        Ok(Ty::Float(f))
    }

    fn finish(mut self) -> Result<Schema, MetadataError> {
        let regs = self.regs;
        let patch = |t: &mut Ty| {
            t.visit_ints_mut(&mut |uid, reg| {
                if let Some(r) = regs.get(&uid) {
                    *reg = *r;
                }
            });
            t.compute_flat();
        };
        if let Some(t) = &mut self.packet_header {
            patch(t);
        }
        for s in &mut self.streams {
            for t in [&mut s.packet_context, &mut s.event_header, &mut s.event_context].into_iter().flatten() {
                patch(t);
            }
            let mut events = std::mem::take(&mut s.events);
            for e in &mut events {
                let ec = Arc::get_mut(e).expect("event class not shared yet");
                for t in [&mut ec.context, &mut ec.fields].into_iter().flatten() {
                    patch(t);
                }
            }
            let max = events.iter().map(|e| e.id).max().unwrap_or(0);
            if max < 1 << 20 {
                s.by_id = vec![u32::MAX; max as usize + 1];
                for (k, e) in events.iter().enumerate() {
                    s.by_id[e.id as usize] = k as u32;
                }
            }
            s.events = events;
            s.header_fast = s.event_header.as_ref().and_then(crate::decode::HeaderFast::detect);
        }
        if regs.len() >= NO_REG as usize {
            return Err(MetadataError::at(0, "too many length and tag fields"));
        }
        Ok(Schema {
            major: self.major,
            minor: self.minor,
            uuid: self.uuid,
            byte_order: self.byte_order.unwrap_or(ByteOrder::Little),
            packet_header: self.packet_header,
            env: self.env,
            clocks: self.clocks,
            streams: self.streams,
            registers: regs.len(),
        })
    }
}

fn top_slots(t: &Ty) -> Vec<(String, Slot)> {
    match slot_of(t) {
        Slot::Struct(f) => f,
        _ => Vec::new(),
    }
}

fn descend(fields: &[(String, Slot)], parts: &[&str]) -> Option<Slot> {
    let (first, rest) = parts.split_first()?;
    let found = fields
        .iter()
        .rev()
        .find(|(n, _)| n == first)
        .or_else(|| fields.iter().rev().find(|(n, _)| strip(n) == *first))?;
    if rest.is_empty() {
        return Some(found.1.clone());
    }
    match &found.1 {
        Slot::Struct(f) => descend(f, rest),
        _ => None,
    }
}

/// Calls `f` on every integer member named `name`, at any depth of structures and variants.
fn visit_named_ints(t: &mut Ty, name: &str, f: &mut dyn FnMut(&mut IntType)) {
    let members = match t {
        Ty::Struct(s) => &mut s.fields,
        Ty::Variant(v) => &mut v.options,
        _ => return,
    };
    for m in members.iter_mut() {
        if m.name == name || m.raw_name == name {
            match &mut m.ty {
                Ty::Int { t, .. } => f(t),
                Ty::Enum { t, .. } => f(&mut t.int),
                _ => {}
            }
        }
        visit_named_ints(&mut m.ty, name, f);
    }
}

/// Flags every integer named `id` in an event header as the event class id.
fn mark_ids(t: &mut Ty) {
    fn walk(t: &mut Ty, name: &str) {
        match t {
            Ty::Int { is_id, .. } | Ty::Enum { is_id, .. } => *is_id = name == "id",
            Ty::Struct(s) => s.fields.iter_mut().for_each(|f| walk(&mut f.ty, &f.name.clone())),
            Ty::Variant(v) => v.options.iter_mut().for_each(|f| walk(&mut f.ty, &f.name.clone())),
            _ => {}
        }
    }
    walk(t, "")
}

/// The first clock an integer of this type is mapped to.
fn first_clock(t: &Ty) -> Option<usize> {
    match t {
        Ty::Int { t, .. } => t.clock,
        Ty::Enum { t, .. } => t.int.clock,
        Ty::Struct(s) => s.fields.iter().find_map(|f| first_clock(&f.ty)),
        Ty::Variant(v) => v.options.iter().find_map(|f| first_clock(&f.ty)),
        _ => None,
    }
}
