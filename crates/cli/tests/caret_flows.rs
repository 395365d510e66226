//! Message flows of Humble-layout traces, matched through CARET's `dds_bind_addr_to_stamp`
//! (Humble's `rmw_publish` carries no source timestamp: the DDS write hook's event gives the
//! publication its source timestamp, which the subscriber's `rmw_take` carries).
//!
//! - CARET's own traces (`../shared/traces/caret-demos-e2e-2021`, Galactic + CARET, Cyclone
//!   DDS): every take of every topic is matched to its publication by source timestamp.
//! - A live Humble-ABI recording: `tests/c/humble_dds.c` (traced as Humble's rcl/rmw would,
//!   publishing over Debian's Cyclone DDS) under `rostrace record --distro humble`: every
//!   message is matched by source timestamp, though no `rmw_publish` carries one.

mod common;

use common::*;
use rostrace_testkit::{have, require, TempDir};
use std::path::Path;
use std::process::Command;

fn analyze(trace: &Path, json: &Path) -> serde_json::Value {
    let out = rostrace().arg("analyze").arg(trace).arg("--json").arg(json).output().unwrap();
    assert!(out.status.success(), "analyze {}: {}", trace.display(), String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn caret_traces_match_by_source_timestamp() {
    let tmp = TempDir::new("caret-flows");
    let Some(trace) = rostrace_testkit::test_data_path("traces/caret-demos-e2e-2021") else { return };
    let a = analyze(&trace, &tmp.join("a.json"));
    let mut checked = 0;
    for t in a["topics"].as_array().unwrap() {
        let takes = t["takes"].as_u64().unwrap();
        if takes == 0 {
            continue;
        }
        assert_eq!(t["matched"].as_u64(), Some(takes), "{t:#}");
        assert_eq!(t["by_source_timestamp"].as_u64(), Some(takes), "{}: matched by source timestamp", t["name"]);
        checked += 1;
    }
    assert!(checked >= 5, "topics with takes: {checked}");
}

#[rostrace_testkit::needs(cyclonedds)]
#[test]
fn humble_abi_recording_matches_through_the_dds_hook() {
    let ok = Path::new("/usr/include/dds/dds.h").exists() && have("idlc", "-v");
    if !require(ok, "Cyclone DDS (cyclonedds-dev, cyclonedds-tools)") {
        return;
    }
    let tmp = TempDir::new("caret-flows-humble");
    let idl = repo().join("crates/tracetools/tests/c/cyclone_sample.idl");
    let st = Command::new("idlc").current_dir(tmp.path()).args(["-l", "c"]).arg(&idl).status().unwrap();
    assert!(st.success(), "idlc");
    let lib_dir = Path::new(env!("CARGO_BIN_EXE_rostrace")).parent().unwrap().join("deps");
    let prog = tmp.join("humble_dds");
    let st = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-O2", "-I"])
        .arg(tmp.path())
        .arg("-I")
        .arg(tracetools::INCLUDE_DIR)
        .arg(repo().join("crates/cli/tests/c/humble_dds.c"))
        .arg(tmp.join("cyclone_sample.c"))
        .arg("-o")
        .arg(&prog)
        .arg(format!("-L{}", lib_dir.display()))
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .args(["-ltracetools", "-lddsc"])
        .status()
        .unwrap();
    assert!(st.success(), "cc humble_dds.c");
    let n = 30;
    let out = rostrace()
        .args(["record", "--distro", "humble", "-s", "humble", "-p"])
        .arg(tmp.path())
        .arg("--")
        .arg(&prog)
        .arg(n.to_string())
        .env("CYCLONEDDS_URI", "<General><Interfaces><NetworkInterface address=\"127.0.0.1\"/></Interfaces><AllowMulticast>false</AllowMulticast></General>")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let trace = tmp.join("humble");
    // Humble's layout: rmw_publish has the message only.
    let (set, errors) = rostrace_ctf::TraceSet::open(&[&trace]);
    assert!(errors.is_empty(), "{errors:?}");
    let mut evs = set.events();
    let (mut publishes, mut binds) = (0, 0);
    while let Some(e) = evs.next() {
        let e = e.unwrap();
        if e.name() == "ros2:rmw_publish" {
            let fields: Vec<String> = e.payload().unwrap().iter_typed().map(|(f, _, _)| f.to_string()).collect();
            assert_eq!(fields, ["message"], "Humble's rmw_publish");
            publishes += 1;
        }
        binds += usize::from(e.name() == "ros2_caret:dds_bind_addr_to_stamp");
    }
    assert_eq!((publishes, binds), (n, n));
    let a = analyze(&trace, &tmp.join("a.json"));
    let t = a["topics"].as_array().unwrap().iter().find(|t| t["name"] == "/chatter").expect("/chatter").clone();
    for k in ["publishes", "takes", "matched", "by_source_timestamp"] {
        assert_eq!(t[k].as_u64(), Some(n as u64), "{k}: {t:#}");
    }
    assert_eq!(t["unmatched"].as_u64(), Some(0), "{t:#}");
}
