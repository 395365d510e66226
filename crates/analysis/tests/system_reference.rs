//! CPU time, memory and function profile against tracetools_analysis's own handlers on the
//! real traces of `../shared/ctf-edge` (`tests/data/tracetools_analysis/`, with how they were
//! made): every thread (and function), every number equal.

use rostrace_analysis::system::{CpuTime, Memory, Profile};
use rostrace_analysis::{Analysis, Processor};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The shared test data (`$ROSTRACE_TEST_DATA`, else `../shared` beside the repository).
use rostrace_testkit::test_data as shared;

fn data(name: &str) -> Vec<Vec<String>> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/tracetools_analysis").join(name);
    std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .lines()
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| l.split(',').map(String::from).collect())
        .collect()
}

fn run(trace: &str) -> Analysis {
    let (set, errors) = rostrace_ctf::TraceSet::open(&[shared().join("ctf-edge").join(trace)]);
    assert!(errors.is_empty(), "{errors:?}");
    let p = Processor::standard();
    let a = p.analyze(&set, Default::default(), |_, _| {});
    assert!(a.report.read_errors.is_empty(), "{:?}", a.report.read_errors);
    a
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn cpu_time_equals_tracetools_analysis() {
    rostrace_testkit::needs_test_data!();
    for trace in ["tc-many-threads", "tc-bug446190"] {
        let want: BTreeMap<i64, (i64, u64)> = data(&format!("{trace}.cpu_time.csv"))
            .iter()
            .map(|r| (r[0].parse().unwrap(), (r[1].parse().unwrap(), r[2].parse().unwrap())))
            .collect();
        let p = run(trace);
        let got: BTreeMap<i64, (i64, u64)> =
            p.get::<CpuTime>().unwrap().threads().iter().map(|t| (t.tid, (t.cpu_ns, t.intervals))).collect();
        assert!(want.len() > 20, "{trace}");
        assert_eq!(got, want, "{trace}");
    }
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn memory_equals_tracetools_analysis() {
    rostrace_testkit::needs_test_data!();
    let want: BTreeMap<i64, (u64, i64, i64)> = data("tc-memory.memory.csv")
        .iter()
        .map(|r| (r[0].parse().unwrap(), (r[1].parse().unwrap(), r[2].parse().unwrap(), r[3].parse().unwrap())))
        .collect();
    let p = run("tc-memory");
    let got: BTreeMap<i64, (u64, i64, i64)> =
        p.get::<Memory>().unwrap().threads().iter().map(|t| (t.tid, (t.changes, t.final_bytes, t.max_bytes))).collect();
    assert_eq!(want.len(), 4);
    assert_eq!(got, want);
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn profile_equals_tracetools_analysis() {
    rostrace_testkit::needs_test_data!();
    let want: BTreeMap<(i64, u64), (u64, i64, i64, u32)> = data("tc-cyg-profile_glxgears-cyg-profile.profile.csv")
        .iter()
        .map(|r| {
            let addr = u64::from_str_radix(r[1].trim_start_matches("0x"), 16).unwrap();
            (
                (r[0].parse().unwrap(), addr),
                (r[2].parse().unwrap(), r[3].parse().unwrap(), r[4].parse().unwrap(), r[5].parse().unwrap()),
            )
        })
        .collect();
    let p = run("tc-cyg-profile_glxgears-cyg-profile");
    let prof = p.get::<Profile>().unwrap();
    let got: BTreeMap<(i64, u64), (u64, i64, i64, u32)> = prof
        .functions()
        .iter()
        .map(|f| ((f.tid, f.address), (f.calls, f.total_ns, f.actual_ns, f.max_depth)))
        .collect();
    assert_eq!(want.len(), 11);
    assert_eq!(got, want);
    assert_eq!(prof.unmatched_exits, 0);
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn binaries_mapped_from_the_statedump() {
    rostrace_testkit::needs_test_data!();
    // LTTng-UST 2.8's statedump and dlopen events (tc-debuginfo-test-app4), as babeltrace2 shows
    // them: 13 bin_info (12 with a build id) and 2 dlopen, all of process 23573.
    let p = run("tc-debuginfo-test-app4");
    let prof = p.get::<Profile>().unwrap();
    assert_eq!(prof.mappings.len(), 1);
    let maps = &prof.mappings[&(0, 23573)];
    assert_eq!(maps.len(), 15);
    assert_eq!(maps.iter().filter(|m| m.build_id.is_some()).count(), 14);
    let exe = &maps[0];
    assert_eq!(
        (exe.baddr, exe.memsz, exe.path.as_str(), exe.is_pic),
        (0x400000, 2100120, "/home/simark/src/babeltrace/tests/debug-info-data/test", false)
    );
    assert_eq!(exe.build_id.as_ref().unwrap()[..4], [0x06, 0x83, 0x25, 0x5d]);
    let hello = maps.iter().find(|m| m.path.ends_with("/libhello_so")).unwrap();
    assert_eq!((hello.baddr, hello.memsz, hello.is_pic), (0x7FA49D2F7000, 2111896, true));
    assert_eq!(hello.build_id.as_ref().map(|b| b.len()), Some(20));
    // An address in the executable belongs to it; the file is not on this machine: no name.
    let mut s = rostrace_analysis::system::symbols::Symbolizer::default();
    let got = s.lookup(maps, 0x4006ED);
    assert_eq!((got.binary.as_str(), got.name.as_str()), (exe.path.as_str(), ""));
}
