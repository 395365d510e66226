"""A notebook-style analysis written against tracetools_analysis's API (as its
callback_duration notebook): callback durations per symbol, plotted with matplotlib to a PNG,
and a table printed. The test runs it with its imports changed to rostrace.tracetools_analysis
and nothing else.

usage: notebook_callback_durations.py TRACE OUT.png
"""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from tracetools_analysis.loading import load_file  # noqa: E402
from tracetools_analysis.processor.ros2 import Ros2Handler  # noqa: E402
from tracetools_analysis.utils.ros2 import Ros2DataModelUtil  # noqa: E402

path, out = sys.argv[1], sys.argv[2]

events = load_file(path)
handler = Ros2Handler.process(events)
data_util = Ros2DataModelUtil(handler.data)
callback_symbols = data_util.get_callback_symbols()

rows = []
fig, (ax_time, ax_hist) = plt.subplots(1, 2, figsize=(12, 5))
for obj, symbol in callback_symbols.items():
    owner_info = data_util.get_callback_owner_info(obj)
    if owner_info is None:
        owner_info = "[unknown]"
    # Filter out internal subscriptions
    if "/parameter_events" in owner_info:
        continue
    duration_df = data_util.get_callback_durations(obj)
    ms = duration_df["duration"] * 1000 / np.timedelta64(1, "s")
    ax_time.plot(duration_df["timestamp"], ms, label=symbol[:40])
    ax_hist.hist(ms, bins=20, alpha=0.5)
    rows.append((obj, len(duration_df), ms.mean(), ms.max(), owner_info.split("\n")[0]))
ax_time.set_xlabel("start")
ax_time.set_ylabel("duration (ms)")
ax_time.legend(fontsize=7)
ax_hist.set_xlabel("duration (ms)")
ax_hist.set_ylabel("frequency")
fig.savefig(out)

for obj, count, mean, mx, kind in sorted(rows):
    print(f"{obj}\t{count}\t{mean:.6f}\t{mx:.6f}\t{kind}")
