//! Callback, callback group and executor names as caret_analyze v0.7.3 gives them
//! (`architecture_loaded.py`: `indexed_name`, `Util.num_digit`), on a node with more than ten
//! callbacks, and the architecture file rostrace writes read back with the same names.

use rostrace_analysis::paths::{yaml, Architecture};
use rostrace_ctf::write::Payload;
#[path = "support/system.rs"]
mod system;
use system::{Sys, MS};

/// A node of 8 timers, 4 subscriptions and 2 services, in groups: one group of timers and
/// subscriptions, one of services only; and a small node in a group of its own. One executor.
fn build(dir: &std::path::Path) {
    let mut s = Sys::new();
    let big = s.node("big");
    let small = s.node("small");
    let exec = s.addr();
    s.init_ev("ros2_caret:construct_executor", Payload::new().u64(exec).string(b"single_threaded_executor").i64(0));
    let (g_main, g_srv, g_small) = (s.addr(), s.addr(), s.addr());
    for g in [g_main, g_srv, g_small] {
        s.init_ev(
            "ros2_caret:add_callback_group",
            Payload::new().u64(exec).u64(g).string(b"mutually_exclusive").i64(0),
        );
    }
    let mut t = 10 * MS;
    // Subscriptions created before timers: timers are still named first.
    for k in 0..4 {
        let sub = s.subscription(big, &format!("/in{k}"));
        s.init_ev("ros2_caret:callback_group_add_subscription", Payload::new().u64(g_main).u64(sub.handle).i64(0));
        s.run(2, sub.callback, t, t + 1000);
        t += MS;
    }
    for k in 0..8 {
        let timer_handle = s.addr();
        let cb = s.addr();
        s.init_ev("ros2:rcl_timer_init", Payload::new().u64(timer_handle).i64(((k + 1) * 10 * MS) as i64));
        s.init_ev("ros2:rclcpp_timer_callback_added", Payload::new().u64(timer_handle).u64(cb));
        s.init_ev("ros2:rclcpp_timer_link_node", Payload::new().u64(timer_handle).u64(big));
        s.init_ev("ros2:rclcpp_callback_register", Payload::new().u64(cb).string(format!("timer_{k}").as_bytes()));
        s.init_ev("ros2_caret:callback_group_add_timer", Payload::new().u64(g_main).u64(timer_handle).i64(0));
        s.run(2, cb, t, t + 1000);
        t += MS;
    }
    for k in 0..2 {
        let (h, rmw, cb) = (s.addr(), s.addr(), s.addr());
        s.init_ev(
            "ros2:rcl_service_init",
            Payload::new().u64(h).u64(big).u64(rmw).string(format!("/srv{k}").as_bytes()),
        );
        s.init_ev("ros2:rclcpp_service_callback_added", Payload::new().u64(h).u64(cb));
        s.init_ev("ros2:rclcpp_callback_register", Payload::new().u64(cb).string(format!("service_{k}").as_bytes()));
        s.init_ev("ros2_caret:callback_group_add_service", Payload::new().u64(g_srv).u64(h).i64(0));
        s.run(2, cb, t, t + 1000);
        t += MS;
    }
    let sub = s.subscription(small, "/in0");
    s.init_ev("ros2_caret:callback_group_add_subscription", Payload::new().u64(g_small).u64(sub.handle).i64(0));
    s.run(3, sub.callback, t, t + 1000);
    s.write(dir);
}

#[test]
fn names_are_caret_analyzes_and_survive_the_file() {
    let dir = rostrace_testkit::TempDir::new("arch-names");
    build(dir.path());
    let (set, errors) = rostrace_ctf::TraceSet::open(&[dir.path()]);
    assert!(errors.is_empty(), "{errors:?}");
    let a = rostrace_analysis::analyze_traces(&set, |_, _| {});
    let arch = Architecture::from_analysis(&a);
    let big = &arch.nodes[arch.node("/big").expect("/big")];
    let names: Vec<(&str, &str)> = big.callbacks.iter().map(|c| (c.name.as_str(), c.symbol.as_str())).collect();
    let mut want: Vec<(String, String)> =
        (0..8).map(|k| (format!("/big/callback_{k:02}"), format!("timer_{k}"))).collect();
    want.extend((0..4).map(|k| (format!("/big/callback_{:02}", 8 + k), "on_message".to_string())));
    want.extend((0..2).map(|k| (format!("/big/service_callback_{k}"), format!("service_{k}"))));
    let want: Vec<(&str, &str)> = want.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    assert_eq!(names.iter().map(|n| n.0).collect::<Vec<_>>(), want.iter().map(|n| n.0).collect::<Vec<_>>());
    assert_eq!(names[..8], want[..8], "timers first, in creation order");
    let groups: Vec<&str> = big.groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(groups, ["/big/callback_group_0", "/big/service_only_callback_group_0"]);
    assert_eq!(big.groups[0].callbacks.len(), 12);
    assert_eq!(arch.nodes[arch.node("/small").unwrap()].callbacks[0].name, "/small/callback_0");
    assert_eq!(arch.executors.len(), 1);
    assert_eq!(arch.executors[0].name, "executor_0");

    // The file, read back: the same callback names, and every name a group lists is a callback of
    // its node (caret_analyze refuses a group naming a callback it does not know).
    let text = yaml::export(&arch);
    let back = yaml::import(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let bbig = back.nodes.iter().find(|n| n.name == "/big").expect("/big in the file");
    let file_names: Vec<&str> = bbig.callbacks.iter().map(|c| c.name.as_str()).collect();
    assert!(file_names.contains(&"/big/callback_00") && file_names.contains(&"/big/callback_11"), "{text}");
    for n in &back.nodes {
        for g in &n.groups {
            for c in &g.callbacks {
                assert!(n.callbacks.iter().any(|x| &x.name == c), "{}: group {} lists {c}\n{text}", n.name, g.name);
            }
        }
    }
}
