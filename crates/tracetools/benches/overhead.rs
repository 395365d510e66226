//! Cost of a tracepoint through the C ABI, in one run: compiled in but no session (disabled),
//! the embedded tracer, and LTTng-UST (a real session). Prints ns per event and the ratios.
//!
//! `cargo bench -p rostrace-tracetools --bench overhead`. LTTng needs lttng-tools and root or
//! the tracing group; without it, its line says so.

mod common;

use common::{flows, lttng, lttng_ready};
use std::path::Path;
use std::process::Command;

const N: &str = "2000000";

/// (ns per tracepoint, ns per empty library call).
fn run(prog: &Path, out: &Path, env: &[(&str, String)]) -> Option<(f64, f64)> {
    let mut c = Command::new(prog);
    c.arg(out).args(["1", N, "bench"]).env_remove("ROSTRACE_SESSION_DIR");
    for (k, v) in env {
        c.env(k, v);
    }
    let st = c.status().ok()?;
    if !st.success() {
        return None;
    }
    // Best of the runs is taken by the caller.
    let text = std::fs::read_to_string(out).ok()?;
    let mut it = text.split_whitespace().map(|x| x.parse::<f64>().ok());
    Some((it.next()??, it.next()??))
}

fn best(prog: &Path, out: &Path, env: &[(&str, String)]) -> Option<(f64, f64)> {
    (0..5).filter_map(|_| run(prog, out, env)).reduce(|a, b| (a.0.min(b.0), a.1.min(b.1)))
}

fn main() {
    let dir = std::env::temp_dir().join(format!("rostrace-overhead-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = flows(&dir);
    let out = dir.join("ns.txt");
    let (disabled, call) = best(&prog, &out, &[]).expect("disabled run");
    let session = dir.join("session");
    let embedded = best(
        &prog,
        &out,
        &[("ROSTRACE_SESSION_DIR", session.display().to_string()), ("ROSTRACE_BUFFER_SIZE", "256M".into())],
    )
    .expect("embedded run")
    .0;
    // The same reading CLOCK_MONOTONIC at each event instead of the TSC.
    let embedded_mono = best(
        &prog,
        &out,
        &[
            ("ROSTRACE_SESSION_DIR", dir.join("session-mono").display().to_string()),
            ("ROSTRACE_BUFFER_SIZE", "256M".into()),
            ("ROSTRACE_CLOCK", "monotonic".into()),
        ],
    )
    .expect("embedded run, monotonic clock")
    .0;
    let name = format!("rostrace-overhead-{}", std::process::id());
    let mut lttng_ns = None;
    if lttng_ready() {
        if lttng(&["create", &name, &format!("--output={}", dir.join("lttng").display())])
            && lttng(&["enable-event", "-u", "ros2:*", "-s", &name])
            && lttng(&["add-context", "-u", "-s", &name, "-t", "vpid", "-t", "vtid", "-t", "procname"])
            && lttng(&["start", &name])
        {
            lttng_ns = best(
                &prog,
                &out,
                &[
                    ("ROSTRACE_BACKEND", "lttng".into()),
                    ("ROSTRACE_LTTNG_PROVIDER", tracetools::LTTNG_PROVIDER_DIR.into()),
                ],
            )
            .map(|x| x.0);
            lttng(&["stop", &name]);
        }
        lttng(&["destroy", &name]);
    }
    println!("tracepoint cost through the C ABI (rmw_take, 4 fields, one thread, {N} calls, best of 5):");
    println!("  disabled (no session):   {disabled:8.2} ns/event   (an empty call into the library: {call:.2} ns)");
    let tsc = tracetools::tracer::tsc_usable();
    println!(
        "  embedded tracer:         {embedded:8.2} ns/event   (event clock: {}; target <= 25 ns: {})",
        if tsc { "TSC, converted by the writer" } else { "CLOCK_MONOTONIC (the clocksource is not the TSC)" },
        if embedded <= 25.0 { "met" } else { "not met" }
    );
    println!("  embedded, CLOCK_MONOTONIC per event: {embedded_mono:8.2} ns/event   (ROSTRACE_CLOCK=monotonic)");
    match lttng_ns {
        Some(l) => {
            println!("  LTTng-UST:               {l:8.2} ns/event");
            println!(
                "ratio: embedded costs {:.2}x LTTng-UST's; disabled is {:.1}x cheaper than embedded",
                embedded / l,
                embedded / disabled
            );
        }
        None => println!("  LTTng-UST:               not available (lttng-tools and a session daemon are needed)"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
