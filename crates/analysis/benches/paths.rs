//! End-to-end paths at Autoware scale: wall time and peak memory of the architecture, the path
//! search and per-message path records.
//!
//! 1. tum-autoware-carla (Autoware + CARLA, 192 nodes, 402 communications; no rmw events, so
//!    no message can be followed there): architecture, every path from every source to every
//!    sink (depth 15, no cap on the count), sensing → control.
//! 2. A generated system of Autoware's size whose messages can be followed: 15 layers of 13
//!    nodes, each node taking its own column's message (callback chain) and its neighbour's
//!    (latest message), 10 Hz for 60 s (about a million events): every path from a source to a
//!    sink, each followed message by message.
//!
//! Each part runs in a process of its own (peak memory is per process).
//!
//! `cargo bench -p rostrace-analysis --bench paths` (`-- --generate DIR` writes the generated
//! trace and stops; `-- --generated DIR` measures an existing one).

#[path = "../tests/support/system.rs"]
mod system;

use analysis::paths::{Architecture, Endpoint, PathIndex, PathOptions, SearchLimits};
use std::path::{Path, PathBuf};
use std::time::Instant;
use system::{Sys, MS};

const LAYERS: usize = 15;
const WIDTH: usize = 13;
const SECONDS: u64 = 60;

fn status_mb(key: &str) -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// The generated system.
fn generate(dir: &Path) {
    let mut s = Sys::new();
    let mut nodes = vec![vec![0u64; WIDTH]; LAYERS];
    let mut pubs = Vec::new();
    let mut subs = Vec::new();
    let mut timers = Vec::new();
    for (l, layer) in nodes.iter_mut().enumerate() {
        let mut lp = Vec::new();
        let mut ls = Vec::new();
        for (w, n) in layer.iter_mut().enumerate() {
            *n = s.node(&format!("layer{l:02}/node{w:02}"));
            if l == 0 {
                timers.push(s.timer(*n, 100 * MS));
            } else {
                let own = s.subscription(*n, &format!("/l{:02}/n{w:02}", l - 1));
                let neighbour = s.subscription(*n, &format!("/l{:02}/n{:02}", l - 1, (w + 1) % WIDTH));
                ls.push((own, neighbour));
            }
            lp.push(s.publisher(*n, &format!("/l{l:02}/n{w:02}")));
        }
        pubs.push(lp);
        subs.push(ls);
    }
    for k in 0..SECONDS * 10 {
        for w in 0..WIDTH {
            let tid = |l: usize| (100 + l * WIDTH + w) as i32;
            let t0 = 10 * MS + k * 100 * MS + w as u64 * 50_000;
            s.run(tid(0), timers[w], t0, t0 + 20_000);
            let mut src = s.publish(tid(0), pubs[0][w], t0 + 10_000);
            let mut at = t0 + 10_000;
            for l in 1..LAYERS {
                // Own column: 60 us in transit, 80 us of work, then the publish.
                let take = at + 60_000;
                let (own, _) = subs[l][w];
                s.deliver(tid(l), own, src, take, 100_000);
                let q = take + 100 + 80_000;
                let next = s.publish(tid(l), pubs[l][w], q);
                // The neighbour's column takes the same message, keeps it for later.
                let left = (w + WIDTH - 1) % WIDTH;
                let nb_tid = (100 + l * WIDTH + left) as i32 + 10_000;
                s.deliver(nb_tid, subs[l][left].1, src, take + 5_000, 2_000);
                src = next;
                at = q;
            }
        }
    }
    s.write(dir);
}

fn measure_carla(trace: &Path) {
    let t = Instant::now();
    let (set, errors) = ctf::TraceSet::open(&[trace]);
    assert!(errors.is_empty(), "{errors:?}");
    let a = analysis::analyze_traces(&set, |_, _| {});
    let t_analyze = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let arch = Architecture::from_analysis(&a);
    let t_arch = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let limits = SearchLimits { max_depth: 15, max_paths: usize::MAX };
    let (mut total, mut pairs) = (0usize, 0usize);
    for (src, _) in arch.sources() {
        for (dst, _) in arch.sinks() {
            if src != dst {
                pairs += 1;
                total += arch.search_paths(src, &[], dst, limits, |_| true).paths;
            }
        }
    }
    let t_all = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let (from, to) = (
        arch.endpoint("/sensing/lidar/left/velodyne_convert_node").expect("sensing node"),
        arch.endpoint("/control/trajectory_follower/lane_departure_checker_node").expect("control node"),
    );
    let index = PathIndex::new(&a);
    let mut n = 0;
    let mut rows = 0;
    arch.search(&from, &[], &to, limits, |p| {
        n += 1;
        rows += index.records(&arch, &p, PathOptions::default()).map(|r| r.rows.len()).unwrap_or(0);
        true
    });
    let t_e2e = t.elapsed().as_secs_f64();
    println!(
        "tum-autoware-carla: {} nodes, {} communications; read + model {t_analyze:.3} s, architecture {:.1} ms",
        arch.nodes.len(),
        arch.communications.len(),
        t_arch * 1e3
    );
    println!("  every source to every sink ({pairs} pairs, depth 15, no cap): {total} paths in {:.1} ms", t_all * 1e3);
    println!("  sensing -> control: {n} paths, each followed ({rows} records) in {:.1} ms", t_e2e * 1e3);
    println!("  peak RSS {:.0} MB (of which heap {:.0} MB)", status_mb("VmHWM:"), status_mb("RssAnon:"));
}

fn measure_generated(dir: &Path) {
    let t = Instant::now();
    let (set, errors) = ctf::TraceSet::open(&[dir]);
    assert!(errors.is_empty(), "{errors:?}");
    let a = analysis::analyze_traces(&set, |_, _| {});
    let t_analyze = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let arch = Architecture::from_analysis(&a);
    let index = PathIndex::new(&a);
    let t_arch = t.elapsed().as_secs_f64();
    let limits = SearchLimits { max_depth: LAYERS, max_paths: usize::MAX };
    let t = Instant::now();
    let from = Endpoint::Node(arch.node("/layer00/node00").expect("source"));
    let to = Endpoint::Node(arch.node(&format!("/layer{:02}/node00", LAYERS - 1)).expect("sink"));
    let out = arch.search(&from, &[], &to, limits, |_| true);
    let t_search = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let (mut all, mut pairs) = (0usize, 0usize);
    for (src, _) in arch.sources() {
        for (dst, _) in arch.sinks() {
            pairs += 1;
            all += arch.search_paths(src, &[], dst, limits, |_| true).paths;
        }
    }
    let t_all = t.elapsed().as_secs_f64();
    // Follow the paths of one source to one sink, message by message; the longest first.
    let t = Instant::now();
    let mut specs = Vec::new();
    arch.search(&from, &[], &to, SearchLimits { max_depth: LAYERS, max_paths: 200 }, |p| {
        specs.push(p);
        true
    });
    let followed = specs.len();
    let ranked = analysis::paths::rank(&index, &arch, specs, PathOptions::default());
    let t_rank = t.elapsed().as_secs_f64();
    let chain = analysis::paths::PathSpec {
        nodes: (0..LAYERS).map(|l| format!("/layer{l:02}/node00")).collect(),
        topics: (0..LAYERS - 1).map(|l| format!("/l{l:02}/n00")).collect(),
    };
    let t = Instant::now();
    let r = index.records(&arch, &chain, PathOptions::default()).expect("chain");
    let rt = r.response_time(analysis::paths::Case::All);
    let t_chain = t.elapsed().as_secs_f64();
    let st = r.stats();
    println!(
        "generated: {} events, {} nodes, {} communications; read + model {t_analyze:.3} s, architecture + index {:.1} ms",
        a.report.events,
        arch.nodes.len(),
        arch.communications.len(),
        t_arch * 1e3
    );
    println!("  one source to one sink (depth {LAYERS}, no cap): {} paths in {:.1} ms", out.paths, t_search * 1e3);
    println!("  every source to every sink ({pairs} pairs): {all} paths in {:.1} ms", t_all * 1e3);
    println!(
        "  {followed} of them followed message by message and ranked in {:.1} ms (longest: mean {:.3} ms)",
        t_rank * 1e3,
        ranked.first().map_or(0.0, |p| p.latency.mean / 1e6)
    );
    println!(
        "  the {LAYERS}-node chain: {} records, {} complete, latency mean {:.3} ms, response time (all) {} values, in {:.1} ms",
        r.rows.len(),
        r.complete(),
        st.mean / 1e6,
        rt.len(),
        t_chain * 1e3
    );
    println!("  peak RSS {:.0} MB (of which heap {:.0} MB)", status_mb("VmHWM:"), status_mb("RssAnon:"));
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--carla") {
        return measure_carla(Path::new(&args[i + 1]));
    }
    if let Some(i) = args.iter().position(|a| a == "--generate") {
        return generate(Path::new(&args[i + 1]));
    }
    if let Some(i) = args.iter().position(|a| a == "--generated") {
        return measure_generated(Path::new(&args[i + 1]));
    }
    let me = std::env::current_exe().expect("the benchmark's path");
    let carla = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/tum-autoware-carla");
    if carla.exists() {
        let st = std::process::Command::new(&me).arg("--carla").arg(&carla).status().expect("carla run");
        assert!(st.success());
    }
    let dir = std::env::temp_dir().join(format!("rostrace-paths-bench-{}", std::process::id()));
    eprintln!("generating {LAYERS} x {WIDTH} nodes, {SECONDS} s at 10 Hz ...");
    generate(&dir);
    let st = std::process::Command::new(&me).arg("--generated").arg(&dir).status().expect("generated run");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(st.success());
}
