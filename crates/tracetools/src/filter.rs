//! Record-time filtering by node, topic and process, with CARET's semantics: colon-separated
//! regular expressions matched anywhere in the name; a select list, when given, wins over the
//! ignore list. Unlike CARET, timer callbacks are filtered by their node too.
//!
//! Rules come from `ROSTRACE_SELECT_NODES`, `ROSTRACE_IGNORE_NODES`, `ROSTRACE_SELECT_TOPICS`,
//! `ROSTRACE_IGNORE_TOPICS`, `ROSTRACE_IGNORE_PROCESSES`, else from CARET's `CARET_*` variables
//! of the same names. Initialization events teach the tracer which handle belongs to which node
//! and topic; each runtime event's handle is then decided once and cached per thread.

use crate::catalog::{FieldType, TRACEPOINTS};
use crate::env;
use regex_lite::Regex;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

#[derive(Default)]
struct Rules {
    select_nodes: Vec<Regex>,
    ignore_nodes: Vec<Regex>,
    select_topics: Vec<Regex>,
    ignore_topics: Vec<Regex>,
}

/// The rules, each read from rostrace's variable ([`crate::env`]), else CARET's.
pub const RULE_VARS: [(&str, &str); 5] = [
    (env::SELECT_NODES, "CARET_SELECT_NODES"),
    (env::IGNORE_NODES, "CARET_IGNORE_NODES"),
    (env::SELECT_TOPICS, "CARET_SELECT_TOPICS"),
    (env::IGNORE_TOPICS, "CARET_IGNORE_TOPICS"),
    (env::IGNORE_PROCESSES, "CARET_IGNORE_PROCESSES"),
];

/// Whether this environment sets any rule.
pub fn configured_in_env() -> bool {
    RULE_VARS
        .iter()
        .any(|(ours, caret)| [ours, caret].iter().any(|v| std::env::var_os(v).is_some_and(|v| !v.is_empty())))
}

/// Whether `pattern` is a filter the tracer accepts; else why not: for `rostrace record` to
/// refuse it before it starts (the tracer itself ignores it, with a warning). The syntax is
/// regex-lite's: the `regex` crate's, with ASCII Perl classes (`\w`, `\d`, `\s`) and word
/// boundaries, and without nested classes or class set operations.
pub fn check(pattern: &str) -> Result<(), String> {
    Regex::new(pattern).map(drop).map_err(|e| e.to_string())
}

/// The rule of rostrace's variable `name`, else of CARET's variable of the same rule.
fn list(name: &str) -> Vec<Regex> {
    let caret = RULE_VARS.iter().find(|(ours, _)| *ours == name).map_or("", |r| r.1);
    let v = std::env::var(name).or_else(|_| std::env::var(caret)).unwrap_or_default();
    v.split(':')
        .filter(|p| !p.is_empty())
        .filter_map(|p| match Regex::new(p) {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("rostrace: ignoring invalid filter {p:?}: {e}");
                None
            }
        })
        .collect()
}

fn pass(name: &str, select: &[Regex], ignore: &[Regex]) -> bool {
    if !select.is_empty() {
        select.iter().any(|r| r.is_match(name))
    } else {
        !ignore.iter().any(|r| r.is_match(name))
    }
}

static ACTIVE: AtomicBool = AtomicBool::new(false);
static RULES: OnceLock<Rules> = OnceLock::new();
static GENERATION: AtomicU64 = AtomicU64::new(0);

#[derive(Default)]
struct Tables {
    nodes: HashMap<u64, String>,
    /// Decision per handle (publishers, subscriptions, rmw handles, callbacks).
    allowed: HashMap<u64, bool>,
    rclcpp_to_rcl: HashMap<u64, u64>,
    sub_callbacks: HashMap<u64, Vec<u64>>,
    timer_node: HashMap<u64, u64>,
    timer_callbacks: HashMap<u64, Vec<u64>>,
    service_node: HashMap<u64, u64>,
}

static TABLES: OnceLock<Mutex<Tables>> = OnceLock::new();

fn tables() -> std::sync::MutexGuard<'static, Tables> {
    TABLES.get_or_init(|| Mutex::new(Tables::default())).lock().unwrap_or_else(|e| e.into_inner())
}

/// Reads the rules; returns false when this process (by its name) is ignored altogether.
pub fn setup(procname: &str) -> bool {
    let ignore_processes = list(env::IGNORE_PROCESSES);
    if ignore_processes.iter().any(|r| r.is_match(procname)) {
        return false;
    }
    let rules = Rules {
        select_nodes: list(env::SELECT_NODES),
        ignore_nodes: list(env::IGNORE_NODES),
        select_topics: list(env::SELECT_TOPICS),
        ignore_topics: list(env::IGNORE_TOPICS),
    };
    let active = !(rules.select_nodes.is_empty()
        && rules.ignore_nodes.is_empty()
        && rules.select_topics.is_empty()
        && rules.ignore_topics.is_empty());
    let _ = RULES.set(rules);
    ACTIVE.store(active, Ordering::Relaxed);
    true
}

/// Whether node or topic filters are set.
#[inline]
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

enum Val {
    U(u64),
    S(String),
    Other,
}

/// The payload fields of catalog event `id`, decoded from the tracer's encoding.
fn decode(id: u16, p: &[u8]) -> Vec<Val> {
    let mut out = Vec::new();
    let mut i = 0;
    let u64_at = |i: usize| p.get(i..i + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
    for (_, ty) in TRACEPOINTS[id as usize].fields {
        match ty {
            FieldType::Pointer | FieldType::U64 | FieldType::I64 => {
                out.push(u64_at(i).map(Val::U).unwrap_or(Val::Other));
                i += 8;
            }
            FieldType::I32 => {
                out.push(Val::Other);
                i += 4;
            }
            FieldType::String => {
                let n = p.get(i..).and_then(|r| r.iter().position(|c| *c == 0)).unwrap_or(0);
                out.push(Val::S(String::from_utf8_lossy(p.get(i..i + n).unwrap_or(&[])).into_owned()));
                i += n + 1;
            }
            FieldType::U8Array(n) => {
                out.push(Val::Other);
                i += *n as usize;
            }
            FieldType::PointerSequence => {
                let n = u64_at(i).unwrap_or(0) as usize;
                out.push(Val::Other);
                out.push(Val::Other);
                i += 8 + 8 * n;
            }
        }
    }
    out
}

fn u(v: &[Val], k: usize) -> u64 {
    match v.get(k) {
        Some(Val::U(x)) => *x,
        _ => 0,
    }
}

fn s(v: &[Val], k: usize) -> &str {
    match v.get(k) {
        Some(Val::S(x)) => x,
        _ => "",
    }
}

/// Learns handles from an initialization event (`payload` as the tracer encoded it).
pub fn observe(id: u16, payload: &[u8]) {
    let Some(rules) = RULES.get() else { return };
    if !active() {
        return;
    }
    let v = decode(id, payload);
    let name = TRACEPOINTS[id as usize].name;
    let mut t = tables();
    let node_ok = |t: &Tables, h: u64| match t.nodes.get(&h) {
        Some(n) => pass(n, &rules.select_nodes, &rules.ignore_nodes),
        None => true,
    };
    match name {
        "rcl_node_init" => {
            let (n, ns) = (s(&v, 2), s(&v, 3));
            let full =
                if ns.is_empty() || ns == "/" { format!("/{n}") } else { format!("{}/{n}", ns.trim_end_matches('/')) };
            t.nodes.insert(u(&v, 0), full);
        }
        "rcl_publisher_init" | "rcl_subscription_init" => {
            let ok = node_ok(&t, u(&v, 1)) && pass(s(&v, 3), &rules.select_topics, &rules.ignore_topics);
            t.allowed.insert(u(&v, 0), ok);
            t.allowed.insert(u(&v, 2), ok);
        }
        "rclcpp_subscription_init" => {
            let (rcl, obj) = (u(&v, 0), u(&v, 1));
            t.rclcpp_to_rcl.insert(obj, rcl);
            // The callback may have been added before the object was linked to its subscription.
            let ok = t.allowed.get(&rcl).copied().unwrap_or(true);
            for cb in t.sub_callbacks.get(&obj).cloned().unwrap_or_default() {
                t.allowed.insert(cb, ok);
            }
        }
        "rclcpp_subscription_callback_added" => {
            let (obj, cb) = (u(&v, 0), u(&v, 1));
            t.sub_callbacks.entry(obj).or_default().push(cb);
            let rcl = t.rclcpp_to_rcl.get(&obj).copied().unwrap_or(obj);
            let ok = t.allowed.get(&rcl).copied().unwrap_or(true);
            t.allowed.insert(cb, ok);
        }
        "rclcpp_timer_link_node" => {
            let (timer, node) = (u(&v, 0), u(&v, 1));
            t.timer_node.insert(timer, node);
            let ok = node_ok(&t, node);
            for cb in t.timer_callbacks.get(&timer).cloned().unwrap_or_default() {
                t.allowed.insert(cb, ok);
            }
        }
        "rclcpp_timer_callback_added" => {
            let (timer, cb) = (u(&v, 0), u(&v, 1));
            t.timer_callbacks.entry(timer).or_default().push(cb);
            let ok = t.timer_node.get(&timer).map(|n| node_ok(&t, *n)).unwrap_or(true);
            t.allowed.insert(cb, ok);
        }
        "rcl_service_init" => {
            t.service_node.insert(u(&v, 0), u(&v, 1));
        }
        "rclcpp_service_callback_added" => {
            let (svc, cb) = (u(&v, 0), u(&v, 1));
            let ok = t.service_node.get(&svc).map(|n| node_ok(&t, *n)).unwrap_or(true);
            t.allowed.insert(cb, ok);
        }
        _ => return,
    }
    GENERATION.fetch_add(1, Ordering::Relaxed);
}

thread_local! {
    static CACHE: RefCell<(u64, HashMap<u64, bool>)> = RefCell::new((u64::MAX, HashMap::new()));
}

/// Whether runtime events of `handle` (callback, publisher, rmw handle) are recorded.
#[inline]
pub fn allows(handle: usize) -> bool {
    if !active() {
        return true;
    }
    decide(handle as u64)
}

#[cold]
fn decide(h: u64) -> bool {
    let g = GENERATION.load(Ordering::Relaxed);
    CACHE
        .try_with(|c| {
            let Ok(mut c) = c.try_borrow_mut() else { return true };
            if c.0 != g {
                c.0 = g;
                c.1.clear();
            }
            if let Some(d) = c.1.get(&h) {
                return *d;
            }
            let d = tables().allowed.get(&h).copied().unwrap_or(true);
            c.1.insert(h, d);
            d
        })
        .unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_checked_as_the_tracer_compiles_them() {
        assert_eq!(check("/talker|^/ns/.*_node$"), Ok(()));
        assert_eq!(check("\\w+\\d"), Ok(()));
        assert_eq!(check("("), Err("found open group without closing ')'".to_string()));
        // What the regex crate would take and regex-lite does not: refused up front.
        assert!(check("[a-z&&[^x]]").is_err());
        assert!(check("\\pL").is_err());
    }

    #[test]
    fn a_select_list_wins_and_patterns_match_anywhere() {
        let re = |p: &str| vec![Regex::new(p).unwrap()];
        assert!(pass("/ns/talker", &re("talker"), &[]));
        assert!(!pass("/ns/listener", &re("talker"), &re("listener")));
        assert!(pass("/ns/talker", &re("talker"), &re("talker")));
        assert!(!pass("/ns/listener", &[], &re("^/ns/")));
        assert!(pass("/other", &[], &re("^/ns/")));
    }
}
