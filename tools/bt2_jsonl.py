#!/usr/bin/python3
"""Prints the events babeltrace2 reads from a trace as JSON lines, in rostrace's `events --format jsonl`
shape: the oracle of rostrace's reader tests. Usage: bt2_jsonl.py TRACE_DIR [BEGIN_S END_S]

With BEGIN_S and END_S (seconds from the Unix epoch, decimal), only events in that time range
(inclusive; `-` for no bound) are printed: babeltrace2's trimmer, for reading a slice of a large
trace."""
import json
import math
import sys

import bt2


def value(f):
    if isinstance(f, bt2._BoolFieldConst):
        return bool(f)
    if isinstance(f, (bt2._UnsignedIntegerFieldConst, bt2._SignedIntegerFieldConst)):
        return int(f)
    if isinstance(f, bt2._RealFieldConst):
        v = float(f)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return v
    if isinstance(f, bt2._StringFieldConst):
        return str(f)
    if isinstance(f, bt2._StructureFieldConst):
        return {k: value(v) for k, v in f.items()}
    if isinstance(f, bt2._ArrayFieldConst):
        return [value(v) for v in f]
    if isinstance(f, bt2._VariantFieldConst):
        return value(f.selected_option)
    if isinstance(f, bt2._BitArrayFieldConst):
        return int(f.value_as_integer)
    raise TypeError(type(f))


def members(f, out):
    if f is not None:
        for k, v in f.items():
            out[k] = value(v)


def main():
    begin = end = None
    if len(sys.argv) == 4:
        begin, end = (None if a == "-" else float(a) for a in sys.argv[2:4])
    it = bt2.TraceCollectionMessageIterator(sys.argv[1], begin=begin, end=end)
    w = sys.stdout.write
    for msg in it:
        if type(msg) is not bt2._EventMessageConst:
            continue
        ev = msg.event
        try:
            ts = msg.default_clock_snapshot.ns_from_origin
        except Exception:
            ts = None
        o = {"ts": ts, "name": ev.name}
        pkt = ev.packet
        if pkt is not None and pkt.context_field is not None and "cpu_id" in pkt.context_field:
            o["cpu_id"] = int(pkt.context_field["cpu_id"])
        ctx = {}
        members(ev.common_context_field, ctx)
        members(ev.specific_context_field, ctx)
        o["context"] = ctx
        fields = {}
        members(ev.payload_field, fields)
        o["fields"] = fields
        w(json.dumps(o, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
