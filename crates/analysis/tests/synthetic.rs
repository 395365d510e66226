//! A two-process ROS 2 system written as two LTTng-layout traces with known values: every
//! number the analysis reports is computed by hand here. Covers what the real traces in
//! `../shared` do not: Jazzy's `rmw_publish` source timestamps across traces, Kilted's service
//! events, Iron's ring buffers, address reuse, the same address in two processes, CARET
//! replays, lifecycle transitions, unfinished callbacks.

use rostrace_analysis::MatchBy;
use rostrace_ctf::write::*;
use std::path::{Path, PathBuf};

const P: FieldType = FieldType::Pointer;
const S: FieldType = FieldType::String;
const I64: FieldType = FieldType::I64;
const I32: FieldType = FieldType::I32;
const U64: FieldType = FieldType::U64;
const GID: FieldType = FieldType::U8Array(16);

fn events() -> Vec<EventDecl> {
    let e = |name: &str, f: &[(&str, FieldType)]| EventDecl {
        name: name.to_string(),
        fields: f.iter().map(|(n, t)| FieldDecl { name: n.to_string(), ty: t.clone() }).collect(),
    };
    vec![
        e("ros2:rcl_init", &[("context_handle", P), ("version", S)]),
        e("ros2:rcl_node_init", &[("node_handle", P), ("rmw_handle", P), ("node_name", S), ("namespace", S)]),
        e("ros2:rmw_publisher_init", &[("rmw_publisher_handle", P), ("gid", GID)]),
        e(
            "ros2:rcl_publisher_init",
            &[
                ("publisher_handle", P),
                ("node_handle", P),
                ("rmw_publisher_handle", P),
                ("topic_name", S),
                ("queue_depth", U64),
            ],
        ),
        e("ros2:rmw_subscription_init", &[("rmw_subscription_handle", P), ("gid", GID)]),
        e(
            "ros2:rcl_subscription_init",
            &[
                ("subscription_handle", P),
                ("node_handle", P),
                ("rmw_subscription_handle", P),
                ("topic_name", S),
                ("queue_depth", U64),
            ],
        ),
        e("ros2:rclcpp_subscription_init", &[("subscription_handle", P), ("subscription", P)]),
        e("ros2:rclcpp_subscription_callback_added", &[("subscription", P), ("callback", P)]),
        e("ros2:rclcpp_callback_register", &[("callback", P), ("symbol", S)]),
        e("ros2:rcl_timer_init", &[("timer_handle", P), ("period", I64)]),
        e("ros2:rclcpp_timer_callback_added", &[("timer_handle", P), ("callback", P)]),
        e("ros2:rclcpp_timer_link_node", &[("timer_handle", P), ("node_handle", P)]),
        e("ros2:callback_start", &[("callback", P), ("is_intra_process", I32)]),
        e("ros2:callback_end", &[("callback", P)]),
        e("ros2:rclcpp_publish", &[("message", P)]),
        e("ros2:rcl_publish", &[("publisher_handle", P), ("message", P)]),
        e("ros2:rmw_publish", &[("rmw_publisher_handle", P), ("message", P), ("timestamp", I64)]),
        e(
            "ros2:rmw_take",
            &[("rmw_subscription_handle", P), ("message", P), ("source_timestamp", I64), ("taken", I32)],
        ),
        e(
            "ros2:rcl_service_init",
            &[("service_handle", P), ("node_handle", P), ("rmw_service_handle", P), ("service_name", S)],
        ),
        e("ros2:rclcpp_service_callback_added", &[("service_handle", P), ("callback", P)]),
        e("ros2:rmw_client_init", &[("rmw_client_handle", P), ("gid", GID)]),
        e(
            "ros2:rcl_client_init",
            &[("client_handle", P), ("node_handle", P), ("rmw_client_handle", P), ("service_name", S)],
        ),
        e("ros2:rmw_send_request", &[("rmw_client_handle", P), ("request", P), ("sequence_number", I64)]),
        e(
            "ros2:rmw_take_request",
            &[("rmw_service_handle", P), ("request", P), ("client_gid", GID), ("sequence_number", I64), ("taken", I32)],
        ),
        e(
            "ros2:rmw_send_response",
            &[
                ("rmw_service_handle", P),
                ("response", P),
                ("client_gid", GID),
                ("sequence_number", I64),
                ("timestamp", I64),
            ],
        ),
        e(
            "ros2:rmw_take_response",
            &[
                ("rmw_client_handle", P),
                ("response", P),
                ("sequence_number", I64),
                ("source_timestamp", I64),
                ("taken", I32),
            ],
        ),
        e("ros2:rclcpp_intra_publish", &[("publisher_handle", P), ("message", P)]),
        e("ros2:rclcpp_ring_buffer_enqueue", &[("buffer", P), ("index", U64), ("size", U64), ("overwritten", I32)]),
        e("ros2:rclcpp_ring_buffer_dequeue", &[("buffer", P), ("index", U64), ("size", U64)]),
        e("ros2:rcl_lifecycle_state_machine_init", &[("node_handle", P), ("state_machine", P)]),
        e("ros2:rcl_lifecycle_transition", &[("state_machine", P), ("start_label", S), ("goal_label", S)]),
        e(
            "ros2_caret:rcl_node_init",
            &[("node_handle", P), ("rmw_handle", P), ("node_name", S), ("namespace", S), ("init_timestamp", I64)],
        ),
        e("ros2_caret:caret_init", &[("clock_offset", I64), ("distribution", S)]),
    ]
}

/// Epoch offset of both traces' clocks: event time = OFFSET + clock value.
const OFFSET: i64 = 1_763_000_000_000_000_000;

struct Tr {
    ids: Vec<String>,
    evs: Vec<(u64, i32, Vec<u8>, u32)>,
}

impl Tr {
    fn new() -> Tr {
        Tr { ids: events().into_iter().map(|e| e.name).collect(), evs: Vec::new() }
    }
    /// Records event `name` at clock `ts` on thread `tid` with payload `p`.
    fn ev(&mut self, ts: u64, tid: i32, name: &str, p: &mut Payload) {
        let id = self.ids.iter().position(|n| n == name).unwrap_or_else(|| panic!("{name}")) as u32;
        self.evs.push((ts, tid, std::mem::take(&mut p.bytes), id));
    }
    fn write(mut self, dir: &Path, vpid: i32, procname: &[u8]) {
        let d = TraceDecl {
            clock_uuid: [7; 16],
            uuid: [vpid as u8; 16],
            clock_offset_ns: OFFSET,
            env: vec![("hostname".into(), "synthetic".into())],
            events: events(),
        };
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("metadata"), packetize_metadata(&metadata_text(&d), &d.uuid)).unwrap();
        self.evs.sort_by_key(|e| e.0);
        let f = std::fs::File::create(dir.join("channel0_0")).unwrap();
        let mut w = StreamWriter::new(f, d.uuid, 0, 0, 8192);
        for (ts, tid, p, id) in &self.evs {
            w.event(*id, *ts, vpid, *tid, procname, p).unwrap();
        }
        w.finish().unwrap();
    }
}

fn p() -> Payload {
    Payload::new()
}

const G_PUB: [u8; 16] = [1; 16];
const G_SUB: [u8; 16] = [2; 16];
const G_CLIENT: [u8; 16] = [3; 16];
/// Source timestamp of the k-th /chatter message.
fn src(k: u64) -> i64 {
    OFFSET + 10_000 + k as i64 * 1_000_000 + 3_000
}

/// Source timestamp of the k-th /lossy message.
fn lossy(k: u64) -> i64 {
    OFFSET + 5_000_500 + k as i64 * 100_000
}

fn build(root: &Path) {
    // Process A: talker, publishes /chatter from a 1 ms timer, calls /add.
    let mut a = Tr::new();
    a.ev(1_000, 100, "ros2:rcl_init", p().u64(0x1).string(b"8.10.1"));
    a.ev(1_100, 100, "ros2:rcl_node_init", p().u64(0x10).u64(0x11).string(b"talker").string(b"/"));
    a.ev(1_200, 100, "ros2:rmw_publisher_init", p().u64(0x20).u8_array(&G_PUB, 16));
    a.ev(1_300, 100, "ros2:rcl_publisher_init", p().u64(0x30).u64(0x10).u64(0x20).string(b"/chatter").u64(10));
    a.ev(1_400, 100, "ros2:rcl_timer_init", p().u64(0x40).i64(1_000_000));
    a.ev(1_500, 100, "ros2:rclcpp_timer_callback_added", p().u64(0x40).u64(0x50));
    a.ev(1_600, 100, "ros2:rclcpp_timer_link_node", p().u64(0x40).u64(0x10));
    a.ev(1_700, 100, "ros2:rclcpp_callback_register", p().u64(0x50).string(b"void (Talker::?)()"));
    a.ev(1_800, 100, "ros2:rcl_lifecycle_state_machine_init", p().u64(0x10).u64(0x80));
    a.ev(1_900, 100, "ros2:rcl_lifecycle_transition", p().u64(0x80).string(b"unconfigured").string(b"configuring"));
    for k in 0..5u64 {
        let t0 = 10_000 + k * 1_000_000;
        a.ev(t0, 100, "ros2:callback_start", p().u64(0x50).i32(0));
        a.ev(t0 + 1_000, 100, "ros2:rclcpp_publish", p().u64(0x60 + k));
        a.ev(t0 + 2_000, 100, "ros2:rcl_publish", p().u64(0x30).u64(0x60 + k));
        a.ev(t0 + 2_500, 100, "ros2:rmw_publish", p().u64(0x20).u64(0x60 + k).i64(src(k)));
        a.ev(t0 + 200_000, 100, "ros2:callback_end", p().u64(0x50));
    }
    // The node and publisher addresses are reused by new objects.
    a.ev(6_000_000, 100, "ros2:rcl_node_init", p().u64(0x10).u64(0x12).string(b"talker2").string(b"/ns"));
    a.ev(6_000_100, 100, "ros2:rcl_publisher_init", p().u64(0x30).u64(0x10).u64(0x22).string(b"/other").u64(5));
    a.ev(6_100_000, 100, "ros2:rcl_publish", p().u64(0x30).u64(0x99));
    // Client of /add.
    a.ev(6_500_000, 100, "ros2:rmw_client_init", p().u64(0x71).u8_array(&G_CLIENT, 16));
    a.ev(6_500_100, 100, "ros2:rcl_client_init", p().u64(0x70).u64(0x10).u64(0x71).string(b"/add"));
    a.ev(7_000_000, 101, "ros2:rmw_send_request", p().u64(0x71).u64(0x72).i64(1));
    a.ev(7_500_000, 101, "ros2:rmw_take_response", p().u64(0x71).u64(0x73).i64(1).i64(OFFSET + 7_300_000).i32(1));
    // /lossy: three messages from thread 104; the listener takes the first and the last.
    a.ev(2_000, 104, "ros2:rmw_publisher_init", p().u64(0x24).u8_array(&[4; 16], 16));
    a.ev(2_100, 104, "ros2:rcl_publisher_init", p().u64(0x34).u64(0x10).u64(0x24).string(b"/lossy").u64(1));
    for k in 0..3u64 {
        let t0 = 5_000_000 + k * 100_000;
        a.ev(t0, 104, "ros2:rcl_publish", p().u64(0x34).u64(0xC0 + k));
        a.ev(t0 + 1_000, 104, "ros2:rmw_publish", p().u64(0x24).u64(0xC0 + k).i64(lossy(k)));
    }
    // A run that never ends.
    a.ev(9_000_000, 100, "ros2:callback_start", p().u64(0x50).i32(0));
    a.write(&root.join("a/ust/pid/talker-100/64-bit"), 100, b"talker");

    // Process B: listener on /chatter, server of /add, intra-process /intra, CARET replays.
    let mut b = Tr::new();
    b.ev(1_000, 200, "ros2:rcl_init", p().u64(0x1).string(b"8.10.1"));
    b.ev(1_050, 200, "ros2_caret:caret_init", p().i64(50).string(b"rolling"));
    b.ev(1_100, 200, "ros2:rcl_node_init", p().u64(0x10).u64(0x11).string(b"listener").string(b"/"));
    // The same initialization replayed by CARET later, with the original time.
    b.ev(
        8_000_000,
        200,
        "ros2_caret:rcl_node_init",
        p().u64(0x10).u64(0x11).string(b"listener").string(b"/").i64(1_100 - 50),
    );
    b.ev(1_200, 200, "ros2:rmw_subscription_init", p().u64(0x21).u8_array(&G_SUB, 16));
    b.ev(1_300, 200, "ros2:rcl_subscription_init", p().u64(0x31).u64(0x10).u64(0x21).string(b"/chatter").u64(10));
    // Callback added before the rclcpp subscription is recorded: the order must not matter.
    b.ev(1_350, 200, "ros2:rclcpp_subscription_callback_added", p().u64(0x32).u64(0x51));
    b.ev(1_400, 200, "ros2:rclcpp_subscription_init", p().u64(0x31).u64(0x32));
    b.ev(1_500, 200, "ros2:rclcpp_callback_register", p().u64(0x51).string(b"Listener::on_msg"));
    for k in 0..5u64 {
        let t0 = 10_000 + k * 1_000_000 + 50_000;
        b.ev(t0, 200, "ros2:rmw_take", p().u64(0x21).u64(0x90).i64(src(k)).i32(1));
        b.ev(t0 + 1_000, 200, "ros2:callback_start", p().u64(0x51).i32(0));
        b.ev(t0 + 101_000, 200, "ros2:callback_end", p().u64(0x51));
    }
    // /lossy, message 1 dropped; /bag, whose publisher is not traced.
    b.ev(2_200, 204, "ros2:rmw_subscription_init", p().u64(0x25).u8_array(&[5; 16], 16));
    b.ev(2_300, 204, "ros2:rcl_subscription_init", p().u64(0x3A).u64(0x10).u64(0x25).string(b"/lossy").u64(1));
    b.ev(2_400, 204, "ros2:rmw_subscription_init", p().u64(0x26).u8_array(&[6; 16], 16));
    b.ev(2_500, 204, "ros2:rcl_subscription_init", p().u64(0x3B).u64(0x10).u64(0x26).string(b"/bag").u64(1));
    for k in [0u64, 2] {
        b.ev(5_050_000 + k * 100_000, 204, "ros2:rmw_take", p().u64(0x25).u64(0x91).i64(lossy(k)).i32(1));
    }
    b.ev(5_600_000, 204, "ros2:rmw_take", p().u64(0x26).u64(0x92).i64(OFFSET + 5_590_000).i32(1));
    b.ev(5_700_000, 204, "ros2:rmw_take", p().u64(0x26).u64(0x92).i64(OFFSET + 5_690_000).i32(1));
    // A message whose publication is not in the trace.
    b.ev(5_500_000, 200, "ros2:rmw_take", p().u64(0x21).u64(0x90).i64(OFFSET - 1_000).i32(1));
    b.ev(5_500_500, 200, "ros2:rmw_take", p().u64(0x21).u64(0x90).i64(0).i32(0));
    // Server of /add.
    b.ev(2_000, 200, "ros2:rcl_service_init", p().u64(0x35).u64(0x10).u64(0x36).string(b"/add"));
    b.ev(2_100, 200, "ros2:rclcpp_service_callback_added", p().u64(0x35).u64(0x52));
    b.ev(7_100_000, 202, "ros2:rmw_take_request", p().u64(0x36).u64(0x37).u8_array(&G_CLIENT, 16).i64(1).i32(1));
    b.ev(7_100_500, 202, "ros2:callback_start", p().u64(0x52).i32(0));
    b.ev(7_290_000, 202, "ros2:callback_end", p().u64(0x52));
    b.ev(
        7_300_000,
        202,
        "ros2:rmw_send_response",
        p().u64(0x36).u64(0x38).u8_array(&G_CLIENT, 16).i64(1).i64(OFFSET + 7_300_000),
    );
    // Intra-process: publish on 201, ring buffer slot 3, callback on 203.
    b.ev(3_000, 200, "ros2:rcl_publisher_init", p().u64(0x33).u64(0x10).u64(0x23).string(b"/intra").u64(1));
    b.ev(3_100, 200, "ros2:rcl_subscription_init", p().u64(0x34).u64(0x10).u64(0x24).string(b"/intra").u64(1));
    b.ev(3_200, 200, "ros2:rclcpp_subscription_init", p().u64(0x34).u64(0x39));
    b.ev(3_300, 200, "ros2:rclcpp_subscription_callback_added", p().u64(0x39).u64(0x53));
    b.ev(8_500_000, 201, "ros2:rclcpp_intra_publish", p().u64(0x33).u64(0xA0));
    b.ev(8_500_100, 201, "ros2:rclcpp_ring_buffer_enqueue", p().u64(0xB0).u64(3).u64(1).i32(0));
    b.ev(8_600_000, 203, "ros2:rclcpp_ring_buffer_dequeue", p().u64(0xB0).u64(3).u64(0));
    b.ev(8_600_100, 203, "ros2:callback_start", p().u64(0x53).i32(1));
    b.ev(8_650_100, 203, "ros2:callback_end", p().u64(0x53));
    b.write(&root.join("b/ust/pid/listener-200/64-bit"), 200, b"listener");
}

fn analyze() -> rostrace_analysis::Analysis {
    let tmp = rostrace_testkit::TempDir::new("synthetic");
    let root: PathBuf = tmp.join("trace");
    build(&root);
    let (set, errors) = rostrace_ctf::TraceSet::open(&[&root]);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(set.traces.len(), 2);
    rostrace_analysis::analyze_traces(&set, |_, _| {})
}

#[test]
fn model_keys_by_process_address_and_time() {
    let a = analyze();
    let names: Vec<(&str, i64)> = a.report.nodes.iter().map(|n| (n.name.as_ref(), n.vpid)).collect();
    // Same address 0x10 in both processes; reused in A by talker2; CARET replay deduplicated.
    assert_eq!(names, [("/listener", 200), ("/ns/talker2", 100), ("/talker", 100)]);
    let talker = a.report.nodes.iter().find(|n| &*n.name == "/talker").unwrap();
    assert_eq!(talker.publishes, ["/chatter".into(), "/lossy".into()]);
    assert_eq!(talker.timers_ns, [1_000_000]);
    let talker2 = a.report.nodes.iter().find(|n| &*n.name == "/ns/talker2").unwrap();
    assert_eq!(talker2.publishes, ["/other".into()]);
    assert_eq!(talker2.clients, ["/add"]);
    let listener = a.report.nodes.iter().find(|n| &*n.name == "/listener").unwrap();
    assert_eq!(listener.subscribes, ["/bag", "/chatter", "/intra", "/lossy"].map(Into::into));
    assert_eq!(listener.services, ["/add"]);
    // CARET's replayed node keeps its original time, corrected with caret_init.
    let node = a.model.nodes.items.iter().find(|n| &*n.name == "listener").unwrap();
    assert_eq!(node.created_ns, OFFSET + 1_100);
    assert_eq!(a.report.lifecycle_transitions.len(), 1);
    assert_eq!(a.report.lifecycle_transitions[0].node, "/talker");
    let other = a.report.topics.iter().find(|t| &*t.name == "/other").unwrap();
    assert_eq!(other.publishes, 1);
}

#[test]
fn callbacks_periods_and_unfinished_runs() {
    let a = analyze();
    let timer = a.report.callbacks.iter().find(|c| c.address == 0x50).unwrap();
    assert_eq!(timer.kind, "timer");
    assert_eq!(&*timer.node, "/talker");
    assert_eq!(timer.count, 5);
    assert_eq!(timer.unfinished, 1);
    assert_eq!(timer.duration_ns.mean, 200_000.0);
    assert_eq!(timer.duration_ns.std, 0.0);
    // Starts at 0.01, 1.01, ... 4.01 ms and the unfinished one at 9 ms: periods 1 ms and 4.99 ms.
    assert_eq!(timer.period_ns.count, 5);
    assert_eq!(timer.period_ns.p50, 1_000_000);
    let j = timer.jitter_ns.as_ref().unwrap();
    assert_eq!((j.min, j.max), (0, 3_990_000));
    let sub = a.report.callbacks.iter().find(|c| c.address == 0x51).unwrap();
    assert_eq!((sub.kind, sub.node.as_ref(), sub.topic.as_deref()), ("subscription", "/listener", Some("/chatter")));
    assert_eq!(&*sub.symbol, "Listener::on_msg");
    assert_eq!((sub.count, sub.duration_ns.mean as i64), (5, 100_000));
    let srv = a.report.callbacks.iter().find(|c| c.address == 0x52).unwrap();
    assert_eq!((srv.kind, srv.count, srv.duration_ns.max), ("service", 1, 189_500));
    let intra = a.report.callbacks.iter().find(|c| c.address == 0x53).unwrap();
    assert_eq!((intra.intra_process, intra.count), (1, 1));
    assert!(a.report.warnings.iter().any(|w| w.contains("without ending")));
    // Time shares: all callback time = 5*200us + 5*100us + 189.5us + 50us.
    let total: i64 = a.report.per_process.iter().map(|p| p.callback_ns).sum();
    assert_eq!(total, 1_000_000 + 500_000 + 189_500 + 50_000);
    let threads: Vec<(i64, i64)> = a.report.per_thread.iter().map(|t| (t.vtid.unwrap(), t.callback_ns)).collect();
    assert_eq!(threads, [(100, 1_000_000), (200, 500_000), (202, 189_500), (203, 50_000)]);
}

#[test]
fn flows_across_traces_and_intra_process() {
    let a = analyze();
    let chatter = a.report.topics.iter().find(|t| &*t.name == "/chatter").unwrap();
    assert_eq!((chatter.publishes, chatter.takes, chatter.matched, chatter.unmatched), (5, 6, 5, 1));
    assert_eq!(chatter.by_source_timestamp, 5);
    // publish (rclcpp_publish at t0+1us) → take (t0+50us): 49 us; → callback start: 50 us.
    assert_eq!((chatter.pub_to_take_ns.min, chatter.pub_to_take_ns.max), (49_000, 49_000));
    assert_eq!(chatter.pub_to_callback_ns.p50, 50_000);
    assert_eq!(chatter.take_to_callback_ns.p50, 1_000);
    assert_eq!(chatter.pairs.len(), 1);
    assert_eq!(
        (chatter.pairs[0].publisher_node.as_ref(), chatter.pairs[0].subscription_node.as_ref()),
        ("/talker", "/listener")
    );
    let intra = a.report.topics.iter().find(|t| &*t.name == "/intra").unwrap();
    assert_eq!((intra.matched, intra.intra_process), (1, 1));
    assert_eq!(intra.pub_to_callback_ns.p50, 100_100);
    for f in &a.flows {
        let pb = &a.pubs[f.publication as usize].publication;
        let tk = &a.takes[f.take as usize].take;
        match f.by {
            MatchBy::SourceTimestamp => assert_eq!(pb.source_ts(), Some(tk.source_ts)),
            MatchBy::IntraProcess => assert_eq!(pb.ring, Some((0xB0, 3))),
            MatchBy::PublishWindow => panic!("Jazzy+ traces carry the source timestamp"),
        }
    }
    // /chatter's 5 and /intra's 1, /lossy's 2; unmatched: /chatter's 1 and /bag's 2.
    assert_eq!((a.report.flows_matched, a.report.flows_unmatched), (8, 3));
}

#[test]
fn service_requests_and_responses() {
    let a = analyze();
    assert_eq!(a.report.services.len(), 1);
    let s = &a.report.services[0];
    assert_eq!((s.name.as_ref(), s.server_node.as_str(), s.server_vpid), ("/add", "/listener", 200));
    assert_eq!((s.requests_sent, s.requests_served, s.responses_received), (1, 1, 1));
    assert_eq!((s.requests_matched, s.responses_matched), (1, 1));
    assert_eq!(s.request_ns.p50, 100_000);
    assert_eq!(s.service_ns.p50, 200_000);
    assert_eq!(s.response_ns.p50, 200_000);
    assert_eq!(s.round_trip_ns.p50, 500_000);
}

fn reasons(t: &rostrace_analysis::TopicReport) -> Vec<(String, u64)> {
    t.unmatched_reasons.iter().map(|r| (r.reason.to_string(), r.count)).collect()
}

#[test]
fn unmatched_reasons_and_drops() {
    let a = analyze();
    let topic = |n: &str| a.report.topics.iter().find(|t| &*t.name == n).unwrap();
    // The /chatter take whose source timestamp is before the trace.
    assert_eq!(reasons(topic("/chatter")), [("published before the trace (or window) began".to_string(), 1)]);
    assert_eq!(topic("/chatter").dropped, Some(0));
    let bag = topic("/bag");
    assert_eq!((bag.publishes, bag.takes, bag.matched, bag.unmatched), (0, 2, 0, 2));
    assert_eq!(bag.unmatched_reasons.len(), 1);
    assert!(bag.unmatched_reasons[0].reason.starts_with("publisher not traced"), "{:?}", bag.unmatched_reasons);
    assert_eq!(bag.unmatched_reasons[0].count, 2);
    // Nobody took a /bag message that was published in the trace: drops are unknowable.
    assert_eq!(bag.dropped, None);
    let lossy = topic("/lossy");
    assert_eq!((lossy.publishes, lossy.takes, lossy.matched, lossy.unmatched), (3, 2, 2, 0));
    assert_eq!(lossy.dropped, Some(1));
    // Intra-process topics and topics without takes: not knowable.
    assert_eq!(topic("/other").dropped, None);
}

#[test]
fn notes_say_what_is_missing() {
    let a = analyze();
    let metrics: Vec<&str> = a.report.notes.iter().map(|n| n.metric.as_str()).collect();
    // Both processes record rmw_take/rmw_publish, callbacks, timers and Kilted's service events:
    // nothing is missing but the distribution (both have rcl_init with a version: none).
    assert!(metrics.is_empty(), "{metrics:?}");
    let procs: Vec<(&str, &str, i64)> =
        a.report.processes.iter().map(|p| (p.procname.as_str(), p.host.as_str(), p.vpid)).collect();
    assert_eq!(procs, [("talker", "synthetic", 100), ("listener", "synthetic", 200)]);
}

#[test]
fn time_window() {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let root: PathBuf = std::env::temp_dir().join(format!("rostrace-synthetic-window-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    build(&root);
    let (set, _) = rostrace_ctf::TraceSet::open(&[&root]);
    // The first event is at clock 1 us: 1.5 ms to 3.5 ms after it holds the timer's runs 2 and 3.
    let w = rostrace_analysis::Window {
        begin: Some(rostrace_analysis::Bound::Relative(1_500_000)),
        end: Some(rostrace_analysis::Bound::Relative(3_500_000)),
    };
    let a = rostrace_analysis::analyze_window(&set, w, |_, _| {});
    let abs = rostrace_analysis::Window {
        begin: Some(rostrace_analysis::Bound::Absolute(OFFSET + 1_501_000)),
        end: Some(rostrace_analysis::Bound::Absolute(OFFSET + 3_501_000)),
    };
    let b = rostrace_analysis::analyze_window(&set, abs, |_, _| {});
    let _ = std::fs::remove_dir_all(&root);
    assert_eq!(a.report.window_ns, Some((OFFSET + 1_501_000, OFFSET + 3_501_000)));
    let timer = a.report.callbacks.iter().find(|c| c.address == 0x50).unwrap();
    // Initialization events before the window still declare the timer and its node.
    assert_eq!((timer.kind, timer.node.as_ref(), timer.count), ("timer", "/talker", 2));
    let chatter = a.report.topics.iter().find(|t| &*t.name == "/chatter").unwrap();
    assert_eq!((chatter.publishes, chatter.takes, chatter.matched), (2, 2, 2));
    assert_eq!(a.report.begin_ns, Some(OFFSET + 2_010_000));
    assert_eq!(b.report.window_ns, a.report.window_ns);
    assert_eq!(b.report.events, a.report.events);
}
