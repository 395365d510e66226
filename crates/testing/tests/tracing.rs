//! `rostrace_testing`: a real traced process (python/tests/timer_node.py, a timer node through
//! the C ABI with libtracetools.so preloaded) is recorded and analyzed; the assertions pass on
//! what it did, and each fails with the value the analysis measured and the limit.

use rostrace_testing::{Callback, Path, Topic, Traced, Tracing};
use rostrace_testkit::{have, require, TempDir};
use std::process::Command;
use std::time::Duration;

const TIMER_NODE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/tests/timer_node.py");

/// The timer node's 20 runs, recorded and analyzed (`None`: no python3, said in one line).
fn ticked(dir: &TempDir) -> Option<Traced> {
    if !require(have("python3", "--version"), "python3") {
        return None;
    }
    let lib = rostrace_session::find_library().expect("libtracetools.so beside the test");
    let options = rostrace_session::Options {
        distro: Some(tracetools::distro::by_name("jazzy").unwrap()),
        rclpy: false,
        ..Default::default()
    };
    let mut t = Tracing::with_options(dir.join("trace"), &options, &lib).unwrap();
    assert!(t.run(Command::new("python3").arg(TIMER_NODE).arg("20")).unwrap().success());
    Some(t.finish().unwrap())
}

/// The message of the panic of `f`, which must panic.
fn panic_of(f: impl FnOnce()) -> String {
    let e = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).expect_err("the assertion passed");
    e.downcast_ref::<String>().cloned().unwrap_or_default()
}

#[rostrace_testkit::needs(python3)]
#[test]
fn assertions_pass_on_a_traced_process_and_fail_with_the_measured_value() {
    let dir = TempDir::new("testing-ticker");
    let Some(t) = ticked(&dir) else { return };
    let cb = t.analysis.report.callbacks.iter().find(|c| &*c.node == "/ticker").expect("the timer's callback");
    assert_eq!(
        (cb.symbol.as_ref(), cb.timer_period_ns, cb.duration_ns.count),
        ("Ticker::on_tick", Some(100_000_000), 20)
    );

    let ms = Duration::from_millis;
    let passed = t.assert_callback(
        Callback::node("/ticker").timer_period(ms(100)).runs_at_least(20).p50_below(ms(50)).max_below(ms(1000)),
    );
    assert_eq!(passed.len(), 3);
    assert_eq!(passed[0].measured, Some(20.0));
    t.assert_no_drops();

    let said = panic_of(|| {
        t.assert_callback(Callback::node("/ticker").runs_at_least(21));
    });
    assert!(said.contains("callback /ticker: runs 20 (at least 21)"), "{said}");
    assert!(said.contains(&t.dir.display().to_string()), "{said}");
    // The value in the message is the analysis's own.
    let said = panic_of(|| {
        t.assert_callback(Callback::node("/ticker").symbol("on_tick").p99_below(Duration::from_micros(1)));
    });
    let p99 = rostrace_analysis::check::units::human_duration(cb.duration_ns.p99 as f64);
    let want = format!("callback /ticker symbol /on_tick/: duration p99 {p99} (at most 1.0 us)");
    assert!(said.contains(&want), "{said}\nwanted: {want}");
    // What is not in the trace fails, saying why.
    let said = panic_of(|| {
        t.assert_callback(Callback::node("/other"));
    });
    assert!(said.contains("callback /other: runs not in the trace: no such callback"), "{said}");
    let said = panic_of(|| {
        t.assert_topic(Topic::new("/cmd").latency_p99_below(ms(5)));
    });
    assert!(said.contains("topic /cmd: latency p99 not in the trace"), "{said}");
    let said = panic_of(|| {
        t.assert_path(Path::through(["/ticker", "/other"]));
    });
    assert!(said.contains("path /ticker,/other: latency max not in the trace"), "{said}");
}

#[test]
fn nothing_recorded_is_an_error() {
    let dir = TempDir::new("testing-empty");
    let lib = dir.join("libtracetools.so");
    let t = Tracing::with_options(dir.join("trace"), &Default::default(), &lib).unwrap();
    let e = t.finish().err().expect("an empty recording");
    assert!(e.contains("nothing was recorded"), "{e}");
}
