//! A service call in the middle of a path, in a real rclpy system (`tests/rclpy/service_path.py`,
//! on the Kilted wheels, whose rmw records requests and responses; recorded by `rostrace
//! record`): the planner asks a service in its `/scan` callback and publishes `/cmd` from the
//! future's done callback. With no architecture file, `rostrace paths` finds the path through the
//! call and `rostrace e2e` follows each `/scan` message to the `/cmd` the program says it made.

mod common;
mod real;

use common::*;
use real::*;
use serde_json::Value;

#[rostrace_testkit::needs(venvs)]
#[test]
fn rclpy_service_call_in_a_path_kilted() {
    let distro = "kilted";
    let Some(venv) = rclpy_venv(distro) else { return };
    let _lttng = rostrace_testkit::lttng_lock();
    let root = rostrace_testkit::TempDir::new("rclpy-services");
    let pid = std::process::id();
    let domain = 1 + (pid * 7 + 61) % 98;
    let name = format!("rclpy-services-{pid}");
    let mut cmd = rostrace();
    cmd.args(["record", "-s", &name, "-p"]).arg(&*root).arg("--");
    cmd.arg(venv.join("bin/python"))
        .arg(repo().join("crates/cli/tests/rclpy/service_path.py"))
        .args(["--seconds", "4"]);
    rclpy_env(&mut cmd, distro, domain);
    let log = system_report(&cmd.output().unwrap(), "rclpy service path");
    let trace = root.join(&name);
    let pubs = publications(&trace, &root.join("csv"));
    for (topic, count) in log["published"].as_object().unwrap() {
        assert_eq!(pubs.get(topic).map(Vec::len), count.as_u64().map(|c| c as usize), "{topic}");
    }
    // The program's log: each /cmd the actuator took, and the /scan it was made from.
    let scans: Vec<usize> = log["cmds"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
    let mut made: Vec<Vec<usize>> = log["actuated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize)
        .map(|c| vec![scans[c], c])
        .collect();
    made.sort();
    assert!(made.len() > 50 && made.len() == scans.len(), "{log}");

    let json = |args: &[&str]| {
        let o = rostrace().args(args).arg(&trace).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<Value>(&o.stdout).unwrap()
    };
    let found = json(&["paths", "--from", "/sensor", "--to", "/actuator", "--json", "-"]);
    let first = &found["paths"][0];
    assert_eq!(first["path"]["nodes"], serde_json::json!(["/sensor", "/planner", "/actuator"]), "{found}");
    assert_eq!(first["services"][0]["node"], "/planner", "{found}");
    assert_eq!(first["services"][0]["service"]["service"], "/query", "{found}");
    assert_eq!(first["services"][0]["service"]["servers"], serde_json::json!(["/map"]), "{found}");
    assert_eq!(followed(&trace, "/sensor,/planner,/actuator", &pubs), made, "{log}");
    // The /scan messages the planner asked nothing for stop there.
    let e2e = json(&["e2e", "--path", "/sensor,/planner,/actuator", "--json", "-"]);
    let asked = pubs["/scan"].len() - pubs["/scan"].len() / 4;
    assert!(e2e["records"].as_u64().unwrap() as usize >= pubs["/scan"].len(), "{e2e}");
    assert!(e2e["complete"].as_u64().unwrap() as usize <= asked, "{e2e}");
}
