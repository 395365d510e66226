"""rostrace's ``ros2`` commands (ros2cli extensions, installed with the package):

- ``ros2 trace``: the command line of ros2_tracing's ``ros2 trace`` (``-s -p -u -k -c -l -a``,
  interactive, or the ``start``/``stop``/``pause``/``resume`` verbs), on rostrace's sessions, with
  ``--backend lttng`` (the default: an LTTng session, as ros2_tracing makes, which records every
  process whose tracetools (rostrace's in its LTTng mode, or upstream's) emits to LTTng) or
  ``--backend embedded`` (rostrace's tracer, no daemon: the processes are started with the
  session's environment, which the command prints), and the ``list`` verb.
- ``ros2 trace-analysis``: ``analyze`` (callbacks and topics of a recording), ``convert`` (its
  tables as Parquet files), ``report`` (the HTML report, through the ``rostrace`` command).

Where ros2_tracing's ``ros2trace`` is installed too, both register ``ros2 trace``; ros2cli keeps
the one it finds last. ``ros2 rostrace-trace`` always runs rostrace's (see docs/ros2-tracing.md).
"""

import os
import shlex
import shutil
import subprocess
import sys
import time

from ros2cli.command import CommandExtension, add_subparsers_on_demand
from ros2cli.plugin_system import PLUGIN_SYSTEM_VERSION, satisfies_version

from . import RecordError, _rostrace
from .launch import DEFAULT_CONTEXT, DEFAULT_EVENTS_ROS, tracing_directory

BACKENDS = ("lttng", "embedded")


class VerbExtension:
    """The extension point of ``ros2 trace``'s verbs and ``ros2 trace-analysis``'s."""

    NAME = None
    EXTENSION_POINT_VERSION = "0.1"

    def __init__(self):
        super().__init__()
        satisfies_version(PLUGIN_SYSTEM_VERSION, "^0.1")

    def add_arguments(self, parser, cli_name):
        pass

    def main(self, *, args):
        raise NotImplementedError()


# --- ros2 trace ---------------------------------------------------------------------------------


def _session_name_default() -> str:
    return "session-" + time.strftime("%Y%m%d%H%M%S")


def _add_configure(parser) -> None:
    """ros2_tracing's options, and rostrace's ``--backend``."""
    parser.add_argument(
        "-p", "--path", dest="path",
        help="path of the base directory for trace data (default: $ROS_TRACE_DIR if ROS_TRACE_DIR is set and not "
        "empty, or $ROS_HOME/tracing, using ~/.ros for ROS_HOME if not set or if empty)",
    )
    parser.add_argument(
        "-u", "--ust", nargs="*", dest="events_ust", metavar="EVENT", default=DEFAULT_EVENTS_ROS,
        help="the userspace events to enable (default: ros2:*) [to disable all UST events, provide this flag "
        "without any event name]",
    )
    parser.add_argument(
        "-k", "--kernel", nargs="*", dest="events_kernel", metavar="EVENT", default=[],
        help="the kernel events to enable (default: no kernel events; LTTng backend)",
    )
    parser.add_argument(
        "-c", "--context", nargs="*", dest="context_fields", metavar="CONTEXT", default=DEFAULT_CONTEXT,
        help="the context fields to enable (default: procname vpid vtid, which rostrace's tracer always records)",
    )
    parser.add_argument(
        "-l", "--list", dest="list", action="store_true",
        help="display lists of enabled events and context names (default: %(default)s)",
    )
    parser.add_argument(
        "-a", "--append-trace", dest="append_trace", action="store_true",
        help="append to trace if it already exists, otherwise error out (default: %(default)s)",
    )
    parser.add_argument(
        "--backend", choices=BACKENDS, default="lttng",
        help="lttng: an LTTng session, as ros2_tracing makes (default); embedded: rostrace's tracer, no daemon, "
        "the processes started with the environment printed",
    )


def _display(args) -> None:
    for what, names in (("UST", args.events_ust), ("kernel", args.events_kernel)):
        if names:
            print(f"{what} tracing enabled ({len(names)} events)")
            if args.list:
                for n in names:
                    print(f"\t{n}")
        else:
            print(f"{what} tracing disabled")
    if args.context_fields:
        print(f"context ({len(args.context_fields)} fields)")
        if args.list:
            for n in args.context_fields:
                print(f"\t{n}")


def _create(args, start: bool) -> int:
    """The session made (recording at once with `start`), where it writes said, and for the
    embedded backend the environment to start the processes with."""
    _display(args)
    try:
        path, env, lib = _rostrace.create_session(
            args.session_name,
            path=args.path or tracing_directory(),
            events=list(args.events_ust),
            kernel=list(args.events_kernel),
            context=list(args.context_fields),
            backend=args.backend,
            append=args.append_trace,
            start=start,
        )
    except (RecordError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"writing tracing session to: {path}")
    if args.backend == "embedded":
        if lib is None:
            print("error: no libtracetools.so to preload (set ROSTRACE_LIB)", file=sys.stderr)
            return 1
        print("start the processes to trace with:")
        for k, v in env:
            print(f"  export {k}={shlex.quote(str(v))}")
    return 0


def _lttng_output(name: str):
    """The output directory of LTTng session `name`, if there is one (`lttng list NAME`)."""
    lttng = shutil.which("lttng")
    if lttng is None:
        return None
    out = subprocess.run([lttng, "list", name], capture_output=True, text=True, check=False)
    for line in out.stdout.splitlines():
        line = line.strip()
        if out.returncode == 0 and line.startswith("Trace output:"):
            return line.split(":", 1)[1].strip()
    return None


def _session_base(name: str, path):
    """Where session `name` is: `path` when given; else the default directory of sessions when
    it holds it; else, as ros2_tracing finds sessions by name alone, the directory of the
    LTTng session of that name."""
    if path:
        return path
    base = tracing_directory()
    if any(n == name for n, _, _ in _rostrace.list_sessions(base)):
        return base
    out = _lttng_output(name)
    if out and os.path.basename(out.rstrip("/")) == name:
        return os.path.dirname(out.rstrip("/"))
    return base


def _control(name: str, path, verb: str) -> int:
    try:
        state = _rostrace.control_session(name, verb, path=_session_base(name, path))
    except (RecordError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"session {name}: {state}")
    return 0


class TraceCommand(CommandExtension):
    """Trace ROS 2 nodes with rostrace (ros2_tracing's command line). The main 'trace' command requires user interaction; to trace non-interactively, use the 'start'/'stop'/'pause'/'resume' sub-commands."""  # noqa: E501

    def add_arguments(self, parser, cli_name) -> None:
        parser.add_argument(
            "-s", "--session-name", dest="session_name", default=_session_name_default(),
            help="the name of the tracing session (default: session-YYYYMMDDHHMMSS)",
        )
        _add_configure(parser)
        add_subparsers_on_demand(parser, cli_name, "_verb", "rostrace.ros2trace.verb", required=False)

    def main(self, *, parser, args) -> int:
        if hasattr(args, "_verb"):
            return getattr(args, "_verb").main(args=args)
        # Interactive, as ros2_tracing's: made, started on Enter, stopped on Enter or Ctrl-C.
        code = _create(args, start=False)
        if code:
            return code
        try:
            input("press enter to start...")
            code = _control(args.session_name, args.path, "start")
            if code:
                return code
            input("press enter to stop...")
        except (KeyboardInterrupt, EOFError):
            print()
        print("stopping & destroying tracing session")
        return _control(args.session_name, args.path, "stop")


class StartVerb(VerbExtension):
    """Configure tracing session and start tracing (an existing session of that name: start it)."""

    def add_arguments(self, parser, cli_name) -> None:
        parser.add_argument("session_name", help="the name of the tracing session")
        _add_configure(parser)

    def main(self, *, args) -> int:
        base = args.path or tracing_directory()
        existing = {n for n, _, _ in _rostrace.list_sessions(base)}
        if args.session_name in existing and not args.append_trace:
            return _control(args.session_name, base, "start")
        return _create(args, start=True)


def _name_only(parser) -> None:
    parser.add_argument("session_name", help="the name of the tracing session")
    parser.add_argument("-p", "--path", dest="path", help="the base directory of the session (default: as start)")


class StopVerb(VerbExtension):
    """Stop tracing after starting or resuming."""

    def add_arguments(self, parser, cli_name) -> None:
        _name_only(parser)

    def main(self, *, args) -> int:
        return _control(args.session_name, args.path, "stop")


class PauseVerb(VerbExtension):
    """Pause tracing after starting or resuming."""

    def add_arguments(self, parser, cli_name) -> None:
        _name_only(parser)

    def main(self, *, args) -> int:
        return _control(args.session_name, args.path, "pause")


class ResumeVerb(VerbExtension):
    """Resume tracing after pausing."""

    def add_arguments(self, parser, cli_name) -> None:
        _name_only(parser)

    def main(self, *, args) -> int:
        return _control(args.session_name, args.path, "resume")


class ListVerb(VerbExtension):
    """List rostrace's sessions and their state."""

    def add_arguments(self, parser, cli_name) -> None:
        parser.add_argument("-p", "--path", dest="path", help="the directory of sessions (default: as start)")

    def main(self, *, args) -> int:
        for name, state, path in _rostrace.list_sessions(args.path or tracing_directory()):
            print(f"{name}\t{state}\t{path}")
        return 0


# --- ros2 trace-analysis ------------------------------------------------------------------------


class TraceAnalysisCommand(CommandExtension):
    """Analyze traces with rostrace: callbacks and topics, tables as Parquet, the HTML report."""

    def add_arguments(self, parser, cli_name) -> None:
        self._parser = parser
        add_subparsers_on_demand(parser, cli_name, "_verb", "rostrace.ros2trace_analysis.verb", required=False)

    def main(self, *, parser, args) -> int:
        if not hasattr(args, "_verb"):
            self._parser.print_help()
            return 0
        return getattr(args, "_verb").main(args=args)


class AnalyzeVerb(VerbExtension):
    """Callbacks (runs, durations) and topics (messages, latency) of a recording."""

    def add_arguments(self, parser, cli_name) -> None:
        parser.add_argument("trace_directory", help="the trace (a session directory)")
        parser.add_argument("--json", dest="json", help="also write the whole analysis as JSON to this file")

    def main(self, *, args) -> int:
        from . import analyze

        try:
            a = analyze(os.path.expanduser(args.trace_directory))
        except Exception as e:  # noqa: BLE001 (a trace that cannot be read: said, exit 1)
            print(f"error: {e}", file=sys.stderr)
            return 1
        print(a)
        cbs = sorted(a.report.get("callbacks", []), key=lambda c: -c["duration_ns"].get("sum", 0))
        print("\ncallbacks (node, kind, topic or period, runs, mean, p99, max in ms):")
        for c in cbs:
            d = c["duration_ns"]
            if d["count"]:
                what = c.get("topic") or (f"{c['timer_period_ns'] / 1e6:g} ms" if c.get("timer_period_ns") else "")
                print(
                    f"  {c['node']}\t{c['kind']}\t{what}\t{d['count']}\t{d['mean'] / 1e6:.3f}\t"
                    f"{d['p99'] / 1e6:.3f}\t{d['max'] / 1e6:.3f}"
                )
        print("\ntopics (name, published, taken, publish -> callback p50, p99 in ms):")
        for t in a.report.get("topics", []):
            lat = t["pub_to_callback_ns"]
            p50 = f"{lat['p50'] / 1e6:.3f}" if lat["count"] else "-"
            p99 = f"{lat['p99'] / 1e6:.3f}" if lat["count"] else "-"
            print(f"  {t['name']}\t{t['publishes']}\t{t['takes']}\t{p50}\t{p99}")
        if args.json:
            a.to_json(args.json)
        return 0 if not a.errors else 1


class ConvertVerb(VerbExtension):
    """The recording's tables (callbacks, runs, messages, ...) as Parquet files, as `rostrace export`."""

    def add_arguments(self, parser, cli_name) -> None:
        parser.add_argument("trace_directory", help="the trace (a session directory)")
        parser.add_argument("-o", "--output", dest="output", help="the directory of the tables (default: TRACE/parquet)")

    def main(self, *, args) -> int:
        import pyarrow.parquet as pq

        from . import analyze

        trace = os.path.expanduser(args.trace_directory)
        out = args.output or os.path.join(trace, "parquet")
        a = analyze(trace)
        os.makedirs(out, exist_ok=True)
        for name in a.tables():
            pq.write_table(a.arrow[name], os.path.join(out, f"{name}.parquet"))
        print(f"{len(a.tables())} tables written to {out}")
        return 0


class ReportVerb(VerbExtension):
    """The recording's HTML report, made by the `rostrace` command."""

    def add_arguments(self, parser, cli_name) -> None:
        parser.add_argument("trace_directory", help="the trace (a session directory)")
        parser.add_argument("-o", "--output", dest="output", default="report.html", help="the HTML file")

    def main(self, *, args) -> int:
        exe = shutil.which("rostrace")
        if exe is None:
            print("error: the report is made by the `rostrace` command: install it (cargo install rostrace)", file=sys.stderr)
            return 1
        return subprocess.call([exe, "report", os.path.expanduser(args.trace_directory), "-o", args.output])
