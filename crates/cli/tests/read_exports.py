"""Reads rostrace's exports with the tools notebook users have, and prints what they see as JSON.

  read_exports.py perfetto FILE PROTO       decode with Perfetto's own perfetto_trace.proto
  read_exports.py tables DIR                every table with pyarrow (Parquet) or pandas (CSV)
  read_exports.py sql DIR QUERY             a DuckDB query; `{dir}` in QUERY is DIR
"""
import collections
import glob
import importlib
import json
import os
import sys
import tempfile


def perfetto(path, proto):
    from grpc_tools import protoc

    out = tempfile.mkdtemp()
    d, f = os.path.split(os.path.abspath(proto))
    if protoc.main(["protoc", f"-I{d}", f"--python_out={out}", f]) != 0:
        raise SystemExit("protoc failed")
    sys.path.insert(0, out)
    pb = importlib.import_module("perfetto_trace_pb2")
    trace = pb.Trace()
    with open(path, "rb") as fh:
        trace.ParseFromString(fh.read())
    TE = pb.TrackEvent
    # Interned strings are per packet sequence; each host (Perfetto's machine) has its own.
    interned = collections.defaultdict(lambda: ({}, {}, {}))
    tracks, track_machine = {}, {}
    machines, seq_machine = {}, {}
    slices, instants, counters = collections.Counter(), collections.Counter(), 0
    flow_starts, flow_continues, flow_ends = collections.Counter(), collections.Counter(), collections.Counter()
    open_slices = collections.Counter()
    symbols = 0
    last_ts = 0
    for p in trace.packet:
        seq, machine = p.trusted_packet_sequence_id, p.machine_id
        if seq not in seq_machine:
            assert p.sequence_flags & 1, "the first packet of a sequence clears its incremental state"
            seq_machine[seq] = machine
        assert seq_machine[seq] == machine, "a sequence stays on its machine"
        names, ann_names, ann_strings = interned[seq]
        if p.HasField("system_info") and p.system_info.HasField("machine_name"):
            machines[machine] = p.system_info.machine_name
        for n in p.interned_data.event_names:
            names[n.iid] = n.name
        for n in p.interned_data.debug_annotation_names:
            ann_names[n.iid] = n.name
        for n in p.interned_data.debug_annotation_string_values:
            ann_strings[n.iid] = n.str.decode()
        if p.HasField("track_descriptor"):
            t = p.track_descriptor
            track_machine[t.uuid] = machine
            if t.HasField("thread"):
                tracks[t.uuid] = ("thread", t.thread.pid, t.thread.tid, t.parent_uuid)
            elif t.HasField("process"):
                tracks[t.uuid] = ("process", t.process.pid, t.process.process_name, 0)
            elif t.HasField("counter"):
                tracks[t.uuid] = ("counter", t.name, t.counter.unit, 0)
        if p.HasField("track_event"):
            e = p.track_event
            assert p.timestamp >= last_ts, "events in time order"
            last_ts = p.timestamp
            assert e.track_uuid in tracks, "the track is declared first"
            assert track_machine[e.track_uuid] == machine, "an event is on its track's machine"
            name = names.get(e.name_iid) if e.HasField("name_iid") else None
            if e.type == TE.TYPE_SLICE_BEGIN:
                assert name is not None
                slices[name] += 1
                open_slices[e.track_uuid] += 1
                for a in e.debug_annotations:
                    if ann_names[a.name_iid] == "symbol":
                        assert a.string_value_iid in ann_strings
                        symbols += 1
            elif e.type == TE.TYPE_SLICE_END:
                assert open_slices[e.track_uuid] > 0, "an end closes an open slice"
                open_slices[e.track_uuid] -= 1
            elif e.type == TE.TYPE_INSTANT:
                instants[name.split(" ")[0]] += 1
            elif e.type == TE.TYPE_COUNTER:
                assert tracks[e.track_uuid][0] == "counter"
                counters += 1
            for f in e.flow_ids:
                (flow_continues if f in flow_starts else flow_starts)[f] += 1
            for f in e.terminating_flow_ids:
                flow_ends[f] += 1
    kinds = collections.Counter(t[0] for t in tracks.values())
    print(json.dumps({
        "slices": sum(slices.values()),
        "slice_names": slices,
        "unfinished": sum(open_slices.values()),
        "symbols": symbols,
        "instants": instants,
        "counters": counters,
        "flows": len(flow_starts),
        "flows_ended": len(flow_ends),
        "flows_started_once": all(v == 1 for v in flow_starts.values()),
        "flows_ended_once": all(v == 1 for v in flow_ends.values()),
        "flows_through_take": len(flow_continues),
        "processes": kinds["process"],
        "threads": kinds["thread"],
        "counter_tracks": kinds["counter"],
        # Machine id -> host name, and the process names on each machine.
        "machines": {str(k): v for k, v in sorted(machines.items())},
        "machine_processes": {
            str(m): sorted(t[2] for u, t in tracks.items() if t[0] == "process" and track_machine[u] == m)
            for m in sorted(set(track_machine.values()))
        },
    }))


def tables(d):
    import pandas as pd
    import pyarrow.parquet as pq

    out = {}
    for f in sorted(glob.glob(os.path.join(d, "**", "*.*"), recursive=True)):
        table = os.path.relpath(os.path.dirname(f), d)
        if f.endswith(".parquet"):
            df = pq.read_table(f).to_pandas()
            types = {c: str(t) for c, t in zip(pq.read_schema(f).names, pq.read_schema(f).types)}
        elif f.endswith(".csv"):
            df = pd.read_csv(f, keep_default_na=False, na_values=[""], low_memory=False)
            types = {c: str(t) for c, t in df.dtypes.items()}
        else:
            continue
        sums = {}
        for c in df.columns:
            if str(df[c].dtype) in ("int64", "uint64", "Int64", "UInt64", "float64") and c not in ("recording",):
                s = df[c].dropna()
                sums[c] = int(s.astype("int64").sum()) if str(df[c].dtype) != "float64" else float(s.sum())
        out.setdefault(table, {})[os.path.basename(f)] = {
            "rows": len(df),
            "columns": list(df.columns),
            "types": types,
            "sums": sums,
            "nulls": {c: int(df[c].isna().sum()) for c in df.columns},
            "recordings": sorted(set(df["recording"])) if "recording" in df and len(df) else [],
        }
    print(json.dumps(out))


def sql(d, query):
    import duckdb

    rows = duckdb.sql(query.replace("{dir}", d)).fetchall()
    print(json.dumps([[v if isinstance(v, (int, float, str)) or v is None else str(v) for v in r] for r in rows]))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "perfetto":
        perfetto(sys.argv[2], sys.argv[3])
    elif cmd == "tables":
        tables(sys.argv[2])
    elif cmd == "sql":
        sql(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(f"unknown command {cmd}")
