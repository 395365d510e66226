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

Recordings on any filesystem fsspec reads (``s3://``, ``gs://``, ``http://``...; fsspec and the
filesystem's package installed where the tasks run) are copied to the task's temporary directory,
analysed there and removed. End-to-end paths (``paths=``, as ``rostrace e2e --path`` takes them,
or ``named_paths=`` of an ``architecture=`` file) add the ``paths`` and ``path_messages`` tables.

``out`` must be a directory every executor can write and the driver read (the same path on a
shared file system, or local in ``local[N]`` mode). A recording that fails gives a row of
``errors``; the job goes on. Spark has no unsigned integers: the export's ``uint64`` columns
(addresses, handles) are ``decimal(20,0)`` here, as Spark reads them from Parquet.
"""

import glob as _glob
import os
from typing import Dict, Iterator, List, Optional, Sequence, Union

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


def _is_url(path: str) -> bool:
    """Whether ``path`` names a file of another filesystem than the local one (``s3://...``)."""
    return "://" in path and not path.startswith("file://")


def _local_path(path: str) -> str:
    return path[len("file://"):] if path.startswith("file://") else path


def _fsspec(url: str):
    """fsspec's filesystem of ``url`` and the path in it, or an error saying what to install."""
    try:
        import fsspec
    except ImportError:
        raise ImportError(f"{url}: reading URLs needs fsspec (pip install 'rostrace[spark]')") from None
    return fsspec.core.url_to_fs(url)


def _matches(pattern: str) -> List[str]:
    """The recordings ``pattern`` names: its matches when it is a glob pattern, else itself."""
    if _is_url(pattern):
        if not _glob.has_magic(pattern):
            return [pattern]
        fs, root = _fsspec(pattern)
        return sorted(fs.unstrip_protocol(p) for p in fs.glob(root))
    pattern = _local_path(pattern)
    return sorted(_glob.glob(pattern)) if _glob.has_magic(pattern) else [pattern]


def _paths(spark, recordings) -> "object":
    """The recordings as a DataFrame with a ``path`` column: from a DataFrame with one, a list
    of paths, or a path or glob pattern (its matches); local paths made absolute, URLs kept."""
    from pyspark.sql import DataFrame

    if isinstance(recordings, DataFrame):
        if "path" not in recordings.columns:
            raise ValueError(f"recordings: a DataFrame needs a 'path' column (it has {recordings.columns})")
        return recordings.select("path")
    if isinstance(recordings, (str, os.PathLike)):
        pattern = os.fspath(recordings)
        paths = _matches(pattern)
        if not paths:
            raise ValueError(f"recordings: nothing matches {pattern}")
    else:
        paths = [os.fspath(p) for p in recordings]
    # Each path as the executors will see it.
    seen = [p if _is_url(p) else os.path.abspath(_local_path(p)) for p in paths]
    return spark.createDataFrame([(p,) for p in seen], "path string")


class _Scratch:
    """A recording where the task can read it: a local path as it is; a URL's files copied to a
    temporary directory with fsspec, removed on exit."""

    def __init__(self, path: str):
        self.path, self.dir = path, None

    def __enter__(self) -> str:
        if not _is_url(self.path):
            return _local_path(self.path)
        import tempfile

        self.dir = tempfile.mkdtemp(prefix="rostrace-recording-")
        try:
            return self._copy(os.path.join(self.dir, "recording"))
        except BaseException:
            self.__exit__()
            raise

    def _copy(self, local: str) -> str:
        fs, root = _fsspec(self.path)
        # A recording is a directory (its traces below it); a file stands for its directory
        # (a trace's metadata file).
        if not fs.isdir(root):
            if not fs.exists(root):
                raise FileNotFoundError(f"{self.path}: no such file or directory")
            root = root.rsplit("/", 1)[0]
        root = root.rstrip("/") + "/"
        # File by file (directory listings differ between filesystems), each where its path
        # below the recording says, and only there: a name is never a way out of the copy.
        files = [f for f in fs.find(root) if not f.endswith("/")]
        for f in files:
            parts = f[len(root):].split("/") if f.startswith(root) else []
            if not parts or any(p in ("", ".", "..") or "\\" in p or "\0" in p for p in parts):
                raise ValueError(f"{self.path}: {f}: not a file below the recording")
            dest = os.path.join(local, *parts)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            fs.get_file(f, dest)
        if not files:
            raise FileNotFoundError(f"{self.path}: no file below it")
        return local

    def __exit__(self, *exc):
        if self.dir is not None:
            import shutil

            shutil.rmtree(self.dir, ignore_errors=True)
        return False


def _task(out: str, jobs: int, paths: dict):
    """The function of each task: every recording of its batches analysed and written."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for b in batches:
            for path in b.column("path").to_pylist():
                row = {"path": [path], "error": [None], "warnings": [None], "rows": [0]}
                try:
                    with _Scratch(path) as local:
                        counts, warnings = _rostrace.export_tables([local], out, path, jobs, **paths)
                    row["rows"] = [sum(n for _, n in counts)]
                    row["warnings"] = ["\n".join(warnings) or None]
                except Exception as e:  # noqa: BLE001 - every failure is the recording's row
                    row["error"] = [f"{type(e).__name__}: {e}"]
                yield pa.RecordBatch.from_pydict(row, schema=_STATUS)

    return run


def analyze(
    spark,
    recordings,
    out: Union[str, os.PathLike],
    *,
    partitions: int = 0,
    jobs: int = 1,
    append: bool = False,
    paths: Sequence[str] = (),
    architecture: Optional[Union[str, os.PathLike]] = None,
    named_paths: Sequence[str] = (),
    include_first_callback: bool = False,
    include_last_callback: bool = False,
) -> "Fleet":
    """Analyses each recording (a path, glob pattern, list of paths, or DataFrame with a ``path``
    column; local, or a URL fsspec reads) in a Spark task and writes its tables under ``out``;
    returns the :class:`Fleet` of ``out``. ``partitions``: tasks (0: Spark's default
    parallelism); ``jobs``: threads of each recording's analysis. ``out`` must be empty or
    absent, unless ``append`` adds these recordings to a fleet written there before (a
    recording analysed again is replaced).

    ``paths``: end-to-end paths followed in every recording, each as ``rostrace e2e --path``
    takes it (``"/a,/b,/c"``); ``named_paths``: named paths of ``architecture`` (a CARET
    architecture YAML file, read here, whose message contexts apply to every recording). They
    give the ``paths`` and ``path_messages`` tables; a recording without a path has a warning in
    ``recordings``."""
    out = os.path.abspath(os.fspath(out))
    if os.path.isdir(out) and os.listdir(out) and not append:
        raise ValueError(f"out: {out} is not empty (append=True adds to the fleet in it)")
    if isinstance(paths, str) or isinstance(named_paths, str):
        raise ValueError("paths, named_paths: a list of paths (each \"/a,/b,/c\")")
    arch = None
    if architecture is not None:
        with open(architecture, encoding="utf-8") as f:
            arch = f.read()
    elif named_paths:
        raise ValueError("named_paths: they are the architecture's: give architecture")
    path_args = {
        "e2e_paths": list(paths),
        "architecture": arch,
        "named_paths": list(named_paths),
        "include_first_callback": include_first_callback,
        "include_last_callback": include_last_callback,
    }
    todo = _paths(spark, recordings)
    n = partitions or max(1, spark.sparkContext.defaultParallelism)
    status = todo.repartition(n).mapInArrow(_task(out, jobs, path_args), _STATUS_DDL)
    status.write.mode("append" if append else "overwrite").parquet(os.path.join(out, "_recordings"))
    return Fleet(spark, out)


# What the fleet's diff compares: the table of the samples, the columns naming what is compared
# (as ``rostrace diff`` matches it across runs), the sample column.
_COMPARED = {
    "callbacks": (("node", "kind", "owner"), "duration_ns"),
    "topics": (("topic",), "pub_to_callback_ns"),
    "paths": (("path",), "latency_ns"),
}


def _samples(fleet: "Fleet", of: str):
    """The samples ``diff`` compares (``of``: a key of ``_COMPARED``), with the ``recording``
    column and ``of``'s key columns."""
    from pyspark.sql import functions as F

    if of == "callbacks":
        cbs = fleet.callbacks.select("recording", "trace", "vpid", "callback", "node", "kind", "owner", "timer_period_ns")
        runs = fleet.callback_runs.select("recording", "trace", "vpid", "callback", "duration_ns")
        runs = runs.where(F.col("duration_ns").isNotNull()).join(cbs, ["recording", "trace", "vpid", "callback"], "left")
        period = F.concat(F.lit("timer "), F.col("timer_period_ns").cast("string"), F.lit(" ns"))
        return runs.withColumn("owner", F.coalesce("owner", period, F.lit("")))
    if of == "topics":
        return fleet.flows.where(F.col("pub_to_callback_ns").isNotNull())
    return fleet.path_messages.where(F.col("status") == "complete")


def diff(
    fleet: "Fleet",
    group,
    base: str,
    new: str,
    *,
    of: str = "callbacks",
    alpha: float = 0.001,
    min_delta: float = 0.33,
    min_change: float = 0.1,
):
    """What changed from the recordings of group ``base`` to those of group ``new``, with
    ``rostrace diff``'s statistics (docs/diff.md): the Mann–Whitney U test (normal approximation,
    tie and continuity corrections), Cliff's delta and the change of the median (nearest rank);
    significant when p < ``alpha``, |delta| ≥ ``min_delta`` and the median changed by
    ``min_change`` or more. ``of``: ``"callbacks"`` (run durations; matched across recordings by
    node, kind and owner: topic, service, or timer period), ``"topics"`` (publish → callback
    start of every matched message, by topic) or ``"paths"`` (end-to-end latency of the
    complete records of the fleet's ``paths``, by path). ``group``: a Spark column of the
    samples (their ``recording``, say ``F.regexp_extract("recording", r"/(v[0-9.]+)-", 1)``), or
    a DataFrame (``recording``, ``group``). The ranks are counted in Spark, over the distinct
    values of each compared thing; only a row per thing comes back, as a pandas DataFrame
    (its key columns, then the statistics), significant ones first, then by |delta|."""
    import math

    import pandas as pd
    from pyspark.sql import DataFrame, Window
    from pyspark.sql import functions as F

    if of not in _COMPARED:
        raise ValueError(f"of: {of!r} is not one of {', '.join(_COMPARED)}")
    key, value = list(_COMPARED[of][0]), _COMPARED[of][1]
    runs = _samples(fleet, of)
    if isinstance(group, DataFrame):
        runs = runs.join(group.select("recording", F.col("group").alias("_group")), "recording")
    else:
        runs = runs.withColumn("_group", group)
    runs = runs.where(F.col("_group").isin(base, new)).select(*key, F.col(value).alias("v"), "_group")
    x, y = (F.col("_group") == base).cast("long"), (F.col("_group") == new).cast("long")
    counts = runs.groupBy(*key, "v").agg(F.sum(x).alias("nx"), F.sum(y).alias("ny"))
    w = Window.partitionBy(*key).orderBy("v")
    all_ = Window.partitionBy(*key)
    counts = (
        counts.withColumn("t", F.col("nx") + F.col("ny"))
        .withColumn("below", F.coalesce(F.sum("t").over(w.rowsBetween(Window.unboundedPreceding, -1)), F.lit(0)))
        .withColumn("cx", F.sum("nx").over(w.rowsBetween(Window.unboundedPreceding, 0)))
        .withColumn("cy", F.sum("ny").over(w.rowsBetween(Window.unboundedPreceding, 0)))
        .withColumn("n1w", F.sum("nx").over(all_))
        .withColumn("n2w", F.sum("ny").over(all_))
    )
    # Each value's samples share the mean of their ranks; the median is the nearest rank's.
    per = counts.groupBy(*key).agg(
        F.sum("nx").alias("n1"),
        F.sum("ny").alias("n2"),
        F.sum((F.col("below") + (F.col("t") + 1) / 2) * F.col("ny")).alias("rank_y"),
        F.sum(F.col("t") * F.col("t") * F.col("t") - F.col("t")).alias("ties"),
        F.min(F.when((F.col("nx") > 0) & (F.col("cx") >= F.ceil(F.col("n1w") / 2)), F.col("v"))).alias("base_p50_ns"),
        F.min(F.when((F.col("ny") > 0) & (F.col("cy") >= F.ceil(F.col("n2w") / 2)), F.col("v"))).alias("new_p50_ns"),
    )
    rows = []
    for r in per.toPandas().to_dict("records"):
        n1, n2 = float(r["n1"]), float(r["n2"])
        u = z = cliff = 0.0
        p = 1.0
        if n1 > 0 and n2 > 0:
            u = float(r["rank_y"]) - n2 * (n2 + 1) / 2
            nn = n1 + n2
            var = n1 * n2 / 12 * ((nn + 1) - float(r["ties"]) / max(nn * (nn - 1), 1.0))
            cliff = 2 * u / (n1 * n2) - 1
            if var > 0:
                d = u - n1 * n2 / 2
                z = math.copysign(max(abs(d) - 0.5, 0.0), d) / math.sqrt(var)
                p = min(math.erfc(abs(z) / math.sqrt(2)), 1.0)
        b50, n50 = r["base_p50_ns"], r["new_p50_ns"]
        ratio = n50 / b50 if b50 is not None and n50 is not None and b50 == b50 and n50 == n50 and b50 > 0 else float("nan")
        practical = ratio == ratio and abs(ratio - 1) >= min_change
        row = {k: r[k] for k in key}
        row.update(
            {
                "base_count": int(n1), "new_count": int(n2),
                "base_p50_ns": b50, "new_p50_ns": n50, "median_ratio": ratio,
                "u": u, "z": z, "p_value": p, "cliff_delta": cliff,
                "significant": bool(p < alpha and abs(cliff) >= min_delta and practical),
            }
        )
        rows.append(row)
    out = pd.DataFrame(rows, columns=key + [
        "base_count", "new_count", "base_p50_ns", "new_p50_ns", "median_ratio",
        "u", "z", "p_value", "cliff_delta", "significant",
    ])
    out["_abs"] = out["cliff_delta"].abs()
    out = out.sort_values(["significant", "_abs"] + key, ascending=[False, False] + [True] * len(key))
    return out.drop(columns="_abs").reset_index(drop=True)


def read_exports(spark, directory: Union[str, os.PathLike]) -> "Fleet":
    """The tables of a directory of ``rostrace export --format parquet`` exports (or of
    :func:`analyze`'s ``out``) as a :class:`Fleet`."""
    return Fleet(spark, os.path.abspath(os.fspath(directory)))


class Fleet:
    """The tables of many recordings, each a Spark DataFrame with the export's columns, the
    ``recording`` column naming the recording (its path, for :func:`analyze`): ``traces``,
    ``processes``, ``nodes``, ``publishers``, ``subscriptions``, ``timers``, ``services``,
    ``callbacks``, ``topics``, ``topic_pairs``, ``callback_runs``, ``publications``, ``takes``, ``flows``,
    ``service_calls``, ``executor_threads``, and with paths asked for, ``paths`` and
    ``path_messages``; ``recordings`` (path, error, warnings, rows: one per recording
    :func:`analyze` was given) and ``errors`` (those that failed)."""

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

