//! The notes say what a trace lacks precisely: a CARET trace whose init events carry no version
//! field is not told it lacks the events, and callbacks whose runs were all cut by the trace's
//! edges are not taken for a client library without callback tracepoints.

use rostrace_analysis::Note;
use rostrace_ctf::write::{FieldDecl, FieldType, Payload};
#[path = "support/system.rs"]
mod system;
use system::{Sys, MS};

fn notes_of(s: Sys) -> Vec<Note> {
    let dir = rostrace_testkit::TempDir::new("notes");
    s.write(dir.path());
    let (set, errors) = rostrace_ctf::TraceSet::open(&[dir.path()]);
    assert!(errors.is_empty(), "{errors:?}");
    rostrace_analysis::analyze_traces(&set, |_, _| {}).report.notes
}

fn about<'a>(notes: &'a [Note], metric: &str) -> Vec<&'a Note> {
    notes.iter().filter(|n| n.metric == metric).collect()
}

#[test]
fn caret_init_events_without_a_version_are_named_for_what_they_lack() {
    let mut s = Sys::without_rcl_init();
    // An older CARET's caret_init: a clock offset, no distribution.
    let d = s.decl_mut().events.iter_mut().find(|e| e.name == "ros2_caret:caret_init").expect("caret_init declared");
    d.fields = vec![FieldDecl { name: "clock_offset".into(), ty: FieldType::I64 }];
    s.init_ev("ros2_caret:caret_init", Payload::new().i64(0));
    s.init_ev("ros2_caret:rcl_init", Payload::new().u64(0x10).i64(5));
    let n = s.node("caret_node");
    let timer = s.timer(n, 10 * MS);
    s.run(2, timer, 20 * MS, 21 * MS);
    let notes = notes_of(s);
    let distro = about(&notes, "ROS 2 distribution");
    assert_eq!(distro.len(), 1, "{notes:#?}");
    let note = distro[0];
    assert!(!note.reason.contains("recorded neither"), "{}", note.reason);
    assert_eq!(note.missing, ["rcl_init.version", "caret_init.distribution"]);
    assert!(note.reason.contains("without the field"), "{}", note.reason);
}

#[test]
fn a_process_without_init_events_is_told_to_start_tracing_earlier() {
    let mut s = Sys::without_rcl_init();
    let n = s.node("late");
    let timer = s.timer(n, 10 * MS);
    s.run(2, timer, 20 * MS, 21 * MS);
    let notes = notes_of(s);
    let distro = about(&notes, "ROS 2 distribution");
    assert_eq!(distro.len(), 1, "{notes:#?}");
    assert!(distro[0].reason.contains("recorded neither"), "{}", distro[0].reason);
    assert_eq!(distro[0].advice, "start tracing before the processes start");
}

#[test]
fn runs_cut_by_the_trace_edges_are_counted_not_blamed_on_the_client_library() {
    // Only a start: the trace ended during the run.
    let mut s = Sys::new();
    let n = s.node("slow");
    let timer = s.timer(n, 10 * MS);
    s.ev(20 * MS, 2, "ros2:callback_start", Payload::new().u64(timer).i32(0));
    let notes = notes_of(s);
    let cb = about(&notes, "callback duration");
    assert_eq!(cb.len(), 1, "{notes:#?}");
    assert!(!cb[0].reason.contains("client library"), "{}", cb[0].reason);
    assert!(cb[0].reason.contains("1 run(s) still running when the trace ended"), "{}", cb[0].reason);
    assert_eq!(cb[0].missing, ["callback_end"]);

    // Only an end: the run started before the trace did.
    let mut s = Sys::new();
    let n = s.node("early");
    let timer = s.timer(n, 10 * MS);
    s.ev(20 * MS, 2, "ros2:callback_end", Payload::new().u64(timer));
    let notes = notes_of(s);
    let cb = about(&notes, "callback duration");
    assert_eq!(cb.len(), 1, "{notes:#?}");
    assert!(cb[0].reason.contains("1 run(s) that started before the trace did"), "{}", cb[0].reason);
    assert_eq!(cb[0].missing, ["callback_start"]);
}

#[test]
fn a_process_without_callback_events_is_told_what_is_true_of_rclpy() {
    let mut s = Sys::new();
    s.node("python_node");
    let notes = notes_of(s);
    let cb = about(&notes, "callback duration");
    assert_eq!(cb.len(), 1, "{notes:#?}");
    assert!(cb[0].reason.contains("neither callback_start nor callback_end"), "{}", cb[0].reason);
    assert!(!cb[0].reason.contains("before Jazzy"), "{}", cb[0].reason);
    assert!(cb[0].reason.contains("rclpy, which has none in any release"), "{}", cb[0].reason);
}

#[test]
fn timers_no_node_made_are_not_taken_for_timers_without_periods() {
    // An instrumented rclpy process: its node's subscription is registered with its callback,
    // and `spin_once(timeout_sec=...)` made a timer no node owns (rcl_timer_init only).
    let with_subscription = |s: &mut Sys| {
        let n = s.node("py_node");
        let sub = s.subscription(n, "/chatter");
        s.run(2, sub.callback, 20 * MS, 21 * MS);
    };
    let mut s = Sys::new();
    with_subscription(&mut s);
    let h = s.addr();
    s.init_ev("ros2:rcl_timer_init", Payload::new().u64(h).i64(10 * MS as i64));
    assert!(about(&notes_of(s), "timer jitter").is_empty());

    // Without the callbacks' registrations (not instrumented), a timer's period cannot be
    // linked: said.
    let mut s = Sys::new();
    s.node("py_node");
    let h = s.addr();
    s.init_ev("ros2:rcl_timer_init", Payload::new().u64(h).i64(10 * MS as i64));
    assert_eq!(about(&notes_of(s), "timer jitter").len(), 1);
}

/// A message taken before it was published (an event recorded after the call it times, or
/// clocks that differ across hosts) gives a latency below zero: never shown without a warning
/// that says why, and never for a trace whose latencies are all positive.
#[test]
fn a_latency_below_zero_is_said_with_its_causes() {
    let run = |take_before: bool| {
        let mut s = Sys::new();
        let (a, b) = (s.node("talker"), s.node("listener"));
        let p = s.publisher(a, "/chatter");
        let sub = s.subscription(b, "/chatter");
        for i in 0..5u64 {
            let t = 100 * MS + i * 10 * MS;
            // The take at `t`; the publication 1 ms later, or 1 ms earlier.
            let src = s.publish(2, p, if take_before { t + MS } else { t - MS });
            s.deliver(3, sub, src, t, MS / 10);
        }
        let dir = rostrace_testkit::TempDir::new("negative");
        s.write(dir.path());
        let (set, _) = rostrace_ctf::TraceSet::open(&[dir.path()]);
        rostrace_analysis::analyze_traces(&set, |_, _| {}).report.warnings
    };
    let warned = run(true);
    let w: Vec<&String> = warned.iter().filter(|w| w.contains("below zero")).collect();
    assert!(!w.is_empty(), "{warned:?}");
    assert!(w.iter().all(|w| w.contains("/chatter") && w.contains("placement") && w.contains("clocks")), "{w:?}");
    assert!(run(false).iter().all(|w| !w.contains("below zero")));
}
