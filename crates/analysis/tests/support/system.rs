//! A synthetic ROS 2 system (one process, Jazzy's events in the catalog's layout) written with
//! the ctf writer: nodes,
//! publishers, subscriptions, timers, callback runs, publications and takes at given times.
//! Shared by the path tests and the path benchmark.
#![allow(dead_code)]

use rostrace_ctf::write::*;
use std::path::Path;

/// The trace's declaration: Jazzy's events as the tracepoint catalog lays them out (what
/// rostrace's libtracetools and upstream's record for Jazzy).
pub fn declaration() -> TraceDecl {
    let jazzy = tracetools::distro::by_name("jazzy").expect("jazzy in the catalog");
    tracetools::distro::trace_decl(jazzy, [9; 16], [7; 16], OFFSET, vec![("hostname".into(), "synthetic".into())])
}

/// Epoch offset of the trace's clock.
pub const OFFSET: i64 = 1_763_000_000_000_000_000;
pub const MS: u64 = 1_000_000;

#[derive(Clone, Copy)]
pub struct Pub {
    pub handle: u64,
    pub rmw: u64,
}

#[derive(Clone, Copy)]
pub struct Sub {
    /// rcl handle.
    pub handle: u64,
    pub rmw: u64,
    pub callback: u64,
}

/// A node of a chain: the source's timer callback, the subscription to the previous node's
/// topic, and the publisher of its own (none for the sink).
pub type Link = (Option<u64>, Option<Sub>, Option<Pub>);

/// One process (vpid 100), events in any order, written sorted.
pub struct Sys {
    decl: TraceDecl,
    evs: Vec<(u64, i32, Vec<u8>, u32)>,
    next: u64,
    init: u64,
    msg: u64,
}

impl Sys {
    pub fn new() -> Sys {
        let mut s = Sys { decl: declaration(), evs: Vec::new(), next: 0x1000, init: 100, msg: 0 };
        s.init_ev("ros2:rcl_init", Payload::new().u64(1).string(b"8.10.1"));
        s
    }
    /// A process with Kilted's events (its service events among them).
    pub fn kilted() -> Sys {
        Sys::of("kilted", "9.0.0")
    }
    /// A process with Rolling's events (the message links among them).
    pub fn rolling() -> Sys {
        Sys::of("rolling", "8.10.1")
    }
    /// A process with the events of `distro`, its `rcl_init` saying tracetools `version`.
    fn of(distro: &str, version: &str) -> Sys {
        let abi = tracetools::distro::by_name(distro).expect("the distribution in the catalog");
        let decl = tracetools::distro::trace_decl(
            abi,
            [9; 16],
            [7; 16],
            OFFSET,
            vec![("hostname".into(), "synthetic".into())],
        );
        let mut s = Sys { decl, evs: Vec::new(), next: 0x1000, init: 100, msg: 0 };
        s.init_ev("ros2:rcl_init", Payload::new().u64(1).string(version.as_bytes()));
        s
    }
    /// A message link (`periodic_async` or `partial_sync`) from the subscriptions of rcl handles
    /// `subs` to the publishers of rcl handles `pubs` (Rolling's events).
    pub fn message_link(&mut self, kind: &str, subs: &[u64], pubs: &[u64]) {
        let name = format!("ros2:message_link_{kind}");
        self.init_ev(&name, Payload::new().pointer_sequence(subs).pointer_sequence(pubs));
    }
    /// A process whose trace has no `ros2:rcl_init`.
    pub fn without_rcl_init() -> Sys {
        Sys { decl: declaration(), evs: Vec::new(), next: 0x1000, init: 100, msg: 0 }
    }
    /// The declaration, to give an event another tracer's fields.
    pub fn decl_mut(&mut self) -> &mut TraceDecl {
        &mut self.decl
    }
    pub fn ev(&mut self, ts: u64, tid: i32, name: &str, p: &mut Payload) {
        let id = self.decl.events.iter().position(|e| e.name == name).unwrap_or_else(|| panic!("{name}")) as u32;
        self.evs.push((ts, tid, std::mem::take(&mut p.bytes), id));
    }
    pub fn init_ev(&mut self, name: &str, p: &mut Payload) {
        self.init += 10;
        self.ev(self.init, 1, name, p);
    }
    /// The GID of an rmw handle, at the declared size.
    fn gid(&self, rmw: u64) -> Vec<u8> {
        let init = self.decl.events.iter().find(|e| e.name == "ros2:rmw_publisher_init").expect("rmw_publisher_init");
        match init.fields.iter().find(|f| f.name == "gid").map(|f| &f.ty) {
            Some(FieldType::U8Array(n)) => vec![rmw as u8; *n as usize],
            t => panic!("gid is {t:?}"),
        }
    }
    /// The objects declared from now on are declared from `t` (10 ns apart) rather than at the
    /// start: a node started late.
    pub fn declare_at(&mut self, t: u64) {
        self.init = t;
    }
    pub fn addr(&mut self) -> u64 {
        self.next += 0x10;
        self.next
    }
    pub fn node(&mut self, name: &str) -> u64 {
        let (h, rmw) = (self.addr(), self.addr());
        self.init_ev("ros2:rcl_node_init", Payload::new().u64(h).u64(rmw).string(name.as_bytes()).string(b"/"));
        h
    }
    pub fn publisher(&mut self, node: u64, topic: &str) -> Pub {
        let (handle, rmw) = (self.addr(), self.addr());
        let gid = self.gid(rmw);
        self.init_ev("ros2:rmw_publisher_init", Payload::new().u64(rmw).u8_array(&gid, gid.len()));
        self.init_ev(
            "ros2:rcl_publisher_init",
            Payload::new().u64(handle).u64(node).u64(rmw).string(topic.as_bytes()).u64(10),
        );
        Pub { handle, rmw }
    }
    pub fn subscription(&mut self, node: u64, topic: &str) -> Sub {
        let (h, rmw, sub, callback) = (self.addr(), self.addr(), self.addr(), self.addr());
        let gid = self.gid(rmw);
        self.init_ev("ros2:rmw_subscription_init", Payload::new().u64(rmw).u8_array(&gid, gid.len()));
        self.init_ev(
            "ros2:rcl_subscription_init",
            Payload::new().u64(h).u64(node).u64(rmw).string(topic.as_bytes()).u64(10),
        );
        self.init_ev("ros2:rclcpp_subscription_init", Payload::new().u64(h).u64(sub));
        self.init_ev("ros2:rclcpp_subscription_callback_added", Payload::new().u64(sub).u64(callback));
        self.init_ev("ros2:rclcpp_callback_register", Payload::new().u64(callback).string(b"on_message"));
        Sub { handle: h, rmw, callback }
    }
    pub fn timer(&mut self, node: u64, period: u64) -> u64 {
        let (h, callback) = (self.addr(), self.addr());
        self.init_ev("ros2:rcl_timer_init", Payload::new().u64(h).i64(period as i64));
        self.init_ev("ros2:rclcpp_timer_callback_added", Payload::new().u64(h).u64(callback));
        self.init_ev("ros2:rclcpp_timer_link_node", Payload::new().u64(h).u64(node));
        self.init_ev("ros2:rclcpp_callback_register", Payload::new().u64(callback).string(b"on_timer"));
        callback
    }
    /// A service `name` of `node` (Kilted's events): its rmw handle and callback.
    pub fn service(&mut self, node: u64, name: &str) -> (u64, u64) {
        let (h, rmw, callback) = (self.addr(), self.addr(), self.addr());
        self.init_ev("ros2:rcl_service_init", Payload::new().u64(h).u64(node).u64(rmw).string(name.as_bytes()));
        self.init_ev("ros2:rclcpp_service_callback_added", Payload::new().u64(h).u64(callback));
        (rmw, callback)
    }
    /// A client of service `name` of `node` (Kilted's events): its rmw handle and GID.
    pub fn client(&mut self, node: u64, name: &str) -> (u64, Vec<u8>) {
        let (h, rmw) = (self.addr(), self.addr());
        let gid = self.gid(rmw);
        self.init_ev("ros2:rmw_client_init", Payload::new().u64(rmw).u8_array(&gid, gid.len()));
        self.init_ev("ros2:rcl_client_init", Payload::new().u64(h).u64(node).u64(rmw).string(name.as_bytes()));
        (rmw, gid)
    }
    /// A client of service `name` of `node` whose responses a callback of its own takes, as
    /// rclpy's instrumentation records it: its rmw handle and GID, and the callback.
    pub fn client_with_callback(&mut self, node: u64, name: &str) -> ((u64, Vec<u8>), u64) {
        let (h, rmw, callback) = (self.addr(), self.addr(), self.addr());
        let gid = self.gid(rmw);
        self.init_ev("ros2:rmw_client_init", Payload::new().u64(rmw).u8_array(&gid, gid.len()));
        self.init_ev("ros2:rcl_client_init", Payload::new().u64(h).u64(node).u64(rmw).string(name.as_bytes()));
        self.init_ev("ros2:rclcpp_service_callback_added", Payload::new().u64(h).u64(callback));
        self.init_ev("ros2:rclcpp_callback_register", Payload::new().u64(callback).string(b"on_response"));
        ((rmw, gid), callback)
    }
    /// Request `seq` of `client` sent at `t` (thread 3000), taken by `service` `latency` later and
    /// served for `serve` (thread 3001), its response taken `latency` after it is sent.
    pub fn call(&mut self, client: &(u64, Vec<u8>), service: (u64, u64), seq: i64, t: u64, latency: u64, serve: u64) {
        let (c, gid) = client;
        self.ev(t, 3000, "ros2:rmw_send_request", Payload::new().u64(*c).u64(0xD000).i64(seq));
        let take = t + latency;
        let mut p = Payload::new();
        p.u64(service.0).u64(0xD100).u8_array(gid, gid.len()).i64(seq).i32(1);
        self.ev(take, 3001, "ros2:rmw_take_request", &mut p);
        self.run(3001, service.1, take + 100, take + 100 + serve);
        let sent = take + 200 + serve;
        let src = OFFSET + sent as i64;
        let mut p = Payload::new();
        p.u64(service.0).u64(0xD200).u8_array(gid, gid.len()).i64(seq).i64(src);
        self.ev(sent, 3001, "ros2:rmw_send_response", &mut p);
        self.ev(
            sent + latency,
            3000,
            "ros2:rmw_take_response",
            Payload::new().u64(*c).u64(0xD300).i64(seq).i64(src).i32(1),
        );
    }
    pub fn run(&mut self, tid: i32, callback: u64, start: u64, end: u64) {
        self.ev(start, tid, "ros2:callback_start", Payload::new().u64(callback).i32(0));
        self.ev(end, tid, "ros2:callback_end", Payload::new().u64(callback));
    }
    /// Publishes at `t` (rclcpp; rcl +100, rmw +200); returns the source timestamp.
    pub fn publish(&mut self, tid: i32, p: Pub, t: u64) -> i64 {
        self.msg += 1;
        let m = 0xF000_0000 + self.msg;
        let src = OFFSET + (t + 200) as i64;
        self.ev(t, tid, "ros2:rclcpp_publish", Payload::new().u64(m));
        self.ev(t + 100, tid, "ros2:rcl_publish", Payload::new().u64(p.handle).u64(m));
        self.ev(t + 200, tid, "ros2:rmw_publish", Payload::new().u64(p.rmw).u64(m).i64(src));
        src
    }
    /// Takes the message of `src` at `t`; the callback runs from `t + 100` for `dur`.
    pub fn deliver(&mut self, tid: i32, s: Sub, src: i64, t: u64, dur: u64) {
        self.ev(t, tid, "ros2:rmw_take", Payload::new().u64(s.rmw).u64(0xE000).i64(src).i32(1));
        self.run(tid, s.callback, t + 100, t + 100 + dur);
    }
    /// A chain of `len` nodes `{prefix}/n{k}`, each publishing `/{prefix}/t{k}` to the next;
    /// the source is driven by a timer of `period`.
    pub fn chain(&mut self, prefix: &str, len: usize, period: u64) -> Vec<Link> {
        (0..len)
            .map(|k| {
                let n = self.node(&format!("{prefix}/n{k}"));
                let sub = (k > 0).then(|| self.subscription(n, &format!("/{prefix}/t{}", k - 1)));
                let timer = (k == 0).then(|| self.timer(n, period));
                let publ = (k + 1 < len).then(|| self.publisher(n, &format!("/{prefix}/t{k}")));
                (timer, sub, publ)
            })
            .collect()
    }
    /// One message through `chain` from `t`: the source's timer runs, then each node takes the
    /// previous node's message and publishes its own, 20 µs apart; node `k` runs on `tid(k)`.
    pub fn pass(&mut self, chain: &[Link], mut t: u64, tid: impl Fn(usize) -> i32) {
        let mut src = 0;
        for (k, (timer, sub, publ)) in chain.iter().enumerate() {
            if let Some(cb) = timer {
                self.run(tid(k), *cb, t, t + 20_000);
            }
            if let Some(sub) = sub {
                self.deliver(tid(k), *sub, src, t, 10_000);
            }
            if let Some(p) = publ {
                src = self.publish(tid(k), *p, t + 1_000);
            }
            t += 20_000;
        }
    }
    /// Writes the events and analyzes them.
    pub fn analyze(self, dir: &Path) -> rostrace_analysis::Analysis {
        self.write(dir);
        let (set, errors) = rostrace_ctf::TraceSet::open(&[dir]);
        assert!(errors.is_empty(), "{errors:?}");
        rostrace_analysis::analyze_traces(&set, |_, _| {})
    }
    pub fn write(self, dir: &Path) {
        self.write_batches(dir, 8192, |_| false);
    }
    /// Writes the events so far, then those `round(s, k, t)` adds for each of `rounds` rounds, the
    /// `k`-th at `t` = 10 ms + `k` × `period` (each round's events later than the round
    /// before's), in packets of 4 KiB.
    pub fn write_rounds(self, dir: &Path, rounds: u64, period: u64, mut round: impl FnMut(&mut Sys, u64, u64)) {
        let mut k = 0;
        self.write_batches(dir, 4096, |s| {
            if k == rounds {
                return false;
            }
            round(s, k, 10 * MS + k * period);
            k += 1;
            true
        });
    }
    /// Writes the events so far, then each batch `more` adds (each one's events later than the
    /// batch before's) until it returns false, in packets of `packet` bytes: a recording of any
    /// length, in the memory of one batch.
    pub fn write_batches(mut self, dir: &Path, packet: usize, mut more: impl FnMut(&mut Sys) -> bool) {
        let d = self.decl.clone();
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("metadata"), packetize_metadata(&metadata_text(&d), &d.uuid)).unwrap();
        let f = std::fs::File::create(dir.join("channel0_0")).unwrap();
        let mut w = StreamWriter::new(f, d.uuid, 0, 0, packet);
        loop {
            self.evs.sort_by_key(|e| e.0);
            for (ts, tid, p, id) in self.evs.drain(..) {
                w.event(id, ts, 100, tid, b"system", &p).unwrap();
            }
            if !more(&mut self) {
                break;
            }
        }
        w.finish().unwrap();
    }
}

/// A path from its nodes and the topics between them.
pub fn spec(nodes: &[&str], topics: &[&str]) -> rostrace_analysis::paths::PathSpec {
    rostrace_analysis::paths::PathSpec {
        nodes: nodes.iter().map(|s| s.to_string()).collect(),
        topics: topics.iter().map(|s| s.to_string()).collect(),
    }
}
