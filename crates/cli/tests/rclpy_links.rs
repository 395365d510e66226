//! Message links declared by real rclpy nodes (`rostrace.rclpy.message_link_*`, on the Jazzy and
//! Kilted wheels, recorded by `rostrace record`): the paths through a fusion node and a
//! synchronizer (`tests/rclpy/links.py`) are followed message by message as the program's own log
//! says its outputs were made. The program runs as a pip user's does, without `ROS_DISTRO`:
//! Rolling's tracepoints, the ones that have the message links.

mod common;
mod real;

use common::*;
use real::*;
use serde_json::Value;
use std::collections::BTreeMap;

fn check(distro: &str, index: u32) {
    let Some(venv) = rclpy_venv(distro) else { return };
    let _lttng = rostrace_testkit::lttng_lock();
    let root = rostrace_testkit::TempDir::new(&format!("rclpy-links-{distro}"));
    let pid = std::process::id();
    let domain = 1 + (pid * 7 + 50 + index * 3) % 98;
    let name = format!("rclpy-links-{distro}-{pid}");
    let mut cmd = rostrace();
    cmd.args(["record", "-s", &name, "-p"]).arg(&*root).arg("--");
    cmd.arg(venv.join("bin/python")).arg(repo().join("crates/cli/tests/rclpy/links.py")).args(["--seconds", "4"]);
    rclpy_env(&mut cmd, distro, domain);
    cmd.env_remove("ROS_DISTRO").env_remove("PYTHONPATH").env_remove("ROSTRACE_RCLPY");
    let log = system_report(&cmd.output().unwrap(), &format!("rclpy links {distro}"));
    assert_eq!(log["declared"], serde_json::json!([true, true]), "{log}");
    let trace = root.join(&name);
    let pubs = publications(&trace, &root.join("csv"));
    let n = |k: &str| log[k].as_array().unwrap().len();
    for (topic, count) in log["published"].as_object().unwrap() {
        assert_eq!(pubs.get(topic).map(Vec::len), count.as_u64().map(|c| c as usize), "{topic}");
    }
    // The program's log: each /cmd the actuator took, from its /pose, from its /points and /imu.
    let idx = |v: &Value, i: usize| v[i].as_u64().unwrap() as usize;
    let (poses, cmds) = (&log["poses"], &log["cmds"]);
    let mut taken: Vec<usize> =
        log["actuated"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
    taken.sort();
    let made = |input: usize| -> Vec<Vec<usize>> {
        let mut v: Vec<Vec<usize>> = taken
            .iter()
            .map(|&c| {
                let pose = idx(&cmds[c], 0);
                vec![idx(&poses[pose], input), pose, c]
            })
            .collect();
        v.sort();
        v
    };
    assert!(n("cmds") > 20 && taken.len() == n("cmds"), "{log}");
    assert_eq!(followed(&trace, "/lidar,/fusion,/sync,/actuator", &pubs), made(0), "{distro}: via /points\n{log}");
    assert_eq!(followed(&trace, "/imu_driver,/fusion,/sync,/actuator", &pubs), made(1), "{distro}: via /imu\n{log}");

    // `rostrace age`: in each /cmd the actuator took, the age of each sensor's data is from the
    // publication of the message the program says it was made from.
    let json = |args: &[&str]| {
        let o = rostrace().args(args).arg(&trace).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<Value>(&o.stdout).unwrap()
    };
    let age = json(&["age", "--to", "/actuator", "--json", "-"]);
    let sources: Vec<&str> = age["sources"].as_array().unwrap().iter().map(|s| s["topic"].as_str().unwrap()).collect();
    assert_eq!(sources, ["/imu", "/points", "/odom"], "{distro}");
    // Which /cmd each actuator callback took: the one-hop path's records.
    let hop = json(&["e2e", "--path", "/sync,/actuator", "--json", "-"]);
    let cmd_at: BTreeMap<i64, usize> = hop["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| {
            let r = r.as_array().unwrap();
            let cmd = pubs["/cmd"].binary_search(&r[0].as_i64()?).ok()?;
            Some((r.last()?.as_i64()?, cmd))
        })
        .collect();
    let inputs = age["inputs"].as_array().unwrap();
    assert_eq!(inputs.len(), taken.len(), "{distro}: every /cmd taken has its data's age");
    for i in inputs {
        let at = i["at_ns"].as_i64().unwrap();
        let c = cmd_at[&at];
        let pose = idx(&cmds[c], 0);
        let want = [
            at - pubs["/imu"][idx(&poses[pose], 1)],
            at - pubs["/points"][idx(&poses[pose], 0)],
            at - pubs["/odom"][idx(&cmds[c], 1)],
        ];
        assert_eq!(i["ages_ns"], serde_json::json!(want), "{distro}: /cmd {c}");
    }
}

#[rostrace_testkit::needs(venvs)]
#[test]
fn rclpy_message_links_jazzy() {
    check("jazzy", 5);
}

#[rostrace_testkit::needs(venvs)]
#[test]
fn rclpy_message_links_kilted() {
    check("kilted", 6);
}
