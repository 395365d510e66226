"""``rostrace.tracetools_analysis`` against tracetools_analysis's own results: on every trace
with a reference, each callback's symbol, count and durations (count, sum, mean, min, max)
equal the reference's."""

import csv
from pathlib import Path

import pytest

from conftest import SHARED, trace_of
from rostrace.tracetools_analysis.loading import load_file
from rostrace.tracetools_analysis.processor import Processor
from rostrace.tracetools_analysis.processor.ros2 import Ros2Handler
from rostrace.tracetools_analysis.utils.ros2 import Ros2DataModelUtil

REFERENCES = sorted((SHARED / "reference/tracetools_analysis").glob("*.callbacks.csv"))


def test_all_references_are_there():
    assert len(REFERENCES) == 20


def reference(path: Path):
    with open(path, newline="") as f:
        return {int(r["callback_address"]): r for r in csv.DictReader(f)}


@pytest.mark.parametrize("ref", REFERENCES, ids=lambda p: p.name[: -len(".callbacks.csv")])
def test_callbacks_equal_the_reference(ref: Path):
    name = ref.name[: -len(".callbacks.csv")]
    handler = Ros2Handler.process(load_file(str(trace_of(name))))
    util = Ros2DataModelUtil(handler.data)
    symbols = util.get_callback_symbols()
    expected = reference(ref)
    assert set(symbols) == set(expected), f"callback objects differ: {set(symbols) ^ set(expected)}"
    for obj, symbol in symbols.items():
        r = expected[obj]
        d = util.get_callback_durations(obj)["duration"].astype("int64")
        assert symbol == r["symbol"], obj
        assert len(d) == int(r["count"]), obj
        assert int(d.sum()) == int(r["sum_ns"]), obj
        assert int(d.min()) == int(r["min_ns"]) and int(d.max()) == int(r["max_ns"]), obj
        assert abs(d.mean() - float(r["mean_ns"])) <= 0.001, obj


def test_a_converted_file_gives_the_same_model(tmp_path):
    """``convert`` writes tracetools_analysis's pickle file; loading it gives the same model as
    reading the trace."""
    import shutil

    from rostrace.tracetools_analysis.convert import convert

    src = SHARED / "traces/rosworld2021-pingpong"
    trace = tmp_path / "pingpong"
    shutil.copytree(src, trace)
    n = convert(str(trace), quiet=True)
    assert (trace / "converted").is_file()
    from_trace = Ros2Handler.process(load_file(str(trace))).data
    events = load_file(str(trace / "converted"))
    assert isinstance(events, list) and len(events) == n == len(load_file(str(trace)))
    handler = Ros2Handler()
    Processor(handler).process(events)
    from_pickle = handler.data
    for table in ("nodes", "rcl_publishers", "rcl_subscriptions", "timers", "callback_symbols", "callback_objects", "rmw_take_instances"):
        a, b = getattr(from_trace, table), getattr(from_pickle, table)
        assert a.shape == b.shape, table
        assert list(a.columns) == list(b.columns), table
        assert (a.astype(str).values == b.astype(str).values).all(), table
    assert from_trace.callback_instances.equals(from_pickle.callback_instances)


def test_tables_have_tracetools_analysis_columns_and_indexes():
    data = Ros2Handler.process(load_file(str(SHARED / "traces/tc-ros2-example2"))).data
    expect = {
        "contexts": ("context_handle", ["timestamp", "pid", "version"]),
        "nodes": ("node_handle", ["timestamp", "tid", "rmw_handle", "name", "namespace"]),
        "rmw_publishers": ("publisher_handle", ["timestamp", "gid"]),
        "rcl_publishers": ("publisher_handle", ["timestamp", "node_handle", "rmw_handle", "topic_name", "depth"]),
        "rmw_subscriptions": ("subscription_handle", ["timestamp", "gid"]),
        "rcl_subscriptions": ("subscription_handle", ["timestamp", "node_handle", "rmw_handle", "topic_name", "depth"]),
        "subscription_objects": ("subscription", ["timestamp", "subscription_handle"]),
        "services": ("service_handle", ["timestamp", "node_handle", "rmw_handle", "service_name"]),
        "clients": ("client_handle", ["timestamp", "node_handle", "rmw_handle", "service_name"]),
        "timers": ("timer_handle", ["timestamp", "period", "tid"]),
        "timer_node_links": ("timer_handle", ["timestamp", "node_handle"]),
        "callback_objects": ("reference", ["timestamp", "callback_object"]),
        "callback_symbols": ("callback_object", ["timestamp", "symbol"]),
        "lifecycle_state_machines": ("state_machine_handle", ["node_handle"]),
        "callback_instances": (None, ["callback_object", "timestamp", "duration", "intra_process"]),
        "rclcpp_publish_instances": (None, ["timestamp", "message"]),
        "rcl_publish_instances": (None, ["publisher_handle", "timestamp", "message"]),
        "rmw_publish_instances": (None, ["timestamp", "message"]),
        "rmw_take_instances": (None, ["subscription_handle", "timestamp", "message", "source_timestamp", "taken"]),
        "rcl_take_instances": (None, ["timestamp", "message"]),
        "rclcpp_take_instances": (None, ["timestamp", "message"]),
        "lifecycle_transitions": (None, ["state_machine_handle", "start_label", "goal_label", "timestamp"]),
    }
    for table, (index, columns) in expect.items():
        df = getattr(data, table)
        assert list(df.columns) == columns, table
        assert df.index.name == index, table
    assert len(data.nodes) == 3 and sorted(data.nodes["name"]) == ["sink", "source", "sync_one_to_one"]
    assert data.callback_instances["timestamp"].dtype.kind == "M" and data.callback_instances["duration"].dtype.kind == "m"
    # Three publish layers and the take layers, with their counts from the events.
    util = Ros2DataModelUtil(data)
    pubs = util.get_publish_instances()
    assert set(pubs["layer"]) <= {"rclcpp", "rcl", "rmw"} and pubs["publisher_handle"].dtype.kind == "i"
    assert len(pubs) == len(data.rclcpp_publish_instances) + len(data.rcl_publish_instances) + len(data.rmw_publish_instances)
    takes = util.get_take_instances()
    assert len(takes) == len(data.rmw_take_instances) + len(data.rcl_take_instances) + len(data.rclcpp_take_instances)
    a = util.get_rcl_publish_instances("/topic_a")
    assert a is not None and len(a) > 1900 and util.get_rcl_publish_instances("/nope") is None
    tid = util.get_node_tid_from_name("sink")
    assert util.get_node_names_from_tid(tid) == ["sink"]
    owners = {util.get_callback_owner_info(o).split("\n")[0] for o in util.get_callback_symbols()}
    assert owners == {"Timer", "Subscription"}


def test_own_handlers_get_every_event_beside_the_ros2_handler():
    from rostrace.tracetools_analysis.processor import EventHandler

    class StartCounter(EventHandler):
        def __init__(self, **kwargs):
            super().__init__(handler_map={"ros2:callback_start": self._on_start, "ros2:rcl_node_init": self._on_node}, **kwargs)
            self.starts = {}
            self.nodes = []
            self.last = 0

        def _on_start(self, event, metadata):
            assert metadata.timestamp >= self.last and metadata.event_name == "ros2:callback_start"
            self.last = metadata.timestamp
            self.starts[event["callback"]] = self.starts.get(event["callback"], 0) + 1

        def _on_node(self, event, metadata):
            self.nodes.append((event["node_name"], metadata.pid, metadata.tid, metadata.procname))

    events = load_file(str(SHARED / "traces/tc-ros2-example2"))
    ros2, mine = Ros2Handler(), StartCounter()
    p = Processor(ros2, mine)
    p.process(events)
    assert p.get_handler_by_type(StartCounter) is mine
    runs = ros2.data.callback_instances.groupby("callback_object").size().to_dict()
    # Every run started; a start may lack its end only at the end of the trace.
    assert all(mine.starts[cb] - n in (0, 1) for cb, n in runs.items())
    assert sorted(n for n, *_ in mine.nodes) == ["sink", "source", "sync_one_to_one"]
    assert all(pid == tid for _, pid, tid, _ in mine.nodes)
    with pytest.raises(RuntimeError):
        Processor()


def test_a_trace_without_rcl_init_is_refused_as_tracetools_analysis_does():
    events = [{"_name": "ros2:callback_start", "_timestamp": 1, "callback": 5, "is_intra_process": 0, "cpu_id": 0}]
    with pytest.raises(Processor.RequiredEventNotFoundError, match="rcl_init"):
        Ros2Handler.process(events)
    handler = Ros2Handler()
    Processor(handler).process(events, no_required_events_check=True)
    assert handler.data.callback_instances.empty and list(handler.data.nodes.columns) == ["timestamp", "tid", "rmw_handle", "name", "namespace"]


def _caret_event(name, ts, **fields):
    return {"_name": name, "_timestamp": ts, "cpu_id": 0, "vpid": 7, "vtid": 7, "procname": "talker", **fields}


def test_a_caret_trace_loads_from_its_ros2_caret_init_events():
    """CARET records initialization as ``ros2_caret:*`` (and again when recording starts), with
    no ``ros2:rcl_init``: tracetools_analysis refuses such a trace; this layer reads it, each
    object once."""
    e = _caret_event
    events = [
        e("ros2_caret:caret_init", 1, clock_offset=0),
        e("ros2_caret:rcl_init", 2, context_handle=0x10, init_timestamp=1),
        e("ros2_caret:rcl_node_init", 3, node_handle=0x20, rmw_handle=0x21, node_name="talker", namespace="/", init_timestamp=2),
        e("ros2_caret:rcl_timer_init", 4, timer_handle=0x30, period=100, init_timestamp=3),
        e("ros2_caret:rclcpp_timer_callback_added", 5, timer_handle=0x30, callback=0x40, init_timestamp=4),
        e("ros2_caret:rclcpp_timer_link_node", 6, timer_handle=0x30, node_handle=0x20, init_timestamp=5),
        e("ros2_caret:rclcpp_callback_register", 7, callback=0x40, symbol="Talker::on_timer()", init_timestamp=6),
        # Replayed when the recording starts.
        e("ros2_caret:rcl_node_init", 8, node_handle=0x20, rmw_handle=0x21, node_name="talker", namespace="/", init_timestamp=2),
        e("ros2_caret:rclcpp_callback_register", 9, callback=0x40, symbol="Talker::on_timer()", init_timestamp=6),
        e("ros2:callback_start", 10, callback=0x40, is_intra_process=0),
        e("ros2:callback_end", 15, callback=0x40),
        e("ros2:callback_start", 110, callback=0x40, is_intra_process=0),
        e("ros2:callback_end", 120, callback=0x40),
        # A callback registered before tracing started.
        e("ros2:callback_start", 130, callback=0x50, is_intra_process=0),
        e("ros2:callback_end", 131, callback=0x50),
    ]
    data = Ros2Handler.process(events).data
    util = Ros2DataModelUtil(data)
    assert len(data.contexts) == 1 and data.nodes["name"].tolist() == ["talker"]
    symbols = util.get_callback_symbols()
    assert symbols[0x40] == "Talker::on_timer()"
    assert symbols[0x50].startswith("unknown")
    assert util.get_callback_durations(0x40)["duration"].astype("int64").tolist() == [5, 10]
    assert util.get_callback_owner_info(0x40).startswith("Timer")


def test_a_trace_without_any_init_event_is_refused_as_upstream_does():
    events = [_caret_event("ros2:callback_start", 10, callback=0x40, is_intra_process=0)]
    with pytest.raises(Processor.RequiredEventNotFoundError):
        Ros2Handler.process(events)
