"""A talker and a listener in rclpy, for the tests of ROS 2's front doors (launch files, `ros2
trace`): the talker publishes COUNT std_msgs/String on /chatter at 50 Hz once the listener is
matched; the listener exits once it has taken COUNT of them. Each prints one JSON line
{"role", "published" or "taken"} and exits 0 when it did its part (1 after TIMEOUT seconds).

    python chatter.py --role talker|listener [--count 40] [--timeout 30]
"""

import argparse
import json
import time

import rclpy
from std_msgs.msg import String


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--role", choices=["talker", "listener"], required=True)
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--timeout", type=float, default=30.0)
    a = ap.parse_args()
    rclpy.init()
    node = rclpy.create_node(a.role)
    end = time.monotonic() + a.timeout
    done = 0
    if a.role == "talker":
        pub = node.create_publisher(String, "chatter", 100)
        while pub.get_subscription_count() == 0 and time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.05)
        # The listener's subscription is matched: from now on every message reaches it.
        time.sleep(0.5)
        while done < a.count and time.monotonic() < end:
            pub.publish(String(data=f"hello {done}"))
            done += 1
            rclpy.spin_once(node, timeout_sec=0.02)
        # Time for the last ones to be delivered before the process and its writer go.
        time.sleep(1.0)
        print(json.dumps({"role": a.role, "published": done}), flush=True)
    else:
        taken = []
        node.create_subscription(String, "chatter", lambda m: taken.append(m.data), 100)
        while len(taken) < a.count and time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.05)
        done = len(taken)
        print(json.dumps({"role": a.role, "taken": done}), flush=True)
    node.destroy_node()
    rclpy.shutdown()
    raise SystemExit(0 if done == a.count else 1)


if __name__ == "__main__":
    main()
