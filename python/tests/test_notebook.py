"""A tracetools_analysis notebook-style script runs unchanged but for its imports, and its
numbers are tracetools_analysis's."""

import csv
import subprocess
import sys

from conftest import SHARED

SCRIPT = __file__.replace("test_notebook.py", "notebook_callback_durations.py")


def test_notebook_script_runs_with_only_its_imports_changed(tmp_path):
    text = open(SCRIPT).read()
    ported = text.replace("from tracetools_analysis.", "from rostrace.tracetools_analysis.")
    # Only the import lines differ.
    changed = [(a, b) for a, b in zip(text.splitlines(), ported.splitlines()) if a != b]
    assert len(changed) == 3 and all(a.startswith("from tracetools_analysis.") for a, _ in changed)
    script = tmp_path / "notebook.py"
    script.write_text(ported)
    png = tmp_path / "durations.png"
    trace = SHARED / "traces/tc-ros2-example2"
    out = subprocess.run([sys.executable, str(script), str(trace), str(png)], capture_output=True, text=True, check=True)
    got = {}
    for line in out.stdout.splitlines():
        obj, count, mean, mx, kind = line.split("\t")
        got[int(obj)] = (int(count), float(mean), float(mx), kind)
    with open(SHARED / "reference/tracetools_analysis/tc-ros2-example2.callbacks.csv", newline="") as f:
        ref = {int(r["callback_address"]): r for r in csv.DictReader(f)}
    # The three application callbacks (the /parameter_events ones are filtered out).
    assert len(got) == 3
    for obj, (count, mean_ms, max_ms, kind) in got.items():
        r = ref[obj]
        assert count == int(r["count"])
        assert abs(mean_ms - float(r["mean_ns"]) / 1e6) < 1e-6
        assert abs(max_ms - int(r["max_ns"]) / 1e6) < 1e-9
    assert sorted(k for *_, k in got.values()) == ["Subscription", "Subscription", "Timer"]
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20000
