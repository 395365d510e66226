//! Service calls inside a path: a node whose subscription callback asks a service, and whose
//! output is published once the response comes back, is crossed through the call (request, the
//! server's callback, response), found from the trace alone and followed message by message;
//! checked against the simulated system's own log.

use rostrace_analysis::paths::{Architecture, Context, PathIndex, PathOptions, ServiceHop};
use rostrace_analysis::Analysis;
use rostrace_ctf::write::Payload;
use std::path::Path;
#[path = "support/service.rs"]
mod service;
#[path = "support/system.rs"]
mod system;
use service::Response;
use system::{spec, Sys, MS, OFFSET};

fn analyze(dir: &Path) -> Analysis {
    let (set, errors) = rostrace_ctf::TraceSet::open(&[dir]);
    assert!(errors.is_empty(), "{errors:?}");
    rostrace_analysis::analyze_traces(&set, |_, _| {})
}

#[test]
fn a_service_call_inside_a_path_is_found_and_followed_as_the_log_says() {
    for how in [Response::InCallback, Response::NoRun] {
        let tmp = rostrace_testkit::TempDir::new("service-links");
        let log = service::write(&tmp, how, 60);
        let a = analyze(&tmp);
        let arch = Architecture::from_analysis(&a);
        // The planner's node path goes through the call, found from the trace alone.
        let planner = &arch.nodes[arch.node("/planner").unwrap()];
        let p = planner.path("/scan", "/cmd").unwrap();
        assert_eq!(p.source, "service call", "{how:?}");
        assert_eq!(p.context, Context::CallbackChain, "{how:?}");
        assert_eq!(
            p.service,
            Some(ServiceHop { service: "/map/query".into(), servers: vec!["/map".into()] }),
            "{how:?}"
        );

        let path = spec(&["/sensor", "/planner", "/actuator"], &["/scan", "/cmd"]);
        let r = PathIndex::new(&a).records(&arch, &path, PathOptions::default()).unwrap();
        assert_eq!(
            r.columns[4..8],
            [
                "/map/query/send_request_timestamp/0",
                "/map/service_callback_0/callback_start_timestamp/0",
                "/map/query/send_response_timestamp/0",
                "/map/query/take_response_timestamp/0",
            ],
            "{how:?}: {:?}",
            r.columns
        );
        // One record per /scan message: those whose command reached the actuator equal the log,
        // to the nanosecond; the others stop at the server's callback.
        assert_eq!(r.rows.len(), log.scans.len(), "{how:?}");
        for (row, &(scan, end)) in r.rows.iter().zip(&log.scans) {
            assert_eq!(row[0], Some(OFFSET + scan as i64), "{how:?}");
            match end {
                Some(end) => assert_eq!(row.last().copied().flatten(), Some(OFFSET + end as i64), "{how:?}: {row:?}"),
                None => {
                    assert!(row[5].is_some() && row[6].is_none(), "{how:?}: {row:?}");
                    assert!(row[7..].iter().all(Option::is_none), "{how:?}: {row:?}");
                }
            }
        }
        let expected: Vec<i64> = log.scans.iter().filter_map(|&(s, e)| Some(e? as i64 - s as i64)).collect();
        let got: Vec<i64> = r.latencies().iter().map(|&(_, l)| l).collect();
        assert_eq!(got, expected, "{how:?}");
        assert_eq!(got.len(), 48, "{how:?}");
        // The segments name the call.
        let names: Vec<(&str, &str)> = r.segments.iter().map(|s| (s.name.as_str(), s.kind)).collect();
        assert!(names.contains(&("/map/query request", "service")), "{names:?}");
        assert!(names.contains(&("/map/service_callback_0", "node")), "{names:?}");
        assert!(log.heartbeats > 20);
    }
}

#[test]
fn without_the_request_in_the_inputs_run_the_pair_is_not_a_service_call() {
    // The same system whose planner sends its requests from a timer: its /scan callback asks
    // nothing, so /scan -> /cmd is no service call (the latest message, inferred).
    let tmp = rostrace_testkit::TempDir::new("service-timer");
    let mut s = Sys::kilted();
    let planner = s.node("planner");
    let scan_sub = s.subscription(planner, "/scan");
    let cmd = s.publisher(planner, "/cmd");
    let tick = s.timer(planner, 10 * MS);
    let (client, cb) = s.client_with_callback(planner, "/map/query");
    let map = s.node("map");
    let (service, serve_cb) = s.service(map, "/map/query");
    let sensor = s.node("sensor");
    let scan = s.publisher(sensor, "/scan");
    for i in 0..10u64 {
        let t0 = MS + i * 10 * MS;
        let src = s.publish(10, scan, t0);
        s.deliver(20, scan_sub, src, t0 + 300_000, 100_000);
        s.run(20, tick, t0 + 1_000_000, t0 + 1_200_000);
        let seq = i as i64 + 1;
        s.ev(t0 + 1_100_000, 20, "ros2:rmw_send_request", Payload::new().u64(client.0).u64(1).i64(seq));
        let mut p = Payload::new();
        p.u64(service).u64(2).u8_array(&client.1, client.1.len()).i64(seq).i32(1);
        s.ev(t0 + 1_300_000, 30, "ros2:rmw_take_request", &mut p);
        s.run(30, serve_cb, t0 + 1_400_000, t0 + 1_500_000);
        let src = OFFSET + (t0 + 1_600_000) as i64;
        let mut p = Payload::new();
        p.u64(service).u64(3).u8_array(&client.1, client.1.len()).i64(seq).i64(src);
        s.ev(t0 + 1_600_000, 30, "ros2:rmw_send_response", &mut p);
        s.ev(
            t0 + 1_700_000,
            21,
            "ros2:rmw_take_response",
            Payload::new().u64(client.0).u64(4).i64(seq).i64(src).i32(1),
        );
        s.run(21, cb, t0 + 1_800_000, t0 + 2_000_000);
        s.publish(21, cmd, t0 + 1_900_000);
    }
    s.write(&tmp);
    let a = analyze(&tmp);
    let arch = Architecture::from_analysis(&a);
    let p = arch.nodes[arch.node("/planner").unwrap()].path("/scan", "/cmd").unwrap();
    assert_eq!((p.context, &p.service), (Context::UseLatestMessage, &None), "{p:?}");
}
