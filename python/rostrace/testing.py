"""Tracing in tests: the processes a test starts are recorded by rostrace's embedded tracer (no
daemon), and the test asserts on their analysis, as ros2_tracing's ``TraceTestCase`` does.

    import subprocess
    from rostrace.testing import tracing

    def test_the_controller_keeps_up(tmp_path):
        with tracing(tmp_path / "trace", distro="jazzy") as t:
            p = t.popen(["ros2", "run", "my_pkg", "controller"])
            ...                                   # drive the system
            p.terminate(); p.wait()
        t.assert_no_drops()
        t.assert_callback(node="/controller", kind="timer", runs_at_least=100, p99_below="2ms")
        t.assert_topic("/cmd_vel", latency_p99_below="5ms")

Durations are seconds (numbers) or strings with a unit: ``"250us"``, ``"2ms"``, ``"1.5s"``.
With pytest, ``rostrace_tracing`` is a fixture of the same (import it into a conftest.py).
"""

import os
import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import List, Optional, Sequence, Union

from . import RecordError, _rostrace, analyze, find_library, info

Duration = Union[int, float, str]

_UNITS = {"ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}


def _ns(d: Duration) -> float:
    """A duration in ns: a number of seconds, or a string with a unit."""
    if isinstance(d, (int, float)):
        return float(d) * 1e9
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*(ns|us|µs|ms|s)\s*", d)
    if not m:
        raise ValueError(f"not a duration: {d!r} (a number of seconds, or e.g. '250us', '2ms', '1.5s')")
    return float(m.group(1)) * _UNITS[m.group(2)]


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.3f} ms"


class Tracing:
    """A recording in progress (``env``, ``popen``) and, after the ``with`` block, its analysis
    (``analysis``, ``report``) and the assertions on it."""

    def __init__(self, session: Path, env: dict):
        self.session = session
        self.env = env
        self.processes: List[subprocess.Popen] = []
        self.analysis = None
        self.report: Optional[dict] = None
        self.summary: Optional[dict] = None

    def popen(self, command: Sequence[str], **kwargs) -> subprocess.Popen:
        """Starts ``command`` traced (``subprocess.Popen`` with the tracing environment); a
        process still running at the end of the block is interrupted, then waited for."""
        env = dict(self.env)
        env.update(kwargs.pop("env", None) or {})
        p = subprocess.Popen(list(command), env=env, **kwargs)
        self.processes.append(p)
        return p

    def _end_processes(self, grace: float) -> None:
        """Ends the processes still running: SIGINT, then SIGKILL after ``grace`` seconds."""
        for p in self.processes:
            if p.poll() is None:
                if grace > 0:
                    p.send_signal(signal.SIGINT)
                    try:
                        p.wait(timeout=grace)
                        continue
                    except subprocess.TimeoutExpired:
                        pass
                p.kill()
                p.wait()

    def _finish(self) -> None:
        self._end_processes(10)
        self.summary = info(self.session)
        self.analysis = analyze(self.session)
        self.report = self.analysis.report

    def _analyzed(self) -> dict:
        if self.report is None:
            raise RuntimeError("assertions are made after the `with tracing(...)` block, on its analysis")
        return self.report

    def callbacks(self, node: Optional[str] = None, *, kind=None, topic=None, symbol=None) -> List[dict]:
        """The report's callbacks of ``node`` (all when None), of that ``kind`` (``subscription``,
        ``timer``, ``service``, ``client``), ``topic``, and whose symbol contains ``symbol``."""
        return [
            c
            for c in self._analyzed()["callbacks"]
            if (node is None or c["node"] == node)
            and (kind is None or c["kind"] == kind)
            and (topic is None or c["topic"] == topic)
            and (symbol is None or symbol in (c["symbol"] or ""))
        ]

    def assert_callback(
        self,
        node: str,
        *,
        kind: Optional[str] = None,
        topic: Optional[str] = None,
        symbol: Optional[str] = None,
        runs_at_least: int = 1,
        p50_below: Optional[Duration] = None,
        p99_below: Optional[Duration] = None,
        max_below: Optional[Duration] = None,
    ) -> List[dict]:
        """Each callback of ``node`` matching ``kind``/``topic``/``symbol`` (at least one) ran
        ``runs_at_least`` times, with its run durations' p50, p99 and max below the limits."""
        found = self.callbacks(node, kind=kind, topic=topic, symbol=symbol)
        what = f"callback of {node}" + "".join(f" {k}={v!r}" for k, v in [("kind", kind), ("topic", topic), ("symbol", symbol)] if v)
        if not found:
            nodes = sorted({c["node"] for c in self._analyzed()["callbacks"]})
            raise AssertionError(f"no {what} in the trace {self.session} (nodes with callbacks: {nodes})")
        for c in found:
            d = c["duration_ns"]
            assert d["count"] >= runs_at_least, f"{what} ({c['symbol']}) ran {d['count']} times, fewer than {runs_at_least}"
            for key, limit in (("p50", p50_below), ("p99", p99_below), ("max", max_below)):
                if limit is not None:
                    v = d[key]
                    assert v < _ns(limit), f"{what} ({c['symbol']}): {key} {_ms(v)}, not below {_ms(_ns(limit))}"
        return found

    def assert_topic(
        self,
        name: str,
        *,
        messages_at_least: int = 1,
        latency_p99_below: Optional[Duration] = None,
        latency_max_below: Optional[Duration] = None,
        dropped_at_most: Optional[int] = None,
        unmatched_at_most: Optional[int] = None,
    ) -> dict:
        """Topic ``name`` carried ``messages_at_least`` messages taken by a callback, with the
        latency from publication to the callback's start below the limits."""
        topics = {t["name"]: t for t in self._analyzed()["topics"]}
        if name not in topics:
            raise AssertionError(f"no topic {name} in the trace {self.session} (topics: {sorted(topics)})")
        t = topics[name]
        lat = t["pub_to_callback_ns"]
        assert t["matched"] >= messages_at_least, f"{name}: {t['matched']} messages matched, fewer than {messages_at_least}"
        for key, limit in (("p99", latency_p99_below), ("max", latency_max_below)):
            if limit is not None:
                assert lat[key] < _ns(limit), f"{name}: latency {key} {_ms(lat[key])}, not below {_ms(_ns(limit))}"
        for key, limit in (("dropped", dropped_at_most), ("unmatched", unmatched_at_most)):
            if limit is not None:
                assert t[key] <= limit, f"{name}: {t[key]} {key}, more than {limit}"
        return t

    def assert_path(self, *nodes: str, complete_at_least: int = 1, p99_below: Optional[Duration] = None):
        """The end-to-end path through ``nodes`` (in order, as ``rostrace e2e --path``) had
        ``complete_at_least`` messages go the whole way, with latency p99 below the limit."""
        e = self.analysis.e2e(list(nodes))
        lat = e.latency
        assert lat["count"] >= complete_at_least, (
            f"path {' -> '.join(nodes)}: {lat['count']} messages went the whole way, fewer than {complete_at_least}"
        )
        if p99_below is not None:
            assert lat["p99"] < _ns(p99_below), f"path {' -> '.join(nodes)}: p99 {_ms(lat['p99'])}, not below {_ms(_ns(p99_below))}"
        return e

    def assert_no_drops(self) -> None:
        """No event was discarded by the tracer and no packet lost."""
        s = self.summary
        assert s is not None, "assertions are made after the `with tracing(...)` block"
        assert (s["discarded_events"], s["lost_packets"]) == (0, 0), (
            f"{s['discarded_events']} events discarded, {s['lost_packets']} packets lost in {self.session}"
        )


class tracing:
    """``with tracing(output, distro=..., rclpy=True, lib=None, keep=True) as t``: a session
    directory (``output``, made; else a temporary one, removed afterwards unless ``keep``) whose
    tracing environment is ``t.env``; processes started with ``t.popen`` (or with ``env=t.env``)
    are recorded. After the block, ``t`` holds the analysis and the assertions."""

    def __init__(self, output=None, *, distro: Optional[str] = None, rclpy: bool = True, lib=None, keep: bool = True):
        self._temp = output is None
        self._keep = keep
        self.session = Path(output) if output is not None else Path(tempfile.mkdtemp(prefix="rostrace-test-"))
        lib = lib if lib is not None else find_library()
        if lib is None:
            raise RecordError("libtracetools.so not found: give lib=, set ROSTRACE_LIB, or put rostrace on PATH")
        env = dict(os.environ)
        for k, v in _rostrace.traced_environment(str(self.session), os.fsdecode(lib), distro, rclpy):
            env[k] = os.fsdecode(v)
        #: The environment of the traced processes (this process's, and the tracer's variables).
        self.env = env
        self._t = Tracing(self.session, env)

    def __enter__(self) -> Tracing:
        return self._t

    def __exit__(self, kind, value, tb) -> None:
        try:
            if kind is None:
                self._t._finish()
            else:
                self._t._end_processes(0)
        finally:
            if self._temp and not self._keep:
                shutil.rmtree(self.session, ignore_errors=True)


try:
    import pytest

    @pytest.fixture
    def rostrace_tracing(tmp_path):
        """A :class:`tracing` into ``tmp_path / "trace"``; the test starts its processes with
        ``t.popen`` inside ``with rostrace_tracing:`` ... (see :class:`tracing`)."""
        return tracing(tmp_path / "trace")

except ImportError:  # pytest is needed only for the fixture
    pass
