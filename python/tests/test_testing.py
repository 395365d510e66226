"""``rostrace.testing``: processes a test starts are recorded and asserted on; each assertion
fails, with the measured value, when its limit is not met."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rostrace.testing import tracing

# A timer node through the C ABI (Jazzy's signatures): registered, then RUNS runs of about 2 ms.
TIMER_NODE = (Path(__file__).parent / "timer_node.py").read_text()


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
