"""Benchmark of the Python package on the Autoware trace (tum-autoware-carla, 683,756
events): whole Python processes (interpreter start and imports included), best of N, wall
time and peak RSS, beside tracetools_analysis's figures on the same trace as documented in
shared/reference/tracetools_analysis/timings.md (load + process, first run).

    python python/bench/analyze.py [TRACE] [-n RUNS]
"""

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

SHARED = Path(os.environ.get("ROSTRACE_TEST_DATA", Path(__file__).resolve().parents[2].parent / "shared"))

CASES = {
    "rostrace.analyze (the whole analysis, tables as DataFrames)": """
import rostrace
a = rostrace.analyze(TRACE, progress=False)
n = len(a.callbacks) + len(a.callback_runs) + len(a.flows) + len(a.publications) + len(a.takes)
""",
    "rostrace.tracetools_analysis (load_file + Ros2Handler + durations of every callback)": """
from rostrace.tracetools_analysis.loading import load_file
from rostrace.tracetools_analysis.processor.ros2 import Ros2Handler
from rostrace.tracetools_analysis.utils.ros2 import Ros2DataModelUtil
u = Ros2DataModelUtil(Ros2Handler.process(load_file(TRACE)).data)
n = sum(len(u.get_callback_durations(o)) for o in u.get_callback_symbols())
""",
    "rostrace.read (every event, one DataFrame)": """
import rostrace
n = len(rostrace.read(TRACE, progress=False))
""",
}


def run(code: str, trace: str):
    """(wall s, peak RSS bytes) of a Python process running ``code``."""
    script = f"TRACE = {trace!r}\n{code}"
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-c", script])
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"benchmark case failed ({status}):\n{code}")
    return wall, usage.ru_maxrss * 1024


def documented(trace_name: str):
    """tracetools_analysis's wall s and peak RSS (MB) for the trace, from timings.md."""
    text = (SHARED / "reference/tracetools_analysis/timings.md").read_text()
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == trace_name:
            return float(cells[4]), float(re.sub(r"[^0-9.]", "", cells[5]))
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", nargs="?", default=str(SHARED / "traces/tum-autoware-carla"))
    ap.add_argument("-n", "--runs", type=int, default=3)
    args = ap.parse_args()
    name = Path(args.trace).name
    peer = documented(name)
    print(f"trace: {args.trace}")
    if peer:
        print(f"tracetools_analysis (documented, load + process): {peer[0]:.2f} s, {peer[1]:.0f} MB peak RSS")
    print(f"{'case':<85} {'wall':>9} {'RSS':>8}  ratio to tracetools_analysis (time, memory)")
    for label, code in CASES.items():
        runs = [run(code, args.trace) for _ in range(args.runs)]
        wall = min(r[0] for r in runs)
        rss = min(r[1] for r in runs) / 1e6
        ratio = f"{peer[0] / wall:6.1f}x faster, {peer[1] / rss:5.1f}x less memory" if peer else ""
        print(f"{label:<85} {wall:8.2f}s {rss:6.0f}MB  {ratio}")


if __name__ == "__main__":
    main()
