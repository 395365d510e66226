//! What tracing adds to a publish from a Rust node: the same publisher loop run untraced and under
//! an embedded-tracer session (each in a process of its own, since tracing is set up per process),
//! printed as ns per publish and their ratio.
//!
//! `cargo bench -p rostrace-ros2 --bench publish`

use rostrace_ros2::{default_qos, Context};
use std::process::Command;
use std::time::Instant;

const BATCH: u32 = 20_000;
const ROUNDS: usize = 7;

/// Best-of-rounds ns per publish of a 64-byte string on a topic nobody subscribes to.
fn measure() -> f64 {
    let domain = 150 + (std::process::id() % 50) as u16;
    let ctx = Context::with_domain(domain).expect("context");
    let mut node = ctx.create_node("/bench", "talker").expect("node");
    let p = node.create_publisher::<String>("bench_topic", "std_msgs/String", &default_qos()).expect("publisher");
    let msg = "x".repeat(64);
    let mut best = f64::MAX;
    for _ in 0..ROUNDS {
        let t = Instant::now();
        for _ in 0..BATCH {
            p.publish(msg.clone()).expect("publish");
        }
        best = best.min(t.elapsed().as_nanos() as f64 / BATCH as f64);
    }
    best
}

fn main() {
    if std::env::var_os("ROSTRACE_BENCH_CHILD").is_some() {
        println!("{}", measure());
        return;
    }
    let exe = std::env::current_exe().expect("bench executable");
    let dir = std::env::temp_dir().join(format!("rostrace-bench-publish-{}", std::process::id()));
    let run = |traced: bool| -> f64 {
        let mut c = Command::new(&exe);
        c.env("ROSTRACE_BENCH_CHILD", "1").env_remove("ROSTRACE_SESSION_DIR");
        if traced {
            c.env("ROSTRACE_SESSION_DIR", &dir).env("ROSTRACE_BUFFER_SIZE", "64M");
        }
        let out = c.output().expect("bench child");
        String::from_utf8_lossy(&out.stdout).trim().parse().expect("bench child output")
    };
    let plain = run(false);
    let traced = run(true);
    let (set, _) = rostrace_ctf::TraceSet::open(&[&dir]);
    let mut events = 0u64;
    let mut it = set.events();
    while let Some(Ok(_)) = it.next() {
        events += 1;
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("publish of a 64-byte std_msgs/String, no subscriber, best of {ROUNDS} x {BATCH}:");
    println!("  untraced                      {plain:8.0} ns");
    println!("  traced (embedded, 3 events)   {traced:8.0} ns   ({events} events recorded)");
    println!("  tracing adds {:.0} ns per publish: {:.2}x", traced - plain, traced / plain);
}
