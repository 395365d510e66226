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
    tables = ["callbacks", "callback_runs", "publications", "takes", "flows", "nodes", "topics"]
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
    slow = "/localization/fusion:/sensing/points_filtered=2"
    runs = tmp_path / "runs"
    for k in range(3):
        for version, extra in [("v1", []), ("v2", ["--slow", slow])]:
            out = runs / f"{version}-{k}"
            cmd = [bin_, "demo", "--duration", "3", "--domain", "57", "-o", str(out)] + extra
            subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    fleet = rostrace.spark.analyze(spark, str(runs / "*"), tmp_path / "fleet")
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
        assert (r.base_runs, r.new_runs) == (c["base"]["count"], c["new"]["count"]), r
        assert (r.base_p50_ns, r.new_p50_ns) == (c["base"]["p50"], c["new"]["p50"]), r
        # (p: the CLI's erfc is a Chebyshev fit within 1.2e-7 relative; Python's is exact.)
        assert r.u == pytest.approx(c["test"]["u"], rel=1e-12) and r.p_value == pytest.approx(c["p_value"], rel=1e-6), r
        assert r.cliff_delta == pytest.approx(c["cliff_delta"], rel=1e-12, abs=1e-12) and r.significant == c["significant"], r
    assert compared >= 5, (one, list(theirs))
