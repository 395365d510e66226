//! The pass reports how far it has read now and then, and that it has read everything once it
//! has (a reader reports only now and then: the last report of the reading may come before its
//! end), in one pass and in one split over threads.

use rostrace_analysis::Processor;
use rostrace_testkit::test_data as shared;

fn reports(trace: &str, jobs: usize) -> (Vec<(u64, u64)>, u64) {
    let (set, errors) = rostrace_ctf::TraceSet::open(&[shared().join(trace)]);
    assert!(errors.is_empty(), "{errors:?}");
    let mut p = Processor::standard();
    p.set_jobs(jobs);
    let mut calls = Vec::new();
    p.analyze(&set, Default::default(), |d, total| calls.push((d, total)));
    (calls, set.total_bytes())
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn the_pass_reports_its_progress_and_its_end() {
    rostrace_testkit::needs_test_data!();
    // 683,756 events in one trace; 15 traces shared out over two threads.
    for (trace, jobs) in
        [("traces/tum-autoware-carla", 1), ("traces/tum-autoware-carla", 2), ("traces/caret-analyze-samples", 2)]
    {
        let (calls, total) = reports(trace, jobs);
        assert_eq!(calls.last(), Some(&(total, total)), "{trace} -j {jobs}: {calls:?}");
        assert!(calls.windows(2).all(|w| w[0].0 <= w[1].0), "{trace} -j {jobs}: {calls:?}");
        if trace.ends_with("carla") {
            let before: Vec<_> = calls.iter().filter(|c| 0 < c.0 && c.0 < total).collect();
            assert!(before.len() >= 5, "-j {jobs}: reports while reading: {calls:?}");
        }
    }
}
