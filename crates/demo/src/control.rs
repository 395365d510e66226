//! The `control` process: fusion (on its own executor thread), planner with a service client, actuator.

use crate::msgs::{Header, Imu, PointCloud2, Pose, PoseStamped, Quaternion, Time, TriggerRequest, TriggerResponse};
use crate::msgs::{Twist, TwistStamped, Vector3};
use crate::tally::Counters;
use crate::work::{busy, mean_of, phase, Rng};
use crate::Tally;
use rostrace_ros2::{default_qos, Context, Executor, Result};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn latest<T>() -> Arc<Mutex<Option<T>>> {
    Arc::new(Mutex::new(None))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn run(domain: u16, duration: Duration, stop: &AtomicBool) -> Result<Tally> {
    let ctx = Context::with_domain(domain)?;
    let qos = default_qos();
    let counts = Counters::default();

    // Fusion: the latest IMU orientation with each filtered cloud gives a pose.
    let mut fusion = ctx.create_node("/localization", "fusion")?;
    let pose_pub = fusion.create_publisher::<PoseStamped>("pose", "geometry_msgs/PoseStamped", &qos)?;
    let pose_handle = pose_pub.handle();
    let imu_latest = latest::<Quaternion>();
    let (got, slot, mut rng) = (counts.counter("received", "/sensing/imu"), imu_latest.clone(), Rng::new(5));
    let imu_sub = fusion.create_subscription("/sensing/imu", "sensor_msgs/Imu", &qos, move |m: Imu, _info| {
        got.add();
        busy(rng.work_time(mean_of("/localization/fusion:/sensing/imu", 30.0)));
        *lock(&slot) = Some(m.orientation);
    })?;
    let (got, sent, mut rng) = (
        counts.counter("received", "/sensing/points_filtered"),
        counts.counter("published", pose_pub.topic()),
        Rng::new(6),
    );
    let mut x = 0.0;
    fusion.create_subscription(
        "/sensing/points_filtered",
        "sensor_msgs/PointCloud2",
        &qos,
        move |c: PointCloud2, _info| {
            got.add();
            busy(rng.work_time(mean_of("/localization/fusion:/sensing/points_filtered", 600.0)));
            x += 0.01 * (c.width as f64 / 300.0);
            let orientation = lock(&imu_latest).unwrap_or_default();
            let pose = PoseStamped {
                header: Header { stamp: c.header.stamp, frame_id: "map".into() },
                pose: Pose { position: Vector3 { x, y: 0.0, z: 0.0 }, orientation },
            };
            if pose_pub.publish(pose).is_ok() {
                sent.add();
            }
        },
    )?;
    // The pose is published in the cloud's callback (the trace shows it) from the latest IMU
    // message (the node declares it).
    fusion.message_link_periodic_async(&[imu_sub], &[pose_handle]);

    // Planner: at 20 Hz, a command from the latest pose; asks the map server for the speed limit at 2 Hz.
    let mut planner = ctx.create_node("/planning", "planner")?;
    let cmd_pub = planner.create_publisher::<TwistStamped>("/control/cmd_vel", "geometry_msgs/TwistStamped", &qos)?;
    let cmd_handle = cmd_pub.handle();
    let pose_latest = latest::<Pose>();
    let (got, slot, mut rng) = (counts.counter("received", "/localization/pose"), pose_latest.clone(), Rng::new(7));
    let pose_sub = planner.create_subscription(
        "/localization/pose",
        "geometry_msgs/PoseStamped",
        &qos,
        move |p: PoseStamped, _info| {
            got.add();
            busy(rng.work_time(mean_of("/planning/planner:/localization/pose", 20.0)));
            *lock(&slot) = Some(p.pose);
        },
    )?;
    let limit = Arc::new(Mutex::new(5.0f64));
    let (answers, limit_slot) = (counts.counter("responses", "/map/speed_limit"), limit.clone());
    let client =
        planner.create_client("/map/speed_limit", "std_srvs/Trigger", move |_seq: i64, r: TriggerResponse| {
            answers.add();
            if let Ok(v) = r.message.parse::<f64>() {
                *lock(&limit_slot) = v;
            }
        })?;
    let (sent, asked, mut rng) =
        (counts.counter("published", cmd_pub.topic()), counts.counter("sent", "/map/speed_limit"), Rng::new(8));
    let mut tick = 0u64;
    planner.create_timer_aligned(Duration::from_millis(50), phase(Duration::from_millis(7)), move || {
        tick += 1;
        if tick.is_multiple_of(10) && client.send_request(TriggerRequest::default()).is_ok() {
            asked.add();
        }
        let Some(pose) = *lock(&pose_latest) else { return };
        busy(rng.work_time(mean_of("/planning/planner:timer", 1500.0)));
        let v = lock(&limit).min(2.0 + pose.position.x);
        let cmd = TwistStamped {
            header: Header { stamp: Time::now(), frame_id: "base_link".into() },
            twist: Twist {
                linear: Vector3 { x: v, y: 0.0, z: 0.0 },
                angular: Vector3 { x: 0.0, y: 0.0, z: -0.1 * pose.orientation.z },
            },
        };
        if cmd_pub.publish(cmd).is_ok() {
            sent.add();
        }
    })?;
    // Each command is made from the latest pose: declared, so analyses follow the pose into it.
    planner.message_link_periodic_async(&[pose_sub], &[cmd_handle]);

    // Actuator: the sink.
    let mut actuator = ctx.create_node("/control", "actuator")?;
    let (got, mut rng) = (counts.counter("received", "/control/cmd_vel"), Rng::new(9));
    actuator.create_subscription(
        "/control/cmd_vel",
        "geometry_msgs/TwistStamped",
        &qos,
        move |_c: TwistStamped, _info| {
            got.add();
            busy(rng.work_time(mean_of("/control/actuator:/control/cmd_vel", 100.0)));
        },
    )?;

    let mut fusion_exec = Executor::new()?;
    fusion_exec.add_node(fusion)?;
    let mut exec = Executor::new()?;
    exec.add_node(planner)?;
    exec.add_node(actuator)?;
    let errors = std::thread::scope(|s| {
        let t = std::thread::Builder::new()
            .name("fusion".into())
            .spawn_scoped(s, || {
                crate::spin::spin(&mut fusion_exec, duration, stop);
                fusion_exec.read_errors()
            })
            .map_err(rostrace_ros2::Error::Io)?;
        crate::spin::spin(&mut exec, duration, stop);
        let mut errors = exec.read_errors();
        errors.extend(t.join().unwrap_or_default());
        Ok::<_, rostrace_ros2::Error>(errors)
    })?;
    Ok(counts.tally("control", errors))
}
