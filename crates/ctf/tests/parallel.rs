//! Reading with workers (decoding ahead, or merging on another thread) gives what reading in one
//! thread gives: the same events (time, stream, packet, contexts, payload), errors and losses,
//! in the same order, on every trace in `../shared` and on damaged copies.

use rostrace_ctf::json::json_struct;
use rostrace_ctf::{Event, Events, StreamReader, TraceSet};
use std::path::{Path, PathBuf};

/// The shared test data (`$ROSTRACE_TEST_DATA`, else `../shared` beside the repository).
use rostrace_testkit::test_data as shared;

/// An event: time, stream, packet, contexts, payload.
fn line(ev: &Event) -> String {
    let mut out = Vec::new();
    for s in [ev.stream_context(), ev.event_context(), ev.payload(), ev.packet_context()].iter().flatten() {
        json_struct(&mut out, s);
    }
    format!(
        "{} {:?} {} {} {} {} {:?} {}",
        ev.name(),
        ev.timestamp(),
        ev.cycles(),
        ev.trace_index(),
        ev.stream_path().display(),
        ev.packet_offset(),
        ev.cpu_id(),
        String::from_utf8_lossy(&out)
    )
}

/// Everything the reader gives, one line each, and the number of events.
fn transcript(events: &mut Events) -> (Vec<String>, u64) {
    let mut lines = Vec::new();
    let mut n = 0u64;
    while let Some(r) = events.next() {
        match r {
            Err(e) => lines.push(format!("error {e}")),
            Ok(ev) => {
                n += 1;
                lines.push(line(&ev));
            }
        }
        // Losses as they are known at each step.
        if n.is_multiple_of(997) {
            lines.push(format!("losses {:?}", events.losses()));
        }
    }
    lines.push(format!("losses {:?} discarded {}", events.losses(), events.discarded_events()));
    (lines, n)
}

/// A writable copy of caret-demos-e2e-2021's trace at `dir`; false on a machine without the
/// shared traces (a failure when tools are required).
fn e2e_copy(dir: &Path) -> bool {
    let Some(src) = rostrace_testkit::test_data_path("traces/caret-demos-e2e-2021") else { return false };
    let found = rostrace_ctf::find_traces(&src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    rostrace_testkit::copy_writable(&found[0], dir);
    true
}

/// The data stream files of a trace directory, by name.
fn stream_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "metadata"))
        .collect();
    v.sort();
    v
}

/// Everything one reader gives of its file (or part of it), one line each.
fn file_transcript(r: &mut StreamReader) -> Vec<String> {
    let mut lines = Vec::new();
    loop {
        let res = r.advance();
        lines.extend(r.losses.drain(..).map(|l| format!("loss {l:?}")));
        match res {
            Ok(false) => break,
            Err(e) => lines.push(format!("error {e}")),
            Ok(true) => lines.extend(r.event().map(|ev| line(&ev))),
        }
    }
    lines
}

fn concat(mut a: Vec<String>, mut b: Vec<String>) -> Vec<String> {
    a.append(&mut b);
    a
}

/// Files cut into parts of `every` bytes give, part after part, what one reader of each file
/// gives, pages given back as read or not; returns how many parts were cut and how many read
/// again.
fn check_parts(paths: &[PathBuf], jobs: &[usize], every: &[u64]) -> (usize, usize) {
    let (mut set, _) = TraceSet::open(paths);
    let (whole, _) = set.map_streams_in_parts(1, u64::MAX, false, file_transcript, concat);
    // The parts' readers give pages back as they go (the traces here are below the default
    // budget, where nothing is given back while reading).
    set.set_resident_budget(0);
    let (mut parts, mut again) = (0, 0);
    for (&jobs, damaged_too) in jobs.iter().flat_map(|j| [(j, false), (j, true)]) {
        for &every in every {
            let counted = |mut a: (Vec<String>, usize), b: (Vec<String>, usize)| {
                a.0.extend(b.0);
                (a.0, a.1 + b.1)
            };
            let (par, redone) =
                set.map_streams_in_parts(jobs, every, damaged_too, |r| (file_transcript(r), 1), counted);
            again += redone;
            assert_eq!(whole.len(), par.len(), "{paths:?}: files");
            for (f, (a, (b, n))) in whole.iter().zip(&par).enumerate() {
                parts += n - 1;
                assert_eq!(a.len(), b.len(), "{paths:?} file {f}, {jobs} jobs, parts of {every} bytes");
                for (k, (x, y)) in a.iter().zip(b).enumerate() {
                    assert_eq!(x, y, "{paths:?} file {f}, {jobs} jobs, parts of {every} bytes: line {k}");
                }
            }
        }
    }
    (parts, again)
}

/// Each event's order in the merge, with its name and time (errors: 0).
fn orders(events: &mut Events) -> Vec<(u128, String)> {
    let mut out = Vec::new();
    while let Some((order, r)) = events.next_ordered() {
        out.push((order, r.map_or_else(|e| e.to_string(), |ev| format!("{} {:?}", ev.name(), ev.timestamp()))));
    }
    out
}

fn check(paths: &[PathBuf], jobs: &[usize]) -> u64 {
    let (mut set, _) = TraceSet::open(paths);
    let (seq, n) = transcript(&mut set.events());
    // Handed over merged from another thread: the same orders too.
    let seq_orders = orders(&mut set.events());
    assert_eq!(seq_orders, set.read().jobs(2).piped().run(orders), "{paths:?}: orders, piped");
    // With two integers of the stream context read on the reading thread: the same events in
    // the same orders, and the integers as the stream context gives them here.
    let with_ints = |events: &mut Events, names: [&'static str; 2], here: bool| {
        let mut out = Vec::new();
        while let Some((order, ints, r)) = events.next_ints() {
            let ints = match &r {
                // (One thread: none given, read here, as a taker does.)
                Ok(ev) if here => {
                    assert_eq!(ints, None);
                    ev.stream_context().map(|c| names.map(|n| c.ty().index_of(n).and_then(|i| c.u64_at(i))))
                }
                _ => ints,
            };
            out.push((
                order,
                r.map_or_else(|e| e.to_string(), |ev| format!("{} {:?}", ev.name(), ev.timestamp())),
                ints,
            ));
        }
        out
    };
    // (Two integers; an integer, and a string, which is no integer.)
    for names in [["vpid", "vtid"], ["vtid", "procname"]] {
        let piped = set.read().jobs(2).with_ints(names).run(|e| with_ints(e, names, false));
        let here = set.read().jobs(1).with_ints(names).run(|e| with_ints(e, names, true));
        assert_eq!(here, piped, "{paths:?}: integers {names:?}, piped");
        assert_eq!(
            seq_orders,
            piped.into_iter().map(|(o, e, _)| (o, e)).collect::<Vec<_>>(),
            "{paths:?}: orders, piped with integers"
        );
    }
    // A taker that stops early stops the reading thread.
    let errors = seq.iter().any(|l| l.starts_with("error"));
    assert_eq!(set.read().jobs(2).piped().run(|e| e.next().is_some()), n > 0 || errors, "{paths:?}: stopped early");
    // The workers give pages back as they go.
    set.set_resident_budget(0);
    for &jobs in jobs {
        for piped in [false, true] {
            let (par, _) = if piped {
                set.read().jobs(jobs).piped().run(transcript)
            } else {
                set.read().jobs(jobs).decode_ahead().run(transcript)
            };
            assert_eq!(seq.len(), par.len(), "{paths:?} with {jobs} jobs, piped: {piped}");
            for (k, (a, b)) in seq.iter().zip(&par).enumerate() {
                assert_eq!(a, b, "{paths:?} with {jobs} jobs, piped: {piped}: line {k}");
            }
        }
    }
    n
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn workers_read_every_shared_trace_as_one_thread_does() {
    rostrace_testkit::needs_test_data!();
    // The edge cases one by one, with more workers than streams and fewer.
    let Some(root) = rostrace_testkit::test_data_path("ctf-edge") else { return };
    let rd = std::fs::read_dir(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display()));
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    entries.sort();
    let mut total = 0;
    for p in &entries {
        total += check(std::slice::from_ref(p), &[2, 3, 8]);
    }
    // Files cut into parts, down to a packet each.
    let mut parts = 0;
    for p in &entries {
        parts += check_parts(std::slice::from_ref(p), &[2, 3], &[4096, 65536]).0;
    }
    parts += check_parts(&[shared().join("traces")], &[2], &[65536, 1 << 20]).0;
    assert!(parts > 1000, "{parts} parts");
    // Opening on several threads: the same traces and errors, in the same order.
    let (one, one_errors) = TraceSet::open(&[shared()]);
    let (many, many_errors) = TraceSet::open_jobs(&[shared()], 3);
    let dirs = |s: &TraceSet| s.traces.iter().map(|t| t.dir.clone()).collect::<Vec<_>>();
    let errors = |e: &[rostrace_ctf::Error]| e.iter().map(|e| e.to_string()).collect::<Vec<_>>();
    assert!(one.traces.len() > 20 && !one_errors.is_empty(), "{} traces", one.traces.len());
    assert_eq!(dirs(&one), dirs(&many));
    assert_eq!(errors(&one_errors), errors(&many_errors));
    // The ROS 2 traces all at once: streams of several traces interleave.
    let ros = check(&[shared().join("traces")], &[2, 8]);
    assert!(
        entries.len() >= 10 && total > 10_000 && ros > 500_000,
        "{} edge traces, {total} + {ros} events",
        entries.len()
    );
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn workers_pass_on_errors_and_losses_of_damaged_streams_in_place() {
    // A copy of a multi-stream trace with damage in several streams: a flipped packet begin, a
    // torn end, a counter that goes backwards.
    let tmp = rostrace_testkit::TempDir::new("parallel-damaged");
    let dir = tmp.join("t");
    if !e2e_copy(&dir) {
        return;
    }
    let streams = stream_files(&dir);
    let (set, _) = TraceSet::open(&[&dir]);
    assert!(set.traces[0].streams.len() >= 2);
    let mut damaged = 0;
    for (k, s) in streams.iter().enumerate() {
        let mut data = std::fs::read(s).unwrap();
        if data.len() < 4096 {
            continue;
        }
        match k % 3 {
            // Noise in the middle of the first packet's events.
            0 => {
                let at = data.len().min(4096) / 2;
                for b in &mut data[at..at + 64] {
                    *b ^= 0x5a;
                }
            }
            // Torn at an odd place.
            1 => data.truncate(data.len() - 777),
            // Noise in the second packet's context.
            _ => {
                let at = 4096 + 20;
                if data.len() > at + 16 {
                    for b in &mut data[at..at + 16] {
                        *b ^= 0xff;
                    }
                }
            }
        }
        // In the last stream, a packet_seq_num that jumps too far (packets of 8 KiB, the
        // number at byte 64 of each): a reader starting at the next packet would take it as it
        // is, a reader of the whole file as the number after the previous one.
        if k == streams.len() - 1 && data.len() > 6 * 8192 {
            data[3 * 8192 + 64 + 5] ^= 0x40;
        }
        std::fs::write(s, data).unwrap();
        damaged += 1;
    }
    assert!(damaged >= 2);
    let (set, _) = TraceSet::open(&[&dir]);
    let (seq, _) = transcript(&mut set.events());
    assert!(seq.iter().any(|l| l.starts_with("error")), "the damage is seen");
    check(std::slice::from_ref(&dir), &[2, 3, 8]);
    let (parts, again) = check_parts(&[dir], &[2, 3], &[4096, 16384]);
    assert!(parts > 10 && again > 0, "{parts} parts, {again} read again");
}

/// A writable copy of ctf-edge's tc-hello-lost (in a temporary directory named after `name`):
/// the directory, the trace in it, its large stream file (3.4 MB of 4 KiB packets) and that
/// file's bytes. `None` on a machine without the shared traces.
fn hello_lost_copy(name: &str) -> Option<(rostrace_testkit::TempDir, PathBuf, PathBuf, Vec<u8>)> {
    let src = rostrace_testkit::test_data_path("ctf-edge/tc-hello-lost")?;
    let tmp = rostrace_testkit::TempDir::new(name);
    let dir = tmp.join("t");
    rostrace_testkit::copy_writable(&src, &dir);
    let stream = dir.join("channel1_2");
    let original = std::fs::read(&stream).unwrap();
    Some((tmp, dir, stream, original))
}

/// Random damage (bytes flipped anywhere: headers, contexts, events), many times over: files
/// cut into parts still give what one reader per file gives, whether the parts start where the
/// whole file's reader is or have to be read again.
#[rostrace_testkit::needs(test_data)]
#[test]
fn parts_equal_whole_files_under_random_damage() {
    rostrace_testkit::needs_test_data!();
    let Some((_tmp, dir, stream, original)) = hello_lost_copy("parallel-random") else { return };
    let mut rng = rostrace_testkit::XorShift(0x9e37_79b9_7f4a_7c15);
    let mut next = move || rng.next_u64();
    let (mut parts, mut again) = (0, 0);
    for round in 0..24 {
        let mut data = original.clone();
        for _ in 0..1 + round % 4 {
            let at = (next() % data.len() as u64) as usize;
            // Often in a packet's first 128 bytes (header and context), else anywhere.
            let at = if next() % 2 == 0 { at / 4096 * 4096 + at % 128 } else { at };
            data[at] ^= 1 << (next() % 8);
        }
        std::fs::write(&stream, &data).unwrap();
        let (p, a) = check_parts(std::slice::from_ref(&dir), &[3], &[4096, 65536]);
        parts += p;
        again += a;
    }
    assert!(parts > 1000 && again > 0, "{parts} parts, {again} read again");
}

/// Readers of parts of a set (some traces each) give, put in order by their events' orders and
/// their errors' and losses' places, what one reader of the set gives: on a set of several
/// damaged copies of a trace (same times in every copy: ties broken by stream), lost events
/// and many traces.
#[rostrace_testkit::needs(test_data)]
#[test]
fn parts_of_a_set_merge_into_the_whole_set() {
    rostrace_testkit::needs_test_data!();
    let tmp = rostrace_testkit::TempDir::new("parallel-set");
    // The same damage in each copy: errors at the same times, put in order by stream.
    for k in 0..3 {
        let dir = tmp.join(format!("copy{k}"));
        if !e2e_copy(&dir) {
            return;
        }
        let mut rng = rostrace_testkit::XorShift(0x5eed_0004);
        for p in stream_files(&dir) {
            let mut data = std::fs::read(&p).unwrap();
            if data.len() > 8192 {
                for _ in 0..16 {
                    let at = rng.next_u64() as usize % data.len();
                    data[at] ^= 1 << (rng.next_u64() % 8);
                }
            }
            std::fs::write(&p, data).unwrap();
        }
    }
    let lost = shared().join("ctf-edge/tc-hello-lost");
    let samples = shared().join("traces/caret-analyze-samples");
    let (set, _) = TraceSet::open(&[tmp.join("copy0").parent().unwrap().to_path_buf(), lost, samples]);
    assert!(set.traces.len() > 10);
    let mut whole = Vec::new();
    let mut errors = Vec::new();
    let mut events = set.events();
    while let Some(r) = events.next() {
        match r {
            Ok(ev) => whole.push(line(&ev)),
            Err(e) => errors.push(e.to_string()),
        }
    }
    let losses: Vec<String> = events.losses().iter().map(|l| format!("{l:?}")).collect();
    assert!(!errors.is_empty() && !losses.is_empty(), "{} errors, {} losses", errors.len(), losses.len());
    for (parts, shift) in [(2, 0), (2, 1), (3, 2), (5, 4)] {
        let mut got = Vec::new();
        let (mut placed_errors, mut placed_losses) = (Vec::new(), Vec::new());
        for p in 0..parts {
            let mine: Vec<usize> = (0..set.traces.len()).filter(|t| (t + shift) % parts == p).collect();
            set.read().traces(&mine).run(|events| {
                while let Some((order, r)) = events.next_ordered() {
                    let ev = r.expect("errors are placed, not returned");
                    assert!(mine.contains(&ev.trace_index()));
                    got.push((order, line(&ev)));
                }
                placed_errors.extend(events.placed_errors().into_iter().map(|(at, e)| (at, e.to_string())));
                placed_losses.extend(events.placed_losses().into_iter().map(|(at, l)| (at, format!("{l:?}"))));
            });
        }
        got.sort_by_key(|g| g.0);
        assert!(got.windows(2).all(|w| w[0].0 < w[1].0), "orders are unique");
        placed_errors.sort_by_key(|e| e.0);
        placed_losses.sort_by_key(|l| l.0);
        assert!(got.into_iter().map(|g| g.1).eq(whole.iter().cloned()), "{parts} parts: events");
        assert!(placed_errors.into_iter().map(|e| e.1).eq(errors.iter().cloned()), "{parts} parts: errors");
        assert!(placed_losses.into_iter().map(|l| l.1).eq(losses.iter().cloned()), "{parts} parts: losses");
    }
    let first = whole.first().map(|l| l.split(' ').nth(1).unwrap_or("").to_string());
    assert_eq!(set.first_time().map(|t| format!("{t:?}")), first);
}

/// The integers of named stream context members read at positions kept per trace and type (as
/// the piped reading thread and the analysis read a process and thread id on every event) are
/// those read by name, on every event of every shared trace, members absent or not integers
/// included.
#[rostrace_testkit::needs(test_data)]
#[test]
fn context_integers_at_kept_positions_are_those_read_by_name() {
    rostrace_testkit::needs_test_data!();
    let (set, _) = TraceSet::open(&[shared()]);
    let what =
        format!("traces in {} (the shared test data; set ROSTRACE_TEST_DATA to its directory)", shared().display());
    if !rostrace_testkit::require(!set.traces.is_empty(), &what) {
        return;
    }
    let names = ["vpid", "vtid", "procname", "cpu_id", "no_such_member"];
    let mut kept = rostrace_ctf::TracePositions::new(names);
    let mut events = set.events();
    let (mut n, mut found) = (0u64, 0u64);
    while let Some(r) = events.next() {
        let Ok(ev) = r else { continue };
        let Some(ctx) = ev.stream_context() else { continue };
        let got = kept.u64s(ev.trace_index(), &ctx);
        let want = names.map(|name| ctx.field(name).and_then(|v| v.as_u64()));
        assert_eq!(got, want, "{} at {}", ev.stream_path().display(), ev.packet_offset());
        n += 1;
        found += got.iter().flatten().count() as u64;
    }
    assert!(n > 500_000 && found > n, "{n} events, {found} integers");
}

/// An index of a file of more than 1 MiB reads the packet headers from the file rather than
/// through its mapping ([`TraceSet::index_until`]). Under random damage, a reading that steps
/// over the indexed packets its filter passes over gives what one that reads their headers
/// gives: events, errors and losses.
#[rostrace_testkit::needs(test_data)]
#[test]
fn packets_stepped_over_by_an_index_of_headers_read_from_the_file_are_those_read() {
    rostrace_testkit::needs_test_data!();
    let Some((_tmp, dir, stream, original)) = hello_lost_copy("index-from-file") else { return };
    assert!(original.len() > 2 << 20, "{} bytes", original.len());
    let mut rng = rostrace_testkit::XorShift(0x2545_f491_4f6c_dd1d);
    let mut next = move || rng.next_u64();
    let mut stepped = 0;
    for round in 0..12 {
        let mut data = original.clone();
        for _ in 0..round % 4 {
            // In a packet's header and context (its first 128 bytes), where the index reads.
            let at = (next() % data.len() as u64) as usize / 4096 * 4096 + (next() % 128) as usize;
            data[at] ^= 1 << (next() % 8);
        }
        std::fs::write(&stream, &data).unwrap();
        let (mut indexed, _) = TraceSet::open(&[&dir]);
        indexed.index_until(i64::MAX);
        let (mut plain, _) = TraceSet::open(&[&dir]);
        for s in [&mut indexed, &mut plain] {
            s.skip_packets(|_, offset, _| (offset / 4096) % 3 != 0);
        }
        let want = transcript(&mut plain.events());
        assert_eq!(transcript(&mut indexed.events()), want, "round {round}");
        stepped += plain.packets_read() - indexed.packets_read();
    }
    assert!(stepped > 1000, "{stepped} packets stepped over");
}

/// The time of the last event of every event of `set`, read in order.
fn last_of_all(set: &TraceSet) -> Option<i64> {
    classes_of_all(set).0
}

/// The time of the last event of a reading of every event, and the events of each class (per
/// trace, by class index).
fn classes_of_all(set: &TraceSet) -> (Option<i64>, Vec<Vec<u64>>) {
    let mut events = set.events();
    let mut last = None;
    let mut classes: Vec<Vec<u64>> = set.traces.iter().map(|t| t.schema.per_class(|_| 0)).collect();
    while let Some(r) = events.next() {
        if let Ok(ev) = r {
            last = last.max(ev.timestamp());
            classes[ev.trace_index()][ev.class().index] += 1;
        }
    }
    (last, classes)
}

/// The time of a set's last event, read from each stream file's last packets, is the latest of
/// a reading of every event: on every shared trace and edge case, and on copies of
/// tc-hello-lost (4 KiB packets: its large file is read from a cut near its end) torn inside
/// their last packets.
#[rostrace_testkit::needs(test_data)]
#[test]
fn the_last_event_time_read_at_the_ends_of_the_files_is_that_of_every_event() {
    rostrace_testkit::needs_test_data!();
    let mut dirs = Vec::new();
    for sub in ["traces", "ctf-edge"] {
        let Some(root) = rostrace_testkit::test_data_path(sub) else { return };
        let rd = std::fs::read_dir(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display()));
        dirs.extend(rd.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
    }
    dirs.sort();
    let (mut with_time, mut whole) = (0, 0);
    for dir in &dirs {
        let (set, _) = TraceSet::open(std::slice::from_ref(dir));
        let (all, classes) = classes_of_all(&set);
        for jobs in [1, 3] {
            assert_eq!(set.last_time(jobs), all, "{}", dir.display());
            // The events of each class in the files' last packets: all of them where every file
            // is read whole (under 64 KiB), else no more than all.
            let tails = set.tails(jobs).classes;
            let small = set.traces.iter().flat_map(|t| &t.streams).all(|s| s.data().len() < 64 << 10);
            if small {
                assert_eq!(tails, classes, "{}", dir.display());
            }
            let within = tails.iter().flatten().zip(classes.iter().flatten()).all(|(t, a)| t <= a);
            assert!(within && tails.iter().flatten().sum::<u64>() > 0, "{}: {tails:?}", dir.display());
            whole += usize::from(small && jobs == 1);
        }
        with_time += usize::from(all.is_some());
    }
    assert!(dirs.len() > 20 && with_time > 20, "{} traces, {with_time} with times", dirs.len());
    assert!(whole > 5 && whole < dirs.len(), "{whole} of {} read whole", dirs.len());
    let Some((_tmp, dir, stream, original)) = hello_lost_copy("parallel-last-time") else { return };
    for cut in [1, 100, 777, 4000, 4096, 4097, 9000] {
        std::fs::write(&stream, &original[..original.len() - cut]).unwrap();
        let (set, _) = TraceSet::open(std::slice::from_ref(&dir));
        assert_eq!(set.last_time(2), last_of_all(&set), "cut {cut}");
    }
}
