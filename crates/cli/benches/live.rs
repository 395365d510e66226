//! What `rostrace live` costs while it follows a recording: its CPU beside the traced system's,
//! how late an event reaches its output, and whether its memory grows with the events.
//!
//! `cargo bench -p rostrace --bench live [-- SECONDS [N...]]` (default 30 s; 1 3 10): the demo's
//! two processes (`rostrace demo --process sensing|control`) recorded by `rostrace record` for
//! SECONDS, as N systems at once on N DDS domains (N times the demo's event rate), each
//! followed by `rostrace live SESSION --jsonl` (interval 1 s, window 10 s) in a process of its
//! own. Measured, per run:
//!
//! - CPU, as a share of one core: `live`'s own (from `/proc/PID/stat`, from its third second to
//!   its last), and the recorded system's (`rostrace record` and everything it ran, from
//!   `wait4`); their ratio.
//! - Latency of an event to the output: each JSON line's arrival (read as it is written)
//!   minus the timestamps of the events it is the first line to cover (those after the previous
//!   line's last event up to its own; taken as spread evenly in time): p50 and p99. It holds the
//!   tracer's flush, the interval and the analysis.
//! - Memory: `live`'s resident size at a quarter of the run and at its end (`/proc/PID/status`),
//!   their ratio, and its peak (`wait4`); the entries of its packet index at its last snapshot,
//!   beside the recording's packets.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn exe() -> PathBuf {
    // The benchmark is built with the binary: target/release/rostrace beside target/release/deps.
    let me = std::env::current_exe().expect("current_exe");
    me.parent().and_then(Path::parent).expect("target directory").join("rostrace")
}

fn now_ns() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64)
}

/// CPU time (user + system) of a process so far, in seconds.
fn cpu_of(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command's closing parenthesis: state is the first, utime the 12th.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    Some(ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64)
}

/// Resident size of a process, in MB.
fn rss_of(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<f64>().ok()? / 1024.0)
}

/// Waits for `child`: its CPU seconds (with its waited-for descendants) and peak RSS in MB.
#[allow(clippy::zombie_processes)] // waited for with wait4, for its resource usage
fn reap(child: Child) -> (f64, f64, bool) {
    let mut status = 0;
    // SAFETY: rusage is plain integers, for which all zeros is a value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 writes the status and usage it is given, for our own child.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
    assert!(pid > 0, "wait4");
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    (secs(ru.ru_utime) + secs(ru.ru_stime), ru.ru_maxrss as f64 / 1024.0, ok)
}

struct Run {
    events: u64,
    live_cpu: f64,
    system_cpu: f64,
    latency_ms: (f64, f64),
    rss_quarter: f64,
    rss_end: f64,
    peak_mb: f64,
    /// The last snapshot's packet index entries, and the packets of the recording then.
    index: (u64, u64),
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1]
}

fn run(systems: usize, secs: f64) -> Run {
    let dir = std::env::temp_dir().join(format!("rostrace-bench-live-{}-{systems}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let exe = exe();
    let e = exe.display();
    let base = 150 + (std::process::id() % 40) as usize;
    let mut script = String::new();
    for i in 0..systems {
        let d = base + i;
        script.push_str(&format!(
            "{e} demo --process sensing --duration {secs} --domain {d} & \
             {e} demo --process control --duration {secs} --domain {d} & "
        ));
    }
    script.push_str("wait");
    let record = Command::new(&exe)
        .args(["record", "-s", "s", "-p"])
        .arg(&dir)
        .args(["--", "sh", "-c", &script])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("rostrace record");
    let session = dir.join("s");
    while !session.is_dir() {
        std::thread::sleep(Duration::from_millis(20));
    }
    let jsonl = dir.join("live.jsonl");
    let started = Instant::now();
    let live = Command::new(&exe)
        .arg("live")
        .arg(&session)
        .args(["--interval", "1", "--window", "10", "--duration", &secs.to_string(), "--jsonl"])
        .arg(&jsonl)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("rostrace live");
    let pid = live.id();
    let (mut arrivals, mut cpu, mut rss, mut index) = (Vec::new(), Vec::new(), Vec::new(), (0, 0));
    let mut reader: Option<BufReader<std::fs::File>> = None;
    while started.elapsed().as_secs_f64() < secs - 0.3 {
        std::thread::sleep(Duration::from_millis(50));
        let t = started.elapsed().as_secs_f64();
        if let (Some(c), Some(r)) = (cpu_of(pid), rss_of(pid)) {
            cpu.push((t, c));
            rss.push((t, r));
        }
        if reader.is_none() {
            reader = std::fs::File::open(&jsonl).ok().map(BufReader::new);
        }
        while let Some(r) = reader.as_mut() {
            let mut line = String::new();
            if r.read_line(&mut line).unwrap_or(0) == 0 {
                break;
            }
            if !line.ends_with('\n') {
                // Half a line: read again from its start next time.
                let _ = r.seek_relative(-(line.len() as i64));
                break;
            }
            let v: serde_json::Value = serde_json::from_str(line.trim()).expect("a JSON line");
            if let Some(end) = v["window_ns"][1].as_i64() {
                arrivals.push((now_ns(), end));
            }
            index.0 = v["index_entries"].as_u64().unwrap_or(0);
        }
    }
    let (_, peak_mb, live_ok) = reap(live);
    let (system_cpu, _, record_ok) = reap(record);
    assert!(live_ok && record_ok, "live {live_ok}, record {record_ok}");
    let info = Command::new(&exe).args(["info", "--json"]).arg(&session).output().expect("rostrace info");
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).expect("info --json");
    // The final snapshot reads every packet of the recording.
    let last = std::fs::read_to_string(&jsonl).ok().and_then(|t| t.lines().last().map(str::to_string));
    let last: Option<serde_json::Value> = last.and_then(|l| serde_json::from_str(&l).ok());
    index.1 = last.and_then(|v| v["packets_read"].as_u64()).unwrap_or(0);
    let _ = std::fs::remove_dir_all(&dir);

    // Latency: the events each line covers first, spread evenly from the previous line's end to its own.
    let mut latencies = Vec::new();
    for w in arrivals.windows(2) {
        let ((_, prev_end), (at, end)) = (w[0], w[1]);
        let mut t = prev_end;
        while t < end {
            latencies.push((at - t) as f64 / 1e6);
            t += 1_000_000;
        }
    }
    latencies.sort_by(f64::total_cmp);
    let steady: Vec<&(f64, f64)> = cpu.iter().filter(|(t, _)| *t >= 3.0).collect();
    let live_cpu = match (steady.first(), steady.last()) {
        (Some(a), Some(b)) if b.0 > a.0 => (b.1 - a.1) / (b.0 - a.0),
        _ => f64::NAN,
    };
    let at = |frac: f64| rss.iter().find(|(t, _)| *t >= secs * frac).or(rss.last()).map_or(f64::NAN, |r| r.1);
    Run {
        events: info["event_count"].as_u64().unwrap_or(0),
        live_cpu,
        system_cpu: system_cpu / secs,
        latency_ms: (percentile(&latencies, 0.5), percentile(&latencies, 0.99)),
        rss_quarter: at(0.25),
        rss_end: rss.last().map_or(f64::NAN, |r| r.1),
        peak_mb,
        index,
    }
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(30.0);
    println!("rostrace live following a recording of the demo, {secs} s, interval 1 s, window 10 s");
    println!(
        "{:>8} {:>10} {:>9} {:>10} {:>11} {:>7} {:>8} {:>8} {:>11} {:>11} {:>8} {:>13}",
        "rate",
        "events",
        "events/s",
        "live CPU",
        "system CPU",
        "ratio",
        "lat p50",
        "lat p99",
        "RSS at 1/4",
        "RSS at end",
        "growth",
        "index/packets"
    );
    let mut rows = Vec::new();
    let rates: Vec<usize> = std::env::args().skip(2).filter_map(|s| s.parse().ok()).collect();
    for systems in if rates.is_empty() { vec![1, 3, 10] } else { rates } {
        let r = run(systems, secs);
        println!(
            "{:>7}x {:>10} {:>9.0} {:>9.1}% {:>10.1}% {:>7.3} {:>5.0} ms {:>5.0} ms {:>8.1} MB {:>8.1} MB {:>8.2} {:>7}/{}",
            systems,
            r.events,
            r.events as f64 / secs,
            r.live_cpu * 100.0,
            r.system_cpu * 100.0,
            r.live_cpu / r.system_cpu,
            r.latency_ms.0,
            r.latency_ms.1,
            r.rss_quarter,
            r.rss_end,
            r.rss_end / r.rss_quarter,
            r.index.0,
            r.index.1
        );
        rows.push((systems, r));
    }
    if let (Some((_, one)), Some((n, ten))) = (rows.first(), rows.last().filter(|_| rows.len() > 1)) {
        println!(
            "{}x the rate: live's CPU x{:.2}, its peak memory x{:.2} ({:.1} MB, {:.1} MB)",
            n,
            ten.live_cpu / one.live_cpu,
            ten.peak_mb / one.peak_mb,
            one.peak_mb,
            ten.peak_mb
        );
    }
}
