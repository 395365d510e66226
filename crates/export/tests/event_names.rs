//! Event and recording names that are not file names (`..`, `.`, empty, with `/` or NUL, 300
//! bytes long) exported as CSV and Parquet: each event gets a table of its own below `events/`,
//! with a file name within 255 bytes, and each renaming is told.

use rostrace_ctf::write::{metadata_text, packetize_metadata, EventDecl, FieldDecl, FieldType, Payload};
use rostrace_ctf::write::{StreamWriter, TraceDecl};
use rostrace_ctf::TraceSet;
use rostrace_export::csv::CsvSink;
use rostrace_export::events;
use rostrace_export::names::{Renamed, NAME_MAX};
use rostrace_export::parquet::ParquetSink;
use rostrace_export::tables::Sink;
use rostrace_testkit::TempDir;
use std::path::{Path, PathBuf};

/// A trace with one event of each name, the i-th with one field `f<i>` of value i; names are
/// written into the metadata as TSDL string literals (`\x00` for NUL).
fn trace(dir: &Path, names: &[String]) {
    let placeholder = |i: usize| format!("event_name_{i}");
    let d = TraceDecl {
        uuid: [9; 16],
        clock_uuid: [7; 16],
        clock_offset_ns: 1_700_000_000_000_000_000,
        env: vec![("hostname".into(), "h".into())],
        events: (0..names.len())
            .map(|i| EventDecl {
                name: placeholder(i),
                fields: vec![FieldDecl { name: format!("f{i}"), ty: FieldType::U64 }],
            })
            .collect(),
    };
    let mut text = metadata_text(&d);
    for (i, n) in names.iter().enumerate() {
        let literal = n.replace('\\', "\\\\").replace('"', "\\\"").replace('\0', "\\x00");
        text = text.replace(&format!("name = \"{}\";", placeholder(i)), &format!("name = \"{literal}\";"));
    }
    let ust = dir.join("ust/uid/1000/64-bit");
    std::fs::create_dir_all(&ust).unwrap();
    std::fs::write(ust.join("metadata"), packetize_metadata(&text, &d.uuid)).unwrap();
    let mut w = StreamWriter::new(std::fs::File::create(ust.join("channel0_0")).unwrap(), d.uuid, 0, 0, 8192);
    for i in 0..names.len() {
        w.event(i as u32, 1_000 + i as u64, 42, 42, b"node", &Payload::new().u64(i as u64).bytes).unwrap();
    }
    w.finish().unwrap();
}

/// Every file below `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_dir() {
            out.extend(files(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out.sort();
    out
}

fn hostile_names() -> Vec<String> {
    ["..", ".", "", "a/b", "../../escaped", "nul\0byte", ".hidden", "ros2:callback_start", "ros2.callback_start"]
        .map(String::from)
        .into_iter()
        .chain([format!("ros2:{}", "x".repeat(300))])
        .collect()
}

#[test]
fn every_event_name_gets_a_table_of_its_own_below_events() {
    let names = hostile_names();
    let tmp = TempDir::new("export-event-names");
    trace(&tmp.join("trace"), &names);
    let (set, errors) = TraceSet::open(&[tmp.join("trace")]);
    assert!(errors.is_empty(), "{errors:?}");
    let declared: Vec<&str> = set.traces[0].schema.streams[0].events.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(declared.len(), names.len(), "{declared:?}");
    for (format, ext) in [("csv", ".csv"), ("parquet", ".parquet")] {
        let out = tmp.join(format);
        let mut sink: Box<dyn Sink> = match format {
            "csv" => Box::new(CsvSink::new(&out, "rec")),
            _ => Box::new(ParquetSink::new(&out, "rec")),
        };
        let written = events::write(&set, "rec", &|_| true, sink.as_mut(), &mut |_, _| {}, 1).unwrap();
        assert!(written.errors.is_empty(), "{:?}", written.errors);
        assert_eq!(written.tables.len(), names.len(), "{format}: a table per event name: {:?}", written.tables);
        assert!(written.tables.iter().all(|(_, n)| *n == 1), "{format}: {:?}", written.tables);
        // Nothing beside the two directories, and every file at events/<one name>/rec.<ext>.
        let mut top: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        top.sort();
        assert!(top.iter().all(|n| ["trace", "csv", "parquet"].contains(&n.to_str().unwrap())), "{top:?}");
        let found = files(&out);
        assert_eq!(found.len(), names.len(), "{format}: {found:?}");
        for f in &found {
            let rel = f.strip_prefix(&out).unwrap();
            let parts: Vec<_> = rel.iter().map(|p| p.to_str().unwrap()).collect();
            assert_eq!(parts.len(), 3, "{format}: {rel:?}");
            assert_eq!((parts[0], parts[2]), ("events", &*format!("rec{ext}")), "{format}: {rel:?}");
            assert!(parts[1].len() <= NAME_MAX && !parts[1].starts_with('.'), "{format}: {rel:?}");
        }
        // Each table holds its own event: its one field, its one row.
        for (i, n) in names.iter().enumerate() {
            let table = events::table_name(n);
            assert_eq!(written.event_names.get(&table), Some(n), "{format}: {n:?} → {table}");
            if format == "csv" {
                let text = std::fs::read_to_string(out.join(&table).join("rec.csv")).unwrap();
                let lines: Vec<&str> = text.lines().collect();
                assert_eq!(lines.len(), 2, "{n:?}: {text}");
                assert!(lines[0].ends_with(&format!(",f{i}")), "{n:?}: {text}");
                assert!(lines[1].ends_with(&format!(",{i}")), "{n:?}: {text}");
            }
        }
        // Every renaming told, and only those.
        let renamed: Vec<(&str, Renamed)> = written.renamed.iter().map(|r| (r.event.as_str(), r.why)).collect();
        let mut expected: Vec<(&str, Renamed)> = names[..names.len() - 1]
            .iter()
            .filter(|n| *n != "ros2:callback_start")
            .map(|n| (n.as_str(), Renamed::Unsafe))
            .collect();
        expected.push((&names[names.len() - 1], Renamed::TooLong));
        for e in &expected {
            assert!(renamed.contains(e), "{format}: {e:?} not in {renamed:?}");
        }
        assert_eq!(renamed.len(), expected.len(), "{format}: {renamed:?}");
        let long = written.renamed.iter().find(|r| r.why == Renamed::TooLong).unwrap();
        assert_eq!(long.table.len(), "events/".len() + NAME_MAX, "{}", long.table);
        assert!(long.table.starts_with("events/ros2.xxxx"), "{}", long.table);
    }
}

#[test]
fn a_recording_name_too_long_for_a_file_name_is_shortened() {
    let tmp = TempDir::new("export-long-recording");
    trace(&tmp.join("trace"), &["ros2:callback_start".into()]);
    let (set, _) = TraceSet::open(&[tmp.join("trace")]);
    // 252 bytes: too long with `.csv` as with `.parquet`.
    let recording = "r".repeat(252);
    for format in ["csv", "parquet"] {
        let out = tmp.join(format);
        let (mut csv, mut pq) = (CsvSink::new(&out, &recording), ParquetSink::new(&out, &recording));
        let (file, why, sink): (String, _, &mut dyn Sink) = match format {
            "csv" => (csv.file().0.to_string(), csv.file().1, &mut csv),
            _ => (pq.file().0.to_string(), pq.file().1, &mut pq),
        };
        assert_eq!(why, Some(Renamed::TooLong));
        assert!(file.len() <= NAME_MAX && file.starts_with("rrrr") && file.ends_with(&format!(".{format}")), "{file}");
        let written = events::write(&set, &recording, &|_| true, sink, &mut |_, _| {}, 1).unwrap();
        assert_eq!(written.tables, [("events/ros2.callback_start".to_string(), 1)]);
        assert!(out.join("events/ros2.callback_start").join(&file).is_file());
        if format == "csv" {
            let text = std::fs::read_to_string(out.join("events/ros2.callback_start").join(&file)).unwrap();
            assert!(text.lines().nth(1).unwrap().starts_with(&format!("{recording},")), "the full name in the rows");
        }
    }
}

#[test]
fn sinks_refuse_table_names_outside_their_directory() {
    let tmp = TempDir::new("export-sink-names");
    let cols = rostrace_export::schema::event_columns();
    for name in ["..", "events/..", "events/.", "events/", "/abs", "events/.x"] {
        let mut csv = CsvSink::new(&tmp.join("csv"), "rec");
        let mut pq = ParquetSink::new(&tmp.join("pq"), "rec");
        for sink in [&mut csv as &mut dyn Sink, &mut pq] {
            let e = sink.table(name, &cols).err().unwrap_or_else(|| panic!("{name:?} accepted"));
            assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{name:?}: {e}");
            assert!(e.to_string().contains(&format!("{name:?}")), "{e}");
        }
    }
    let top: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(top.is_empty(), "nothing written: {top:?}");
}
