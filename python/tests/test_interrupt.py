"""Ctrl-C while Rust works: Python's signal handlers run between batches of events, and the
KeyboardInterrupt ends the call (instead of being seen only once the whole trace is read)."""

import os
import signal
import subprocess
import sys

from conftest import trace_of

# Each script sets Python's own Ctrl-C handler first: a Python started with SIGINT ignored (a
# background job of a shell without job control, as CI may start the tests) installs none.
SCRIPT = r"""
import os, signal, sys, rostrace
signal.signal(signal.SIGINT, signal.default_int_handler)
trace = sys.argv[1]
calls = []
def progress(done, total):
    calls.append((done, total))
    if len(calls) == 1:
        os.kill(os.getpid(), signal.SIGINT)  # as Ctrl-C does, while the work goes on
for name, call in [("read_tables", lambda: rostrace.read_tables(trace, jobs=1, progress=progress)),
                   ("analyze", lambda: rostrace.analyze(trace, jobs=2, progress=progress))]:
    calls.clear()
    try:
        call()
        print(name, "completed", flush=True)
    except KeyboardInterrupt:
        print(name, "interrupted", flush=True)
# The interpreter and the package go on working after it.
a = rostrace.analyze(trace, progress=False)
print("after", len(a.callback_runs), flush=True)
"""


def test_ctrl_c_interrupts_reading_and_analysis(shared):
    trace = trace_of("tum-autoware-carla")
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(trace)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split("\n")
    assert lines[0] == "read_tables interrupted", out.stdout + out.stderr
    assert lines[1] == "analyze interrupted", out.stdout + out.stderr
    assert lines[2].startswith("after ") and int(lines[2].split()[1]) > 0, out.stdout
    assert "internal error" not in out.stderr and "panicked" not in out.stderr, out.stderr


def test_ctrl_c_from_another_process(shared):
    """A real SIGINT from outside, sent once the read is under way (its first progress call)."""
    script = r"""
import os, signal, sys, rostrace
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.stdout.write("ready\n"); sys.stdout.flush()
started = False
def progress(done, total):
    global started
    if not started:
        started = True
        sys.stdout.write("started\n"); sys.stdout.flush()
        sys.stdin.readline()  # the parent has sent SIGINT once this returns
try:
    rostrace.read_tables(sys.argv[1], jobs=1, progress=progress)
    print("completed")
except KeyboardInterrupt:
    print("interrupted")
"""
    p = subprocess.Popen(
        [sys.executable, "-c", script, str(trace_of("tum-autoware-carla"))],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert p.stdout.readline() == "ready\n"
    assert p.stdout.readline() == "started\n"
    os.kill(p.pid, signal.SIGINT)
    p.stdin.write("go\n")
    p.stdin.flush()
    rest, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    assert rest.strip() == "interrupted", rest + err
