//! The ROS 2 message and service types the demo uses, laid out as their IDL so that CDR
//! serialization matches ROS 2 nodes of the same types.

use ros2_client::Message;
use rostrace_ros2::ros2_client;
use serde::{Deserialize, Serialize};

/// `builtin_interfaces/msg/Time`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
pub struct Time {
    /// Seconds since the epoch.
    pub sec: i32,
    /// Nanoseconds within the second.
    pub nanosec: u32,
}

impl Time {
    /// The system clock now.
    pub fn now() -> Time {
        let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        Time { sec: d.as_secs() as i32, nanosec: d.subsec_nanos() }
    }
}

/// `std_msgs/msg/Header`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Header {
    /// When the data was acquired.
    pub stamp: Time,
    /// The coordinate frame.
    pub frame_id: String,
}

/// `sensor_msgs/msg/PointField`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct PointField {
    /// Field name (`x`, `y`, `z`, `intensity`).
    pub name: String,
    /// Byte offset in a point.
    pub offset: u32,
    /// Datatype code (7: FLOAT32).
    pub datatype: u8,
    /// Elements in the field.
    pub count: u32,
}

/// `sensor_msgs/msg/PointCloud2`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct PointCloud2 {
    /// Stamp and frame.
    pub header: Header,
    /// Rows (1 for an unordered cloud).
    pub height: u32,
    /// Points per row.
    pub width: u32,
    /// Layout of a point.
    pub fields: Vec<PointField>,
    /// Byte order of `data`.
    pub is_bigendian: bool,
    /// Bytes per point.
    pub point_step: u32,
    /// Bytes per row.
    pub row_step: u32,
    /// The points.
    pub data: Vec<u8>,
    /// No invalid points.
    pub is_dense: bool,
}

/// `geometry_msgs/msg/Vector3`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
pub struct Vector3 {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// z.
    pub z: f64,
}

/// `geometry_msgs/msg/Quaternion`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
pub struct Quaternion {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// z.
    pub z: f64,
    /// w.
    pub w: f64,
}

impl Default for Quaternion {
    fn default() -> Self {
        Quaternion { x: 0.0, y: 0.0, z: 0.0, w: 1.0 }
    }
}

/// `sensor_msgs/msg/Imu`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Imu {
    /// Stamp and frame.
    pub header: Header,
    /// Orientation.
    pub orientation: Quaternion,
    /// Its covariance, row major.
    pub orientation_covariance: [f64; 9],
    /// Angular velocity, rad/s.
    pub angular_velocity: Vector3,
    /// Its covariance.
    pub angular_velocity_covariance: [f64; 9],
    /// Linear acceleration, m/s².
    pub linear_acceleration: Vector3,
    /// Its covariance.
    pub linear_acceleration_covariance: [f64; 9],
}

/// `geometry_msgs/msg/Pose`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
pub struct Pose {
    /// Position (`geometry_msgs/msg/Point` has the layout of a Vector3).
    pub position: Vector3,
    /// Orientation.
    pub orientation: Quaternion,
}

/// `geometry_msgs/msg/PoseStamped`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct PoseStamped {
    /// Stamp and frame.
    pub header: Header,
    /// The pose.
    pub pose: Pose,
}

/// `geometry_msgs/msg/Twist`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
pub struct Twist {
    /// m/s.
    pub linear: Vector3,
    /// rad/s.
    pub angular: Vector3,
}

/// `geometry_msgs/msg/TwistStamped`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct TwistStamped {
    /// Stamp and frame.
    pub header: Header,
    /// The command.
    pub twist: Twist,
}

/// `std_srvs/srv/Trigger` request (an empty IDL structure carries one placeholder byte).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct TriggerRequest {
    /// Placeholder.
    pub structure_needs_at_least_one_member: u8,
}

/// `std_srvs/srv/Trigger` response.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct TriggerResponse {
    /// Whether the call succeeded.
    pub success: bool,
    /// The answer.
    pub message: String,
}

impl Message for TriggerRequest {}
impl Message for TriggerResponse {}
