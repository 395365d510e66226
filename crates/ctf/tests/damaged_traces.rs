//! Damaged inputs: truncated stream files and corrupted bytes give errors that name the file
//! and a byte offset, deliver the events before the damage, and never panic.

use rostrace_ctf::{Error, TraceSet};
use std::path::{Path, PathBuf};

/// The shared test data (`$ROSTRACE_TEST_DATA`, else `../shared` beside the repository).
use rostrace_testkit::test_data as shared;

/// Copies the trace directory into a fresh temporary directory, writable.
fn copy_trace(src: &Path, name: &str) -> PathBuf {
    let dst = std::env::temp_dir().join(format!("rostrace-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dst);
    rostrace_testkit::copy_writable(src, &dst);
    dst
}

/// Reads everything; returns the number of events and the errors.
fn read_all(dir: &Path) -> (usize, Vec<Error>) {
    let (set, mut errors) = TraceSet::open(&[dir]);
    let mut n = 0;
    let mut events = set.events();
    while let Some(r) = events.next() {
        match r {
            Ok(ev) => {
                n += 1;
                for s in [ev.stream_context(), ev.event_context(), ev.payload()].into_iter().flatten() {
                    for (_, v) in s.iter() {
                        std::hint::black_box(v);
                    }
                }
            }
            Err(e) => errors.push(e),
        }
    }
    (n, errors)
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn truncated_stream_file_keeps_earlier_events() {
    rostrace_testkit::needs_test_data!();
    let src = shared().join("traces/tc-ros2-example2");
    let (full, errs) = read_all(&src);
    assert!(errs.is_empty(), "{errs:?}");
    let dir = copy_trace(&src, "truncated");
    let victim = dir.join("ros2_0");
    let len = std::fs::metadata(&victim).unwrap().len();
    let cut = len / 2 + 13;
    let f = std::fs::OpenOptions::new().write(true).open(&victim).unwrap();
    f.set_len(cut).unwrap();
    drop(f);
    let (n, errs) = read_all(&dir);
    assert!(n > 0 && n < full, "{n} of {full}");
    assert_eq!(errs.len(), 1, "{errs:?}");
    // A file cut inside a packet is one whose end is not written yet.
    match &errs[0] {
        Error::Truncated { path, offset, message } => {
            assert_eq!(path, &victim);
            assert_eq!(*offset, cut);
            let text = errs[0].to_string();
            assert!(text.contains("ros2_0") && text.contains(&format!("byte {offset}")), "{text}: {message}");
        }
        e => panic!("unexpected error {e}"),
    }
    // The other streams and the earlier packets of the damaged one are all there.
    let lost_at_most = full - n;
    assert!(lost_at_most < full / 2, "lost {lost_at_most} of {full}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A stream file that ends inside its last packet's padding, as one still being written: every
/// event is delivered, then the error of its own kind, `Error::Truncated`, with the text of a
/// stream error.
#[rostrace_testkit::needs(test_data)]
#[test]
fn incomplete_last_packet_is_a_truncated_error() {
    rostrace_testkit::needs_test_data!();
    let src = shared().join("traces/tc-ros2-example2");
    let (full, _) = read_all(&src);
    let dir = copy_trace(&src, "incomplete");
    let victim = dir.join("ros2_0");
    let len = std::fs::metadata(&victim).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&victim).unwrap().set_len(len - 1).unwrap();
    let (n, errs) = read_all(&dir);
    assert_eq!(n, full);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].is_truncated(), "{:?}", errs[0]);
    assert_eq!(errs[0].path(), victim);
    let text = errs[0].to_string();
    let head = format!("{}: cannot decode at byte {}: file truncated: packet at byte ", victim.display(), len - 1);
    assert!(text.starts_with(&head) && text.ends_with(" bytes but the file ends first"), "{text}");
    // The other errors are not of that kind.
    let (_, errs) = read_all(&shared().join("ctf-edge/tc-ctf-sequence-empty"));
    assert!(errs.iter().all(|e| !e.is_truncated()), "{errs:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Where the last packet of `file` (a stream file of the trace in `dir`) starts, where its
/// content ends (bytes), and how many events it holds.
fn last_packet(dir: &Path, file: &Path) -> (u64, u64, usize) {
    let (set, _) = TraceSet::open(&[dir]);
    let mut events = set.events();
    let (mut at, mut end, mut n) = (0, 0, 0);
    while let Some(r) = events.next() {
        let Ok(ev) = r else { continue };
        if ev.stream_path() != file {
            continue;
        }
        if ev.packet_offset() != at || n == 0 {
            let ctx = ev.packet_context().expect("LTTng packets have a context");
            let content = ctx.field("content_size").and_then(|v| v.as_u64()).expect("content_size");
            (at, end, n) = (ev.packet_offset(), ev.packet_offset() + content / 8, 0);
        }
        n += 1;
    }
    (at, end, n)
}

/// A stream file that ends inside its last event, or inside its last packet's header, as one
/// being written can: the events before are delivered, then one `Error::Truncated` at the
/// file's end (not an error of damaged data).
#[rostrace_testkit::needs(test_data)]
#[test]
fn file_ending_inside_an_event_or_a_header_is_truncated() {
    rostrace_testkit::needs_test_data!();
    let src = shared().join("traces/tc-ros2-example2");
    let (full, _) = read_all(&src);
    let (at, end, in_last) = last_packet(&src, &src.join("ros2_0"));
    assert!(in_last > 1 && end > at, "{at} {end} {in_last}");
    // Inside the last event (one byte short of it), then inside the header (in its uuid).
    for (cut, lost) in [(end - 1, 1), (at + 8, in_last)] {
        let dir = copy_trace(&src, &format!("cut-{cut}"));
        let victim = dir.join("ros2_0");
        std::fs::OpenOptions::new().write(true).open(&victim).unwrap().set_len(cut).unwrap();
        let (n, errs) = read_all(&dir);
        assert_eq!(n, full - lost, "cut at {cut}");
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].is_truncated(), "cut at {cut}: {:?}", errs[0]);
        let text = errs[0].to_string();
        let head = format!("{}: cannot decode at byte {cut}: file truncated: packet at byte {at} ", victim.display());
        assert!(text.starts_with(&head) && text.ends_with(" but the file ends first"), "{text}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn truncated_metadata_is_an_error_with_offset() {
    rostrace_testkit::needs_test_data!();
    let src = shared().join("traces/rosworld2021-pingpong");
    let dir = copy_trace(&src, "meta");
    let meta = rostrace_ctf::find_traces(&dir).unwrap()[0].join("metadata");
    let len = std::fs::metadata(&meta).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&meta).unwrap().set_len(len / 2 + 50).unwrap();
    let (n, errs) = read_all(&dir);
    assert_eq!(n, 0);
    assert_eq!(errs.len(), 1);
    let text = errs[0].to_string();
    assert!(text.contains("metadata") && text.contains("byte"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `metadata` file of garbage, or an empty one, is named as not CTF metadata, at byte 0;
/// the other traces of the set are still read.
#[rostrace_testkit::needs(test_data)]
#[test]
fn metadata_that_is_not_ctf_is_an_error_with_offset() {
    rostrace_testkit::needs_test_data!();
    let src = shared().join("traces/rosworld2021-pingpong");
    for (case, content) in [("garbage", &b"\x7fELF\x02\x01\x01 garbage"[..]), ("empty", &b""[..])] {
        let dir = copy_trace(&src, &format!("not-ctf-{case}"));
        let meta = rostrace_ctf::find_traces(&dir).unwrap()[0].join("metadata");
        std::fs::write(&meta, content).unwrap();
        let check = |e: &Error| match e {
            Error::NotMetadata { path, offset, message } => {
                assert_eq!(path, &meta);
                assert_eq!(*offset, 0);
                let want = if content.is_empty() { "empty" } else { "starts with 7f 45 4c 46" };
                assert!(message.contains(want), "{message}");
                assert!(e.to_string().starts_with(&format!("{}: not CTF metadata at byte 0: ", meta.display())));
            }
            other => panic!("{case}: {other}"),
        };
        check(&rostrace_ctf::find_traces(&dir).unwrap_err());
        check(&rostrace_ctf::find_traces(&meta).unwrap_err());
        let (set, errs) = TraceSet::open(&[&dir, &shared().join("ctf-edge/tc-ctf-sequence-empty")]);
        assert_eq!(errs.len(), 1);
        check(&errs[0]);
        assert_eq!(set.traces.len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Corrupts bytes at pseudo-random places of a stream file and of the metadata: never a panic.
#[rostrace_testkit::needs(test_data)]
#[test]
fn corrupted_bytes_never_panic() {
    rostrace_testkit::needs_test_data!();
    let src = shared().join("traces/rosworld2021-pingpong");
    let dir = copy_trace(&src, "corrupt");
    let tdir = rostrace_ctf::find_traces(&dir).unwrap()[0].clone();
    let stream = std::fs::read_dir(&tdir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("ros2_"))
        .expect("a stream file");
    let original = std::fs::read(&stream).unwrap();
    let meta_path = tdir.join("metadata");
    let meta = std::fs::read(&meta_path).unwrap();
    let mut rng = rostrace_testkit::XorShift(0x2545_F491_4F6C_DD1D);
    let mut next = move || rng.next_u64();
    for round in 0..150 {
        let mut data = original.clone();
        for _ in 0..1 + next() % 8 {
            let i = (next() % data.len() as u64) as usize;
            data[i] = next() as u8;
        }
        std::fs::write(&stream, &data).unwrap();
        let mut m = meta.clone();
        if round % 5 == 0 {
            let i = (next() % m.len() as u64) as usize;
            m[i] = next() as u8;
        }
        std::fs::write(&meta_path, &m).unwrap();
        let r = std::panic::catch_unwind(|| read_all(&dir));
        assert!(r.is_ok(), "panic on corruption round {round}");
        for e in r.unwrap().1 {
            assert!(e.to_string().contains("byte") || matches!(e, Error::Io { .. }), "{e}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A copy of tc-ros2-example2 whose stream `ros2_0` (18 packets of 32 KiB, LTTng's layout) has
/// byte `at` of its packet 5 XORed with `mask`; the number of events of the original, the first
/// and last event times, and the path of the damaged file.
fn damage(name: &str, at: usize, mask: u8) -> (PathBuf, usize, (i64, i64), PathBuf) {
    let src = shared().join("traces/tc-ros2-example2");
    let (full, errs) = read_all(&src);
    assert!(errs.is_empty(), "{errs:?}");
    let span = times(&src).0;
    let dir = copy_trace(&src, name);
    let victim = dir.join("ros2_0");
    let mut data = std::fs::read(&victim).unwrap();
    data[5 * 32768 + at] ^= mask;
    std::fs::write(&victim, &data).unwrap();
    (dir, full, span, victim)
}

/// (first, last) event time, whether the merged events are in time order, the losses.
fn times(dir: &Path) -> ((i64, i64), bool, Vec<rostrace_ctf::Loss>) {
    let (set, _) = TraceSet::open(&[dir]);
    let mut events = set.events();
    let (mut first, mut last, mut ordered) = (None, i64::MIN, true);
    while let Some(r) = events.next() {
        if let Ok(ev) = r {
            let t = ev.timestamp().unwrap();
            first.get_or_insert(t);
            ordered &= t >= last;
            last = t;
        }
    }
    ((first.unwrap(), last), ordered, events.losses().to_vec())
}

fn the_error(errs: &[Error], victim: &Path, offset: u64, what: &str) {
    assert_eq!(errs.len(), 1, "{errs:?}");
    match &errs[0] {
        Error::Stream { path, offset: o, message } => {
            assert_eq!(path, victim);
            assert_eq!(*o, offset, "{message}");
            assert!(message.contains(what), "{message}");
        }
        e => panic!("unexpected error {e}"),
    }
}

/// A flipped bit in a packet's `timestamp_begin` (34 s off): an error naming the file and the
/// packet, the packet's events left out (their times derive from it), the others in time
/// order, the trace's time range unchanged.
#[rostrace_testkit::needs(test_data)]
#[test]
fn a_damaged_packet_time_is_an_error_and_time_stays_ordered() {
    rostrace_testkit::needs_test_data!();
    let (dir, full, span, victim) = damage("packet-time", 32 + 4, 1 << 3);
    let (n, errs) = read_all(&dir);
    the_error(&errs, &victim, 5 * 32768, "timestamp_begin");
    assert!(n < full && n > full - 32768 / 20, "{n} of {full}");
    let (range, ordered, losses) = times(&dir);
    assert!(ordered, "events out of time order");
    assert_eq!(range, span);
    assert!(losses.is_empty(), "{losses:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A flipped byte in `packet_seq_num` or `events_discarded`: an error naming the file and the
/// packet; every event still read; no loss made up (2^48 packets, 2^40 events).
#[rostrace_testkit::needs(test_data)]
#[test]
fn damaged_loss_counters_are_errors_not_losses() {
    rostrace_testkit::needs_test_data!();
    for (name, at, what) in [("seq", 64 + 6, "packet_seq_num"), ("discarded", 72 + 5, "events_discarded")] {
        let (dir, full, span, victim) = damage(name, at, 0x5a);
        let (n, errs) = read_all(&dir);
        the_error(&errs, &victim, 5 * 32768, what);
        assert_eq!(n, full, "{name}");
        let (range, ordered, losses) = times(&dir);
        assert!(ordered && range == span, "{name}");
        assert!(losses.is_empty(), "{name}: {losses:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A copy of caret-demos-e2e-jazzy (2,880 events; `ros2_1` holds 2 packets of 32 and 24 KiB),
/// its stream directory.
fn jazzy(name: &str) -> (PathBuf, PathBuf) {
    let dir = copy_trace(&shared().join("traces/caret-demos-e2e-jazzy"), name);
    let streams = rostrace_ctf::find_traces(&dir).unwrap()[0].clone();
    (dir, streams)
}

/// A stream file copied beside the trace's others (`cp ros2_1 ros2_1.bak`, or a copy whose
/// name comes first, or a shorter copy) is not read twice: one `Error::Duplicate` naming the
/// copy, at byte 0, and the one it copies; the events are those of the trace without it.
#[test]
fn a_copied_stream_file_is_read_once_with_an_error() {
    rostrace_testkit::needs_test_data!();
    let (full, errs) = read_all(&shared().join("traces/caret-demos-e2e-jazzy"));
    assert!(errs.is_empty() && full == 2880, "{full} {errs:?}");
    // (copy's name, its length: whole, or its first packet only; which file is not read)
    for (name, len, skipped) in
        [("ros2_1.bak", None, "ros2_1.bak"), ("0copy", None, "ros2_1"), ("ros2_1.part", Some(32768), "ros2_1.part")]
    {
        let (dir, streams) = jazzy(&format!("copy-{name}"));
        let original = std::fs::read(streams.join("ros2_1")).unwrap();
        std::fs::write(streams.join(name), &original[..len.unwrap_or(original.len())]).unwrap();
        let (n, errs) = read_all(&dir);
        assert_eq!(n, full, "{name}");
        assert_eq!(errs.len(), 1, "{name}: {errs:?}");
        match &errs[0] {
            Error::Duplicate { path, of, bytes, message } => {
                assert_eq!(path, &streams.join(skipped), "{name}");
                let kept = if skipped == "ros2_1" { name } else { "ros2_1" };
                assert_eq!(of, &streams.join(kept), "{name}");
                assert_eq!(*bytes, if skipped == "ros2_1.part" { 32768 } else { original.len() as u64 });
                assert!(message.contains("stream_instance_id 1, packet_seq_num 0, timestamp_begin "), "{message}");
                let text = errs[0].to_string();
                assert!(text.starts_with(&format!("{}: not read at byte 0: a copy of ", path.display())), "{text}");
            }
            e => panic!("{name}: unexpected error {e}"),
        }
        let (set, _) = TraceSet::open(&[&dir]);
        assert_eq!(set.traces[0].streams.len(), 12, "{name}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A copy that appears beside a trace being followed is found by the refresh that finds it,
/// once; its events are not read.
#[test]
fn a_stream_file_copied_while_followed_is_reported_once() {
    rostrace_testkit::needs_test_data!();
    let (dir, streams) = jazzy("copy-refresh");
    let (mut set, errs) = TraceSet::open(&[&dir]);
    assert!(errs.is_empty(), "{errs:?}");
    std::fs::copy(streams.join("ros2_4"), streams.join("ros2_4~")).unwrap();
    let errs = set.refresh();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(matches!(&errs[0], Error::Duplicate { path, .. } if path == &streams.join("ros2_4~")), "{errs:?}");
    assert!(set.refresh().is_empty());
    let mut n = 0;
    let mut events = set.events();
    while let Some(r) = events.next() {
        r.unwrap();
        n += 1;
    }
    assert_eq!(n, 2880);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The events of the first packet of `file` in the trace at `dir`.
fn in_first_packet(dir: &Path, file: &Path) -> usize {
    let (set, _) = TraceSet::open(&[dir]);
    let mut events = set.events();
    let mut n = 0;
    while let Some(r) = events.next() {
        let ev = r.unwrap();
        n += usize::from(ev.stream_path() == file && ev.packet_offset() == 0);
    }
    n
}

/// A stream file whose magic has a bit or two flipped (in the trace's byte order or the other),
/// or one named as the trace's streams are whose first bytes are lost, is a damaged stream, not
/// another file: an error naming it at byte 0 and what is skipped. Where the packet's size
/// leads to another packet, only that packet is skipped; otherwise the whole file.
#[test]
fn a_stream_file_with_a_damaged_magic_is_an_error() {
    rostrace_testkit::needs_test_data!();
    let src = shared().join("traces/caret-demos-e2e-jazzy");
    let streams = rostrace_ctf::find_traces(&src).unwrap()[0].clone();
    let first = in_first_packet(&src, &streams.join("ros2_1"));
    assert!(first > 0 && first < 2880, "{first}");
    let whole = read_all(&src).0 - read_all_but(&src, "ros2_1");
    // (case, the first 4 bytes of ros2_1 (c1 1f fc c1 as written), events lost, what is said)
    let cases: [(&str, [u8; 4], usize, &str); 4] = [
        ("one bit", [0xc3, 0x1f, 0xfc, 0xc1], first, "the packet's 32768 bytes are skipped"),
        ("two bits", [0xc1, 0x1f, 0xfc, 0x41 ^ 0x02], first, "the packet's 32768 bytes are skipped"),
        ("other order", [0xc1, 0xfc, 0x1f, 0xc0], first, "the packet's 32768 bytes are skipped"),
        ("zeroed", [0, 0, 0, 0], first, "the packet's 32768 bytes are skipped"),
    ];
    for (case, head, lost, said) in cases {
        let (dir, streams) = jazzy(&format!("magic-{}", case.replace(' ', "-")));
        let victim = streams.join("ros2_1");
        let mut data = std::fs::read(&victim).unwrap();
        data[..4].copy_from_slice(&head);
        std::fs::write(&victim, &data).unwrap();
        let (n, errs) = read_all(&dir);
        the_error(&errs, &victim, 0, "bad packet magic");
        assert!(errs[0].to_string().ends_with(said), "{case}: {}", errs[0]);
        assert_eq!(n, 2880 - lost, "{case}");
        let _ = std::fs::remove_dir_all(&dir);
    }
    // The packet's size damaged too: nothing tells where packets are; the whole file is skipped.
    let (dir, streams) = jazzy("magic-and-size");
    let victim = streams.join("ros2_1");
    let mut data = std::fs::read(&victim).unwrap();
    data[0] ^= 0x02;
    data[0x38 + 1] ^= 0x10;
    std::fs::write(&victim, &data).unwrap();
    let (n, errs) = read_all(&dir);
    the_error(&errs, &victim, 0, "bad packet magic");
    let said = format!("the rest of the file, {} bytes, is skipped", data.len());
    assert!(errs[0].to_string().ends_with(&said), "{}", errs[0]);
    assert_eq!(n, 2880 - whole);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The events of the trace at `dir` that are not in its stream file `name`.
fn read_all_but(dir: &Path, name: &str) -> usize {
    let (set, _) = TraceSet::open(&[dir]);
    let mut events = set.events();
    let mut n = 0;
    while let Some(r) = events.next() {
        n += usize::from(r.unwrap().stream_path().file_name().unwrap() != name);
    }
    n
}

/// Files beside a trace's streams that are not streams (notes, a cache, a marker, a file that
/// starts 3 bits away from the magic, one whose name has no stream number) are left out quietly.
#[test]
fn other_files_beside_the_streams_are_left_out_quietly() {
    rostrace_testkit::needs_test_data!();
    let (dir, streams) = jazzy("strangers");
    for (name, data) in [
        ("notes.txt", &b"ros2_1 was slow\n"[..]),
        ("converted", &b"\x00\x01\x02\x03 cache"[..]),
        (".rostrace-marker", &b"x"[..]),
        ("three_bits", &[0xc1 ^ 0x07, 0x1f, 0xfc, 0xc1, 0, 0, 0, 0][..]),
        ("ros2_1.csv", &b"a,b\n1,2\n"[..]),
        ("chan_3", &b"not a stream of this trace"[..]),
    ] {
        std::fs::write(streams.join(name), data).unwrap();
    }
    let (n, errs) = read_all(&dir);
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(n, 2880);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Replaces `from` in the file at `path` by `to`, padded with spaces to its length (the
/// metadata's packets keep their sizes).
fn rewrite(path: &Path, from: &str, to: &str) {
    assert!(to.len() <= from.len(), "{to}");
    let mut data = std::fs::read(path).unwrap();
    let at = data.windows(from.len()).position(|w| w == from.as_bytes()).unwrap_or_else(|| panic!("{from}"));
    data[at..at + from.len()].copy_from_slice(format!("{to:<w$}", w = from.len()).as_bytes());
    std::fs::write(path, data).unwrap();
}

/// A clock whose times cannot be ns from the origin in a signed 64-bit integer (a `freq` far
/// below the one the streams count in, an `offset` near the end of the range, an `offset_s`
/// past it) would put every event at 2262-04-11 (babeltrace2 refuses such a trace): the clock
/// is refused, with an error naming the metadata file and the clock at its declaration, and
/// the events are read without a time.
#[test]
fn a_clock_that_overflows_is_refused_and_events_have_no_time() {
    rostrace_testkit::needs_test_data!();
    const FREQ: &str = "freq = 1000000000;";
    const OFFSET: &str = "offset = 1655772632839550660;";
    let past = "the first packet of ros2_0 begins past that (timestamp_begin 1034";
    let out_of_range = "its offset of 1655772632839550 s from the origin is out of that range";
    for (case, rewrites, what) in [
        // The offset, in cycles, is then 1.6e15 s.
        ("freq", &[(FREQ, "freq = 1000;")][..], out_of_range),
        ("freq, no offset", &[(FREQ, "freq = 1000;"), (OFFSET, "offset = 0;")][..], past),
        ("offset", &[(OFFSET, "offset = 9223372000000000000;")][..], past),
        ("offset_s", &[(OFFSET, "offset_s = 9300000000;")][..], "offset of 9300000000 s from the origin is out"),
    ] {
        let (dir, streams) = jazzy(&format!("clock-{}", case.replace([' ', ','], "-")));
        let meta = streams.join("metadata");
        for (from, to) in rewrites {
            rewrite(&meta, from, to);
        }
        let text = std::fs::read(&meta).unwrap();
        let clock = text.windows(7).position(|w| w == b"clock {").unwrap() as u64;
        let (set, errs) = TraceSet::open(&[&dir]);
        assert_eq!(errs.len(), 1, "{case}: {errs:?}");
        match &errs[0] {
            Error::Metadata { path, offset, message } => {
                assert_eq!(path, &meta, "{case}");
                assert_eq!(*offset, clock, "{case}: {message}");
                assert!(message.starts_with("clock `monotonic`") && message.contains(what), "{case}: {message}");
                assert!(message.ends_with("the events of its streams are read without a time"), "{message}");
            }
            e => panic!("{case}: unexpected error {e}"),
        }
        let (mut n, mut timed) = (0, 0);
        let mut events = set.events();
        while let Some(r) = events.next() {
            n += 1;
            timed += usize::from(r.unwrap().timestamp().is_some());
        }
        assert_eq!((n, timed), (2880, 0), "{case}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A packet, or an event, whose time overflows past the first packet (a damaged timestamp):
/// an error naming the file and the packet; the events before and after are read, in order.
#[test]
fn a_packet_time_past_the_clock_range_is_an_error() {
    rostrace_testkit::needs_test_data!();
    // timestamp_end of ros2_0's packet 5 with its top byte set: 2^63 cycles and more.
    let (dir, full, span, victim) = damage("packet-end-overflow", 40 + 7, 0x80);
    let (n, errs) = read_all(&dir);
    the_error(&errs, &victim, 5 * 32768, "timestamp_end");
    assert!(errs[0].to_string().contains("is past the last time clock `monotonic` can give"), "{}", errs[0]);
    assert!(n < full && n > full - 32768 / 20, "{n} of {full}");
    let (range, ordered, _) = times(&dir);
    assert!(ordered && range == span);
    let _ = std::fs::remove_dir_all(&dir);
}
