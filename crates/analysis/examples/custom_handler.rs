//! A handler of your own, end to end: how long after a callback starts does it publish?
//!
//!     cargo run --release -p rostrace-analysis --example custom_handler -- TRACE...
//!
//! It wants `rmw_publish` events (of any provider and distro: resolved once per event class),
//! reads the ROS 2 model through the context (which callback run the publishing thread is in,
//! and that run's start), and prints, per callback, the publications made during its runs and
//! the delay from the run's start to each publication. Nothing in the analysis crate changes.

use rostrace_analysis::{At, Context, Handler, Processor, Stats, TraceInfo};
use rostrace_ctf::{Event, EventClass};
use std::collections::HashMap;

#[derive(Default)]
struct PublishDelay {
    /// Delays (ns) per callback (trace, vpid, address).
    delays: HashMap<(u32, i64, u64), Vec<i64>>,
    outside: u64,
}

impl Handler for PublishDelay {
    fn subscribe(&mut self, _trace: &TraceInfo<'_>, class: &EventClass) -> Option<u32> {
        class.name.ends_with(":rmw_publish").then_some(0)
    }

    fn event(&mut self, _token: u32, _ev: &Event<'_>, at: &At, cx: &Context<'_>) {
        match cx.running(at) {
            Some(i) => {
                let run = &cx.ros2.runs[i as usize];
                let key = cx.ros2.slots[run.slot()];
                self.delays.entry(key).or_default().push(at.ts - run.start);
            }
            None => self.outside += 1,
        }
    }
}

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        eprintln!("usage: custom_handler TRACE...");
        std::process::exit(2);
    }
    let (set, errors) = rostrace_ctf::TraceSet::open(&paths);
    for e in &errors {
        eprintln!("error: {e}");
    }
    let mut p = Processor::new();
    p.add(PublishDelay::default());
    let a = p.analyze(&set, Default::default(), |_, _| {});
    let h = a.get::<PublishDelay>().expect("registered above");
    let names: HashMap<(u32, i64, u64), (&str, &str)> = a
        .report
        .callbacks
        .iter()
        .map(|c| ((c.trace, c.vpid, c.address), (c.node.as_ref(), c.symbol.as_ref())))
        .collect();
    let mut rows: Vec<_> = h.delays.iter().collect();
    rows.sort_by_key(|(k, _)| **k);
    println!("publications during callback runs: delay from the run's start");
    for (k, v) in rows {
        let s = Stats::of(&mut v.clone());
        let (node, symbol) = names.get(k).copied().unwrap_or(("?", "?"));
        println!(
            "  {node} {symbol}: {} publications, mean {:.1} us, max {:.1} us",
            s.count,
            s.mean / 1e3,
            s.max as f64 / 1e3
        );
    }
    println!("publications outside any callback run: {}", h.outside);
}
