#!/usr/bin/env python3
"""tracetools_analysis's callbacks of a trace, as JSON: each callback's owner and its runs.

    PYTHONPATH=$SRC/tracetools_analysis/tracetools_analysis:$SRC/ros2_tracing/tracetools_read:$SRC/ros2_tracing/tracetools_trace \\
        /usr/bin/python3 tools/tracetools-analysis-callbacks.py TRACE OUT.json

tracetools_analysis (github.com/ros-tracing/tracetools_analysis) and tracetools_read (from
github.com/ros2/ros2_tracing) are run from their sources (neither is on PyPI), with Debian's
python3-babeltrace (babeltrace 1's bindings, which tracetools_read uses) and python3-pandas.

What it does, with tracetools_analysis's public API only, as its `callback_duration` notebook
does: every event read with `babeltrace.TraceCollection().add_traces_recursive(TRACE, 'ctf')`
and converted with `tracetools_read.trace.event_to_dict`, processed by `Ros2Handler`, then for
each callback object of `Ros2DataModelUtil.get_callback_symbols()`: its symbol,
`get_callback_owner_info` (the owner tracetools_analysis names: node, topic or timer period)
and `get_callback_durations` (every run's duration, exact integer ns).
"""
import json
import sys

import babeltrace
from tracetools_analysis.processor import Processor
from tracetools_analysis.processor.ros2 import Ros2Handler
from tracetools_analysis.utils.ros2 import Ros2DataModelUtil
from tracetools_read.trace import event_to_dict


def main(trace, out):
    tc = babeltrace.TraceCollection()
    if tc.add_traces_recursive(trace, "ctf") is None:
        sys.exit(f"{trace}: babeltrace could not open it")
    events = [event_to_dict(e) for e in tc.events]
    handler = Ros2Handler()
    Processor(handler).process(events)
    util = Ros2DataModelUtil(handler.data)
    callbacks = []
    for obj, symbol in util.get_callback_symbols().items():
        durations = util.get_callback_durations(obj)
        ns = [int(d.value) for d in durations["duration"]]
        callbacks.append(dict(
            callback_object=int(obj),
            symbol=symbol,
            owner=util.get_callback_owner_info(obj),
            runs=len(ns),
            durations_ns=ns,
        ))
    callbacks.sort(key=lambda c: (c["owner"] or "", c["symbol"]))
    with open(out, "w") as f:
        json.dump(dict(tracetools_analysis="d2bd9ba", tracetools_read="5c0c36f (8.4.0)", events=len(events),
                       callbacks=callbacks), f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
