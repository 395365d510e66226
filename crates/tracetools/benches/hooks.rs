//! Cost of CARET's hooks (`src/hooks`) on the functions they hook, printed as ratios.
//!
//! `cargo bench -p rostrace-tracetools --bench hooks [-- CALLS]`
//!
//! A C program calls two functions of a library of its own that carry the hooked names (Cyclone
//! DDS's `dds_write_ts`, Fast DDS 3.x's `DataWriter::write_w_timestamp`) and do almost nothing,
//! CALLS times each (best of 5 rounds), in four set-ups, each the best of 3 processes:
//! 1. unhooked (the program alone), the reference;
//! 2. rostrace's libtracetools.so preloaded, no session (tracing off): the hook forwards;
//! 3. preloaded with the LTTng backend and no LTTng session (`ROSTRACE_BACKEND=lttng`);
//! 4. preloaded, recording (embedded session): the hook also records `dds_bind_addr_to_stamp`.
//!
//! Set-ups 2 and 3 are what a process pays for the hooks when nobody records: the ratio to 1.
//!
//! Then the same with the real function: a Cyclone DDS writer (Debian's libddsc, no reader)
//! writing with `dds_write` and `dds_write_ts`, unhooked and hooked with no session: what a
//! publisher pays, as a ratio to its write (skipped when Cyclone DDS or its `idlc` is missing).

mod common;

use std::path::Path;
use std::process::Command;

fn cc(args: &[&std::ffi::OsStr]) {
    let st = Command::new(std::env::var_os("CC").unwrap_or_else(|| "cc".into())).args(args).status().expect("cc");
    assert!(st.success(), "cc {args:?}");
}

fn run(prog: &Path, calls: u64, env: &[(&str, &std::ffi::OsStr)]) -> (f64, f64) {
    let mut best = (f64::MAX, f64::MAX);
    for _ in 0..3 {
        let mut cmd = Command::new(prog);
        cmd.arg(calls.to_string())
            .env_remove("LD_PRELOAD")
            .env_remove("ROSTRACE_SESSION_DIR")
            .env_remove("ROSTRACE_BACKEND");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let s = String::from_utf8_lossy(&out.stdout);
        let v: Vec<f64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();
        best = (best.0.min(v[0]), best.1.min(v[1]));
    }
    best
}

fn main() {
    let calls: u64 = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(2_000_000);
    let dir = std::env::temp_dir().join(format!("rostrace-hooks-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/hooks");
    let lib = dir.join("libhooked.so");
    cc(&[
        "-O2".as_ref(),
        "-fPIC".as_ref(),
        "-shared".as_ref(),
        src.join("hooked.c").as_os_str(),
        "-o".as_ref(),
        lib.as_os_str(),
    ]);
    let prog = dir.join("caller");
    let rpath = format!("-Wl,-rpath,{}", dir.display());
    let ldir = format!("-L{}", dir.display());
    cc(&[
        "-O2".as_ref(),
        src.join("caller.c").as_os_str(),
        "-o".as_ref(),
        prog.as_os_str(),
        ldir.as_ref(),
        "-lhooked".as_ref(),
        rpath.as_ref(),
    ]);
    let ours = common::lib_dir().join("libtracetools.so");
    let session = dir.join("session");
    let base = run(&prog, calls, &[]);
    let off = run(&prog, calls, &[("LD_PRELOAD", ours.as_os_str())]);
    let lttng = run(&prog, calls, &[("LD_PRELOAD", ours.as_os_str()), ("ROSTRACE_BACKEND", "lttng".as_ref())]);
    let rec = run(
        &prog,
        calls.min(200_000),
        &[("LD_PRELOAD", ours.as_os_str()), ("ROSTRACE_SESSION_DIR", session.as_os_str())],
    );
    println!("hooked call cost, ns per call (best of 3 processes x 5 rounds of {calls} calls)");
    println!("{:<46} {:>12} {:>10} {:>18} {:>10}", "set-up", "dds_write_ts", "ratio", "write_w_timestamp", "ratio");
    for (label, v) in [
        ("unhooked (reference)", base),
        ("hooked, no session (tracing off)", off),
        ("hooked, LTTng backend, no LTTng session", lttng),
        ("hooked, recording (embedded session)", rec),
    ] {
        println!("{label:<46} {:>12.2} {:>9.2}x {:>18.2} {:>9.2}x", v.0, v.0 / base.0, v.1, v.1 / base.1);
    }
    println!(
        "no session: +{:.2} ns (dds_write_ts), +{:.2} ns (write_w_timestamp) per hooked call",
        off.0 - base.0,
        off.1 - base.1
    );
    cyclone(&dir, &ours, calls.min(200_000));
    let _ = std::fs::remove_dir_all(&dir);
}

fn cyclone(dir: &Path, ours: &Path, calls: u64) {
    let have_idlc = Command::new("idlc").arg("-v").output().is_ok_and(|o| o.status.success());
    if !Path::new("/usr/include/dds/dds.h").exists() || !have_idlc {
        println!("Cyclone DDS: not installed (cyclonedds-dev, cyclonedds-tools), skipped");
        return;
    }
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c");
    let st = Command::new("idlc").current_dir(dir).args(["-l", "c"]).arg(tests.join("cyclone_sample.idl")).status();
    assert!(st.is_ok_and(|s| s.success()), "idlc");
    let prog = dir.join("cyclone_pair");
    cc(&[
        "-O2".as_ref(),
        "-I".as_ref(),
        dir.as_os_str(),
        tests.join("cyclone_pair.c").as_os_str(),
        dir.join("cyclone_sample.c").as_os_str(),
        "-o".as_ref(),
        prog.as_os_str(),
        "-lddsc".as_ref(),
    ]);
    let uri = "<General><Interfaces><NetworkInterface address=\"127.0.0.1\"/></Interfaces><AllowMulticast>false</AllowMulticast></General>";
    let runs = |env: &[(&str, &std::ffi::OsStr)]| {
        let mut best = (f64::MAX, f64::MAX);
        for _ in 0..3 {
            let mut cmd = Command::new(&prog);
            cmd.args(["bench", &calls.to_string()]).env("CYCLONEDDS_URI", uri);
            cmd.env_remove("LD_PRELOAD").env_remove("ROSTRACE_SESSION_DIR").env_remove("ROSTRACE_BACKEND");
            for (k, v) in env {
                cmd.env(k, v);
            }
            let out = cmd.output().expect("run");
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let v: Vec<f64> =
                String::from_utf8_lossy(&out.stdout).split_whitespace().map(|x| x.parse().unwrap()).collect();
            best = (best.0.min(v[0]), best.1.min(v[1]));
        }
        best
    };
    let base = runs(&[]);
    let off = runs(&[("LD_PRELOAD", ours.as_os_str())]);
    println!("Cyclone DDS writer (no reader), ns per write (best of 3 processes x 5 rounds of {calls})");
    println!("{:<46} {:>12} {:>10} {:>18} {:>10}", "set-up", "dds_write", "ratio", "dds_write_ts", "ratio");
    for (label, v) in [("unhooked (reference)", base), ("hooked, no session (tracing off)", off)] {
        println!("{label:<46} {:>12.1} {:>9.3}x {:>18.1} {:>9.3}x", v.0, v.0 / base.0, v.1, v.1 / base.1);
    }
}
