//! Metadata with many event classes, against babeltrace2 in the same run.
//!
//! `cargo bench -p rostrace-ctf --bench metadata`: LTTng-UST metadata (`rostrace_ctf::write`'s layout)
//! with 10^3, 10^4 and 10^5 event classes, parsed by rostrace (`parse_schema`, best of 3) and
//! read by `babeltrace2 -o dummy` (a trace of that metadata and one empty stream file, once).
//! The time per class stays flat when nothing in the parse is quadratic in the classes.

use rostrace_ctf::write::{
    metadata_text, packetize_metadata, EventDecl, FieldDecl, FieldType, StreamWriter, TraceDecl,
};
use std::process::Command;
use std::time::Instant;

fn decl(n: usize) -> TraceDecl {
    TraceDecl {
        uuid: [3; 16],
        clock_offset_ns: 0,
        clock_uuid: [4; 16],
        env: vec![("hostname".into(), "bench".into())],
        events: (0..n)
            .map(|i| EventDecl {
                name: format!("bench:event_{i}"),
                fields: vec![
                    FieldDecl { name: "handle".into(), ty: FieldType::Pointer },
                    FieldDecl { name: "name".into(), ty: FieldType::String },
                ],
            })
            .collect(),
    }
}

fn main() {
    let dir = std::env::temp_dir().join(format!("rostrace-bench-metadata-{}", std::process::id()));
    let bt2 = Command::new("babeltrace2").arg("--version").output().is_ok_and(|o| o.status.success());
    println!("{:>8} {:>10} {:>12} {:>14} {:>10}", "classes", "TSDL", "rostrace", "per class", "babeltrace2");
    for n in [1_000, 10_000, 100_000] {
        let d = decl(n);
        let text = metadata_text(&d);
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let t = Instant::now();
            let schema = rostrace_ctf::metadata::parse_schema(&text).expect("valid metadata");
            best = best.min(t.elapsed().as_secs_f64());
            assert_eq!(schema.event_classes().count(), n);
        }
        let theirs = if bt2 {
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("metadata"), packetize_metadata(&text, &d.uuid)).unwrap();
            let f = std::fs::File::create(dir.join("channel0_0")).unwrap();
            let mut w = StreamWriter::new(f, d.uuid, 0, 0, 4096);
            w.event(0, 1, 1, 1, b"bench", &rostrace_ctf::write::Payload::new().u64(1).string(b"x").bytes).unwrap();
            w.finish().unwrap();
            let t = Instant::now();
            let out = Command::new("babeltrace2").arg(&dir).args(["-o", "dummy"]).output().unwrap();
            let s = t.elapsed().as_secs_f64();
            if out.status.success() {
                format!("{s:.2} s ({:.0}x)", s / best)
            } else {
                "refused".into()
            }
        } else {
            "(not installed)".into()
        };
        println!(
            "{n:>8} {:>7.1} MB {:>10.3} s {:>11.2} us {theirs:>10}",
            text.len() as f64 / 1e6,
            best,
            best / n as f64 * 1e6
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
