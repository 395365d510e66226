#!/usr/bin/env python3
"""caret_analyze (TIER IV's CARET analyzer, v0.7.3) on a rostrace recording, as JSON.

    /var/tmp/caret-peer/venv/bin/python tools/caret-interop.py \
        crates/cli/tests/data/caret-interop/trace crates/cli/tests/data/caret-interop/caret_analyze.json

    # the C++ (rclcpp) system of crates/cli/tests/rclcpp/: also its executors and a path
    /var/tmp/caret-peer/venv/bin/python tools/caret-interop.py \
        crates/cli/tests/data/caret-interop-rclcpp/trace crates/cli/tests/data/caret-interop-rclcpp/caret_analyze.json \
        --executors \
        --publisher-callback /cpp/fusion,/cpp/pose,/cpp/fusion/callback_1 \
        --message-context /cpp/fusion,/cpp/points,/cpp/pose,callback_chain \
        --message-context /cpp/fusion,/cpp/imu,/cpp/pose,use_latest_message \
        --message-context /cpp/planner,/cpp/pose,/cpp/cmd,use_latest_message \
        --path /cpp/lidar,/cpp/points,/cpp/fusion,/cpp/pose,/cpp/planner,/cpp/cmd,/cpp/actuator

    # the rclpy system of crates/cli/tests/rclpy/callbacks.py: its callback groups and executors
    /var/tmp/caret-peer/venv/bin/python tools/caret-interop.py \
        crates/cli/tests/data/rclpy-interop/trace crates/cli/tests/data/rclpy-interop/caret_analyze.json --executors

    # the demo's declared message links: the paths from `rostrace architecture -o`'s file
    D=crates/cli/tests/data/caret-interop-links
    rostrace demo --duration 2 -o /tmp/links && cp -r /tmp/links/ust $D/trace
    rostrace architecture $D/trace -o $D/architecture.yaml
    /var/tmp/caret-peer/venv/bin/python tools/caret-interop.py $D/trace $D/caret_analyze.json \
        --architecture $D/architecture.yaml \
        --path /sensing/imu,/localization/fusion,/planning/planner,/control/actuator \
        --path /sensing/lidar,/sensing/lidar_filter,/localization/fusion,/planning/planner,/control/actuator

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

With options, also (all written only when asked, so the output for the demo's data is unchanged):

--executors: the executors (`arch.executors`: caret_analyze's names `executor_<i>`, types, and
  their callback groups' names, types, nodes and callback names, in caret_analyze's order) and
  every callback group of every node (`arch.callback_groups`).
--publisher-callback NODE,TOPIC,CALLBACK: `arch.insert_publisher_callback(NODE, TOPIC, CALLBACK, 0)`
  (caret_analyze knows which callback publishes only in a node of one callback).
--message-context NODE,SUB,PUB,TYPE: `arch.update_message_context(NODE, TYPE, SUB, PUB)`
  (caret_analyze infers none from a trace).
--architecture YAML: the architecture read from YAML (`Architecture('yaml', YAML)`, as a file
  `rostrace architecture -o` writes) rather than built from the trace; its message contexts are
  then the file's.
--path NODE,...: an end-to-end path, nodes with the topics between them where wanted (as
  `rostrace e2e --path`): `arch.search_paths(first node, last node)`, the one result going through
  these nodes (and topics), `arch.add_path`, then `app.get_path(...)`. Written: its node paths with
  their message contexts, and for `include_first_callback`/`include_last_callback` off (`default`)
  and on (`with_first_and_last_callback`) the path's records (`path.to_records()`, every row, None
  where a message went no further) and their latency (first column -> last), then the response
  time (`record.ResponseTime` of the default records, as `Plot.create_response_time_*` computes
  it) for its four cases: all, best, worst, worst-with-external-latency -- each as (input time,
  response time) pairs and their statistics. The updates above are made before the search, as the
  reference results' recipe (shared/reference/caret/caret_analyze/recipe/analyze.py) does.

caret_analyze writes a cache (`caret_converted`) into the trace directory, so it reads a private
copy of the trace.
"""
from __future__ import annotations

import argparse
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


def split(v: str, n: int, what: str) -> list[str]:
    parts = v.split(',')
    if len(parts) != n or not all(parts):
        raise argparse.ArgumentTypeError(f'{what}: {n} comma-separated items, not {v!r}')
    return parts


def records_rows(records) -> list[list]:
    """Every row of records, in caret_analyze's order; None where a column has no value."""
    import pandas as pd
    df = records.to_dataframe()
    return [[None if pd.isna(v) else int(v) for v in row]
            for row in df.itertuples(index=False, name=None)]


def executors(arch) -> dict:
    def group(g) -> dict:
        return dict(name=g.callback_group_name, type=g.callback_group_type.type_name,
                    node=g.node_name, callback_names=list(g.callback_names))
    return dict(
        executors=[dict(name=e.executor_name, type=e.executor_type.type_name,
                        callback_group_names=list(e.callback_group_names),
                        callback_groups=[group(g) for g in e.callback_groups])
                   for e in arch.executors],
        callback_groups=[group(g) for g in arch.callback_groups])


def choose_path(arch, spec: str) -> tuple[str, dict]:
    """The path of `spec` (nodes, topics between them where given), added to arch."""
    items = spec.split(',')
    nodes = [i for i in items if i in arch.node_names]
    found = arch.search_paths(nodes[0], nodes[-1])
    n_found = len(found)

    def fits(p) -> bool:
        chain: list[str] = []
        for np_, comm in zip(p.node_paths, list(p.communications) + [None]):
            chain.append(np_.node_name)
            if comm is not None:
                chain.append(comm.topic_name)
        it = iter(chain)
        return list(p.node_names) == nodes and all(i in it for i in items)

    found = [p for p in found if fits(p)]
    if len(found) != 1:
        raise RuntimeError(f'{spec}: {len(found)} of the {n_found} paths found fit')
    name = 'path_' + '_'.join(n.strip('/').replace('/', '.') for n in nodes)
    arch.add_path(name, found[0])
    return name, dict(spec=spec, search_paths_args=[nodes[0], nodes[-1]], n_found=n_found)


def path_results(app, name: str, info: dict) -> dict:
    from caret_analyze.record import ResponseTime
    path = app.get_path(name)
    res = dict(info)
    res.update(
        node_names=[np_.node_name for np_ in path.node_paths],     # in path order
        topic_names=[c.topic_name for c in path.communications],
        node_paths=[dict(node=np_.node_name, sub=np_.subscribe_topic_name,
                         pub=np_.publish_topic_name,
                         message_context=(np_.message_context.type_name
                                          if np_.message_context is not None else None))
                    for np_ in path.node_paths],
        variants={})
    for variant, flag in [('default', False), ('with_first_and_last_callback', True)]:
        path.include_first_callback = flag
        path.include_last_callback = flag
        records = path.to_records()
        columns, lat = latencies(records)
        v: dict = dict(include_first_callback=flag, include_last_callback=flag, columns=columns,
                       records=records_rows(records), latency_ns=stats(lat), latencies_ns=lat)
        if not flag:
            rt = ResponseTime(records)
            v['response_time'] = {}
            for case, fn in [('all', rt.to_all_records), ('best', rt.to_best_case_records),
                             ('worst', rt.to_worst_case_records),
                             ('worst-with-external-latency',
                              rt.to_worst_with_external_latency_case_records)]:
                rdf = fn().to_dataframe()
                pairs = [[int(a), int(b)] for a, b in rdf.itertuples(index=False, name=None)]
                v['response_time'][case] = dict(columns=list(rdf.columns),
                                                stats=stats([b for _, b in pairs]),
                                                instances=pairs)
        res['variants'][variant] = v
    path.include_first_callback = False
    path.include_last_callback = False
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('trace')
    ap.add_argument('out')
    ap.add_argument('--executors', action='store_true')
    ap.add_argument('--publisher-callback', action='append', default=[],
                    type=lambda v: split(v, 3, '--publisher-callback'))
    ap.add_argument('--message-context', action='append', default=[],
                    type=lambda v: split(v, 4, '--message-context'))
    ap.add_argument('--path', action='append', default=[])
    ap.add_argument('--architecture', metavar='YAML',
                    help="Architecture('yaml', YAML) instead of Architecture('lttng', trace)")
    args = ap.parse_args()
    trace, out = args.trace, os.path.abspath(args.out)
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
        if args.architecture:
            arch = Architecture('yaml', os.path.join(cwd, args.architecture))
        else:
            arch = Architecture('lttng', copy)
        updates = []
        for node, topic, callback in args.publisher_callback:
            arch.insert_publisher_callback(node, topic, callback, 0)
            updates.append(dict(insert_publisher_callback=[node, topic, callback]))
        for node, sub, pub, kind in args.message_context:
            arch.update_message_context(node, kind, sub, pub)
            updates.append(dict(update_message_context=[node, kind, sub, pub]))
        paths = [choose_path(arch, spec) for spec in args.path]
        app = Application(arch, lttng)

        count = lttng.get_count(['trace_point'])
        events = {str(k): int(r['size']) for k, r in count.iterrows() if int(r['size']) > 0}
        res: dict = dict(
            caret_analyze='v0.7.3 (caret_analyze e12df8cc, caret_analyze_cpp_impl c7262421)',
            trace=os.path.normpath(trace),
            validation='on',
            architecture=('yaml' if args.architecture else 'lttng'),
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
        if args.executors:
            res.update(executors(arch))
        if updates:
            res['architecture_updates'] = updates
        if paths:
            res['paths'] = [path_results(app, name, info) for name, info in paths]
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
    for e in res.get('executors', []):
        print(f"{e['name']} {e['type']}: {e['callback_group_names']}")
    for p in res.get('paths', []):
        for k, v in p['variants'].items():
            print(f"path {p['spec']} {k}: {v['latency_ns']}")
            for case, r in v.get('response_time', {}).items():
                print(f"  response time {case}: {r['stats']}")
    return 0


if __name__ == '__main__':
    sys.exit(main())
