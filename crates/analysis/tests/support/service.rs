//! A system whose node asks a service in the middle of a path, simulated event by event with
//! Kilted's events, with its own log of which messages made it to the sink: `/sensor`
//! -/scan-> `/planner` -/cmd-> `/actuator`, where `/planner`'s `/scan` callback sends a request
//! to `/map/query` (served by `/map`) and publishes `/cmd` once the response comes back.
#![allow(dead_code)]

use super::system::{Sys, MS, OFFSET};
use rostrace_ctf::write::Payload;
use std::path::Path;

/// How the node takes the response: in a callback run of the client's (rclpy's instrumentation
/// records one), or with no run around it (rclcpp and `rostrace_ros2` record none).
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Response {
    InCallback,
    NoRun,
}

/// The simulation's log: per `/scan` message, its publication and, when the command made from it
/// reached the actuator, the actuator's callback start (from the trace's start, ns).
pub struct Log {
    pub scans: Vec<(u64, Option<u64>)>,
    /// The `/cmd` messages the planner's timer publishes on the response's thread (none of a
    /// path's records).
    pub heartbeats: usize,
}

/// `/sensor` -/scan-> `/planner` -/cmd-> `/actuator`, 10 ms apart for `cycles`; `/planner`'s
/// `/scan` callback asks `/map/query` (served by `/map`) and publishes `/cmd` when the response
/// comes back; every fifth response is never sent. A timer of `/planner` on the response's
/// thread publishes `/cmd` too, every 25 ms.
pub fn write(dir: &Path, how: Response, cycles: u64) -> Log {
    let mut s = Sys::kilted();
    let sensor = s.node("sensor");
    let timer = s.timer(sensor, 10 * MS);
    let scan = s.publisher(sensor, "/scan");
    let planner = s.node("planner");
    let scan_sub = s.subscription(planner, "/scan");
    let cmd = s.publisher(planner, "/cmd");
    let heartbeat = s.timer(planner, 25 * MS);
    let (client, response_cb) = match how {
        Response::InCallback => {
            let (c, cb) = s.client_with_callback(planner, "/map/query");
            (c, Some(cb))
        }
        Response::NoRun => (s.client(planner, "/map/query"), None),
    };
    let map = s.node("map");
    let (service, serve_cb) = s.service(map, "/map/query");
    let actuator = s.node("actuator");
    let cmd_sub = s.subscription(actuator, "/cmd");
    let mut log = Log { scans: Vec::new(), heartbeats: 0 };
    for i in 0..cycles {
        let t0 = MS + i * 10 * MS;
        s.run(10, timer, t0, t0 + 20_000);
        let src = s.publish(10, scan, t0 + 5_000);
        s.deliver(20, scan_sub, src, t0 + 300_000, 200_000);
        // The request, sent during the /scan callback's run (from t0 + 300 µs for 200 µs).
        let seq = i as i64 + 1;
        s.ev(t0 + 450_000, 20, "ros2:rmw_send_request", Payload::new().u64(client.0).u64(0xD000).i64(seq));
        let take = t0 + 700_000;
        let mut p = Payload::new();
        p.u64(service).u64(0xD100).u8_array(&client.1, client.1.len()).i64(seq).i32(1);
        s.ev(take, 30, "ros2:rmw_take_request", &mut p);
        let serve = 300_000 + (i % 7) * 100_000;
        s.run(30, serve_cb, take + 100_000, take + 100_000 + serve);
        if i % 5 == 3 {
            log.scans.push((t0 + 5_000, None));
            continue;
        }
        let sent = take + 150_000 + serve;
        let src = OFFSET + sent as i64;
        let mut p = Payload::new();
        p.u64(service).u64(0xD200).u8_array(&client.1, client.1.len()).i64(seq).i64(src);
        s.ev(sent, 30, "ros2:rmw_send_response", &mut p);
        let taken = sent + 200_000;
        s.ev(taken, 21, "ros2:rmw_take_response", Payload::new().u64(client.0).u64(0xD300).i64(seq).i64(src).i32(1));
        if let Some(cb) = response_cb {
            s.run(21, cb, taken + 50_000, taken + 400_000);
        }
        let out = s.publish(21, cmd, taken + 200_000);
        s.deliver(40, cmd_sub, out, taken + 500_000, 50_000);
        // The actuator's callback starts 100 ns after its take.
        log.scans.push((t0 + 5_000, Some(taken + 500_100)));
    }
    // The heartbeat: on the response's thread, published in its own run, at times no response is
    // taken around.
    let mut t = 7 * MS + 500_000;
    while t < cycles * 10 * MS {
        s.run(21, heartbeat, t, t + 100_000);
        let out = s.publish(21, cmd, t + 20_000);
        s.deliver(40, cmd_sub, out, t + 300_000, 50_000);
        log.heartbeats += 1;
        t += 25 * MS;
    }
    s.write(dir);
    log
}
