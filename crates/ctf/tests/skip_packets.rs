//! Passing over packets ([`TraceSet::skip_packets`]): the events of the packets not skipped are
//! those a reading of the whole set gives, the same in the same order, on one thread and on
//! several; the skipped packets' losses are still counted.

use rostrace_ctf::TraceSet;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// An event: name, time, stream file, packet offset.
type Ev = (String, Option<i64>, PathBuf, u64);

/// Each event, in the order read, and the events discarded by the tracer.
fn read(set: &TraceSet, jobs: usize) -> (Vec<Ev>, u64) {
    set.read().jobs(jobs).piped().run(|events| {
        let mut out = Vec::new();
        while let Some(r) = events.next() {
            if let Ok(ev) = r {
                out.push((ev.name().to_string(), ev.timestamp(), ev.stream_path().to_path_buf(), ev.packet_offset()));
            }
        }
        (out, events.discarded_events())
    })
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn skipped_packets_leave_the_other_events_as_they_were() {
    rostrace_testkit::needs_test_data!();
    let dir = rostrace_testkit::test_data().join("traces/caret-demos-e2e-jazzy");
    let (set, errors) = TraceSet::open(&[&dir]);
    assert!(errors.is_empty(), "{errors:?}");
    let (all, discarded) = read(&set, 1);
    let packets: BTreeSet<(PathBuf, u64)> = all.iter().map(|e| (e.2.clone(), e.3)).collect();
    assert!(packets.len() > 10, "{} packets", packets.len());
    // Every other packet.
    let skipped: BTreeSet<(PathBuf, u64)> = packets.iter().step_by(2).cloned().collect();
    let names = skipped.clone();
    let (mut set, _) = TraceSet::open(&[&dir]);
    set.skip_packets(move |path, offset, _| names.contains(&(path.to_path_buf(), offset)));
    let kept: Vec<_> = all.iter().filter(|e| !skipped.contains(&(e.2.clone(), e.3))).cloned().collect();
    assert!(kept.len() < all.len() && !kept.is_empty());
    for jobs in [1, 2] {
        let (events, d) = read(&set, jobs);
        assert_eq!(events, kept, "jobs {jobs}");
        assert_eq!(d, discarded, "jobs {jobs}");
    }

    // The packets that end before the middle of the trace: every event from the middle on is
    // read, in order, and fewer before it.
    let middle = all[all.len() / 2].1.unwrap();
    let (mut set, _) = TraceSet::open(&[&dir]);
    set.skip_packets(move |_, _, end| end.is_some_and(|e| e < middle));
    let (events, d) = read(&set, 1);
    let late: Vec<_> = all.iter().filter(|e| e.1.unwrap() >= middle).cloned().collect();
    let read_late: Vec<_> = events.iter().filter(|e| e.1.unwrap() >= middle).cloned().collect();
    assert_eq!(read_late, late);
    assert!(events.len() < all.len(), "{} of {} events read", events.len(), all.len());
    let mut it = all.iter();
    assert!(events.iter().all(|e| it.any(|a| a == e)), "not in the order of the whole reading");
    assert_eq!(d, discarded);
}

/// [`TraceSet::extract`]: the packets kept, written as traces of their own, read as the same
/// events (in the same order, as a reading that passes over the others gives them), with no
/// packet counted lost for those left out; LTTng's traces (a session of several processes)
/// and babeltrace2 reads them.
#[rostrace_testkit::needs(test_data)]
#[test]
fn extracted_packets_are_a_trace_of_the_events_kept() {
    rostrace_testkit::needs_test_data!();
    let dir = rostrace_testkit::test_data().join("traces/tum-autoware-carla");
    let (mut set, errors) = TraceSet::open(&[&dir]);
    assert!(errors.is_empty(), "{errors:?}");
    set.refresh();
    let (all, _) = read(&set, 1);
    let packets: BTreeSet<(PathBuf, u64)> = all.iter().map(|e| (e.2.clone(), e.3)).collect();
    // Every third packet left out, and every packet whose events are all before the middle but
    // the first of each file (which holds what LTTng declares first).
    let middle = all[all.len() / 2].1.unwrap();
    let mut last_of: std::collections::BTreeMap<(PathBuf, u64), i64> = Default::default();
    let mut first_of: std::collections::BTreeMap<PathBuf, u64> = Default::default();
    for e in &all {
        let t = last_of.entry((e.2.clone(), e.3)).or_insert(i64::MIN);
        *t = (*t).max(e.1.unwrap());
        let f = first_of.entry(e.2.clone()).or_insert(e.3);
        *f = (*f).min(e.3);
    }
    let mut left_out: BTreeSet<(PathBuf, u64)> = packets.iter().step_by(3).cloned().collect();
    left_out.extend(last_of.iter().filter(|(k, t)| **t < middle && first_of[&k.0] != k.1).map(|(k, _)| k.clone()));
    let left_out = std::sync::Arc::new(left_out);
    let out = rostrace_testkit::TempDir::new("extract");
    let dest = out.join("part");
    let l = left_out.clone();
    let keep = move |p: &std::path::Path, o: u64, _: Option<i64>| !l.contains(&(p.to_path_buf(), o));
    let done = set.extract(&dir, &dest, &keep).unwrap();
    assert_eq!(done.traces, set.traces.len());
    assert!(done.packets > 0);
    let expected: Vec<Ev> = all.iter().filter(|e| !left_out.contains(&(e.2.clone(), e.3))).cloned().collect();
    let (part, errors) = TraceSet::open(&[&dest]);
    assert!(errors.is_empty(), "{errors:?}");
    let (events, _) = read(&part, 1);
    let names = |v: &[Ev]| v.iter().map(|e| (e.0.clone(), e.1)).collect::<Vec<_>>();
    assert!(events.len() < all.len() && !events.is_empty());
    assert_eq!(names(&events), names(&expected));
    let summary = rostrace_ctf::summary::summarize(&part, &[], 1, &|_| {});
    assert_eq!(
        (summary.lost_packets, summary.discarded_events),
        (0, 0),
        "{:?}",
        &summary.losses[..3.min(summary.losses.len())]
    );
    assert!(summary.errors.is_empty(), "{:?}", summary.errors);
    if rostrace_testkit::require(rostrace_testkit::have("babeltrace2", "--version"), "babeltrace2") {
        let bt = std::process::Command::new("babeltrace2").arg(&dest).output().unwrap();
        let e = String::from_utf8_lossy(&bt.stderr);
        assert!(bt.status.success() && !e.contains("WARNING") && !e.contains("ERROR"), "{e}");
        assert_eq!(String::from_utf8_lossy(&bt.stdout).lines().count(), events.len());
    }
}
