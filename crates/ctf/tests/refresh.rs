//! A set kept open on a recording being written ([`TraceSet::refresh`]): after each refresh it
//! reads exactly what a set opened afresh reads (new stream files, new traces, metadata that
//! grew, stream files that grew, a last packet still being written), each packet is indexed
//! once, and a reading that passes over the old packets reads only the headers of the others.

use rostrace_ctf::write::*;
use rostrace_ctf::TraceSet;
use rostrace_testkit::TempDir;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn field(name: &str, ty: FieldType) -> FieldDecl {
    FieldDecl { name: name.into(), ty }
}

/// A trace declaring the first `events` of three event classes.
fn decl(events: usize) -> TraceDecl {
    let all = vec![
        EventDecl { name: "ros2:a".into(), fields: vec![field("x", FieldType::U64)] },
        EventDecl { name: "ros2:b".into(), fields: vec![field("y", FieldType::I64), field("s", FieldType::String)] },
        EventDecl { name: "ros2:c".into(), fields: vec![field("z", FieldType::U64)] },
    ];
    TraceDecl {
        uuid: *b"rostrace-refresh",
        clock_offset_ns: 1_763_000_000_000_000_000,
        clock_uuid: [3; 16],
        env: vec![("domain".into(), "ust".into()), ("hostname".into(), "test".into())],
        events: all.into_iter().take(events).collect(),
    }
}

/// A stream of `n` events in small packets, the third class's from event `c_from` on, with
/// events discarded on the way.
fn stream(cpu: u32, n: u64, c_from: u64) -> Vec<u8> {
    let d = decl(3);
    let mut w = StreamWriter::new(Vec::new(), d.uuid, cpu as u64, cpu, 4096);
    let mut ts = 1_000 + cpu as u64;
    for i in 0..n {
        let mut p = Payload::new();
        let id = match i % 3 {
            0 => {
                p.u64(i);
                0
            }
            1 => {
                p.i64(-(i as i64)).string(format!("s{i}").as_bytes());
                1
            }
            _ if i >= c_from => {
                p.u64(i * 7);
                2
            }
            _ => {
                p.u64(i + 1);
                0
            }
        };
        w.event(id, ts, 10, 20 + cpu as i32, b"proc", &p.bytes).unwrap();
        if i % 97 == 0 {
            w.discard(2, ts);
        }
        ts += 10_000;
    }
    w.finish().unwrap()
}

/// An event: name, time, stream file, packet offset.
type Ev = (String, Option<i64>, PathBuf, u64);

/// Each event read, and the events discarded.
fn events(set: &TraceSet) -> (Vec<Ev>, u64) {
    let mut it = set.events();
    let mut out = Vec::new();
    while let Some(r) = it.next() {
        if let Ok(e) = r {
            out.push((e.name().to_string(), e.timestamp(), e.stream_path().to_path_buf(), e.packet_offset()));
        }
    }
    (out, it.discarded_events())
}

fn append(path: &Path, bytes: &[u8]) {
    use std::io::Write as _;
    std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap().write_all(bytes).unwrap();
}

/// The metadata as LTTng writes it: packets appended as event classes are declared.
fn metadata_packets(from: usize, to: usize) -> Vec<u8> {
    let (small, full) = (metadata_text(&decl(from)), metadata_text(&decl(to)));
    assert!(full.starts_with(&small));
    let text = if from == 0 { full } else { full[small.len()..].to_string() };
    packetize_metadata(&text, &decl(3).uuid)
}

#[test]
fn a_refreshed_set_reads_what_a_fresh_one_reads() {
    let tmp = TempDir::new("ctf-refresh");
    let (t1, t2) = (tmp.join("ust/a"), tmp.join("ust/b"));
    std::fs::create_dir_all(&t1).unwrap();
    let (s0, s1, s2) = (stream(0, 3000, 2000), stream(1, 2000, 1500), stream(0, 900, 0));
    // First: trace a's metadata without the third class, half of one stream (cut inside a
    // packet), no other stream, no trace b.
    append(&t1.join("metadata"), &metadata_packets(0, 2));
    let cut = s0.len() / 2 + 100;
    append(&t1.join("chan_0"), &s0[..cut]);
    let (mut set, errors) = TraceSet::open(&[tmp.path()]);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(set.refresh().is_empty());
    let first = set.packets_indexed();
    assert!(first > 5, "{first} packets");
    let (fresh, _) = TraceSet::open(&[tmp.path()]);
    let (before, _) = events(&fresh);
    assert!(!before.is_empty());
    assert_eq!(events(&set), events(&fresh));
    // Nothing new: nothing indexed.
    assert!(set.refresh().is_empty());
    assert_eq!(set.packets_indexed(), first);

    // Then: the rest of the stream, the metadata grown, a new stream file, a new trace.
    append(&t1.join("metadata"), &metadata_packets(2, 3));
    append(&t1.join("chan_0"), &s0[cut..]);
    append(&t1.join("chan_1"), &s1);
    std::fs::create_dir_all(&t2).unwrap();
    append(&t2.join("metadata"), &metadata_packets(0, 3));
    append(&t2.join("chan_0"), &s2);
    assert!(set.refresh().is_empty());
    let (mut fresh, errors) = TraceSet::open(&[tmp.path()]);
    assert!(errors.is_empty(), "{errors:?}");
    let (all, discarded) = events(&fresh);
    assert!(all.iter().any(|e| e.0 == "ros2:c") && all.len() > before.len());
    assert!(discarded > 0);
    assert_eq!(events(&set), (all.clone(), discarded));
    assert_eq!(set.traces.len(), 2);

    // Each packet was indexed once, but for the one cut in two, examined again.
    fresh.refresh();
    assert_eq!(set.packets_indexed(), fresh.packets_indexed() + 1);

    // A reading that passes over the packets ending before the middle reads the others'
    // headers only, and the same events as a set that reads every header.
    let middle = all[all.len() / 2].1.unwrap();
    let (mut unindexed, _) = TraceSet::open(&[tmp.path()]);
    for s in [&mut set, &mut unindexed] {
        s.skip_packets(move |_, _, end| end.is_some_and(|e| e < middle));
    }
    let (read_before, indexed_before) = (set.packets_read(), unindexed.packets_read());
    let (late, d) = events(&set);
    assert_eq!((late.clone(), d), events(&unindexed));
    assert!(late.len() < all.len());
    let packets: BTreeSet<(PathBuf, u64)> = late.iter().map(|e| (e.2.clone(), e.3)).collect();
    assert_eq!(set.packets_read() - read_before, packets.len() as u64);
    assert!(unindexed.packets_read() - indexed_before > packets.len() as u64);
}

/// Pages given back after a reading ([`TraceSet::release_pages`]) are read from the files again:
/// the next reading reads the same events.
#[test]
fn a_set_that_gave_its_pages_back_reads_the_same() {
    let tmp = TempDir::new("ctf-release");
    let t = tmp.join("ust/a");
    std::fs::create_dir_all(&t).unwrap();
    append(&t.join("metadata"), &metadata_packets(0, 3));
    append(&t.join("chan_0"), &stream(0, 3000, 100));
    append(&t.join("chan_1"), &stream(1, 2000, 0));
    let (set, errors) = TraceSet::open(&[tmp.path()]);
    assert!(errors.is_empty(), "{errors:?}");
    let before = events(&set);
    assert_eq!(before.0.len(), 5000);
    set.release_pages();
    assert_eq!(events(&set), before);
}

/// Runs of packets passed over, joined into one index entry each ([`TraceSet::join_passed_over`])
/// as a window moves on over a recording being written: readings read the same events and
/// losses, and the same packet headers, as a set whose index keeps an entry per packet, and
/// the index keeps an entry per run, not per packet.
#[test]
fn joined_runs_read_as_the_packets_they_join() {
    let tmp = TempDir::new("ctf-join");
    let t = tmp.join("ust/a");
    std::fs::create_dir_all(&t).unwrap();
    append(&t.join("metadata"), &metadata_packets(0, 3));
    let (s0, s1) = (stream(0, 4000, 100), stream(1, 3000, 0));
    let (c0, c1) = (s0.len() / 2 + 100, s1.len() / 2);
    append(&t.join("chan_0"), &s0[..c0]);
    append(&t.join("chan_1"), &s1[..c1]);
    let (mut joined, _) = TraceSet::open(&[tmp.path()]);
    let (mut plain, _) = TraceSet::open(&[tmp.path()]);
    let mut gone = 0;
    for step in 0..2 {
        if step == 1 {
            append(&t.join("chan_0"), &s0[c0..]);
            append(&t.join("chan_1"), &s1[c1..]);
        }
        for s in [&mut joined, &mut plain] {
            assert!(s.refresh().is_empty());
        }
        let (all, _) = events(&plain);
        // The window: the last third of what is there.
        let begin = all[all.len() * 2 / 3].1.unwrap();
        for s in [&mut joined, &mut plain] {
            s.skip_packets(move |_, _, end| end.is_some_and(|e| e < begin));
        }
        gone += joined.join_passed_over();
        assert!(gone > 0);
        assert_eq!(joined.index_entries() + gone, plain.index_entries());
        let (read_joined, read_plain) = (joined.packets_read(), plain.packets_read());
        let (late, discarded) = events(&joined);
        assert!(discarded > 0 && late.len() < all.len());
        let (want, want_discarded) = events(&plain);
        assert!(late == want, "step {step}: {} events read, {} without joining", late.len(), want.len());
        assert_eq!(discarded, want_discarded, "step {step}");
        assert_eq!(joined.packets_read() - read_joined, plain.packets_read() - read_plain);
        // One entry for each file's run before the window, one for each packet after.
        let packets: BTreeSet<(PathBuf, u64)> = late.iter().map(|e| (e.2.clone(), e.3)).collect();
        assert!(joined.index_entries() <= packets.len() + 2, "{} entries", joined.index_entries());
    }
    // The filter off: every event again.
    for s in [&mut joined, &mut plain] {
        s.clear_packet_filter();
    }
    assert!(events(&joined) == events(&plain));
}

/// A set indexed as a window moves through it ([`TraceSet::index_until`], what a streamed
/// analysis does) reads, at each window, what a set indexed whole at once reads, indexes each
/// packet once, and holds about the window's packets in its index, not the recording's.
#[test]
fn an_index_made_as_the_window_moves_reads_as_one_made_at_once() {
    let tmp = TempDir::new("ctf-index-until");
    let t = tmp.join("ust/a");
    std::fs::create_dir_all(&t).unwrap();
    append(&t.join("metadata"), &metadata_packets(0, 3));
    append(&t.join("chan_0"), &stream(0, 6000, 100));
    append(&t.join("chan_1"), &stream(1, 5000, 0));
    let (mut moving, _) = TraceSet::open(&[tmp.path()]);
    let (mut whole, _) = TraceSet::open(&[tmp.path()]);
    assert!(whole.refresh().is_empty());
    let (all, _) = events(&whole);
    let (first, last) = (all[0].1.unwrap(), all.last().unwrap().1.unwrap());
    let step = (last - first) / 8;
    let mut most = 0;
    for k in 1..8 {
        let (begin, end) = (first + k * step, first + (k + 1) * step);
        moving.index_until(end);
        for s in [&mut moving, &mut whole] {
            s.skip_packets(move |_, _, e| e.is_some_and(|e| e < begin));
        }
        moving.join_passed_over();
        most = most.max(moving.index_entries());
        let (got, got_discarded) = events(&moving);
        let (want, want_discarded) = events(&whole);
        assert!(got == want, "window {k}: {} events read, {} from the whole index", got.len(), want.len());
        assert_eq!(got_discarded, want_discarded, "window {k}");
    }
    moving.index_until(i64::MAX);
    assert_eq!(moving.packets_indexed(), whole.packets_indexed(), "each packet indexed once");
    // A window's packets (an eighth of each file's) and one entry per file for what is behind.
    assert!(most * 4 < whole.index_entries(), "{most} entries of {}", whole.index_entries());
    for s in [&mut moving, &mut whole] {
        s.clear_packet_filter();
    }
    assert!(events(&moving) == events(&whole));
}
