//! Message flows: every matched publish and take are the same message, checked against values
//! computed by hand from the raw events, and unmatched takes are exactly those whose
//! publication is not in the trace.

use rostrace_analysis::MatchBy;
use std::collections::{HashMap, HashSet};

/// The shared test data (`$ROSTRACE_TEST_DATA`, else `../shared` beside the repository).
use rostrace_testkit::test_data as shared;

/// Raw events as (ts, name, vtid, payload fields as (name, u64 or string)).
struct Raw {
    ts: i64,
    name: String,
    vtid: i64,
    u: HashMap<String, u64>,
    s: HashMap<String, String>,
}

fn raw(trace: &str) -> Vec<Raw> {
    let (set, errors) = rostrace_ctf::TraceSet::open(&[shared().join(trace)]);
    assert!(errors.is_empty());
    let mut out = Vec::new();
    let mut evs = set.events();
    while let Some(ev) = evs.next() {
        let ev = ev.unwrap();
        let mut u = HashMap::new();
        let mut s = HashMap::new();
        if let Some(p) = ev.payload() {
            for (k, v) in p.iter() {
                if let Some(x) = v.as_u64() {
                    u.insert(k.to_string(), x);
                } else if let Some(x) = v.as_str() {
                    s.insert(k.to_string(), x.into_owned());
                }
            }
        }
        let vtid = ev.context_field("vtid").and_then(|v| v.as_i64()).unwrap_or(0);
        out.push(Raw { ts: ev.timestamp().unwrap(), name: ev.name().to_string(), vtid, u, s });
    }
    out
}

fn analyze(trace: &str) -> rostrace_analysis::Analysis {
    let (set, _) = rostrace_ctf::TraceSet::open(&[shared().join(trace)]);
    rostrace_analysis::analyze_traces(&set, |_, _| {})
}

/// Instrumented DDS (`dds:write` with the source timestamp): flows by source timestamp.
#[rostrace_testkit::needs(test_data)]
#[test]
fn source_timestamp_flows_in_tc_ros2_example2() {
    rostrace_testkit::needs_test_data!();
    let ev = raw("traces/tc-ros2-example2");
    let a = analyze("traces/tc-ros2-example2");
    // By hand: the first taken message on /topic_a.
    let sub_topic: HashMap<u64, String> = ev
        .iter()
        .filter(|e| e.name == "ros2:rcl_subscription_init")
        .map(|e| (e.u["rmw_subscription_handle"], e.s["topic_name"].clone()))
        .collect();
    let take = ev
        .iter()
        .find(|e| {
            e.name == "ros2:rmw_take"
                && e.u["taken"] == 1
                && sub_topic.get(&e.u["rmw_subscription_handle"]).is_some_and(|t| t == "/topic_a")
        })
        .unwrap();
    let source = take.u["source_timestamp"] as i64;
    let wi = ev.iter().position(|e| e.name == "dds:write" && e.u["timestamp"] as i64 == source).unwrap();
    let writer_thread = ev[wi].vtid;
    // The publication starts at the rclcpp_publish just before that write, on the same thread.
    let publish = ev[..wi].iter().rev().find(|e| e.vtid == writer_thread && e.name == "ros2:rclcpp_publish").unwrap();
    let expected = take.ts - publish.ts;
    let f = a
        .flows
        .iter()
        .find(|f| a.takes[f.take as usize].take.ts == take.ts && a.takes[f.take as usize].take.source_ts == source)
        .expect("the first /topic_a take is matched");
    assert_eq!(&*f.topic, "/topic_a");
    assert_eq!(f.by, MatchBy::SourceTimestamp);
    assert_eq!(f.pub_to_take_ns, expected);
    assert_eq!(a.pubs[f.publication as usize].publication.ts_dds(), Some(ev[wi].ts));
    // Every flow: same topic and same source timestamp on both sides.
    for f in &a.flows {
        let rostrace_analysis::LinkedPublication { publication: p, topic } = &a.pubs[f.publication as usize];
        let t = &a.takes[f.take as usize].take;
        assert_eq!(topic.as_deref(), Some(&*f.topic));
        assert_eq!(p.source_ts(), Some(t.source_ts));
        assert!(f.pub_to_take_ns > 0);
    }
    // Unmatched takes are exactly those whose source timestamp no dds:write in the trace carries.
    let writes: HashSet<u64> = ev.iter().filter(|e| e.name == "dds:write").map(|e| e.u["timestamp"]).collect();
    let orphan = ev
        .iter()
        .filter(|e| {
            e.name == "ros2:rmw_take" && e.u["taken"] == 1 && sub_topic.contains_key(&e.u["rmw_subscription_handle"])
        })
        .filter(|e| !writes.contains(&e.u["source_timestamp"]))
        .count() as u64;
    assert_eq!(a.report.flows_unmatched, orphan);
    let share = a.report.flows_unmatched as f64 / (a.report.flows_matched + a.report.flows_unmatched) as f64;
    eprintln!(
        "tc-ros2-example2: {} flows matched, {} unmatched ({:.2}%)",
        a.report.flows_matched,
        a.report.flows_unmatched,
        share * 100.0
    );
    assert!(a.report.flows_matched >= 3990);
}

/// tracetools 3.1.0 without DDS events: the take's source timestamp falls inside one rmw_publish call.
#[rostrace_testkit::needs(test_data)]
#[test]
fn publish_window_flows_in_pingpong() {
    rostrace_testkit::needs_test_data!();
    let ev = raw("traces/rosworld2021-pingpong");
    let a = analyze("traces/rosworld2021-pingpong");
    assert_eq!(a.report.flows_unmatched, 0);
    let ping = a.report.topics.iter().find(|t| &*t.name == "/ping").unwrap();
    assert_eq!((ping.takes, ping.matched), (15, 15));
    for f in &a.flows {
        let p = &a.pubs[f.publication as usize].publication;
        let t = &a.takes[f.take as usize].take;
        assert_eq!(f.by, MatchBy::PublishWindow);
        assert!(p.ts_rmw().unwrap() <= t.source_ts && t.source_ts <= p.ts_after().unwrap());
    }
    // By hand: the first /ping take; its publication is the last rmw_publish before its source timestamp.
    let rmw_ping: HashSet<u64> = ev
        .iter()
        .filter(|e| e.name == "ros2:rcl_subscription_init" && e.s["topic_name"] == "/ping")
        .map(|e| e.u["rmw_subscription_handle"])
        .collect();
    let take = ev
        .iter()
        .find(|e| e.name == "ros2:rmw_take" && e.u["taken"] == 1 && rmw_ping.contains(&e.u["rmw_subscription_handle"]))
        .unwrap();
    let source = take.u["source_timestamp"] as i64;
    let rmw_publish = ev.iter().rfind(|e| e.name == "ros2:rmw_publish" && e.ts <= source).unwrap();
    let rclcpp = ev
        .iter()
        .rfind(|e| e.name == "ros2:rclcpp_publish" && e.ts <= rmw_publish.ts && e.vtid == rmw_publish.vtid)
        .unwrap();
    assert_eq!(rclcpp.u["message"], rmw_publish.u["message"], "same message through the layers");
    let f = a.flows.iter().find(|f| a.takes[f.take as usize].take.ts == take.ts).unwrap();
    assert_eq!(a.pubs[f.publication as usize].publication.ts_rmw(), Some(rmw_publish.ts));
    assert_eq!(f.pub_to_take_ns, take.ts - rclcpp.ts);
}

/// CARET: source timestamps bound to the written message, and intra-process dispatches.
#[rostrace_testkit::needs(test_data)]
#[test]
fn caret_flows() {
    rostrace_testkit::needs_test_data!();
    let a = analyze("traces/caret-demos-e2e-jazzy");
    assert_eq!(a.report.flows_unmatched, 0);
    assert!(a.report.flows_matched > 300);
    for f in &a.flows {
        let p = &a.pubs[f.publication as usize].publication;
        let t = &a.takes[f.take as usize].take;
        match f.by {
            MatchBy::SourceTimestamp => assert_eq!(p.source_ts(), Some(t.source_ts)),
            MatchBy::IntraProcess => assert_eq!(p.message, t.message),
            MatchBy::PublishWindow => panic!("CARET traces carry source timestamps"),
        }
    }
    let a = analyze("traces/caret-analyze-samples/cyclic_pipeline_intra_process@05a6ba1b");
    let intra = a.flows.iter().filter(|f| f.by == MatchBy::IntraProcess).count();
    assert!(intra >= 10, "{intra} intra-process flows");
    for f in a.flows.iter().filter(|f| f.by == MatchBy::IntraProcess) {
        assert_eq!(a.pubs[f.publication as usize].publication.message, a.takes[f.take as usize].take.message);
        assert!(f.pub_to_take_ns >= 0);
    }
}

/// The model: nodes, topics, timers, keyed per process.
#[rostrace_testkit::needs(test_data)]
#[test]
fn model_of_the_end_to_end_demo() {
    rostrace_testkit::needs_test_data!();
    let a = analyze("traces/caret-demos-e2e-jazzy");
    let names: Vec<&str> = a.report.nodes.iter().map(|n| n.name.as_ref()).collect();
    for n in [
        "/actuator_dummy_node",
        "/drive_node",
        "/filter_node",
        "/message_driven_node",
        "/sensor_dummy_node",
        "/timer_driven_node",
    ] {
        assert!(names.contains(&n), "{n} in {names:?}");
    }
    let timers: Vec<i64> = a.report.callbacks.iter().filter_map(|c| c.timer_period_ns).collect();
    assert!(!timers.is_empty());
    assert!(!a.report.executors.is_empty(), "CARET executor events");
    let tum = analyze("traces/tum-autoware-carla");
    assert_eq!(tum.report.callbacks.len(), 342);
    assert!(tum.report.nodes.len() >= 190);
    // A callback that started and did not end before the trace did is reported, not mistaken.
    assert!(tum.report.callbacks.iter().any(|c| c.unfinished > 0));
}
