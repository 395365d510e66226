//! Scale: whole processes, as a user runs them, against babeltrace2 in the same run.
//!
//! - `rostrace info` on one thread, two, and all cores, against `babeltrace2 -o dummy` (target:
//!   20x on 2 cores), and its speed-up from 1 to 2 threads (target: 1.8x);
//! - as a control, two `rostrace info -j 1` processes at once: the work two cores do for two
//!   independent processes in the time of one;
//! - `rostrace analyze` on 1 and 2 threads (target: 1.5x);
//! - `rostrace analyze` on ten copies of the trace at once: peak memory (target: 500 MB for ten
//!   Autoware traces), and its speed-up from 1 to 2 threads (the pass shared out by trace);
//! - `rostrace info` on ten copies at once, 1 and 2 threads (the same target, where the work
//!   outweighs the process's fixed costs);
//! - opening the trace and decoding every event on 1 and 2 threads, in this process (without a
//!   process's start and end);
//! - how the reading work is spread over stream files and packets, and the speed-up that
//!   spread allows on more cores (stream files, large ones cut in parts, handed out largest
//!   first; the merge and the analysis pass are one thread each).
//!
//! `cargo bench -p rostrace --bench scale` (default trace: ../shared/traces/tum-autoware-carla),
//! `-- TRACE` for another.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

#[path = "measure.rs"]
mod measure;

/// Wall time in s and peak RSS in MB of `cmd` ([`measure::measure`]).
fn measure(cmd: &mut Command) -> (f64, f64) {
    let (secs, mb, _) = measure::measure(cmd);
    (secs, mb)
}

/// Best wall time (and the peak memory of that run) of `runs` runs of each command, run in
/// turn (one of each, then again, in the other order), so that a machine's slower and faster
/// phases weigh on each alike; each measured run follows two runs of the same command, not
/// measured (as `perf stat -r` and hyperfine's warm-up runs have it), so that what the runs
/// before leave behind is the same for each.
fn best<const N: usize>(runs: usize, make: [&dyn Fn() -> Command; N]) -> [(f64, f64); N] {
    let mut out = [(f64::MAX, 0.0); N];
    for round in 0..runs {
        for i in 0..N {
            let k = if round % 2 == 0 { i } else { N - 1 - i };
            let m = make[k];
            measure(&mut m());
            measure(&mut m());
            let r = measure(&mut m());
            if r.0 < out[k].0 {
                out[k] = r;
            }
        }
    }
    out
}

/// Best wall time of `runs` runs of two processes of `make` started together, until both have
/// ended (each measured run after two unmeasured ones, as [`best`] has it): what the machine's
/// cores give two independent processes.
fn best_pair(runs: usize, make: &dyn Fn() -> Command) -> f64 {
    let pair = || {
        let t = Instant::now();
        let mut a = make().stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn");
        let mut b = make().stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn");
        let _ = (a.wait(), b.wait());
        t.elapsed().as_secs_f64()
    };
    (0..runs)
        .map(|_| {
            pair();
            pair();
            pair()
        })
        .fold(f64::MAX, f64::min)
}

fn rostrace(args: &[&str], traces: &[&Path], jobs: usize) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rostrace"));
    c.args(args).args(traces).args(["-j", &jobs.to_string()]);
    c
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "NOT met"
    }
}

/// Largest-first assignment of `work` items to `n` workers: the busiest worker's load.
fn makespan(work: &[u64], n: usize) -> u64 {
    let mut sorted = work.to_vec();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    let mut load = vec![0u64; n];
    for w in sorted {
        let i = (0..n).min_by_key(|&i| load[i]).unwrap_or(0);
        load[i] += w;
    }
    load.into_iter().max().unwrap_or(0)
}

fn main() {
    let trace =
        std::env::args().skip(1).find(|a| !a.starts_with('-')).map(PathBuf::from).unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/tum-autoware-carla")
        });
    let t: &Path = &trace;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("trace: {} ({cores} cores)", t.display());

    let [info1, info2, info_all] = best(
        15,
        [&|| rostrace(&["info"], &[t], 1), &|| rostrace(&["info"], &[t], 2), &|| rostrace(&["info"], &[t], 0)],
    );
    let bt = (0..3)
        .map(|_| {
            let mut c = Command::new("babeltrace2");
            c.args(["-o", "dummy"]).arg(t);
            measure(&mut c)
        })
        .fold((f64::MAX, 0.0), |a, b| if b.0 < a.0 { b } else { a });
    println!("rostrace info -j 1:         {:7.1} ms  {:6.1} MB", info1.0 * 1e3, info1.1);
    println!("rostrace info -j 2:         {:7.1} ms  {:6.1} MB", info2.0 * 1e3, info2.1);
    println!("rostrace info (all cores):  {:7.1} ms  {:6.1} MB", info_all.0 * 1e3, info_all.1);
    println!("babeltrace2 -o dummy:       {:7.1} ms  {:6.1} MB", bt.0 * 1e3, bt.1);
    let r = bt.0 / info2.0;
    println!("info vs babeltrace2, 2 threads: {r:.1}x (target 20x: {})", verdict(r >= 20.0));
    let s = info1.0 / info2.0;
    println!("info, 1 -> 2 threads:           {s:.2}x (target 1.8x: {})", verdict(s >= 1.8));
    let two = best_pair(15, &|| rostrace(&["info"], &[t], 1));
    println!(
        "two `info -j 1` processes at once: {:.1} ms, both done ({:.2}x one alone: what two cores give two processes)",
        two * 1e3,
        info1.0 / two * 2.0
    );

    let [an1, an2] = best(9, [&|| rostrace(&["analyze"], &[t], 1), &|| rostrace(&["analyze"], &[t], 2)]);
    println!("rostrace analyze -j 1:      {:7.1} ms  {:6.1} MB", an1.0 * 1e3, an1.1);
    println!("rostrace analyze -j 2:      {:7.1} ms  {:6.1} MB", an2.0 * 1e3, an2.1);
    let sa = an1.0 / an2.0;
    println!("analyze, 1 -> 2 threads:        {sa:.2}x (target 1.5x: {})", verdict(sa >= 1.5));

    // Ten copies at once (links: the same files, read as ten traces).
    let dir = std::env::temp_dir().join(format!("rostrace-scale-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let abs = std::fs::canonicalize(t).expect("trace");
    for k in 0..10 {
        std::os::unix::fs::symlink(&abs, dir.join(format!("copy{k}"))).expect("symlink");
    }
    let (set, _) = rostrace_ctf::TraceSet::open(&[&dir]);
    let events: u64 = set.map_streams(0, count, add_counts).iter().map(|c| c.0).sum();
    drop(set);
    let [ten_info1, ten_info2] = best(5, [&|| rostrace(&["info"], &[&dir], 1), &|| rostrace(&["info"], &[&dir], 2)]);
    let [ten1, ten] = best(3, [&|| rostrace(&["analyze"], &[&dir], 1), &|| rostrace(&["analyze"], &[&dir], 2)]);
    let _ = std::fs::remove_dir_all(&dir);
    let s10 = ten_info1.0 / ten_info2.0;
    println!(
        "rostrace info, ten copies: -j 1 {:.1} ms, -j 2 {:.1} ms: {s10:.2}x (target 1.8x: {})",
        ten_info1.0 * 1e3,
        ten_info2.0 * 1e3,
        verdict(s10 >= 1.8)
    );
    println!(
        "rostrace analyze, ten copies ({:.1} M events): -j 1 {:.2} s, peak {:.0} MB; -j 2 {:.2} s, peak {:.0} MB (target 500 MB: {}): {:.2}x",
        events as f64 / 1e6,
        ten1.0,
        ten1.1,
        ten.0,
        ten.1,
        verdict(ten.1.max(ten1.1) < 500.0),
        ten1.0 / ten.0
    );

    // How the work is spread: per stream file, its events and packets.
    let (set, _) = rostrace_ctf::TraceSet::open(&[t]);
    let per_stream = set.map_streams(0, count, add_counts);
    let files: Vec<u64> = per_stream.iter().map(|c| c.0).collect();
    let packets: Vec<u64> = per_stream.iter().flat_map(|c| c.1.iter().copied()).collect();
    let total: u64 = files.iter().sum();
    // No part is smaller than 1 MiB: in events, at this trace's events per byte.
    let part_min = (total as f64 * (1 << 20) as f64 / set.total_bytes().max(1) as f64) as u64;
    println!(
        "work: {total} events in {} stream files (largest {:.1}% of the events) and {} packets (largest {:.2}%)",
        files.len(),
        100.0 * *files.iter().max().unwrap_or(&0) as f64 / total.max(1) as f64,
        packets.len(),
        100.0 * *packets.iter().max().unwrap_or(&0) as f64 / total.max(1) as f64,
    );
    // The trace opened (mapped afresh) and read in this process, every event decoded and
    // counted (less work per event than `info`'s summary): without a process's start and end
    // (and the unmapping of the trace), which two threads do not share.
    let mut read = [f64::MAX; 2];
    for round in 0..15 {
        for i in 0..2 {
            let k = if round % 2 == 0 { i } else { 1 - i };
            let start = Instant::now();
            let (fresh, _) = rostrace_ctf::TraceSet::open_jobs(&[t], k + 1);
            std::hint::black_box(fresh.map_streams(k + 1, count, add_counts));
            read[k] = read[k].min(start.elapsed().as_secs_f64());
        }
    }
    println!(
        "opening and decoding in one process (no process start or end): 1 thread {:.1} ms, 2 threads {:.1} ms: {:.2}x",
        read[0] * 1e3,
        read[1] * 1e3,
        read[0] / read[1]
    );
    // Serial share of `info` from the measured 1 -> 2 speed-up (Amdahl: S2 = 1 / (s + (1 - s) /
    // 2)); the parallel share is bounded by the stream files' spread. `analyze` on one trace
    // uses two threads at most (its pass is two stages, reading and handling; linking, the
    // report and the path search two threads each): its 2-thread speed-up on every machine.
    let serial = |s2: f64| (2.0 / s2 - 1.0).clamp(0.0, 1.0);
    let si = serial(s);
    println!("expected speed-up on more cores (stream files, large ones cut in parts, largest first; serial share measured: info {:.0}%; analyze on one trace: two threads at most):", si * 100.0);
    println!("  cores  stream files  info   analyze");
    for n in [1usize, 2, 4, 8, 16, 32, 64] {
        // `info` cuts files of at least two eighths of a thread's share into parts of an eighth,
        // 1 MiB at least (at packet boundaries; here counted in events).
        let part = (total / (n as u64 * 8)).max(part_min).max(1);
        let units: Vec<u64> = files
            .iter()
            .flat_map(|&f| {
                let k = if n > 1 && f >= 2 * part { f / part } else { 1 };
                (0..k).map(move |i| f / k + u64::from(i < f % k))
            })
            .collect();
        let spread = total as f64 / makespan(&units, n).max(1) as f64;
        let amdahl = |s: f64| 1.0 / (s + (1.0 - s) / spread);
        println!("  {n:5}  {spread:11.1}x  {:4.1}x  {:6.1}x", amdahl(si), if n == 1 { 1.0 } else { sa });
    }
}

/// The counts of two parts of a file, one after the other.
fn add_counts(mut a: (u64, Vec<u64>), mut b: (u64, Vec<u64>)) -> (u64, Vec<u64>) {
    a.1.append(&mut b.1);
    (a.0 + b.0, a.1)
}

/// Events of one stream file, and per packet.
fn count(r: &mut rostrace_ctf::StreamReader<'_>) -> (u64, Vec<u64>) {
    let (mut n, mut per_packet, mut at) = (0u64, Vec::new(), u64::MAX);
    loop {
        match r.advance() {
            Ok(true) => {}
            Ok(false) => break,
            Err(_) => continue,
        }
        if r.packet.offset != at {
            at = r.packet.offset;
            per_packet.push(0);
        }
        n += 1;
        if let Some(p) = per_packet.last_mut() {
            *p += 1;
        }
    }
    (n, per_packet)
}
