"""``convert``: a trace as tracetools_analysis's converted file (one pickled event dict after
another, protocol 4), read by rostrace."""

import os
import pickle
import time

from .. import iter_events
from . import time_diff_to_str

DEFAULT_CONVERT_FILE_NAME = "converted"


def convert(trace_directory: str, output_file_name: str = DEFAULT_CONVERT_FILE_NAME, quiet: bool = False) -> int:
    """Writes ``trace_directory/output_file_name``; returns the number of events."""
    trace_directory = os.path.expanduser(trace_directory)
    if not os.path.isdir(trace_directory):
        raise RuntimeError(f"trace directory does not exist: {trace_directory}")
    output = os.path.join(trace_directory, output_file_name)
    if not quiet:
        print(f"converting trace directory: {trace_directory}")
    start = time.time()
    n = 0
    with open(output, "wb") as f:
        p = pickle.Pickler(f, protocol=4)
        for event in iter_events(trace_directory):
            p.dump(event)
            n += 1
    if not quiet:
        print(f"converted {n} events in {time_diff_to_str(time.time() - start)}")
        print(f"output written to: {output}")
    return n
