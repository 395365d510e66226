//! CARET's architecture file (YAML): written from an [`Architecture`] in the layout
//! caret_analyze's exporter writes and its reader loads, and read back: its named paths and the
//! message contexts it sets. The reader takes the block-style YAML that CARET writes (mappings,
//! sequences, plain scalars folded over lines, quoted scalars, `[]`, comments).

use super::arch::{ArchNode, Architecture, Context, NamedPath, NodePath};

/// A YAML value of the subset read.
#[derive(Debug, Clone, PartialEq)]
pub enum Yaml {
    /// A mapping, in file order.
    Map(Vec<(String, Yaml)>),
    /// A sequence.
    Seq(Vec<Yaml>),
    /// A scalar.
    Str(String),
}

impl Yaml {
    /// The value of `key` in a mapping.
    pub fn get(&self, key: &str) -> Option<&Yaml> {
        match self {
            Yaml::Map(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// A scalar's text.
    pub fn str(&self) -> Option<&str> {
        match self {
            Yaml::Str(s) => Some(s),
            _ => None,
        }
    }

    /// A sequence's items (none for anything else).
    pub fn items(&self) -> &[Yaml] {
        match self {
            Yaml::Seq(v) => v,
            _ => &[],
        }
    }
}

struct Line<'a> {
    no: usize,
    indent: usize,
    text: &'a str,
}

/// Parses the block-style YAML subset; errors name the line.
pub fn parse(src: &str) -> Result<Yaml, String> {
    let lines: Vec<Line> = src
        .lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let t = l.trim_end();
            let body = t.trim_start();
            if body.is_empty() || body.starts_with('#') || body == "---" {
                return None;
            }
            Some(Line { no: i + 1, indent: t.len() - body.len(), text: body })
        })
        .collect();
    let mut pos = 0;
    if lines.is_empty() {
        return Ok(Yaml::Map(Vec::new()));
    }
    let v = block(&lines, &mut pos, lines[0].indent)?;
    if pos < lines.len() {
        return Err(format!("line {}: unexpected indentation", lines[pos].no));
    }
    Ok(v)
}

fn block(lines: &[Line], pos: &mut usize, indent: usize) -> Result<Yaml, String> {
    if lines[*pos].text.starts_with("- ") || lines[*pos].text == "-" {
        let mut items = Vec::new();
        while *pos < lines.len() && lines[*pos].indent == indent && (lines[*pos].text.starts_with('-')) {
            let l = &lines[*pos];
            let rest = l.text[1..].trim_start();
            if rest.is_empty() {
                *pos += 1;
                if *pos < lines.len() && lines[*pos].indent > indent {
                    items.push(block(lines, pos, lines[*pos].indent)?);
                } else {
                    items.push(Yaml::Str(String::new()));
                }
                continue;
            }
            // "- key: value" starts a mapping whose keys sit at the item's content column.
            let col = indent + (l.text.len() - rest.len());
            if key_of(rest).is_some() {
                items.push(mapping(lines, pos, col, Some(rest))?);
            } else {
                let (s, next) = scalar(lines, *pos, rest, indent)?;
                *pos = next;
                items.push(s);
            }
        }
        Ok(Yaml::Seq(items))
    } else {
        mapping(lines, pos, indent, None)
    }
}

/// `key: rest` → (key, rest).
fn key_of(text: &str) -> Option<(String, &str)> {
    if text.starts_with('\'') || text.starts_with('"') {
        let q = text.chars().next()?;
        let end = text[1..].find(q)? + 1;
        let rest = text[end + 1..].strip_prefix(':')?;
        return (rest.is_empty() || rest.starts_with(' ')).then(|| (text[1..end].to_string(), rest.trim_start()));
    }
    let i = text.find(": ").or_else(|| text.ends_with(':').then(|| text.len() - 1))?;
    let key = &text[..i];
    if key.contains(['{', '[', '\'', '"']) {
        return None;
    }
    Some((key.to_string(), text[i + 1..].trim_start()))
}

fn mapping(lines: &[Line], pos: &mut usize, indent: usize, first: Option<&str>) -> Result<Yaml, String> {
    let mut out = Vec::new();
    let mut first = first;
    loop {
        let (text, no) = match first.take() {
            Some(t) => (t, lines[*pos].no),
            None => {
                if *pos >= lines.len() || lines[*pos].indent != indent {
                    break;
                }
                if lines[*pos].text.starts_with("- ") {
                    break;
                }
                (lines[*pos].text, lines[*pos].no)
            }
        };
        let (key, rest) = key_of(text).ok_or_else(|| format!("line {no}: expected `key: value`"))?;
        if rest.is_empty() {
            *pos += 1;
            // A nested block, or a sequence at the same indentation as the key.
            if *pos < lines.len()
                && (lines[*pos].indent > indent || (lines[*pos].indent == indent && lines[*pos].text.starts_with('-')))
            {
                let v = block(lines, pos, lines[*pos].indent)?;
                out.push((key, v));
            } else {
                out.push((key, Yaml::Str(String::new())));
            }
        } else {
            let (v, next) = scalar(lines, *pos, rest, indent)?;
            *pos = next;
            out.push((key, v));
        }
    }
    Ok(Yaml::Map(out))
}

/// A scalar starting with `text` on line `at`, continued on more-indented lines.
fn scalar(lines: &[Line], at: usize, text: &str, indent: usize) -> Result<(Yaml, usize), String> {
    let mut s = text.to_string();
    let mut next = at + 1;
    while next < lines.len() && lines[next].indent > indent {
        let l = lines[next].text;
        if closed(&s) && (key_of(l).is_some() || l.starts_with("- ")) {
            break;
        }
        s.push(' ');
        s.push_str(l);
        next += 1;
    }
    let v = match s.as_str() {
        "[]" => Yaml::Seq(Vec::new()),
        "{}" => Yaml::Map(Vec::new()),
        _ if s.starts_with('[') && s.ends_with(']') => {
            Yaml::Seq(s[1..s.len() - 1].split(',').map(|x| Yaml::Str(unquote(x.trim()))).collect())
        }
        _ => Yaml::Str(unquote(&s)),
    };
    Ok((v, next))
}

/// Whether a scalar's quotes (if any) are closed.
fn closed(s: &str) -> bool {
    if let Some(r) = s.strip_prefix('\'') {
        r.matches('\'').count() % 2 == 1
    } else if let Some(r) = s.strip_prefix('"') {
        r.ends_with('"') && !r.ends_with("\\\"")
    } else {
        true
    }
}

fn unquote(s: &str) -> String {
    if s.len() >= 2 && s.starts_with('\'') && s.ends_with('\'') {
        s[1..s.len() - 1].replace("''", "'")
    } else if s.len() >= 2 && s.starts_with('"') && s.ends_with('"') {
        s[1..s.len() - 1].replace("\\\"", "\"").replace("\\\\", "\\")
    } else {
        s.to_string()
    }
}

/// A scalar as YAML: plain when safe, else single-quoted.
fn q(s: &str) -> String {
    let plain = !s.is_empty()
        && !s.starts_with([
            ' ', '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`',
        ])
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.ends_with(':')
        && !s.ends_with(' ')
        && s.parse::<f64>().is_err()
        && !matches!(s, "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "~");
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "''"))
    }
}

/// The architecture as CARET's YAML.
pub fn export(arch: &Architecture) -> String {
    let mut o = String::new();
    let mut w = |s: String| {
        o.push_str(&s);
        o.push('\n');
    };
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
            w("  callback_group_names:".into());
            for g in &e.groups {
                w(format!("  - {}", q(g)));
            }
        }
    }
    w("nodes:".into());
    for n in &arch.nodes {
        w(format!("- node_name: {}", q(&n.name)));
        if !n.groups.is_empty() {
            w("  callback_groups:".into());
            for g in &n.groups {
                w(format!("  - callback_group_type: {}", q(&g.kind)));
                w(format!("    callback_group_name: {}", q(&g.name)));
                w("    callback_names:".into());
                for c in &g.callbacks {
                    w(format!("    - {}", q(c)));
                }
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
                    w("    callbacks:".into());
                    if let Some(cb) = n.subscription_callback(&p.subscribe) {
                        w(format!("    - {}", q(&cb.name)));
                    }
                }
            }
        }
    }
    o
}

/// Reads what an architecture file says that rostrace uses: nodes with their message contexts
/// (only those set: `UNDEFINED` ones are left to what the trace shows) and named paths.
pub fn import(src: &str) -> Result<Architecture, String> {
    let y = parse(src)?;
    let text = |v: Option<&Yaml>| v.and_then(Yaml::str).map(str::to_string);
    let topic = |v: Option<&Yaml>| text(v).filter(|t| t != "UNDEFINED" && !t.is_empty());
    let mut arch = Architecture::default();
    for p in y.get("named_paths").map(Yaml::items).unwrap_or_default() {
        let name = text(p.get("path_name")).ok_or("a named path without path_name")?;
        let chain = p
            .get("node_chain")
            .map(Yaml::items)
            .unwrap_or_default()
            .iter()
            .map(|c| {
                Ok((
                    text(c.get("node_name")).ok_or(format!("path {name}: a node without node_name"))?,
                    topic(c.get("subscribe_topic_name")),
                    topic(c.get("publish_topic_name")),
                ))
            })
            .collect::<Result<Vec<_>, String>>()?;
        arch.named_paths.push(NamedPath { name, chain });
    }
    for n in y.get("nodes").map(Yaml::items).unwrap_or_default() {
        let name = text(n.get("node_name")).ok_or("a node without node_name")?;
        let mut paths = Vec::new();
        for c in n.get("message_contexts").map(Yaml::items).unwrap_or_default() {
            let kind = text(c.get("context_type")).unwrap_or_default();
            let Some(context) = Context::from_caret(&kind) else {
                if kind != "UNDEFINED" {
                    return Err(format!(
                        "node {name}: message context {kind} is not supported (use_latest_message, callback_chain)"
                    ));
                }
                continue;
            };
            let (Some(s), Some(p)) = (topic(c.get("subscription_topic_name")), topic(c.get("publisher_topic_name")))
            else {
                continue;
            };
            paths.push(NodePath { subscribe: s, publish: p, context, source: "architecture file" });
        }
        arch.nodes.push(ArchNode {
            name,
            callbacks: Vec::new(),
            groups: Vec::new(),
            publishes: Vec::new(),
            subscribes: Vec::new(),
            paths,
        });
    }
    Ok(arch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_subset() {
        let y = parse(
            "a: 1\nb:\n- x: '2: two'\n  y: folded\n    over lines\n- [p, q]\nc: []\nd:\n  e: \"q\"\n# comment\nf: it''s\n",
        )
        .unwrap();
        assert_eq!(y.get("a").unwrap().str(), Some("1"));
        let b = y.get("b").unwrap().items();
        assert_eq!(b[0].get("x").unwrap().str(), Some("2: two"));
        assert_eq!(b[0].get("y").unwrap().str(), Some("folded over lines"));
        assert_eq!(b[1], Yaml::Seq(vec![Yaml::Str("p".into()), Yaml::Str("q".into())]));
        assert_eq!(y.get("c"), Some(&Yaml::Seq(vec![])));
        assert_eq!(y.get("d").unwrap().get("e").unwrap().str(), Some("q"));
        assert_eq!(y.get("f").unwrap().str(), Some("it''s"));
        assert!(parse("a: 1\n  - b\n").is_err());
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
}
