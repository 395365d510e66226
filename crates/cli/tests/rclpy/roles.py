"""The processes of the real-stack test system (rclpy), one role per process.

    python roles.py ROLE --ns NS --sync DIR [--messages N] [--calls M] [--idle-spins K] [--recreated-timers J]

ROLE is talker, listener, server or client. Every process of one system uses the same namespace
NS (so its topics and services are /NS/...) and the same directory DIR, where processes leave
files that say they are ready or done: the counts are deterministic because nobody publishes or
calls before the other side is matched, and nobody leaves before the other side has everything
(a reliable writer that leaves may take unacknowledged samples with it).

- talker: node `talker` publishing exactly N std_msgs/String on `fast` (reliable, keep last 7)
  and `slow` (reliable, keep last 3), once the listener has matched both, each pair once the
  listener has taken the previous one (so no history overflows on a loaded machine); a timer
  of 100 ms; then, on a node `idle`, exactly K spin_once(timeout) calls that time out (rclpy
  initializes a timeout timer on each: K rcl_timer_init), and J timers of 20 ms each destroyed
  as soon as created (the next one reuses the address: J identical rcl_timer_init events).
- listener: node `listener` subscribing to both (same QoS) until it has N of each; timer 50 ms.
- server: node `server` with the std_srvs/SetBool service `toggle`; answers until the client is
  done; timer 70 ms.
- client: node `client` calling `toggle` exactly M times, one after the other; timer 30 ms.

Each process prints what it counted as one JSON line, before its teardown (destroying its
nodes, shutting rclpy down), and exits with 0 when it did its part (1 otherwise, e.g. after the
deadline). The executor is only ever spun without a timeout (each
process's own timer wakes it), so the timers initialized are exactly the ones above.
"""

import argparse
import faulthandler
import json
import os
import sys
import time

DEADLINE_S = 40.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("role", choices=["talker", "listener", "server", "client"])
    ap.add_argument("--ns", required=True)
    ap.add_argument("--sync", required=True)
    ap.add_argument("--messages", type=int, default=10)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--idle-spins", type=int, default=4)
    ap.add_argument("--recreated-timers", type=int, default=6)
    a = ap.parse_args()
    # A process still alive well past its deadline is stuck (in a shutdown, say): its Python
    # stacks go to stderr, into the test's output.
    faulthandler.dump_traceback_later(DEADLINE_S + 10)

    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy, HistoryPolicy, DurabilityPolicy

    def qos(depth):
        return QoSProfile(
            depth=depth,
            history=HistoryPolicy.KEEP_LAST,
            reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.VOLATILE,
        )

    start = time.monotonic()

    def late():
        return time.monotonic() - start > DEADLINE_S

    def flag(name):
        with open(os.path.join(a.sync, name + ".tmp"), "w") as f:
            f.write("1\n")
        os.rename(os.path.join(a.sync, name + ".tmp"), os.path.join(a.sync, name))

    def flagged(name):
        return os.path.exists(os.path.join(a.sync, name))

    def progress():
        try:
            with open(os.path.join(a.sync, "listener.progress")) as f:
                return int(f.read() or 0)
        except (OSError, ValueError):
            return 0

    def write_progress(n):
        with open(os.path.join(a.sync, "listener.progress.tmp"), "w") as f:
            f.write(str(n))
        os.rename(os.path.join(a.sync, "listener.progress.tmp"), os.path.join(a.sync, "listener.progress"))

    def wait_until(cond, spin=None):
        while not cond():
            if late():
                return False
            if spin is not None:
                spin()
            else:
                time.sleep(0.01)
        return True

    rclpy.init()
    report = {"role": a.role, "ns": a.ns, "pid": os.getpid()}
    ok = False
    nodes = []
    try:
        if a.role == "talker":
            from std_msgs.msg import String

            node = rclpy.create_node("talker", namespace=a.ns)
            nodes.append(node)
            ticks = [0]
            node.create_timer(0.1, lambda: ticks.__setitem__(0, ticks[0] + 1))
            pubs = {"fast": node.create_publisher(String, "fast", qos(7)),
                    "slow": node.create_publisher(String, "slow", qos(3))}
            matched = wait_until(lambda: flagged("listener.ready")
                                 and all(p.get_subscription_count() >= 1 for p in pubs.values()))
            sent = {"fast": 0, "slow": 0}
            if matched:
                for i in range(a.messages):
                    for topic, p in pubs.items():
                        p.publish(String(data=f"{topic} {i}"))
                        sent[topic] += 1
                    # Lockstep: the next one once the listener has taken this one on both
                    # topics (no history of depth 3 overflows, however slow the machine).
                    if not wait_until(lambda: progress() > i):
                        break
            delivered = matched and wait_until(lambda: flagged("listener.done"))
            # Exactly K spins that time out: a node of its own with nothing that becomes ready.
            idle = rclpy.create_node("idle", namespace=a.ns)
            nodes.append(idle)
            ex = SingleThreadedExecutor()
            ex.add_node(idle)
            for _ in range(a.idle_spins):
                ex.spin_once(timeout_sec=0.01)
            ex.shutdown()
            for _ in range(a.recreated_timers):
                idle.destroy_timer(idle.create_timer(0.02, lambda: None))
            report.update(published=sent, timers=[0.1], idle_spins=a.idle_spins,
                          recreated_timers=a.recreated_timers)
            ok = matched and delivered and progress() >= a.messages
        elif a.role == "listener":
            from std_msgs.msg import String

            node = rclpy.create_node("listener", namespace=a.ns)
            nodes.append(node)
            got = {"fast": [], "slow": []}
            node.create_timer(0.05, lambda: None)
            subs = [node.create_subscription(String, t, lambda m, t=t: got[t].append(m.data), qos(d))
                    for t, d in (("fast", 7), ("slow", 3))]
            ex = SingleThreadedExecutor()
            ex.add_node(node)
            if wait_until(lambda: all(s.get_publisher_count() >= 1 for s in subs)):
                flag("listener.ready")
            reported = [0]

            def spin():
                ex.spin_once()
                n = min(len(v) for v in got.values())
                if n != reported[0]:
                    reported[0] = n
                    write_progress(n)

            done = wait_until(lambda: all(len(v) >= a.messages for v in got.values()), spin)
            flag("listener.done")
            ex.shutdown()
            report.update(taken={t: len(v) for t, v in got.items()}, timers=[0.05])
            ok = done and all(v == [f"{t} {i}" for i in range(a.messages)] for t, v in got.items())
        elif a.role == "server":
            from std_srvs.srv import SetBool

            node = rclpy.create_node("server", namespace=a.ns)
            nodes.append(node)
            node.create_timer(0.07, lambda: None)
            served = [0]

            def toggle(req, resp):
                served[0] += 1
                resp.success = bool(req.data)
                resp.message = f"call {served[0]}"
                return resp

            node.create_service(SetBool, "toggle", toggle)
            ex = SingleThreadedExecutor()
            ex.add_node(node)
            done = wait_until(lambda: flagged("client.done"), ex.spin_once)
            ex.shutdown()
            report.update(requests=served[0], timers=[0.07])
            ok = done and served[0] == a.calls
        else:
            from std_srvs.srv import SetBool

            node = rclpy.create_node("client", namespace=a.ns)
            nodes.append(node)
            node.create_timer(0.03, lambda: None)
            cli = node.create_client(SetBool, "toggle")
            ex = SingleThreadedExecutor()
            ex.add_node(node)
            answered = 0
            ready = wait_until(cli.service_is_ready)
            if ready:
                # The response path (the server's writer, our reader) matches too: ready says only
                # that our side knows the server's endpoints, and a response sent before the
                # server's writer knows our reader is lost (seen on a loaded machine).
                time.sleep(1.0)
                for i in range(a.calls):
                    fut = cli.call_async(SetBool.Request(data=bool(i % 2)))
                    if not wait_until(fut.done, ex.spin_once):
                        break
                    if fut.result() is not None and fut.result().message == f"call {i + 1}":
                        answered += 1
            flag("client.done")
            ex.shutdown()
            report.update(responses=answered, timers=[0.03])
            ok = ready and answered == a.calls
        report["ok"] = ok
        report["seconds"] = round(time.monotonic() - start, 3)
        # Said before the teardown: a process that hangs in it (system.py kills it) has still
        # said what it did.
        print(json.dumps(report), flush=True)
    finally:
        for n in nodes:
            n.destroy_node()
        rclpy.try_shutdown()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
