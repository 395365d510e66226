//! Read throughput against babeltrace2, on the same trace in the same run.
//!
//! `cargo bench -p rostrace-ctf --bench read [-- TRACE]` (default: `../shared/traces/tum-autoware-carla`).
//! rostrace decodes every field of every event (walking each value) and counts events per
//! name, in time order, on one core and then with a second thread decoding ahead; babeltrace2
//! reads the trace with `-o dummy` (decodes everything, prints nothing).

use rostrace_ctf::{FieldValue, StructRef, TraceSet};
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

fn touch(s: &StructRef, acc: &mut u64) {
    for (_, v) in s.iter() {
        touch_value(&v, acc);
    }
}

fn touch_value(v: &FieldValue, acc: &mut u64) {
    match v {
        FieldValue::U64(x) => *acc = acc.wrapping_add(*x),
        FieldValue::I64(x) => *acc = acc.wrapping_add(*x as u64),
        FieldValue::Enum { value, .. } => *acc = acc.wrapping_add(*value as u64),
        FieldValue::F64(x) => *acc = acc.wrapping_add(x.to_bits()),
        FieldValue::Str(b) => *acc = acc.wrapping_add(b.len() as u64),
        FieldValue::Struct(s) => touch(s, acc),
        FieldValue::Array(a) => a.iter().for_each(|e| touch_value(&e, acc)),
    }
}

/// One full read: (events, checksum, per-name counts). Every field is always decoded; with
/// `walk`, every value is also visited through the value API.
fn read_once(trace: &PathBuf, walk: bool, jobs: usize) -> (u64, u64, usize) {
    let (set, errors) = TraceSet::open(&[trace]);
    assert!(errors.is_empty(), "{errors:?}");
    let mut counts: Vec<Vec<u64>> = set.traces.iter().map(|t| vec![0; t.schema.event_classes().count()]).collect();
    let (n, acc) = set.read().jobs(jobs).decode_ahead().run(|events| {
        let (mut n, mut acc) = (0u64, 0u64);
        while let Some(ev) = events.next() {
            let ev = ev.expect("decodable trace");
            n += 1;
            counts[ev.trace_index()][ev.class().index] += 1;
            acc = acc.wrapping_add(ev.timestamp().unwrap_or(0) as u64);
            if walk {
                for s in [ev.stream_context(), ev.event_context(), ev.payload()].into_iter().flatten() {
                    touch(&s, &mut acc);
                }
            }
        }
        (n, acc)
    });
    let names = counts.iter().flatten().filter(|c| **c > 0).count();
    (n, acc, names)
}

fn main() {
    let trace =
        std::env::args().skip(1).find(|a| !a.starts_with('-')).map(PathBuf::from).unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/tum-autoware-carla")
        });
    let runs = 7;
    let (n, _, names) = read_once(&trace, true, 1);
    let best = |walk: bool, jobs: usize| {
        let mut best = f64::MAX;
        for _ in 0..runs {
            let t = Instant::now();
            let (m, acc, _) = read_once(&trace, walk, jobs);
            let dt = t.elapsed().as_secs_f64();
            assert_eq!(m, n);
            std::hint::black_box(acc);
            best = best.min(dt);
        }
        best
    };
    let (decode, walk) = (best(false, 1), best(true, 1));
    let (decode2, walk2) = (best(false, 2), best(true, 2));
    println!("trace: {}", trace.display());
    println!(
        "rostrace:    {n} events ({names} event names), every field decoded: {:.1} ms = {:.2} M events/s (best of {runs})",
        decode * 1e3,
        n as f64 / decode / 1e6
    );
    println!(
        "rostrace:    same, and every value walked through the API: {:.1} ms = {:.2} M events/s",
        walk * 1e3,
        n as f64 / walk / 1e6
    );
    println!(
        "rostrace:    with 2 threads: {:.1} ms ({:.2}x), walking every value {:.1} ms ({:.2}x)",
        decode2 * 1e3,
        decode / decode2,
        walk2 * 1e3,
        walk / walk2
    );
    let bt = (0..3)
        .filter_map(|_| {
            let t = Instant::now();
            let st = Command::new("babeltrace2").args(["-o", "dummy"]).arg(&trace).status().ok()?;
            st.success().then(|| t.elapsed().as_secs_f64())
        })
        .fold(f64::MAX, f64::min);
    if bt == f64::MAX {
        println!("babeltrace2: not available; no ratio");
        return;
    }
    println!(
        "babeltrace2: {n} events in {:.1} ms (best of 3, -o dummy) = {:.2} M events/s",
        bt * 1e3,
        n as f64 / bt / 1e6
    );
    println!(
        "ratio:       rostrace reads {:.1}x as fast as babeltrace2 ({:.1}x walking every value); with 2 threads {:.1}x ({:.1}x)",
        bt / decode,
        bt / walk,
        bt / decode2,
        bt / walk2
    );
}
