//! Synthetic LTTng traces of one host ("synthetic"), kernel and userspace, written by hand: their
//! declarations, one stream (a CPU) at a time, and the kernel's scheduling payloads.
#![allow(dead_code)]

use rostrace_ctf::write::*;
use std::path::Path;

pub const P: FieldType = FieldType::Pointer;
pub const S: FieldType = FieldType::String;
pub const I32: FieldType = FieldType::I32;
pub const I64: FieldType = FieldType::I64;
pub const U64: FieldType = FieldType::U64;

/// Epoch offset of the traces' clocks.
pub const OFFSET: i64 = 1_763_000_000_000_000_000;

/// A trace of `domain` (`kernel` or `ust`) declaring `events`.
pub fn decl(events: &[(&str, &[(&str, FieldType)])], domain: &str, uuid: u8) -> TraceDecl {
    TraceDecl {
        uuid: [uuid; 16],
        clock_offset_ns: OFFSET,
        clock_uuid: [9; 16],
        env: vec![("hostname".into(), "synthetic".into()), ("domain".into(), domain.into())],
        events: events
            .iter()
            .map(|(n, f)| EventDecl {
                name: n.to_string(),
                fields: f.iter().map(|(n, t)| FieldDecl { name: n.to_string(), ty: t.clone() }).collect(),
            })
            .collect(),
    }
}

/// Writes `evs` (clock ts, event id, payload) of one stream (one CPU) of a trace.
pub fn stream(dir: &Path, d: &TraceDecl, cpu: u32, vpid: i32, evs: &mut [(u64, u32, Vec<u8>)]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("metadata"), packetize_metadata(&metadata_text(d), &d.uuid)).unwrap();
    evs.sort_by_key(|e| e.0);
    let f = std::fs::File::create(dir.join(format!("channel0_{cpu}"))).unwrap();
    let mut w = StreamWriter::new(f, d.uuid, cpu as u64, cpu, 4096);
    for (ts, id, p) in evs.iter() {
        w.event(*id, *ts, vpid, vpid, b"synthetic", p).unwrap();
    }
    w.finish().unwrap();
}

/// The kernel's events: 0 `sched_switch`, 1 `sched_waking`, 2 `lttng_statedump_process_state`,
/// 3 `kmem_mm_page_alloc`, 4 `kmem_mm_page_free`.
pub fn kernel() -> TraceDecl {
    decl(
        &[
            (
                "sched_switch",
                &[
                    ("prev_comm", S),
                    ("prev_tid", I32),
                    ("prev_prio", I32),
                    ("prev_state", I64),
                    ("next_comm", S),
                    ("next_tid", I32),
                    ("next_prio", I32),
                ],
            ),
            ("sched_waking", &[("comm", S), ("tid", I32), ("prio", I32), ("target_cpu", I32)]),
            ("lttng_statedump_process_state", &[("tid", I32), ("pid", I32), ("name", S)]),
            ("kmem_mm_page_alloc", &[("page", P), ("pfn", U64), ("order", I32), ("gfp_flags", I32)]),
            ("kmem_mm_page_free", &[("page", P), ("pfn", U64), ("order", I32)]),
        ],
        "kernel",
        1,
    )
}

/// `sched_switch` from `prev` (left in `state`: 0 runnable) to `next`.
pub fn switch(prev: i32, state: i64, next: i32) -> Vec<u8> {
    let mut p = Payload::new();
    p.string(b"prev").i32(prev).i32(20).i64(state).string(b"next").i32(next).i32(20);
    p.bytes
}

/// `sched_waking` of `tid`.
pub fn waking(tid: i32) -> Vec<u8> {
    let mut p = Payload::new();
    p.string(b"w").i32(tid).i32(20).i32(0);
    p.bytes
}

/// `lttng_statedump_process_state` of thread `tid` of process `pid`.
pub fn dump(tid: i32, pid: i32) -> Vec<u8> {
    let mut p = Payload::new();
    p.i32(tid).i32(pid).string(b"proc");
    p.bytes
}

/// `kmem_mm_page_alloc` (or `_free`) of 2^`order` pages.
pub fn pages(alloc: bool, order: i32) -> Vec<u8> {
    let mut p = Payload::new();
    p.u64(0xabc).u64(1).i32(order);
    if alloc {
        p.i32(0);
    }
    p.bytes
}
