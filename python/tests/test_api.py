"""``rostrace.read``, ``read_tables``, ``iter_events``, ``analyze``, errors, and
``python -m rostrace``."""

import json
import os
import shutil
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import rostrace
from conftest import SHARED
from rostrace import _rostrace

PINGPONG = SHARED / "traces/rosworld2021-pingpong"
EXAMPLE = SHARED / "traces/tc-ros2-example2"
AUTOWARE = SHARED / "traces/tum-autoware-carla"


def event_counts(name: str) -> dict:
    out = {}
    for line in (SHARED / "reference/event-counts" / f"{name}.tsv").read_text().splitlines():
        n, event = line.split("\t")
        out[event] = int(n)
    return out


@pytest.mark.parametrize("name", ["tc-ros2-example2", "rosworld2021-pingpong", "caret-demos-e2e-jazzy"])
def test_read_has_every_event_of_the_reference(name):
    df = rostrace.read(SHARED / "traces" / name)
    assert df["_name"].value_counts().to_dict() == event_counts(name)
    assert df["_timestamp"].is_monotonic_increasing
    assert df["_timestamp"].dtype == "int64"
    tables = rostrace.read_tables(SHARED / "traces" / name)
    assert {k: len(v) for k, v in tables.items()} == event_counts(name)


def test_read_tables_keep_field_types_exact():
    t = rostrace.read_tables(EXAMPLE, names=["ros2:callback_start", "ros2:rcl_node_init", "ros2:rmw_publisher_init"])
    assert set(t) == {"ros2:callback_start", "ros2:rcl_node_init", "ros2:rmw_publisher_init"}
    cs = t["ros2:callback_start"]
    assert list(cs.columns[:4]) == ["_trace", "_host", "_timestamp", "cpu_id"]
    assert cs["callback"].dtype == "uint64" and cs["vtid"].dtype == "int64"
    assert set(cs["callback"]) >= {94511453253520, 94463781071896}
    nodes = t["ros2:rcl_node_init"]
    assert sorted(nodes["node_name"]) == ["sink", "source", "sync_one_to_one"]
    gid = json.loads(t["ros2:rmw_publisher_init"]["gid"].iloc[0])
    assert len(gid) == 24 and all(0 <= b < 256 for b in gid)
    # Integers stay exact when some rows have no value (nullable dtypes, not floats).
    df = rostrace.read(EXAMPLE, names=["ros2:callback_start", "ros2:rcl_node_init"])
    assert str(df["callback"].dtype) == "UInt64"
    assert set(df["callback"].dropna()) == set(cs["callback"])


def test_iter_events_streams_dicts_like_tracetools_read():
    it = rostrace.iter_events(PINGPONG)
    events = list(it)
    assert len(events) == sum(event_counts("rosworld2021-pingpong").values())
    assert it.errors == []
    first = events[0]
    assert {"_name", "_timestamp", "cpu_id", "vpid", "vtid", "procname"} <= set(first)
    ts = [e["_timestamp"] for e in events]
    assert ts == sorted(ts)
    df = rostrace.read(PINGPONG)
    assert [e["_name"] for e in events if e["_name"] == "ros2:callback_start"] == list(df.loc[df["_name"] == "ros2:callback_start", "_name"])
    only = list(rostrace.iter_events(PINGPONG, names="ros2:rcl_node_init"))
    assert len(only) == event_counts("rosworld2021-pingpong")["ros2:rcl_node_init"]


def test_analyze_gives_the_tables_and_the_report():
    a = rostrace.analyze(EXAMPLE)
    cb = a.callbacks.set_index("callback")
    # The same callback figures as tracetools_analysis (per address; one process each here).
    import csv

    with open(SHARED / "reference/tracetools_analysis/tc-ros2-example2.callbacks.csv", newline="") as f:
        for r in csv.DictReader(f):
            row = cb.loc[int(r["callback_address"])]
            assert row["runs"] == int(r["count"]) and row["total_ns"] == int(r["sum_ns"])
    runs = a.callback_runs
    assert len(runs) == a.callbacks["runs"].sum() + a.callbacks["unfinished"].sum()
    assert (runs["duration_ns"].dropna() >= 0).all()
    assert len(a.flows) == a.report["flows_matched"] == 3994
    assert set(a.topics["topic"]) >= {"/topic_a", "/topic_b"}
    assert sorted(a.nodes["node"]) == ["/sink", "/source", "/sync_one_to_one"]
    assert len(a.per_node) == 3 and abs(a.per_node["share"].sum() - 1) < 1e-9
    assert len(a.per_thread) == 3 and len(a.per_process) == 3
    assert len(a.longest_paths) == 1 and a.longest_paths["nodes"][0] == ["/source", "/sync_one_to_one", "/sink"]
    assert "executor_phases" in a.tables and isinstance(a.executor_phases, pd.DataFrame)
    report = json.loads(a.to_json())
    assert report["events"] == 99338 and len(report["callbacks"]) == len(a.callbacks)
    assert "recording" not in a.callbacks.columns
    assert isinstance(a.arrow["callbacks"], pa.Table)
    with pytest.raises(AttributeError):
        a.no_such_table  # noqa: B018


def test_a_missing_trace_is_a_clear_error(tmp_path):
    with pytest.raises(rostrace.TraceError, match="no-such-trace"):
        rostrace.read(tmp_path / "no-such-trace")
    with pytest.raises(rostrace.TraceError):
        rostrace.analyze(tmp_path / "no-such-trace")
    with pytest.raises(rostrace.TraceError):
        rostrace.iter_events([])
    assert issubclass(rostrace.TraceError, ValueError)


def test_a_damaged_trace_warns_and_keeps_what_could_be_read():
    damaged = SHARED / "ctf-edge/babeltrace/ctf-traces/fail/valid-events-then-invalid-events"
    with pytest.warns(UserWarning, match=r"read error(?s:.*)dummystream: cannot decode at byte 2"):
        df = rostrace.read(damaged)
    assert len(df) == 2
    it = rostrace.iter_events(damaged)
    assert len(list(it)) == 2 and len(it.errors) == 1 and "at byte 2" in it.errors[0]


def test_a_truncated_copy_reads_up_to_the_damage(tmp_path):
    trace = tmp_path / "t"
    shutil.copytree(EXAMPLE, trace)
    streams = sorted(p for p in trace.rglob("*") if p.is_file() and p.name not in ("metadata",) and "index" not in p.parts)
    victim = max(streams, key=lambda p: p.stat().st_size)
    data = victim.read_bytes()
    victim.write_bytes(data[: len(data) // 2 + 7])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        df = rostrace.read(trace)
    assert 0 < len(df) < 99338
    assert any(str(victim.name) in str(x.message) for x in w)
    a = rostrace.analyze(trace)
    assert a.errors and len(a.callback_runs) > 0


def test_progress_is_reported_and_the_gil_is_released():
    seen = []
    ticks = []
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    t = threading.Thread(target=spin)
    t.start()
    try:
        a = rostrace.analyze(AUTOWARE, progress=lambda d, total: seen.append((d, total)))
    finally:
        stop.set()
        t.join()
    assert a.report["events"] == 683756
    assert seen and seen[-1][0] == seen[-1][1] > 0
    # The Python thread ran while Rust analyzed (it would not, holding the GIL).
    assert len(ticks) > 20


def test_python_m_rostrace_process_and_convert(tmp_path):
    out = subprocess.run([sys.executable, "-m", "rostrace", "process", str(PINGPONG)], capture_output=True, text=True, check=True)
    assert "====================ROS 2 DATA MODEL===================" in out.stdout
    assert "Callback instances:" in out.stdout and f"processed {864} events in" in out.stdout
    quiet = subprocess.run([sys.executable, "-m", "rostrace", "process", "-s", str(PINGPONG)], capture_output=True, text=True, check=True)
    assert quiet.stdout.startswith("processed 864 events in")
    trace = tmp_path / "pp"
    shutil.copytree(PINGPONG, trace)
    conv = subprocess.run([sys.executable, "-m", "rostrace", "convert", str(trace)], capture_output=True, text=True, check=True)
    assert "converted 864 events in" in conv.stdout and (trace / "converted").is_file()
    again = subprocess.run([sys.executable, "-m", "rostrace", "process", "-s", str(trace / "converted")], capture_output=True, text=True, check=True)
    assert again.stdout.startswith("processed 864 events in")
    js = subprocess.run([sys.executable, "-m", "rostrace", "analyze", str(PINGPONG)], capture_output=True, text=True, check=True)
    assert json.loads(js.stdout)["events"] == 864
    bad = subprocess.run([sys.executable, "-m", "rostrace", "analyze", str(tmp_path / "nope")], capture_output=True, text=True)
    assert bad.returncode == 1 and "nope" in bad.stderr and "Traceback" not in bad.stderr


def test_the_native_module_is_abi3():
    so = Path(_rostrace.__file__).name
    assert ".abi3." in so


def rostrace_cli(*args) -> dict:
    """`rostrace ... --json -` of the build under test (ROSTRACE_BIN, set by pytest.rs)."""
    exe = os.environ.get("ROSTRACE_BIN")
    if not exe or not Path(exe).exists():
        if os.environ.get("ROSTRACE_REQUIRE_TOOLS") == "1":
            pytest.fail("ROSTRACE_BIN (the rostrace binary) is required")
        pytest.skip("ROSTRACE_BIN not set")
    out = subprocess.run([exe, *map(str, args), "--json", "-"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_paths_and_e2e_equal_the_cli():
    trace = SHARED / "traces/caret-demos-e2e-jazzy"
    a = rostrace.analyze(trace)
    longest = a.longest_paths
    assert len(longest) == 6
    nodes = longest["nodes"][0]
    # e2e: the same summary as `rostrace e2e --json`, every record included.
    e = a.e2e(nodes)
    cli = rostrace_cli("e2e", trace, "--path", ",".join(nodes))
    assert e.summary == cli
    assert e.complete == longest["complete"][0] and e.latency["mean"] == longest["latency_mean_ns"][0]
    assert len(e.records) == longest["records"][0] and list(e.records.columns) == cli["columns"]
    assert len(e.instances) == e.complete and (e.instances["latency_ns"] == e.instances["end_ns"] - e.instances["start_ns"]).all()
    seg = [c for c in e.instances.columns if c not in ("start_ns", "end_ns", "latency_ns")]
    assert (e.instances[seg].sum(axis=1) == e.instances["latency_ns"]).all()
    assert list(e.response_time["case"]) == ["all", "best", "worst", "worst-with-external-latency"]
    # paths: the same ranking as `rostrace paths --json`.
    p = a.paths(nodes[0], nodes[-1])
    cli = rostrace_cli("paths", trace, "--from", nodes[0], "--to", nodes[-1])
    assert list(p["path"]) == [x["label"] for x in cli["paths"]]
    assert list(p["latency_mean_ns"]) == [x["latency"]["mean"] for x in cli["paths"]]
    assert "executors:" in a.architecture() and nodes[0] in a.architecture()
    with pytest.raises(ValueError, match="no such node or topic"):
        a.e2e("/nope,/other")
    with pytest.raises(ValueError):
        a.paths(nodes[0], nodes[-1], max_depth=1)
