"""An rclpy system whose nodes declare message links, logging which input messages made each
output: the truth the message-link tests check rostrace's paths against.

    python links.py --seconds S

One process, one SingleThreadedExecutor (rclpy's MultiThreadedExecutor, on two cores, ran these
timers a few times a second now and then: too few messages for the test):

- ``/lidar`` publishes ``/points`` every 100 ms, ``/imu_driver`` ``/imu`` every 10 ms,
  ``/wheel`` ``/odom`` every 45 ms; each message's text is its index.
- ``/fusion`` keeps the latest ``/points`` and ``/imu``; its 50 ms timer publishes ``/pose``
  from them, declared ``message_link_periodic_async``.
- ``/sync`` publishes ``/cmd`` once it has a new ``/pose`` and a new ``/odom``, in the callback
  of the one that completes the pair, declared ``message_link_partial_sync``.
- ``/actuator`` takes ``/cmd``.

Prints one JSON line: {"ok", "declared": [periodic, partial], "published": {topic: count},
"poses": [[points, imu]...], "cmds": [[pose, odom, topic of the callback]...],
"actuated": [cmd...]}.
"""

import argparse
import json
import sys
import threading
import time

from numbered import Numbered


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=4.0)
    a = p.parse_args()
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy, HistoryPolicy
    from std_msgs.msg import String

    try:
        from rostrace.rclpy import message_link_periodic_async, message_link_partial_sync
    except ImportError:
        # (In a process `rostrace record` runs, the instrumentation's own module.)
        from _rostrace_rclpy import message_link_periodic_async, message_link_partial_sync

    qos = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
    rclpy.init()
    log = {"poses": [], "cmds": [], "actuated": []}
    running = threading.Event()

    numbered = Numbered(String)
    send, published = numbered.send, numbered.published

    def source(name, topic, period):
        node = rclpy.create_node(name)
        pub = node.create_publisher(String, topic, qos)
        node.create_timer(period, lambda: running.is_set() and send(pub, topic))
        return node

    nodes = [source("lidar", "/points", 0.1), source("imu_driver", "/imu", 0.01), source("wheel", "/odom", 0.045)]

    fusion = rclpy.create_node("fusion")
    latest = {}
    pose_pub = fusion.create_publisher(String, "/pose", qos)

    def keep(topic):
        def cb(m):
            latest[topic] = int(m.data)
        return cb

    subs = [fusion.create_subscription(String, t, keep(t), qos) for t in ("/points", "/imu")]

    def fuse():
        if running.is_set() and "/points" in latest and "/imu" in latest:
            made = (latest["/points"], latest["/imu"])
            send(pose_pub, "/pose")
            log["poses"].append(made)

    fusion.create_timer(0.05, fuse)
    declared = [message_link_periodic_async(subs, [pose_pub])]
    nodes.append(fusion)

    sync = rclpy.create_node("sync")
    fresh = {}
    cmd_pub = sync.create_publisher(String, "/cmd", qos)

    def arrive(topic):
        def cb(m):
            fresh[topic] = int(m.data)
            if "/pose" in fresh and "/odom" in fresh:
                made = (fresh["/pose"], fresh["/odom"], topic)
                send(cmd_pub, "/cmd")
                log["cmds"].append(made)
                fresh.clear()
        return cb

    sync_subs = [sync.create_subscription(String, t, arrive(t), qos) for t in ("/pose", "/odom")]
    declared.append(message_link_partial_sync(sync_subs, [cmd_pub]))
    nodes.append(sync)

    actuator = rclpy.create_node("actuator")
    actuator.create_subscription(String, "/cmd", lambda m: log["actuated"].append(int(m.data)), qos)
    nodes.append(actuator)

    ex = SingleThreadedExecutor()
    for n in nodes:
        ex.add_node(n)
    spinner = threading.Thread(target=ex.spin, daemon=True)
    spinner.start()
    # Discovery first, then the run, then the last messages delivered.
    time.sleep(1.0)
    running.set()
    time.sleep(a.seconds)
    running.clear()
    numbered.drain(lambda: len(log["actuated"]), "/cmd")
    ex.shutdown()
    # (The spinning thread out of the executor before its nodes are destroyed: one still inside
    # it at exit aborted the process now and then.)
    spinner.join(timeout=5.0)
    print(json.dumps({"ok": True, "declared": declared, "published": published, **log}), flush=True)
    for n in nodes:
        n.destroy_node()
    rclpy.try_shutdown()


if __name__ == "__main__":
    sys.exit(main())
