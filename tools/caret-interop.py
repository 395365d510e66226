#!/usr/bin/env python3
"""caret_analyze (TIER IV's CARET analyzer, v0.7.3) on a rostrace recording, as JSON.

    /var/tmp/caret-peer/venv/bin/python tools/caret-interop.py \
        crates/cli/tests/data/caret-interop/trace crates/cli/tests/data/caret-interop/caret_analyze.json

The venv (caret_analyze v0.7.3 and caret_analyze_cpp_impl v0.7.3 from GitHub, babeltrace2's
Python bindings from Debian's python3-bt2) is made by the recipe beside caret_analyze's reference
results: `BASE=/var/tmp/caret-peer CLONE=1 bash ../shared/reference/caret/caret_analyze/recipe/setup.sh`
(`MIRROR_ROOT=DIR` instead of `CLONE=1` takes the sources from bare clones in
DIR/tier4+caret_analyze/repo and DIR/tier4+caret_analyze_cpp_impl/repo). caret_analyze cannot be installed in CI (its sources are on
GitHub only), so its output is stored beside the recording, and crates/cli/tests/caret_interop.rs
compares `rostrace analyze --json` with it.

What it does, all with caret_analyze's public API: `Lttng(trace)` with its validation on (the
default), `Architecture('lttng', trace)` (nodes, callbacks, communications built from the trace),
`Application(arch, lttng)`, then for every callback `callback.to_records()` and every
communication `communication.to_records()`, and the latency of each record (its first column to its
last: callback_start -> callback_end; rclcpp_publish -> the subscription's callback_start), as
caret_analyze's `record.Latency` computes it. Every latency is written, as exact integer ns, with
count, min, max, sum, mean and numpy's linear percentiles.

caret_analyze writes a cache (`caret_converted`) into the trace directory, so it reads a private
copy of the trace.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import sys
import tempfile
import warnings


def pct(s: list[int], q: float) -> float:
    """numpy.percentile(..., method='linear') of sorted ints."""
    pos = (len(s) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def stats(vals: list[int]) -> dict:
    s = sorted(int(v) for v in vals)
    if not s:
        return dict(count=0)
    return dict(count=len(s), min=s[0], max=s[-1], sum=sum(s), mean=sum(s) / len(s),
                p50=pct(s, 50), p90=pct(s, 90), p99=pct(s, 99))


def latencies(records) -> tuple[list[str], list[int]]:
    """caret_analyze.record.Latency of records: first column -> last column, rows having both."""
    from caret_analyze.record import Latency
    columns = list(records.columns)
    if len(columns) < 2:
        return columns, []
    df = Latency(records).to_records().to_dataframe()
    return columns, [int(v) for v in df['latency']]


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    trace, out = sys.argv[1], os.path.abspath(sys.argv[2])
    trace_abs = os.path.abspath(trace)
    warnings.simplefilter('ignore')
    tmp = tempfile.mkdtemp(prefix='caret-interop-')
    cwd = os.getcwd()
    os.chdir(tmp)   # caret_analyze writes caret.log into the working directory
    from caret_analyze import Application, Architecture, Lttng
    try:
        copy = os.path.join(tmp, 'trace')
        shutil.copytree(trace_abs, copy)
        lttng = Lttng(copy, force_conversion=True)          # validation on
        arch = Architecture('lttng', copy)
        app = Application(arch, lttng)

        count = lttng.get_count(['trace_point'])
        events = {str(k): int(r['size']) for k, r in count.iterrows() if int(r['size']) > 0}
        res: dict = dict(
            caret_analyze='v0.7.3 (caret_analyze e12df8cc, caret_analyze_cpp_impl c7262421)',
            trace=os.path.normpath(trace),
            validation='on',
            distribution=lttng._info.get_distribution(),
            rmw_implementation=lttng.get_rmw_impl(),
            caret_event_counts=dict(sorted(events.items())),
            nodes=sorted(arch.node_names),
            topics=sorted(arch.topic_names),
            communications=[],
            callbacks=[],
        )
        for c in app.communications:
            columns, lat = latencies(c.to_records())
            res['communications'].append(dict(
                topic=c.topic_name, publisher_node=c.publish_node_name,
                subscription_node=c.subscribe_node_name,
                intra_process=bool(c.is_intra_proc_comm), columns=columns,
                latency_ns=stats(lat), latencies_ns=lat))
        for cb in app.callbacks:
            columns, lat = latencies(cb.to_records())
            kind = cb.callback_type.type_name
            d = dict(name=cb.callback_name, node=cb.node_name, type=kind, symbol=cb.symbol,
                     columns=columns, latency_ns=stats(lat), latencies_ns=lat)
            if kind == 'timer_callback':
                d['period_ns'] = int(cb.period_ns)
            elif kind == 'subscription_callback':
                d['topic'] = cb.subscribe_topic_name
            res['callbacks'].append(d)
        res['communications'].sort(key=lambda d: (d['topic'], d['publisher_node'], d['subscription_node']))
        res['callbacks'].sort(key=lambda d: (d['node'], d['symbol']))
    finally:
        os.chdir(cwd)
        shutil.rmtree(tmp, ignore_errors=True)
    with open(out, 'w') as f:
        json.dump(res, f, indent=1)
        f.write('\n')
    for c in res['communications']:
        print(f"comm {c['topic']} {c['publisher_node']} -> {c['subscription_node']}: {c['latency_ns']}")
    for c in res['callbacks']:
        print(f"callback {c['node']} {c['type']} {c['symbol']}: {c['latency_ns']}")
    return 0


if __name__ == '__main__':
    sys.exit(main())
