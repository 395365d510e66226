//! Recursive-descent parser from TSDL tokens to the syntax tree.

use super::ast::*;
use super::lexer::{tokenize, Tok, Token};
use crate::error::MetadataError;

/// Parses TSDL text into top-level statements.
pub fn parse(text: &str) -> Result<Vec<Stmt>, MetadataError> {
    let toks = tokenize(text)?;
    let mut p = Parser { toks, pos: 0, end_offset: text.len(), depth: 0 };
    let mut out = Vec::new();
    while p.pos < p.toks.len() {
        if p.eat_punct(';') {
            continue;
        }
        out.push(p.stmt()?);
    }
    Ok(out)
}

const MAX_DEPTH: usize = 200;

struct Parser<'a> {
    toks: Vec<Token<'a>>,
    pos: usize,
    end_offset: usize,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&Tok<'a>> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }
    fn peek_at(&self, k: usize) -> Option<&Tok<'a>> {
        self.toks.get(self.pos + k).map(|t| &t.tok)
    }
    fn offset(&self) -> usize {
        self.toks.get(self.pos).map(|t| t.offset).unwrap_or(self.end_offset)
    }
    fn err<T>(&self, msg: impl Into<String>) -> Result<T, MetadataError> {
        let found = match self.peek() {
            None => "end of metadata".to_string(),
            Some(Tok::Ident(s)) => format!("`{s}`"),
            Some(Tok::Int(v)) => format!("`{v}`"),
            Some(Tok::Str(s)) => format!("\"{s}\""),
            Some(Tok::Punct(c)) => format!("`{c}`"),
        };
        Err(MetadataError::at(self.offset(), format!("{}, found {found}", msg.into())))
    }
    fn is_punct(&self, c: char) -> bool {
        matches!(self.peek(), Some(Tok::Punct(p)) if *p == c)
    }
    fn eat_punct(&mut self, c: char) -> bool {
        if self.is_punct(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: char) -> Result<(), MetadataError> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            self.err(format!("expected `{c}`"))
        }
    }
    fn is_ident(&self, s: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(i)) if *i == s)
    }
    fn ident(&mut self) -> Result<String, MetadataError> {
        match self.peek() {
            Some(Tok::Ident(s)) => {
                let s = s.to_string();
                self.pos += 1;
                Ok(s)
            }
            _ => self.err("expected an identifier"),
        }
    }
    fn enter(&mut self) -> Result<(), MetadataError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.err("metadata nested too deeply");
        }
        Ok(())
    }

    /// `a.b.c` (also accepts `->`).
    fn path(&mut self) -> Result<String, MetadataError> {
        let mut s = self.ident()?;
        while (self.is_punct('.') || self.is_punct('→')) && matches!(self.peek_at(1), Some(Tok::Ident(_))) {
            self.pos += 1;
            s.push('.');
            s.push_str(&self.ident()?);
        }
        Ok(s)
    }

    fn stmt(&mut self) -> Result<Stmt, MetadataError> {
        self.enter()?;
        let r = self.stmt_inner();
        self.depth -= 1;
        r
    }

    fn stmt_inner(&mut self) -> Result<Stmt, MetadataError> {
        let offset = self.offset();
        if self.is_ident("typealias") {
            self.pos += 1;
            let ty = self.type_spec(false)?;
            let subs = self.subscripts()?;
            self.expect('≔')?;
            let mut name = self.ident()?;
            while let Some(Tok::Ident(_)) = self.peek() {
                name.push(' ');
                name.push_str(&self.ident()?);
            }
            self.expect(';')?;
            return Ok(Stmt::Typealias { ty, subs, name });
        }
        if self.is_ident("typedef") {
            self.pos += 1;
            let ty = self.type_spec(true)?;
            let decls = self.declarators()?;
            self.expect(';')?;
            return Ok(Stmt::Typedef { ty, decls });
        }
        if let Some(Tok::Ident(s)) = self.peek() {
            let kind = match *s {
                "trace" => Some(BlockKind::Trace),
                "env" => Some(BlockKind::Env),
                "clock" => Some(BlockKind::Clock),
                "stream" => Some(BlockKind::Stream),
                "event" => Some(BlockKind::Event),
                "callsite" => Some(BlockKind::Callsite),
                _ => None,
            };
            if let (Some(kind), Some(Tok::Punct('{'))) = (kind, self.peek_at(1)) {
                self.pos += 2;
                let body = self.body()?;
                self.eat_punct(';');
                return Ok(Stmt::Block { kind, body, offset });
            }
        }
        // `key = value;` or `key := type;`
        if let Some(Tok::Ident(_)) = self.peek() {
            let save = self.pos;
            let key = self.path()?;
            if self.eat_punct('=') {
                let value = self.value()?;
                self.expect(';')?;
                return Ok(Stmt::Assign(Attr { key, value, offset }));
            }
            if self.eat_punct('≔') {
                let ty = self.type_spec(false)?;
                let subs = self.subscripts()?;
                self.expect(';')?;
                return Ok(Stmt::TypeAssign { key, ty, subs, offset });
            }
            self.pos = save;
        }
        let ty = self.type_spec(true)?;
        if self.eat_punct(';') {
            return Ok(Stmt::TypeDecl(ty));
        }
        let decls = self.declarators()?;
        self.expect(';')?;
        Ok(Stmt::Field { ty, decls })
    }

    /// Statements up to the closing `}` (consumed).
    fn body(&mut self) -> Result<Vec<Stmt>, MetadataError> {
        let mut out = Vec::new();
        loop {
            if self.eat_punct('}') {
                return Ok(out);
            }
            if self.peek().is_none() {
                return self.err("expected `}`");
            }
            if self.eat_punct(';') {
                continue;
            }
            out.push(self.stmt()?);
        }
    }

    fn value(&mut self) -> Result<Value, MetadataError> {
        let neg = if self.eat_punct('-') {
            true
        } else {
            self.eat_punct('+');
            false
        };
        match self.peek().cloned() {
            Some(Tok::Int(v)) => {
                self.pos += 1;
                Ok(Value::Int(if neg { -(v as i128) } else { v as i128 }))
            }
            Some(Tok::Str(s)) if !neg => {
                self.pos += 1;
                Ok(Value::Str(s))
            }
            Some(Tok::Ident(_)) if !neg => Ok(Value::Ident(self.path()?)),
            _ => self.err("expected a value"),
        }
    }

    fn attrs(&mut self) -> Result<Vec<Attr>, MetadataError> {
        self.expect('{')?;
        let mut out = Vec::new();
        loop {
            if self.eat_punct('}') {
                return Ok(out);
            }
            if self.eat_punct(';') {
                continue;
            }
            let offset = self.offset();
            let key = self.path()?;
            self.expect('=')?;
            let value = self.value()?;
            self.expect(';')?;
            out.push(Attr { key, value, offset });
        }
    }

    fn subscripts(&mut self) -> Result<Vec<Subscript>, MetadataError> {
        let mut subs = Vec::new();
        while self.eat_punct('[') {
            match self.peek().cloned() {
                Some(Tok::Int(v)) => {
                    self.pos += 1;
                    subs.push(Subscript::Len(v));
                }
                Some(Tok::Ident(_)) => subs.push(Subscript::Path(self.path()?)),
                _ => return self.err("expected an array length or a length field"),
            }
            self.expect(']')?;
        }
        Ok(subs)
    }

    fn declarators(&mut self) -> Result<Vec<Declarator>, MetadataError> {
        let mut out = Vec::new();
        loop {
            let offset = self.offset();
            let name = self.ident()?;
            let subs = self.subscripts()?;
            out.push(Declarator { name, subs, offset });
            if !self.eat_punct(',') {
                return Ok(out);
            }
        }
    }

    /// A type. With `leave_declarator`, a run of identifiers keeps its last one for the declarator.
    fn type_spec(&mut self, leave_declarator: bool) -> Result<TypeSpec, MetadataError> {
        self.enter()?;
        let r = self.type_spec_inner(leave_declarator);
        self.depth -= 1;
        r
    }

    fn type_spec_inner(&mut self, leave_declarator: bool) -> Result<TypeSpec, MetadataError> {
        let word = match self.peek() {
            Some(Tok::Ident(s)) => *s,
            _ => return self.err("expected a type"),
        };
        match word {
            "integer" if matches!(self.peek_at(1), Some(Tok::Punct('{'))) => {
                self.pos += 1;
                Ok(TypeSpec::Integer(self.attrs()?))
            }
            "floating_point" if matches!(self.peek_at(1), Some(Tok::Punct('{'))) => {
                self.pos += 1;
                Ok(TypeSpec::Float(self.attrs()?))
            }
            "string" => {
                self.pos += 1;
                let attrs = if self.is_punct('{') { self.attrs()? } else { Vec::new() };
                Ok(TypeSpec::String(attrs))
            }
            "enum" => {
                self.pos += 1;
                let mut name = None;
                if let Some(Tok::Ident(_)) = self.peek() {
                    if !matches!(self.peek_at(1), Some(Tok::Punct(';')) | Some(Tok::Punct('[')) | Some(Tok::Punct(',')))
                        || matches!(self.peek_at(1), Some(Tok::Punct(':')) | Some(Tok::Punct('{')))
                    {
                        name = Some(self.ident()?);
                    }
                }
                let base = if self.eat_punct(':') { Some(Box::new(self.type_spec(false)?)) } else { None };
                let entries = if self.eat_punct('{') { Some(self.enum_entries()?) } else { None };
                Ok(TypeSpec::Enum { name, base, entries })
            }
            "struct" => {
                self.pos += 1;
                let name = if matches!(self.peek(), Some(Tok::Ident(_))) && !self.is_ident("align") {
                    // `struct foo bar;` names foo; `struct { } bar;` has no name.
                    Some(self.ident()?)
                } else {
                    None
                };
                let body = if self.eat_punct('{') { Some(self.body()?) } else { None };
                let align = self.align_suffix()?;
                Ok(TypeSpec::Struct { name, body, align })
            }
            "variant" => {
                self.pos += 1;
                let mut name = None;
                if matches!(self.peek(), Some(Tok::Ident(_))) {
                    name = Some(self.ident()?);
                }
                let tag = if self.eat_punct('<') {
                    let t = self.path()?;
                    self.expect('>')?;
                    Some(t)
                } else {
                    None
                };
                let body = if self.eat_punct('{') { Some(self.body()?) } else { None };
                Ok(TypeSpec::Variant { name, tag, body })
            }
            _ => {
                let mut words = vec![self.ident()?];
                while let Some(Tok::Ident(_)) = self.peek() {
                    if leave_declarator && !matches!(self.peek_at(1), Some(Tok::Ident(_))) {
                        break;
                    }
                    words.push(self.ident()?);
                }
                Ok(TypeSpec::Named(words.join(" ")))
            }
        }
    }

    fn align_suffix(&mut self) -> Result<Option<u64>, MetadataError> {
        if self.is_ident("align") && matches!(self.peek_at(1), Some(Tok::Punct('('))) {
            self.pos += 2;
            let v = match self.peek() {
                Some(Tok::Int(v)) => *v,
                _ => return self.err("expected an alignment"),
            };
            self.pos += 1;
            self.expect(')')?;
            Ok(Some(v))
        } else {
            Ok(None)
        }
    }

    fn enum_entries(&mut self) -> Result<Vec<EnumEntry>, MetadataError> {
        let mut out = Vec::new();
        loop {
            if self.eat_punct('}') {
                return Ok(out);
            }
            let label = match self.peek() {
                Some(Tok::Ident(s)) => s.to_string(),
                Some(Tok::Str(s)) => s.clone(),
                _ => return self.err("expected an enumeration label"),
            };
            self.pos += 1;
            let mut start = None;
            let mut end = None;
            if self.eat_punct('=') {
                start = Some(self.int_value()?);
                if self.eat_punct('…') {
                    end = Some(self.int_value()?);
                }
            }
            out.push(EnumEntry { label, start, end });
            if !self.eat_punct(',') {
                self.expect('}')?;
                return Ok(out);
            }
        }
    }

    fn int_value(&mut self) -> Result<i128, MetadataError> {
        match self.value()? {
            Value::Int(v) => Ok(v),
            _ => self.err("expected an integer"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lttng_shapes() {
        let text = r#"
            typealias integer { size = 64; align = 8; signed = false; } := unsigned long;
            trace { major = 1; minor = 8; byte_order = le;
                packet.header := struct { uint32_t magic; uint8_t uuid[16]; }; };
            clock { name = "monotonic"; offset = -12; };
            struct event_header_large {
                enum : uint16_t { compact = 0 ... 65534, extended = 65535 } id;
                variant <id> { struct { uint32_t timestamp; } compact; } v;
            } align(8);
            stream { id = 0; event.header := struct event_header_large; };
            event { name = "a:b"; fields := struct { unsigned long x; integer { size = 8; } _s[ __len ]; }; };
        "#;
        let stmts = parse(text).unwrap();
        assert_eq!(stmts.len(), 6);
        match &stmts[0] {
            Stmt::Typealias { name, .. } => assert_eq!(name, "unsigned long"),
            s => panic!("{s:?}"),
        }
        match &stmts[5] {
            Stmt::Block { kind: BlockKind::Event, body, .. } => match &body[1] {
                Stmt::TypeAssign { ty: TypeSpec::Struct { body: Some(b), .. }, .. } => {
                    match &b[0] {
                        Stmt::Field { ty: TypeSpec::Named(n), decls } => {
                            assert_eq!(n, "unsigned long");
                            assert_eq!(decls[0].name, "x");
                        }
                        s => panic!("{s:?}"),
                    }
                    match &b[1] {
                        Stmt::Field { decls, .. } => {
                            assert!(matches!(&decls[0].subs[0], Subscript::Path(p) if p == "__len"))
                        }
                        s => panic!("{s:?}"),
                    }
                }
                s => panic!("{s:?}"),
            },
            s => panic!("{s:?}"),
        }
    }

    #[test]
    fn syntax_errors_have_offsets() {
        let e = parse("trace { major = 1 }").unwrap_err();
        assert_eq!(e.offset, 18);
        let deep = "struct {".repeat(1000);
        assert!(parse(&deep).is_err());
    }
}
