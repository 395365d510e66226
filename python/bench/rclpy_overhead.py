"""What rostrace's rclpy instrumentation costs per callback run, and on a node of 1 kHz timers.

    python3 python/bench/rclpy_overhead.py --rostrace target/release/rostrace --python VENV/bin/python [--seconds 10] [--rounds 3]

Runs, under `rostrace record` (embedded backend), the same rclpy programs with the
instrumentation (default) and without it (ROSTRACE_RCLPY=0), alternating, `--rounds` times:

- `per-run`: the added cost of one callback run, without the noise of DDS and the wait set: the
  coroutine rclpy's executor runs for a callback (its `_take_*` result, an empty callback), driven
  directly, with and without the instrumentation's wrapper (two ctypes calls into
  libtracetools.so and one coroutine), and the two ctypes calls alone;
- `1 kHz`: a node with one timer of 1 ms and an empty callback, spun by a SingleThreadedExecutor
  for `--seconds`; the process's CPU time per second of wall time, with and without.

Prints each measure and the ratio. The process needs VENV's rclpy (PyPI wheels will do).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def child_per_run(n):
    import rclpy
    import rclpy.executors

    m = sys.modules.get("_rostrace_rclpy")
    if m is None or m._tp is None:
        return {"error": "the instrumentation is not loaded"}
    tp = m._tp

    async def callback_run():
        pass

    def drive(make, n):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            c = make()()
            try:
                c.send(None)
            except StopIteration:
                pass
        return (time.perf_counter_ns() - t0) / n

    class Entity:
        pass

    e = Entity()
    m._token(e)
    traced_take = m._traced_take(lambda self, entity: callback_run, tp.callback_start, tp.callback_end)
    plain = [drive(lambda: callback_run, n) for _ in range(3)]
    traced = [drive(lambda: traced_take(None, e), n) for _ in range(3)]
    start, end = tp.callback_start, tp.callback_end
    t0 = time.perf_counter_ns()
    for _ in range(n):
        start(1, False)
        end(1)
    calls = (time.perf_counter_ns() - t0) / n
    return {"plain_ns": min(plain), "traced_ns": min(traced), "ctypes_pair_ns": calls}


def child_khz(seconds):
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    rclpy.init()
    node = rclpy.create_node("khz")
    runs = [0]

    def tick():
        runs[0] += 1

    node.create_timer(0.001, tick)
    ex = SingleThreadedExecutor()
    ex.add_node(node)
    # Warm-up, then the measure.
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        ex.spin_once(timeout_sec=0.1)
    runs[0] = 0
    c0, w0 = time.process_time(), time.monotonic()
    while time.monotonic() - w0 < seconds:
        ex.spin_once(timeout_sec=0.1)
    cpu, wall = time.process_time() - c0, time.monotonic() - w0
    ex.shutdown()
    node.destroy_node()
    rclpy.shutdown()
    return {"runs": runs[0], "cpu_s": cpu, "wall_s": wall, "cpu_per_s": cpu / wall}


def run(a, what, on, tmp, i):
    env = dict(os.environ)
    env["ROSTRACE_RCLPY"] = "1" if on else "0"
    env.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    cmd = [a.rostrace, "record", "-s", "%s-%d-%d" % (what, on, i), "-p", tmp, "--", a.python, os.path.abspath(__file__),
           "--child", what, "--seconds", str(a.seconds), "-n", str(a.n)]
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
    if not lines:
        sys.exit("%s failed:\n%s\n%s" % (" ".join(cmd), out.stdout, out.stderr))
    return json.loads(lines[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rostrace")
    ap.add_argument("--python")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("-n", type=int, default=200000)
    ap.add_argument("--child", choices=["per-run", "khz"])
    a = ap.parse_args()
    if a.child == "per-run":
        print(json.dumps(child_per_run(a.n)), flush=True)
        return 0
    if a.child == "khz":
        print(json.dumps(child_khz(a.seconds)), flush=True)
        return 0
    with tempfile.TemporaryDirectory(prefix="rostrace-rclpy-bench-") as tmp:
        per = run(a, "per-run", True, tmp, 0)
        if "error" in per:
            sys.exit(per["error"])
        print("per run (an empty callback's coroutine driven directly, best of 3 x %d):" % a.n)
        print("  rclpy alone            %7.0f ns" % per["plain_ns"])
        print("  with the instrumentation %5.0f ns  (+%.0f ns per run)" % (per["traced_ns"], per["traced_ns"] - per["plain_ns"]))
        print("  callback_start + callback_end through ctypes alone: %.0f ns" % per["ctypes_pair_ns"])
        off, on = [], []
        for i in range(a.rounds):
            off.append(run(a, "khz", False, tmp, i))
            on.append(run(a, "khz", True, tmp, i))
        med = lambda xs: sorted(xs)[len(xs) // 2]
        c_off, c_on = med([x["cpu_per_s"] for x in off]), med([x["cpu_per_s"] for x in on])
        r_on = med([x["runs"] / x["wall_s"] for x in on])
        print("1 kHz timer, empty callback, SingleThreadedExecutor, %g s x %d rounds (median):" % (a.seconds, a.rounds))
        print("  CPU per second: %.1f ms uninstrumented, %.1f ms instrumented (%.0f runs/s): ratio %.3f" % (
            c_off * 1e3, c_on * 1e3, r_on, c_on / c_off))
        print("  added per run: %.2f us" % ((c_on - c_off) / r_on * 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
