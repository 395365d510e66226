//! CARET's architecture file (YAML): written from an [`Architecture`] in the layout
//! caret_analyze's exporter writes and its reader loads, and read back (what rostrace applies of
//! it to a trace: its named paths and the message contexts it sets).
//!
//! Reading: any YAML 1.2 a loader reads, as [`crate::yaml_io`] reads it: at most [`MAX_DEPTH`]
//! levels deep, no alias, one document; a repeated key takes its last value, as PyYAML (which
//! caret_analyze reads with) does. Every error names its line: the parser's syntax errors, a
//! mapping missing a key (`node_name`, ...), a value of the wrong kind, an unknown
//! `context_type` or `callback_type`.
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
pub use crate::yaml_io::MAX_DEPTH;
use crate::yaml_io::{entries, get, q, required, seq, text, tree, Entry, Value};
use std::collections::HashSet;

/// A topic: none when missing, empty or `UNDEFINED`.
fn topic(m: &[Entry], key: &str) -> Result<Option<String>, String> {
    Ok(text(m, key)?.filter(|t| t != "UNDEFINED" && !t.is_empty()))
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
                if let Some(link) = p.link.filter(|_| p.context == Context::UseLatestMessage) {
                    // (CARET has no context of its own for a declared link: a comment says it.)
                    w(format!("  # declared by the node: message_link_{}", link.name()));
                }
                if let Some(hop) = &p.service {
                    // (Nor for a service call: caret_analyze finds no output in the input's run.)
                    let servers: Vec<String> = hop.servers.iter().map(|n| q(n).to_string()).collect();
                    w(format!(
                        "  # through service {} of {}: request in the input's callback, output in the response's",
                        q(&hop.service),
                        servers.join(", ")
                    ));
                }
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
    let root = match tree(src, "an architecture file")? {
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
            node.paths.push(NodePath {
                subscribe: s,
                publish: p,
                context,
                source: "architecture file",
                link: None,
                service: None,
            });
        }
        arch.nodes.push(node);
    }
    Ok(arch)
}
