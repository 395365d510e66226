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
//! 3. A generated dense system: 200 nodes each subscribing to the topics of the 30 after it
//!    (a ring of cliques, as `/tf` and `/diagnostics` make), 4 sources feeding it, 4 sinks it
//!    feeds and one it does not reach, messages every way for 32 rounds: analysed end to end as
//!    `rostrace analyze` does (`rostrace_analysis::analyze_traces` and `longest_of`), with the states the
//!    path searches expanded and whether they stopped at a limit (the plain depth-first
//!    enumeration of simple paths is exponential there); and one search as `rostrace paths`
//!    makes it by default.
//!
//! Each part runs in a process of its own (peak memory is per process).
//!
//! `cargo bench -p rostrace-analysis --bench paths` (`-- --generate DIR` writes the generated
//! trace and stops; `-- --generated DIR` measures an existing one; `-- --dense-only` runs part
//! 3 alone).

#[path = "../tests/support/system.rs"]
mod system;

#[path = "../tests/support/dense.rs"]
mod dense;

use rostrace_analysis::paths::{search, search_paths, Architecture, Endpoint, PathIndex, PathOptions, SearchLimits};
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
    let (set, errors) = rostrace_ctf::TraceSet::open(&[trace]);
    assert!(errors.is_empty(), "{errors:?}");
    let a = rostrace_analysis::analyze_traces(&set, |_, _| {});
    let t_analyze = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let arch = Architecture::from_analysis(&a);
    let t_arch = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let limits = SearchLimits { max_depth: 15, max_paths: usize::MAX, max_expansions: usize::MAX };
    let (mut total, mut pairs) = (0usize, 0usize);
    for (src, _) in arch.sources() {
        for (dst, _) in arch.sinks() {
            if src != dst {
                pairs += 1;
                total += search_paths(&arch, src, &[], dst, limits, |_| true).paths;
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
    search(&arch, &from, &[], &to, limits, |p| {
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
    let (set, errors) = rostrace_ctf::TraceSet::open(&[dir]);
    assert!(errors.is_empty(), "{errors:?}");
    let a = rostrace_analysis::analyze_traces(&set, |_, _| {});
    let t_analyze = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let arch = Architecture::from_analysis(&a);
    let index = PathIndex::new(&a);
    let t_arch = t.elapsed().as_secs_f64();
    let limits = SearchLimits { max_depth: LAYERS, max_paths: usize::MAX, max_expansions: usize::MAX };
    let t = Instant::now();
    let from = Endpoint::Node(arch.node("/layer00/node00").expect("source"));
    let to = Endpoint::Node(arch.node(&format!("/layer{:02}/node00", LAYERS - 1)).expect("sink"));
    let out = search(&arch, &from, &[], &to, limits, |_| true);
    let t_search = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let (mut all, mut pairs) = (0usize, 0usize);
    for (src, _) in arch.sources() {
        for (dst, _) in arch.sinks() {
            pairs += 1;
            all += search_paths(&arch, src, &[], dst, limits, |_| true).paths;
        }
    }
    let t_all = t.elapsed().as_secs_f64();
    // Follow the paths of one source to one sink, message by message; the longest first.
    let t = Instant::now();
    let mut specs = Vec::new();
    search(&arch, &from, &[], &to, SearchLimits { max_paths: 200, ..limits }, |p| {
        specs.push(p);
        true
    });
    let followed = specs.len();
    let ranked = rostrace_analysis::paths::rank(&index, &arch, specs, PathOptions::default());
    let t_rank = t.elapsed().as_secs_f64();
    let chain = rostrace_analysis::paths::PathSpec {
        nodes: (0..LAYERS).map(|l| format!("/layer{l:02}/node00")).collect(),
        topics: (0..LAYERS - 1).map(|l| format!("/l{l:02}/n00")).collect(),
    };
    let t = Instant::now();
    let r = index.records(&arch, &chain, PathOptions::default()).expect("chain");
    let rt = r.response_time(rostrace_analysis::paths::Case::All);
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

/// The dense system of part 3.
const DENSE: dense::Dense = dense::Dense { nodes: 200, fan_in: 30, sources: 4, sinks: 4, lonely: true, rounds: 32 };

fn measure_dense(dir: &Path) {
    let t = Instant::now();
    let (set, errors) = rostrace_ctf::TraceSet::open(&[dir]);
    assert!(errors.is_empty(), "{errors:?}");
    let a = rostrace_analysis::analyze_traces(&set, |_, _| {});
    let t_analyze = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let lp = rostrace_analysis::paths::longest_of(&a, |_| true, 0);
    let t_longest = t.elapsed().as_secs_f64();
    let arch = Architecture::from_analysis(&a);
    // The pair searches alone (no following), as `longest_of` makes them.
    let t = Instant::now();
    let limits = SearchLimits { max_depth: 15, max_paths: 20, max_expansions: 100_000 };
    let (mut pairs, mut found, mut most, mut cut) = (0usize, 0usize, 0usize, 0usize);
    for (src, _) in arch.sources() {
        for (dst, _) in arch.sinks() {
            let out = search_paths(&arch, src, &[], dst, limits, |_| true);
            pairs += 1;
            found += out.paths;
            most = most.max(out.expanded);
            cut += usize::from(out.truncated_work);
        }
    }
    let t_pairs = t.elapsed().as_secs_f64();
    // One source to one sink as `rostrace paths` searches by default (1000 paths at most).
    let t = Instant::now();
    let (src, dst) = (arch.node("/src0").expect("source"), arch.node("/sink3").expect("sink"));
    let one = search_paths(&arch, src, &[], dst, SearchLimits::default(), |_| true);
    let t_one = t.elapsed().as_secs_f64();
    println!(
        "dense: {} events, {} nodes, {} communications; read + model {t_analyze:.3} s",
        a.report.events,
        arch.nodes.len(),
        arch.communications.len()
    );
    println!(
        "  longest paths as `analyze` finds them ({} sources, {} sinks): {} paths followed, {} states expanded (probes \
         included), \
         truncated {}, in {:.1} ms (the ten listed: {} to {} nodes, {} records)",
        lp.sources,
        lp.sinks,
        lp.searched,
        lp.expanded,
        lp.truncated,
        t_longest * 1e3,
        lp.paths.iter().map(|p| p.path.nodes.len()).min().unwrap_or(0),
        lp.paths.iter().map(|p| p.path.nodes.len()).max().unwrap_or(0),
        lp.paths.iter().map(|p| p.counts.records).sum::<usize>()
    );
    println!(
        "  the {pairs} searches alone: {found} paths, at most {most} states in one, {cut} stopped at the work budget, \
         in {:.1} ms",
        t_pairs * 1e3
    );
    println!(
        "  /src0 to /sink3 as `rostrace paths` searches: {} paths, {} states expanded (and {} probed for the depth \
         flag), stopped at max_paths {}, at the work budget {}, in {:.1} ms",
        one.paths,
        one.expanded,
        one.probed,
        one.truncated_paths,
        one.truncated_work,
        t_one * 1e3
    );
    println!("  peak RSS {:.0} MB (of which heap {:.0} MB)", status_mb("VmHWM:"), status_mb("RssAnon:"));
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--dense") {
        return measure_dense(Path::new(&args[i + 1]));
    }
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
    let dense_only = args.iter().any(|a| a == "--dense-only");
    let carla = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/tum-autoware-carla");
    if carla.exists() && !dense_only {
        let st = std::process::Command::new(&me).arg("--carla").arg(&carla).status().expect("carla run");
        assert!(st.success());
    }
    let dir = std::env::temp_dir().join(format!("rostrace-paths-bench-{}", std::process::id()));
    if !dense_only {
        eprintln!("generating {LAYERS} x {WIDTH} nodes, {SECONDS} s at 10 Hz ...");
        generate(&dir);
        let st = std::process::Command::new(&me).arg("--generated").arg(&dir).status().expect("generated run");
        let _ = std::fs::remove_dir_all(&dir);
        assert!(st.success());
    }
    eprintln!("generating a dense system of {} nodes, each taking {} others' topics ...", DENSE.nodes, DENSE.fan_in);
    DENSE.write(&dir);
    let st = std::process::Command::new(&me).arg("--dense").arg(&dir).status().expect("dense run");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(st.success());
}
