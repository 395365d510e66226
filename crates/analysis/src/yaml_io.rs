//! YAML files read as a tree of nodes, each with its line (architecture files, expectation
//! files), and names written as YAML scalars that every loader reads back as they were.
//!
//! Reading: any YAML that a YAML 1.2 loader reads (block or flow style, quoted or plain scalars
//! folded over lines, comments, a leading byte-order mark), parsed by `yaml-rust2`'s event
//! parser, pulled one event at a time (its `Parser::load` recurses once per level of nesting,
//! the pull does not). Mappings and sequences nest at most [`MAX_DEPTH`] deep, an alias
//! (`*name`) is refused (no expansion, so no "billion laughs"), anchors and tags are ignored, and
//! a file holds one document. A repeated key takes its last value, as PyYAML does. A character
//! YAML does not allow in a file (C0 controls but tab, line feed and carriage return; DEL; C1
//! controls but NEL; U+FFFE, U+FFFF; a byte-order mark after the start) is an error naming its
//! line, column and byte, as PyYAML's is: `yaml-rust2` would take NUL for the end of the file,
//! silently, and read the others as text. Every error names its line.
//!
//! Writing ([`q`]): plain where YAML 1.1 (PyYAML) and YAML 1.2 loaders both read back the same
//! string, else single-quoted, else (a line break, a tab, a control character, U+2028/U+2029,
//! ...) double-quoted with escapes.

use std::fmt::Write as _;
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::TScalarStyle;

/// How deep mappings and sequences may nest in a file read (CARET's own nest six deep).
pub const MAX_DEPTH: usize = 64;

/// A node of the YAML read, with the line it starts on.
#[derive(Debug)]
pub(crate) struct Node {
    pub(crate) line: usize,
    pub(crate) value: Value,
}

#[derive(Debug)]
pub(crate) enum Value {
    /// A scalar's text, and whether it was plain (unquoted).
    Scalar(String, bool),
    Seq(Vec<Node>),
    Map(Vec<Entry>),
}

/// A mapping's key (with its line) and value.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) key: String,
    pub(crate) line: usize,
    pub(crate) value: Node,
}

impl Node {
    /// A plain `~`, `null` or nothing (YAML 1.1 and 1.2 read the same).
    pub(crate) fn is_null(&self) -> bool {
        matches!(&self.value, Value::Scalar(t, true) if matches!(t.as_str(), "" | "~" | "null" | "Null" | "NULL"))
    }

    pub(crate) fn kind(&self) -> &'static str {
        match &self.value {
            _ if self.is_null() => "empty",
            Value::Scalar(..) => "a scalar",
            Value::Seq(_) => "a sequence",
            Value::Map(_) => "a mapping",
        }
    }
}

/// The document's root (none for an empty file); `what` names the file in errors (`an
/// architecture file`). Events are pulled one at a time and nodes kept
/// on an explicit stack, so nothing recurses.
pub(crate) fn tree(src: &str, what: &str) -> Result<Option<Node>, String> {
    struct Open {
        node: Node,
        key: Option<(String, usize)>,
    }
    let bom = if src.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
    let src = &src[bom..];
    forbidden(src, bom)?;
    let mut parser = Parser::new_from_str(src);
    let mut open: Vec<Open> = Vec::new();
    let mut root = None;
    loop {
        let (event, mark) = parser
            .next_token()
            .map_err(|e| format!("line {}, column {}: {}", e.marker().line(), e.marker().col() + 1, e.info()))?;
        let line = mark.line();
        let node = match event {
            Event::StreamEnd => break,
            Event::DocumentStart if root.is_some() => {
                return Err(format!("line {line}: a second YAML document ({what} holds one)"))
            }
            Event::Nothing | Event::StreamStart | Event::DocumentStart | Event::DocumentEnd => continue,
            Event::Alias(_) => return Err(format!("line {line}: an alias (`*name`): not read in {what}")),
            Event::Scalar(text, style, ..) => Node { line, value: Value::Scalar(text, style == TScalarStyle::Plain) },
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                if open.len() >= MAX_DEPTH {
                    return Err(format!("line {line}: mappings and sequences nested deeper than {MAX_DEPTH} levels"));
                }
                let value = if matches!(event, Event::SequenceStart(..)) {
                    Value::Seq(Vec::new())
                } else {
                    Value::Map(Vec::new())
                };
                open.push(Open { node: Node { line, value }, key: None });
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match open.pop() {
                Some(o) => o.node,
                None => return Err(format!("line {line}: the end of a collection never started")),
            },
        };
        let Some(parent) = open.last_mut() else {
            root = Some(node);
            continue;
        };
        match (&mut parent.node.value, parent.key.take()) {
            (Value::Seq(items), _) => items.push(node),
            (Value::Map(entries), Some((key, line))) => entries.push(Entry { key, line, value: node }),
            (Value::Map(_), None) => match node.value {
                Value::Scalar(key, _) => parent.key = Some((key, node.line)),
                _ => return Err(format!("line {}: a mapping key that is {}, not a scalar", node.line, node.kind())),
            },
            (Value::Scalar(..), _) => unreachable!("a scalar is never open"),
        }
    }
    Ok(root)
}

/// The first character of `src` that YAML does not allow in a file (outside its printable set,
/// or a byte-order mark after the start), as an error naming its line, column (in characters,
/// the first being 1) and byte offset in the file (`src` begins `skipped` bytes into it). Line
/// breaks are LF, CR LF and CR, as the parser counts them.
fn forbidden(src: &str, skipped: usize) -> Result<(), String> {
    let (mut line, mut column, mut after_cr) = (1, 1, false);
    for (i, c) in src.char_indices() {
        let name = match c {
            '\0' => Some("NUL"),
            '\u{1}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{7f}'..='\u{84}' | '\u{86}'..='\u{9f}' => {
                Some("the control character")
            }
            '\u{feff}' => Some("a byte-order mark after the start,"),
            '\u{fffe}' | '\u{ffff}' => Some("the noncharacter"),
            _ => None,
        };
        if let Some(name) = name {
            return Err(format!(
                "line {line}, column {column} (byte {}): {name} U+{:04X}, which YAML does not allow in a file \
                 (a double-quoted string holds it as \"\\u{:04X}\")",
                skipped + i,
                c as u32,
                c as u32
            ));
        }
        match c {
            '\n' if after_cr => {}
            '\n' | '\r' => (line, column) = (line + 1, 1),
            _ => column += 1,
        }
        after_cr = c == '\r';
    }
    Ok(())
}

/// A mapping's entries; `what` names it in the error.
pub(crate) fn entries<'a>(n: &'a Node, what: &str) -> Result<&'a [Entry], String> {
    match &n.value {
        Value::Map(e) => Ok(e),
        _ => Err(format!("line {}: {what} is {}, not a mapping", n.line, n.kind())),
    }
}

/// `key`'s entry in a mapping (the last, when repeated).
pub(crate) fn get<'a>(m: &'a [Entry], key: &str) -> Option<&'a Entry> {
    m.iter().rev().find(|e| e.key == key)
}

/// The items of the sequence under `key`: none when it is missing or empty.
pub(crate) fn seq<'a>(m: &'a [Entry], key: &str) -> Result<&'a [Node], String> {
    match get(m, key) {
        None => Ok(&[]),
        Some(e) if e.value.is_null() => Ok(&[]),
        Some(e) => match &e.value.value {
            Value::Seq(v) => Ok(v),
            _ => Err(format!("line {}: `{key}` is {}, not a sequence", e.line, e.value.kind())),
        },
    }
}

/// The text under `key`: none when it is missing or empty.
pub(crate) fn text(m: &[Entry], key: &str) -> Result<Option<String>, String> {
    match get(m, key) {
        None => Ok(None),
        Some(e) if e.value.is_null() => Ok(None),
        Some(e) => match &e.value.value {
            Value::Scalar(t, _) => Ok(Some(t.clone())),
            _ => Err(format!("line {}: `{key}` is {}, not a scalar", e.line, e.value.kind())),
        },
    }
}

/// The text under `key`, which the mapping `what` starting on `line` must have.
pub(crate) fn required(m: &[Entry], key: &str, line: usize, what: &str) -> Result<String, String> {
    match (text(m, key)?, get(m, key)) {
        (Some(t), _) => Ok(t),
        (None, Some(e)) => Err(format!("line {}: {what}: `{key}` is empty", e.line)),
        (None, None) => Err(format!("line {line}: {what} without `{key}`")),
    }
}

/// A character written as an escape, in a double-quoted scalar: line breaks (YAML 1.1's NEL,
/// U+2028, U+2029 too), tabs, and what YAML may not hold as is (C0 and C1 controls, DEL,
/// U+FFFE, U+FFFF), and a byte-order mark.
fn escaped(c: char) -> bool {
    matches!(c, '\0'..='\x1f' | '\x7f'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}')
}

/// Whether a plain scalar `s` would be read as something else than the string: YAML 1.1's
/// (PyYAML's) and YAML 1.2's null, booleans, numbers (integers, floats, octal, hexadecimal,
/// sexagesimal, infinities, NaN), timestamps, merge key and value key.
fn not_a_string(s: &str) -> bool {
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    matches!(
        s,
        "" | "~"
            | "null"
            | "Null"
            | "NULL"
            | "true"
            | "True"
            | "TRUE"
            | "false"
            | "False"
            | "FALSE"
            | "yes"
            | "Yes"
            | "YES"
            | "no"
            | "No"
            | "NO"
            | "on"
            | "On"
            | "ON"
            | "off"
            | "Off"
            | "OFF"
            | "y"
            | "Y"
            | "n"
            | "N"
            | "<<"
            | "="
    ) || matches!(unsigned, ".inf" | ".Inf" | ".INF" | ".nan" | ".NaN" | ".NAN")
        || unsigned.starts_with(|c: char| c.is_ascii_digit())
        || (unsigned.starts_with('.') && unsigned[1..].starts_with(|c: char| c.is_ascii_digit() || c == '_'))
        || s.parse::<f64>().is_ok()
}

/// A scalar as YAML: plain when safe, else single-quoted, else (characters that only escapes
/// can write) double-quoted.
pub(crate) fn q(s: &str) -> String {
    if s.chars().any(escaped) {
        let mut o = String::with_capacity(s.len() + 8);
        o.push('"');
        for c in s.chars() {
            match c {
                '"' => o.push_str("\\\""),
                '\\' => o.push_str("\\\\"),
                '\0' => o.push_str("\\0"),
                '\t' => o.push_str("\\t"),
                '\n' => o.push_str("\\n"),
                '\r' => o.push_str("\\r"),
                c if escaped(c) && (c as u32) <= 0xff => {
                    let _ = write!(o, "\\x{:02x}", c as u32);
                }
                c if escaped(c) => {
                    let _ = write!(o, "\\u{:04x}", c as u32);
                }
                c => o.push(c),
            }
        }
        o.push('"');
        return o;
    }
    let plain = !s.starts_with([
        ' ', '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`',
    ]) && !s.starts_with("...")
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.ends_with(':')
        && !s.ends_with(' ')
        && !not_a_string(s);
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn str_of<'a>(m: &'a [Entry], key: &str) -> &'a str {
        match &get(m, key).unwrap().value.value {
            Value::Scalar(t, _) => t,
            v => panic!("{key}: {v:?}"),
        }
    }

    #[test]
    fn reads_yaml() {
        let y = tree(
            "a: 1\nb:\n- x: '2: two'\n  y: folded\n    over lines\n- [p, q]\nc: []\nd:\n  e: \"q\"\n# comment\nf: it''s\ng: {h: i, j: [k]}\n",
            "a file",
        )
        .unwrap()
        .unwrap();
        let top = entries(&y, "top").unwrap();
        assert_eq!(str_of(top, "a"), "1");
        let b = seq(top, "b").unwrap();
        let b0 = entries(&b[0], "b0").unwrap();
        assert_eq!(str_of(b0, "x"), "2: two");
        assert_eq!(str_of(b0, "y"), "folded over lines");
        assert!(matches!(&b[1].value, Value::Seq(v) if v.len() == 2));
        assert!(seq(top, "c").unwrap().is_empty());
        assert_eq!(str_of(entries(&get(top, "d").unwrap().value, "d").unwrap(), "e"), "q");
        assert_eq!(str_of(top, "f"), "it''s");
        let g = entries(&get(top, "g").unwrap().value, "g").unwrap();
        assert_eq!((str_of(g, "h"), seq(g, "j").unwrap().len()), ("i", 1));
        assert_eq!((get(top, "f").unwrap().line, get(top, "g").unwrap().line), (11, 12));
        assert!(tree("a: [1\n", "a file").unwrap_err().starts_with("line 2"), "{:?}", tree("a: [1\n", "a file"));
        assert!(tree("", "a file").unwrap().is_none());
    }

    /// NUL (taken by the parser for the end of the file), in a comment or a value, and each
    /// other character YAML does not allow, is an error naming its line, column and byte; tab,
    /// CR, NEL and a leading byte-order mark are read.
    #[test]
    fn refuses_characters_yaml_does_not_allow() {
        let err = |s: &str| tree(s, "a file").unwrap_err();
        assert_eq!(
            err("a: 1 # one\0\nb: 2\n"),
            "line 1, column 11 (byte 10): NUL U+0000, which YAML does not allow in a file \
             (a double-quoted string holds it as \"\\u0000\")"
        );
        assert!(err("a: 1\r\nb: x\0y\n").starts_with("line 2, column 5 (byte 10): NUL U+0000"));
        assert!(err("a: 1\rb: \x1b[2J\n").starts_with("line 2, column 4 (byte 8): the control character U+001B"));
        assert!(err("\u{feff}a: \x7f").starts_with("line 1, column 4 (byte 6): the control character U+007F"));
        assert!(err("a: \u{9b}\n").starts_with("line 1, column 4 (byte 3): the control character U+009B"));
        assert!(
            err("a: b\u{feff}\n").starts_with("line 1, column 5 (byte 4): a byte-order mark after the start, U+FEFF")
        );
        assert!(err("a: é\u{fffe}").starts_with("line 1, column 5 (byte 5): the noncharacter U+FFFE"));
        assert!(err("a:\n- \u{ffff}").starts_with("line 2, column 3 (byte 5): the noncharacter U+FFFF"));
        let y = tree("\u{feff}a: \"\\0\\uFFFE\"\t\r\nb: x\u{85}y\n", "a file").unwrap().unwrap();
        let top = entries(&y, "top").unwrap();
        assert_eq!((str_of(top, "a"), str_of(top, "b")), ("\0\u{fffe}", "x\u{85}y"));
        assert_eq!(get(top, "b").unwrap().line, 2);
    }

    #[test]
    fn quotes_what_needs_it() {
        assert_eq!(q("/topic1"), "/topic1");
        assert_eq!(q("void (Foo::?)()"), "void (Foo::?)()");
        assert_eq!(q("a: b"), "'a: b'");
        assert_eq!(q("{lambda}"), "'{lambda}'");
        assert_eq!(q("it's"), "it's");
        assert_eq!(q("'x"), "'''x'");
        assert_eq!(q("100"), "'100'");
    }

    #[test]
    fn escapes_what_only_double_quotes_can_write() {
        assert_eq!(q("a\nb"), r#""a\nb""#);
        assert_eq!(q("\t\r\0\x01\x7f\u{85}\u{9f}"), r#""\t\r\0\x01\x7f\x85\x9f""#);
        assert_eq!(q("x\u{2028}y\u{2029}\u{feff}"), r#""x\u2028y\u2029\ufeff""#);
        assert_eq!(q("\"q\" \\ \n"), r#""\"q\" \\ \n""#);
        for s in [
            "True",
            "NULL",
            "~",
            "Off",
            "y",
            "1.5",
            "+1",
            ".5",
            "0x1f",
            "1_000",
            "2001-12-14",
            "12:30",
            ".inf",
            "-.nan",
            "<<",
            "=",
            "",
            "...x",
        ] {
            assert!(q(s).starts_with('\''), "{s}: {}", q(s));
        }
        for s in ["/a b", "a:b", "a#b", "foo, bar", "x-1", "é ü", "a\u{a0}b"] {
            assert_eq!(q(s), s);
        }
    }
}
