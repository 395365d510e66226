//! `rostrace live --prometheus` scraped by a real Prometheus: the demo's processes are recorded
//! and followed, Prometheus scrapes the exporter every second, and its query API must return the
//! demo's callback and topic series with their labels and counts, and counters that never reset.
//! And scrapes answered at once while other clients hold connections open without asking.

mod common;

use common::*;
use serde_json::Value;
use std::cell::RefCell;
use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Prometheus, killed whatever the test's outcome.
struct Prometheus(Child);

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_prometheus(dir: &TempDir, exporter: u16, port: u16) -> Prometheus {
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: rostrace\n    static_configs:\n      - targets: ['127.0.0.1:{exporter}']\n"
        ),
    )
    .unwrap();
    let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!("--storage.tsdb.path={}", dir.join("tsdb").display()))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    Prometheus(child)
}

/// The result of an instant query of Prometheus' HTTP API (`None` while it is not answering).
fn query(port: u16, promql: &str) -> Option<Vec<Value>> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    let q: String = promql
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    write!(s, "GET /api/v1/query?query={q} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let (_, body) = out.split_once("\r\n\r\n")?;
    let v: Value = serde_json::from_str(body).ok()?;
    Some(v["data"]["result"].as_array()?.clone())
}

fn label<'a>(r: &'a Value, name: &str) -> &'a str {
    r["metric"][name].as_str().unwrap_or("")
}

fn value(r: &Value) -> f64 {
    r["value"][1].as_str().and_then(|v| v.parse().ok()).unwrap_or(f64::NAN)
}

/// What the test asks Prometheus, once it has scraped the demo's series a few times.
#[derive(Default, Clone)]
struct Seen {
    callbacks: Vec<Value>,
    publishes: Vec<Value>,
    takes: Vec<Value>,
    latency_p99: Vec<Value>,
    pairs: Vec<Value>,
    pair_messages: Vec<Value>,
    pair_rate: Vec<Value>,
    up: Vec<Value>,
    resets: Vec<Value>,
}

fn ask(port: u16) -> Option<Seen> {
    let scrapes = query(port, "count_over_time(rostrace_events_total[10m])")?;
    let seen = Seen {
        callbacks: query(port, "rostrace_callback_duration_seconds_count")?,
        publishes: query(port, "rostrace_topic_publishes_total")?,
        takes: query(port, "rostrace_topic_takes_total")?,
        latency_p99: query(port, "rostrace_topic_latency_seconds{quantile=\"0.99\"}")?,
        pairs: query(port, "rostrace_pair_latency_seconds_count")?,
        pair_messages: query(port, "rostrace_pair_messages_total")?,
        pair_rate: query(port, "rostrace_pair_rate_hertz")?,
        up: query(port, "up{job=\"rostrace\"}")?,
        resets: query(port, "resets(rostrace_callback_duration_seconds_count[10m])")?,
    };
    // Both processes' callbacks counted, over three scrapes at least.
    let counted = |node: &str| seen.callbacks.iter().any(|r| label(r, "node") == node && value(r) > 0.0);
    let enough = scrapes.first().is_some_and(|r| value(r) >= 3.0);
    (enough && counted("/sensing/lidar") && counted("/control/actuator")).then_some(seen)
}

#[rostrace_testkit::needs(prometheus)]
#[test]
fn prometheus_scrapes_the_demo_followed_live() {
    if !require(rostrace_testkit::have("prometheus", "--version"), "prometheus") {
        return;
    }
    let dir = TempDir::new("live-prometheus");
    let (exporter, web) = (free_port(), free_port());
    let _prometheus = start_prometheus(&dir, exporter, web);
    let exe = env!("CARGO_BIN_EXE_rostrace");
    // Longer than the test waits: Ctrl-C ends it once Prometheus has the series.
    let script = format!(
        "{exe} demo --process sensing --duration 300 --domain 59 & \
         {exe} demo --process control --duration 300 --domain 59; wait"
    );
    let seen = RefCell::new(None);
    let mut live = rostrace();
    live.args(["live", "--window", "2", "--interval", "0.5", "-s", "s", "-p"])
        .arg(dir.path())
        .arg("--prometheus")
        .arg(format!("127.0.0.1:{exporter}"))
        .args(["--", "sh", "-c", &script]);
    let out = ctrl_c_when(&mut live, || {
        *seen.borrow_mut() = ask(web);
        seen.borrow().is_some()
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    let log = std::fs::read_to_string(dir.join("prometheus.log")).unwrap_or_default();
    let seen = seen.into_inner().unwrap_or_else(|| panic!("Prometheus never had the series\n{stderr}\n{log}"));
    assert!(stderr.contains(&format!("metrics at http://127.0.0.1:{exporter}/metrics")), "{stderr}");
    assert!(stderr.contains("recorded into"), "{stderr}");
    let target = format!("127.0.0.1:{exporter}");
    assert!(seen.up.iter().any(|r| label(r, "instance") == target && value(r) == 1.0), "{:?}", seen.up);
    // The demo's callbacks with their labels, counted.
    let callback = |node: &str, kind: &str, key: &str, v: &str| {
        seen.callbacks
            .iter()
            .any(|r| label(r, "node") == node && label(r, "kind") == kind && label(r, key) == v && value(r) > 0.0)
    };
    assert!(callback("/sensing/lidar", "timer", "period", "0.01"), "{:?}", seen.callbacks);
    assert!(callback("/sensing/lidar_filter", "subscription", "topic", "/sensing/points_raw"), "{:?}", seen.callbacks);
    assert!(callback("/control/actuator", "subscription", "topic", "/control/cmd_vel"), "{:?}", seen.callbacks);
    assert!(seen.callbacks.iter().all(|r| label(r, "job") == "rostrace" && !label(r, "symbol").is_empty()));
    // Topics: publishes and takes counted, a latency p99 over the window.
    let topic = |rs: &[Value], name: &str| rs.iter().any(|r| label(r, "topic") == name && value(r) > 0.0);
    assert!(topic(&seen.publishes, "/sensing/points_raw"), "{:?}", seen.publishes);
    assert!(topic(&seen.takes, "/sensing/points_raw"), "{:?}", seen.takes);
    assert!(topic(&seen.latency_p99, "/sensing/points_raw"), "{:?}", seen.latency_p99);
    // Each of the demo's publisher → subscriber pairs: latencies, messages and a rate.
    for (t, publisher, subscribers) in rostrace_demo::TOPICS {
        let pair = |rs: &[Value]| {
            rs.iter().any(|r| {
                label(r, "topic") == t
                    && label(r, "publisher") == publisher
                    && label(r, "subscriber") == subscribers[0]
                    && value(r) > 0.0
            })
        };
        assert!(pair(&seen.pairs), "{t}: {:?}", seen.pairs);
        assert!(pair(&seen.pair_messages), "{t}: {:?}", seen.pair_messages);
        assert!(pair(&seen.pair_rate), "{t}: {:?}", seen.pair_rate);
    }
    // The counters are totals: Prometheus never saw one go down.
    assert!(!seen.resets.is_empty() && seen.resets.iter().all(|r| value(r) == 0.0), "{:?}", seen.resets);
}

/// One scrape of the exporter at `port`: its time, or what went wrong (a second at most).
fn timed_scrape(port: u16) -> Result<Duration, String> {
    let start = Instant::now();
    let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(1))).map_err(|e| e.to_string())?;
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").map_err(|e| e.to_string())?;
    let mut out = String::new();
    s.read_to_string(&mut out).map_err(|e| format!("after {:?}: {e}", start.elapsed()))?;
    match out.starts_with("HTTP/1.1 200 OK\r\n") {
        true => Ok(start.elapsed()),
        false => Err(format!("answered {out:?}")),
    }
}

/// Whether the server closed `s` (it must be non-blocking).
fn closed(mut s: &TcpStream) -> bool {
    match s.read(&mut [0u8; 64]) {
        Ok(n) => n == 0,
        Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
    }
}

/// Eight scrapes of the exporter at `port`, half a second apart, while 20 connections are held
/// open without a request (each opened again when the server closes it) and one client sends
/// its request a byte a second: each scrape's time or error.
fn scrapes_while_stalled(port: u16) -> Vec<Result<Duration, String>> {
    let stop = AtomicBool::new(false);
    let connect = || {
        let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_nonblocking(true).unwrap();
        s
    };
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut idle: Vec<TcpStream> = (0..20).map(|_| connect()).collect();
            while !stop.load(Ordering::Relaxed) {
                for s in idle.iter_mut().filter(|s| closed(s)) {
                    *s = connect();
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        scope.spawn(|| {
            let mut slow = connect();
            let _ = slow.write_all(b"GET /metrics HTTP/1.1\r\n");
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_secs(1));
                if closed(&slow) || slow.write_all(b"X").is_err() {
                    slow = connect();
                    let _ = slow.write_all(b"GET /metrics HTTP/1.1\r\n");
                }
            }
        });
        std::thread::sleep(Duration::from_millis(300));
        let times = (0..8)
            .map(|_| {
                let t = timed_scrape(port);
                std::thread::sleep(Duration::from_millis(500));
                t
            })
            .collect();
        stop.store(true, Ordering::Relaxed);
        times
    })
}

/// `live --prometheus` answers each scrape within a second while clients hold connections open:
/// the server neither waits on one nor lets them fill it.
#[test]
fn scrapes_are_answered_while_clients_stall() {
    let dir = TempDir::new("live-prometheus-stall");
    let port = free_port();
    let mut live = rostrace();
    live.args(["live", "-s", "s", "-p"])
        .arg(dir.path())
        .arg("--prometheus")
        .arg(format!("127.0.0.1:{port}"))
        .args(["--", "sleep", "60"]);
    let times = RefCell::new(Vec::new());
    let out = ctrl_c_when(&mut live, || {
        // Once it serves.
        if timed_scrape(port).is_err() {
            return false;
        }
        *times.borrow_mut() = scrapes_while_stalled(port);
        true
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    let times = times.into_inner();
    assert_eq!(times.len(), 8, "the exporter never answered\n{stderr}");
    for (i, t) in times.iter().enumerate() {
        assert!(t.as_ref().is_ok_and(|d| *d < Duration::from_secs(1)), "scrape {i}: {t:?}\n{stderr}");
    }
}
