"""``Ros2DataModel``: tracetools_analysis's ROS 2 data model, built column by column from the
events (one DataFrame per event name) instead of event by event."""

import json
from typing import Dict, List, Optional, Tuple

import numpy as np
import pandas as pd

from . import DataModel

# (table, event, [(column, source field)], index column): one row per event, in time order.
# Source fields: a payload field, or `_timestamp`, `vpid` (pid), `vtid` (tid).
_OBJECT_TABLES: List[Tuple[str, str, List[Tuple[str, str]], Optional[str]]] = [
    ("contexts", "ros2:rcl_init", [("context_handle", "context_handle"), ("timestamp", "_timestamp"), ("pid", "vpid"), ("version", "version")], "context_handle"),
    ("nodes", "ros2:rcl_node_init", [("node_handle", "node_handle"), ("timestamp", "_timestamp"), ("tid", "vtid"), ("rmw_handle", "rmw_handle"), ("name", "node_name"), ("namespace", "namespace")], "node_handle"),
    ("rmw_publishers", "ros2:rmw_publisher_init", [("publisher_handle", "rmw_publisher_handle"), ("timestamp", "_timestamp"), ("gid", "gid")], "publisher_handle"),
    ("rcl_publishers", "ros2:rcl_publisher_init", [("publisher_handle", "publisher_handle"), ("timestamp", "_timestamp"), ("node_handle", "node_handle"), ("rmw_handle", "rmw_publisher_handle"), ("topic_name", "topic_name"), ("depth", "queue_depth")], "publisher_handle"),
    ("rmw_subscriptions", "ros2:rmw_subscription_init", [("subscription_handle", "rmw_subscription_handle"), ("timestamp", "_timestamp"), ("gid", "gid")], "subscription_handle"),
    ("rcl_subscriptions", "ros2:rcl_subscription_init", [("subscription_handle", "subscription_handle"), ("timestamp", "_timestamp"), ("node_handle", "node_handle"), ("rmw_handle", "rmw_subscription_handle"), ("topic_name", "topic_name"), ("depth", "queue_depth")], "subscription_handle"),
    ("subscription_objects", "ros2:rclcpp_subscription_init", [("subscription", "subscription"), ("timestamp", "_timestamp"), ("subscription_handle", "subscription_handle")], "subscription"),
    ("services", "ros2:rcl_service_init", [("service_handle", "service_handle"), ("timestamp", "_timestamp"), ("node_handle", "node_handle"), ("rmw_handle", "rmw_service_handle"), ("service_name", "service_name")], "service_handle"),
    ("clients", "ros2:rcl_client_init", [("client_handle", "client_handle"), ("timestamp", "_timestamp"), ("node_handle", "node_handle"), ("rmw_handle", "rmw_client_handle"), ("service_name", "service_name")], "client_handle"),
    ("timers", "ros2:rcl_timer_init", [("timer_handle", "timer_handle"), ("timestamp", "_timestamp"), ("period", "period"), ("tid", "vtid")], "timer_handle"),
    ("timer_node_links", "ros2:rclcpp_timer_link_node", [("timer_handle", "timer_handle"), ("timestamp", "_timestamp"), ("node_handle", "node_handle")], "timer_handle"),
    ("callback_symbols", "ros2:rclcpp_callback_register", [("callback_object", "callback"), ("timestamp", "_timestamp"), ("symbol", "symbol")], "callback_object"),
    ("lifecycle_state_machines", "ros2:rcl_lifecycle_state_machine_init", [("state_machine_handle", "state_machine"), ("node_handle", "node_handle")], "state_machine_handle"),
    ("rclcpp_publish_instances", "ros2:rclcpp_publish", [("timestamp", "_timestamp"), ("message", "message")], None),
    ("rcl_publish_instances", "ros2:rcl_publish", [("publisher_handle", "publisher_handle"), ("timestamp", "_timestamp"), ("message", "message")], None),
    ("rmw_publish_instances", "ros2:rmw_publish", [("timestamp", "_timestamp"), ("message", "message")], None),
    ("rmw_take_instances", "ros2:rmw_take", [("subscription_handle", "rmw_subscription_handle"), ("timestamp", "_timestamp"), ("message", "message"), ("source_timestamp", "source_timestamp"), ("taken", "taken")], None),
    ("rcl_take_instances", "ros2:rcl_take", [("timestamp", "_timestamp"), ("message", "message")], None),
    ("rclcpp_take_instances", "ros2:rclcpp_take", [("timestamp", "_timestamp"), ("message", "message")], None),
    ("lifecycle_transitions", "ros2:rcl_lifecycle_transition", [("state_machine_handle", "state_machine"), ("start_label", "start_label"), ("goal_label", "goal_label"), ("timestamp", "_timestamp")], None),
]

# callback_objects: (event, reference field): the subscription object, service or timer a
# callback belongs to.
_CALLBACK_OWNERS = [
    ("ros2:rclcpp_subscription_callback_added", "subscription"),
    ("ros2:rclcpp_service_callback_added", "service_handle"),
    ("ros2:rclcpp_timer_callback_added", "timer_handle"),
]

#: The events the ROS 2 data model is built from.
ROS2_EVENTS = sorted(
    {e for _, e, _, _ in _OBJECT_TABLES} | {e for e, _ in _CALLBACK_OWNERS} | {"ros2:callback_start", "ros2:callback_end"}
)


#: CARET's initialization events (``ros2_caret:*``, recorded by libcaret.so instead of, or
#: besides, tracetools' ``ros2:*`` ones) → the ``ros2:*`` event each stands for.
CARET_ALIASES = {
    e.replace("ros2:", "ros2_caret:", 1): e
    for _, e, _, index in _OBJECT_TABLES
    if index is not None
} | {e.replace("ros2:", "ros2_caret:", 1): e for e, _ in _CALLBACK_OWNERS}


def with_caret_events(frames: Dict[str, pd.DataFrame]) -> Dict[str, pd.DataFrame]:
    """``frames`` (one DataFrame per event name) with CARET's initialization events added to the
    ``ros2:*`` events they stand for. CARET records an object again when recording starts (and
    may record it under both names): a CARET event that repeats one before it (same process,
    same payload) is left out, so that each object is in the model once, as tracetools_analysis
    has it from a ``ros2:*`` trace."""
    out = {name: df for name, df in frames.items() if name not in CARET_ALIASES}
    for caret, ros2 in CARET_ALIASES.items():
        extra = frames.get(caret)
        if extra is None or len(extra) == 0:
            continue
        extra = extra.drop(columns=["init_timestamp"], errors="ignore")
        base = out.get(ros2)
        both = extra if base is None else pd.concat([base, extra], ignore_index=True)
        # The payload and the process identify an object; the ros2:* rows come first.
        key = [c for c in both.columns if c == "vpid" or not (c.startswith("_") or c in _CONTEXT_FIELDS)]
        caret_rows = np.arange(len(both)) >= (0 if base is None else len(base))
        repeated = both.astype({c: str for c in key}).duplicated(subset=key, keep="first").to_numpy()
        both = both[~(caret_rows & repeated)]
        out[ros2] = both.sort_values("_timestamp", kind="stable").reset_index(drop=True)
    return out


#: Context fields of an event (not its payload).
_CONTEXT_FIELDS = {"cpu_id", "vpid", "vtid", "pid", "tid", "procname", "hostname"}


def _gid(v):
    """A GID as a list of bytes (tracetools_read's form of an array)."""
    if isinstance(v, str) and v.startswith("["):
        return json.loads(v)
    return v


def _int64(s: pd.Series) -> pd.Series:
    """Unsigned columns as int64, as tracetools_analysis has them (Python ints), when every
    value fits (addresses do): mixing uint64 and int64 would make floats."""
    if s.dtype == np.uint64 and (len(s) == 0 or s.max() < 2**63):
        return s.astype("int64")
    return s


def _column(df: pd.DataFrame, field: str, n: int) -> pd.Series:
    if field in df.columns:
        s = df[field]
        if field == "gid":
            s = s.map(_gid)
        elif field == "taken":
            s = s.astype(bool)
        else:
            s = _int64(s)
        return s.reset_index(drop=True)
    return pd.Series([None] * n, dtype=object)


def _table(events: Dict[str, pd.DataFrame], event: str, columns: List[Tuple[str, str]], index: Optional[str]) -> pd.DataFrame:
    df = events.get(event)
    if df is None or len(df) == 0:
        out = pd.DataFrame({c: pd.Series([], dtype="int64" if c in ("timestamp", "tid", "pid") else object) for c, _ in columns})
    else:
        out = pd.DataFrame({c: _column(df, f, len(df)) for c, f in columns})
    if index is not None:
        out = out.set_index(index, drop=True)
    return out


def _callback_instances(events: Dict[str, pd.DataFrame]) -> pd.DataFrame:
    """tracetools_analysis's pairing: by callback address only, an end closes the last start of
    its address (a start after a start replaces it; an end without a start is dropped)."""
    start = events.get("ros2:callback_start")
    end = events.get("ros2:callback_end")
    empty = pd.DataFrame(
        {
            "callback_object": pd.Series([], dtype="int64"),
            "timestamp": pd.Series([], dtype="datetime64[ns]"),
            "duration": pd.Series([], dtype="timedelta64[ns]"),
            "intra_process": pd.Series([], dtype=bool),
        }
    )
    if start is None or end is None or len(start) == 0 or len(end) == 0:
        return empty
    s = pd.DataFrame(
        {
            "cb": _int64(start["callback"]).to_numpy(),
            "ts": start["_timestamp"].to_numpy(dtype="int64"),
            "kind": np.zeros(len(start), dtype=np.int8),
            "intra": start["is_intra_process"].to_numpy() != 0 if "is_intra_process" in start else np.zeros(len(start), dtype=bool),
            "order": np.arange(len(start)),
        }
    )
    e = pd.DataFrame(
        {
            "cb": _int64(end["callback"]).to_numpy(),
            "ts": end["_timestamp"].to_numpy(dtype="int64"),
            "kind": np.ones(len(end), dtype=np.int8),
            "intra": np.zeros(len(end), dtype=bool),
            "order": np.arange(len(end)),
        }
    )
    # Time order per address, a start before an end of the same time.
    both = pd.concat([s, e], ignore_index=True).sort_values(["cb", "ts", "kind", "order"], kind="stable")
    cb = both["cb"].to_numpy()
    ts = both["ts"].to_numpy(dtype="int64")
    kind = both["kind"].to_numpy()
    intra = both["intra"].to_numpy(dtype=bool)
    # An end whose previous row (same address) is a start closes it (numpy, not shift(): the
    # times stay exact int64).
    paired = np.zeros(len(both), dtype=bool)
    paired[1:] = (kind[1:] == 1) & (kind[:-1] == 0) & (cb[1:] == cb[:-1])
    before = np.flatnonzero(paired) - 1
    out = pd.DataFrame(
        {
            "callback_object": cb[paired],
            "timestamp": ts[before].astype("datetime64[ns]"),
            "duration": (ts[paired] - ts[before]).astype("timedelta64[ns]"),
            "intra_process": intra[before],
            "_end": ts[paired],
        }
    )
    # Rows in the order of their ends, as the events came.
    out = out.sort_values("_end", kind="stable").drop(columns="_end").reset_index(drop=True)
    return out


class Ros2DataModel(DataModel):
    """The ROS 2 data model: the tables of tracetools_analysis's ``Ros2DataModel`` (see
    ``print_data``), built from the events of the traces."""

    def __init__(self) -> None:
        super().__init__()
        for name, _, columns, index in _OBJECT_TABLES:
            setattr(self, name, _table({}, "", columns, index))
        self.callback_objects = pd.DataFrame({"reference": pd.Series([], dtype=object), "timestamp": pd.Series([], dtype="int64"), "callback_object": pd.Series([], dtype=object)}).set_index("reference")
        self.callback_instances = _callback_instances({})

    @classmethod
    def from_events(cls, events: Dict[str, pd.DataFrame]) -> "Ros2DataModel":
        """The model of the events given as one DataFrame per event name (``_timestamp``,
        ``vpid``, ``vtid`` and the payload fields as columns, rows in time order)."""
        m = cls()
        for name, event, columns, index in _OBJECT_TABLES:
            setattr(m, name, _table(events, event, columns, index))
        parts = []
        for event, field in _CALLBACK_OWNERS:
            df = events.get(event)
            if df is not None and len(df):
                parts.append(pd.DataFrame({"reference": _int64(df[field]).to_numpy(), "timestamp": df["_timestamp"].to_numpy(dtype="int64"), "callback_object": _int64(df["callback"]).to_numpy()}))
        if parts:
            co = pd.concat(parts, ignore_index=True).sort_values("timestamp", kind="stable")
            m.callback_objects = co.set_index("reference")
        m.callback_instances = _callback_instances(events)
        m.finalize()
        return m

    def _finalize(self) -> None:
        pass

    def print_data(self) -> None:
        print("====================ROS 2 DATA MODEL===================")
        for title, df in [
            ("Contexts", self.contexts),
            ("Nodes", self.nodes),
            ("Publishers (rmw)", self.rmw_publishers),
            ("Publishers (rcl)", self.rcl_publishers),
            ("Subscriptions (rmw)", self.rmw_subscriptions),
            ("Subscriptions (rcl)", self.rcl_subscriptions),
            ("Subscription objects", self.subscription_objects),
            ("Services", self.services),
            ("Clients", self.clients),
            ("Timers", self.timers),
            ("Timer-node links", self.timer_node_links),
            ("Callback objects", self.callback_objects),
            ("Callback symbols", self.callback_symbols),
            ("Callback instances", self.callback_instances),
            ("Publish instances (rclcpp)", self.rclcpp_publish_instances),
            ("Publish instances (rcl)", self.rcl_publish_instances),
            ("Publish instances (rmw)", self.rmw_publish_instances),
            ("Take instances (rmw)", self.rmw_take_instances),
            ("Take instances (rcl)", self.rcl_take_instances),
            ("Take instances (rclcpp)", self.rclcpp_take_instances),
            ("Lifecycle state machines", self.lifecycle_state_machines),
            ("Lifecycle transitions", self.lifecycle_transitions),
        ]:
            print()
            print(f"{title}:")
            print(df.to_string())
        print("==================================================")
