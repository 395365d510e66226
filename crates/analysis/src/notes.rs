//! What a trace cannot show, and why: each metric needs certain events; a process that did not
//! record them leaves the metric empty. The notes say which metric, which events it needs,
//! which processes lack them, and what to record next time, so that an empty table is never
//! mistaken for "nothing happened".

use crate::collections::{HashMap, HashSet};
use crate::events::Kind;
use crate::model::{Model, Process};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// A metric the trace cannot (fully) give.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Note {
    /// The metric: `message latency`, `callback durations`, ...
    pub metric: String,
    /// The events it needs (any one of the alternatives, each possibly several events).
    pub needs: Vec<String>,
    /// The needed events the processes concerned did not record.
    pub missing: Vec<String>,
    /// The processes concerned, `procname (pid N)`; empty when the note is about the whole trace.
    pub processes: Vec<String>,
    /// Of how many processes the metric would apply to (`processes` lack the events).
    pub of_processes: usize,
    /// Why, in a sentence: which events the trace lacks and what that leaves.
    pub reason: String,
    /// What to record next time.
    pub advice: String,
}

impl Note {
    /// One line: `message latency needs rmw_take or ...: this trace ... has neither`.
    pub fn summary(&self) -> String {
        format!("{} needs {}: {}", self.metric, self.needs.join(" or "), self.reason)
    }
}

/// What the notes are computed from, besides the model.
pub struct Inputs<'a> {
    /// Events the analysis did not use, (name, count).
    pub unused_events: &'a [(String, u64)],
    /// Callbacks of unknown owner that ran, per process (trace, vpid).
    pub unknown_callbacks: &'a BTreeMap<(u32, i64), u64>,
    /// Processes (trace, vpid) where a service callback ran.
    pub service_runs: &'a HashSet<(u32, i64)>,
    /// Callback runs still open when the trace (or window) ended, per process.
    pub open_runs: &'a HashMap<(u32, i64), u64>,
    /// `callback_end` events without their `callback_start` (runs that began before the trace or
    /// window did), per process.
    pub unmatched_ends: &'a HashMap<(u32, i64), u64>,
}

fn versions(ps: &[&Process]) -> String {
    let v: BTreeSet<&str> = ps.iter().filter_map(|p| p.tracetools_version.as_deref()).collect();
    if v.is_empty() {
        String::new()
    } else {
        format!(" (tracetools {})", v.into_iter().collect::<Vec<_>>().join(", "))
    }
}

/// How many of `of` processes: "this trace" when all, or "N of M processes".
fn scope(lacking: &[&Process], of: usize, what: &str) -> String {
    if lacking.len() == of {
        format!("this trace{}", versions(lacking))
    } else {
        format!("{} of {of} {what}{}", lacking.len(), versions(lacking))
    }
}

/// "has" when the scope is the whole trace, else "have" ("3 of 10 processes have").
fn verb(lacking: &[&Process], of: usize) -> &'static str {
    if lacking.len() == of {
        "has"
    } else {
        "have"
    }
}

fn labels(ps: &[&Process], with_host: bool) -> Vec<String> {
    ps.iter().map(|p| p.label(with_host)).collect()
}

fn provider_of(name: &str) -> &str {
    name.split_once(':').map_or(name, |(p, _)| p)
}

/// What a provider of events is, for people.
fn provider_label(p: &str) -> String {
    match p {
        "roscpp" | "rospy" | "roslib" | "rosbag" | "ros" => format!("{p} (ROS 1)"),
        "kernel" => "the Linux kernel".to_string(),
        _ if p.starts_with("lttng_ust") => format!("{p} (LTTng-UST)"),
        _ => p.to_string(),
    }
}

/// The notes of a model whose processes recorded the kinds of events they did.
pub fn notes(m: &Model, inp: &Inputs) -> Vec<Note> {
    let mut procs: Vec<&Process> = m.processes.values().collect();
    procs.sort_by_key(|p| (p.trace, p.vpid));
    let hosts: BTreeSet<&str> = procs.iter().map(|p| p.host.as_str()).collect();
    let with_host = hosts.len() > 1;
    let ros: Vec<&Process> = procs.iter().copied().filter(|p| p.ros_events > 0).collect();
    let mut out = Vec::new();
    if ros.is_empty() {
        out.push(no_ros_events(inp, procs.len()));
        return out;
    }
    let cx = Cx {
        inp,
        ros,
        with_host,
        with_subs: m.subscriptions.items.iter().map(|s| (s.key.0, s.key.1)).collect(),
        with_nodes: m.nodes.items.iter().map(|s| (s.key.0, s.key.1)).collect(),
        with_clients: m.clients.items.iter().map(|s| (s.key.0, s.key.1)).collect(),
        unused: inp.unused_events.iter().map(|(n, _)| n.as_str()).collect(),
    };
    latency_receiving(&cx, &mut out);
    latency_publishing(&cx, &mut out);
    callback_durations(&cx, &mut out);
    unknown_owners(&cx, &mut out);
    timers(&cx, &mut out);
    services(&cx, &mut out);
    distribution(&cx, &mut out);
    out
}

/// The note of a trace without ROS 2 events: where its events come from.
fn no_ros_events(inp: &Inputs, of_processes: usize) -> Note {
    let mut by_provider: BTreeMap<&str, u64> = BTreeMap::new();
    for (name, k) in inp.unused_events {
        *by_provider.entry(provider_of(name)).or_default() += k;
    }
    let mut prov: Vec<(&str, u64)> = by_provider.into_iter().collect();
    prov.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let from = if prov.is_empty() {
        "it has no events".to_string()
    } else {
        format!(
            "its events come from {}",
            prov.iter().map(|(p, k)| format!("{}: {k} events", provider_label(p))).collect::<Vec<_>>().join("; ")
        )
    };
    Note {
        metric: "the ROS 2 analysis (nodes, topics, callbacks, latency)".into(),
        needs: vec!["ROS 2 events (ros2:*, ros2_caret:*, dds:*)".into()],
        missing: vec!["ros2:*".into()],
        processes: Vec::new(),
        of_processes,
        reason: format!("this trace has no ROS 2 events: {from}"),
        advice: "trace a ROS 2 application with its ros2:* userspace events enabled \
                         (`rostrace record -- <command>`, or `ros2 trace`)"
            .into(),
    }
}

/// What every note's rule looks at: the pass's tallies, the processes with ROS 2
/// events, and which processes have subscriptions, nodes, clients.
struct Cx<'a> {
    inp: &'a Inputs<'a>,
    ros: Vec<&'a Process>,
    with_host: bool,
    with_subs: HashSet<(u32, i64)>,
    with_nodes: HashSet<(u32, i64)>,
    with_clients: HashSet<(u32, i64)>,
    unused: HashSet<&'a str>,
}

fn key(p: &Process) -> (u32, i64) {
    (p.trace, p.vpid)
}

/// Message latency, receiving side.
fn latency_receiving(cx: &Cx<'_>, out: &mut Vec<Note>) {
    let Cx { ros, with_host, with_subs, unused, .. } = cx;
    let with_host = *with_host;
    // Message latency, receiving side.
    let subs: Vec<&Process> = ros.iter().copied().filter(|p| with_subs.contains(&key(p))).collect();
    let lacking: Vec<&Process> =
        subs.iter().copied().filter(|p| !p.has(Kind::RmwTake) && !p.has(Kind::DispatchSubscription)).collect();
    if !lacking.is_empty() {
        let mut reason = format!(
            "{} {} neither",
            scope(&lacking, subs.len(), "processes with subscriptions"),
            verb(&lacking, subs.len())
        );
        let old: Vec<&str> =
            ["ros2:dispatch", "ros2_hook:take_type_erased"].into_iter().filter(|n| unused.contains(n)).collect();
        if !old.is_empty() {
            reason
                .push_str(&format!(" (it has CARET's first-format {}, which rostrace does not read)", old.join(", ")));
        }
        reason.push_str(
            "; takes, publish->take and publish->callback latencies, unmatched and dropped messages stay empty",
        );
        out.push(Note {
            metric: "message latency".into(),
            needs: vec!["rmw_take".into(), "CARET dispatch_subscription_callback".into()],
            missing: vec!["rmw_take".into(), "dispatch_subscription_callback".into()],
            processes: labels(&lacking, with_host),
            of_processes: subs.len(),
            reason,
            advice: "record rmw_take (ros2_tracing 3.1 or later, Humble+, with rmw_cyclonedds_cpp or \
                     rmw_fastrtps_cpp), or trace with CARET (dispatch_subscription_callback)"
                .into(),
        });
    }
}

/// Message latency, publishing side: each message must be identifiable.
fn latency_publishing(cx: &Cx<'_>, out: &mut Vec<Note>) {
    let Cx { ros, with_host, .. } = cx;
    let with_host = *with_host;
    // Message latency, publishing side: each message must be identifiable.
    let pubs: Vec<&Process> = ros
        .iter()
        .copied()
        .filter(|p| p.has(Kind::RclcppPublish) || p.has(Kind::RclPublish) || p.has(Kind::RmwPublish))
        .collect();
    let lacking: Vec<&Process> = pubs
        .iter()
        .copied()
        .filter(|p| !p.has(Kind::RmwPublish) && !p.has(Kind::DdsWrite) && !p.has(Kind::DdsBindAddrToStamp))
        .collect();
    if !lacking.is_empty() {
        out.push(Note {
            metric: "message latency (publishing side)".into(),
            needs: vec!["rmw_publish".into(), "dds:write".into(), "CARET dds_bind_addr_to_stamp".into()],
            missing: vec!["rmw_publish".into(), "dds:write".into(), "dds_bind_addr_to_stamp".into()],
            processes: labels(&lacking, with_host),
            of_processes: pubs.len(),
            reason: format!(
                "{} {} none of them, only rclcpp_publish/rcl_publish, which do not tell which message a \
                 subscriber took; those publications are never matched",
                scope(&lacking, pubs.len(), "publishing processes"),
                verb(&lacking, pubs.len())
            ),
            advice: "record rmw_publish (Humble+; on Jazzy+ it carries the source timestamp) or trace with \
                     CARET (dds_bind_addr_to_stamp)"
                .into(),
        });
    }
}

/// Callback durations: processes with neither event (their client library has no callback
fn callback_durations(cx: &Cx<'_>, out: &mut Vec<Note>) {
    let Cx { inp, ros, with_host, with_nodes, .. } = cx;
    let with_host = *with_host;
    // Callback durations: processes with neither event (their client library has no callback
    // tracepoints, or the events were not enabled), and processes with one of the two only, whose
    // runs were all cut by the trace's edges.
    let with_ros_nodes: Vec<&Process> = ros.iter().copied().filter(|p| with_nodes.contains(&key(p))).collect();
    let lacking: Vec<&Process> =
        with_ros_nodes.iter().copied().filter(|p| !p.has(Kind::CallbackStart) && !p.has(Kind::CallbackEnd)).collect();
    if !lacking.is_empty() {
        out.push(Note {
            metric: "callback duration".into(),
            needs: vec!["callback_start and callback_end".into()],
            reason: format!(
                "{} {} neither callback_start nor callback_end: their callbacks do not appear (a client \
                 library without callback tracepoints, such as rclpy, which has none in any release; or \
                 the events were not enabled)",
                scope(&lacking, with_ros_nodes.len(), "processes with nodes"),
                verb(&lacking, with_ros_nodes.len()),
            ),
            missing: vec!["callback_start".into(), "callback_end".into()],
            processes: labels(&lacking, with_host),
            of_processes: with_ros_nodes.len(),
            advice: "rclcpp records ros2:callback_start and ros2:callback_end when they are enabled; rclpy's \
                     callbacks are not traced by rclpy itself: record with rostrace record, which loads its rclpy \
                     instrumentation (docs/python-nodes.md)"
                .into(),
        });
    }
    let cut: Vec<&Process> =
        with_ros_nodes.iter().copied().filter(|p| p.has(Kind::CallbackStart) != p.has(Kind::CallbackEnd)).collect();
    if !cut.is_empty() {
        let count =
            |m: &HashMap<(u32, i64), u64>| cut.iter().map(|p| m.get(&key(p)).copied().unwrap_or(0)).sum::<u64>();
        let (open, ended) = (count(inp.open_runs), count(inp.unmatched_ends));
        let mut parts = Vec::new();
        if open > 0 {
            parts.push(format!("{open} run(s) still running when the trace ended (callback_start only)"));
        }
        if ended > 0 {
            parts.push(format!("{ended} run(s) that started before the trace did (callback_end only)"));
        }
        let mut missing = Vec::new();
        if cut.iter().any(|p| !p.has(Kind::CallbackStart)) {
            missing.push("callback_start".to_string());
        }
        if cut.iter().any(|p| !p.has(Kind::CallbackEnd)) {
            missing.push("callback_end".to_string());
        }
        out.push(Note {
            metric: "callback duration".into(),
            needs: vec!["callback_start and callback_end".into()],
            reason: format!(
                "{} {} callbacks traced, but each of their runs was cut by the start or the end of the trace: \
                 {}; a cut run has no duration and is left out",
                scope(&cut, with_ros_nodes.len(), "processes with nodes"),
                verb(&cut, with_ros_nodes.len()),
                parts.join(", ")
            ),
            missing,
            processes: labels(&cut, with_host),
            of_processes: with_ros_nodes.len(),
            advice: "record for longer than a callback runs (start tracing earlier, stop later)".into(),
        });
    }
}

/// Callbacks whose owner is unknown.
fn unknown_owners(cx: &Cx<'_>, out: &mut Vec<Note>) {
    let Cx { inp, ros, with_host, .. } = cx;
    let with_host = *with_host;
    // Callbacks whose owner is unknown.
    let lacking: Vec<&Process> =
        ros.iter().copied().filter(|p| inp.unknown_callbacks.get(&key(p)).is_some_and(|&n| n > 0)).collect();
    if !lacking.is_empty() {
        let n: u64 = lacking.iter().map(|p| inp.unknown_callbacks[&key(p)]).sum();
        let inits = [
            Kind::CallbackRegister,
            Kind::SubscriptionCallbackAdded,
            Kind::TimerCallbackAdded,
            Kind::ServiceCallbackAdded,
            Kind::SubscriptionInit,
            Kind::TimerInit,
            Kind::ServiceInit,
        ];
        let names = [
            "rclcpp_callback_register",
            "rclcpp_subscription_callback_added",
            "rclcpp_timer_callback_added",
            "rclcpp_service_callback_added",
            "rcl_subscription_init",
            "rcl_timer_init",
            "rcl_service_init",
        ];
        let missing: Vec<String> = inits
            .iter()
            .zip(names)
            .filter(|(k, _)| lacking.iter().any(|p| !p.has(**k)))
            .map(|(_, n)| n.to_string())
            .collect();
        out.push(Note {
            metric: "a callback's owner (topic, timer period, node)".into(),
            needs: vec![
                "the initialization events rclcpp_callback_register, rclcpp_*_callback_added, rcl_*_init".into()
            ],
            reason: format!(
                "{n} callback(s) ran whose initialization is not in the trace (the nodes were created before \
                 tracing started, or those events were not enabled): they are shown as `unknown`"
            ),
            missing,
            processes: labels(&lacking, with_host),
            of_processes: ros.len(),
            advice: "start tracing before the nodes are created (`rostrace record -- <command>`, or `rostrace \
                     start` before launching), or trace with CARET, which records initialization again when \
                     recording starts"
                .into(),
        });
    }
}

/// Timer periods and jitter: timers must be declared and linked to their callbacks.
fn timers(cx: &Cx<'_>, out: &mut Vec<Note>) {
    let Cx { ros, with_host, .. } = cx;
    let with_host = *with_host;
    // Timer periods and jitter: timers must be declared and linked to their callbacks.
    // A process that registers its callbacks' owners but declares no timer callback has only
    // timers no node made (rclpy's executors create one per `spin_once(timeout_sec=...)`):
    // there is no node timer whose period could be missing.
    let executor_timers_only =
        |p: &Process| p.has(Kind::CallbackRegister) && !p.has(Kind::TimerCallbackAdded) && !p.has(Kind::TimerLinkNode);
    let timers: Vec<&Process> = ros
        .iter()
        .copied()
        .filter(|p| (p.has(Kind::TimerInit) || p.has(Kind::TimerCallbackAdded)) && !executor_timers_only(p))
        .collect();
    let lacking: Vec<&Process> = timers
        .iter()
        .copied()
        .filter(|p| !p.has(Kind::TimerInit) || !p.has(Kind::TimerCallbackAdded) || !p.has(Kind::TimerLinkNode))
        .collect();
    if !lacking.is_empty() {
        let mut missing = Vec::new();
        for (k, n) in [
            (Kind::TimerInit, "rcl_timer_init"),
            (Kind::TimerCallbackAdded, "rclcpp_timer_callback_added"),
            (Kind::TimerLinkNode, "rclcpp_timer_link_node"),
        ] {
            if lacking.iter().any(|p| !p.has(k)) {
                missing.push(n.to_string());
            }
        }
        out.push(Note {
            metric: "timer jitter".into(),
            needs: vec!["rcl_timer_init with rclcpp_timer_callback_added and rclcpp_timer_link_node".into()],
            reason: format!(
                "{} {} timers without {}: their periods are not linked to a callback or node (rclpy \
                 records rcl_timer_init only)",
                scope(&lacking, timers.len(), "processes with timers"),
                if lacking.len() == timers.len() { "declares" } else { "declare" },
                missing.join(" / ")
            ),
            missing,
            processes: labels(&lacking, with_host),
            of_processes: timers.len(),
            advice: "timer jitter is computed for rclcpp timers; record the rclcpp_timer_* events".into(),
        });
    }
}

/// Services.
fn services(cx: &Cx<'_>, out: &mut Vec<Note>) {
    let Cx { inp, ros, with_host, with_clients, .. } = cx;
    let with_host = *with_host;
    // Services.
    let serving: Vec<&Process> =
        ros.iter().copied().filter(|p| with_clients.contains(&key(p)) || inp.service_runs.contains(&key(p))).collect();
    let service_kinds = [Kind::SendRequest, Kind::TakeRequest, Kind::SendResponse, Kind::TakeResponse];
    let lacking: Vec<&Process> = serving.iter().copied().filter(|p| !service_kinds.iter().any(|k| p.has(*k))).collect();
    if !lacking.is_empty() {
        out.push(Note {
            metric: "service request/response latency".into(),
            needs: vec!["rmw_send_request, rmw_take_request, rmw_send_response, rmw_take_response".into()],
            missing: vec![
                "rmw_send_request".into(),
                "rmw_take_request".into(),
                "rmw_send_response".into(),
                "rmw_take_response".into(),
            ],
            reason: format!(
                "{} {} service clients or served requests but none of these events: only the service \
                 callbacks' durations are known",
                scope(&lacking, serving.len(), "processes with services"),
                verb(&lacking, serving.len())
            ),
            processes: labels(&lacking, with_host),
            of_processes: serving.len(),
            advice: "these events come with ros2_tracing 8.5 (Kilted) and later".into(),
        });
    }
}

/// The ROS 2 distribution: from rcl_init's version field or caret_init's distribution field.
fn distribution(cx: &Cx<'_>, out: &mut Vec<Note>) {
    let Cx { ros, with_host, .. } = cx;
    let with_host = *with_host;
    // The ROS 2 distribution: from rcl_init's version field or caret_init's distribution field.
    let lacking: Vec<&Process> = ros
        .iter()
        .copied()
        .filter(|p| p.tracetools_version.is_none() && p.distribution.as_deref().is_none_or(str::is_empty))
        .collect();
    let (without_version, unrecorded): (Vec<&Process>, Vec<&Process>) =
        lacking.iter().partition(|p| p.has(Kind::RclInit) || p.has(Kind::CaretInit));
    if !unrecorded.is_empty() {
        out.push(Note {
            metric: "ROS 2 distribution".into(),
            needs: vec!["rcl_init (tracetools version)".into(), "CARET caret_init".into()],
            missing: vec!["rcl_init".into(), "caret_init".into()],
            reason: format!(
                "{} {} recorded neither (rcl_init is recorded once, when the process starts)",
                scope(&unrecorded, ros.len(), "processes"),
                verb(&unrecorded, ros.len()),
            ),
            processes: labels(&unrecorded, with_host),
            of_processes: ros.len(),
            advice: "start tracing before the processes start".into(),
        });
    }
    if !without_version.is_empty() {
        let mut missing = Vec::new();
        if without_version.iter().any(|p| p.has(Kind::RclInit)) {
            missing.push("rcl_init.version".to_string());
        }
        if without_version.iter().any(|p| p.has(Kind::CaretInit)) {
            missing.push("caret_init.distribution".to_string());
        }
        out.push(Note {
            metric: "ROS 2 distribution".into(),
            needs: vec![
                "rcl_init with its version field".into(),
                "CARET caret_init with its distribution field".into(),
            ],
            reason: format!(
                "{} {} recorded {} without the field that names the version ({}): CARET's rcl_init has no \
                 version field, and older CARET releases record caret_init without a distribution",
                scope(&without_version, ros.len(), "processes"),
                verb(&without_version, ros.len()),
                missing.iter().map(|m| m.split('.').next().unwrap_or(m)).collect::<Vec<_>>().join(" and "),
                missing.join(", "),
            ),
            missing,
            processes: labels(&without_version, with_host),
            of_processes: ros.len(),
            advice: "nothing else depends on it; a newer CARET (caret_init with distribution) or ros2_tracing's \
                     rcl_init records it"
                .into(),
        });
    }
}
