//! End-to-end paths on a synthetic system written with the ctf writer, every figure computed by
//! hand here: a 3-node chain with a drop and a message still in flight at the end, a timer
//! node using the latest message, an intra-process hop, and a fan-out.

use rostrace_analysis::paths::{
    longest_paths, search, Architecture, Case, Context, PathIndex, PathOptions, SearchLimits,
};
use rostrace_ctf::write::Payload;
use std::path::Path;
#[path = "support/system.rs"]
mod system;
use system::{spec, Sys, MS, OFFSET};

/// The system, written to `dir`.
fn build(dir: &Path) {
    build_sys().write(dir)
}

/// The system; the trace ends at 200 ms.
fn build_sys() -> Sys {
    let mut s = Sys::new();
    // 1. Chain /a_src -/a-> /b_mid -/b-> /c_sink. A's timer every 10 ms publishes /a 1 us after
    //    its start; B takes it 50 us after the publish, its callback (from +100 ns) publishes /b
    //    20 us in (callback chain); C takes /b 40 us after, its callback starts 100 ns later.
    //    Messages 0..5: #2 never reaches B (a drop), #4 is published when the trace ends.
    let (a, b, c) = (s.node("a_src"), s.node("b_mid"), s.node("c_sink"));
    let a_timer = s.timer(a, 10 * MS);
    let a_pub = s.publisher(a, "/a");
    let b_sub = s.subscription(b, "/a");
    let b_pub = s.publisher(b, "/b");
    let c_sub = s.subscription(c, "/b");
    for k in 0..5 {
        let t0 = 10 * MS + k * 10 * MS;
        let t0 = if k == 4 { 199_900_000 } else { t0 };
        s.run(11, a_timer, t0, t0 + 5_000);
        let src = s.publish(11, a_pub, t0 + 1_000);
        if k == 2 || k == 4 {
            continue;
        }
        let take = t0 + 1_000 + 50_000;
        s.deliver(12, b_sub, src, take, 30_000);
        let q = take + 100 + 20_000;
        let src_b = s.publish(12, b_pub, q);
        s.deliver(13, c_sub, src_b, q + 40_000, 5_000);
    }
    // 2. /s_src -/s-> /t_timer -/t-> /u_sink: T keeps /s's latest message (its /s callback
    //    publishes nothing) and its 5 ms timer publishes /t. S publishes every 10 ms at P_k;
    //    T's /s callback starts at P_k + 30.1 us; T's timer publishes at P_k + 2.001 ms and
    //    P_k + 7.001 ms; U's callback starts 20.1 us after each.
    let (sn, tn, un) = (s.node("s_src"), s.node("t_timer"), s.node("u_sink"));
    let s_timer = s.timer(sn, 10 * MS);
    let s_pub = s.publisher(sn, "/s");
    let t_sub = s.subscription(tn, "/s");
    let t_timer = s.timer(tn, 5 * MS);
    let t_pub = s.publisher(tn, "/t");
    let u_sub = s.subscription(un, "/t");
    for k in 0..3 {
        let pk = 100 * MS + k * 10 * MS;
        s.run(21, s_timer, pk - 1_000, pk + 4_000);
        let src = s.publish(21, s_pub, pk);
        s.deliver(22, t_sub, src, pk + 30_000, 2_000);
        for off in [2 * MS, 7 * MS] {
            s.run(23, t_timer, pk + off, pk + off + 3_000);
            let q = pk + off + 1_000;
            let src_t = s.publish(23, t_pub, q);
            s.deliver(24, u_sub, src_t, q + 20_000, 1_000);
        }
    }
    // 3. Intra-process /i_src -/i-> /j_sink: published at R_k + 1 us, dequeued 15 us later,
    //    the callback starts 100 ns after.
    let (i_n, j_n) = (s.node("i_src"), s.node("j_sink"));
    let i_timer = s.timer(i_n, 10 * MS);
    let i_pub = s.publisher(i_n, "/i");
    let j_sub = s.subscription(j_n, "/i");
    for k in 0..3u64 {
        let rk = 150 * MS + k * 10 * MS;
        s.run(31, i_timer, rk, rk + 5_000);
        s.ev(rk + 1_000, 31, "ros2:rclcpp_intra_publish", Payload::new().u64(i_pub.handle).u64(0xD000 + k));
        s.ev(rk + 1_100, 31, "ros2:rclcpp_ring_buffer_enqueue", Payload::new().u64(0xB0).u64(k).u64(1).i32(0));
        s.ev(rk + 16_000, 32, "ros2:rclcpp_ring_buffer_dequeue", Payload::new().u64(0xB0).u64(k).u64(0));
        s.ev(rk + 16_100, 32, "ros2:callback_start", Payload::new().u64(j_sub.callback).i32(1));
        s.ev(rk + 20_000, 32, "ros2:callback_end", Payload::new().u64(j_sub.callback));
    }
    // 4. Fan-out /f_src -/f-> /g_sink (10.1 us) and /h_sink (30.1 us).
    let (f, g, h) = (s.node("f_src"), s.node("g_sink"), s.node("h_sink"));
    let f_timer = s.timer(f, 10 * MS);
    let f_pub = s.publisher(f, "/f");
    let g_sub = s.subscription(g, "/f");
    let h_sub = s.subscription(h, "/f");
    for k in 0..3 {
        let t0 = 160 * MS + k * 10 * MS + 500_000;
        s.run(41, f_timer, t0, t0 + 5_000);
        let src = s.publish(41, f_pub, t0 + 1_000);
        s.deliver(42, g_sub, src, t0 + 1_000 + 10_000, 1_000);
        s.deliver(43, h_sub, src, t0 + 1_000 + 30_000, 1_000);
    }
    s
}

fn analyze() -> rostrace_analysis::Analysis {
    let tmp = rostrace_testkit::TempDir::new("paths-synthetic");
    build_sys().analyze(&tmp.join("trace"))
}

#[test]
fn architecture_observes_callback_chains_and_latest_messages() {
    let a = analyze();
    let arch = Architecture::from_analysis(&a);
    let names: Vec<&str> = arch.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "/a_src", "/b_mid", "/c_sink", "/f_src", "/g_sink", "/h_sink", "/i_src", "/j_sink", "/s_src", "/t_timer",
            "/u_sink"
        ]
    );
    let b = &arch.nodes[arch.node("/b_mid").unwrap()];
    let p = b.path("/a", "/b").unwrap();
    assert_eq!((p.context, p.source), (Context::CallbackChain, "observed"));
    let t = &arch.nodes[arch.node("/t_timer").unwrap()];
    let p = t.path("/s", "/t").unwrap();
    // (Inferred: T's timer callback publishes /t while T holds /s.)
    assert_eq!((p.context, p.source), (Context::UseLatestMessage, "inferred"));
    // /t is published by T's timer callback (callback_0: timers first), not by its /s callback.
    assert_eq!(t.publishes[0].callbacks, ["/t_timer/callback_0"]);
    let mut comms: Vec<(String, &str, &str)> = arch
        .communications
        .iter()
        .map(|c| (c.topic.clone(), arch.nodes[c.from].name.as_str(), arch.nodes[c.to].name.as_str()))
        .collect();
    comms.sort();
    assert_eq!(comms.len(), 7);
    assert_eq!(comms[2], ("/f".to_string(), "/f_src", "/g_sink"));
    assert_eq!(comms[3], ("/f".to_string(), "/f_src", "/h_sink"));
    let sources: Vec<&str> = arch.sources().iter().map(|s| arch.nodes[s.0].name.as_str()).collect();
    assert_eq!(sources, ["/a_src", "/f_src", "/i_src", "/s_src", "/t_timer"]);
    let sinks: Vec<&str> = arch.sinks().iter().map(|s| arch.nodes[s.0].name.as_str()).collect();
    assert_eq!(sinks, ["/c_sink", "/g_sink", "/h_sink", "/j_sink", "/t_timer", "/u_sink"]);
}

#[test]
fn chain_with_a_drop_and_a_message_in_flight() {
    let a = analyze();
    let arch = Architecture::from_analysis(&a);
    let index = PathIndex::new(&a);
    let path = spec(&["/a_src", "/b_mid", "/c_sink"], &["/a", "/b"]);
    let r = index.records(&arch, &path, PathOptions::default()).unwrap();
    assert_eq!(r.rows.len(), 5);
    assert_eq!(r.complete(), 3);
    // #2 stopped at B while #3 went on: dropped; #4 was still on its way.
    assert_eq!(r.incomplete(), (1, 1));
    // 50.1 us (/a) + 20 us (B) + 40.1 us (/b).
    let lat: Vec<i64> = r.latencies().iter().map(|x| x.1).collect();
    assert_eq!(lat, [110_200, 110_200, 110_200]);
    let starts: Vec<i64> = r.latencies().iter().map(|x| x.0 - OFFSET).collect();
    assert_eq!(starts, [10_001_000, 20_001_000, 40_001_000]);
    let seg: Vec<(String, Vec<i64>)> = r.segment_latencies();
    assert_eq!(seg[0], ("/a".to_string(), vec![50_100; 3]));
    assert_eq!(seg[1], ("/b_mid/callback_0".to_string(), vec![20_000; 3]));
    assert_eq!(seg[2], ("/b".to_string(), vec![40_100; 3]));
    let st = r.stats();
    assert_eq!((st.count, st.min, st.max), (3, 110_200, 110_200));
    // The first callback's start (1 us before the publish) and the last callback's end (5 us
    // after its start): two more segments, still adding up.
    let opt = PathOptions { include_first_callback: true, include_last_callback: true };
    let r = index.records(&arch, &path, opt).unwrap();
    let lat: Vec<i64> = r.latencies().iter().map(|x| x.1).collect();
    assert_eq!(lat, [116_200, 116_200, 116_200]);
    let seg: Vec<i64> = r.segment_latencies().iter().map(|s| s.1[0]).collect();
    assert_eq!(seg, [1_000, 50_100, 20_000, 40_100, 5_000]);
    // Response time: each input's earliest output; the first output's inputs are left out.
    let r = index.records(&arch, &path, PathOptions::default()).unwrap();
    let rt: Vec<i64> = r.response_time(Case::All).iter().map(|x| x.1).collect();
    // Input #2 (dropped) is answered by #3's output: 10 ms + 110.2 us.
    assert_eq!(rt, [110_200, 10_110_200, 110_200]);
}

#[test]
fn timer_using_the_latest_message() {
    let a = analyze();
    let arch = Architecture::from_analysis(&a);
    let index = PathIndex::new(&a);
    let path = spec(&["/s_src", "/t_timer", "/u_sink"], &["/s", "/t"]);
    let r = index.records(&arch, &path, PathOptions::default()).unwrap();
    // Each /s message feeds two /t publications (the 5 ms timer runs twice per input).
    assert_eq!((r.rows.len(), r.complete()), (6, 6));
    let lat: Vec<i64> = r.latencies().iter().map(|x| x.1).collect();
    assert_eq!(lat, [2_021_100, 7_021_100, 2_021_100, 7_021_100, 2_021_100, 7_021_100]);
    let node: Vec<i64> = r.segment_latencies()[1].1.clone();
    assert_eq!(node, [1_970_900, 6_970_900, 1_970_900, 6_970_900, 1_970_900, 6_970_900]);
    // Response time: per input its earliest output (the first input left out, as CARET).
    let rt = |c| r.response_time(c).iter().map(|x: &(i64, i64)| x.1).collect::<Vec<i64>>();
    assert_eq!(rt(Case::All), [2_021_100, 2_021_100]);
    assert_eq!(rt(Case::Best), [2_021_100, 2_021_100]);
    assert_eq!(rt(Case::Worst), [2_021_100, 2_021_100]);
    // From the input before: 10 ms more.
    assert_eq!(rt(Case::WorstWithExternalLatency), [12_021_100]);
}

#[test]
fn intra_process_hop_and_fan_out() {
    let a = analyze();
    let arch = Architecture::from_analysis(&a);
    let index = PathIndex::new(&a);
    let r = index.records(&arch, &spec(&["/i_src", "/j_sink"], &["/i"]), PathOptions::default()).unwrap();
    // No rcl_publish / dds_write cells on an intra-process hop; still complete.
    assert_eq!(r.complete(), 3);
    let lat: Vec<i64> = r.latencies().iter().map(|x| x.1).collect();
    assert_eq!(lat, [15_100; 3]);
    for (sink, want) in [("/g_sink", 10_100), ("/h_sink", 30_100)] {
        let r = index.records(&arch, &spec(&["/f_src", sink], &["/f"]), PathOptions::default()).unwrap();
        let lat: Vec<i64> = r.latencies().iter().map(|x| x.1).collect();
        assert_eq!(lat, [want; 3], "{sink}");
    }
    // Sources to sinks, longest first.
    let lp = longest_paths(&index, &arch, SearchLimits::default(), 100, 100, PathOptions::default());
    let got: Vec<(String, i64)> = lp.paths.iter().map(|p| (p.label.clone(), p.latency.mean as i64)).collect();
    assert_eq!(
        got,
        [
            ("/s_src -/s-> /t_timer -/t-> /u_sink".to_string(), 4_521_100),
            ("/a_src -/a-> /b_mid -/b-> /c_sink".to_string(), 110_200),
            ("/f_src -/f-> /h_sink".to_string(), 30_100),
            ("/s_src -/s-> /t_timer".to_string(), 30_100),
            ("/t_timer -/t-> /u_sink".to_string(), 20_100),
            ("/i_src -/i-> /j_sink".to_string(), 15_100),
            ("/f_src -/f-> /g_sink".to_string(), 10_100),
        ]
    );
}

/// The summary a ranking reads (without writing the rows out) is what the records tell, on
/// every path between the system's nodes (drops, messages in flight, fan-out, intra-process,
/// a timer's latest message), with each callback option.
#[test]
fn summary_equals_the_records() {
    let a = analyze();
    let arch = Architecture::from_analysis(&a);
    let index = PathIndex::new(&a);
    let mut paths = Vec::new();
    for from in 0..arch.nodes.len() {
        for to in 0..arch.nodes.len() {
            if from != to {
                let (src, dst) =
                    (rostrace_analysis::paths::Endpoint::Node(from), rostrace_analysis::paths::Endpoint::Node(to));
                search(&arch, &src, &[], &dst, SearchLimits::default(), |p| {
                    paths.push(p);
                    true
                });
            }
        }
    }
    assert!(paths.len() >= 8, "{} paths", paths.len());
    let mut incomplete = 0;
    for p in &paths {
        for (first, last) in [(false, false), (true, false), (false, true), (true, true)] {
            let opt = PathOptions { include_first_callback: first, include_last_callback: last };
            let r = index.records(&arch, p, opt).unwrap();
            let s = index.summary(&arch, p, opt).unwrap();
            let what = format!("{} {opt:?}", p.label());
            assert_eq!(s.counts, r.counts(), "{what}");
            assert_eq!(s.counts.records, r.rows.len(), "{what}");
            assert_eq!(s.counts.complete, r.complete(), "{what}");
            assert_eq!((s.counts.dropped, s.counts.in_flight), r.incomplete(), "{what}");
            let want = r.stats();
            assert_eq!(
                (s.latency.count, s.latency.sum, s.latency.min, s.latency.max),
                (want.count, want.sum, want.min, want.max),
                "{what}"
            );
            assert_eq!(s.latency.p50, want.p50, "{what}");
            incomplete += s.counts.dropped + s.counts.in_flight;
        }
    }
    assert!(incomplete > 0);
}

/// A node that publishes the latest message it took (a 10 ms timer over a 2 ms input): the
/// messages it never used are superseded, not lost; one its subscription never took is lost.
#[test]
fn superseded_and_lost_apart() {
    let tmp = rostrace_testkit::TempDir::new("paths-superseded");
    let root = tmp.join("trace");
    let mut s = Sys::new();
    let (v, w, x) = (s.node("v_src"), s.node("w_timer"), s.node("x_sink"));
    let v_timer = s.timer(v, 2 * MS);
    let v_pub = s.publisher(v, "/v");
    let w_sub = s.subscription(w, "/v");
    let w_timer = s.timer(w, 10 * MS);
    let w_pub = s.publisher(w, "/w");
    let x_sub = s.subscription(x, "/w");
    // V publishes at 100, 102, ..., 118 ms; W takes each 30 us later but the one of 106 ms.
    for k in 0..10u64 {
        let t = 100 * MS + 2 * MS * k;
        s.run(51, v_timer, t - 1_000, t + 2_000);
        let src = s.publish(51, v_pub, t);
        if k != 3 {
            s.deliver(52, w_sub, src, t + 30_000, 1_000);
        }
    }
    // W's timer at 105 and 115 ms publishes from the latest it took (104 and 114 ms); X takes them.
    for t in [105 * MS, 115 * MS] {
        s.run(53, w_timer, t, t + 3_000);
        let src = s.publish(53, w_pub, t + 1_000);
        s.deliver(54, x_sub, src, t + 21_000, 1_000);
    }
    s.write(&root);
    let (set, errors) = rostrace_ctf::TraceSet::open(&[&root]);
    assert!(errors.is_empty(), "{errors:?}");
    let a = rostrace_analysis::analyze_traces(&set, |_, _| {});
    let arch = Architecture::from_analysis(&a);
    let index = PathIndex::new(&a);
    let path = spec(&["/v_src", "/w_timer", "/x_sink"], &["/v", "/w"]);
    let r = index.records(&arch, &path, PathOptions::default()).unwrap();
    // Complete: 104, 114; superseded: 100, 102, 108, 110, 112; lost: 106; in flight: 116, 118.
    let c = r.counts();
    assert_eq!((c.records, c.complete, c.dropped, c.superseded, c.lost, c.in_flight), (10, 2, 6, 5, 1, 2));
    assert_eq!(r.incomplete(), (6, 2));
    // Each record's own, in the order of their first events (100, 102, ... 118 ms).
    use rostrace_analysis::paths::RecordStatus::*;
    let each =
        [Superseded, Superseded, Complete, Lost, Superseded, Superseded, Superseded, Complete, InFlight, InFlight];
    assert_eq!(r.statuses(), each);
    assert_eq!(index.summary(&arch, &path, PathOptions::default()).unwrap().counts, c);
    let e = rostrace_analysis::paths::e2e_summary(&arch, &path, &r, PathOptions::default(), &[]);
    assert_eq!(e.counts, c);
    // In the JSON, the counts are fields of the summary's own, in their order.
    let json = serde_json::to_string(&e).unwrap();
    let at = |k: &str| json.find(&format!("\"{k}\":")).unwrap_or_else(|| panic!("{k}: {json}"));
    let keys = ["latency", "records", "complete", "dropped", "superseded", "lost", "in_flight", "instances"];
    assert!(keys.windows(2).all(|w| at(w[0]) < at(w[1])), "{json}");
}

/// Giving the architecture back before the report is made (as `analyze` does) changes nothing
/// the analysis shows: the same report, and the same architecture and path records, built again
/// when asked for.
#[test]
fn architecture_given_back_is_built_again_the_same() {
    let tmp = rostrace_testkit::TempDir::new("paths-synthetic-release");
    let root = tmp.join("trace");
    build(&root);
    let (set, errors) = rostrace_ctf::TraceSet::open(&[&root]);
    assert!(errors.is_empty(), "{errors:?}");
    let run = |release_architecture| {
        let o = rostrace_analysis::Options { longest_paths: true, release_architecture, ..Default::default() };
        rostrace_analysis::Processor::standard().run(&set, &o, |_, _| {})
    };
    let (kept, released) = (run(false), run(true));
    assert!(kept.architecture.is_some() && released.architecture.is_none());
    assert!(!kept.report.longest_paths.as_ref().unwrap().paths.is_empty());
    assert_eq!(json(&kept.report), json(&released.report));
    assert_eq!(json(&*kept.architecture()), json(&*released.architecture()));
    assert_eq!(json(kept.longest_path_records()), json(released.longest_path_records()));
}

fn json<T: serde::Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap()
}

/// Giving the runtime tables back between the report's topics and its other sections (as
/// `analyze` does without `--samples`) changes nothing in the report, longest paths included,
/// and leaves the tables empty.
#[test]
fn tables_given_back_leave_the_report_the_same() {
    let tmp = rostrace_testkit::TempDir::new("paths-synthetic-release-tables");
    let root = tmp.join("trace");
    build(&root);
    let (set, errors) = rostrace_ctf::TraceSet::open(&[&root]);
    assert!(errors.is_empty(), "{errors:?}");
    let run = |release_tables| {
        let o = rostrace_analysis::Options { longest_paths: true, release_tables, ..Default::default() };
        rostrace_analysis::Processor::standard().run(&set, &o, |_, _| {})
    };
    let (kept, released) = (run(false), run(true));
    assert!(!kept.pubs.is_empty() && !kept.takes.is_empty() && !kept.flows.is_empty());
    assert!(released.pubs.is_empty() && released.takes.is_empty() && released.flows.is_empty());
    assert!(kept.report.flows_matched > 0 && !kept.report.topics.is_empty());
    assert!(!kept.report.longest_paths.as_ref().unwrap().paths.is_empty());
    assert_eq!(json(&kept.report), json(&released.report));
    assert_eq!(released.runs.len(), kept.runs.len());
}
