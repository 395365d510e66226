"""``Processor`` and ``EventHandler``: tracetools_analysis's entry points. The ROS 2 handler
is built from the events in Rust-read columns, not event by event; handlers of your own
(``EventHandler`` subclasses with a ``handler_map``) still get every event as a dict, in
order, in the same pass."""

from typing import Any, Callable, Dict, Iterable, List, Optional, Set, Type

import pandas as pd

from ..data_model import DataModel


class EventMetadata:
    """What a handler method gets beside the event: name, timestamp, CPU, process, thread."""

    def __init__(self, event_name: str, timestamp: int, cpu_id: int, procname: Optional[str] = None, pid: Optional[int] = None, tid: Optional[int] = None) -> None:
        self._event_name = event_name
        self._timestamp = timestamp
        self._cpu_id = cpu_id
        self._procname = procname
        self._pid = pid
        self._tid = tid

    @property
    def event_name(self) -> str:
        return self._event_name

    @property
    def timestamp(self) -> int:
        return self._timestamp

    @property
    def cpu_id(self) -> int:
        return self._cpu_id

    @property
    def procname(self) -> Optional[str]:
        return self._procname

    @property
    def pid(self) -> Optional[int]:
        return self._pid

    @property
    def tid(self) -> Optional[int]:
        return self._tid


HandlerMethod = Callable[[Dict, EventMetadata], None]


class EventHandler:
    """A handler: ``handler_map`` maps event names to methods called with (event dict,
    metadata); ``data`` is its data model."""

    def __init__(self, *, handler_map: Optional[Dict[str, HandlerMethod]] = None, data_model: Optional[DataModel] = None, **kwargs: Any) -> None:
        self._handler_map = handler_map or {}
        self._data_model = data_model
        self._processor: Optional["Processor"] = None

    @property
    def handler_map(self) -> Dict[str, HandlerMethod]:
        return self._handler_map

    @property
    def data(self) -> Optional[DataModel]:
        return self._data_model

    @property
    def processor(self) -> Optional["Processor"]:
        return self._processor

    @staticmethod
    def required_events() -> Set[str]:
        return set()

    @staticmethod
    def dependencies() -> List[Type["EventHandler"]]:
        return []

    def register_processor(self, processor: "Processor") -> None:
        self._processor = processor

    @staticmethod
    def int_to_hex_str(addr: int) -> str:
        return f"0x{addr:X}"

    def finalize(self) -> None:
        if self._data_model is not None:
            self._data_model.finalize()

    def _process_columns(self, events: Any, check_required: bool = True) -> None:
        """Handlers built from columns (the ROS 2 handler) override this."""

    @classmethod
    def process(cls, events: Iterable[Dict], **kwargs: Any) -> "EventHandler":
        """Makes a handler, processes ``events`` with it, returns it (``handler.data``)."""
        handler = cls(**kwargs)
        Processor(handler, **kwargs).process(events)
        return handler


class Processor:
    """Runs handlers over the events: the ROS 2 handler from columns read in Rust, other
    handlers event by event."""

    class RequiredEventNotFoundError(RuntimeError):
        pass

    def __init__(self, *handlers: EventHandler, quiet: bool = False, **kwargs: Any) -> None:
        if not handlers:
            raise RuntimeError("Must provide at least one handler!")
        self.handlers = list(handlers)
        self.quiet = quiet
        self._processed = False
        for h in self.handlers:
            h.register_processor(self)

    @staticmethod
    def get_event_names(events: Iterable[Dict]) -> Set[str]:
        return {e["_name"] for e in events}

    def process(self, events: Iterable[Dict], erase_progress: bool = False, no_required_events_check: bool = False) -> None:
        if self._processed:
            return
        columnar = [h for h in self.handlers if type(h)._process_columns is not EventHandler._process_columns]
        per_event = [h for h in self.handlers if h not in columnar and h.handler_map]
        for h in columnar:
            h._process_columns(events, not no_required_events_check)
        if per_event:
            multimap: Dict[str, List[HandlerMethod]] = {}
            for h in per_event:
                for name, m in h.handler_map.items():
                    multimap.setdefault(name, []).append(m)
            for event in events:
                methods = multimap.get(event["_name"])
                if methods:
                    md = EventMetadata(
                        event["_name"], event["_timestamp"], event.get("cpu_id"), event.get("procname"),
                        event.get("vpid", event.get("pid")), event.get("vtid", event.get("tid")),
                    )
                    for m in methods:
                        m(event, md)
        for h in self.handlers:
            h.finalize()
        self._processed = True

    def get_handler_by_type(self, handler_type: Type) -> Optional[EventHandler]:
        for h in self.handlers:
            if isinstance(h, handler_type):
                return h
        return None

    def print_data(self) -> None:
        for h in self.handlers:
            if h.data is not None:
                h.data.print_data()


def event_frames(events: Any, names: List[str]) -> Dict[str, pd.DataFrame]:
    """The events of ``names`` as one DataFrame per name: read in Rust for a trace
    (``load_file``'s result), grouped from the dicts otherwise (a converted file, a list)."""
    from ... import _event_tables, to_pandas  # noqa: PLC0415
    from ..loading import TraceEvents  # noqa: PLC0415

    if isinstance(events, TraceEvents):
        tables, read = _event_tables(events.paths, names, 0, None)
        events.counted(read)  # the whole trace was read: its length is known
        return {name: to_pandas(t) for name, t in tables}
    wanted = set(names)
    rows: Dict[str, List[Dict]] = {}
    for e in events:
        if e["_name"] in wanted:
            rows.setdefault(e["_name"], []).append(e)
    return {n: pd.DataFrame(r) for n, r in rows.items()}
