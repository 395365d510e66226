"""``rostrace.testing``: processes a test starts are recorded and asserted on; each assertion
fails, with the measured value, when its limit is not met."""

import os
import subprocess
import sys

import pytest

from rostrace.testing import tracing

# A timer node through the C ABI (Jazzy's signatures): registered, then RUNS runs of about 2 ms.
TIMER_NODE = r"""
import ctypes, sys, time
lib = ctypes.CDLL(None)
vp, s, i64 = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int64
def fn(name, *args):
    f = getattr(lib, "ros_trace_" + name); f.argtypes = list(args); f.restype = None; return f
node, timer, cb = vp(0x1000), vp(0x2000), vp(0x3000)
fn("rcl_init", vp)(vp(0x10))
fn("rcl_node_init", vp, vp, s, s)(node, vp(0x1001), b"ticker", b"/")
fn("rcl_timer_init", vp, i64)(timer, 100_000_000)
fn("rclcpp_timer_callback_added", vp, vp)(timer, cb)
fn("rclcpp_timer_link_node", vp, vp)(timer, node)
fn("rclcpp_callback_register", vp, s)(cb, b"Ticker::on_tick")
start, end = fn("callback_start", vp, ctypes.c_bool), fn("callback_end", vp)
for _ in range(int(sys.argv[1])):
    start(cb, False); time.sleep(0.002); end(cb)
"""


def library() -> str:
    exe = os.environ.get("ROSTRACE_BIN")
    if not exe:
        if os.environ.get("ROSTRACE_REQUIRE_TOOLS") == "1":
            pytest.fail("ROSTRACE_BIN (the rostrace binary) is required")
        pytest.skip("ROSTRACE_BIN not set")
    return subprocess.run([exe, "lib"], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="module")
def ticked(tmp_path_factory):
    with tracing(tmp_path_factory.mktemp("t") / "trace", distro="jazzy", lib=library()) as t:
        assert t.popen([sys.executable, "-c", TIMER_NODE, "20"]).wait() == 0
    return t


def test_a_traced_process_is_analyzed(ticked):
    (cb,) = ticked.assert_callback("/ticker", kind="timer", runs_at_least=20, p50_below="50ms", max_below=1.0)
    assert cb["symbol"] == "Ticker::on_tick" and cb["timer_period_ns"] == 100_000_000
    assert cb["duration_ns"]["count"] == 20
    ticked.assert_no_drops()


def test_each_assertion_fails_with_the_measured_value(ticked):
    with pytest.raises(AssertionError, match=r"ran 20 times, fewer than 21"):
        ticked.assert_callback("/ticker", runs_at_least=21)
    with pytest.raises(AssertionError, match=r"p99 [0-9.]+ ms, not below 0.001 ms"):
        ticked.assert_callback("/ticker", p99_below="1us")
    with pytest.raises(AssertionError, match=r"no callback of /other in the trace"):
        ticked.assert_callback("/other")
    with pytest.raises(AssertionError, match=r"no topic /cmd in the trace"):
        ticked.assert_topic("/cmd")
    with pytest.raises(ValueError, match="not a duration"):
        ticked.assert_callback("/ticker", p99_below="fast")


def test_the_tracing_environment_leaves_out_rclpy_when_asked(tmp_path):
    on = tracing(tmp_path / "on", distro="jazzy", lib=library())
    off = tracing(tmp_path / "off", distro="jazzy", lib=library(), rclpy=False)
    assert "sitecustomize.py" in os.listdir(on.env["PYTHONPATH"].split(":")[0])
    assert off.env.get("PYTHONPATH") == os.environ.get("PYTHONPATH")
    assert on.env["ROSTRACE_SESSION_DIR"] == str(tmp_path / "on")
