//! CARET's architecture file as rostrace reads and writes it (`rostrace_analysis::paths::yaml`): YAML as
//! people edit it (flow style, a byte-order mark), hostile files (deep nesting, aliases, huge
//! scalars) refused or read in linear time with errors naming the line, names with every
//! troublesome character written so that rostrace and PyYAML (caret_analyze's loader) read back
//! the same strings, and service callbacks left out as caret_analyze's exporter leaves them out.

use rostrace_analysis::paths::arch::{ArchCallback, ArchExecutor, ArchGroup, ArchNode, NamedPath, NodePath};
use rostrace_analysis::paths::{yaml, Architecture, Context};
use serde_json::Value;
use std::process::Command;

/// Runs `f` on a thread with a small stack (256 KiB), so that a recursion per level of nesting
/// would overflow it.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(256 * 1024).spawn(f).unwrap().join().unwrap()
}

fn err(src: &str) -> String {
    match yaml::import(src) {
        Ok(a) => panic!("read: {} named paths, {} nodes", a.named_paths.len(), a.nodes.len()),
        Err(e) => e,
    }
}

#[test]
fn flow_style_is_read() {
    let flow = "{named_paths: [{path_name: p, node_chain: [{node_name: /a, publish_topic_name: /t, \
                subscribe_topic_name: UNDEFINED}, {node_name: /b, subscribe_topic_name: /t}]}],\n executors: [],\n \
                nodes: [{node_name: /b, message_contexts: [{context_type: callback_chain, \
                subscription_topic_name: /t, publisher_topic_name: /u}]}]}\n";
    let mixed = "named_paths:\n- path_name: 'p'\n  node_chain: [{node_name: /a, publish_topic_name: /t}, \
                 {node_name: /b, subscribe_topic_name: /t}]\nexecutors: []\nnodes:\n- {node_name: /b, \
                 message_contexts: [{context_type: callback_chain, subscription_topic_name: /t,\n    \
                 publisher_topic_name: \"/u\"}]}\n";
    for src in [flow, mixed] {
        let a = yaml::import(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
        assert_eq!(
            a.named_paths,
            [NamedPath {
                name: "p".into(),
                chain: vec![("/a".into(), None, Some("/t".into())), ("/b".into(), Some("/t".into()), None)]
            }]
        );
        assert_eq!(a.nodes.len(), 1);
        let p = &a.nodes[0].paths[0];
        assert_eq!((a.nodes[0].name.as_str(), p.subscribe.as_str(), p.publish.as_str()), ("/b", "/t", "/u"));
        assert_eq!(p.context, Context::CallbackChain);
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    const N: usize = 20_000;
    let cases = [
        ("block sequences", format!("named_paths: []\nextra:\n{}x\n", "- ".repeat(N)), 3),
        // Each level indented one column more than the last (200 MB): the level too deep is on
        // line 66 (the root mapping is the first level, `extra`'s the second, from line 3).
        (
            "block mappings",
            format!(
                "named_paths: []\nextra:\n{}",
                (0..N).map(|i| format!("{}k:\n", " ".repeat(i + 1))).collect::<String>()
            ),
            66,
        ),
        ("flow sequences", format!("named_paths: []\nextra: {}{}\n", "[".repeat(N), "]".repeat(N)), 2),
        ("flow mappings", format!("named_paths: []\nextra: {}x{}\n", "{a: ".repeat(N), "}".repeat(N)), 2),
        ("unclosed flow", format!("named_paths: []\nextra: {}", "[{".repeat(N)), 2),
    ];
    for (what, src, line) in cases {
        let e = on_small_stack(move || err(&src));
        eprintln!("{what}: {e}");
        assert!(e.starts_with(&format!("line {line}:")) || e.starts_with(&format!("line {line},")), "{what}: {e}");
    }
    // The limit itself: the root mapping and 63 sequences are read, 64 are not.
    let nest = |n: usize| format!("named_paths: []\nextra: {}{}\n", "[".repeat(n), "]".repeat(n));
    assert!(yaml::import(&nest(yaml::MAX_DEPTH - 1)).is_ok());
    assert!(err(&nest(yaml::MAX_DEPTH)).starts_with("line 2"));
}

#[test]
fn aliases_are_refused() {
    let e = err("named_paths:\n- &p {path_name: a, node_chain: []}\n- *p\n");
    assert!(e.starts_with("line 3") && e.contains("alias"), "{e}");
    // "Billion laughs": refused at the first alias, nothing expanded.
    let mut src = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        src.push_str(&format!(
            "{}: &{} [{}]\n",
            (b'a' + i) as char,
            (b'a' + i) as char,
            vec![format!("*{}", (b'a' + i - 1) as char); 9].join(", ")
        ));
    }
    assert!(err(&src).starts_with("line 2"), "{}", err(&src));
}

#[test]
fn a_byte_order_mark_keeps_the_first_key() {
    let a = yaml::import("\u{feff}named_paths:\n- path_name: p\n  node_chain:\n  - node_name: /a\n").unwrap();
    assert_eq!(a.named_paths.len(), 1);
    assert_eq!(a.named_paths[0].chain[0].0, "/a");
}

#[test]
fn malformed_files_name_the_line_and_key() {
    // A syntax error: the parser's, with its line.
    let e =
        err("named_paths: []\nnodes:\n- node_name: /a\n  message_contexts:\n  - context_type: callback_chain\n - x\n");
    assert!(e.starts_with("line 6"), "{e}");
    let e = err("named_paths: [\nnodes: []\n");
    assert!(e.starts_with("line 2") || e.starts_with("line 3"), "{e}");
    // A node without its name: the line of the node's mapping, and the key.
    let e = err("named_paths: []\nnodes:\n- node_name: /a\n- callbacks: []\n  publishes: []\n");
    assert!(e.starts_with("line 4") && e.contains("`node_name`"), "{e}");
    let e = err("named_paths:\n- path_name: p\n  node_chain:\n  - node_name: /a\n  - publish_topic_name: /t\n");
    assert!(e.starts_with("line 5") && e.contains("`node_name`") && e.contains("path p"), "{e}");
    let e = err("named_paths:\n- node_chain: []\n");
    assert!(e.starts_with("line 2") && e.contains("`path_name`"), "{e}");
    let e = err("nodes:\n- node_name:\n  callbacks: []\n");
    assert!(e.starts_with("line 2") && e.contains("`node_name` is empty"), "{e}");
    // An unknown context: the line of its key, the key and the value.
    let e = err("nodes:\n- node_name: /a\n  message_contexts:\n  - subscription_topic_name: /t\n    context_type: latest\n    publisher_topic_name: /u\n");
    assert!(e.starts_with("line 5") && e.contains("`context_type: latest`") && e.contains("/a"), "{e}");
    let e = err("nodes:\n- node_name: /a\n  message_contexts:\n  - subscription_topic_name: /t\n");
    assert!(e.starts_with("line 4") && e.contains("`context_type`"), "{e}");
    // Values of the wrong kind.
    let e = err("named_paths: all\n");
    assert!(e.starts_with("line 1") && e.contains("`named_paths`") && e.contains("not a sequence"), "{e}");
    let e = err("named_paths: []\nnodes:\n- node_name: [/a]\n");
    assert!(e.starts_with("line 3") && e.contains("`node_name`") && e.contains("not a scalar"), "{e}");
    let e = err("nodes:\n- /a\n");
    assert!(e.starts_with("line 2") && e.contains("not a mapping"), "{e}");
    let e = err("- a\n");
    assert!(e.starts_with("line 1") && e.contains("not a mapping"), "{e}");
    let e = err("named_paths: []\n---\nnodes: []\n");
    assert!(e.starts_with("line 2") && e.contains("document"), "{e}");
    // Empty files are empty architectures.
    for src in ["", "# nothing\n", "---\n", "~\n"] {
        let a = yaml::import(src).unwrap();
        assert!(a.named_paths.is_empty() && a.nodes.is_empty());
    }
}

/// Names with every character that YAML treats apart.
fn troublesome() -> Vec<String> {
    let mut v: Vec<String> = [
        "a\nb",
        "a\rb",
        "a\r\nb",
        "a\tb",
        "a\u{2028}b",
        "a\u{2029}b",
        "a\u{85}b",
        "x\u{7f}y",
        "x\u{80}y",
        "x\u{9f}y",
        "\u{feff}bom",
        "a: b",
        "a:",
        ":a",
        "a #b",
        "#a",
        "- a",
        "-a",
        "-",
        "? a",
        "?",
        "[a]",
        "{a}",
        "a, b",
        "&a",
        "*a",
        "!a",
        "|",
        ">",
        "%a",
        "@a",
        "`a",
        "'a'",
        "it's",
        "\"a\"",
        "a\"b",
        "back\\slash",
        "\\",
        "true",
        "True",
        "false",
        "null",
        "Null",
        "~",
        "yes",
        "No",
        "on",
        "OFF",
        "y",
        "n",
        "1.5",
        "100",
        "-1",
        "+1",
        ".5",
        "1e3",
        "0x1f",
        "0o17",
        "017",
        "1_000",
        "12:30:00",
        "2001-12-14",
        "2001-12-14 21:59:43.10 -5",
        ".inf",
        "-.inf",
        ".NaN",
        "inf",
        "nan",
        "<<",
        "=",
        " lead",
        "trail ",
        "  both  ",
        " ",
        "...",
        "...a",
        "---",
        "--- a",
        "\u{a0}nbsp\u{a0}",
        "ü unicode ✓",
        "𝄞 beyond the BMP",
        "void f(int)::{lambda()#1}",
        "/ordinary/topic",
        "",
    ]
    .map(String::from)
    .to_vec();
    for c in (0u8..0x20).map(char::from) {
        v.push(format!("c{c}c"));
        v.push(format!("{c}"));
    }
    v
}

/// An architecture naming everything with `names`.
fn architecture(names: &[String]) -> Architecture {
    let topic = |s: &str| if s.is_empty() || s == "UNDEFINED" { "t".to_string() } else { s.to_string() };
    let mut a = Architecture::default();
    for (i, n) in names.iter().enumerate() {
        let sub = topic(n);
        let publ = format!("{sub}{i}");
        a.named_paths
            .push(NamedPath { name: n.clone(), chain: vec![(n.clone(), Some(sub.clone()), Some(publ.clone()))] });
        let cb = ArchCallback {
            name: format!("{n}/callback_0"),
            kind: "subscription_callback",
            period_ns: None,
            topic: Some(sub.clone()),
            symbol: n.clone(),
            ids: Vec::new(),
        };
        let timer = ArchCallback {
            name: n.clone(),
            kind: "timer_callback",
            period_ns: Some(1),
            topic: None,
            symbol: format!("{n}{n}"),
            ids: Vec::new(),
        };
        let context = if i % 2 == 0 { Context::CallbackChain } else { Context::UseLatestMessage };
        a.nodes.push(ArchNode {
            name: n.clone(),
            groups: vec![ArchGroup {
                name: format!("g{i}{n}"),
                kind: n.clone(),
                callbacks: vec![cb.name.clone(), timer.name.clone()],
                executor: (0, 0, 0),
            }],
            callbacks: vec![cb, timer],
            publishes: vec![rostrace_analysis::paths::arch::ArchPublish {
                topic: publ.clone(),
                callbacks: vec![n.clone()],
                publishers: Vec::new(),
            }],
            subscribes: vec![rostrace_analysis::paths::arch::ArchSubscribe {
                topic: sub.clone(),
                callback: Some(format!("{n}/callback_0")),
            }],
            paths: vec![NodePath {
                subscribe: sub,
                publish: publ,
                context,
                source: "trace",
                link: None,
                service: None,
            }],
        });
        a.executors.push(ArchExecutor { name: n.clone(), kind: n.clone(), groups: vec![format!("g{i}{n}")] });
    }
    a
}

#[test]
fn troublesome_names_round_trip() {
    let names = troublesome();
    let a = architecture(&names);
    let text = yaml::export(&a);
    let b = yaml::import(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(b.named_paths, a.named_paths);
    assert_eq!(b.nodes.len(), a.nodes.len());
    for (x, y) in a.nodes.iter().zip(&b.nodes) {
        assert_eq!(x.name, y.name);
        let paths = |n: &ArchNode| {
            n.paths.iter().map(|p| (p.subscribe.clone(), p.publish.clone(), p.context)).collect::<Vec<_>>()
        };
        assert_eq!(paths(x), paths(y));
    }
    // The rest of the file too.
    let node = |n: &ArchNode| {
        format!(
            "{:?}",
            (
                n.callbacks.iter().map(|c| (&c.name, c.kind, c.period_ns, &c.topic, &c.symbol)).collect::<Vec<_>>(),
                n.groups.iter().map(|g| (&g.name, &g.kind, &g.callbacks)).collect::<Vec<_>>(),
                n.publishes.iter().map(|p| (&p.topic, &p.callbacks)).collect::<Vec<_>>(),
                n.subscribes.iter().map(|s| (&s.topic, &s.callback)).collect::<Vec<_>>(),
            )
        )
    };
    assert_eq!(a.nodes.iter().map(node).collect::<Vec<_>>(), b.nodes.iter().map(node).collect::<Vec<_>>());
    let executors = |a: &Architecture| {
        a.executors.iter().map(|e| (e.name.clone(), e.kind.clone(), e.groups.clone())).collect::<Vec<_>>()
    };
    assert_eq!(executors(&a), executors(&b));
    // Ordinary names are written as they are.
    assert!(text.contains("- node_name: /ordinary/topic\n"), "{text}");
    assert!(text.contains("    symbol: void f(int)::{lambda()#1}\n"), "{text}");
}

/// Whether `python3` with PyYAML runs (a skip says so on stderr; `ROSTRACE_REQUIRE_TOOLS=1`
/// makes it a failure).
fn pyyaml() -> bool {
    let ok = Command::new("python3").args(["-c", "import yaml"]).output().is_ok_and(|o| o.status.success());
    rostrace_testkit::require(ok, "python3 with PyYAML")
}

/// The file as PyYAML's `safe_load` (caret_analyze's loader) reads it, as JSON; with libyaml's
/// loader too when PyYAML has it, which must read the same.
fn pyyaml_load(text: &str) -> Value {
    let dir = rostrace_testkit::TempDir::new("caret-yaml");
    let file = dir.join("arch.yaml");
    std::fs::write(&file, text).unwrap();
    let script = "import json, sys, yaml\n\
                  doc = yaml.safe_load(open(sys.argv[1], encoding='utf-8'))\n\
                  if getattr(yaml, 'CSafeLoader', None):\n    \
                      assert yaml.load(open(sys.argv[1], encoding='utf-8'), Loader=yaml.CSafeLoader) == doc\n\
                  json.dump(doc, sys.stdout)\n";
    let out = Command::new("python3").arg("-c").arg(script).arg(&file).output().unwrap();
    assert!(out.status.success(), "PyYAML: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[rostrace_testkit::needs(pyyaml)]
#[test]
fn pyyaml_reads_the_same_names() {
    if !pyyaml() {
        return;
    }
    let names = troublesome();
    let a = architecture(&names);
    let doc = pyyaml_load(&yaml::export(&a));
    let s = |v: &Value| -> String { v.as_str().unwrap_or_else(|| panic!("not a string: {v}")).to_string() };
    let paths = doc["named_paths"].as_array().unwrap();
    assert_eq!(paths.len(), a.named_paths.len());
    for (p, want) in paths.iter().zip(&a.named_paths) {
        assert_eq!(s(&p["path_name"]), want.name);
        let (n, sub, publ) = &want.chain[0];
        let c = &p["node_chain"][0];
        assert_eq!(
            (s(&c["node_name"]), s(&c["subscribe_topic_name"]), s(&c["publish_topic_name"])),
            (n.clone(), sub.clone().unwrap(), publ.clone().unwrap())
        );
    }
    for (e, want) in doc["executors"].as_array().unwrap().iter().zip(&a.executors) {
        assert_eq!(
            (s(&e["executor_name"]), s(&e["executor_type"]), s(&e["callback_group_names"][0])),
            (want.name.clone(), want.kind.clone(), want.groups[0].clone())
        );
    }
    let nodes = doc["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), a.nodes.len());
    for (n, want) in nodes.iter().zip(&a.nodes) {
        assert_eq!(s(&n["node_name"]), want.name);
        let g = &n["callback_groups"][0];
        assert_eq!(
            (s(&g["callback_group_name"]), s(&g["callback_group_type"])),
            (want.groups[0].name.clone(), want.groups[0].kind.clone())
        );
        let group: Vec<String> = g["callback_names"].as_array().unwrap().iter().map(s).collect();
        assert_eq!(group, want.groups[0].callbacks);
        for (c, w) in n["callbacks"].as_array().unwrap().iter().zip(&want.callbacks) {
            assert_eq!((s(&c["callback_name"]), s(&c["symbol"])), (w.name.clone(), w.symbol.clone()));
            if let Some(t) = &w.topic {
                assert_eq!(&s(&c["topic_name"]), t);
            }
        }
        assert_eq!(s(&n["publishes"][0]["topic_name"]), want.publishes[0].topic);
        assert_eq!(s(&n["publishes"][0]["callback_names"][0]), want.publishes[0].callbacks[0]);
        assert_eq!(s(&n["subscribes"][0]["topic_name"]), want.subscribes[0].topic);
        assert_eq!(&s(&n["subscribes"][0]["callback_name"]), want.subscribes[0].callback.as_ref().unwrap());
        let m = &n["message_contexts"][0];
        let p = &want.paths[0];
        assert_eq!(
            (s(&m["context_type"]), s(&m["subscription_topic_name"]), s(&m["publisher_topic_name"])),
            (p.context.caret_name().to_string(), p.subscribe.clone(), p.publish.clone())
        );
        if p.context == Context::CallbackChain {
            assert_eq!(s(&m["callbacks"][0]), want.callbacks[0].name);
        }
    }
}

/// A node with a timer, a service callback in the timer's group, and a group of service
/// callbacks only; its executor runs the three groups (the third empty).
fn with_services() -> Architecture {
    let cb = |name: &str, kind: &'static str| ArchCallback {
        name: name.into(),
        kind,
        period_ns: (kind == "timer_callback").then_some(100),
        topic: (kind == "service_callback").then(|| "/srv".into()),
        symbol: "f()".into(),
        ids: Vec::new(),
    };
    let group = |name: &str, cbs: &[&str]| ArchGroup {
        name: name.into(),
        kind: "mutually_exclusive".into(),
        callbacks: cbs.iter().map(|c| c.to_string()).collect(),
        executor: (0, 0, 0),
    };
    let groups = ["/n/callback_group_0", "/n/service_only_callback_group_0", "/n/callback_group_1"];
    Architecture {
        nodes: vec![ArchNode {
            name: "/n".into(),
            callbacks: vec![
                cb("/n/callback_0", "timer_callback"),
                cb("/n/service_callback_0", "service_callback"),
                cb("/n/service_callback_1", "service_callback"),
            ],
            groups: vec![
                group(groups[0], &["/n/service_callback_0", "/n/callback_0"]),
                group(groups[1], &["/n/service_callback_1"]),
                group(groups[2], &[]),
            ],
            publishes: Vec::new(),
            subscribes: Vec::new(),
            paths: Vec::new(),
        }],
        executors: vec![ArchExecutor {
            name: "executor_0".into(),
            kind: "single_threaded_executor".into(),
            groups: groups.map(String::from).to_vec(),
        }],
        ..Default::default()
    }
}

#[test]
fn service_callbacks_are_left_out_as_caret_does() {
    let text = yaml::export(&with_services());
    assert_eq!(
        text,
        "named_paths: []
executors:
- executor_type: single_threaded_executor
  executor_name: executor_0
  callback_group_names:
  - /n/callback_group_0
  - /n/callback_group_1
nodes:
- node_name: /n
  callback_groups:
  - callback_group_type: mutually_exclusive
    callback_group_name: /n/callback_group_0
    callback_names:
    - /n/callback_0
  - callback_group_type: mutually_exclusive
    callback_group_name: /n/callback_group_1
    callback_names: []
  callbacks:
  - callback_name: /n/callback_0
    callback_type: timer_callback
    period_ns: 100
    symbol: f()
"
    );
    if !pyyaml() {
        return;
    }
    // What caret_analyze requires to load the node and the executor: every callback a group
    // names is in `callbacks:`, every group an executor names is a node's.
    let doc = pyyaml_load(&text);
    let node = &doc["nodes"][0];
    let callbacks: Vec<&Value> = node["callbacks"].as_array().unwrap().iter().map(|c| &c["callback_name"]).collect();
    let groups = node["callback_groups"].as_array().unwrap();
    for g in groups {
        for c in g["callback_names"].as_array().unwrap() {
            assert!(callbacks.contains(&c), "{c}");
        }
    }
    let names: Vec<&Value> = groups.iter().map(|g| &g["callback_group_name"]).collect();
    for g in doc["executors"][0]["callback_group_names"].as_array().unwrap() {
        assert!(names.contains(&g), "{g}");
    }
}

#[test]
fn large_files_load_in_linear_time() {
    // 100,000 named paths.
    let mut src = String::from("named_paths:\n");
    for i in 0..100_000 {
        src.push_str(&format!(
            "- path_name: path{i}\n  node_chain:\n  - node_name: /a{i}\n    publish_topic_name: /t{i}\n    \
             subscribe_topic_name: UNDEFINED\n  - node_name: /b{i}\n    publish_topic_name: UNDEFINED\n    \
             subscribe_topic_name: /t{i}\n"
        ));
    }
    src.push_str("executors: []\nnodes: []\n");
    let a = yaml::import(&src).unwrap();
    assert_eq!(a.named_paths.len(), 100_000);
    assert_eq!(a.named_paths[99_999].chain[1], ("/b99999".into(), Some("/t99999".into()), None));
    // A 2.4 MB quoted scalar never closed: an error naming the line it starts on.
    let line = "    std::allocator<char> >, std::__cxx11::basic_string<char, std::char\n";
    let mut src = String::from("named_paths: []\nexecutors: []\nnodes:\n- node_name: '/a\n");
    src.push_str(&line.repeat(2_400_000 / line.len()));
    let e = err(&src);
    assert!(e.starts_with("line 4") && e.contains("quoted scalar"), "{e}");
    // The same folded over lines as a plain scalar: read, its lines joined by spaces.
    let src = format!("named_paths:\n- path_name: /a\n{}  node_chain: []\n", line.repeat(2_400_000 / line.len()));
    let a = yaml::import(&src).unwrap();
    assert_eq!(a.named_paths[0].name.len(), 2 + (line.len() - 4) * (2_400_000 / line.len()));
}
