//! An analysis of a late window that passes over the packets before it which hold no
//! initialization event ([`PacketIndex`]) gives the callbacks and topics of one that reads
//! them all.

use rostrace_analysis::PacketIndex;
use rostrace_analysis::{analyze_window, Bound, Window};
use rostrace_ctf::TraceSet;

#[rostrace_testkit::needs(test_data)]
#[test]
fn a_late_window_is_the_same_with_the_packets_before_it_passed_over() {
    rostrace_testkit::needs_test_data!();
    for name in ["caret-demos-e2e-2021", "tc-ros2-example2"] {
        let dir = rostrace_testkit::test_data().join("traces").join(name);
        let (mut set, errors) = TraceSet::open(&[&dir]);
        assert!(errors.is_empty(), "{errors:?}");
        let whole = analyze_window(&set, Window::default(), |_, _| {});
        let (b, e) = (whole.report.begin_ns.unwrap(), whole.report.end_ns.unwrap());
        let begin = b + (e - b) * 2 / 3;
        let window = Window { begin: Some(Bound::Absolute(begin)), end: None };
        let all = analyze_window(&set, window, |_, _| {}).report;

        let mut index = PacketIndex::new();
        index.learn(&mut set, 0);
        assert_eq!(index.events(), whole.report.events, "{name}: events read");
        index.skip_before(&mut set, begin);
        let skipping = analyze_window(&set, window, |_, _| {}).report;
        assert_eq!(json(&skipping.callbacks), json(&all.callbacks), "{name}: callbacks");
        assert_eq!(json(&skipping.topics), json(&all.topics), "{name}: topics");
        assert_eq!(skipping.discarded_events, all.discarded_events, "{name}");
        assert!(!all.callbacks.is_empty(), "{name}");
        // Fewer events were read: the analysis counts those inside the window only, so the
        // packets passed over are seen in the processes' counts.
        let read = |r: &rostrace_analysis::Report| r.processes.iter().map(|p| p.events).sum::<u64>();
        assert!(read(&skipping) < read(&all), "{name}: {} of {} events read", read(&skipping), read(&all));
    }
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap()
}
