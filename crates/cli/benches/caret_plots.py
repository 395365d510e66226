#!/usr/bin/env python3
"""The peer of `rostrace report` for the report benchmark: what a CARET user runs to see a
trace, with caret_analyze and its bokeh plots, each saved as a self-contained HTML file.

Usage: python caret_plots.py TRACE ARCHITECTURE_YAML PATH_NAME OUTDIR

Plots (caret_analyze's `Plot` facade): callback scheduling of every callback group whose
callbacks ran, callback latency over time and its histogram for every callback that ran, and for
the named path: message flow, response time over time, response time histogram, per-message
stacked bar. The last line printed is JSON (caret_analyze prints on stdout too): the number of
plots, their total size in bytes and this process's peak RSS in MB.
"""
import json
import os
import resource
import shutil
import sys
import tempfile

trace, yaml, path_name, outdir = sys.argv[1:5]

from bokeh.io import save  # noqa: E402
from bokeh.resources import INLINE  # noqa: E402
from caret_analyze import Application, Architecture, Lttng  # noqa: E402
from caret_analyze.plot import Plot  # noqa: E402

# caret_analyze writes a cache file into the trace's directory: it gets a copy.
work = tempfile.mkdtemp(prefix="caret-plots-")
copy = os.path.join(work, os.path.basename(os.path.normpath(trace)))
shutil.copytree(trace, copy)

lttng = Lttng(copy, force_conversion=True)
arch = Architecture("yaml", yaml)
app = Application(arch, lttng)
path = app.get_path(path_name)
# Callbacks the trace saw run (caret_analyze's histogram fails on one without records).
callbacks = [c for c in app.callbacks if c.to_records().columns]
ran = {c.callback_name for c in callbacks}
groups = [g for n in app.nodes for g in (n.callback_groups or []) if g.callbacks and all(c.callback_name in ran for c in g.callbacks)]

plots = {
    "callback_scheduling": Plot.create_callback_scheduling_plot(groups),
    "callback_latency": Plot.create_latency_timeseries_plot(*callbacks),
    "callback_latency_histogram": Plot.create_latency_histogram_plot(*callbacks),
    "message_flow": Plot.create_message_flow_plot(path),
    "response_time": Plot.create_response_time_timeseries_plot(path),
    "response_time_histogram": Plot.create_response_time_histogram_plot(path),
    "stacked_bar": Plot.create_response_time_stacked_bar_plot(path),
}
os.makedirs(outdir, exist_ok=True)
size = 0
for name, plot in plots.items():
    f = os.path.join(outdir, name + ".html")
    # INLINE: the file opens offline, as rostrace's report does (CARET's own save() links
    # bokeh from a CDN).
    save(plot.figure(), f, title=name, resources=INLINE)
    size += os.path.getsize(f)
shutil.rmtree(work, ignore_errors=True)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"plots": len(plots), "bytes": size, "peak_mb": peak}))
