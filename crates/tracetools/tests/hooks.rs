//! CARET's hooked tracepoints (`src/hooks`), judged against the functions they hook.
//!
//! - rclcpp: no rclcpp binary exists on these machines, so a stand-in library
//!   (`tests/cpp/fake_rclcpp.*`) declares the hooked classes with rclcpp's exact signatures, for
//!   Humble and for Jazzy+: the compiler gives its functions rclcpp's mangled names, which must
//!   be the names rostrace hooks (taken from CARET's source). A program using it runs with and
//!   without rostrace preloaded: same output (addresses aside), and every executor, callback
//!   group and entity event carries the addresses and handles the program printed.
//! - Cyclone DDS: a C writer/reader pair through Debian's libddsc; every sample's
//!   `dds_bind_addr_to_stamp` carries the source timestamp the reader got in its sample info.
//! - The C ABI of CARET's events (`tracetools/caret.h`).
//!
//! Fast DDS is checked on the real ROS 2 stacks (crates/cli/tests/real_ros2.rs).

mod common;

use common::lib_dir;
use rostrace_testkit::{have, require, TempDir};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn here() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `ros2_caret:` events of the trace(s) under `dir`: (name without provider, fields as text).
fn caret_events(dir: &Path) -> Vec<(String, BTreeMap<String, String>)> {
    let (set, errors) = rostrace_ctf::TraceSet::open(&[dir]);
    assert!(errors.is_empty(), "{errors:?}");
    let mut out = Vec::new();
    let mut evs = set.events();
    while let Some(e) = evs.next() {
        let e = e.unwrap();
        let Some(name) = e.name().strip_prefix("ros2_caret:") else { continue };
        let mut fields = BTreeMap::new();
        if let Some(p) = e.payload() {
            for (f, _, v) in p.iter_typed() {
                let text = match v {
                    rostrace_ctf::FieldValue::U64(x) => format!("{x:#x}"),
                    rostrace_ctf::FieldValue::I64(x) => x.to_string(),
                    rostrace_ctf::FieldValue::Str(b) => String::from_utf8_lossy(b).into_owned(),
                    other => format!("{other:?}"),
                };
                fields.insert(f.to_string(), text);
            }
        }
        out.push((name.to_string(), fields));
    }
    out
}

/// Addresses as the trace prints them (`{:#x}`), from the program's `%p`.
fn addr(p: &str) -> String {
    format!("{:#x}", u64::from_str_radix(p.trim_start_matches("0x"), 16).unwrap())
}

fn without_addresses(s: &str) -> String {
    s.split_whitespace().map(|w| if w.starts_with("0x") { "ADDR" } else { w }).collect::<Vec<_>>().join(" ")
}

fn fake_rclcpp(variant: &str) {
    if !require(have("c++", "--version"), "a C++ compiler (c++)") {
        return;
    }
    let tmp = TempDir::new(&format!("hooks-rclcpp-{variant}"));
    let cpp = here().join("cpp");
    let define: &[&str] = if variant == "jazzy" { &["-DFAKE_JAZZY"] } else { &[] };
    let lib = tmp.join(format!("librclcpp_standin_{variant}.so"));
    // -O0: no call between the stand-in's own functions is inlined away (as rclcpp's go through
    // the PLT).
    run(Command::new("c++")
        .args(["-O0", "-fPIC", "-shared", "-std=c++17"])
        .args(define)
        .arg(cpp.join("fake_rclcpp.cpp"))
        .arg("-o")
        .arg(&lib));
    let prog = tmp.join("program");
    run(Command::new("c++")
        .args(["-O0", "-std=c++17"])
        .args(define)
        .arg(cpp.join("hooked_program.cpp"))
        .arg("-o")
        .arg(&prog)
        .arg(format!("-L{}", tmp.path().display()))
        .arg(format!("-lrclcpp_standin_{variant}"))
        .arg(format!("-Wl,-rpath,{}", tmp.path().display())));

    // The mangled names of rclcpp's signatures are the names rostrace hooks.
    let nm = run(Command::new("nm").args(["-D", "--defined-only"]).arg(&lib));
    let defined: Vec<&str> = nm.lines().filter_map(|l| l.split_whitespace().nth(2)).collect();
    let only_old = ["add_callback_group_to_map", "StaticExecutorEntitiesCollector18add_callback_group"];
    let only_new = ["ExecutorEntitiesCollectorC1", "add_callback_group_to_collection"];
    for s in tracetools::HOOKED_RCLCPP_SYMBOLS {
        let not_here = if variant == "jazzy" {
            only_old.iter().any(|o| s.contains(o))
        } else {
            only_new.iter().any(|o| s.contains(o))
        };
        if !not_here {
            assert!(
                defined.contains(s),
                "{variant}: the stand-in rclcpp does not define {s}: the hooked name is not rclcpp's"
            );
        }
    }

    let plain = run(Command::new(&prog).env_remove("LD_PRELOAD").env_remove("ROSTRACE_SESSION_DIR"));
    let ours = lib_dir().join("libtracetools.so");
    let idle = run(Command::new(&prog).env("LD_PRELOAD", &ours).env_remove("ROSTRACE_SESSION_DIR"));
    let session = tmp.join("session");
    let traced = run(Command::new(&prog)
        .env("LD_PRELOAD", &ours)
        .env("ROSTRACE_SESSION_DIR", &session)
        .env("ROS_DISTRO", variant));
    assert_eq!(
        without_addresses(&plain),
        without_addresses(&traced),
        "{variant}: the program's output changed under the hooks"
    );
    assert_eq!(
        without_addresses(&plain),
        without_addresses(&idle),
        "{variant}: the program's output changed with the library idle"
    );

    // What the hooks must have recorded, from what the program printed.
    let mut want: Vec<(String, Vec<(&str, String)>)> = Vec::new();
    let mut groups = BTreeMap::new();
    for line in traced.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w[0] {
            "single" => want.push((
                "construct_executor".into(),
                vec![("executor_addr", addr(w[1])), ("executor_type_name", "single_threaded_executor".into())],
            )),
            "multi" => want.push((
                "construct_executor".into(),
                vec![("executor_addr", addr(w[1])), ("executor_type_name", "multi_threaded_executor".into())],
            )),
            "group" => {
                groups.insert(addr(w[2]), w[1].to_string());
            }
            "timer" | "subscription" | "service" | "client" => {
                let field = format!("{}_handle", w[0]);
                let f: &'static str = Box::leak(field.into_boxed_str());
                want.push((
                    format!("callback_group_add_{}", w[0]),
                    vec![("callback_group_addr", addr(w[1])), (f, addr(w[2]))],
                ));
            }
            "collector" if variant == "jazzy" => want.push((
                "executor_entity_collector_to_executor".into(),
                vec![("executor_addr", addr(w[1])), ("entities_collector_addr", addr(w[2]))],
            )),
            "collector" => want.push((
                "construct_static_executor".into(),
                vec![
                    ("executor_addr", addr(w[1])),
                    ("entities_collector_addr", addr(w[2])),
                    ("executor_type_name", "static_single_threaded_executor".into()),
                ],
            )),
            "to_collection" => want.push((
                "callback_group_to_executor_entity_collector".into(),
                vec![
                    ("entities_collector_addr", addr(w[1])),
                    ("callback_group_addr", addr(w[2])),
                    ("group_type_name", groups[&addr(w[2])].clone()),
                ],
            )),
            "to_map" => want.push((
                "add_callback_group".into(),
                vec![
                    ("executor_addr", addr(w[1])),
                    ("callback_group_addr", addr(w[2])),
                    ("group_type_name", groups[&addr(w[2])].clone()),
                ],
            )),
            "static_add" => want.push((
                "add_callback_group_static_executor".into(),
                vec![
                    ("entities_collector_addr", addr(w[1])),
                    ("callback_group_addr", addr(w[2])),
                    ("group_type_name", groups[&addr(w[2])].clone()),
                ],
            )),
            _ => {}
        }
    }
    if variant == "jazzy" {
        // The static executor's collector is the executor's own (CARET's get_collector_()).
        let stat =
            traced.lines().find(|l| l.starts_with("static ")).unwrap().split_whitespace().nth(1).unwrap().to_string();
        let coll = traced
            .lines()
            .filter(|l| l.starts_with("collector "))
            .find(|l| l.contains(&stat))
            .unwrap()
            .split_whitespace()
            .nth(2)
            .unwrap()
            .to_string();
        want.push((
            "construct_static_executor".into(),
            vec![
                ("executor_addr", addr(&stat)),
                ("entities_collector_addr", addr(&coll)),
                ("executor_type_name", "static_single_threaded_executor".into()),
            ],
        ));
    }
    let got = caret_events(&session);
    let mut missing = Vec::new();
    for (name, fields) in &want {
        let n = got.iter().filter(|(g, f)| g == name && fields.iter().all(|(k, v)| f.get(*k) == Some(v))).count();
        if n != 1 {
            missing.push(format!("{name} {fields:?}: {n} events"));
        }
    }
    let hooked: usize = got.iter().filter(|(n, _)| n != "caret_init" && n != "rmw_implementation").count();
    assert!(
        missing.is_empty(),
        "{variant}: expected events not recorded once:\n{}\nrecorded: {got:#?}",
        missing.join("\n")
    );
    assert_eq!(hooked, want.len(), "{variant}: events beyond the expected ones: {got:#?}");
    for (_, f) in &got {
        assert!(f.get("init_timestamp").is_some_and(|t| t.parse::<i64>().unwrap() > 0), "{f:?}");
    }
}

#[rostrace_testkit::needs(cxx)]
#[test]
fn rclcpp_humble_hooks() {
    fake_rclcpp("humble");
}

#[rostrace_testkit::needs(cxx)]
#[test]
fn rclcpp_jazzy_hooks() {
    fake_rclcpp("jazzy");
}

#[rostrace_testkit::needs(cyclonedds)]
#[test]
fn cyclonedds_hooks() {
    let ok = Path::new("/usr/include/dds/dds.h").exists() && have("idlc", "-v");
    if !require(ok, "Cyclone DDS (cyclonedds-dev, cyclonedds-tools)") {
        return;
    }
    let tmp = TempDir::new("hooks-cyclone");
    run(Command::new("idlc").current_dir(tmp.path()).args(["-l", "c"]).arg(here().join("c/cyclone_sample.idl")));
    let prog = tmp.join("pair");
    run(Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-O2", "-I"])
        .arg(tmp.path())
        .arg(here().join("c/cyclone_pair.c"))
        .arg(tmp.join("cyclone_sample.c"))
        .arg("-o")
        .arg(&prog)
        .arg("-lddsc"));
    let n = 40;
    let session = tmp.join("session");
    let out = run(Command::new(&prog)
        .arg(n.to_string())
        .env("CYCLONEDDS_URI", "<General><Interfaces><NetworkInterface address=\"127.0.0.1\"/></Interfaces><AllowMulticast>false</AllowMulticast></General>")
        .env("LD_PRELOAD", lib_dir().join("libtracetools.so"))
        .env("ROSTRACE_SESSION_DIR", &session));
    // Samples are taken in the order written (one writer, reliable, keep-all).
    let stamps: Vec<u64> = out
        .lines()
        .filter(|l| l.starts_with("sample "))
        .map(|l| l.split_whitespace().nth(2).unwrap().parse().unwrap())
        .collect();
    assert_eq!(stamps.len(), n, "{out}");
    let binds: Vec<u64> = caret_events(&session)
        .into_iter()
        .filter(|(e, _)| e == "dds_bind_addr_to_stamp")
        .map(|(_, f)| u64::from_str_radix(f["source_stamp"].trim_start_matches("0x"), 16).unwrap())
        .collect();
    assert_eq!(
        binds, stamps,
        "dds_bind_addr_to_stamp source stamps vs the reader's source_timestamp, sample by sample"
    );
}

#[test]
fn caret_c_abi() {
    let tmp = TempDir::new("hooks-caret-abi");
    let prog = tmp.join("caret_abi");
    tracetools::compile_c(&here().join("c/caret_abi.c"), &prog, &lib_dir()).unwrap();
    let session = tmp.join("session");
    let out = run(Command::new(&prog).env("ROSTRACE_SESSION_DIR", &session).env("ROS_DISTRO", "jazzy"));
    assert_eq!(out.trim(), "enabled 1");
    let got: Vec<String> = caret_events(&session)
        .into_iter()
        .map(|(n, f)| format!("{n} {}", f.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")))
        .collect();
    assert_eq!(
        got,
        [
            "caret_init clock_offset=123 distribution=jazzy",
            "rmw_implementation init_timestamp=456 rmw_impl=rmw_test_cpp",
            "rcl_node_init init_timestamp=789 namespace=/ns node_handle=0x10 node_name=node rmw_handle=0x11",
            "dds_bind_addr_to_stamp addr=0x20 source_stamp=0x3e8",
            "dds_write message=0x31 rmw_publisher_handle=0x30 timestamp=2000",
            "sim_time stamp=0xbb8",
            "construct_executor executor_addr=0x40 executor_type_name=(null) init_timestamp=5",
        ]
    );
    // Humble's dds_write: the message only.
    let humble = tmp.join("humble");
    run(Command::new(&prog).env("ROSTRACE_SESSION_DIR", &humble).env("ROS_DISTRO", "humble"));
    let w = caret_events(&humble).into_iter().find(|(n, _)| n == "dds_write").unwrap().1;
    assert_eq!(w.keys().collect::<Vec<_>>(), ["message"]);
}
