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
