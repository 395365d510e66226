"""Publishes /clock (rosgraph_msgs/Clock) as a simulator does: sim time runs SPEED times faster
than wall time from START seconds, published RATE times per second of wall time, for DURATION
seconds of wall time, with rclpy's default publisher QoS (reliable, volatile, depth 10).

    python clock_publisher.py --log FILE [--start 1000] [--speed 10] [--rate 50] [--duration 6]

Writes one line per publication to FILE: the wall time it was published at (ns since the epoch)
and the clock it carried (ns), separated by a space.
"""

import argparse
import time

import rclpy
from rosgraph_msgs.msg import Clock


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--start", type=float, default=1000.0)
    ap.add_argument("--speed", type=float, default=10.0)
    ap.add_argument("--rate", type=float, default=50.0)
    ap.add_argument("--duration", type=float, default=6.0)
    a = ap.parse_args()
    rclpy.init()
    node = rclpy.create_node("sim_clock")
    pub = node.create_publisher(Clock, "/clock", 10)
    period = 1.0 / a.rate
    lines = []
    t0 = time.time_ns()
    k = 0
    while True:
        now = time.time_ns()
        if now - t0 > a.duration * 1e9:
            break
        sim = int(a.start * 1e9 + a.speed * (now - t0))
        msg = Clock()
        msg.clock.sec = sim // 1_000_000_000
        msg.clock.nanosec = sim % 1_000_000_000
        pub.publish(msg)
        lines.append(f"{now} {sim}\n")
        k += 1
        # The next publication's wall time, on the grid from t0.
        wait = t0 + k * period * 1e9 - time.time_ns()
        if wait > 0:
            time.sleep(wait / 1e9)
    with open(a.log, "w") as f:
        f.writelines(lines)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
