//! Names from a trace (nodes, topics, symbols) that hold terminal escape sequences and other
//! control characters: the text outputs show them escaped (as `rostrace events` escapes
//! strings), never raw, so that a trace cannot clear or retitle the terminal that reads it.

mod common;
#[path = "../../analysis/tests/support/system.rs"]
mod system;

use common::*;
use rostrace_ctf::write::Payload;
use std::process::Command;
use system::{Sys, MS};

/// Retitles the terminal (OSC 0, ended by BEL), then clears it (CSI 2J).
const HOSTILE: &str = "\x1b]0;pwned\x07\x1b[2J";
/// How it is shown.
const SHOWN: &str = "\\e]0;pwned\\a\\e[2J";

/// Two nodes talking over a topic, and a timer, each name with [`HOSTILE`] in it (and a tab,
/// a carriage return and a C1 CSI in the symbol).
fn hostile_trace(dir: &std::path::Path) {
    let mut s = Sys::new();
    let talker = s.node(&format!("talker{HOSTILE}"));
    let listener = s.node("listener");
    let topic = format!("/chatter{HOSTILE}");
    let p = s.publisher(talker, &topic);
    let sub = s.subscription(listener, &topic);
    // The talker's timer, its symbol hostile too.
    let (h, timer) = (s.addr(), s.addr());
    s.init_ev("ros2:rcl_timer_init", Payload::new().u64(h).i64(100 * MS as i64));
    s.init_ev("ros2:rclcpp_timer_callback_added", Payload::new().u64(h).u64(timer));
    s.init_ev("ros2:rclcpp_timer_link_node", Payload::new().u64(h).u64(talker));
    let symbol = format!("void on_timer(){HOSTILE}\t\r\u{9b}31m");
    s.init_ev("ros2:rclcpp_callback_register", Payload::new().u64(timer).string(symbol.as_bytes()));
    for i in 0..20u64 {
        let t = 1_000 * MS + i * 100 * MS;
        s.run(2, timer, t, t + 2 * MS);
        let src = s.publish(2, p, t + MS);
        s.deliver(3, sub, src, t + 3 * MS, MS);
    }
    s.write(dir);
}

/// The control characters of `out` but line feeds: there must be none.
fn controls(out: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(out);
    let mut v: Vec<u8> = out.iter().copied().filter(|c| (*c < 0x20 && *c != b'\n') || *c == 0x7f).collect();
    v.extend(text.chars().filter(|c| ('\u{80}'..'\u{a0}').contains(c)).map(|c| c as u32 as u8));
    v
}

#[test]
fn text_outputs_escape_control_characters_in_names() {
    let tmp = TempDir::new("hostile-names");
    let trace = tmp.join("trace");
    hostile_trace(&trace);
    let talker = format!("/talker{SHOWN}");
    // CARET's YAML escapes as YAML does.
    let yaml = "\"/talker\\x1b]0;pwned\\x07\\x1b[2J\"";
    let runs: Vec<(&str, Vec<String>, &str)> = vec![
        ("analyze", vec!["analyze".into()], &talker),
        ("analyze --wide", vec!["analyze".into(), "--wide".into()], &talker),
        ("architecture", vec!["architecture".into()], yaml),
        (
            "paths",
            vec!["paths".into(), "--from".into(), format!("/talker{HOSTILE}"), "--to".into(), "/listener".into()],
            &talker,
        ),
        ("e2e", vec!["e2e".into(), "--path".into(), format!("/talker{HOSTILE},/listener")], &talker),
        ("age", vec!["age".into(), "--to".into(), "/listener".into()], &talker),
    ];
    for (what, args, shown) in runs {
        let out = rostrace().args(&args).arg(&trace).env("COLUMNS", "200").output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{what}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(controls(&out.stdout), Vec::<u8>::new(), "{what} prints control characters raw:\n{text}");
        assert_eq!(controls(&out.stderr), Vec::<u8>::new(), "{what}: on stderr");
        assert!(text.contains(shown), "{what}: {shown} not in\n{text}");
    }
    // The symbol's tab, carriage return and C1 CSI (U+009B) are escaped too.
    let out = rostrace().args(["analyze", "--wide"]).arg(&trace).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("void on_timer(){SHOWN}\\t\\r\\xc2\\x9b31m")), "{text}");
    assert!(text.contains(&format!("/chatter{SHOWN}")), "{text}");
}

/// The messages naming names or files: the suggestions of `paths`, `e2e` and `age` for a node not
/// found, and `info`'s error naming a damaged file whose path holds an escape sequence.
#[test]
fn messages_escape_control_characters_in_names_and_paths() {
    let tmp = TempDir::new("hostile-messages");
    let trace = tmp.join("trace");
    hostile_trace(&trace);
    for args in [
        vec!["paths", "--from", "talker", "--to", "/listener"],
        vec!["e2e", "--path", "talker,/listener"],
        vec!["age", "--to", "/listener", "--from", "talker"],
    ] {
        let out = rostrace().args(&args).arg(&trace).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("did you mean") && err.contains(SHOWN), "{args:?}: {err}");
        assert_eq!(controls(&out.stderr), Vec::<u8>::new(), "{args:?}: {err}");
    }
    let bad = tmp.join(format!("bad{HOSTILE}"));
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join("metadata"), "/* CTF 1.8 */ trace { major = 1; minor = 8; ").unwrap();
    let out = rostrace().arg("info").arg(tmp.path()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("bad{SHOWN}")), "{err}");
    assert_eq!(controls(&out.stderr), Vec::<u8>::new(), "{err}");
}

/// `live` following the trace: its text snapshots (`--plain`), and in a terminal the final
/// snapshot printed once its UI is gone, which once retitled the terminal (a tmux pane).
#[test]
fn live_escapes_names_in_its_text_and_after_its_terminal_ui() {
    let tmp = TempDir::new("hostile-live");
    let trace = tmp.join("trace");
    hostile_trace(&trace);
    let out = rostrace().args(["live", "--plain", "--duration", "1"]).arg(&trace).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains(&format!("/talker{SHOWN}")), "{text}");
    assert_eq!(controls(&out.stdout), Vec::<u8>::new(), "{text}");
    if !require(Command::new("tmux").arg("-V").output().is_ok_and(|o| o.status.success()), "tmux") {
        return;
    }
    let socket = tmp.join("tmux.sock");
    let tmux = |args: &[&str]| {
        let o = Command::new("tmux").arg("-S").arg(&socket).args(args).output().unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    struct Server<'a>(&'a std::path::Path);
    impl Drop for Server<'_> {
        fn drop(&mut self) {
            let _ = Command::new("tmux").arg("-S").arg(self.0).arg("kill-server").output();
        }
    }
    let line =
        format!("{} live {}; echo live-ended; sleep 60", env!("CARGO_BIN_EXE_rostrace"), trace.to_str().unwrap());
    tmux(&["new-session", "-d", "-s", "t", "-x", "200", "-y", "50", &line]);
    let _server = Server(&socket);
    let title = tmux(&["display-message", "-p", "-t", "t", "#{pane_title}"]);
    let wait = |what: &str, ok: &dyn Fn(&str) -> bool| {
        for _ in 0..300 {
            let s = tmux(&["capture-pane", "-p", "-t", "t"]);
            if ok(&s) {
                return s;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("{what} never shown:\n{}", tmux(&["capture-pane", "-p", "-t", "t"]));
    };
    wait("the terminal UI", &|s| s.contains("Callbacks"));
    tmux(&["send-keys", "-t", "t", "q"]);
    let screen = wait("the end of live", &|s| s.contains("live-ended"));
    assert!(screen.contains(&format!("/talker{SHOWN}")), "{screen}");
    assert_eq!(tmux(&["display-message", "-p", "-t", "t", "#{pane_title}"]), title, "the pane was retitled:\n{screen}");
}
