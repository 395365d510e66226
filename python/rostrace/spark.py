"""Many recordings analysed on Apache Spark (``pip install rostrace[spark]``): each recording is
analysed by rostrace's Rust analysis inside a Spark task, which writes its tables as
``rostrace export --format parquet`` does; the tables of all recordings are then Spark
DataFrames, read lazily from those files. Nothing goes through the driver but the paths.

    from pyspark.sql import SparkSession, functions as F
    import rostrace.spark

    spark = SparkSession.builder.getOrCreate()
    fleet = rostrace.spark.analyze(spark, "/data/runs/*", out="/data/fleet")
    fleet.callbacks.groupBy("node").agg(F.max("duration_p99_ns")).show()
    fleet.errors.show()                      # recordings that could not be read

``out`` must be a directory every executor can write and the driver read (the same path on a
shared file system, or local in ``local[N]`` mode). A recording that fails gives a row of
``errors``; the job goes on. Spark has no unsigned integers: the export's ``uint64`` columns
(addresses, handles) are ``decimal(20,0)`` here, as Spark reads them from Parquet.
"""

import glob as _glob
import os
from typing import Dict, Iterator, List, Union

import pyarrow as pa

from . import _rostrace

# One row per recording: what its task did.
_STATUS = pa.schema(
    [("path", pa.string()), ("error", pa.string()), ("warnings", pa.string()), ("rows", pa.int64())]
)
_STATUS_DDL = "path string, error string, warnings string, rows long"


def _spark_type(kind: str):
    from pyspark.sql import types as T

    return {
        "int64": T.LongType(),
        "uint64": T.DecimalType(20, 0),
        "double": T.DoubleType(),
        "boolean": T.BooleanType(),
        "string": T.StringType(),
    }[kind]


def schemas() -> Dict[str, "object"]:
    """The Spark schema (a ``StructType``) of each table, from the export's schema (the one
    ``rostrace export`` writes and docs/exports.md lists)."""
    from pyspark.sql import types as T

    return {
        name: T.StructType([T.StructField(c, _spark_type(k), True) for c, k in columns])
        for name, columns in _rostrace.export_schema()
    }


def _paths(spark, recordings) -> "object":
    """The recordings as a DataFrame with a ``path`` column: from a DataFrame with one, a list
    of paths, or a path or glob pattern (its matches)."""
    from pyspark.sql import DataFrame

    if isinstance(recordings, DataFrame):
        if "path" not in recordings.columns:
            raise ValueError(f"recordings: a DataFrame needs a 'path' column (it has {recordings.columns})")
        return recordings.select("path")
    if isinstance(recordings, (str, os.PathLike)):
        pattern = os.fspath(recordings)
        paths = sorted(_glob.glob(pattern)) if _glob.has_magic(pattern) else [pattern]
        if not paths:
            raise ValueError(f"recordings: nothing matches {pattern}")
    else:
        paths = [os.fspath(p) for p in recordings]
    # Each path as the executors will see it.
    return spark.createDataFrame([(os.path.abspath(p),) for p in paths], "path string")


def _task(out: str, jobs: int):
    """The function of each task: every recording of its batches analysed and written."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for b in batches:
            for path in b.column("path").to_pylist():
                row = {"path": [path], "error": [None], "warnings": [None], "rows": [0]}
                try:
                    counts, warnings = _rostrace.export_tables([path], out, path, jobs)
                    row["rows"] = [sum(n for _, n in counts)]
                    row["warnings"] = ["\n".join(warnings) or None]
                except Exception as e:  # noqa: BLE001 - every failure is the recording's row
                    row["error"] = [f"{type(e).__name__}: {e}"]
                yield pa.RecordBatch.from_pydict(row, schema=_STATUS)

    return run


def analyze(spark, recordings, out: Union[str, os.PathLike], *, partitions: int = 0, jobs: int = 1, append: bool = False) -> "Fleet":
    """Analyses each recording (a path, glob pattern, list of paths, or DataFrame with a ``path``
    column) in a Spark task and writes its tables under ``out``; returns the :class:`Fleet` of
    ``out``. ``partitions``: tasks (0: Spark's default parallelism); ``jobs``: threads of each
    recording's analysis. ``out`` must be empty or absent, unless ``append`` adds these
    recordings to a fleet written there before (a recording analysed again is replaced)."""
    out = os.path.abspath(os.fspath(out))
    if os.path.isdir(out) and os.listdir(out) and not append:
        raise ValueError(f"out: {out} is not empty (append=True adds to the fleet in it)")
    paths = _paths(spark, recordings)
    n = partitions or max(1, spark.sparkContext.defaultParallelism)
    status = paths.repartition(n).mapInArrow(_task(out, jobs), _STATUS_DDL)
    status.write.mode("append" if append else "overwrite").parquet(os.path.join(out, "_recordings"))
    return Fleet(spark, out)


def diff(fleet: "Fleet", group, base: str, new: str, *, alpha: float = 0.001, min_delta: float = 0.33, min_change: float = 0.1):
    """Callbacks whose run durations changed from the recordings of group ``base`` to those of
    group ``new``, with ``rostrace diff``'s statistics (docs/diff.md): the Mann–Whitney U test
    (normal approximation, tie and continuity corrections), Cliff's delta and the change of the
    median (nearest rank); significant when p < ``alpha``, |delta| ≥ ``min_delta`` and the
    median changed by ``min_change`` or more. ``group``: a Spark column of the runs (their
    ``recording``, say ``F.regexp_extract("recording", r"/(v[0-9.]+)-", 1)``), or a DataFrame
    (``recording``, ``group``). Callbacks are matched across recordings by node, kind and owner
    (topic, service, or timer period). The ranks are counted in Spark, over each callback's
    distinct durations; only a row per callback comes back, as a pandas DataFrame, significant
    ones first, then by |delta|."""
    import math

    import pandas as pd
    from pyspark.sql import DataFrame, Window
    from pyspark.sql import functions as F

    cbs = fleet.callbacks.select("recording", "trace", "vpid", "callback", "owner", "timer_period_ns")
    runs = fleet.callback_runs.where(F.col("duration_ns").isNotNull()).join(cbs, ["recording", "trace", "vpid", "callback"], "left")
    if isinstance(group, DataFrame):
        runs = runs.join(group.select("recording", F.col("group").alias("_group")), "recording")
    else:
        runs = runs.withColumn("_group", group)
    key = ["node", "kind", "owner"]
    period = F.concat(F.lit("timer "), F.col("timer_period_ns").cast("string"), F.lit(" ns"))
    runs = runs.where(F.col("_group").isin(base, new)).withColumn("owner", F.coalesce("owner", period, F.lit("")))
    x, y = (F.col("_group") == base).cast("long"), (F.col("_group") == new).cast("long")
    counts = runs.groupBy(*key, "duration_ns").agg(F.sum(x).alias("nx"), F.sum(y).alias("ny"))
    w = Window.partitionBy(*key).orderBy("duration_ns")
    all_ = Window.partitionBy(*key)
    counts = (
        counts.withColumn("t", F.col("nx") + F.col("ny"))
        .withColumn("below", F.coalesce(F.sum("t").over(w.rowsBetween(Window.unboundedPreceding, -1)), F.lit(0)))
        .withColumn("cx", F.sum("nx").over(w.rowsBetween(Window.unboundedPreceding, 0)))
        .withColumn("cy", F.sum("ny").over(w.rowsBetween(Window.unboundedPreceding, 0)))
        .withColumn("n1w", F.sum("nx").over(all_))
        .withColumn("n2w", F.sum("ny").over(all_))
    )
    # Each duration's runs share the mean of their ranks; the median is the nearest rank's.
    per = counts.groupBy(*key).agg(
        F.sum("nx").alias("n1"),
        F.sum("ny").alias("n2"),
        F.sum((F.col("below") + (F.col("t") + 1) / 2) * F.col("ny")).alias("rank_y"),
        F.sum(F.col("t") * F.col("t") * F.col("t") - F.col("t")).alias("ties"),
        F.min(F.when((F.col("nx") > 0) & (F.col("cx") >= F.ceil(F.col("n1w") / 2)), F.col("duration_ns"))).alias("base_p50_ns"),
        F.min(F.when((F.col("ny") > 0) & (F.col("cy") >= F.ceil(F.col("n2w") / 2)), F.col("duration_ns"))).alias("new_p50_ns"),
    )
    rows = []
    for r in per.toPandas().itertuples(index=False):
        n1, n2 = float(r.n1), float(r.n2)
        u = z = cliff = 0.0
        p = 1.0
        if n1 > 0 and n2 > 0:
            u = float(r.rank_y) - n2 * (n2 + 1) / 2
            nn = n1 + n2
            var = n1 * n2 / 12 * ((nn + 1) - float(r.ties) / max(nn * (nn - 1), 1.0))
            cliff = 2 * u / (n1 * n2) - 1
            if var > 0:
                d = u - n1 * n2 / 2
                z = math.copysign(max(abs(d) - 0.5, 0.0), d) / math.sqrt(var)
                p = min(math.erfc(abs(z) / math.sqrt(2)), 1.0)
        b50, n50 = r.base_p50_ns, r.new_p50_ns
        ratio = n50 / b50 if b50 is not None and n50 is not None and b50 == b50 and n50 == n50 and b50 > 0 else float("nan")
        practical = ratio == ratio and abs(ratio - 1) >= min_change
        rows.append(
            {
                "node": r.node, "kind": r.kind, "owner": r.owner,
                "base_runs": int(n1), "new_runs": int(n2),
                "base_p50_ns": b50, "new_p50_ns": n50, "median_ratio": ratio,
                "u": u, "z": z, "p_value": p, "cliff_delta": cliff,
                "significant": bool(p < alpha and abs(cliff) >= min_delta and practical),
            }
        )
    out = pd.DataFrame(rows, columns=[
        "node", "kind", "owner", "base_runs", "new_runs", "base_p50_ns", "new_p50_ns", "median_ratio",
        "u", "z", "p_value", "cliff_delta", "significant",
    ])
    out["_abs"] = out["cliff_delta"].abs()
    out = out.sort_values(["significant", "_abs", "node", "owner"], ascending=[False, False, True, True])
    return out.drop(columns="_abs").reset_index(drop=True)


def read_exports(spark, directory: Union[str, os.PathLike]) -> "Fleet":
    """The tables of a directory of ``rostrace export --format parquet`` exports (or of
    :func:`analyze`'s ``out``) as a :class:`Fleet`."""
    return Fleet(spark, os.path.abspath(os.fspath(directory)))


class Fleet:
    """The tables of many recordings, each a Spark DataFrame with the export's columns, the
    ``recording`` column naming the recording (its path, for :func:`analyze`): ``traces``,
    ``processes``, ``nodes``, ``publishers``, ``subscriptions``, ``timers``, ``services``,
    ``callbacks``, ``topics``, ``callback_runs``, ``publications``, ``takes``, ``flows``,
    ``service_calls``, ``executor_threads``; ``recordings`` (path, error, warnings, rows: one
    per recording :func:`analyze` was given) and ``errors`` (those that failed)."""

    def __init__(self, spark, directory: str):
        self.spark = spark
        self.directory = directory
        self._schemas = schemas()

    @property
    def tables(self) -> List[str]:
        return list(self._schemas)

    def table(self, name: str):
        """The table ``name`` of every recording (empty, with its columns, when none has it)."""
        schema = self._schemas.get(name)
        if schema is None:
            raise AttributeError(f"no table {name!r} (tables: {', '.join(self._schemas)})")
        # (Spark takes files whose names start with `_` or `.` for hidden ones: `rostrace export`
        # never names a recording's file so.)
        d = os.path.join(self.directory, name)
        if not _glob.glob(os.path.join(_glob.escape(d), "*.parquet")):
            return self.spark.createDataFrame([], schema)
        return self.spark.read.schema(schema).parquet(d)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return self.table(name)

    @property
    def recordings(self):
        d = os.path.join(self.directory, "_recordings")
        if not os.path.isdir(d):
            return self.spark.createDataFrame([], _STATUS_DDL)
        return self.spark.read.parquet(d)

    @property
    def errors(self):
        return self.recordings.where("error IS NOT NULL").select("path", "error")

