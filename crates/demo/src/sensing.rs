//! The `sensing` process: lidar, IMU, lidar filter, map server.

use crate::msgs::{Header, Imu, PointCloud2, PointField, Quaternion, Time, TriggerRequest, TriggerResponse, Vector3};
use crate::tally::Counters;
use crate::work::{busy, mean_of, phase, Rng};
use crate::Tally;
use rostrace_ros2::{default_qos, Context, Executor, Result};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Bytes per point: x, y, z, intensity as f32.
const POINT_STEP: u32 = 16;

fn cloud(frame: &str, points: &[[f32; 4]]) -> PointCloud2 {
    let fields = ["x", "y", "z", "intensity"]
        .iter()
        .enumerate()
        .map(|(i, n)| PointField { name: n.to_string(), offset: 4 * i as u32, datatype: 7, count: 1 })
        .collect();
    let data: Vec<u8> = points.iter().flat_map(|p| p.iter().flat_map(|v| v.to_le_bytes())).collect();
    PointCloud2 {
        header: Header { stamp: Time::now(), frame_id: frame.to_string() },
        height: 1,
        width: points.len() as u32,
        fields,
        is_bigendian: false,
        point_step: POINT_STEP,
        row_step: POINT_STEP * points.len() as u32,
        data,
        is_dense: true,
    }
}

fn points(c: &PointCloud2) -> impl Iterator<Item = [f32; 4]> + '_ {
    c.data.chunks_exact(POINT_STEP as usize).map(|p| {
        let f = |i: usize| f32::from_le_bytes([p[4 * i], p[4 * i + 1], p[4 * i + 2], p[4 * i + 3]]);
        [f(0), f(1), f(2), f(3)]
    })
}

pub(crate) fn run(domain: u16, duration: Duration, stop: &AtomicBool) -> Result<Tally> {
    let ctx = Context::with_domain(domain)?;
    let qos = default_qos();
    let counts = Counters::default();

    // Lidar: 100 Hz scans of 200 to 600 points.
    let mut lidar = ctx.create_node("/sensing", "lidar")?;
    let raw = lidar.create_publisher::<PointCloud2>("points_raw", "sensor_msgs/PointCloud2", &qos)?;
    let sent = counts.counter("published", raw.topic());
    let mut rng = Rng::new(1);
    lidar.create_timer_aligned(Duration::from_millis(10), phase(Duration::ZERO), move || {
        let n = 200 + (rng.next_f64() * 400.0) as usize;
        let pts: Vec<[f32; 4]> = (0..n)
            .map(|_| {
                let (r, a) = (1.0 + 60.0 * rng.next_f64() as f32, std::f32::consts::TAU * rng.next_f64() as f32);
                [r * a.cos(), r * a.sin(), (rng.next_f64() as f32 - 0.5) * 2.0, rng.next_f64() as f32]
            })
            .collect();
        busy(rng.work_time(mean_of("/sensing/lidar:timer", 150.0)));
        if raw.publish(cloud("lidar", &pts)).is_ok() {
            sent.add();
        }
    })?;

    // IMU: 50 Hz.
    let mut imu = ctx.create_node("/sensing", "imu")?;
    let imu_pub = imu.create_publisher::<Imu>("imu", "sensor_msgs/Imu", &qos)?;
    let sent = counts.counter("published", imu_pub.topic());
    let mut rng = Rng::new(2);
    let mut yaw = 0.0f64;
    imu.create_timer_aligned(Duration::from_millis(20), phase(Duration::from_millis(5)), move || {
        let rate = 0.2 * (rng.next_f64() - 0.5);
        yaw += rate * 0.02;
        let m = Imu {
            header: Header { stamp: Time::now(), frame_id: "imu".into() },
            orientation: Quaternion { x: 0.0, y: 0.0, z: (yaw / 2.0).sin(), w: (yaw / 2.0).cos() },
            angular_velocity: Vector3 { x: 0.0, y: 0.0, z: rate },
            linear_acceleration: Vector3 { x: 0.1 * rng.next_f64(), y: 0.0, z: 9.81 },
            ..Default::default()
        };
        busy(rng.work_time(mean_of("/sensing/imu:timer", 40.0)));
        if imu_pub.publish(m).is_ok() {
            sent.add();
        }
    })?;

    // Lidar filter: crops to 40 m and keeps every other point.
    let mut filter = ctx.create_node("/sensing", "lidar_filter")?;
    let filtered = filter.create_publisher::<PointCloud2>("points_filtered", "sensor_msgs/PointCloud2", &qos)?;
    let sent = counts.counter("published", filtered.topic());
    let got = counts.counter("received", "/sensing/points_raw");
    let mut rng = Rng::new(3);
    filter.create_subscription("points_raw", "sensor_msgs/PointCloud2", &qos, move |c: PointCloud2, _info| {
        got.add();
        let kept: Vec<[f32; 4]> = points(&c)
            .filter(|p| p[0] * p[0] + p[1] * p[1] < 1600.0)
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, p)| p)
            .collect();
        busy(rng.work_time(mean_of("/sensing/lidar_filter:/sensing/points_raw", 400.0)));
        let mut out = cloud("lidar", &kept);
        out.header.stamp = c.header.stamp;
        if filtered.publish(out).is_ok() {
            sent.add();
        }
    })?;

    // Map server: answers the speed limit.
    let mut map = ctx.create_node("/map", "map_server")?;
    let served = counts.counter("served", "/map/speed_limit");
    let mut rng = Rng::new(4);
    map.create_service("speed_limit", "std_srvs/Trigger", move |_req: TriggerRequest| {
        served.add();
        busy(rng.work_time(mean_of("/map/map_server:/map/speed_limit", 300.0)));
        TriggerResponse { success: true, message: format!("{:.2}", 8.0 + rng.next_f64()) }
    })?;

    let mut exec = Executor::new()?;
    for n in [lidar, imu, filter, map] {
        exec.add_node(n)?;
    }
    crate::spin::spin(&mut exec, duration, stop);
    Ok(counts.tally("sensing", exec.read_errors()))
}
