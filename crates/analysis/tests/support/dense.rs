//! A densely connected synthetic system: nodes each subscribing to many others' topics (every
//! other node's: a clique, as `/tf` or `/diagnostics` make), sources whose timers feed it,
//! sinks it feeds, and optionally a sink nothing in it reaches. Messages go every way, round
//! after round, so the paths can be followed. Shared by the dense path tests and the path
//! benchmark (both include `support/system.rs` as the crate's `system` module).
#![allow(dead_code)]

use crate::system::{Sub, Sys, MS};
use std::path::Path;

/// The shape of the system.
#[derive(Debug, Clone, Copy)]
pub struct Dense {
    /// Nodes of the dense part: `/n000`, `/n001`, ..., node j publishing `/d<j>`.
    pub nodes: usize,
    /// Node j subscribes to the topics of the `fan_in` nodes after it (j + 1, ..., j + fan_in,
    /// modulo `nodes`): `nodes - 1` makes a clique.
    pub fan_in: usize,
    /// Sources `/src<k>`, whose timer publishes `/s<k>`, taken by node k * nodes / sources.
    pub sources: usize,
    /// Sinks `/sink<k>`, taking (and publishing nothing) the topic of node
    /// nodes - 1 - k * nodes / sinks.
    pub sinks: usize,
    /// Also a sink `/lonely` of `/orphan`, which only `/idle` publishes (never, and nothing
    /// reaches `/idle`): no path of the dense part ends there.
    pub lonely: bool,
    /// Rounds of messages: in each, every node takes the message each of its inputs published
    /// in the round before, and publishes once, in the callback of one input (in turn: a round
    /// more than a node's inputs makes each of its subscription callbacks publish, none a sink).
    pub rounds: usize,
}

/// Time between two callback runs of one node in a round.
const SLOT: u64 = 2_000;

impl Dense {
    /// Node j's name.
    pub fn node(j: usize) -> String {
        format!("/n{j:03}")
    }

    /// The node a source feeds, and the node a sink takes from.
    pub fn fed_by(&self, k: usize) -> usize {
        k * self.nodes / self.sources
    }
    pub fn feeding(&self, k: usize) -> usize {
        self.nodes - 1 - k * self.nodes / self.sinks
    }

    /// Writes the trace to `dir`.
    pub fn write(&self, dir: &Path) {
        let n = self.nodes;
        let mut s = Sys::new();
        let handles: Vec<u64> = (0..n).map(|j| s.node(&format!("n{j:03}"))).collect();
        let pubs: Vec<_> = (0..n).map(|j| s.publisher(handles[j], &format!("/d{j:03}"))).collect();
        // Inputs of node j: (the source k, or the node i) with j's subscription.
        let mut inputs: Vec<Vec<(Option<usize>, usize, Sub)>> = vec![Vec::new(); n];
        for j in 0..n {
            for d in 1..=self.fan_in {
                let i = (j + d) % n;
                let sub = s.subscription(handles[j], &format!("/d{i:03}"));
                inputs[j].push((None, i, sub));
            }
        }
        let mut sources = Vec::new();
        for k in 0..self.sources {
            let h = s.node(&format!("src{k}"));
            let timer = s.timer(h, 10 * MS);
            let p = s.publisher(h, &format!("/s{k}"));
            let j = self.fed_by(k);
            let sub = s.subscription(handles[j], &format!("/s{k}"));
            inputs[j].push((Some(k), k, sub));
            sources.push((timer, p));
        }
        let mut sinks = Vec::new();
        for k in 0..self.sinks {
            let h = s.node(&format!("sink{k}"));
            let i = self.feeding(k);
            sinks.push((i, s.subscription(h, &format!("/d{i:03}"))));
        }
        if self.lonely {
            let idle = s.node("idle");
            s.publisher(idle, "/orphan");
            let lonely = s.node("lonely");
            s.subscription(lonely, "/orphan");
        }
        let most = inputs.iter().map(Vec::len).max().unwrap_or(0) as u64;
        let window = (most + 2) * SLOT;
        let period = (n + self.sources + self.sinks + 1) as u64 * window;
        let start = |r: usize| 10 * MS + r as u64 * period;
        // Round 0: every node publishes once outside any callback (a seed); the sources on
        // their timers, after the nodes.
        let mut last: Vec<i64> =
            (0..n).map(|j| s.publish(1_000 + j as i32, pubs[j], start(0) + j as u64 * window)).collect();
        let mut last_src: Vec<i64> = Vec::new();
        let source_round = |s: &mut Sys, r: usize, last_src: &mut Vec<i64>| {
            last_src.clear();
            for (k, &(timer, p)) in sources.iter().enumerate() {
                let t = start(r) + (n + k) as u64 * window;
                s.run(6_000 + k as i32, timer, t, t + 1_000);
                last_src.push(s.publish(6_000 + k as i32, p, t + 500));
            }
        };
        source_round(&mut s, 0, &mut last_src);
        for r in 1..self.rounds {
            let mut now = Vec::with_capacity(n);
            for j in 0..n {
                let tid = 1_000 + j as i32;
                let turn = (r + j) % inputs[j].len();
                let mut published = None;
                for (q, &(src, i, sub)) in inputs[j].iter().enumerate() {
                    let t = start(r) + j as u64 * window + q as u64 * SLOT;
                    let msg = if src.is_some() { last_src[i] } else { last[i] };
                    s.deliver(tid, sub, msg, t, 1_000);
                    if q == turn {
                        published = Some(s.publish(tid, pubs[j], t + 500));
                    }
                }
                now.push(published.expect("a turn"));
            }
            for (k, &(i, sub)) in sinks.iter().enumerate() {
                let t = start(r) + (n + self.sources + k) as u64 * window;
                s.deliver(5_000 + k as i32, sub, last[i], t, 1_000);
            }
            last = now;
            source_round(&mut s, r, &mut last_src);
        }
        s.write(dir);
    }
}
