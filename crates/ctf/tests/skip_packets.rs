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
