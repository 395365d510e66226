//! Traces written by `rostrace_ctf::write` read back exactly, with this crate and with babeltrace2.

use rostrace_ctf::write::*;
use rostrace_ctf::{FieldValue, TraceSet};
use std::path::Path;
use std::process::Command;

fn decl() -> TraceDecl {
    TraceDecl {
        uuid: *b"rostrace-test-01",
        clock_offset_ns: 1_763_000_000_000_000_000,
        clock_uuid: [9; 16],
        env: vec![
            ("domain".into(), "ust".into()),
            ("tracer_name".into(), "rostrace".into()),
            ("hostname".into(), "test".into()),
        ],
        events: vec![
            EventDecl {
                name: "ros2:rcl_node_init".into(),
                fields: vec![
                    FieldDecl { name: "node_handle".into(), ty: FieldType::Pointer },
                    FieldDecl { name: "rmw_handle".into(), ty: FieldType::Pointer },
                    FieldDecl { name: "node_name".into(), ty: FieldType::String },
                    FieldDecl { name: "namespace".into(), ty: FieldType::String },
                ],
            },
            EventDecl {
                name: "ros2:rmw_take".into(),
                fields: vec![
                    FieldDecl { name: "rmw_subscription_handle".into(), ty: FieldType::Pointer },
                    FieldDecl { name: "message".into(), ty: FieldType::Pointer },
                    FieldDecl { name: "source_timestamp".into(), ty: FieldType::I64 },
                    FieldDecl { name: "taken".into(), ty: FieldType::I32 },
                ],
            },
            EventDecl {
                name: "ros2:message_link_partial_sync".into(),
                fields: vec![
                    FieldDecl { name: "subs".into(), ty: FieldType::PointerSequence },
                    FieldDecl { name: "gid".into(), ty: FieldType::U8Array(16) },
                    FieldDecl { name: "capacity".into(), ty: FieldType::U64 },
                ],
            },
        ],
    }
}

/// Writes a trace with `n` events per kind into `dir`, in 2 streams, with small packets.
fn write_trace(dir: &Path, n: u64) {
    let d = decl();
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("metadata"), packetize_metadata(&metadata_text(&d), &d.uuid)).unwrap();
    for cpu in 0..2u32 {
        let f = std::fs::File::create(dir.join(format!("channel0_{cpu}"))).unwrap();
        let mut w = StreamWriter::new(f, d.uuid, cpu as u64, cpu, 4096);
        // Timestamps with gaps over 2^32 ns to exercise the extended header.
        let mut ts = 1_000 + cpu as u64;
        for i in 0..n {
            let mut p = Payload::new();
            p.u64(0x5555_0000 + i).u64(0x6666_0000 + i).string(format!("node_{i}").as_bytes()).string(b"/ns");
            w.event(0, ts, 100 + cpu as i32, 200 + i as i32 % 3, b"proc\xffname-too-long", &p.bytes).unwrap();
            ts += 1_000;
            let mut p = Payload::new();
            p.u64(0xAB).u64(i).i64(-(i as i64)).i32((i % 2) as i32);
            w.event(1, ts, 100 + cpu as i32, 200, b"proc", &p.bytes).unwrap();
            ts += if i % 50 == 49 { 5_000_000_000 } else { 1_000 };
            let mut p = Payload::new();
            let subs: Vec<u64> = (0..i % 4).collect();
            p.pointer_sequence(&subs).u8_array(&[1, 2, 3], 16).u64(u64::MAX - i);
            w.event(2, ts, 100 + cpu as i32, 200, b"", &p.bytes).unwrap();
            ts += 1;
        }
        if cpu == 1 {
            w.discard(5, ts);
        }
        w.finish().unwrap();
    }
}

fn tmp(name: &str) -> rostrace_testkit::TempDir {
    rostrace_testkit::TempDir::new(&format!("write-{name}"))
}

#[test]
fn reads_back_exactly() {
    let dir = tmp("read");
    write_trace(&dir, 300);
    let (set, errors) = TraceSet::open(&[&dir]);
    assert!(errors.is_empty(), "{errors:?}");
    let mut events = set.events();
    let mut seen = [0u64; 3];
    let mut last = i64::MIN;
    while let Some(ev) = events.next() {
        let ev = ev.unwrap();
        let ts = ev.timestamp().unwrap();
        assert!(ts >= last);
        last = ts;
        let cpu = ev.cpu_id().unwrap();
        assert_eq!(ev.context_field("vpid").unwrap().as_i64(), Some(100 + cpu as i64));
        match ev.name() {
            "ros2:rcl_node_init" => {
                let i = ev.field("node_handle").unwrap().as_u64().unwrap() - 0x5555_0000;
                assert_eq!(ev.field("node_name").unwrap().as_str().unwrap(), format!("node_{i}"));
                assert_eq!(ev.context_field("procname").unwrap().as_bytes().unwrap(), b"proc\xffname-too-lo");
                seen[0] += 1;
            }
            "ros2:rmw_take" => {
                let i = ev.field("message").unwrap().as_u64().unwrap();
                assert_eq!(ev.field("source_timestamp").unwrap().as_i64(), Some(-(i as i64)));
                assert_eq!(ev.field("taken").unwrap().as_i64(), Some((i % 2) as i64));
                seen[1] += 1;
            }
            _ => {
                let cap = u64::MAX - ev.field("capacity").unwrap().as_u64().unwrap();
                let subs = ev.field("subs").unwrap().as_array().unwrap().to_u64_vec();
                assert_eq!(subs, (0..cap % 4).collect::<Vec<_>>());
                match ev.field("gid").unwrap() {
                    FieldValue::Array(a) => assert_eq!(a.to_u64_vec()[..4], [1, 2, 3, 0]),
                    v => panic!("{v:?}"),
                }
                seen[2] += 1;
            }
        }
    }
    assert_eq!(seen, [600, 600, 600]);
    assert_eq!(events.losses().len(), 1);
}

#[rostrace_testkit::needs(babeltrace2)]
#[test]
fn babeltrace2_reads_it_without_warnings() {
    if !rostrace_testkit::require(rostrace_testkit::have("babeltrace2", "--version"), "babeltrace2") {
        return;
    }
    let dir = tmp("bt2");
    write_trace(&dir, 100);
    let out = Command::new("babeltrace2").arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), 600);
    assert!(text.contains("node_name = \"node_42\""), "{}", &text[..500.min(text.len())]);
    assert!(text.contains("subs = [ [0] = 0x0, [1] = 0x1, [2] = 0x2 ]"));
    let err = String::from_utf8_lossy(&out.stderr);
    // The only warning is the discarded events the test asked for.
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("WARNING")).collect();
    assert!(warnings.iter().all(|w| w.contains("discarded 5 events")), "{err}");
}

/// The metadata text parses as the declarations say, and its packets give the text back.
#[test]
fn written_metadata_parses() {
    let t = TraceDecl {
        uuid: [7; 16],
        clock_offset_ns: 1_700_000_000_000_000_000,
        clock_uuid: [8; 16],
        env: vec![("hostname".into(), "h".into()), ("tracer_major".into(), "2".into())],
        events: vec![EventDecl {
            name: "ros2:rcl_node_init".into(),
            fields: vec![
                FieldDecl { name: "node_handle".into(), ty: FieldType::Pointer },
                FieldDecl { name: "node_name".into(), ty: FieldType::String },
                FieldDecl { name: "gid".into(), ty: FieldType::U8Array(16) },
                FieldDecl { name: "subs".into(), ty: FieldType::PointerSequence },
            ],
        }],
    };
    let text = metadata_text(&t);
    let schema = rostrace_ctf::metadata::parse_schema(&text).unwrap();
    assert_eq!(schema.streams[0].events[0].field_names(), ["node_handle", "node_name", "gid", "_subs_length", "subs"]);
    let packed = packetize_metadata(&text, &t.uuid);
    assert_eq!(rostrace_ctf::metadata::metadata_text(&packed).unwrap().text, text);
}
