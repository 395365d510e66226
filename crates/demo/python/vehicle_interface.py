"""An rclpy node that joins the demo system: the vehicle interface.

    rostrace demo --distro kilted -- python3 crates/demo/python/vehicle_interface.py

Run under `rostrace demo -- ...`, it is traced in the same session as the demo's Rust nodes
(ros2-client over RustDDS) and talks to them over DDS on the same domain (the demo sets
ROS_DOMAIN_ID): node `/vehicle/interface` subscribes to the planner's `/control/cmd_vel`
(geometry_msgs/TwistStamped, Rust -> Python) and publishes the vehicle's own IMU on
`/sensing/imu` at 50 Hz and on each command it applies (sensor_msgs/Imu, Python -> Rust: the
demo's fusion node takes it beside the Rust IMU's), so that a path goes planner -> vehicle
interface -> fusion (Rust -> Python -> Rust). It also takes `/vehicle/status` (std_msgs/String), which the C++ vehicle node of
the real-rclcpp tests publishes when it runs beside (C++ -> Python). QoS: rclcpp's default
(reliable, volatile, keep last 10), as the demo's.

It needs rclpy with sensor_msgs and geometry_msgs: a ROS 2 install (`source /opt/ros/<distro>/setup.bash`)
or a virtualenv with the PyPI wheels (`pip install ros-rclpy ros-rmw-fastrtps-cpp ros-sensor-msgs
ros-geometry-msgs`). It runs until Ctrl-C or SIGINT/SIGTERM (the demo sends SIGINT when its time
is up), or `--duration SECS`, then prints what it counted as one JSON line on stdout:
{"process": "vehicle_interface", "published": {...}, "received": {...}}.
"""

import argparse
import json
import math
import signal
import sys
import time


def main():
    ap = argparse.ArgumentParser(description="The demo's vehicle interface, in rclpy.")
    ap.add_argument("--duration", type=float, default=None, help="stop after SECS (default: when signalled)")
    ap.add_argument("--rate", type=float, default=50.0, help="IMU rate in Hz (default 50)")
    a = ap.parse_args()

    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy, HistoryPolicy, DurabilityPolicy
    from geometry_msgs.msg import TwistStamped
    from sensor_msgs.msg import Imu
    from std_msgs.msg import String

    qos = QoSProfile(
        depth=10,
        history=HistoryPolicy.KEEP_LAST,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )
    counts = {"process": "vehicle_interface", "published": {"/sensing/imu": 0}, "received": {"/control/cmd_vel": 0, "/vehicle/status": 0}}
    stop = []

    def on_signal(signum, _frame):
        stop.append(signum)

    from rclpy.signals import SignalHandlerOptions

    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    node = rclpy.create_node("interface", namespace="/vehicle")
    imu_pub = node.create_publisher(Imu, "/sensing/imu", qos)
    speed = [0.0]

    start = time.monotonic()

    def publish_imu():
        m = Imu()
        m.header.stamp = node.get_clock().now().to_msg()
        m.header.frame_id = "vehicle"
        yaw = 0.1 * (time.monotonic() - start)
        m.orientation.z = math.sin(yaw / 2)
        m.orientation.w = math.cos(yaw / 2)
        m.linear_acceleration.x = speed[0]
        m.linear_acceleration.z = 9.81
        imu_pub.publish(m)
        counts["published"]["/sensing/imu"] += 1

    def on_cmd(msg):
        counts["received"]["/control/cmd_vel"] += 1
        speed[0] = msg.twist.linear.x
        # The vehicle reports its IMU as soon as it applies a command, so that the planner's
        # command reaches the fusion node through this node: a path Rust -> Python -> Rust.
        publish_imu()

    node.create_subscription(TwistStamped, "/control/cmd_vel", on_cmd, qos)

    def on_status(_msg):
        counts["received"]["/vehicle/status"] += 1

    node.create_subscription(String, "/vehicle/status", on_status, qos)

    def on_timer():
        publish_imu()

    node.create_timer(1.0 / a.rate, on_timer)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    while not stop and (a.duration is None or time.monotonic() - start < a.duration):
        executor.spin_once(timeout_sec=0.1)
    executor.shutdown()
    node.destroy_node()
    rclpy.shutdown()
    print(json.dumps(counts), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
