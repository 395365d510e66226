//! The terminal UI of `rostrace live`, driven in a tmux pane: the demo's nodes, topics and
//! publisher → subscriber pairs shown while recorded, sorting, filtering, pause, q ending a second
//! `live` that follows the session's directory, and q ending the recorded command and `live`
//! cleanly with a finished recording.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux server of the test's own (its socket in the test's directory) with one pane.
struct Tmux {
    socket: std::path::PathBuf,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> String {
        let out = Command::new("tmux").arg("-S").arg(&self.socket).args(args).output().expect("tmux runs");
        assert!(out.status.success(), "tmux {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.screen_of("live")
    }

    fn screen_of(&self, target: &str) -> String {
        self.cmd(&["capture-pane", "-p", "-t", target])
    }

    /// Polls the screen until `ok` holds; fails with the last screen after a generous time.
    fn until(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        self.until_in("live", what, ok)
    }

    fn until_in(&self, target: &str, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let end = Instant::now() + Duration::from_secs(60);
        loop {
            let s = self.screen_of(target);
            if ok(&s) {
                return s;
            }
            assert!(Instant::now() < end, "{what} never shown:\n{s}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux").arg("-S").arg(&self.socket).arg("kill-server").output();
    }
}

/// The table rows of a screen: the lines between the header line starting with `first_column`
/// and the alerts line.
fn rows<'a>(screen: &'a str, first_column: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = screen.lines().collect();
    let Some(h) = lines.iter().position(|l| l.trim_start().starts_with(first_column)) else { return vec![] };
    lines[h + 1..].iter().take_while(|l| !l.starts_with("alerts")).filter(|l| !l.trim().is_empty()).copied().collect()
}

/// The callbacks' rate column: the fifth number from the right (rate, p50, p99, max, jitter).
fn rate(row: &str) -> Option<f64> {
    let t: Vec<&str> = row.split_whitespace().collect();
    t.get(t.len().checked_sub(5)?)?.parse().ok()
}

/// The events counted by the snapshot shown (its header line).
fn events(screen: &str) -> Option<u64> {
    let head = screen.lines().next()?;
    let before = head.split(" events").next()?;
    before.rsplit(' ').next()?.parse().ok()
}

fn first(row: &str) -> &str {
    row.split_whitespace().next().unwrap_or("")
}

#[rostrace_testkit::needs(tmux)]
#[test]
fn live_tui_shows_sorts_filters_and_quits_cleanly() {
    if !require(rostrace_testkit::have("tmux", "-V"), "tmux") {
        return;
    }
    let dir = TempDir::new("live-tui");
    let exe = env!("CARGO_BIN_EXE_rostrace");
    let domain = (100 + std::process::id() % 60).to_string();
    // The shell ignores SIGINT (the demo's processes catch it): q ends the processes, and the
    // command's exit code is theirs.
    let script = format!(
        "trap '' INT; {exe} demo --process sensing --duration 300 --domain {domain} & \
         {exe} demo --process control --duration 300 --domain {domain} & wait"
    );
    let session = dir.join("s");
    let tmux = Tmux { socket: dir.join("tmux.sock") };
    // `live`'s exit code is written by a shell around it: tmux may leave a dead pane's process
    // unreaped, without its status.
    let rc = dir.join("rc");
    let wrapper = format!("trap '' INT; \"$@\"; echo $? > {}", rc.display());
    let args = [exe, "live", "--interval", "0.5", "-s", "s", "-p", dir.path().to_str().unwrap(), "--", "sh", "-c"];
    let mut new = vec!["new-session", "-d", "-s", "live", "-x", "200", "-y", "50", "sh", "-c", &wrapper, "sh"];
    new.extend(args);
    new.push(&script);
    tmux.cmd(&new);
    tmux.cmd(&["set-option", "-t", "live", "remain-on-exit", "on"]);

    // The demo's nodes' callbacks, then on the next table its topics.
    let all_nodes = |s: &str| rostrace_demo::NODES.iter().all(|n| rows(s, "node").iter().any(|r| first(r) == *n));
    tmux.until("the demo's 7 nodes' callbacks", all_nodes);
    tmux.cmd(&["send-keys", "-t", "live", "Tab"]);
    tmux.until("the demo's topics", |s| {
        rostrace_demo::TOPICS.iter().all(|(t, _, _)| rows(s, "topic").iter().any(|r| first(r) == *t))
    });
    // The next: each of the demo's publisher → subscriber pairs.
    tmux.cmd(&["send-keys", "-t", "live", "Tab"]);
    tmux.until("the demo's publisher → subscriber pairs", |s| {
        s.contains("publisher → subscriber")
            && rostrace_demo::TOPICS.iter().all(|(t, p, subs)| {
                let ends = format!("{p} → {}", subs[0]);
                rows(s, "topic").iter().any(|r| first(r) == *t && r.contains(&ends))
            })
    });
    tmux.cmd(&["send-keys", "-t", "live", "BTab"]);
    tmux.cmd(&["send-keys", "-t", "live", "BTab"]);

    // Sorted by rate (largest first) by default; `1` sorts by node (A→Z), `s` moves to the next column.
    let by_rate = |s: &str| {
        let r: Vec<f64> = rows(s, "node").iter().filter_map(|r| rate(r)).collect();
        s.contains("rate/s▼") && r.len() >= 9 && r.windows(2).all(|w| w[0] >= w[1])
    };
    tmux.until("callbacks sorted by rate", by_rate);
    tmux.cmd(&["send-keys", "-t", "live", "1"]);
    let by_node = tmux.until("callbacks sorted by node", |s| {
        let n: Vec<&str> = rows(s, "node").iter().map(|r| first(r)).collect();
        s.contains("node▼") && n.len() >= 9 && n.windows(2).all(|w| w[0] <= w[1])
    });
    assert!(!by_rate(&by_node), "sorted by node is also by rate:\n{by_node}");
    tmux.cmd(&["send-keys", "-t", "live", "s"]);
    tmux.until("sort moved to the callback column", |s| s.contains("callback▼"));

    // `/` filters by node or topic; Esc clears the filter.
    tmux.cmd(&["send-keys", "-t", "live", "-l", "/sensing"]);
    tmux.cmd(&["send-keys", "-t", "live", "Enter"]);
    let filtered = tmux.until("rows of the filter", |s| {
        let r = rows(s, "node");
        // The node or the topic (the second column) has it.
        let has = |r: &str| r.split_whitespace().take(2).any(|c| c.contains("sensing"));
        s.contains("filter \"sensing\"") && !r.is_empty() && r.iter().all(|r| has(r))
    });
    for other in ["/planning/planner", "/control/actuator", "/map/map_server"] {
        assert!(!rows(&filtered, "node").iter().any(|r| first(r) == other), "{other} despite the filter:\n{filtered}");
    }
    tmux.cmd(&["send-keys", "-t", "live", "Escape"]);
    tmux.until("all nodes after Esc", all_nodes);

    // p pauses the display: the snapshot shown stays while new ones are made (every 0.5 s).
    tmux.cmd(&["send-keys", "-t", "live", "p"]);
    let paused = tmux.until("paused", |s| s.contains("[paused]"));
    assert!(events(&paused).is_some(), "no event count:\n{paused}");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(events(&tmux.screen()), events(&paused), "the display changed while paused");
    tmux.cmd(&["send-keys", "-t", "live", "p"]);
    tmux.until("new snapshots after p again", |s| !s.contains("[paused]") && events(s) != events(&paused));

    // Following the session's directory in another window: q ends that `live` alone, with no
    // signal (the shell around it, which does not ignore SIGINT, writes its exit code).
    let rc_dir = dir.join("rc-dir");
    let wrapper_dir = format!("\"$@\"; echo $? > {}", rc_dir.display());
    let follow = ["new-window", "-d", "-t", "live", "-n", "dir", "sh", "-c", &wrapper_dir, "sh", exe, "live"];
    tmux.cmd(&[&follow[..], &[session.to_str().unwrap()]].concat());
    tmux.cmd(&["set-option", "-t", "live:dir", "remain-on-exit", "on"]);
    tmux.until_in("live:dir", "the demo's nodes in the directory followed", all_nodes);
    tmux.cmd(&["send-keys", "-t", "live:dir", "q"]);
    assert_eq!(exit_code(&rc_dir, || tmux.screen_of("live:dir")), "0");
    assert!(!rc.exists(), "q in the other window ended the recording");

    // q: the recorded command is stopped, `live` ends with its exit code, the terminal restored.
    tmux.cmd(&["send-keys", "-t", "live", "q"]);
    let status = exit_code(&rc, || tmux.screen());
    let screen = tmux.screen();
    assert_eq!(status, "0", "{screen}");
    // Back on the normal screen: the final snapshot as text.
    assert!(screen.contains("-- whole recording"), "{screen}");
    check_recording(&session);
}

/// The exit code written to `rc` by the shell around `live`, once it ended.
fn exit_code(rc: &Path, screen: impl Fn() -> String) -> String {
    let end = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(s) = std::fs::read_to_string(rc).ok().filter(|s| s.ends_with('\n')) {
            return s.trim().to_string();
        }
        assert!(Instant::now() < end, "live still runs after q:\n{}", screen());
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The recording is finished and readable, with the demo's nodes.
fn check_recording(session: &Path) {
    let info = rostrace().arg("info").arg(session).output().unwrap();
    assert!(info.status.success(), "{}", String::from_utf8_lossy(&info.stderr));
    let analyzed = analyze_json(&[], &[session]);
    for n in rostrace_demo::NODES {
        assert!(analyzed["callbacks"].as_array().unwrap().iter().any(|c| c["node"] == n), "{n} not analyzed");
    }
}
