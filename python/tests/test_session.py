"""``rostrace.info`` (against ``rostrace info --json``) and ``rostrace.record``: a small Python
process traced, then summed up."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import rostrace
from conftest import SHARED

PINGPONG = SHARED / "traces/rosworld2021-pingpong"

# A process that emits one ROS 2 event: rcl_init, through the preloaded libtracetools.so.
EMITS_RCL_INIT = "import ctypes; ctypes.CDLL(None).ros_trace_rcl_init(ctypes.c_void_p(0x1234))"


def rostrace_bin() -> str:
    """The rostrace binary of the build under test (ROSTRACE_BIN, set by pytest.rs)."""
    exe = os.environ.get("ROSTRACE_BIN")
    if not exe or not Path(exe).exists():
        if os.environ.get("ROSTRACE_REQUIRE_TOOLS") == "1":
            pytest.fail("ROSTRACE_BIN (the rostrace binary) is required")
        pytest.skip("ROSTRACE_BIN not set")
    return exe


def library() -> str:
    """The libtracetools.so of the build under test."""
    out = subprocess.run([rostrace_bin(), "lib"], capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.mark.parametrize("name", ["rosworld2021-pingpong", "caret-demos-e2e-jazzy"])
def test_info_equals_the_cli(name):
    trace = SHARED / "traces" / name
    cli = subprocess.run([rostrace_bin(), "info", "--json", trace], capture_output=True, text=True, check=True)
    assert rostrace.info(trace) == json.loads(cli.stdout)


def test_info_of_a_shared_trace():
    i = rostrace.info(PINGPONG)
    assert i["event_count"] == sum(n for _, n in i["events_per_name"]) > 0
    assert i["begin_ns"] + i["duration_ns"] == i["end_ns"]
    assert i["processes"] and all(p["events"] > 0 for p in i["processes"])
    assert i["errors"] == []
    with pytest.raises(rostrace.TraceError):
        rostrace.info("/nonexistent/trace")


def test_record_a_python_process_then_its_info(tmp_path):
    out = rostrace.record(
        [sys.executable, "-c", EMITS_RCL_INIT], output=tmp_path / "session", distro="jazzy", lib=library()
    )
    assert Path(out) == tmp_path / "session"
    i = rostrace.info(out)
    names = dict((n, c) for n, c in i["events_per_name"])
    assert names["ros2:rcl_init"] == 1
    assert [p["procname"][:6] for p in i["processes"]] == ["python"]
    assert i["tracetools_versions"] and i["ros_distros"]
    # The session is stopped: the control file says so.
    assert (Path(out) / ".rostrace-control").read_text().split() == ["stopped"]


# Initializes, then runs a callback every 10 ms for 3.2 s.
RUNS_A_CALLBACK = (
    "import ctypes, time; lib = ctypes.CDLL(None); lib.ros_trace_rcl_init(ctypes.c_void_p(0x1234))\n"
    "end = time.monotonic() + 3.2\n"
    "while time.monotonic() < end:\n"
    "    lib.ros_trace_callback_start(ctypes.c_void_p(0x99), ctypes.c_bool(False)); time.sleep(0.01)\n"
)


def test_record_rotates_into_chunks_that_each_are_a_recording(tmp_path):
    out = rostrace.record(
        [sys.executable, "-c", RUNS_A_CALLBACK], output=tmp_path / "s", distro="jazzy", lib=library(), rotate="1s"
    )
    chunks = sorted(Path(out).glob("chunk-*"))
    assert 3 <= len(chunks) <= 5, chunks
    starts = 0
    for c in chunks:
        names = dict(rostrace.info(c)["events_per_name"])
        assert names["ros2:rcl_init"] == 1, (c, names)
        starts += names.get("ros2:callback_start", 0)
    assert starts > 250
    kept = rostrace.record(
        [sys.executable, "-c", RUNS_A_CALLBACK], output=tmp_path / "k", lib=library(), rotate="1s", keep=1
    )
    assert len(list(Path(kept).glob("chunk-*"))) == 1
    with pytest.raises(ValueError, match="10min"):
        rostrace.record(["true"], output=tmp_path / "bad", lib=library(), rotate="10m")


def test_record_a_failing_command_warns_and_keeps_the_trace(tmp_path):
    code = EMITS_RCL_INIT + "; raise SystemExit(3)"
    with pytest.warns(UserWarning, match="exit code 3"):
        out = rostrace.record([sys.executable, "-c", code], name="failing", path=tmp_path, lib=library())
    assert Path(out) == tmp_path / "failing"
    assert rostrace.info(out)["event_count"] >= 1


def test_record_of_nothing_raises_and_leaves_nothing(tmp_path):
    with pytest.raises(rostrace.RecordError, match="nothing was recorded"):
        rostrace.record([sys.executable, "-c", "pass"], output=tmp_path / "empty", lib=library())
    assert not (tmp_path / "empty").exists()
    with pytest.raises(rostrace.RecordError, match="invalid filter"):
        rostrace.record(["true"], output=tmp_path / "bad", lib=library(), select_nodes="(")
    with pytest.raises(TypeError):
        rostrace.record(["true"], lib=library(), select_node="x")


@pytest.mark.parametrize("rclpy", [True, False])
def test_record_loads_the_rclpy_instrumentation_unless_told_not_to(tmp_path, rclpy):
    # The traced Python says, by its exit code, whether rostrace's sitecustomize was imported.
    code = EMITS_RCL_INIT + "; import sys; raise SystemExit(0 if '_rostrace_rclpy' in sys.modules else 5)"
    if rclpy:
        rostrace.record([sys.executable, "-c", code], output=tmp_path / "s", lib=library())
    else:
        with pytest.warns(UserWarning, match="exit code 5"):
            rostrace.record([sys.executable, "-c", code], output=tmp_path / "s", lib=library(), rclpy=False)


def test_record_needs_no_rostrace_command(tmp_path, monkeypatch):
    # The wheel carries libtracetools.so: with no rostrace on PATH and no ROSTRACE_LIB, the
    # copy it writes into a cache directory of its own is preloaded.
    monkeypatch.delenv("ROSTRACE_LIB", raising=False)
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + ":/usr/bin:/bin")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    lib = rostrace.find_library()
    assert lib is not None and Path(lib).is_relative_to(tmp_path / "cache"), lib
    out = rostrace.record([sys.executable, "-c", EMITS_RCL_INIT], output=tmp_path / "session", distro="jazzy")
    names = dict((n, c) for n, c in rostrace.info(out)["events_per_name"])
    assert names["ros2:rcl_init"] == 1
