"""Benchmark of a fleet: N recordings (demo runs of two software versions, the second with one
callback slowed) analysed three ways, on this machine, in one run:

- a shell loop of ``rostrace analyze REC --json`` (one recording after another);
- ``rostrace export --format parquet`` of each recording into one directory (a shell loop, and
  ``xargs -P CORES``), then DuckDB over the exports;
- Spark ``local[CORES]``: ``rostrace.spark.analyze``, then the same question in Spark.

The question asked of the fleet is the per-callback worst p99 per version. Wall time and peak
memory of each way: of the largest process for a shell loop, else of the process tree (resident
memory sampled every 20 ms: for Spark, the driver, its JVM and Spark's Python workers), and Spark's overhead per recording: its wall time over the same exports
made by ``xargs -P CORES``, divided by N.

    python python/bench/fleet.py --rostrace target/release/rostrace [-n 200] [--distinct 10] [--seconds 3]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

QUERY = """
SELECT node, owner, regexp_extract(recording, '(v[0-9]+)-', 1) AS version,
       count(*) AS recordings, sum(runs) AS runs, max(duration_p99_ns) AS worst_p99_ns
FROM {callbacks} GROUP BY node, owner, version ORDER BY node, owner, version
"""


def tree_rss(root: int) -> int:
    """Resident memory (bytes) of process ``root`` and all its descendants."""
    children = {}
    rss = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
            with open(f"/proc/{d}/statm") as f:
                pages = int(f.read().split()[1])
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(d))
        rss[int(d)] = pages * os.sysconf("SC_PAGE_SIZE")
    total, todo = 0, [root]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo.extend(children.get(p, []))
    return total


class Peak:
    """The peak of :func:`tree_rss` of this process's children (or of this process and its
    children, ``own=True``) while the block runs, and its wall time."""

    def __init__(self, own: bool = False):
        self.own, self.peak, self.wall = own, 0, 0.0

    def __enter__(self):
        self.stop = threading.Event()
        me = os.getpid()

        def sample():
            while not self.stop.is_set():
                rss = tree_rss(me) - (0 if self.own else tree_rss_self())
                self.peak = max(self.peak, rss)
                self.stop.wait(0.02)

        self.thread = threading.Thread(target=sample, daemon=True)
        self.t0 = time.perf_counter()
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.t0
        self.stop.set()
        self.thread.join()
        return False


# Runs argv[1:] and prints its peak resident memory (bytes): that of the largest of its processes
# (wait4's, for it and what it waited for). A fresh interpreter runs it, so that the copy of this
# process forked before the command starts is not counted.
_WAIT4 = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss * 1024 if status == 0 else -1)
"""


def measured(cmd):
    """Runs ``cmd`` (a shell loop): wall time, and the peak resident memory of the largest of
    its processes."""
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _WAIT4, *cmd], check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - t0
    if int(out) < 0:
        raise SystemExit(f"failed: {cmd}")
    return wall, int(out)


def tree_rss_self() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def recordings(bin_: str, work: Path, n: int, distinct: int, seconds: float):
    """``distinct`` demo runs (half of them ``v2``, with one callback twice as slow), and
    links to them up to ``n`` recordings, named ``vX-K``."""
    runs = work / "runs"
    runs.mkdir()
    made = []
    for k in range(distinct):
        version = "v1" if k % 2 == 0 else "v2"
        out = work / "distinct" / f"{version}-{k}"
        extra = ["--slow", "/localization/fusion:/sensing/points_filtered=2"] if version == "v2" else []
        cmd = [bin_, "demo", "--duration", str(seconds), "--domain", "58", "-o", str(out), *extra]
        subprocess.run(cmd, check=True, capture_output=True, timeout=300)
        made.append((version, out))
    for k in range(n):
        version, src = made[k % len(made)]
        (runs / f"{version}-{k:04d}").symlink_to(src, target_is_directory=True)
    return sorted(runs.iterdir())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rostrace", required=True, help="the rostrace binary")
    ap.add_argument("-n", type=int, default=200, help="recordings (200)")
    ap.add_argument("--distinct", type=int, default=10, help="distinct demo runs among them (10)")
    ap.add_argument("--seconds", type=float, default=3, help="length of each demo run (3 s)")
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 2, help="Spark's local[N] and xargs -P N")
    a = ap.parse_args()
    from pyspark.sql import SparkSession

    import rostrace.spark

    os.environ["PYSPARK_PYTHON"] = sys.executable
    work = Path(tempfile.mkdtemp(prefix="rostrace-fleet-bench-"))
    try:
        print(f"making {a.distinct} demo runs of {a.seconds} s as {a.n} recordings in {work} ...", file=sys.stderr)
        recs = recordings(a.rostrace, work, a.n, a.distinct, a.seconds)
        size = sum(f.stat().st_size for r in recs for f in r.resolve().rglob("*") if f.is_file())
        rows = []

        # 1. A shell loop of rostrace analyze.
        (work / "json").mkdir()
        loop = f'for r in {work}/runs/*; do "{a.rostrace}" analyze "$r" --json "{work}/json/$(basename "$r").json" >/dev/null 2>&1 || exit 1; done'
        rows.append(("shell loop: `rostrace analyze --json` of each", *measured(["bash", "-c", loop]), None))

        # 2. rostrace export of each into one directory, then DuckDB.
        def export_cmd(out):
            return f'"{a.rostrace}" export --format parquet --events none --name "$(basename "$0")" -o "{out}" "$0" >/dev/null 2>&1'

        out1 = work / "exports"
        loop = f"for r in {work}/runs/*; do bash -c '{export_cmd(out1)}' \"$r\" || exit 1; done"
        export_loop = measured(["bash", "-c", loop])
        rows.append(("shell loop: `rostrace export --format parquet` of each", *export_loop, None))
        out2 = work / "exports-p"
        par = f"ls -d {work}/runs/* | xargs -P {a.cores} -n 1 bash -c '{export_cmd(out2)}'"
        with Peak() as p:
            subprocess.run(["bash", "-c", par], check=True)
        export_par = p
        # (Memory: the processes running at once, sampled.)
        rows.append((f"`xargs -P {a.cores}`: `rostrace export --format parquet` of each", p.wall, p.peak, None))
        # (In a process of its own, as a user's notebook or script would run it.)
        sql = QUERY.format(callbacks=f"read_parquet('{out2}/callbacks/*.parquet')")
        duck = f"import duckdb, json, sys\nrows = duckdb.sql({sql!r}).fetchall()\njson.dump(rows, sys.stdout)\n"
        with Peak() as p:
            answer_duck = json.loads(subprocess.run([sys.executable, "-c", duck], check=True, capture_output=True).stdout)
        rows.append(("DuckDB: the question over the exports", p.wall, p.peak, None))
        duck_total = export_par.wall + p.wall

        # 3. Spark local[cores].
        with Peak(own=True) as p:
            spark = (
                SparkSession.builder.master(f"local[{a.cores}]")
                .appName("rostrace-fleet-bench")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", str(a.cores))
                .getOrCreate()
            )
            spark.sparkContext.setLogLevel("ERROR")
        rows.append(("Spark: session start (the JVM)", p.wall, p.peak, None))
        with Peak(own=True) as p:
            fleet = rostrace.spark.analyze(spark, [str(r) for r in recs], work / "fleet")
            assert fleet.errors.count() == 0
        spark_analyze = p
        rows.append((f"Spark `local[{a.cores}]`: `rostrace.spark.analyze`", p.wall, p.peak, None))
        with Peak(own=True) as p:
            fleet.callbacks.createOrReplaceTempView("callbacks")
            answer_spark = [tuple(r) for r in spark.sql(QUERY.format(callbacks="callbacks")).collect()]
        rows.append(("Spark: the question", p.wall, p.peak, None))
        spark.stop()

        # The same answer from the exports and from Spark (Spark names each recording by its
        # path, the export by its directory's name: the version is in both).
        norm = lambda rs: sorted(((r[0], r[1], r[2], int(r[3]), int(r[4]), None if r[5] is None else int(r[5])) for r in rs), key=repr)  # noqa: E731
        assert norm(answer_duck) == norm(answer_spark), "DuckDB and Spark answer differently"

        print(f"\n{a.n} recordings ({a.distinct} distinct demo runs of {a.seconds:g} s, {size / 1e6:.1f} MB in all), {a.cores} cores\n")
        print("| way | wall | peak memory |")
        print("|---|---|---|")
        for name, wall, peak, _ in rows:
            print(f"| {name} | {wall:.2f} s | {peak / 1e6:.0f} MB |")
        overhead = (spark_analyze.wall - export_par.wall) / a.n
        print()
        print(f"Spark's analysis over the exports by xargs -P {a.cores}: {spark_analyze.wall / export_par.wall:.2f}x; "
              f"its overhead per recording: {overhead * 1e3:.1f} ms")
        print(f"exports + DuckDB: {duck_total:.2f} s; Spark (without its session start): "
              f"{spark_analyze.wall + rows[-1][1]:.2f} s; the shell loop of analyze: {rows[0][1]:.2f} s")
        print(f"per recording: analyze {rows[0][1] / a.n * 1e3:.1f} ms, export {export_loop[0] / a.n * 1e3:.1f} ms, "
              f"Spark {spark_analyze.wall / a.n * 1e3:.1f} ms (on {a.cores} cores)")
        print(f"the answer: {len(answer_duck)} rows, equal from DuckDB and Spark")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
