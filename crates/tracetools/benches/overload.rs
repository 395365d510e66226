//! Overload: 100 processes emitting as fast as they can at once (one thread each, the C ABI's
//! `callback_start`), recorded by the embedded tracer and by LTTng-UST with the same buffer
//! memory per process, in one run. Prints, per backend, the events emitted (each process counts
//! its own), kept in the trace, and reported discarded, and the ratio of events kept.
//!
//! `cargo bench -p rostrace-tracetools --bench overload [-- PROCESSES SECONDS]`. Buffer memory
//! per process: the embedded tracer's ring of 1 MiB per thread; LTTng-UST per-process buffers
//! (`--buffers-pid`) of 2 sub-buffers of 256 KiB per CPU (1 MiB on 2 CPUs; the sub-buffer size
//! is scaled to the machine's CPUs to keep 1 MiB per process). LTTng needs lttng-tools and root
//! or the tracing group; without it, its line says so.

mod common;

use common::{flows, lttng, lttng_ready};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Instant;

const RING: usize = 1 << 20;

/// What one backend did.
struct Outcome {
    emitted: u64,
    kept: u64,
    discarded: u64,
    lost_packets: u64,
    wall_s: f64,
    errors: Vec<String>,
}

/// Runs `n` processes of `prog ... stress SECONDS` at once with `env`; returns the events they
/// emitted and the wall time.
fn burst(prog: &Path, dir: &Path, n: usize, seconds: f64, env: &[(&str, String)]) -> (u64, f64) {
    let t0 = Instant::now();
    let children: Vec<(Child, PathBuf)> = (0..n)
        .map(|i| {
            let out = dir.join(format!("count-{i}.txt"));
            let mut c = Command::new(prog);
            c.arg(&out).args(["1", "0", "stress", &seconds.to_string()]).env_remove("ROSTRACE_SESSION_DIR");
            for (k, v) in env {
                c.env(k, v);
            }
            (c.spawn().expect("spawn"), out)
        })
        .collect();
    let mut emitted = 0;
    for (mut c, out) in children {
        let st = c.wait().expect("wait");
        assert!(st.success(), "a stress process failed: {st}");
        emitted += std::fs::read_to_string(&out).unwrap().trim().parse::<u64>().unwrap();
    }
    (emitted, t0.elapsed().as_secs_f64())
}

/// Events in the traces under `dir`, the losses they report, and the read errors (a stream
/// file or trace that cannot be read keeps its events out of the count).
fn count(dir: &Path) -> (u64, u64, u64, Vec<String>) {
    let (set, errors) = rostrace_ctf::TraceSet::open(&[dir]);
    let mut errors: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    let mut events = set.events();
    let mut kept = 0;
    while let Some(ev) = events.next() {
        match ev {
            Ok(ev) if ev.name() == "ros2:callback_start" => kept += 1,
            Ok(_) => {}
            Err(e) => errors.push(e.to_string()),
        }
    }
    let (mut discarded, mut packets) = (0, 0);
    for l in events.losses() {
        match l.kind {
            rostrace_ctf::LossKind::Events(k) => discarded += k,
            rostrace_ctf::LossKind::Packets(k) => packets += k,
        }
    }
    (kept, discarded, packets, errors)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let n: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(100);
    let seconds: f64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(2.0);
    let cpus = std::thread::available_parallelism().map_or(1, |c| c.get());
    let dir = std::env::temp_dir().join(format!("rostrace-overload-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = flows(&dir);

    // Embedded: a 1 MiB ring per thread (one thread per process).
    let session = dir.join("embedded");
    let (emitted, wall_s) = burst(
        &prog,
        &dir,
        n,
        seconds,
        &[("ROSTRACE_SESSION_DIR", session.display().to_string()), ("ROSTRACE_BUFFER_SIZE", RING.to_string())],
    );
    let (kept, discarded, lost_packets, errors) = count(&session);
    let embedded = Outcome { emitted, kept, discarded, lost_packets, wall_s, errors };

    // LTTng-UST: per-process buffers, 2 sub-buffers per CPU, 1 MiB per process in all.
    let mut lttng_out = None;
    let subbuf = (RING / 2 / cpus).next_power_of_two().max(4096);
    if lttng_ready() {
        let name = format!("rostrace-overload-{}", std::process::id());
        let out = dir.join("lttng");
        let sub = subbuf.to_string();
        if lttng(&["create", &name, &format!("--output={}", out.display())])
            && lttng(&[
                "enable-channel",
                "-u",
                "-s",
                &name,
                "--buffers-pid",
                "--subbuf-size",
                &sub,
                "--num-subbuf",
                "2",
                "c",
            ])
            && lttng(&["enable-event", "-u", "ros2:callback_start", "-c", "c", "-s", &name])
            && lttng(&["add-context", "-u", "-s", &name, "-c", "c", "-t", "vpid", "-t", "vtid", "-t", "procname"])
            && lttng(&["start", &name])
        {
            let (emitted, wall_s) = burst(
                &prog,
                &dir,
                n,
                seconds,
                &[
                    ("ROSTRACE_BACKEND", "lttng".into()),
                    ("ROSTRACE_LTTNG_PROVIDER", tracetools::LTTNG_PROVIDER_DIR.into()),
                ],
            );
            lttng(&["stop", &name]);
            lttng(&["destroy", &name]);
            let (kept, discarded, lost_packets, errors) = count(&out);
            lttng_out = Some(Outcome { emitted, kept, discarded, lost_packets, wall_s, errors });
        } else {
            lttng(&["destroy", &name]);
        }
    }

    println!(
        "overload: {n} processes x 1 thread emitting callback_start as fast as they can for {seconds} s, \
         {} CPUs; buffer memory per process: 1 MiB",
        cpus
    );
    println!(
        "{:<34} {:>12} {:>11} {:>7} {:>12} {:>8} {:>7} {:>7}",
        "backend", "emitted", "kept", "kept%", "discarded", "lost pk", "errors", "wall"
    );
    let line = |name: &str, o: &Outcome| {
        println!(
            "{:<34} {:>12} {:>11} {:>6.2}% {:>12} {:>8} {:>7} {:>6.2}s",
            name,
            o.emitted,
            o.kept,
            100.0 * o.kept as f64 / o.emitted.max(1) as f64,
            o.discarded,
            o.lost_packets,
            o.errors.len(),
            o.wall_s
        );
        for e in o.errors.iter().take(3) {
            println!("    read error: {e}");
        }
    };
    line("embedded (1 MiB ring per thread)", &embedded);
    let exact = embedded.kept + embedded.discarded == embedded.emitted;
    println!(
        "  embedded: kept + discarded = {} of {} emitted ({})",
        embedded.kept + embedded.discarded,
        embedded.emitted,
        if exact { "exact" } else { "NOT exact" }
    );
    match &lttng_out {
        Some(l) => {
            line(&format!("LTTng-UST (per-pid, 2x{} KiB/CPU)", subbuf >> 10), l);
            println!(
                "ratio: the embedded tracer kept {:.2}x the events LTTng-UST kept (target: > 1x), {:.2}x its share of \
                 the events emitted",
                embedded.kept as f64 / l.kept.max(1) as f64,
                (embedded.kept as f64 / embedded.emitted.max(1) as f64) / (l.kept as f64 / l.emitted.max(1) as f64)
            );
        }
        None => println!("LTTng-UST: not available (lttng-tools and a session daemon are needed)"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
