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

/// Each item of a reading, in order: an event (name, time, stream file, packet offset) or an
/// error (its text).
fn items(set: &TraceSet, jobs: usize) -> (Vec<Ev>, Vec<String>, u64) {
    set.read().jobs(jobs).piped().run(|events| {
        let (mut out, mut errors) = (Vec::new(), Vec::new());
        while let Some(r) = events.next() {
            match r {
                Ok(ev) => out.push((
                    format!("{}#{}", ev.name(), ev.class().index),
                    ev.timestamp(),
                    ev.stream_path().to_path_buf(),
                    ev.packet_offset(),
                )),
                Err(e) => errors.push(e.to_string()),
            }
        }
        errors.sort();
        (out, errors, events.discarded_events())
    })
}

/// Compares a reading of `dir` that passes over the events of odd class indices before the
/// middle with one of everything; returns whether the recording has read errors (`None`: none
/// of its events is passed over).
fn passed_over_as_read(dir: &std::path::Path) -> Option<bool> {
    let (set, _) = TraceSet::open(&[dir]);
    let (all, errors, discarded) = items(&set, 1);
    let middle = all.get(all.len() / 2).and_then(|e| e.1)?;
    let keep: Vec<Vec<bool>> = set.traces.iter().map(|t| t.schema.per_class(|ec| ec.index.is_multiple_of(2))).collect();
    let odd = |e: &Ev| e.0.rsplit('#').next().unwrap().parse::<usize>().unwrap() % 2 == 1;
    let kept: Vec<Ev> = all.iter().filter(|e| !(odd(e) && e.1.is_some_and(|t| t < middle))).cloned().collect();
    if kept.len() == all.len() {
        return None;
    }
    let (mut set, _) = TraceSet::open(&[dir]);
    set.pass_over_events(rostrace_ctf::EventFilter { before_ns: middle, all_before_ns: i64::MIN, keep });
    for jobs in [1, 2] {
        let (events, errs, d) = items(&set, jobs);
        assert_eq!(events, kept, "{}: jobs {jobs}", dir.display());
        assert_eq!(errs, errors, "{}: jobs {jobs}", dir.display());
        assert_eq!(d, discarded, "{}: jobs {jobs}", dir.display());
    }
    // And every event before a quarter of them passed over, whatever its class.
    let quarter = all.get(all.len() / 4).and_then(|e| e.1)?;
    let keep: Vec<Vec<bool>> = set.traces.iter().map(|t| t.schema.per_class(|ec| ec.index.is_multiple_of(2))).collect();
    set.pass_over_events(rostrace_ctf::EventFilter { before_ns: middle, all_before_ns: quarter, keep });
    let later: Vec<Ev> = kept.iter().filter(|e| e.1.is_none_or(|t| t >= quarter)).cloned().collect();
    for jobs in [1, 2] {
        assert_eq!(items(&set, jobs).0, later, "{}: jobs {jobs}, all before a quarter passed over", dir.display());
    }
    set.clear_packet_filter();
    assert_eq!(items(&set, 1).0, all, "{}: every event again", dir.display());
    Some(!errors.is_empty())
}

/// [`TraceSet::pass_over_events`]: the events before a time of the classes not kept are not
/// given; the others are, as a reading of everything gives them, in its order, on one thread
/// and on several; the errors and losses are the same, in damaged recordings too (bytes of a
/// recording changed at random).
#[rostrace_testkit::needs(test_data)]
#[test]
fn events_passed_over_leave_the_others_and_the_errors_as_they_were() {
    rostrace_testkit::needs_test_data!();
    let data = rostrace_testkit::test_data();
    let mut dirs = vec![data.join("traces/caret-demos-e2e-jazzy"), data.join("traces/tum-autoware-carla")];
    let mut edges: Vec<PathBuf> =
        std::fs::read_dir(data.join("ctf-edge")).unwrap().flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    edges.sort();
    dirs.extend(edges);
    let checked = dirs.iter().filter_map(|d| passed_over_as_read(d)).count();
    assert!(checked >= 10, "{checked} recordings");

    let src = data.join("traces/tc-ros2-example2");
    let tmp = rostrace_testkit::TempDir::new("passed-over");
    let mut rng = rostrace_testkit::XorShift(0x9E37_79B9_7F4A_7C15);
    let mut damaged = 0;
    for round in 0..8 {
        let dir = tmp.join(format!("r{round}"));
        rostrace_testkit::copy_writable(&src, &dir);
        let victim = dir.join("ros2_0");
        let mut bytes = std::fs::read(&victim).unwrap();
        for _ in 0..24 {
            let i = (rng.next_u64() % bytes.len() as u64) as usize;
            bytes[i] ^= rng.next_u64() as u8 | 1;
        }
        std::fs::write(&victim, &bytes).unwrap();
        damaged += usize::from(passed_over_as_read(&dir) == Some(true));
    }
    // Packets whose content is cut inside their last event (LTTng's layout: the content size,
    // in bits, is at byte 48 of a packet): that event is read up to the cut, passed over or not.
    for (round, packet) in (0..6).enumerate() {
        let dir = tmp.join(format!("cut{round}"));
        rostrace_testkit::copy_writable(&src, &dir);
        let victim = dir.join("ros2_0");
        let mut bytes = std::fs::read(&victim).unwrap();
        let at = packet * 32768 + 48;
        let bits = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        bytes[at..at + 8].copy_from_slice(&(bits - 8 * (1 + round as u64 % 3)).to_le_bytes());
        std::fs::write(&victim, &bytes).unwrap();
        damaged += usize::from(passed_over_as_read(&dir) == Some(true));
    }
    assert!(damaged >= 10, "{damaged} of 14 damaged copies read with errors");
}
