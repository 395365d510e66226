"""``Ros2Handler``: the ROS 2 events into the ROS 2 data model."""

from typing import Any, Set

from ..data_model.ros2 import CARET_ALIASES, ROS2_EVENTS, Ros2DataModel, with_caret_events
from . import EventHandler, Processor, event_frames


class Ros2Handler(EventHandler):
    """Builds ``Ros2DataModel`` (``handler.data``) from the ROS 2 events, read in Rust and
    assembled column by column."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(handler_map={}, data_model=Ros2DataModel(), **kwargs)

    @staticmethod
    def required_events() -> Set[str]:
        return {"ros2:rcl_init"}

    def _process_columns(self, events: Any, check_required: bool = True) -> None:
        # CARET records its initialization events as ros2_caret:* (again when recording starts):
        # they stand for the ros2:* events of the same name, so CARET traces load too.
        frames = with_caret_events(event_frames(events, ROS2_EVENTS + sorted(CARET_ALIASES)))
        missing = self.required_events() - set(frames)
        if check_required and missing:
            raise Processor.RequiredEventNotFoundError(f"missing events: {missing}")
        self._data_model = Ros2DataModel.from_events(frames)

    @property
    def data(self) -> Ros2DataModel:
        return self._data_model
