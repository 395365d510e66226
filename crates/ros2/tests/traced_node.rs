//! Nodes built with rostrace-ros2 talk over DDS and leave the events rclcpp would: initialization
//! events that link handles, and publish/take pairs with equal source timestamps.
//! (One test: the tracer is set up once per process.)

use rostrace_ros2::{default_qos, Context, Executor};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
struct AddTwoIntsRequest {
    a: i64,
    b: i64,
}
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
struct AddTwoIntsResponse {
    sum: i64,
}
impl rostrace_ros2::ros2_client::Message for AddTwoIntsRequest {}
impl rostrace_ros2::ros2_client::Message for AddTwoIntsResponse {}

#[derive(Default, Debug)]
struct Ev {
    name: String,
    u: BTreeMap<String, u64>,
    i: BTreeMap<String, i64>,
    s: BTreeMap<String, String>,
    gid: Vec<u64>,
}

#[test]
fn traced_nodes_record_rclcpp_events() {
    let tmp = rostrace_testkit::TempDir::new("ros2");
    let root = tmp.join("session");
    std::env::set_var("ROSTRACE_SESSION_DIR", &root);
    let domain = 100 + (std::process::id() % 100) as u16;

    let ctx = Context::with_domain(domain).unwrap();
    let qos = default_qos().history(rostrace_ros2::ros2_client::qos::History::KeepLast { depth: 7 });
    let mut talker = ctx.create_node("/t", "talker").unwrap();
    let publisher = talker.create_publisher::<String>("chatter", "std_msgs/msg/String", &qos).unwrap();
    let client_side = talker.create_client::<AddTwoIntsRequest, AddTwoIntsResponse, _>(
        "/t/add",
        "example_interfaces/AddTwoInts",
        |_seq, r: AddTwoIntsResponse| assert_eq!(r.sum, 5),
    );
    let client = client_side.unwrap();
    let mut n = 0u64;
    talker
        .create_timer(Duration::from_millis(10), move || {
            n += 1;
            publisher.publish(format!("hello {n}")).unwrap();
            if n.is_multiple_of(10) {
                client.send_request(AddTwoIntsRequest { a: 2, b: 3 }).unwrap();
            }
        })
        .unwrap();
    let mut listener = ctx.create_node("/t", "listener").unwrap();
    let received = Arc::new(AtomicU64::new(0));
    let r = received.clone();
    listener
        .create_subscription("/t/chatter", "std_msgs/String", &qos, move |_m: String, _| {
            r.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    let served = Arc::new(AtomicU64::new(0));
    let s = served.clone();
    listener
        .create_service("add", "example_interfaces/srv/AddTwoInts", move |q: AddTwoIntsRequest| {
            s.fetch_add(1, Ordering::Relaxed);
            AddTwoIntsResponse { sum: q.a + q.b }
        })
        .unwrap();
    let (talker_handle, listener_handle) = (talker.handle(), listener.handle());
    let mut exec = Executor::new().unwrap();
    exec.add_node(talker).unwrap();
    exec.add_node(listener).unwrap();
    let end = Instant::now() + Duration::from_secs(20);
    while Instant::now() < end && (received.load(Ordering::Relaxed) < 30 || served.load(Ordering::Relaxed) < 2) {
        exec.spin_for(Duration::from_millis(50));
    }
    let (received, served) = (received.load(Ordering::Relaxed), served.load(Ordering::Relaxed));
    assert!(received >= 30 && served >= 2, "received {received}, served {served}");
    assert!(exec.read_errors().is_empty());
    drop(exec);

    let dir = tracetools::tracer::trace_dir().unwrap();
    tracetools::tracer::flush();
    let (set, errors) = rostrace_ctf::TraceSet::open(&[&dir]);
    assert!(errors.is_empty(), "{errors:?}");
    let mut evs = Vec::new();
    let mut it = set.events();
    while let Some(ev) = it.next() {
        let ev = ev.unwrap();
        let mut e = Ev { name: ev.name().trim_start_matches("ros2:").to_string(), ..Default::default() };
        for f in [
            "node_handle",
            "rmw_handle",
            "publisher_handle",
            "rmw_publisher_handle",
            "subscription_handle",
            "rmw_subscription_handle",
            "subscription",
            "callback",
            "timer_handle",
            "service_handle",
            "rmw_service_handle",
            "client_handle",
            "rmw_client_handle",
            "message",
            "queue_depth",
            "handle",
        ] {
            if let Some(v) = ev.field(f).and_then(|v| v.as_u64()) {
                e.u.insert(f.into(), v);
            }
        }
        for f in ["timestamp", "source_timestamp", "sequence_number", "period"] {
            if let Some(v) = ev.field(f).and_then(|v| v.as_i64()) {
                e.i.insert(f.into(), v);
            }
        }
        for f in ["node_name", "namespace", "topic_name", "symbol", "service_name"] {
            if let Some(v) = ev.field(f).and_then(|v| v.as_str().map(String::from)) {
                e.s.insert(f.into(), v);
            }
        }
        for f in ["gid", "client_gid"] {
            if let Some(a) = ev.field(f).and_then(|v| v.as_array()) {
                e.gid = a.to_u64_vec();
            }
        }
        evs.push(e);
    }
    fn all<'a>(evs: &'a [Ev], name: &'a str) -> impl Iterator<Item = &'a Ev> + 'a {
        evs.iter().filter(move |e| e.name == name)
    }
    let all = |name: &'static str| all(&evs, name);
    let one = |name: &'static str| {
        let v: Vec<&Ev> = all(name).collect();
        assert_eq!(v.len(), 1, "{name}: {v:?}");
        v[0]
    };

    assert_eq!(all("rcl_init").count(), 1);
    let nodes: Vec<(u64, &str, &str)> = all("rcl_node_init")
        .map(|e| (e.u["node_handle"], e.s["node_name"].as_str(), e.s["namespace"].as_str()))
        .collect();
    assert_eq!(nodes, [(talker_handle as u64, "talker", "/t"), (listener_handle as u64, "listener", "/t")]);

    let p = one("rcl_publisher_init");
    assert_eq!(
        (p.s["topic_name"].as_str(), p.u["queue_depth"], p.u["node_handle"]),
        ("/t/chatter", 7, talker_handle as u64)
    );
    let rmw_pub = one("rmw_publisher_init");
    assert_eq!(rmw_pub.u["rmw_publisher_handle"], p.u["rmw_publisher_handle"]);
    assert_eq!(rmw_pub.gid.len(), 16);

    let s = one("rcl_subscription_init");
    assert_eq!(
        (s.s["topic_name"].as_str(), s.u["queue_depth"], s.u["node_handle"]),
        ("/t/chatter", 7, listener_handle as u64)
    );
    let rmw_sub = s.u["rmw_subscription_handle"];
    assert_eq!(one("rmw_subscription_init").u["rmw_subscription_handle"], rmw_sub);
    let cpp = one("rclcpp_subscription_init");
    assert_eq!(cpp.u["subscription_handle"], s.u["subscription_handle"]);
    let added = one("rclcpp_subscription_callback_added");
    assert_eq!(added.u["subscription"], cpp.u["subscription"]);
    let sub_cb = added.u["callback"];
    let registered: BTreeMap<u64, &str> =
        all("rclcpp_callback_register").map(|e| (e.u["callback"], e.s["symbol"].as_str())).collect();
    // The symbol names the closure and the line of the create_subscription call.
    let sub_line =
        include_str!("traced_node.rs").lines().position(|l| l.contains("create_subscription(\"/t/chatter\"")).unwrap()
            + 1;
    assert!(registered[&sub_cb].ends_with(&format!("traced_node.rs:{sub_line})")), "{registered:?}");

    let t = one("rcl_timer_init");
    assert_eq!(t.i["period"], 10_000_000);
    assert_eq!(one("rclcpp_timer_link_node").u["node_handle"], talker_handle as u64);
    let timer_cb = one("rclcpp_timer_callback_added").u["callback"];
    assert!(registered.contains_key(&timer_cb));
    let svc = one("rcl_service_init");
    assert_eq!(svc.s["service_name"], "/t/add");
    assert!(registered.contains_key(&one("rclcpp_service_callback_added").u["callback"]));
    let cli = one("rcl_client_init");
    assert_eq!((cli.s["service_name"].as_str(), cli.u["node_handle"]), ("/t/add", talker_handle as u64));
    let cli_gid = one("rmw_client_init").gid.clone();

    // Handles are distinct.
    let mut handles = BTreeSet::new();
    for h in [
        p.u["publisher_handle"],
        p.u["rmw_publisher_handle"],
        s.u["subscription_handle"],
        rmw_sub,
        cpp.u["subscription"],
        sub_cb,
        t.u["timer_handle"],
        timer_cb,
        svc.u["service_handle"],
        svc.u["rmw_service_handle"],
        cli.u["client_handle"],
        cli.u["rmw_client_handle"],
        talker_handle as u64,
        listener_handle as u64,
    ] {
        assert!(handles.insert(h), "handle {h:#x} used twice");
    }

    // Every take has the source timestamp of one publish; each runs the subscription's callback once.
    let published: BTreeSet<i64> = all("rmw_publish").map(|e| e.i["timestamp"]).collect();
    assert_eq!(published.len(), all("rmw_publish").count(), "source timestamps are unique");
    let takes: Vec<&Ev> = all("rmw_take").filter(|e| e.u["rmw_subscription_handle"] == rmw_sub).collect();
    assert_eq!(takes.len() as u64, received);
    for tk in &takes {
        assert!(published.contains(&tk.i["source_timestamp"]), "take without its publish: {tk:?}");
    }
    assert_eq!(all("callback_start").filter(|e| e.u["callback"] == sub_cb).count() as u64, received);
    assert_eq!(all("callback_end").filter(|e| e.u["callback"] == sub_cb).count() as u64, received);
    assert!(all("rcl_publish").count() == published.len() && all("rclcpp_publish").count() == published.len());

    // Requests are taken with the client's GID and the sequence number it sent.
    let sent: BTreeSet<i64> = all("rmw_send_request").map(|e| e.i["sequence_number"]).collect();
    let taken: Vec<&Ev> = all("rmw_take_request").collect();
    assert_eq!(taken.len() as u64, served);
    for q in &taken {
        assert_eq!(q.gid, cli_gid);
        assert!(sent.contains(&q.i["sequence_number"]));
    }
    assert_eq!(all("rmw_send_response").count() as u64, served);
    // The executor's events frame the work.
    assert!(all("rclcpp_executor_execute").count() as u64 >= received + served);
    assert!(all("rclcpp_executor_wait_for_work").count() > 0);
}
