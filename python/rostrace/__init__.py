"""rostrace: ROS 2 traces and their analysis as pandas DataFrames.

The traces are read and analyzed in Rust (every core, the GIL released); the tables reach
pyarrow through the Arrow C stream interface and pandas from there, column by column.

    >>> import rostrace
    >>> events = rostrace.read("~/.ros/tracing/session", names=["ros2:callback_start"])
    >>> a = rostrace.analyze("~/.ros/tracing/session")
    >>> a.callbacks.sort_values("total_ns", ascending=False).head()

``rostrace.tracetools_analysis`` runs tracetools_analysis notebooks by changing their imports.
"""

import json
import os
import sys
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Union

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from . import _rostrace
from ._rostrace import RecordError, TraceError

__all__ = [
    "read",
    "read_tables",
    "iter_events",
    "analyze",
    "info",
    "record",
    "find_library",
    "Analysis",
    "PathLatency",
    "TraceError",
    "RecordError",
    "__version__",
]
__version__ = _rostrace.__version__

PathLike = Union[str, "os.PathLike[str]"]
Paths = Union[PathLike, Sequence[PathLike]]
Progress = Union[None, bool, Callable[[int, int], Any]]


def _paths(path: Paths) -> List[str]:
    if isinstance(path, (str, bytes, os.PathLike)):
        path = [path]
    out = [os.path.expanduser(os.fsdecode(p)) for p in path]
    if not out:
        raise TraceError("no trace given")
    return out


def _names(names: Union[None, str, Iterable[str]]) -> Optional[List[str]]:
    if names is None:
        return None
    if isinstance(names, str):
        return [names]
    return list(names)


class _Bar:
    """A tqdm bar over bytes read, closed at the end."""

    def __init__(self, desc: str):
        from tqdm.auto import tqdm  # noqa: PLC0415

        self.bar = tqdm(desc=desc, unit="B", unit_scale=True, leave=False)

    def __call__(self, done: int, total: int) -> None:
        if self.bar.total != total:
            self.bar.total = total
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        self.bar.close()


def _progress(progress: Progress, desc: str):
    """The callback for the Rust side: a tqdm bar when asked for (True), or by default when
    tqdm is installed and standard error is a terminal; a callable is called as is."""
    if callable(progress):
        return progress
    if progress is False:
        return None
    try:
        import tqdm  # noqa: F401, PLC0415
    except ImportError:
        if progress is True:
            raise ImportError("progress=True needs tqdm (pip install tqdm)") from None
        return None
    if progress is None and not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        return None
    return _Bar(desc)


def _with_progress(progress: Progress, desc: str, native: Callable, *args):
    """``native(*args, callback)`` with the progress callback of ``progress``, the bar closed
    after."""
    cb = _progress(progress, desc)
    try:
        return native(*args, cb)
    finally:
        if isinstance(cb, _Bar):
            cb.close()


def _warn(errors: List[str]) -> None:
    if errors:
        import warnings  # noqa: PLC0415

        shown = "\n".join(errors[:10]) + (f"\n... and {len(errors) - 10} more" if len(errors) > 10 else "")
        warnings.warn(f"rostrace: {len(errors)} read error(s); the events around them are kept:\n{shown}", stacklevel=3)


def _int_mapper(t: pa.DataType):
    if pa.types.is_int64(t):
        return pd.Int64Dtype()
    if pa.types.is_uint64(t):
        return pd.UInt64Dtype()
    return None


def to_pandas(table: pa.Table) -> pd.DataFrame:
    """A DataFrame of an Arrow table, integers exact: columns without nulls as numpy int64 or
    uint64, integer columns with nulls as pandas' nullable Int64/UInt64 (not as floats)."""
    nullable = [f.name for f in table.schema if pa.types.is_integer(f.type) and table.column(f.name).null_count > 0]
    if not nullable:
        return table.to_pandas()
    return table.to_pandas(types_mapper=_int_mapper).astype(
        {
            f.name: ("int64" if pa.types.is_signed_integer(f.type) else "uint64")
            for f in table.schema
            if pa.types.is_integer(f.type) and f.name not in nullable
        }
    )


_EVENT_COLUMNS = {"trace": "_trace", "host": "_host", "timestamp_ns": "_timestamp", "cpu": "cpu_id"}


def _event_table(t: Any) -> pa.Table:
    table = pa.table(t)
    table = table.drop_columns(["recording"])
    return table.rename_columns([_EVENT_COLUMNS.get(n, n) for n in table.column_names])


def _event_tables(path: Paths, names, jobs: int, progress: Progress):
    """The event tables read in Rust: ([(event name, pyarrow table)], events read in all);
    the read errors warned about."""
    tables, errors, read = _with_progress(progress, "reading", _rostrace.read_tables, _paths(path), _names(names), jobs)
    _warn(errors)
    return [(name, _event_table(t)) for name, t in tables], read


def read_tables(
    path: Paths, names: Union[None, str, Iterable[str]] = None, *, jobs: int = 0, progress: Progress = None
) -> Dict[str, pd.DataFrame]:
    """The events of the traces, a DataFrame per event name (``"ros2:callback_start"``):
    columns ``_trace`` (trace index), ``_host`` (its host), ``_timestamp`` (ns since the epoch), ``cpu_id``, then
    the context fields (``vpid``, ``vtid``, ``procname``, ...) and the payload fields
    (integers exact, strings as str, arrays and structures as JSON strings). Rows in time order.

    ``names``: the event names to read (None: all). ``jobs``: threads (0: one per core).
    Read errors become a warning; the events around them are kept."""
    tables, _ = _event_tables(path, names, jobs, progress)
    return {name: to_pandas(t) for name, t in tables}


def read(
    path: Paths, names: Union[None, str, Iterable[str]] = None, *, jobs: int = 0, progress: Progress = None
) -> pd.DataFrame:
    """The events of the traces as one DataFrame in time order: ``_name``, ``_trace``,
    ``_host``, ``_timestamp`` (ns since the epoch), ``cpu_id``, then every context and payload field of
    the events read (null where an event has no such field). Events of the same timestamp are
    grouped by name. See :func:`read_tables` for the arguments; for traces too large for
    memory, :func:`iter_events` or ``names``."""
    tables, _ = _event_tables(path, names, jobs, progress)
    parts = [t.add_column(0, "_name", pa.array([name] * t.num_rows, pa.string())) for name, t in tables]
    if not parts:
        return pd.DataFrame(
            {"_name": pd.Series([], dtype=object), "_trace": [], "_host": pd.Series([], dtype=object), "_timestamp": [], "cpu_id": []}
        )
    # A field whose type differs between event names becomes a string column.
    types: Dict[str, pa.DataType] = {}
    for p in parts:
        for f in p.schema:
            if types.setdefault(f.name, f.type) != f.type:
                types[f.name] = pa.string()
    parts = [
        p.cast(pa.schema([pa.field(f.name, types[f.name]) for f in p.schema])) if any(types[f.name] != f.type for f in p.schema) else p
        for p in parts
    ]
    table = pa.concat_tables(parts, promote_options="default")
    table = table.take(pc.sort_indices(table, sort_keys=[("_timestamp", "ascending")]))
    return to_pandas(table)


def iter_events(path: Paths, names: Union[None, str, Iterable[str]] = None, *, jobs: int = 0) -> Iterator[dict]:
    """The events one by one, in time order, as dicts like tracetools_read's: ``_name``,
    ``_timestamp``, ``cpu_id``, the context and payload fields (arrays as lists, structures as
    dicts). A thread reads ahead a few thousand events: memory stays flat on any trace. The
    iterator's ``errors`` lists the read errors met so far."""
    return _rostrace.iter_events(_paths(path), _names(names), jobs)


class Analysis:
    """The analysis of a recording (``rostrace analyze``): its tables as DataFrames, made on
    first use, and the report.

    Tables (see the README's export schema for every column; times and durations in ns):
    ``traces``, ``processes``, ``nodes``, ``publishers``, ``subscriptions``, ``timers``,
    ``services``, ``callbacks``, ``topics``, ``topic_pairs``, ``callback_runs``, ``publications``, ``takes``,
    ``flows``, ``service_calls``, ``executor_phases`` (also ``executor_threads``), and from
    the report ``per_process``, ``per_node``, ``per_thread``, ``longest_paths``,
    ``lifecycle_transitions``."""

    def __init__(self, tables: Dict[str, pa.Table], report: dict, errors: List[str], paths: Any = None):
        self.arrow: Dict[str, pa.Table] = tables
        self.report: dict = report
        self.errors: List[str] = errors
        self._frames: Dict[str, pd.DataFrame] = {}
        self._paths = paths

    def architecture(self) -> str:
        """The system's architecture as CARET's YAML (``rostrace architecture``)."""
        return self._paths.architecture()

    def paths(
        self,
        from_: str,
        to: str,
        through: Union[None, str, Sequence[str]] = None,
        *,
        max_depth: int = 15,
        max_paths: int = 100,
        include_first_callback: bool = False,
        include_last_callback: bool = False,
    ) -> pd.DataFrame:
        """The paths from ``from_`` through ``through`` to ``to`` (nodes or topics), ranked by
        mean latency (``rostrace paths``): a row per path, as ``longest_paths``. ``attrs``
        says whether the search stopped at ``max_paths``, ``max_depth`` or its work budget
        (``truncated_at_max_expansions``: the default limit of states expanded)."""
        out = json.loads(
            self._paths.paths(
                from_, to, _names(through) or [], max_depth, max_paths, include_first_callback, include_last_callback
            )
        )
        df = _path_rows(out["paths"])
        df.attrs["truncated_at_max_paths"] = out["truncated_at_max_paths"]
        df.attrs["truncated_at_max_depth"] = out["truncated_at_max_depth"]
        df.attrs["truncated_at_max_expansions"] = out["truncated_at_max_expansions"]
        return df

    def e2e(
        self, path: Union[str, Sequence[str]], *, include_first_callback: bool = False, include_last_callback: bool = False
    ) -> "PathLatency":
        """The latency along a path, message by message (``rostrace e2e``): ``path`` is
        ``"NODE,NODE,..."`` or a list of nodes, with topics between two nodes where they
        communicate over more than one."""
        spec = path if isinstance(path, str) else ",".join(path)
        return PathLatency(json.loads(self._paths.e2e(spec, include_first_callback, include_last_callback)))

    @property
    def tables(self) -> List[str]:
        """The names of the tables."""
        return list(self.arrow) + ["executor_phases", "per_process", "per_node", "per_thread", "longest_paths", "lifecycle_transitions"]

    def table(self, name: str) -> pd.DataFrame:
        """One table as a DataFrame (``a.table("callbacks")`` is ``a.callbacks``)."""
        if name in self._frames:
            return self._frames[name]
        if name == "executor_phases":
            name = "executor_threads"
        if name in self.arrow:
            df = to_pandas(self.arrow[name])
        elif name in ("per_process", "per_node", "per_thread", "lifecycle_transitions"):
            rows = self.report.get(name, [])
            df = pd.DataFrame(rows)
        elif name == "longest_paths":
            df = _path_rows((self.report.get("longest_paths") or {}).get("paths", []))
        else:
            raise AttributeError(f"no table {name!r}; tables: {', '.join(self.tables)}")
        self._frames[name] = df
        return df

    def __getattr__(self, name: str) -> pd.DataFrame:
        if name.startswith("_"):
            raise AttributeError(name)
        return self.table(name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.tables))

    def to_json(self, path: Optional[PathLike] = None, indent: Optional[int] = 2) -> Optional[str]:
        """The report as JSON (``rostrace analyze --json``): to ``path``, or returned."""
        text = json.dumps(self.report, indent=indent)
        if path is None:
            return text
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return None

    def __repr__(self) -> str:
        r = self.report
        return (
            f"<rostrace.Analysis: {r.get('events', 0):,} events, {len(r.get('processes', []))} processes, "
            f"{len(r.get('nodes', []))} nodes, {len(r.get('callbacks', []))} callbacks, "
            f"{r.get('flows_matched', 0):,} messages matched>"
        )


_STATS = ("count", "mean", "std", "min", "p50", "p90", "p99", "max")


def _path_rows(paths: List[dict]) -> pd.DataFrame:
    """A row per ranked path: its label, nodes, topics, records and latency (ns)."""
    rows = []
    for p in paths:
        lat = p.get("latency") or {}
        rows.append(
            {
                "path": p["label"],
                "nodes": p["path"]["nodes"],
                "topics": p["path"]["topics"],
                "records": p["records"],
                "complete": p["complete"],
                "dropped": p["dropped"],
                "superseded": p["superseded"],
                "lost": p["lost"],
                "in_flight": p["in_flight"],
                **{f"latency_{k}_ns": lat.get(k) for k in ("mean", "min", "p50", "p90", "p99", "max")},
            }
        )
    columns = ["path", "nodes", "topics", "records", "complete", "dropped", "superseded", "lost", "in_flight"] + [
        f"latency_{k}_ns" for k in ("mean", "min", "p50", "p90", "p99", "max")
    ]
    return pd.DataFrame(rows, columns=columns)


class PathLatency:
    """A path's latency, message by message (``Analysis.e2e``).

    ``records``: CARET's records table (a column per point of the path, ns; null where a
    message did not get); ``instances``: the records that went the whole way (``start_ns``,
    ``end_ns``, ``latency_ns``, then the time in each segment); ``segments``: each segment's
    kind and latency statistics; ``response_time``: CARET's four cases; ``latency``: the
    statistics (ns); ``summary``: all of it as ``rostrace e2e --json`` gives it."""

    def __init__(self, summary: dict):
        self.summary = summary
        self.path = summary["path"]
        self.label: str = summary["label"]
        self.latency: dict = summary["latency"]
        self.complete: int = summary["complete"]
        self.dropped: int = summary["dropped"]
        #: Of the dropped: superseded by a newer message at a node that publishes the latest it
        #: took (use latest message), and lost (not taken, or not forwarded).
        self.superseded: int = summary["superseded"]
        self.lost: int = summary["lost"]
        self.in_flight: int = summary["in_flight"]
        cols = summary["columns"]
        self.records = pd.DataFrame(
            {c: pd.array([r[i] for r in summary["rows"]], dtype="Int64") for i, c in enumerate(cols)}, columns=cols
        )
        names = [s["name"] for s in summary["segments"]]
        inst = summary["instances"]
        self.instances = pd.DataFrame(
            {
                "start_ns": pd.array([x["start_ns"] for x in inst], dtype="int64"),
                "end_ns": pd.array([x["end_ns"] for x in inst], dtype="int64"),
                "latency_ns": pd.array([x["latency_ns"] for x in inst], dtype="int64"),
                **{n: pd.array([x["segments_ns"][k] for x in inst], dtype="int64") for k, n in enumerate(names)},
            }
        )
        self.segments = pd.DataFrame(
            [{"segment": s["name"], "kind": s["kind"], **{k: s["latency"].get(k) for k in _STATS}} for s in summary["segments"]]
        )
        self.response_time = pd.DataFrame(
            [{"case": r["case"], **{k: r["stats"].get(k) for k in _STATS}} for r in summary["response_time"]]
        )

    def __repr__(self) -> str:
        mean = self.latency.get("mean")
        shown = f"{mean / 1e6:.3f} ms mean" if self.complete else "no message went the whole way"
        return f"<rostrace.PathLatency {self.label}: {len(self.records)} records, {self.complete} complete, {shown}>"


def analyze(path: Paths, *, jobs: int = 0, progress: Progress = None) -> Analysis:
    """Analyzes the traces (one recording: a session directory, or several traces analyzed
    together) as ``rostrace analyze`` does; the GIL is released meanwhile."""
    tables, report, errors, paths = _with_progress(progress, "analyzing", _rostrace.analyze, _paths(path), jobs)
    _warn(errors)
    arrow = {}
    for t in tables:
        table = pa.table(t)
        arrow[t.name] = table.drop_columns(["recording"]) if "recording" in table.column_names else table
    return Analysis(arrow, json.loads(report), errors, paths)


def info(path: Paths, *, jobs: int = 0) -> dict:
    """What the traces hold, as ``rostrace info --json`` gives it: ``traces``, ``begin_ns``,
    ``end_ns``, ``duration_ns``, ``event_count``, ``events_per_name`` (``[name, count]``, most
    frequent first), ``streams``, ``processes`` (``trace``, ``host``, ``vpid``, ``procname``,
    ``events``), ``discarded_events``, ``lost_packets``, ``losses``, ``tracetools_versions``,
    ``ros_distros``, ``tracers``, ``errors``. The read errors are also warned about."""
    summary = json.loads(_rostrace.info(_paths(path), jobs))
    _warn(summary["errors"])
    return summary


def find_library() -> Optional[str]:
    """rostrace's ``libtracetools.so``, to preload into the traced programs: ``$ROSTRACE_LIB``,
    else the copy this package carries (written into rostrace's cache directory the first time),
    else the one of the ``rostrace`` command on ``PATH`` (``rostrace lib``), else None
    (:func:`record` then says why)."""
    lib = os.environ.get("ROSTRACE_LIB")
    if lib:
        return lib
    try:
        return _rostrace.find_library()
    except RecordError:
        pass
    import shutil  # noqa: PLC0415
    import subprocess  # noqa: PLC0415

    exe = shutil.which("rostrace")
    if exe is None:
        return None
    out = subprocess.run([exe, "lib"], capture_output=True, text=True, check=False)
    return (out.stdout.strip() or None) if out.returncode == 0 else None


_FILTERS = ("select_nodes", "ignore_nodes", "select_topics", "ignore_topics", "ignore_processes")


def record(
    command: Sequence[PathLike],
    *,
    output: Optional[PathLike] = None,
    name: Optional[str] = None,
    path: Optional[PathLike] = None,
    events: Union[None, str, Iterable[str]] = None,
    light: bool = False,
    distro: Optional[str] = None,
    buffer_size: Optional[str] = None,
    append: bool = False,
    lib: Optional[PathLike] = None,
    rclpy: bool = True,
    rotate: Optional[str] = None,
    keep: Optional[int] = None,
    **filters: str,
) -> str:
    """Traces ``command`` (a program and its arguments, and everything it spawns) with
    rostrace's embedded tracer until it ends, as ``rostrace record -- COMMAND`` does, and
    returns the session directory (read it with :func:`read`, :func:`analyze`, :func:`info`).

    ``output``: the session directory (made; an existing one must be empty, unless
    ``append``); else session ``name`` (default ``session-YYYYMMDDHHMMSS``) in ``path``
    (default ``$ROS_TRACE_DIR``, else ``$ROS_HOME/tracing``, else ``~/.ros/tracing``).
    ``events``: the userspace events to record (default ``ros2:*`` and ``ros2_caret:*``);
    ``light``: CARET's light list instead. ``distro``: the tracetools ABI of the traced
    programs (default: their ``$ROS_DISTRO``, else Rolling's). ``select_nodes=``,
    ``ignore_nodes=``, ``select_topics=``, ``ignore_topics=``, ``ignore_processes=``:
    record-time filters (colon-separated regular expressions). ``lib``: the
    ``libtracetools.so`` to preload (default: :func:`find_library`). ``rclpy``: load rostrace's
    rclpy instrumentation into the Python programs of the command, so that their callbacks are
    traced (as the CLI does; ``ROSTRACE_RCLPY=0`` in the environment also turns it off).
    ``rotate``: always-on recording, as ``record --rotate``: chunks of the session directory, a
    new one when the last holds this size (``"100M"``) or lasted this long (``"10min"``), each
    a complete recording; ``keep``: the newest chunks kept (``--keep``).

    Ctrl-C reaches the command (it runs in this process group) and the recording ends with it,
    as with the CLI. A command that fails is warned about; a recording with no event raises
    :class:`RecordError` (the session directory is then removed, unless it existed)."""
    for k in filters:
        if k not in _FILTERS:
            raise TypeError(f"record() got an unexpected keyword argument {k!r}")
    if lib is None:
        lib = find_library()
    if lib is None:
        try:
            _rostrace.find_library()
        except RecordError as e:
            raise RecordError(f"no libtracetools.so to preload: {e}") from None
        raise RecordError("libtracetools.so not found: give lib=, or set ROSTRACE_LIB")
    cmd = [os.fsdecode(c) for c in command]
    expand = lambda p: None if p is None else os.path.expanduser(os.fsdecode(p))  # noqa: E731
    out, recorded, code, messages = _rostrace.record(
        cmd,
        expand(lib),
        expand(output),
        name,
        expand(path),
        _names(events),
        light,
        distro,
        buffer_size,
        dict(filters),
        append,
        rclpy,
        rotate,
        keep,
    )
    for m in messages:
        print(f"rostrace: {m}", file=sys.stderr)
    if not recorded:
        errors = [m[len("error: ") :] for m in messages if m.startswith("error: ")]
        raise RecordError(errors[-1] if errors else "nothing was recorded")
    if code:
        import warnings  # noqa: PLC0415

        warnings.warn(f"rostrace: {cmd[0]} ended with exit code {code}; its trace is in {out}", stacklevel=2)
    return out
