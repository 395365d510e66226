"""``Ros2DataModelUtil``: tracetools_analysis's queries over the ROS 2 data model."""

from typing import Any, Dict, List, Mapping, Optional, Union

import numpy as np
import pandas as pd

from ..data_model.ros2 import Ros2DataModel
from ..processor.ros2 import Ros2Handler
from . import DataModelUtil


def _matching_close(s: str, open_at: int) -> int:
    """The index of the ``>`` closing the template argument list that starts after
    ``open_at`` (the ``<`` at ``open_at + 1`` included in the depth count)."""
    depth = 0
    i = open_at
    while True:
        i += 1
        if s[i] == "<":
            depth += 1
        elif s[i] == ">":
            if depth == 0:
                return i
            depth -= 1


def _as_list(v) -> list:
    return list(v) if isinstance(v, pd.Series) else [v]


class Ros2DataModelUtil(DataModelUtil):
    """Queries over ``Ros2DataModel`` (or over a ``Ros2Handler``: its data)."""

    def __init__(self, data_object: Union[Ros2DataModel, Ros2Handler]) -> None:
        super().__init__(data_object)

    @property
    def data(self) -> Ros2DataModel:
        return super().data  # type: ignore[return-value]

    def _prettify(self, original: str) -> str:
        """A symbol made readable as tracetools_analysis does: no spaces, no
        ``_<std::allocator<void>>``, no ``std::default_delete<...>`` argument, a
        ``std::_Bind<...>`` reduced to the bound member with ``?`` for its object, then the
        spaces after a leading ``void`` and before a trailing ``const`` put back."""
        s = original.replace(" ", "").replace("_<std::allocator<void>>", "")
        dd = "std::default_delete"
        at = s.find(dd)
        if at >= 0:
            s = s[:at] + s[_matching_close(s, at + len(dd)) + 1:]
        bind = "std::_Bind<"
        if s.startswith(bind):
            s = s.replace(bind, "")[:-1]
            star = s.find("*")
            close = s.find(")", star)
            s = s[:star] + "?" + s[close + 1:]
        s = s.replace(",>", ">")
        if s.startswith("void"):
            s = "void " + s[4:]
        if s.endswith("const"):
            s = s[:-5] + " const"
        return s

    def get_callback_symbols(self) -> Mapping[int, str]:
        """Callback object → its symbol, prettified, for every callback that ran (symbols of
        one address registered several times joined with `` and ``)."""
        runs = self.data.callback_instances
        if runs.empty:
            return {}
        symbols = self.data.callback_symbols
        out = {}
        for obj in set(runs["callback_object"]):
            if obj not in symbols.index:
                # Registered before tracing started (tracetools_analysis raises KeyError here).
                out[obj] = f"unknown (no rclcpp_callback_register of 0x{obj:X} in the trace)"
                continue
            found = symbols.loc[obj, "symbol"]
            out[obj] = " and ".join(self._prettify(s) for s in _as_list(found))
        return out

    def get_tids(self) -> List[int]:
        """The threads that created nodes."""
        return self.data.nodes["tid"].unique().tolist()

    def get_rcl_publish_instances(self, topic_name: str) -> Optional[pd.DataFrame]:
        """The rcl publications of every publisher of ``topic_name`` (publisher_handle,
        timestamp as datetime, message), or None when no publisher has that topic."""
        pubs = self.data.rcl_publishers
        handles = pubs.index[pubs["topic_name"] == topic_name]
        if len(handles) == 0:
            return None
        inst = self.data.rcl_publish_instances
        out = inst[inst["publisher_handle"].isin(handles)].reset_index(drop=True)
        return self.convert_time_columns(out, [], ["timestamp"], True)

    def get_publish_instances(self) -> pd.DataFrame:
        """The publications of the three layers in one table: timestamp (datetime), message,
        layer (``rclcpp``, ``rcl``, ``rmw``), publisher_handle (set for rcl only, else 0),
        in time order."""
        parts = []
        for layer, df in (
            ("rclcpp", self.data.rclcpp_publish_instances),
            ("rcl", self.data.rcl_publish_instances),
            ("rmw", self.data.rmw_publish_instances),
        ):
            d = df.copy()
            d["layer"] = layer
            if "publisher_handle" not in d.columns:
                d["publisher_handle"] = 0
            parts.append(d)
        out = pd.concat(parts, axis=0).sort_values("timestamp", kind="stable").reset_index(drop=True)
        return self.convert_time_columns(out, [], ["timestamp"], True)

    def get_take_instances(self) -> pd.DataFrame:
        """The takes of the three layers in one table: timestamp and source_timestamp
        (datetimes), message, layer (``rmw``, ``rcl``, ``rclcpp``), rmw_subscription_handle,
        taken (both set for rmw only), in time order."""
        rmw = self.data.rmw_take_instances.rename(columns={"subscription_handle": "rmw_subscription_handle"})
        rmw = rmw.assign(layer="rmw")
        parts = [rmw]
        for layer, df in (("rcl", self.data.rcl_take_instances), ("rclcpp", self.data.rclcpp_take_instances)):
            parts.append(df.assign(layer=layer, rmw_subscription_handle=0, source_timestamp=0, taken=False))
        out = pd.concat(parts, axis=0).sort_values("timestamp", kind="stable").reset_index(drop=True)
        return self.convert_time_columns(out, [], ["timestamp", "source_timestamp"], True)

    def get_callback_durations(self, callback_obj: int) -> pd.DataFrame:
        """The runs of one callback object: timestamp (start, datetime64[ns]) and duration
        (timedelta64[ns])."""
        runs = self.data.callback_instances
        # The rows of each callback, found once (a scan per call is slow on large traces).
        cache = getattr(self, "_runs_by_callback", None)
        if cache is None or cache[0] is not runs:
            cache = (runs, runs.groupby("callback_object", sort=False).indices, runs[["timestamp", "duration"]])
            self._runs_by_callback = cache
        return cache[2].take(cache[1].get(callback_obj, []))

    def get_node_tid_from_name(self, node_name: str) -> Optional[int]:
        """The thread that created the node named ``node_name`` (None: no such node)."""
        rows = self.data.nodes[self.data.nodes["name"] == node_name]
        assert len(rows) <= 1, "more than 1 node found"
        return None if rows.empty else rows.iloc[0]["tid"]

    def get_node_names_from_tid(self, tid: int) -> Optional[List[str]]:
        """The names of the nodes created by thread ``tid``."""
        return self.data.nodes.loc[self.data.nodes["tid"] == tid, "name"].tolist()

    def get_callback_owner_info(self, callback_obj: int) -> Optional[str]:
        """What a callback belongs to, as text: ``Timer``, ``Publisher``, ``Subscription``,
        ``Service`` or ``Client``, then one ``key: value`` line each (node, tid, topic,
        period, service); None when it cannot be told."""
        objs = self.data.callback_objects
        refs = objs.index[objs["callback_object"] == callback_obj]
        if len(refs) == 0:
            return None
        ref = refs[0]
        for kind, table, lookup in (
            ("Timer", self.data.timers, self.get_timer_handle_info),
            ("Publisher", self.data.rcl_publishers, self.get_publisher_handle_info),
            ("Subscription", self.data.subscription_objects, self.get_subscription_reference_info),
            ("Service", self.data.services, self.get_service_handle_info),
            ("Client", self.data.clients, self.get_client_handle_info),
        ):
            if ref in table.index:
                info = lookup(ref)
                if info is None:
                    return None
                return f"{kind}\n{self.format_info_dict(info, sep=chr(10))}"
        return None

    def get_timer_handle_info(self, timer_handle: int) -> Optional[Mapping[str, Any]]:
        """node, tid and period (``N ms``) of a timer."""
        if timer_handle not in self.data.timers.index or timer_handle not in self.data.timer_node_links.index:
            return None
        node = self.get_node_handle_info(self.data.timer_node_links.loc[timer_handle, "node_handle"])
        if node is None:
            return None
        t = self.data.timers.loc[timer_handle]
        return {**node, "tid": t["tid"], "period": f"{t['period'] / 1000000.0:.0f} ms"}

    def get_publisher_handle_info(self, publisher_handle: int) -> Optional[Mapping[str, Any]]:
        """node, tid and topic of an rcl publisher."""
        return self._owned_handle_info(self.data.rcl_publishers, publisher_handle, "topic_name", "topic")

    def get_subscription_reference_info(self, subscription_reference: int) -> Optional[Mapping[str, Any]]:
        """node, tid and topic of a subscription object (values of several joined with
        `` and ``)."""
        objs = self.data.subscription_objects
        if subscription_reference not in objs.index:
            return None
        subs = self.data.rcl_subscriptions
        infos = []
        topics = []
        for handle in _as_list(objs.loc[subscription_reference, "subscription_handle"]):
            if handle not in subs.index:
                continue
            for node_handle, topic in zip(_as_list(subs.loc[handle, "node_handle"]), _as_list(subs.loc[handle, "topic_name"])):
                info = self.get_node_handle_info(node_handle)
                if info is None:
                    # A node this trace never initialized: the other subscriptions still tell.
                    continue
                infos.append(info)
                topics.append(topic)
        if not infos:
            return None
        node = {k: " and ".join({str(i[k]) for i in infos}) for k in infos[0]}
        return {**node, "topic": " and ".join(topics)}

    def _owned_handle_info(self, table: pd.DataFrame, handle: int, column: str, key: str) -> Optional[Mapping[str, Any]]:
        """node and tid of the node owning ``handle`` in ``table``, and its ``column`` as ``key``."""
        if handle not in table.index:
            return None
        node = self.get_node_handle_info(table.loc[handle, "node_handle"])
        if node is None:
            return None
        return {**node, key: table.loc[handle, column]}

    def get_service_handle_info(self, service_handle: int) -> Optional[Mapping[str, Any]]:
        """node, tid and service of a service server."""
        return self._owned_handle_info(self.data.services, service_handle, "service_name", "service")

    def get_client_handle_info(self, client_handle: int) -> Optional[Mapping[str, Any]]:
        """node, tid and service of a service client."""
        return self._owned_handle_info(self.data.clients, client_handle, "service_name", "service")

    def get_node_handle_info(self, node_handle: int) -> Optional[Mapping[str, Any]]:
        """node (name) and tid of a node handle."""
        nodes = self.data.nodes
        if node_handle not in nodes.index:
            return None
        return {"node": nodes.loc[node_handle, "name"], "tid": nodes.loc[node_handle, "tid"]}

    def get_lifecycle_node_handle_info(self, lifecycle_node_handle: int) -> Optional[Mapping[str, Any]]:
        """``lifecycle node`` (name) and tid of a lifecycle node's handle."""
        info = self.get_node_handle_info(lifecycle_node_handle)
        if not info:
            return None
        return {"tid": info["tid"], "lifecycle node": info["node"]}

    def get_lifecycle_node_state_intervals(self) -> Dict[int, pd.DataFrame]:
        """Lifecycle node handle → its states: state, start_timestamp, end_timestamp
        (datetimes; the first state starts when the node was created, the last has no end)."""
        transitions = self.data.lifecycle_transitions
        if transitions.empty:
            return {}
        out: Dict[int, pd.DataFrame] = {}
        for sm in set(transitions["state_machine_handle"]):
            t = transitions[transitions["state_machine_handle"] == sm]
            node_handle = self.data.lifecycle_state_machines.loc[sm, "node_handle"]
            created = self.data.nodes.loc[node_handle, "timestamp"]
            states = [t["start_label"].iloc[0]] + t["goal_label"].tolist()
            starts = [created] + t["timestamp"].tolist()
            ends = t["timestamp"].tolist() + [np.nan]
            df = pd.DataFrame({"state": states, "start_timestamp": starts, "end_timestamp": ends})
            out[node_handle] = self.convert_time_columns(df, [], ["start_timestamp", "end_timestamp"], True)
        return out

    def format_info_dict(self, info_dict: Mapping[str, Any], sep: str = ", ") -> str:
        """``key: value`` pairs joined by ``sep``."""
        return sep.join(f"{k}: {v}" for k, v in info_dict.items())
