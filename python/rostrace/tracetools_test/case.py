"""``TraceTestCase``: a ``unittest.TestCase`` that launches nodes traced by rostrace and asserts on
their events, with ``tracetools_test.case.TraceTestCase``'s interface (see the package's
documentation)."""

import os
import tempfile
import time
import unittest
from typing import Any, List, Optional, Type, Union

from .. import analyze, iter_events

DictEvent = dict

#: Set (not empty): the trace is kept after the test, as with ros2_tracing.
ENV_VAR_DEBUG = "TRACETOOLS_TEST_DEBUG"
#: ros2_tracing's marker event, with which its test processes say which test started them. A
#: rostrace session holds the test's processes alone: the marker is not needed to find them,
#: and is left out of the events compared.
TRACE_TEST_ID_TP_NAME = "lttng_ust_tracef:event"


def run_and_trace(
    base_path: str,
    session_name: str,
    ros_events: List[str],
    kernel_events: List[str],
    package_name: str,
    node_names: List[str],
    namespace: Optional[str],
    additional_actions: list,
    backend: str = "embedded",
):
    """Launches the nodes (``ros2 run PACKAGE NODE``, as launch_ros's ``Node``) under
    ``rostrace.launch.Trace``: the launch's exit code and the trace directory."""
    from launch import LaunchDescription, LaunchService
    from launch_ros.actions import Node

    from ..launch import Trace

    actions = [
        Trace(
            session_name=session_name,
            base_path=base_path,
            events_ust=ros_events,
            events_kernel=kernel_events,
            backend=backend,
        )
    ]
    for node in node_names:
        actions.append(Node(package=package_name, executable=node, namespace=namespace, output="screen", env=None))
    actions.extend(additional_actions)
    ls = LaunchService()
    ls.include_launch_description(LaunchDescription(actions))
    code = ls.run()
    return code, os.path.join(base_path, session_name)


class TraceTestCase(unittest.TestCase):
    """Launches ``nodes`` of ``package`` traced (``events_ros``, ``events_kernel``), reads the
    events once in ``setUp`` and checks that the enabled events, and the nodes' processes, are
    there; the assertions then work on ``self._events``."""

    ENV_VAR_DEBUG = ENV_VAR_DEBUG

    def __init__(
        self,
        *args,
        session_name_prefix: str,
        events_ros: List[str],
        package: str,
        nodes: List[str],
        base_path: Optional[str] = None,
        events_kernel: List[str] = [],  # noqa: B006 (tracetools_test's signature)
        additional_actions: Optional[list] = None,
        namespace: Optional[str] = None,
        backend: str = "embedded",
    ) -> None:
        super().__init__(methodName=args[0])
        self._base_path = base_path or tempfile.gettempdir()
        rmw = os.environ.get("RMW_IMPLEMENTATION")
        self._session_name_prefix = session_name_prefix + ("__" + rmw if rmw else "")
        self._events_ros = list(events_ros)
        self._events_kernel = list(events_kernel)
        self._package = package
        self._nodes = nodes
        self._additional_actions = additional_actions or []
        self._namespace = namespace
        self._backend = backend
        self._analysis = None

    def setUp(self):
        before = time.time_ns()
        session = self._session_name_prefix + "-" + time.strftime("%Y%m%d%H%M%S") + f"-{os.getpid()}"
        code, self._full_path = run_and_trace(
            self._base_path,
            session,
            self._events_ros,
            self._events_kernel,
            self._package,
            self._nodes,
            self._namespace,
            self._additional_actions,
            self._backend,
        )
        print(f"TRACE DIRECTORY: {self._full_path}")
        self.assertEqual(code, 0)
        self._events = [e for e in iter_events(self._full_path) if e["_name"] != TRACE_TEST_ID_TP_NAME]
        self.assertGreater(len(self._events), 0, "no events found in trace")
        self._event_names = [e["_name"] for e in self._events]
        self.assertEventAfterTimestamp(self._events[0], before)
        self.assertSetEqual(set(self._events_ros) | set(self._events_kernel), set(self._event_names))
        self.assertProcessNamesExist(self._nodes)

    def tearDown(self):
        if not os.environ.get(self.ENV_VAR_DEBUG):
            import shutil

            shutil.rmtree(self._full_path, ignore_errors=True)

    # --- ros2_tracing's assertions --------------------------------------------------------------

    def assertEventsSet(self, event_names: List[str]) -> None:  # noqa: N802
        """The trace's event names, as a set, are `event_names`."""
        self.assertSetEqual(set(self._event_names), set(event_names), "wrong events")

    def assertProcessNamesExist(self, names: List[str]) -> None:  # noqa: N802
        """A process of each name recorded events (names cut at 15 characters, as the kernel's)."""
        procnames = {self.get_procname(e) for e in self._events}
        for name in names:
            self.assertIn(name[:15], procnames, f"process name '{name}' not found in processes: {procnames}")

    def assertFieldType(self, event: DictEvent, field_names: Union[str, List[str]], field_type: Type) -> None:  # noqa: N802
        for name in field_names if isinstance(field_names, list) else [field_names]:
            value = self.get_field(event, name)
            self.assertIsInstance(
                value,
                field_type,
                f"expected '{name}' field type {field_type.__name__}, got {type(value).__name__} for event: {event}",
            )

    def assertValidHandle(  # noqa: N802
        self, event: DictEvent, handle_field_names: Union[str, List[str]], *, can_be_null: bool = False
    ) -> None:
        self.assertValidPointer(event, handle_field_names, can_be_null=can_be_null)

    def assertValidPointer(  # noqa: N802
        self, event: DictEvent, pointer_field_names: Union[str, List[str]], *, can_be_null: bool = False
    ) -> None:
        for name in pointer_field_names if isinstance(pointer_field_names, list) else [pointer_field_names]:
            self.assertFieldType(event, name, int)
            value = self.get_field(event, name)
            check = self.assertGreaterEqual if can_be_null else self.assertGreater
            check(value, 0, f"invalid '{name}' pointer value for event: {event}")

    def assertValidStaticArray(  # noqa: N802
        self,
        event: DictEvent,
        array_field_names: Union[str, List[str]],
        array_type: Optional[Type] = None,
        array_length: Optional[int] = None,
    ) -> None:
        for name in array_field_names if isinstance(array_field_names, list) else [array_field_names]:
            value = self.get_field(event, name)
            self.assertIsInstance(value, list, f"'{name}' value '{value}' not array for event: {event}")
            if array_length:
                self.assertEqual(array_length, len(value), f"'{name}' array '{value}' length invalid for event: {event}")
            if array_type and value:
                self.assertIsInstance(value[0], array_type, f"'{name}' array element not {array_type.__name__}: {event}")

    def assertValidQueueDepth(self, event: DictEvent, queue_depth_field_name: str = "queue_depth") -> None:  # noqa: N802
        self.assertFieldType(event, queue_depth_field_name, int)
        self.assertGreater(self.get_field(event, queue_depth_field_name), 0, f"invalid queue depth: {event}")

    def assertStringFieldNotEmpty(self, event: DictEvent, string_field_name: str) -> None:  # noqa: N802
        self.assertGreater(len(self.get_field(event, string_field_name)), 0, f"empty '{string_field_name}': {event}")

    def assertEventAfterTimestamp(self, event: DictEvent, timestamp: int) -> None:  # noqa: N802
        self.assertGreater(event["_timestamp"], timestamp, f"event not after timestamp '{timestamp}': {event}")

    def assertEventOrder(self, events: List[DictEvent]) -> None:  # noqa: N802
        self.assertListEqual(events, sorted(events, key=lambda e: e["_timestamp"]), f"unexpected events order: {events}")

    def assertNumEventsEqual(self, events: List[DictEvent], expected_number: int, msg: Optional[str] = None) -> None:  # noqa: N802
        self.assertEqual(len(events), expected_number, msg or f"unexpected number of events: {events}")

    def assertNumEventsGreaterEqual(  # noqa: N802
        self, events: List[DictEvent], min_expected_number: int, msg: Optional[str] = None
    ) -> None:
        self.assertGreaterEqual(len(events), min_expected_number, msg or f"unexpected number of events: {events}")

    def assertMatchingField(  # noqa: N802
        self,
        initial_event: DictEvent,
        field_name: str,
        matching_event_name: Optional[str] = None,
        events: Optional[List[DictEvent]] = None,
        check_order: bool = True,
    ) -> None:
        """Some event (of `matching_event_name`, among `events`) has the same value of
        `field_name` as `initial_event` (after it, with `check_order`)."""
        events = self._events if events is None else events
        if matching_event_name is not None:
            events = self.get_events_with_name(matching_event_name, events)
        value = self.get_field(initial_event, field_name)
        matches = self.get_events_with_field_value(field_name, value, events)
        self.assertGreaterEqual(len(matches), 1, f"no corresponding event with '{field_name}' value '{value}'")
        if check_order:
            after = [e for e in matches if self.are_events_ordered([initial_event, e])]
            self.assertGreaterEqual(len(after), 1, f"matching '{field_name}' event not after: {initial_event}")

    def assertFieldEquals(self, event: DictEvent, field_name: str, value: Any, msg: Optional[str] = None) -> None:  # noqa: N802
        self.assertEqual(self.get_field(event, field_name), value, msg or f"wrong field '{field_name}' value: {event}")

    # --- Getters --------------------------------------------------------------------------------

    def get_field(self, event: DictEvent, field_name: str) -> Any:
        """The field's value; the test fails when the event has none."""
        if field_name not in event:
            self.fail(f"event does not contain field '{field_name}': {event}")
        return event[field_name]

    def get_procname(self, event: DictEvent) -> str:
        return self.get_field(event, "procname")

    def get_tid(self, event: DictEvent) -> int:
        return self.get_field(event, "vtid")

    def get_events_with_name(self, event_name: str, events: Optional[List[DictEvent]] = None) -> List[DictEvent]:
        events = self._events if events is None else events
        return [e for e in events if e["_name"] == event_name]

    def get_events_with_procname(self, procname: str, events: Optional[List[DictEvent]] = None) -> List[DictEvent]:
        events = self._events if events is None else events
        return [e for e in events if e.get("procname") == procname[:15]]

    def get_events_with_field_value(
        self, field_name: str, field_values: Any, events: Optional[List[DictEvent]] = None
    ) -> List[DictEvent]:
        events = self._events if events is None else events
        values = field_values if isinstance(field_values, (list, set, tuple)) else [field_values]
        return [e for e in events if field_name in e and e[field_name] in values]

    def get_event_with_field_value_and_assert(
        self, field_name: str, field_value: Any, events: Optional[List[DictEvent]] = None, allow_multiple: bool = False
    ) -> DictEvent:
        """The event with that value of the field; the test fails when there is none, or
        several unless `allow_multiple` (the first is returned then)."""
        found = self.get_events_with_field_value(field_name, field_value, events)
        self.assertGreaterEqual(len(found), 1, f"no event with '{field_name}' value '{field_value}'")
        if not allow_multiple:
            self.assertEqual(len(found), 1, f"several events with '{field_name}' value '{field_value}': {found}")
        return found[0]

    def get_events_with_field_not_value(
        self, field_name: str, field_values: Any, events: Optional[List[DictEvent]] = None
    ) -> List[DictEvent]:
        events = self._events if events is None else events
        values = field_values if isinstance(field_values, (list, set, tuple)) else [field_values]
        return [e for e in events if field_name in e and e[field_name] not in values]

    def are_events_ordered(self, events: List[DictEvent]) -> bool:
        return all(a["_timestamp"] <= b["_timestamp"] for a, b in zip(events, events[1:]))

    # --- rostrace's analysis ------------------------------------------------------------------

    @property
    def analysis(self):
        """rostrace's analysis of the trace (``rostrace.analyze``), made once."""
        if self._analysis is None:
            self._analysis = analyze(self._full_path)
        return self._analysis

    def assertCallbackP99Below(self, node: str, limit_ms: float, kind: Optional[str] = None) -> None:  # noqa: N802
        """Every callback of `node` (of `kind`: ``timer``, ``subscription``, ``service``) ran, and
        its p99 duration is below `limit_ms`."""
        found = [
            c
            for c in self.analysis.report["callbacks"]
            if c["node"] == node and (kind is None or c["kind"] == kind) and c["duration_ns"]["count"] > 0
        ]
        self.assertGreater(len(found), 0, f"no callback of {node} ran")
        for c in found:
            p99 = c["duration_ns"]["p99"] / 1e6
            self.assertLess(p99, limit_ms, f"{node} {c['kind']} ({c['symbol']}): p99 {p99:.3f} ms, not below {limit_ms} ms")

    def assertEveryMessageMatched(self) -> None:  # noqa: N802
        """Every message taken was matched to its publication (none unmatched)."""
        report = self.analysis.report
        self.assertEqual(report.get("flows_unmatched", 0), 0, "messages taken but not matched to a publication")
