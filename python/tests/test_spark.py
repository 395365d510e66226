"""rostrace.spark on a real Spark (pyspark from PyPI, local[2], Java from Debian): 50 recordings
and a damaged one analysed in Spark tasks; each recording's tables equal its analysis by
`rostrace.analyze`, and its files `rostrace export --format parquet`'s."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import rostrace
import rostrace.spark

from conftest import SHARED


def _need_spark():
    try:
        import pyspark  # noqa: F401
    except ImportError:
        if os.environ.get("ROSTRACE_REQUIRE_TOOLS") == "1":
            pytest.fail("pyspark is not installed (tools/data-venv.sh)")
        pytest.skip("pyspark is not installed (tools/data-venv.sh)")
    if shutil.which("java") is None:
        if os.environ.get("ROSTRACE_REQUIRE_TOOLS") == "1":
            pytest.fail("java is not installed (openjdk-17-jre-headless)")
        pytest.skip("java is not installed (openjdk-17-jre-headless)")


@pytest.fixture(scope="module")
def spark():
    _need_spark()
    from pyspark.sql import SparkSession

    # The executors' Python is this one (rostrace and pyarrow installed).
    os.environ["PYSPARK_PYTHON"] = sys.executable
    s = (
        SparkSession.builder.master("local[2]")
        .appName("rostrace-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    yield s
    s.stop()


def _recordings(tmp: Path):
    """The shared traces (each its own recording) and links to the small ones, 50 in all, and a
    damaged recording."""
    distinct = sorted(p for p in (SHARED / "traces/caret-analyze-samples").iterdir() if p.is_dir())
    distinct += [SHARED / "traces" / n for n in ["caret-demos-e2e-jazzy", "rosworld2021-pingpong", "caret-demos-e2e-2021", "tc-ros2-example2"]]
    copies = []
    k = 0
    while len(distinct) + len(copies) < 50:
        src = distinct[k % len(distinct)]
        link = tmp / f"copy{k:02d}-{src.name}"
        link.symlink_to(src, target_is_directory=True)
        copies.append((link, src))
        k += 1
    damaged = tmp / "damaged"
    damaged.mkdir()
    (damaged / "metadata").write_bytes(b"/* CTF 1.8 */\ntrace { major = 1; minor = 8; byte_order = le;")
    (damaged / "stream_0").write_bytes(b"\x00" * 64)
    return distinct, copies, damaged


def test_a_fleet_of_recordings_analysed_in_spark_tasks(spark, tmp_path):
    from pyspark.sql import functions as F

    distinct, copies, damaged = _recordings(tmp_path)
    links = [link for link, _ in copies]
    everything = [str(p) for p in distinct + links] + [str(damaged)]
    out = tmp_path / "fleet"
    fleet = rostrace.spark.analyze(spark, everything, out)
    status = fleet.recordings.toPandas()
    assert len(status) == 51
    errors = fleet.errors.toPandas()
    # (The recordings as the tasks saw them: absolute paths.)
    ap = os.path.abspath
    assert list(errors["path"]) == [ap(damaged)], errors
    assert ap(damaged) in errors["error"][0] or "metadata" in errors["error"][0], errors["error"][0]
    # Every recording's tables, and nothing of the damaged one.
    per = fleet.callbacks.groupBy("recording").agg(F.count("*").alias("n"), F.sum("runs").alias("runs")).toPandas()
    assert set(per["recording"]) == {ap(p) for p in distinct + links}
    assert not fleet.callbacks.where(F.col("recording") == ap(damaged)).count()
    # Each recording equals its analysis by rostrace.analyze: rows of every table, and the
    # callbacks' runs, total, shortest and longest run exactly.
    tables = ["callbacks", "callback_runs", "publications", "takes", "flows", "nodes", "topics", "topic_pairs"]
    rows = {t: dict(fleet.table(t).groupBy("recording").count().toPandas().values) for t in tables}
    callbacks = fleet.callbacks.toPandas()
    for p in distinct:
        a = rostrace.analyze(p)
        for t in tables:
            assert rows[t].get(ap(p), 0) == a.arrow[t].num_rows, (p, t)
        key = ["trace", "vpid", "callback"]
        ours = a.arrow["callbacks"].to_pandas().sort_values(key).reset_index(drop=True)
        theirs = callbacks[callbacks["recording"] == ap(p)].sort_values(key).reset_index(drop=True)
        for c in ["runs", "total_ns", "duration_min_ns", "duration_max_ns"]:
            exact = lambda v: None if v is None or v != v else int(v)  # noqa: E731 - null as None
            assert [exact(v) for v in ours[c]] == [exact(v) for v in theirs[c]], (p, c)
    # The copies are the same recordings: their tables equal those of the originals.
    first = per.set_index("recording")
    for link, src in copies:
        assert first.loc[ap(link), "runs"] == first.loc[ap(src), "runs"], link


def test_a_fleets_files_are_rostrace_exports(spark, tmp_path):
    _need_spark()
    bin_ = os.environ.get("ROSTRACE_BIN")
    if not bin_:
        if os.environ.get("ROSTRACE_REQUIRE_TOOLS") == "1":
            pytest.fail("ROSTRACE_BIN not set")
        pytest.skip("ROSTRACE_BIN not set")
    rec = Path(os.path.abspath(SHARED / "traces/caret-demos-e2e-jazzy"))
    out = tmp_path / "fleet"
    fleet = rostrace.spark.analyze(spark, [rec], out)
    cli = tmp_path / "cli"
    subprocess.run([bin_, "export", "--format", "parquet", "--name", str(rec), "-o", str(cli), str(rec)], check=True, capture_output=True)
    tables = [t for t in fleet.tables if (cli / t).is_dir()]
    assert "callbacks" in tables and "flows" in tables
    import pyarrow.parquet as pq

    for t in tables:
        (theirs,) = sorted((cli / t).glob("*.parquet"))
        (mine,) = sorted((out / t).glob("*.parquet"))
        # The same table, but for the recording's name: the CLI's is a file name, the fleet's
        # the recording's path.
        a, b = pq.read_table(mine), pq.read_table(theirs)
        assert a.schema == b.schema, t
        assert set(a.column("recording").to_pylist()) <= {os.path.abspath(rec)}, t
        assert a.drop_columns(["recording"]).equals(b.drop_columns(["recording"])), t
    # And read back as the same DataFrames.
    back = rostrace.spark.read_exports(spark, cli)
    assert back.callbacks.count() == fleet.callbacks.count() > 0
    # Over the bound of a task: an empty out, or append.
    with pytest.raises(ValueError, match="not empty"):
        rostrace.spark.analyze(spark, [rec], out)


def test_a_regression_planted_in_one_group_is_found_by_the_fleet_diff(spark, tmp_path):
    """Two groups of demo runs, the second with one callback made twice as slow (`--slow`):
    the fleet's diff finds that callback, and only it; with one recording per group its
    statistics equal `rostrace diff`'s of the two recordings."""
    import json

    from pyspark.sql import functions as F

    bin_ = os.environ.get("ROSTRACE_BIN")
    if not bin_:
        if os.environ.get("ROSTRACE_REQUIRE_TOOLS") == "1":
            pytest.fail("ROSTRACE_BIN not set")
        pytest.skip("ROSTRACE_BIN not set")
    slow = "/localization/fusion:/sensing/points_filtered=3"
    runs = tmp_path / "runs"
    for k in range(3):
        for version, extra in [("v1", []), ("v2", ["--slow", slow])]:
            out = runs / f"{version}-{k}"
            cmd = [bin_, "demo", "--duration", "3", "--domain", "57", "-o", str(out)] + extra
            subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    fleet = rostrace.spark.analyze(
        spark, str(runs / "*"), tmp_path / "fleet", paths=[FUSED, FULL], include_last_callback=True
    )
    assert fleet.errors.count() == 0
    version = F.regexp_extract("recording", r"/(v[0-9]+)-[0-9]+$", 1)
    d = rostrace.spark.diff(fleet, version, "v1", "v2")
    found = d[d["significant"]]
    assert [(r.node, r.kind, r.owner) for r in found.itertuples()] == [
        ("/localization/fusion", "subscription", "/sensing/points_filtered")
    ], d
    assert found["median_ratio"].iloc[0] > 1.5 and found["cliff_delta"].iloc[0] > 0.5, found
    # One recording a group: rostrace diff's own statistics of the two.
    base, new = runs / "v1-0", runs / "v2-0"
    one = rostrace.spark.diff(fleet, F.col("recording"), os.path.abspath(base), os.path.abspath(new))
    cli = subprocess.run([bin_, "diff", "--json", "-", str(base), str(new)], capture_output=True, check=False)
    theirs = {c["name"]: c for c in json.loads(cli.stdout)["changes"] if c["kind"] == "callback"}
    compared = 0
    for r in one.itertuples():
        (c,) = [c for n, c in theirs.items() if n.startswith(f"{r.node} {r.kind} {r.owner} ")] or [None]
        if c is None:
            continue
        compared += 1
        _same_as_cli(r, c)
    assert compared >= 5, (one, list(theirs))
    # Topics: the publish → callback start latencies, as rostrace diff compares them.
    topics = rostrace.spark.diff(fleet, F.col("recording"), os.path.abspath(base), os.path.abspath(new), of="topics")
    theirs = {c["name"]: c for c in json.loads(cli.stdout)["changes"] if c["kind"] == "topic"}
    compared = 0
    for r in topics.itertuples():
        c = theirs.get(r.topic)
        if c is None:
            continue
        compared += 1
        _same_as_cli(r, c)
    assert compared >= 4, (topics, list(theirs))
    # Paths: the path into the slowed callback got slower (its latency also holds the message's
    # way there, whose spread blurs the effect size: the p-value and the medians tell).
    paths = rostrace.spark.diff(fleet, version, "v1", "v2", of="paths")
    (fused,) = paths[paths["path"] == _label(FUSED)].itertuples()
    assert fused.p_value < 1e-6 and fused.median_ratio > 1.3 and fused.cliff_delta > 0.2, paths
    assert set(paths["path"]) == {_label(FUSED), _label(FULL)}, paths
    # Each recording's path records are rostrace e2e's: every message's latency.
    messages = fleet.path_messages.toPandas()
    summary = fleet.paths.toPandas()
    for rec in [base, new]:
        for spec in [FUSED, FULL]:
            e2e = subprocess.run(
                [bin_, "e2e", str(rec), "--path", spec, "--include-last-callback", "--json", "-"],
                capture_output=True, check=True,
            )
            e2e = json.loads(e2e.stdout)
            mine = messages[(messages["recording"] == os.path.abspath(rec)) & (messages["path"] == _label(spec))]
            mine = mine.sort_values("record")
            complete = mine[mine["status"] == "complete"]
            assert [int(v) for v in complete["latency_ns"]] == [m["latency_ns"] for m in e2e["instances"]], (rec, spec)
            assert len(mine) == e2e["records"] and len(complete) == e2e["complete"], (rec, spec)
            (row,) = summary[(summary["recording"] == os.path.abspath(rec)) & (summary["path"] == _label(spec))].itertuples()
            assert (row.records, row.complete, row.superseded, row.lost, row.in_flight) == tuple(
                e2e[k] for k in ["records", "complete", "superseded", "lost", "in_flight"]
            ), (rec, spec)
            assert (row.latency_max_ns, row.latency_p50_ns) == (e2e["latency"]["max"], e2e["latency"]["p50"]), (rec, spec)


def _same_as_cli(r, c):
    """A row of the fleet's diff against the change `rostrace diff --json` gives of the same."""
    assert (r.base_count, r.new_count) == (c["base"]["count"], c["new"]["count"]), r
    assert (r.base_p50_ns, r.new_p50_ns) == (c["base"]["p50"], c["new"]["p50"]), r
    # (p: the CLI's erfc is a Chebyshev fit within 1.2e-7 relative; Python's is exact.)
    assert r.u == pytest.approx(c["test"]["u"], rel=1e-12) and r.p_value == pytest.approx(c["p_value"], rel=1e-6), r
    assert r.cliff_delta == pytest.approx(c["cliff_delta"], rel=1e-12, abs=1e-12) and r.significant == c["significant"], r


# Paths of the demo: into the callback the regression slows (ending at its end: mostly that
# callback's run), and the whole way from the lidar to the actuator.
FUSED = "/sensing/lidar_filter,/localization/fusion"
FULL = "/sensing/lidar,/sensing/lidar_filter,/localization/fusion,/planning/planner,/control/actuator"


def _label(spec: str) -> str:
    """A demo path's label, as rostrace names it: its nodes with the topics between."""
    topics = {
        ("/sensing/lidar", "/sensing/lidar_filter"): "/sensing/points_raw",
        ("/sensing/lidar_filter", "/localization/fusion"): "/sensing/points_filtered",
        ("/localization/fusion", "/planning/planner"): "/localization/pose",
        ("/planning/planner", "/control/actuator"): "/control/cmd_vel",
    }
    nodes = spec.split(",")
    out = nodes[0]
    for a, b in zip(nodes, nodes[1:]):
        out += f" -{topics[(a, b)]}-> {b}"
    return out


def test_recordings_read_over_http_with_fsspec(spark, tmp_path):
    """Recordings served over HTTP (fsspec's HTTP filesystem): each copied to its task's
    temporary directory, analysed as the same recording read from disk, and removed."""
    import functools
    import glob
    import http.server
    import tempfile
    import threading

    pytest.importorskip("fsspec") if os.environ.get("ROSTRACE_REQUIRE_TOOLS") != "1" else __import__("fsspec")
    served = tmp_path / "served"
    served.mkdir()
    names = ["caret-demos-e2e-jazzy", "rosworld2021-pingpong", "tc-ros2-example2"]
    for n in names:
        shutil.copytree(SHARED / "traces" / n, served / n)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        before = set(glob.glob(os.path.join(tempfile.gettempdir(), "rostrace-recording-*")))
        urls = [f"{url}/{n}/" for n in names] + [f"{url}/missing/"]
        fleet = rostrace.spark.analyze(spark, urls, tmp_path / "fleet")
        after = set(glob.glob(os.path.join(tempfile.gettempdir(), "rostrace-recording-*")))
        assert after <= before, after - before
        errors = fleet.errors.toPandas()
        assert list(errors["path"]) == [f"{url}/missing/"], errors
        local = rostrace.spark.analyze(spark, [served / n for n in names], tmp_path / "local")
        cols = ["callback", "runs", "total_ns", "duration_min_ns", "duration_max_ns"]
        for n in names:
            a = fleet.callbacks.where(f"recording = '{url}/{n}/'").select(*cols).orderBy(*cols).toPandas()
            b = local.callbacks.where(f"recording = '{served / n}'").select(*cols).orderBy(*cols).toPandas()
            assert len(a) > 0 and a.equals(b), n
        # A glob pattern over HTTP: the served directory's listing.
        globbed = rostrace.spark.analyze(spark, f"{url}/*-*", tmp_path / "globbed")
        assert sorted(globbed.recordings.toPandas()["path"]) == sorted(f"{url}/{n}" for n in names)
        assert globbed.errors.count() == 0
    finally:
        server.shutdown()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The job run on the standalone cluster: master URL, out, recordings.
_CLUSTER_JOB = """
import sys, time
import rostrace.spark
from pyspark.sql import SparkSession

master, out, recs = sys.argv[1], sys.argv[2], sys.argv[3:]
s = (SparkSession.builder.master(master).appName("rostrace-cluster-test").config("spark.ui.enabled", "false")
     .config("spark.pyspark.python", sys.executable).config("spark.executor.memory", "512m")
     .config("spark.cores.max", "2").getOrCreate())
status = s.sparkContext._jsc.sc().getExecutorMemoryStatus
deadline = time.monotonic() + 120
# Both workers' executors registered before the job (the driver counts itself).
while status().size() < 3 and time.monotonic() < deadline:
    time.sleep(0.5)
rostrace.spark.analyze(s, recs, out, partitions=4)
print("executors", status().size() - 1)
s.stop()
"""


def test_a_standalone_cluster_of_two_workers_gives_the_same_fleet(spark, tmp_path):
    """A Spark standalone cluster started here (a master and two workers of one core each, from
    pyspark's own Spark): the same recordings give the same tables as in local[2]."""
    import pyspark

    home = os.path.dirname(pyspark.__file__)
    spark_class = os.path.join(home, "bin", "spark-class")
    env = dict(os.environ, SPARK_HOME=home, PYSPARK_PYTHON=sys.executable, SPARK_LOG_DIR=str(tmp_path / "logs"))
    port = _free_port()
    master_url = f"spark://127.0.0.1:{port}"
    procs = []
    logs = []

    def start(args, name):
        log = open(tmp_path / f"{name}.log", "w")
        logs.append(log)
        procs.append(subprocess.Popen([spark_class, *args], env=env, stdout=log, stderr=subprocess.STDOUT))

    distinct, copies, damaged = _recordings(tmp_path)
    recs = [str(p) for p in distinct[:6]] + [str(damaged)]
    try:
        start(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port), "--webui-port", "0"], "master")
        for k in range(2):
            w = tmp_path / f"worker{k}"
            start(
                ["org.apache.spark.deploy.worker.Worker", master_url, "--host", "127.0.0.1", "--cores", "1",
                 "--memory", "1g", "--webui-port", "0", "--work-dir", str(w)],
                f"worker{k}",
            )
        local = rostrace.spark.analyze(spark, recs, tmp_path / "local")
        # The job on the cluster, from a driver of its own (one SparkContext a process).
        job = subprocess.run(
            [sys.executable, "-c", _CLUSTER_JOB, master_url, str(tmp_path / "cluster"), *recs],
            env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path,
        )
        assert job.returncode == 0, job.stderr[-4000:]
        assert job.stdout.split() == ["executors", "2"], job.stdout
        fleet = rostrace.spark.read_exports(spark, tmp_path / "cluster")
        status = fleet.recordings.toPandas().sort_values("path").reset_index(drop=True)
        theirs = local.recordings.toPandas().sort_values("path").reset_index(drop=True)
        assert list(status["path"]) == list(theirs["path"]) and list(status["rows"]) == list(theirs["rows"])
        assert list(status["error"].isna()) == list(theirs["error"].isna())
        for t in ["callbacks", "topics", "callback_runs", "flows"]:
            a, b = fleet.table(t), local.table(t)
            assert a.count() == b.count() > 0 and a.exceptAll(b).count() == 0, t
        # The tasks ran on both workers.
        work = [tmp_path / f"worker{k}" for k in range(2)]
        assert all(any(w.rglob("stderr")) for w in work), [list(w.rglob("*")) for w in work]
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        for log in logs:
            log.close()
