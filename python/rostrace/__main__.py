"""``python -m rostrace convert|process|analyze TRACE``: ``ros2 trace-analysis``'s verbs
(``convert`` and ``process`` behave as tracetools_analysis's, read by rostrace) and the
analysis (``rostrace analyze``'s JSON)."""

import argparse
import os
import sys
import time

from . import TraceError, analyze
from .tracetools_analysis import time_diff_to_str
from .tracetools_analysis.convert import DEFAULT_CONVERT_FILE_NAME, convert
from .tracetools_analysis.loading import load_file
from .tracetools_analysis.processor import Processor
from .tracetools_analysis.processor.ros2 import Ros2Handler


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m rostrace", description="ROS 2 trace analysis, read by rostrace.")
    verbs = p.add_subparsers(dest="verb", metavar="{convert,process,analyze}")
    c = verbs.add_parser("convert", help="convert a trace to tracetools_analysis's pickle file")
    c.add_argument("trace_directory", help="the path to the main trace directory")
    c.add_argument(
        "-o", "--output-file", default=DEFAULT_CONVERT_FILE_NAME,
        help=f"the name of the output file, in the trace directory (default: {DEFAULT_CONVERT_FILE_NAME})",
    )
    pr = verbs.add_parser("process", help="process a trace and print tracetools_analysis's ROS 2 data model")
    pr.add_argument("input_path", help="the trace directory, or a converted file")
    pr.add_argument("-f", "--force-conversion", action="store_true", help="re-read the trace even if a converted file exists")
    g = pr.add_mutually_exclusive_group()
    g.add_argument("-s", "--hide-results", action="store_true", help="do not print the data model")
    g.add_argument("-c", "--convert-only", action="store_true", help="only convert (write the converted file)")
    a = verbs.add_parser("analyze", help="rostrace's analysis of the traces, as JSON")
    a.add_argument("traces", nargs="+", help="trace directories")
    a.add_argument("-o", "--output", help="write the JSON there (default: standard output)")
    a.add_argument("-j", "--jobs", type=int, default=0, help="threads (default: one per core)")
    args = p.parse_args(argv)
    try:
        if args.verb == "convert":
            convert(args.trace_directory, args.output_file)
        elif args.verb == "process":
            process(args.input_path, args.force_conversion, args.hide_results, args.convert_only)
        elif args.verb == "analyze":
            an = analyze(args.traces, jobs=args.jobs)
            if args.output:
                an.to_json(args.output)
            else:
                print(an.to_json())
        else:
            p.print_help()
            return 2
    except (TraceError, RuntimeError, OSError) as e:
        print(f"rostrace: error: {e}", file=sys.stderr)
        return 1
    return 0


def process(input_path: str, force_conversion: bool = False, hide_results: bool = False, convert_only: bool = False) -> None:
    """``ros2 trace-analysis process``: loads (reads the trace, or a converted file), processes
    with the ROS 2 handler, prints the data model unless ``hide_results``."""
    if not os.path.exists(os.path.expanduser(input_path)):
        raise RuntimeError(f"input path does not exist: {input_path}")
    start = time.time()
    events = load_file(input_path, do_convert_if_needed=True, force_conversion=force_conversion, convert_only=convert_only)
    if convert_only:
        return
    handler = Ros2Handler()
    Processor(handler).process(events)
    elapsed = time.time() - start
    if not hide_results:
        handler.data.print_data()
    print(f"processed {len(events)} events in {time_diff_to_str(elapsed)}")


if __name__ == "__main__":
    sys.exit(main())
