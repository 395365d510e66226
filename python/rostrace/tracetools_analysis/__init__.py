"""tracetools_analysis's API over rostrace: an existing tracetools_analysis notebook or script
runs by changing its imports from ``tracetools_analysis`` to ``rostrace.tracetools_analysis``.

The trace is read by rostrace (every core, the GIL released) and the ROS 2 data model is built
column by column from the events, with tracetools_analysis's table names, columns, indexes and
rules (pointers not separated by process, callback runs paired by callback address).
``README.md`` (Python) lists what is covered and what is not.
"""


def time_diff_to_str(time_diff: float) -> str:
    """A duration in seconds as tracetools_analysis prints it: ``N ms`` below a second,
    ``N.N s`` below a minute, ``M m S s`` above."""
    if time_diff >= 60.0:
        return f"{time_diff // 60.0:.0f} m {time_diff % 60.0:.0f} s"
    if time_diff >= 1.0:
        return f"{time_diff:.1f} s"
    return f"{time_diff * 1000:.0f} ms"
