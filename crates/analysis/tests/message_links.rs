//! Message links (`message_link_periodic_async`, `message_link_partial_sync`): read into the
//! model with their handles resolved, made the node paths they declare, and followed message by
//! message; checked against the log of a simulated system that fuses and synchronizes.

use rostrace_analysis::paths::{
    age_paths, data_age, Architecture, Context, PathIndex, PathOptions, PathSpec, SearchLimits,
};
use rostrace_analysis::{Analysis, LinkKind};
use std::path::Path;
#[path = "support/links.rs"]
mod links;
#[path = "support/system.rs"]
mod system;
use links::Declared;
use system::{spec, Sys, MS, OFFSET};

fn analyze(dir: &Path) -> Analysis {
    let (set, errors) = rostrace_ctf::TraceSet::open(&[dir]);
    assert!(errors.is_empty(), "{errors:?}");
    rostrace_analysis::analyze_traces(&set, |_, _| {})
}

/// The complete records of `path`: (first publication from the trace's start, latency).
fn complete(a: &Analysis, path: &PathSpec) -> Vec<(u64, u64)> {
    let arch = Architecture::from_analysis(a);
    let r = PathIndex::new(a).records(&arch, path, PathOptions::default()).unwrap();
    let mut v: Vec<(u64, u64)> = r.latencies().iter().map(|&(t, l)| ((t - OFFSET) as u64, l as u64)).collect();
    v.sort();
    v
}

#[test]
fn links_are_read_with_their_handles_resolved() {
    let tmp = rostrace_testkit::TempDir::new("links-model");
    let dir = tmp.join("trace");
    let mut s = Sys::rolling();
    let n = s.node("fuser");
    // Declared before the endpoints exist, as a replayed declaration can come.
    s.ev(
        5,
        1,
        "ros2:message_link_periodic_async",
        rostrace_ctf::write::Payload::new().pointer_sequence(&[0x1030u64]).pointer_sequence(&[0x1070u64]),
    );
    let sub = s.subscription(n, "/in");
    let publ = s.publisher(n, "/out");
    assert_eq!((sub.handle, publ.handle), (0x1030, 0x1070), "the handles the early link names");
    // Declared twice (the same), and once with a handle of nothing.
    s.message_link("partial_sync", &[sub.handle, 0xDEAD], &[publ.handle]);
    s.message_link("partial_sync", &[sub.handle, 0xDEAD], &[publ.handle]);
    let a = s.analyze(&dir);
    let m = &a.model;
    /// A link as (kind, subscription handles, their topics, the publishers' topics).
    type Seen = (LinkKind, Vec<u64>, Vec<Option<String>>, Vec<Option<String>>);
    let got: Vec<Seen> = m
        .message_links
        .iter()
        .map(|l| {
            let topic = |id: &Option<u32>, subs: bool| {
                id.map(|i| if subs { m.subscriptions.get(i).topic.clone() } else { m.publishers.get(i).topic.clone() })
            };
            (
                l.kind,
                l.subs.clone(),
                l.sub_ids.iter().map(|i| topic(i, true)).collect(),
                l.pub_ids.iter().map(|i| topic(i, false)).collect(),
            )
        })
        .collect();
    let some = |s: &str| Some(s.to_string());
    assert_eq!(
        got,
        [
            (LinkKind::PeriodicAsync, vec![0x1030], vec![some("/in")], vec![some("/out")]),
            (LinkKind::PartialSync, vec![0x1030, 0xDEAD], vec![some("/in"), None], vec![some("/out")]),
        ]
    );
    // Declared with both kinds: partial sync.
    let arch = Architecture::from_analysis(&a);
    let p = arch.nodes[arch.node("/fuser").unwrap()].path("/in", "/out").unwrap();
    assert_eq!((p.context, p.source, p.link), (Context::UseLatestMessage, "message link", Some(LinkKind::PartialSync)));
}

#[test]
fn a_link_between_two_nodes_is_not_a_node_path() {
    let tmp = rostrace_testkit::TempDir::new("links-cross");
    let dir = tmp.join("trace");
    let mut s = Sys::rolling();
    let (x, y) = (s.node("x"), s.node("y"));
    let sub = s.subscription(x, "/in");
    let publ = s.publisher(y, "/out");
    let own = s.publisher(x, "/own");
    s.message_link("periodic_async", &[sub.handle], &[publ.handle]);
    let a = s.analyze(&dir);
    assert_eq!(a.model.message_links.len(), 1);
    let arch = Architecture::from_analysis(&a);
    let p = arch.nodes[arch.node("/x").unwrap()].path("/in", "/own").unwrap();
    assert_eq!((p.source, p.link), ("default", None));
    assert!(arch.nodes[arch.node("/y").unwrap()].paths.is_empty());
    let _ = own;
}

/// A node whose `/in` callback publishes `/out` (a callback chain is seen) and whose timer
/// publishes `/out` too, 2 ms and 4 ms after each input, declared `kind` (or not).
fn chained_and_timed(dir: &Path, kind: Option<&str>) {
    let mut s = Sys::rolling();
    let (src, n, sink) = (s.node("src"), s.node("n"), s.node("sink"));
    let timer = s.timer(src, 10 * MS);
    let in_p = s.publisher(src, "/in");
    let sub = s.subscription(n, "/in");
    let n_timer = s.timer(n, 2 * MS);
    let out = s.publisher(n, "/out");
    let sink_sub = s.subscription(sink, "/out");
    if let Some(kind) = kind {
        s.message_link(kind, &[sub.handle], &[out.handle]);
    }
    for k in 0..5 {
        let t0 = 10 * MS + k * 10 * MS;
        s.run(11, timer, t0, t0 + 5_000);
        let src_in = s.publish(11, in_p, t0 + 1_000);
        // Taken 50 µs later; the callback (from +100 ns) publishes 10 µs in.
        s.deliver(12, sub, src_in, t0 + 51_000, 20_000);
        let q = s.publish(12, out, t0 + 51_000 + 100 + 10_000);
        s.deliver(13, sink_sub, q, t0 + 100_000, 1_000);
        for off in [2 * MS, 4 * MS] {
            s.run(12, n_timer, t0 + off, t0 + off + 5_000);
            let q = s.publish(12, out, t0 + off + 1_000);
            s.deliver(13, sink_sub, q, t0 + off + 30_000, 1_000);
        }
    }
    s.write(dir);
}

#[test]
fn a_declared_link_follows_the_input_beyond_its_callback() {
    let tmp = rostrace_testkit::TempDir::new("links-kinds");
    let path = spec(&["/src", "/n", "/sink"], &["/in", "/out"]);
    let mut by_kind = Vec::new();
    for kind in [None, Some("periodic_async"), Some("partial_sync")] {
        let dir = tmp.join(kind.unwrap_or("none"));
        chained_and_timed(&dir, kind);
        let a = analyze(&dir);
        let arch = Architecture::from_analysis(&a);
        let p = arch.nodes[arch.node("/n").unwrap()].path("/in", "/out").unwrap().clone();
        by_kind.push(((p.context, p.source, p.link), complete(&a, &path)));
    }
    // Not declared: the callback chain seen, one output per input (the one in its callback):
    // 1 µs publish → take 50 µs → run +100 ns → publish 10 µs in → taken 38.9 µs later → +100 ns.
    let t0s: Vec<u64> = (0..5).map(|k| 10 * MS + k * 10 * MS + 1_000).collect();
    assert_eq!(by_kind[0].0, (Context::CallbackChain, "observed", None));
    assert_eq!(by_kind[0].1, t0s.iter().map(|&t| (t, 99_100)).collect::<Vec<_>>());
    // Periodic async: the timer's two outputs too (their sink callback starts 30.1 µs after
    // the publication, at 2 ms and 4 ms after the input's publication).
    assert_eq!(by_kind[1].0, (Context::UseLatestMessage, "message link", Some(LinkKind::PeriodicAsync)));
    let three: Vec<(u64, u64)> =
        t0s.iter().flat_map(|&t| [(t, 99_100), (t, 2 * MS + 29_100), (t, 4 * MS + 29_100)]).collect();
    assert_eq!(by_kind[1].1, three);
    // Partial sync: each input feeds its first output only.
    assert_eq!(by_kind[2].0, (Context::UseLatestMessage, "message link", Some(LinkKind::PartialSync)));
    assert_eq!(by_kind[2].1, by_kind[0].1);
}

#[test]
fn fused_and_synchronized_paths_follow_the_programs_log() {
    let tmp = rostrace_testkit::TempDir::new("links-system");
    let lidar = spec(&["/lidar", "/fusion", "/sync", "/actuator"], &["/points", "/pose", "/cmd"]);
    let imu = spec(&["/imu_driver", "/fusion", "/sync", "/actuator"], &["/imu", "/pose", "/cmd"]);
    let dir = tmp.join("links");
    let log = links::write(&dir, 20, Declared::Links);
    // The simulated system does what the test is about: /sync publishes in either callback,
    // some /odom messages are never used, and /fusion uses one /points message twice.
    let in_pose = log.in_pose_callback.iter().filter(|&&b| b).count();
    assert!(log.cmds.len() > 300, "{}", log.cmds.len());
    assert!(in_pose > log.cmds.len() / 10 && in_pose < log.cmds.len() * 9 / 10, "{in_pose} of {}", log.cmds.len());
    let used: std::collections::HashSet<usize> = log.cmds.iter().map(|c| c.2).collect();
    assert!(used.len() < log.odom.len() - 20, "{} of {} /odom used", used.len(), log.odom.len());
    assert!(log.poses.len() > log.points.len() * 19 / 10);
    let a = analyze(&dir);
    let arch = Architecture::from_analysis(&a);
    for (node, sub, publ, kind) in [
        ("/fusion", "/points", "/pose", LinkKind::PeriodicAsync),
        ("/fusion", "/imu", "/pose", LinkKind::PeriodicAsync),
        ("/sync", "/pose", "/cmd", LinkKind::PartialSync),
        ("/sync", "/odom", "/cmd", LinkKind::PartialSync),
    ] {
        let p = arch.nodes[arch.node(node).unwrap()].path(sub, publ).unwrap();
        assert_eq!((p.context, p.source, p.link), (Context::UseLatestMessage, "message link", Some(kind)), "{node}");
    }
    for (path, via_imu) in [(&lidar, false), (&imu, true)] {
        let want = log.records(via_imu);
        assert!(want.len() > 100, "{}", want.len());
        assert_eq!(complete(&a, path), want, "{path:?}");
    }
    // Without the links, a /pose that /sync publishes with from its /odom callback is not
    // followed: the records that get through are those of the /cmd published in the /pose
    // callback.
    let dir = tmp.join("plain");
    let plain = links::write(&dir, 20, Declared::Nothing);
    let a = analyze(&dir);
    let arch = Architecture::from_analysis(&a);
    let p = arch.nodes[arch.node("/sync").unwrap()].path("/pose", "/cmd").unwrap();
    assert_eq!((p.context, p.source), (Context::CallbackChain, "observed"));
    // /fusion's timer publishes /pose while it holds /points: inferred, not declared.
    let p = arch.nodes[arch.node("/fusion").unwrap()].path("/points", "/pose").unwrap();
    assert_eq!((p.context, p.source, p.link), (Context::UseLatestMessage, "inferred", None));
    let through_pose = plain.records_through(false, |i| plain.in_pose_callback[i]);
    assert!(through_pose.len() < plain.records(false).len());
    assert_eq!(complete(&a, &lidar), through_pose);
}

#[test]
fn the_data_age_of_each_command_is_the_programs() {
    let tmp = rostrace_testkit::TempDir::new("links-age");
    let dir = tmp.join("links");
    let log = links::write(&dir, 20, Declared::Links);
    let a = analyze(&dir);
    let arch = Architecture::from_analysis(&a);
    let p = age_paths(&arch, &[], "/actuator", ["--from", "--to"], SearchLimits::default()).unwrap();
    let sources: Vec<(&str, &str)> = p.sources.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    // (/fusion and /sync publish from their inputs: not sources.)
    assert_eq!(sources, [("/imu_driver", "/imu"), ("/lidar", "/points"), ("/wheel", "/odom")]);
    let age = data_age(&PathIndex::new(&a), &arch, &p, PathOptions::default());
    let got: Vec<(u64, [u64; 3])> = age
        .inputs
        .iter()
        .map(|i| {
            let at = (i.at_ns - OFFSET) as u64;
            (at, [0, 1, 2].map(|s| i.ages_ns[s].map_or(0, |v| v as u64)))
        })
        .collect();
    assert_eq!(got, log.ages());
    assert_eq!(age.sources[1].paths, ["/lidar -/points-> /fusion -/pose-> /sync -/cmd-> /actuator"]);
    assert_eq!(age.sources[2].age.count as usize, log.actuated.len());
    // From one source only.
    let p =
        age_paths(&arch, &["/wheel".to_string()], "/actuator", ["--from", "--to"], SearchLimits::default()).unwrap();
    assert_eq!(p.sources, [("/wheel".to_string(), "/odom".to_string())]);
    // A topic is not a node.
    let e = age_paths(&arch, &[], "/cmd", ["--from", "--to"], SearchLimits::default()).unwrap_err();
    assert!(e.contains("--to /cmd: a topic; give a node"), "{e}");
}
