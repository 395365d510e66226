"""An rclpy system with a service call in the middle of a path, logging which input message
made each output: the truth the service-link tests check rostrace's paths against.

    python service_path.py --seconds S

One process; ``/planner`` spins alone on a SingleThreadedExecutor, the other nodes on another
(a MultiThreadedExecutor, on two cores, ran the sensor's timer a few times a second now and then):

- ``/sensor`` publishes ``/scan`` every 40 ms; each message's text is its index.
- ``/planner`` takes ``/scan`` and, for three messages in four, asks ``/map``'s ``query``
  service (``call_async``); the future's done callback publishes ``/cmd`` from that message.
  Every fourth message it asks nothing, so no ``/cmd`` comes of it.
- ``/map`` serves ``query``.
- ``/actuator`` takes ``/cmd``.

Prints one JSON line: {"ok", "published": {topic: count}, "cmds": [scan...], "actuated": [cmd...]}.
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
    from std_srvs.srv import SetBool

    qos = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
    rclpy.init()
    lock = threading.Lock()
    log = {"cmds": [], "actuated": []}
    running = threading.Event()

    numbered = Numbered(String)
    send, published = numbered.send, numbered.published

    sensor = rclpy.create_node("sensor")
    scan_pub = sensor.create_publisher(String, "/scan", qos)
    sensor.create_timer(0.04, lambda: running.is_set() and send(scan_pub, "/scan"))

    map_node = rclpy.create_node("map")

    def serve(request, response):
        response.success = True
        response.message = "ok"
        return response

    map_node.create_service(SetBool, "query", serve)

    planner = rclpy.create_node("planner")
    cmd_pub = planner.create_publisher(String, "/cmd", qos)
    client = planner.create_client(SetBool, "query")

    def on_scan(m):
        i = int(m.data)
        if i % 4 == 3:
            return
        future = client.call_async(SetBool.Request(data=True))

        def done(f, i=i):
            if f.result() is not None:
                with lock:
                    log["cmds"].append(i)
                send(cmd_pub, "/cmd")

        future.add_done_callback(done)

    planner.create_subscription(String, "/scan", on_scan, qos)

    actuator = rclpy.create_node("actuator")
    actuator.create_subscription(String, "/cmd", lambda m: log["actuated"].append(int(m.data)), qos)

    others = SingleThreadedExecutor()
    for n in (sensor, map_node, actuator):
        others.add_node(n)
    alone = SingleThreadedExecutor()
    alone.add_node(planner)
    spinners = [threading.Thread(target=e.spin, daemon=True) for e in (others, alone)]
    for t in spinners:
        t.start()
    if not client.wait_for_service(timeout_sec=10.0):
        print(json.dumps({"ok": False, "error": "no query service"}), flush=True)
        return 1
    # Discovery first, then the run, then the last messages delivered.
    time.sleep(1.0)
    running.set()
    time.sleep(a.seconds)
    running.clear()
    numbered.drain(lambda: len(log["actuated"]), "/cmd")
    others.shutdown()
    alone.shutdown()
    for t in spinners:
        t.join(timeout=5.0)
    # (The done callbacks append under the lock: /cmd i is the i-th appended.)
    print(json.dumps({"ok": True, "published": published, **log}), flush=True)
    for n in (sensor, map_node, planner, actuator):
        n.destroy_node()
    rclpy.try_shutdown()


if __name__ == "__main__":
    sys.exit(main())
