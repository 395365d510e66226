//! CARET's architecture file (YAML): written from an [`Architecture`] in the layout
//! caret_analyze's exporter writes and its reader loads, and read back (what rostrace applies of
//! it to a trace: its named paths and the message contexts it sets).
//!
//! Reading: any YAML that a YAML 1.2 loader reads (block or flow style, quoted or plain scalars
//! folded over lines, comments, a leading byte-order mark), parsed by `yaml-rust2`'s event
//! parser, pulled one event at a time (its `Parser::load` recurses once per level of nesting,
//! the pull does not). Mappings and sequences nest at most [`MAX_DEPTH`] deep, an alias
//! (`*name`) is refused (no expansion, so no "billion laughs"), anchors and tags are ignored, and
//! a file holds one document. A repeated key takes its last value, as PyYAML (which caret_analyze
//! reads with) does. Every error names its line: the parser's syntax errors, a mapping missing a
//! key (`node_name`, ...), a value of the wrong kind, an unknown `context_type` or `callback_type`.
//!
//! Writing: each name is written plain where YAML 1.1 (PyYAML, so caret_analyze) and YAML 1.2
//! loaders both read back the same string, else single-quoted, else (a line break, a tab, a control
//! character, U+2028/U+2029, ...) double-quoted with escapes; each on one line (PyYAML folds long
//! symbols over lines, which reads back the same), an empty list as `[]`. Service callbacks are
//! left out as caret_analyze v0.7.3's exporter leaves them out (its YAML reader has none): not in a
//! node's `callbacks:`, not in a callback group, and a group left without callbacks by that is left
//! out, of its node and of its executor's `callback_group_names` (a group naming a callback that
//! `callbacks:` does not list makes caret_analyze fail to load the node).

use super::arch::{
    ArchCallback, ArchExecutor, ArchGroup, ArchNode, ArchPublish, ArchSubscribe, Architecture, Context, NamedPath,
    NodePath,
};
use std::collections::HashSet;
use std::fmt::Write as _;
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::TScalarStyle;

/// How deep mappings and sequences may nest in a file read (CARET's own nest six deep).
pub const MAX_DEPTH: usize = 64;

/// A node of the YAML read, with the line it starts on.
#[derive(Debug)]
struct Node {
    line: usize,
    value: Value,
}

#[derive(Debug)]
enum Value {
    /// A scalar's text, and whether it was plain (unquoted).
    Scalar(String, bool),
    Seq(Vec<Node>),
    Map(Vec<Entry>),
}

/// A mapping's key (with its line) and value.
#[derive(Debug)]
struct Entry {
    key: String,
    line: usize,
    value: Node,
}

impl Node {
    /// A plain `~`, `null` or nothing (YAML 1.1 and 1.2 read the same).
    fn is_null(&self) -> bool {
        matches!(&self.value, Value::Scalar(t, true) if matches!(t.as_str(), "" | "~" | "null" | "Null" | "NULL"))
    }

    fn kind(&self) -> &'static str {
        match &self.value {
            _ if self.is_null() => "empty",
            Value::Scalar(..) => "a scalar",
            Value::Seq(_) => "a sequence",
            Value::Map(_) => "a mapping",
        }
    }
}

/// The document's root (none for an empty file). Events are pulled one at a time and nodes kept
/// on an explicit stack, so nothing recurses.
fn tree(src: &str) -> Result<Option<Node>, String> {
    struct Open {
        node: Node,
        key: Option<(String, usize)>,
    }
    let src = src.strip_prefix('\u{feff}').unwrap_or(src);
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
                return Err(format!("line {line}: a second YAML document (an architecture file holds one)"))
            }
            Event::Nothing | Event::StreamStart | Event::DocumentStart | Event::DocumentEnd => continue,
            Event::Alias(_) => {
                return Err(format!("line {line}: an alias (`*name`): not read in an architecture file"))
            }
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

/// A mapping's entries; `what` names it in the error.
fn entries<'a>(n: &'a Node, what: &str) -> Result<&'a [Entry], String> {
    match &n.value {
        Value::Map(e) => Ok(e),
        _ => Err(format!("line {}: {what} is {}, not a mapping", n.line, n.kind())),
    }
}

/// `key`'s entry in a mapping (the last, when repeated).
fn get<'a>(m: &'a [Entry], key: &str) -> Option<&'a Entry> {
    m.iter().rev().find(|e| e.key == key)
}

/// The items of the sequence under `key`: none when it is missing or empty.
fn seq<'a>(m: &'a [Entry], key: &str) -> Result<&'a [Node], String> {
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
fn text(m: &[Entry], key: &str) -> Result<Option<String>, String> {
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
fn required(m: &[Entry], key: &str, line: usize, what: &str) -> Result<String, String> {
    match (text(m, key)?, get(m, key)) {
        (Some(t), _) => Ok(t),
        (None, Some(e)) => Err(format!("line {}: {what}: `{key}` is empty", e.line)),
        (None, None) => Err(format!("line {line}: {what} without `{key}`")),
    }
}

/// A topic: none when missing, empty or `UNDEFINED`.
fn topic(m: &[Entry], key: &str) -> Result<Option<String>, String> {
    Ok(text(m, key)?.filter(|t| t != "UNDEFINED" && !t.is_empty()))
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
fn q(s: &str) -> String {
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

/// `key:` and its items (one `- item` line each, under `indent`), or `key: []` when none.
fn list<'a>(w: &mut impl FnMut(String), indent: &str, key: &str, items: impl IntoIterator<Item = &'a String>) {
    let mut items = items.into_iter().peekable();
    if items.peek().is_none() {
        w(format!("{indent}{key}: []"));
        return;
    }
    w(format!("{indent}{key}:"));
    for i in items {
        w(format!("{indent}- {}", q(i)));
    }
}

/// The architecture as CARET's YAML.
pub fn export(arch: &Architecture) -> String {
    let mut o = String::new();
    let mut w = |s: String| {
        o.push_str(&s);
        o.push('\n');
    };
    // The callbacks written of each node (service callbacks are not caret_analyze's), and the
    // callback groups left without callbacks by that, left out of their node and executor.
    let written: Vec<HashSet<&str>> = arch
        .nodes
        .iter()
        .map(|n| n.callbacks.iter().filter(|c| c.kind != "service_callback").map(|c| c.name.as_str()).collect())
        .collect();
    let dropped: HashSet<&str> = arch
        .nodes
        .iter()
        .zip(&written)
        .flat_map(|(n, cbs)| {
            n.groups
                .iter()
                .filter(|g| !g.callbacks.is_empty() && g.callbacks.iter().all(|c| !cbs.contains(c.as_str())))
                .map(|g| g.name.as_str())
        })
        .collect();
    if arch.named_paths.is_empty() {
        w("named_paths: []".into());
    } else {
        w("named_paths:".into());
        for p in &arch.named_paths {
            w(format!("- path_name: {}", q(&p.name)));
            w("  node_chain:".into());
            for (n, sub, publ) in &p.chain {
                w(format!("  - node_name: {}", q(n)));
                w(format!("    publish_topic_name: {}", q(publ.as_deref().unwrap_or("UNDEFINED"))));
                w(format!("    subscribe_topic_name: {}", q(sub.as_deref().unwrap_or("UNDEFINED"))));
            }
        }
    }
    if arch.executors.is_empty() {
        w("executors: []".into());
    } else {
        w("executors:".into());
        for e in &arch.executors {
            w(format!("- executor_type: {}", q(&e.kind)));
            w(format!("  executor_name: {}", q(&e.name)));
            list(&mut w, "  ", "callback_group_names", e.groups.iter().filter(|g| !dropped.contains(g.as_str())));
        }
    }
    w("nodes:".into());
    for (n, names) in arch.nodes.iter().zip(&written) {
        w(format!("- node_name: {}", q(&n.name)));
        let groups: Vec<_> = n.groups.iter().filter(|g| !dropped.contains(g.name.as_str())).collect();
        if !groups.is_empty() {
            w("  callback_groups:".into());
            for g in groups {
                w(format!("  - callback_group_type: {}", q(&g.kind)));
                w(format!("    callback_group_name: {}", q(&g.name)));
                list(&mut w, "    ", "callback_names", g.callbacks.iter().filter(|c| names.contains(c.as_str())));
            }
        }
        let cbs: Vec<_> = n.callbacks.iter().filter(|c| c.kind != "service_callback").collect();
        if !cbs.is_empty() {
            w("  callbacks:".into());
            for c in &cbs {
                w(format!("  - callback_name: {}", q(&c.name)));
                w(format!("    callback_type: {}", c.kind));
                if let Some(p) = c.period_ns {
                    w(format!("    period_ns: {p}"));
                }
                if let Some(t) = &c.topic {
                    w(format!("    topic_name: {}", q(t)));
                }
                w(format!("    symbol: {}", q(&c.symbol)));
            }
        }
        if cbs.len() >= 2 {
            w("  variable_passings:".into());
            w("  - callback_name_write: UNDEFINED".into());
            w("    callback_name_read: UNDEFINED".into());
        }
        if !n.publishes.is_empty() {
            w("  publishes:".into());
            for p in &n.publishes {
                w(format!("  - topic_name: {}", q(&p.topic)));
                w("    callback_names:".into());
                if p.callbacks.is_empty() {
                    w("    - UNDEFINED".into());
                }
                for c in &p.callbacks {
                    w(format!("    - {}", q(c)));
                }
            }
        }
        if !n.subscribes.is_empty() {
            w("  subscribes:".into());
            for s in &n.subscribes {
                w(format!("  - topic_name: {}", q(&s.topic)));
                w(format!("    callback_name: {}", q(s.callback.as_deref().unwrap_or("UNDEFINED"))));
            }
        }
        if !n.paths.is_empty() {
            w("  message_contexts:".into());
            for p in &n.paths {
                w(format!("  - context_type: {}", p.context.caret_name()));
                w(format!("    subscription_topic_name: {}", q(&p.subscribe)));
                w(format!("    publisher_topic_name: {}", q(&p.publish)));
                if p.context == Context::CallbackChain {
                    list(&mut w, "    ", "callbacks", n.subscription_callback(&p.subscribe).map(|cb| &cb.name));
                }
            }
        }
    }
    o
}

/// The scalars of the sequence under `key` (none when it is missing or empty), `UNDEFINED` left
/// out.
fn names(m: &[Entry], key: &str) -> Result<Vec<String>, String> {
    seq(m, key)?
        .iter()
        .filter(|n| !n.is_null())
        .map(|n| match &n.value {
            Value::Scalar(t, _) => Ok(t.clone()),
            _ => Err(format!("line {}: an item of `{key}` is {}, not a scalar", n.line, n.kind())),
        })
        .filter(|t| t.as_ref().map_or(true, |t| t != "UNDEFINED"))
        .collect()
}

/// Reads an architecture file: named paths, executors, and nodes with their callbacks, callback
/// groups, publications, subscriptions and message contexts (only those set: `UNDEFINED` ones
/// are left to what the trace shows). What rostrace applies of it to a trace's architecture is
/// the named paths and the message contexts ([`Architecture::apply`]). An error names the line.
pub fn import(src: &str) -> Result<Architecture, String> {
    let mut arch = Architecture::default();
    let root = match tree(src)? {
        Some(r) if !r.is_null() => r,
        _ => return Ok(arch),
    };
    let top = entries(&root, "the architecture file")?;
    for p in seq(top, "named_paths")? {
        let m = entries(p, "a named path")?;
        let name = required(m, "path_name", p.line, "a named path")?;
        let mut chain = Vec::new();
        for c in seq(m, "node_chain")? {
            let what = format!("path {name}: a node");
            let cm = entries(c, &what)?;
            chain.push((
                required(cm, "node_name", c.line, &what)?,
                topic(cm, "subscribe_topic_name")?,
                topic(cm, "publish_topic_name")?,
            ));
        }
        arch.named_paths.push(NamedPath { name, chain });
    }
    for e in seq(top, "executors")? {
        let m = entries(e, "an executor")?;
        arch.executors.push(ArchExecutor {
            name: required(m, "executor_name", e.line, "an executor")?,
            kind: text(m, "executor_type")?.unwrap_or_default(),
            groups: names(m, "callback_group_names")?,
        });
    }
    for n in seq(top, "nodes")? {
        let m = entries(n, "a node")?;
        let name = required(m, "node_name", n.line, "a node")?;
        let mut node = ArchNode {
            name,
            callbacks: Vec::new(),
            groups: Vec::new(),
            publishes: Vec::new(),
            subscribes: Vec::new(),
            paths: Vec::new(),
        };
        let name = &node.name;
        for c in seq(m, "callbacks")? {
            let what = format!("node {name}: a callback");
            let cm = entries(c, &what)?;
            let kind = required(cm, "callback_type", c.line, &what)?;
            let line = get(cm, "callback_type").map_or(c.line, |e| e.line);
            let kind = match kind.as_str() {
                "timer_callback" => "timer_callback",
                "subscription_callback" => "subscription_callback",
                "service_callback" => "service_callback",
                _ => {
                    return Err(format!(
                        "line {line}: {what}: `callback_type: {kind}` is not supported (timer_callback, subscription_callback, service_callback)"
                    ))
                }
            };
            let period_ns = match text(cm, "period_ns")? {
                None => None,
                Some(p) => Some(p.parse::<i64>().map_err(|_| {
                    let line = get(cm, "period_ns").map_or(c.line, |e| e.line);
                    format!("line {line}: {what}: `period_ns: {p}` is not an integer")
                })?),
            };
            node.callbacks.push(ArchCallback {
                name: required(cm, "callback_name", c.line, &what)?,
                kind,
                period_ns,
                topic: text(cm, "topic_name")?,
                symbol: text(cm, "symbol")?.unwrap_or_default(),
                ids: Vec::new(),
            });
        }
        for g in seq(m, "callback_groups")? {
            let what = format!("node {name}: a callback group");
            let gm = entries(g, &what)?;
            node.groups.push(ArchGroup {
                name: required(gm, "callback_group_name", g.line, &what)?,
                kind: text(gm, "callback_group_type")?.unwrap_or_default(),
                callbacks: names(gm, "callback_names")?,
                executor: (0, 0, 0),
            });
        }
        for p in seq(m, "publishes")? {
            let what = format!("node {name}: a publication");
            let pm = entries(p, &what)?;
            node.publishes.push(ArchPublish {
                topic: required(pm, "topic_name", p.line, &what)?,
                callbacks: names(pm, "callback_names")?,
                publishers: Vec::new(),
            });
        }
        for s in seq(m, "subscribes")? {
            let what = format!("node {name}: a subscription");
            let sm = entries(s, &what)?;
            node.subscribes.push(ArchSubscribe {
                topic: required(sm, "topic_name", s.line, &what)?,
                callback: topic(sm, "callback_name")?,
            });
        }
        for c in seq(m, "message_contexts")? {
            let what = format!("node {name}: a message context");
            let cm = entries(c, &what)?;
            let kind = required(cm, "context_type", c.line, &what)?;
            let Some(context) = Context::from_caret(&kind) else {
                if kind != "UNDEFINED" {
                    let line = get(cm, "context_type").map_or(c.line, |e| e.line);
                    return Err(format!(
                        "line {line}: {what}: `context_type: {kind}` is not supported (use_latest_message, callback_chain, UNDEFINED)"
                    ));
                }
                continue;
            };
            let (Some(s), Some(p)) = (topic(cm, "subscription_topic_name")?, topic(cm, "publisher_topic_name")?) else {
                continue;
            };
            node.paths.push(NodePath { subscribe: s, publish: p, context, source: "architecture file" });
        }
        arch.nodes.push(node);
    }
    Ok(arch)
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
        assert!(tree("a: [1\n").unwrap_err().starts_with("line 2"), "{:?}", tree("a: [1\n"));
        assert!(tree("").unwrap().is_none());
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
