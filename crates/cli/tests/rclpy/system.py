"""Runs the real-stack test system: the talker, listener, server and client processes of
roles.py at once, each with this environment (so a tracer preloaded here is preloaded there).

    python system.py --ns NS [--messages N] [--calls M] [--idle-spins K] [--recreated-timers J] [--timeout S]

Prints one JSON line {"ok": bool, "seconds": s, "processes": [each process's JSON line],
"stuck_in_teardown": [roles]} and exits with 0 when every process did its part and exited;
`stuck_in_teardown` names those that did their part but were killed at the timeout, still in
their teardown. Use the same ROS_DOMAIN_ID for nothing else meanwhile. This process imports no
ROS package: it emits no trace event.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROLES = ["listener", "server", "talker", "client"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ns", required=True)
    ap.add_argument("--messages", type=int, default=10)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--idle-spins", type=int, default=4)
    ap.add_argument("--recreated-timers", type=int, default=6)
    ap.add_argument("--timeout", type=float, default=60.0)
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="rostrace-rclpy-") as sync:
        procs = []
        for role in ROLES:
            cmd = [sys.executable, os.path.join(here, "roles.py"), role, "--ns", a.ns, "--sync", sync,
                   "--messages", str(a.messages), "--calls", str(a.calls), "--idle-spins", str(a.idle_spins),
                   "--recreated-timers", str(a.recreated_timers)]
            procs.append((role, subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)))
        reports = []
        stuck = []
        ok = True
        for role, p in procs:
            left = max(1.0, a.timeout - (time.monotonic() - start))
            killed = False
            try:
                out, _ = p.communicate(timeout=left)
            except subprocess.TimeoutExpired:
                p.kill()
                out, _ = p.communicate()
                killed = True
            line = (out or "").strip().splitlines()[-1:] or ["{}"]
            try:
                r = json.loads(line[0])
            except ValueError:
                r = {"role": role, "output": out}
            r["exit"] = p.returncode
            if killed and r.get("ok") is True:
                # It did its part and said so, then hung in its teardown.
                stuck.append(role)
            ok = ok and p.returncode == 0
            reports.append(r)
    print(json.dumps({"ok": ok, "seconds": round(time.monotonic() - start, 3), "processes": reports,
                      "stuck_in_teardown": stuck}), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
