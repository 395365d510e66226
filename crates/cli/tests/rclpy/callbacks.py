"""The rclpy callback system of the instrumentation tests: two processes, each counting how many
times each of its callbacks ran, so that the trace's callback runs can be checked against it.

    python callbacks.py --ns NS [--messages N] [--calls M] [--timeout S]

- alpha: node `alpha`, a MultiThreadedExecutor (3 threads) with two callback groups: timers
  `on_fast` (20 ms, publishes `fast` until N are out) and `on_slow` (50 ms, publishes `slow` until
  M are out) in a mutually exclusive group; the service `add` (example: std_srvs/SetBool) and the
  subscription `echo` in a reentrant group.
- beta: node `beta`; first one call of `add` through `spin_until_future_complete` and a few
  `spin_once(timeout)` on a SingleThreadedExecutor, then a MultiThreadedExecutor (2 threads):
  `on_fast` (sync) takes `fast` and publishes it back on `echo`; `on_slow` is a coroutine that
  awaits a call of `add` for each `slow` message (it resumes when the response has been taken:
  the client's callback), in a reentrant group with the client.

Each process prints one JSON line {"role", "runs": {callback: runs}, "published", "taken"} and
exits 0 once it did its part. A parent (this script without --role) runs both, with its own
environment, prints {"ok", "processes": [...]}, and imports no ROS package.
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time


def role_main(a):
    import rclpy
    from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
    from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy, HistoryPolicy, DurabilityPolicy
    from std_msgs.msg import String
    from std_srvs.srv import SetBool

    qos = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.VOLATILE)
    rclpy.init()
    lock = threading.Lock()
    runs = {}
    published = {}
    taken = {}
    deadline = time.monotonic() + a.timeout

    def count(d, k):
        with lock:
            d[k] = d.get(k, 0) + 1

    ok = True
    if a.role == "alpha":
        node = rclpy.create_node("alpha", namespace=a.ns)
        timers = MutuallyExclusiveCallbackGroup()
        reentrant = ReentrantCallbackGroup()
        pub_fast = node.create_publisher(String, "fast", qos)
        pub_slow = node.create_publisher(String, "slow", qos)

        def matched():
            return pub_fast.get_subscription_count() > 0 and pub_slow.get_subscription_count() > 0

        def on_fast():
            count(runs, "on_fast")
            if published.get("fast", 0) < a.messages and matched():
                pub_fast.publish(String(data="f%d" % published.get("fast", 0)))
                count(published, "fast")

        def on_slow():
            count(runs, "on_slow")
            if published.get("slow", 0) < a.calls and matched():
                pub_slow.publish(String(data="s%d" % published.get("slow", 0)))
                count(published, "slow")

        def add(req, resp):
            count(runs, "add")
            resp.success = req.data
            resp.message = "ok"
            return resp

        def on_echo(msg):
            count(runs, "on_echo")
            count(taken, "echo")

        node.create_timer(0.02, on_fast, callback_group=timers)
        node.create_timer(0.05, on_slow, callback_group=timers)
        node.create_service(SetBool, "add", add, callback_group=reentrant)
        node.create_subscription(String, "echo", on_echo, qos, callback_group=reentrant)
        ex = MultiThreadedExecutor(num_threads=3)
        ex.add_node(node)
        # Done when beta echoed every fast message and called once per slow one (plus its first).
        while time.monotonic() < deadline:
            ex.spin_once(timeout_sec=0.1)
            with lock:
                if taken.get("echo", 0) >= a.messages and runs.get("add", 0) >= a.calls + 1:
                    break
        else:
            ok = False
        # Beta may still wait for its last response: answer for a moment longer.
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            ex.spin_once(timeout_sec=0.05)
    else:
        node = rclpy.create_node("beta", namespace=a.ns)
        reentrant = ReentrantCallbackGroup()
        plain = MutuallyExclusiveCallbackGroup()
        cli = node.create_client(SetBool, "add", callback_group=reentrant)
        pub_echo = node.create_publisher(String, "echo", qos)
        responses = []

        def on_fast(msg):
            count(runs, "on_fast")
            count(taken, "fast")
            pub_echo.publish(msg)
            count(published, "echo")

        async def on_slow(msg):
            count(runs, "on_slow")
            count(taken, "slow")
            r = await cli.call_async(SetBool.Request(data=True))
            with lock:
                responses.append(r.success)

        # The client's callback (rclpy sets the future's result) runs once per response.
        while not cli.wait_for_service(timeout_sec=0.5):
            if time.monotonic() > deadline:
                break
        single = SingleThreadedExecutor()
        single.add_node(node)
        fut = cli.call_async(SetBool.Request(data=True))
        single.spin_until_future_complete(fut, timeout_sec=max(1.0, deadline - time.monotonic()))
        ok = fut.done()
        for _ in range(3):
            single.spin_once(timeout_sec=0.01)
        single.remove_node(node)
        # Subscribed only now: alpha publishes once both are matched, so that every message is
        # taken by the MultiThreadedExecutor (a coroutine left waiting in the single one would
        # never resume).
        node.create_subscription(String, "fast", on_fast, qos, callback_group=plain)
        node.create_subscription(String, "slow", on_slow, qos, callback_group=reentrant)
        ex = MultiThreadedExecutor(num_threads=2)
        ex.add_node(node)
        while time.monotonic() < deadline:
            ex.spin_once(timeout_sec=0.1)
            with lock:
                if taken.get("fast", 0) >= a.messages and len(responses) >= a.calls and pub_echo.get_subscription_count():
                    break
        else:
            ok = False
        # Let alpha take the last echoes before the writer goes.
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            ex.spin_once(timeout_sec=0.05)
        runs["client"] = 1 + len(responses)
    ex.shutdown()
    node.destroy_node()
    rclpy.shutdown()
    print(json.dumps({"role": a.role, "ok": ok, "runs": runs, "published": published, "taken": taken}), flush=True)
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ns", required=True)
    ap.add_argument("--role", choices=["alpha", "beta"])
    ap.add_argument("--messages", type=int, default=30)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=60.0)
    a = ap.parse_args()
    if a.role:
        return role_main(a)
    start = time.monotonic()
    procs = []
    for role in ["alpha", "beta"]:
        cmd = [sys.executable, os.path.abspath(__file__), "--role", role, "--ns", a.ns, "--messages", str(a.messages),
               "--calls", str(a.calls), "--timeout", str(a.timeout)]
        procs.append((role, subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)))
    reports, ok = [], True
    for role, p in procs:
        try:
            out, _ = p.communicate(timeout=a.timeout + 30)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
        line = (out or "").strip().splitlines()[-1:] or ["{}"]
        try:
            r = json.loads(line[0])
        except ValueError:
            r = {"role": role, "output": out}
        r["exit"] = p.returncode
        ok = ok and p.returncode == 0
        reports.append(r)
    print(json.dumps({"ok": ok, "seconds": round(time.monotonic() - start, 3), "processes": reports}), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
