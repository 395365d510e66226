//! A system whose nodes fuse and synchronize their inputs, simulated event by event and
//! written as a trace (Rolling's events, with [`super::system::Sys`]), with the simulation's own
//! log of which input messages each output was made from: the truth the paths found in the
//! trace are checked against.
//!
//! - `/lidar` publishes `/points` every 100 ms, `/imu_driver` `/imu` every 10 ms (each up to
//!   200 µs late), `/wheel` `/odom` every 50 ms, up to 40 ms late.
//! - `/fusion` caches the latest `/points` and `/imu`; its 50 ms timer publishes `/pose` from
//!   them (periodic async).
//! - `/sync` publishes `/cmd` once it has a new `/pose` and a new `/odom`, from whichever
//!   callback completes the pair, then waits for a new pair (partial sync): some `/pose` and
//!   `/odom` messages are overwritten before they are used.
//! - `/actuator` subscribes to `/cmd`.
//!
//! Each node runs its callbacks one at a time on its own thread; a message waits while its
//! node is busy. Messages travel 50 to 300 µs.
#![allow(dead_code)]

use super::system::{Pub, Sub, Sys, MS};
use std::path::Path;

/// Which links the nodes declare.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Declared {
    /// None: the trace has no message link.
    Nothing,
    /// `/fusion` periodic async, `/sync` partial sync.
    Links,
}

/// What the simulation did: times are the trace's (ns from its start), indexes count each
/// topic's messages in publication order.
#[derive(Debug, Default)]
pub struct Log {
    /// Publication time of each `/points`, `/imu` and `/odom` message.
    pub points: Vec<u64>,
    pub imu: Vec<u64>,
    pub odom: Vec<u64>,
    /// Each `/pose`: publication time, and the `/points` and `/imu` messages it was made from.
    pub poses: Vec<(u64, usize, usize)>,
    /// Each `/cmd`: publication time, and the `/pose` and `/odom` messages it was made from.
    pub cmds: Vec<(u64, usize, usize)>,
    /// Whether each `/cmd` was published in `/sync`'s `/pose` callback (else in its `/odom` one).
    pub in_pose_callback: Vec<bool>,
    /// Start of `/actuator`'s callback for each `/cmd` it took.
    pub actuated: Vec<(usize, u64)>,
}

impl Log {
    /// The complete records of `/lidar → /fusion → /sync → /actuator` (`via_imu`: of
    /// `/imu_driver → ...`): (first publication, latency to the actuator's callback start), in
    /// order.
    pub fn records(&self, via_imu: bool) -> Vec<(u64, u64)> {
        self.records_through(via_imu, |_| true)
    }

    /// Each `/cmd` the actuator took: its callback's start, and the age of the `/imu`, `/points`
    /// and `/odom` data in it (from their publication), by that start.
    pub fn ages(&self) -> Vec<(u64, [u64; 3])> {
        let mut out: Vec<(u64, [u64; 3])> = self
            .actuated
            .iter()
            .map(|&(i, at)| {
                let (_, pose, odom) = self.cmds[i];
                let (_, points, imu) = self.poses[pose];
                (at, [at - self.imu[imu], at - self.points[points], at - self.odom[odom]])
            })
            .collect();
        out.sort();
        out
    }

    /// [`Log::records`] through the `/cmd` messages `keep` keeps (by index).
    pub fn records_through(&self, via_imu: bool, keep: impl Fn(usize) -> bool) -> Vec<(u64, u64)> {
        let firsts = if via_imu { &self.imu } else { &self.points };
        let mut out = Vec::new();
        for (k, &t0) in firsts.iter().enumerate() {
            for (j, p) in self.poses.iter().enumerate() {
                if (if via_imu { p.2 } else { p.1 }) != k {
                    continue;
                }
                for (i, c) in self.cmds.iter().enumerate() {
                    if c.1 != j || !keep(i) {
                        continue;
                    }
                    if let Some(&(_, start)) = self.actuated.iter().find(|a| a.0 == i) {
                        out.push((t0, start - t0));
                    }
                }
            }
        }
        out.sort();
        out
    }
}

/// A small deterministic generator (xorshift).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    /// A value in `lo..hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        lo + self.0 % (hi - lo)
    }
}

/// What a node's thread does next: take a message (topic index, message index) arriving at
/// a time, or run its timer.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Work {
    Take(usize, usize),
    Timer,
}

/// The system for `secs` seconds, written to `dir`; its log.
pub fn write(dir: &Path, secs: u64, declared: Declared) -> Log {
    let mut s = Sys::rolling();
    let mut log = Log::default();
    let mut rng = Rng::new(0x5eed);
    let end = secs * 1000 * MS;
    // Nodes and endpoints.
    let (lidar, imu_n, wheel) = (s.node("lidar"), s.node("imu_driver"), s.node("wheel"));
    let (fusion, sync, act) = (s.node("fusion"), s.node("sync"), s.node("actuator"));
    let lidar_t = s.timer(lidar, 100 * MS);
    let imu_t = s.timer(imu_n, 10 * MS);
    let wheel_t = s.timer(wheel, 45 * MS);
    let points_p = s.publisher(lidar, "/points");
    let imu_p = s.publisher(imu_n, "/imu");
    let odom_p = s.publisher(wheel, "/odom");
    let f_points = s.subscription(fusion, "/points");
    let f_imu = s.subscription(fusion, "/imu");
    let f_timer = s.timer(fusion, 50 * MS);
    let pose_p = s.publisher(fusion, "/pose");
    let s_pose = s.subscription(sync, "/pose");
    let s_odom = s.subscription(sync, "/odom");
    let cmd_p = s.publisher(sync, "/cmd");
    let a_cmd = s.subscription(act, "/cmd");
    if declared == Declared::Links {
        s.message_link("periodic_async", &[f_points.handle, f_imu.handle], &[pose_p.handle]);
        s.message_link("partial_sync", &[s_pose.handle, s_odom.handle], &[cmd_p.handle]);
    }
    // Sources: a timer run, the publication 1 µs into it.
    let source = |s: &mut Sys, rng: &mut Rng, tid: i32, cb: u64, p: Pub, period: u64, jitter: u64, phase: u64| {
        let mut out = Vec::new();
        let mut t = phase;
        while t + jitter + MS < end {
            let start = t + rng.range(0, jitter);
            s.run(tid, cb, start, start + 5_000);
            let src = s.publish(tid, p, start + 1_000);
            out.push((start + 1_000, src));
            t += period;
        }
        out
    };
    // (/odom's lateness spreads its messages on either side of /pose's at /sync.)
    let points = source(&mut s, &mut rng, 11, lidar_t, points_p, 100 * MS, 200_000, MS);
    let imu = source(&mut s, &mut rng, 12, imu_t, imu_p, 10 * MS, 200_000, MS);
    let odom = source(&mut s, &mut rng, 13, wheel_t, odom_p, 45 * MS, 40 * MS, 31 * MS);
    log.points = points.iter().map(|p| p.0).collect();
    log.imu = imu.iter().map(|p| p.0).collect();
    log.odom = odom.iter().map(|p| p.0).collect();
    // A node's work in time order, one at a time on thread `tid`: `f` handles each item
    // (its start) and returns how long it ran.
    let arrivals = |rng: &mut Rng, topic: usize, msgs: &[(u64, i64)]| -> Vec<(u64, Work)> {
        msgs.iter().enumerate().map(|(i, m)| (m.0 + 200 + rng.range(50_000, 300_000), Work::Take(topic, i))).collect()
    };
    fn serve(mut work: Vec<(u64, Work)>, mut f: impl FnMut(u64, Work) -> u64) {
        work.sort();
        let mut busy = 0;
        for (at, w) in work {
            let start = at.max(busy);
            busy = start + f(start, w) + 1_000;
        }
    }
    // /fusion: caches; its timer publishes 2 µs into its run.
    let mut work = arrivals(&mut rng, 0, &points);
    work.extend(arrivals(&mut rng, 1, &imu));
    work.extend((1..end / (50 * MS)).map(|k| (k * 50 * MS + 400_000, Work::Timer)));
    let (mut cache, mut poses) = ([None::<usize>; 2], Vec::new());
    serve(work, |t, w| match w {
        Work::Take(topic, i) => {
            let (sub, src) = if topic == 0 { (f_points, points[i].1) } else { (f_imu, imu[i].1) };
            let d = rng.range(20_000, 80_000);
            s.deliver(14, sub, src, t, d);
            cache[topic] = Some(i);
            d + 100
        }
        Work::Timer => {
            let d = rng.range(100_000, 300_000);
            s.run(14, f_timer, t, t + d);
            if let [Some(p), Some(i)] = cache {
                let src = s.publish(14, pose_p, t + 2_000);
                log.poses.push((t + 2_000, p, i));
                poses.push((t + 2_000, src));
            }
            d
        }
    });
    // /sync: a new /pose and a new /odom make a /cmd, published 3 µs into the callback of the
    // one that came last.
    let mut work = arrivals(&mut rng, 0, &poses);
    work.extend(arrivals(&mut rng, 1, &odom));
    let (mut fresh, mut cmds) = ([None::<usize>; 2], Vec::new());
    serve(work, |t, w| {
        let Work::Take(topic, i) = w else { unreachable!() };
        let (sub, src): (Sub, i64) = if topic == 0 { (s_pose, poses[i].1) } else { (s_odom, odom[i].1) };
        let d = rng.range(20_000, 60_000);
        s.deliver(15, sub, src, t, d);
        fresh[topic] = Some(i);
        if let [Some(p), Some(o)] = fresh {
            let at = t + 100 + 3_000;
            let src = s.publish(15, cmd_p, at);
            log.cmds.push((at, p, o));
            log.in_pose_callback.push(topic == 0);
            cmds.push((at, src));
            fresh = [None, None];
        }
        d + 100
    });
    // /actuator.
    let work = arrivals(&mut rng, 0, &cmds);
    serve(work, |t, w| {
        let Work::Take(_, i) = w else { unreachable!() };
        s.deliver(16, a_cmd, cmds[i].1, t, 10_000);
        log.actuated.push((i, t + 100));
        10_100
    });
    s.write(dir);
    log
}
