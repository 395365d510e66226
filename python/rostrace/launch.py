"""Tracing from launch files: ``rostrace.launch.Trace``, the action of ros2_tracing's
``tracetools_launch.action.Trace`` with the same parameters, recording the processes the launch
file starts with rostrace's tracer (embedded by default, no daemon; LTTng with
``backend='lttng'``), and finishing the recording when launch shuts down (also on Ctrl-C).

Python launch files change only their import::

    from rostrace.launch import Trace        # was: from tracetools_launch.action import Trace

    def generate_launch_description():
        return LaunchDescription([
            Trace(session_name='my-session'),
            Node(package='demo_nodes_cpp', executable='talker'),
        ])

XML and YAML launch files change only their tag, ``<rostrace>`` for ``<trace>``, with
``<trace>``'s attributes (``session-name``, ``append-timestamp``, ``base-path``,
``append-trace``, ``events-ust``, ``events-kernel``, ``context-fields``, ``subbuffer-size-ust``,
``subbuffer-size-kernel``) and rostrace's own (``backend``, ``snapshot-mode``, ``distro``)::

    <launch>
      <rostrace session-name="my-session" events-ust="ros2:*"/>
      <node pkg="demo_nodes_cpp" exec="talker"/>
    </launch>

The action puts the traced environment (the session, rostrace's ``libtracetools.so``
preloaded, the rclpy instrumentation) into the launch context, so the processes started after
it in the launch description are recorded, whatever their language.
"""

import os
import shlex
import time
from typing import Dict, Iterable, List, Optional, Union

from launch import logging
from launch.action import Action
from launch.actions import SetEnvironmentVariable
from launch.event_handlers import OnShutdown
from launch.frontend import Entity, Parser, expose_action
from launch.launch_context import LaunchContext
from launch.some_substitutions_type import SomeSubstitutionsType
from launch.utilities import normalize_to_list_of_substitutions, perform_substitutions

from . import RecordError, _rostrace

#: ros2_tracing's default events (``tracetools_trace.tools.names.DEFAULT_EVENTS_ROS``): every
#: event of the ``ros2`` provider. rostrace records CARET's ``ros2_caret`` events as well when
#: they are asked for (``events_ust=['ros2:*', 'ros2_caret:*']``).
DEFAULT_EVENTS_ROS = ["ros2:*"]
#: The context fields ros2_tracing records by default; rostrace's tracer always records them.
DEFAULT_CONTEXT = ["procname", "vpid", "vtid"]
#: The backends: rostrace's tracer in each process, or LTTng-UST (and the kernel tracer).
BACKENDS = ("embedded", "lttng")


def tracing_directory() -> str:
    """Where sessions go by default, as ros2_tracing says: ``$ROS_TRACE_DIR``, else
    ``$ROS_HOME/tracing``, else ``~/.ros/tracing``."""
    trace_dir = os.environ.get("ROS_TRACE_DIR")
    if not trace_dir:
        trace_dir = os.path.join(os.environ.get("ROS_HOME") or os.path.join("~", ".ros"), "tracing")
    return os.path.normpath(os.path.expanduser(trace_dir))


def append_timestamp(session_name: str) -> str:
    """``NAME-YYYYMMDDHHMMSS``, as ros2_tracing names sessions."""
    return session_name + "-" + time.strftime("%Y%m%d%H%M%S")


@expose_action("rostrace")
class Trace(Action):
    """Records the processes a launch file starts with rostrace: ``tracetools_launch``'s
    ``Trace`` action, embedded tracer by default (see the module's documentation)."""

    def __init__(
        self,
        *,
        session_name: SomeSubstitutionsType,
        append_timestamp: bool = False,
        base_path: Optional[SomeSubstitutionsType] = None,
        append_trace: bool = False,
        events_ust: Iterable[SomeSubstitutionsType] = DEFAULT_EVENTS_ROS,
        events_kernel: Iterable[SomeSubstitutionsType] = (),
        context_fields: Union[Iterable[SomeSubstitutionsType], Dict[str, Iterable[SomeSubstitutionsType]]] = DEFAULT_CONTEXT,
        subbuffer_size_ust: Optional[int] = None,
        subbuffer_size_kernel: Optional[int] = None,
        backend: str = "embedded",
        snapshot_mode: bool = False,
        distro: Optional[str] = None,
        **kwargs,
    ) -> None:
        """Parameters as ``tracetools_launch.action.Trace``'s; ``backend`` (``embedded`` or
        ``lttng``), ``snapshot_mode`` (a flight recorder: events kept in memory, written by
        ``rostrace snapshot``) and ``distro`` (the tracetools ABI, else ``ROS_DISTRO``'s) are
        rostrace's. The sub-buffer sizes apply to LTTng; without them rostrace's default (8 MiB,
        where ros2_tracing's 32 KiB loses events under load)."""
        super().__init__(**kwargs)
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r} (embedded or lttng)")
        self._logger = logging.get_logger(__name__)
        self._append_timestamp = append_timestamp
        self._session_name = normalize_to_list_of_substitutions(session_name)
        self._base_path = None if base_path is None else normalize_to_list_of_substitutions(base_path)
        self._append_trace = append_trace
        self._events_ust = [normalize_to_list_of_substitutions(x) for x in events_ust]
        self._events_kernel = [normalize_to_list_of_substitutions(x) for x in events_kernel]
        if isinstance(context_fields, dict):
            self._context_fields = {
                domain: [normalize_to_list_of_substitutions(f) for f in fields] for domain, fields in context_fields.items()
            }
        else:
            self._context_fields = [normalize_to_list_of_substitutions(f) for f in context_fields]
        self._subbuffer_size_ust = subbuffer_size_ust
        self._subbuffer_size_kernel = subbuffer_size_kernel
        self._backend = backend
        self._snapshot_mode = snapshot_mode
        self._distro = distro
        self._trace_directory: Optional[str] = None
        self._session = None

    @property
    def session_name(self):
        return self._session_name

    @property
    def base_path(self):
        return self._base_path

    @property
    def append_trace(self):
        return self._append_trace

    @property
    def trace_directory(self):
        """The session directory, once the action ran."""
        return self._trace_directory

    @property
    def events_ust(self):
        return self._events_ust

    @property
    def events_kernel(self):
        return self._events_kernel

    @property
    def context_fields(self):
        return self._context_fields

    @property
    def subbuffer_size_ust(self):
        return self._subbuffer_size_ust

    @property
    def subbuffer_size_kernel(self):
        return self._subbuffer_size_kernel

    @property
    def backend(self):
        return self._backend

    @classmethod
    def parse(cls, entity: Entity, parser: Parser):
        """The ``<rostrace>`` tag: ``<trace>``'s attributes, and ``backend``, ``snapshot-mode``,
        ``distro``."""
        _, kwargs = super().parse(entity, parser)
        kwargs["session_name"] = parser.parse_substitution(entity.get_attr("session-name"))

        def typed(attr: str, key: str, data_type: type) -> None:
            v = entity.get_attr(attr, data_type=data_type, optional=True, can_be_str=False)
            if v is not None:
                kwargs[key] = v

        def words(attr: str, key: str) -> None:
            # An empty attribute is an empty list (nothing enabled), not every event.
            v = entity.get_attr(attr, optional=True)
            if v is not None:
                kwargs[key] = [parser.parse_substitution(w) for w in shlex.split(v)] if v else []

        typed("append-timestamp", "append_timestamp", bool)
        typed("append-trace", "append_trace", bool)
        typed("snapshot-mode", "snapshot_mode", bool)
        typed("subbuffer-size-ust", "subbuffer_size_ust", int)
        typed("subbuffer-size-kernel", "subbuffer_size_kernel", int)
        words("events-ust", "events_ust")
        words("events-kernel", "events_kernel")
        words("context-fields", "context_fields")
        base_path = entity.get_attr("base-path", optional=True)
        if base_path:
            kwargs["base_path"] = parser.parse_substitution(base_path)
        for attr in ("backend", "distro"):
            v = entity.get_attr(attr, optional=True)
            if v:
                kwargs[attr] = v
        return cls, kwargs

    def _perform_substitutions(self, context: LaunchContext) -> None:
        """The parameters' values, substituted: what the properties then give, as
        ``tracetools_launch``'s action."""
        name = perform_substitutions(context, self._session_name)
        self._session_name = append_timestamp(name) if self._append_timestamp else name
        self._base_path = perform_substitutions(context, self._base_path) if self._base_path else tracing_directory()
        self._events_ust = [perform_substitutions(context, x) for x in self._events_ust]
        self._events_kernel = [perform_substitutions(context, x) for x in self._events_kernel]
        if isinstance(self._context_fields, dict):
            self._context_fields = {
                domain: [perform_substitutions(context, f) for f in fields]
                for domain, fields in self._context_fields.items()
            }
        else:
            self._context_fields = [perform_substitutions(context, f) for f in self._context_fields]

    def _contexts(self) -> List[str]:
        """The context fields, of every domain; an unknown domain is an error."""
        if not isinstance(self._context_fields, dict):
            return list(self._context_fields)
        unknown = [d for d in self._context_fields if d not in ("kernel", "userspace")]
        if unknown:
            raise ValueError(f"unknown context domain(s) {unknown} (kernel or userspace)")
        return sorted({f for fields in self._context_fields.values() for f in fields})

    def execute(self, context: LaunchContext) -> Optional[List[Action]]:
        self._perform_substitutions(context)
        lttng = self._backend == "lttng"
        try:
            # The embedded tracer records the process name and ids, always; other context
            # fields are LTTng's (asked of the embedded backend, they are refused, saying so).
            contexts = self._contexts()
            self._session = _rostrace.begin_session(
                self._session_name,
                path=self._base_path,
                events=self._events_ust,
                kernel=self._events_kernel,
                context=contexts,
                backend=self._backend,
                append=self._append_trace,
                buffer_size=str(self._subbuffer_size_ust) if lttng and self._subbuffer_size_ust else None,
                snapshot_mode=self._snapshot_mode,
                distro=self._distro,
            )
        except (RecordError, ValueError) as e:
            self._logger.error(str(e))
            raise RuntimeError("tracing setup failed, see errors above") from None
        for m in self._session.messages:
            self._logger.warning(m)
        self._trace_directory = self._session.dir
        self._logger.info(f"Writing tracing session to: {self._trace_directory}")
        self._logger.debug(f"UST events: {self._events_ust}")
        self._logger.debug(f"Kernel events: {self._events_kernel}")
        context.register_event_handler(OnShutdown(on_shutdown=self._destroy))
        return [SetEnvironmentVariable(k, v) for k, v in self._session.env]

    def _destroy(self, event, context: LaunchContext) -> None:
        if self._session is None:
            return
        self._logger.debug(f"Finalizing tracing session: {self._session.name}")
        recorded, said = self._session.finish("ros2 launch")
        for m in said:
            self._logger.info(m)
        if recorded:
            self._logger.info(f"Trace written to: {self._trace_directory}")

    def __repr__(self):
        return (
            "Trace("
            f"session_name={self._session_name}, "
            f"base_path={self._base_path}, "
            f"append_trace={self._append_trace}, "
            f"trace_directory={self._trace_directory}, "
            f"events_ust={self._events_ust}, "
            f"events_kernel={self._events_kernel}, "
            f"context_fields={self._context_fields}, "
            f"backend={self._backend})"
        )
