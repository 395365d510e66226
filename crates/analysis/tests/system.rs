//! The system handlers on a synthetic kernel trace and userspace trace of one host, every value
//! computed by hand: CPU time per thread (tracetools_analysis's definition), scheduling during
//! callback runs (time on and off CPU, preemptions, blocking), wake-up latency, message age.

use rostrace_analysis::system::{CpuTime, Memory, MessageAge, Scheduling};
use rostrace_analysis::Processor;
#[path = "support/kernel.rs"]
mod kernel;

use kernel::*;
use rostrace_ctf::write::*;
use std::path::Path;

/// Process 301: the libc wrapper's events.
fn build_memory(root: &Path) {
    let d = decl(
        &[
            ("lttng_ust_libc:malloc", &[("size", U64), ("ptr", P)]),
            ("lttng_ust_libc:calloc", &[("nmemb", U64), ("size", U64), ("ptr", P)]),
            ("lttng_ust_libc:realloc", &[("in_ptr", P), ("size", U64), ("ptr", P)]),
            ("lttng_ust_libc:free", &[("ptr", P)]),
        ],
        "ust",
        3,
    );
    let pl = |v: &[u64]| {
        let mut p = Payload::new();
        for x in v {
            p.u64(*x);
        }
        p.bytes
    };
    stream(
        &root.join("ust/pid/mem-301/64-bit"),
        &d,
        0,
        301,
        &mut [
            (1_000, 0, pl(&[100, 0x1000])),
            (2_000, 1, pl(&[3, 10, 0x2000])),
            (3_000, 2, pl(&[0x1000, 200, 0x3000])),
            (4_000, 3, pl(&[0x2000])),
            (5_000, 3, pl(&[0x9000])),
            (6_000, 2, pl(&[0, 50, 0x4000])),
            (7_000, 0, pl(&[999, 0])),
        ],
    );
}

fn build(root: &Path) {
    build_memory(root);
    let kernel = kernel();
    let k = root.join("kernel");
    // CPU 0: thread 300 runs callbacks; 400 preempts it; it blocks and is woken.
    stream(
        &k,
        &kernel,
        0,
        0,
        &mut [
            (500, 2, dump(300, 300)),
            (600, 2, dump(400, 400)),
            (1_000, 0, switch(0, 0, 300)),
            (5_000, 0, switch(300, 0, 400)),
            (8_000, 0, switch(400, 1, 300)),
            (10_000, 0, switch(300, 1, 0)),
            (14_000, 1, waking(300)),
            (15_500, 0, switch(0, 0, 300)),
            (16_000, 3, pages(true, 2)),
            (17_000, 4, pages(false, 0)),
        ],
    );
    // CPU 1: a single switch only starts its clock.
    stream(&k, &kernel, 1, 0, &mut [(3_000, 0, switch(500, 0, 501))]);

    let ust = decl(
        &[
            ("ros2:callback_start", &[("callback", P), ("is_intra_process", I32)]),
            ("ros2:callback_end", &[("callback", P)]),
            (
                "ros2:dispatch_subscription_callback",
                &[("message", P), ("callback", P), ("source_stamp", U64), ("message_timestamp", U64)],
            ),
        ],
        "ust",
        2,
    );
    let cb_at = |addr: u64, id: u32| {
        let mut p = Payload::new();
        p.u64(addr);
        if id == 0 {
            p.i32(0);
        }
        p.bytes
    };
    let cb = |id: u32| cb_at(0x50, id);
    let dispatch = |stamp: u64| {
        let mut p = Payload::new();
        p.u64(0x90).u64(0x50).u64(0).u64(stamp);
        p.bytes
    };
    stream(
        &root.join("ust/pid/app-300/64-bit"),
        &ust,
        0,
        300,
        &mut [
            (2_000, 0, cb(0)),
            (20_000, 1, cb(1)),
            (29_000, 2, dispatch((OFFSET + 25_000) as u64)),
            (30_000, 0, cb(0)),
            (31_000, 1, cb(1)),
            (40_000, 2, dispatch(0)),
            (41_000, 0, cb(0)),
            (42_000, 1, cb(1)),
            (45_000, 0, cb_at(0x60, 0)),
            (46_000, 1, cb_at(0x60, 1)),
        ],
    );
}

#[test]
fn system_handlers_by_hand() {
    let tmp = rostrace_testkit::TempDir::new("system");
    let root = tmp.join("trace");
    build(&root);
    let (set, errors) = rostrace_ctf::TraceSet::open(&[&root]);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(set.traces.len(), 3);
    let p = Processor::standard();
    let a = p.analyze(&set, Default::default(), |_, _| {});
    assert!(a.report.read_errors.is_empty());

    // CPU time: cpu 0 switches at 1000 (clock start), 5000 (300 ran 4000), 8000 (400: 3000),
    // 10000 (300: 2000), 15500 (0: 5500); 300 still runs at the end: not counted. CPU 1: nothing.
    let cpu = a.get::<CpuTime>().unwrap();
    let got: Vec<(i64, Option<i64>, i64, u64)> =
        cpu.threads().iter().map(|t| (t.tid, t.pid, t.cpu_ns, t.intervals)).collect();
    assert_eq!(got, vec![(300, Some(300), 6_000, 2), (0, None, 5_500, 1), (400, Some(400), 3_000, 1)]);
    let c = a.report.system.cpu_time.as_ref().unwrap();
    assert_eq!((c.processes[0].pid, c.processes[0].cpu_ns), (300, 6_000));

    // Run 1 (2000-20000): on CPU 2000-5000, 8000-10000, 15500-20000 = 9500; off 8500; one
    // preemption (5000, runnable), one block (10000). Runs 2 and 3: on CPU throughout (1000),
    // and the run of the second callback (0x60, 45000-46000) too.
    let s = a.get::<Scheduling>().unwrap();
    let runs: Vec<(i64, i64, u64, u64)> =
        s.runs.iter().map(|r| (r.on_cpu_ns, r.off_cpu_ns, r.preemptions, r.blocked)).collect();
    assert_eq!(runs, vec![(9_500, 8_500, 1, 1), (1_000, 0, 0, 0), (1_000, 0, 0, 0), (1_000, 0, 0, 0)]);
    let sr = a.report.system.scheduling.as_ref().unwrap();
    assert_eq!(sr.callbacks.len(), 2);
    assert_eq!((sr.callbacks[1].callback.address, sr.callbacks[1].on_cpu_ns.sum), (0x60, 1_000));
    // Per node (here the process's callbacks of no known node): both callbacks' runs.
    assert_eq!(sr.nodes.len(), 1);
    let n = &sr.nodes[0];
    assert_eq!((n.vpid, n.node.as_str(), n.callbacks, n.runs), (300, "", 2, 4));
    assert_eq!((n.on_cpu_ns, n.off_cpu_ns, n.preemptions), (12_500, 8_500, 1));
    let cb = &sr.callbacks[0];
    assert_eq!((cb.callback.vpid, cb.callback.address, cb.runs), (300, 0x50, 3));
    assert_eq!((cb.preemptions, cb.blocked, cb.runs_interrupted), (1, 1, 1));
    assert_eq!((cb.on_cpu_ns.sum, cb.off_cpu_ns.sum, cb.off_cpu_ns.max), (11_500, 8_500, 8_500));
    // Woken at 14000, on CPU at 15500.
    assert_eq!(sr.wakeup_latency.len(), 1);
    assert_eq!((sr.wakeup_latency[0].tid, sr.wakeup_latency[0].latency_ns.count), (300, 1));
    assert_eq!(sr.wakeup_latency[0].latency_ns.max, 1_500);

    // Message age: dispatched with stamp 25000, callback start 30000; the stamp-less one has none.
    let m = a.get::<MessageAge>().unwrap();
    assert_eq!(m.dispatches, 2);
    assert_eq!(m.ages.values().flatten().copied().collect::<Vec<_>>(), vec![5_000]);
    assert_eq!(a.report.system.message_age.len(), 1);
    assert_eq!(a.report.system.message_age[0].ns.mean, 5_000.0);

    // Memory of thread 301: malloc +100, calloc +30, realloc 0x1000 -> 0x3000 (-100, +200),
    // free 0x2000 (-30), free of an untraced 0x9000 (0), realloc(NULL) +50; a null malloc is
    // ignored. Usage 100, 130, 30, 230, 200, 200, 250. Kernel: page of order 2 (+16384) then
    // order 0 freed (-4096), on the kernel trace's thread.
    let m = a.get::<Memory>().unwrap();
    let got: Vec<(i64, &str, u64, i64, i64)> =
        m.threads().iter().map(|t| (t.tid, t.kind, t.changes, t.final_bytes, t.max_bytes)).collect();
    assert_eq!(got, vec![(0, "kernel", 2, 12_288, 16_384), (301, "userspace", 7, 250, 250)]);
    let mr = a.report.system.memory.as_ref().unwrap();
    let user = mr.processes.iter().find(|p| p.vpid == 301).unwrap();
    assert_eq!((user.max_bytes, user.max_at_ns, user.final_bytes), (250, OFFSET + 6_000, 250));
    assert_eq!(user.timeline.last(), Some(&(OFFSET + 6_000, 250)));
}
