//! A [`Follower`] follows a recording as it grows: a trace whose stream files are written in two
//! halves is seen half then whole, and its final analysis is that of the trace read at once.

use rostrace_analysis::{analyze_traces, Follower};
use rostrace_ctf::TraceSet;
use rostrace_testkit::TempDir;
use std::io::Write as _;
use std::time::Duration;

/// Appends `bytes` to the file `to`, as a tracer writing it does.
fn append(to: &std::path::Path, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(to).unwrap();
    f.write_all(bytes).unwrap();
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap()
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn a_recording_written_in_two_halves_is_followed_to_its_whole_analysis() {
    rostrace_testkit::needs_test_data!();
    let src = rostrace_testkit::test_data().join("traces/tc-ros2-example2");
    let (set, errors) = TraceSet::open(&[&src]);
    assert!(errors.is_empty(), "{errors:?}");
    let at_once = analyze_traces(&set, |_, _| {}).report;
    assert!(at_once.events > 0 && !at_once.callbacks.is_empty());

    let dir = TempDir::new("follow");
    let trace = dir.join("ust");
    std::fs::create_dir(&trace).unwrap();
    // Nothing written yet: nothing to analyse, and no error.
    let mut f = Follower::new(dir.path(), Duration::from_secs(3600));
    assert!(f.window(None).is_none());

    let mut rest = Vec::new();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            continue; // an index directory: not needed to read the trace
        }
        let bytes = std::fs::read(&p).unwrap();
        let name = p.file_name().unwrap().to_owned();
        if name == "metadata" {
            std::fs::write(trace.join(&name), &bytes).unwrap();
            continue;
        }
        // The first half ends inside a packet, as a file being written does.
        let half = bytes.len() / 2;
        append(&trace.join(&name), &bytes[..half]);
        rest.push((name, bytes[half..].to_vec()));
    }
    let first = f.window(None).expect("a trace is there");
    assert!(first.whole, "the first look is at the recording so far");
    let half_events = first.analysis.report.events;
    assert!(half_events > 0 && half_events < at_once.events, "{half_events} of {} events", at_once.events);
    assert_eq!(f.events_read(), 0, "no window yet: no packet learnt");

    for (name, bytes) in &rest {
        append(&trace.join(name), bytes);
    }
    // The window (an hour) holds the whole trace: the next look sees every event.
    let second = f.window(None).expect("the trace is still there");
    assert!(!second.whole);
    assert_eq!(second.analysis.report.events, at_once.events);
    assert_eq!(f.events_read(), at_once.events, "every packet learnt once");
    assert!(second.index_entries > 0);

    let whole = f.whole().expect("the finished recording");
    assert!(whole.whole);
    assert_eq!(whole.analysis.report.events, at_once.events);
    assert_eq!(json(&whole.analysis.report.callbacks), json(&at_once.callbacks));
    assert_eq!(json(&whole.analysis.report.topics), json(&at_once.topics));
    // What is settled never goes back, and stops before the last event.
    let end = whole.analysis.report.end_ns.unwrap();
    let settled = f.settled(&second.analysis, i64::MIN);
    assert!(settled < end, "{settled} not before {end}");
    assert_eq!(f.settled(&second.analysis, end), end);
}

/// A short window: looks after the first pass over the packets before it.
#[rostrace_testkit::needs(test_data)]
#[test]
fn a_short_window_passes_over_what_is_before_it() {
    rostrace_testkit::needs_test_data!();
    let src = rostrace_testkit::test_data().join("traces/tc-ros2-example2");
    let dir = TempDir::new("follow-short");
    rostrace_testkit::copy_writable(&src, &dir.join("ust"));
    let mut f = Follower::new(dir.path(), Duration::from_millis(200));
    let first = f.window(None).unwrap();
    let second = f.window(None).unwrap();
    assert!(first.whole && !second.whole);
    assert!(
        second.analysis.report.events < first.analysis.report.events,
        "{} events in a 200 ms window, {} in the trace",
        second.analysis.report.events,
        first.analysis.report.events
    );
    assert!(second.packets_read < first.packets_read, "{} then {}", first.packets_read, second.packets_read);
}
