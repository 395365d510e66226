//! The tables' schema: every table and column once, with its type and meaning. The writers,
//! the README's schema and the tests all read it from here.

/// A column's type. Times and durations are integers in ns (times since the Unix epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// 64-bit signed integer.
    I64,
    /// 64-bit unsigned integer (addresses, handles).
    U64,
    /// 64-bit floating point number.
    F64,
    /// Boolean.
    Bool,
    /// UTF-8 string.
    Str,
}

impl Kind {
    /// The type's name in the README: Parquet's logical type.
    pub fn name(self) -> &'static str {
        match self {
            Kind::I64 => "int64",
            Kind::U64 => "uint64",
            Kind::F64 => "double",
            Kind::Bool => "boolean",
            Kind::Str => "string",
        }
    }
}

/// A column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Name.
    pub name: String,
    /// Type.
    pub kind: Kind,
    /// Meaning (and unit).
    pub doc: &'static str,
}

/// A table of the analysis.
#[derive(Debug, Clone)]
pub struct Table {
    /// Name: the directory the table's files go to.
    pub name: &'static str,
    /// What a row is.
    pub doc: &'static str,
    /// Columns.
    pub columns: Vec<Column>,
}

/// The columns: the recording's name, then `spec`, with the trace's host after the trace (where
/// `spec` has no host of its own): every row says which host it comes from.
fn cols(spec: &[(&str, Kind, &'static str)]) -> Vec<Column> {
    let mut v = vec![Column { name: "recording".into(), kind: Kind::Str, doc: "the export's name (`--name`)" }];
    let hosted = spec.iter().any(|c| c.0 == "host");
    for (n, k, d) in spec {
        v.push(Column { name: n.to_string(), kind: *k, doc: d });
        if *n == TRACE.0 && !hosted {
            v.push(Column { name: HOST.0.into(), kind: HOST.1, doc: HOST.2 });
        }
    }
    v
}

use Kind::*;

const TRACE: (&str, Kind, &str) = ("trace", I64, "trace index within the recording (see `traces`)");
const HOST: (&str, Kind, &str) =
    ("host", Str, "the trace's host (see `traces`; `name#machine` where one host name is several machines)");
const VPID: (&str, Kind, &str) = ("vpid", I64, "process id");
const VTID: (&str, Kind, &str) = ("vtid", I64, "thread id");
const CREATED: (&str, Kind, &str) = ("created_ns", I64, "time of the initialization event");

/// Publishers or subscriptions.
fn endpoints(name: &'static str, doc: &'static str, handle: &'static str, rmw: &'static str) -> Table {
    Table {
        name,
        doc,
        columns: cols(&[
            TRACE,
            VPID,
            ("handle", U64, handle),
            ("rmw_handle", U64, rmw),
            ("node", Str, "node (null: unknown)"),
            ("topic", Str, "topic"),
            ("depth", I64, "queue depth"),
            ("gid", Str, "rmw GID, hex"),
            CREATED,
        ]),
    }
}

/// Every table of the analysis, in export order (the raw events, `events/<name>`, follow).
pub fn tables() -> Vec<Table> {
    vec![
        Table {
            name: "traces",
            doc: "one per trace read",
            columns: cols(&[
                TRACE,
                ("directory", Str, "the trace's directory"),
                ("host", Str, "host name from the trace's metadata"),
            ]),
        },
        Table {
            name: "processes",
            doc: "one per (trace, vpid)",
            columns: cols(&[
                TRACE,
                VPID,
                ("host", Str, "host name"),
                ("procname", Str, "process name"),
                ("events", I64, "events of the process"),
                ("ros_events", I64, "ROS 2 events of the process"),
                ("tracetools_version", Str, "from `rcl_init` (null: unknown)"),
                ("distribution", Str, "from CARET's `caret_init` (null: unknown)"),
            ]),
        },
        Table {
            name: "nodes",
            doc: "one per node",
            columns: cols(&[
                TRACE,
                VPID,
                ("handle", U64, "rcl node handle"),
                ("node", Str, "full name, `/ns/name`"),
                ("namespace", Str, "namespace"),
                CREATED,
            ]),
        },
        endpoints("publishers", "one per publisher", "rcl publisher handle", "rmw publisher handle"),
        endpoints("subscriptions", "one per subscription", "rcl subscription handle", "rmw subscription handle"),
        Table {
            name: "timers",
            doc: "one per timer; an executor's own (rclpy's spin_once timeouts: no node, no callback, in a process that records its callbacks' owners) are left out",
            columns: cols(&[
                TRACE,
                VPID,
                ("handle", U64, "rcl timer handle"),
                ("node", Str, "node (null: unknown)"),
                ("period_ns", I64, "period"),
                CREATED,
            ]),
        },
        Table {
            name: "services",
            doc: "one per service server or client",
            columns: cols(&[
                TRACE,
                VPID,
                ("handle", U64, "rcl service or client handle"),
                ("rmw_handle", U64, "rmw handle"),
                ("side", Str, "`server` or `client`"),
                ("node", Str, "node (null: unknown)"),
                ("service", Str, "service name"),
                CREATED,
            ]),
        },
        Table {
            name: "callbacks",
            doc: "one per callback object, with its statistics",
            columns: cols(&[
                TRACE,
                VPID,
                ("callback", U64, "address of the callback object"),
                ("node", Str, "owning node (empty: unknown)"),
                ("kind", Str, "`subscription`, `timer`, `service`, `client` (rclpy) or `unknown`"),
                ("owner", Str, "subscription topic, service name or client's service name (null for timers)"),
                ("timer_period_ns", I64, "timer period (null: not a timer)"),
                ("symbol", Str, "function symbol"),
                ("runs", I64, "completed runs"),
                ("unfinished", I64, "runs still open when the trace ended"),
                ("total_ns", I64, "summed duration of the completed runs"),
                ("duration_min_ns", I64, "shortest run (null: no run)"),
                ("duration_mean_ns", F64, "mean duration (null: no run)"),
                ("duration_p50_ns", I64, "median duration"),
                ("duration_p90_ns", I64, "90th percentile"),
                ("duration_p99_ns", I64, "99th percentile"),
                ("duration_max_ns", I64, "longest run"),
                ("period_mean_ns", F64, "mean time between starts (null: fewer than two runs)"),
            ]),
        },
        Table {
            name: "topics",
            doc: "one per topic, over all traces",
            columns: cols(&[
                ("topic", Str, "topic"),
                ("publishes", I64, "publications"),
                ("takes", I64, "takes"),
                ("matched", I64, "takes matched to their publication"),
                ("unmatched", I64, "takes not matched"),
                ("dropped", I64, "publications a subscription never took (null: cannot be known)"),
                ("pub_to_take_mean_ns", F64, "mean publish → take latency (null: no match)"),
                ("pub_to_take_p99_ns", I64, "99th percentile"),
                ("pub_to_take_max_ns", I64, "maximum"),
                ("pub_to_callback_mean_ns", F64, "mean publish → callback start latency"),
                ("pub_to_callback_p99_ns", I64, "99th percentile"),
                ("pub_to_callback_max_ns", I64, "maximum"),
            ]),
        },
        Table {
            name: "topic_pairs",
            doc: "one per publishing process's node → subscribing process's node of a topic, with the latencies of the messages \
                  between them (a topic's pairs can differ where the topic, pooled, does not)",
            columns: cols(&[
                ("topic", Str, "topic"),
                ("publisher_node", Str, "publishing node (empty: unknown)"),
                ("publisher_vpid", I64, "publishing process"),
                ("publisher_host", Str, "its host"),
                ("subscription_node", Str, "subscribing node (empty: unknown)"),
                ("subscription_vpid", I64, "subscribing process"),
                ("subscription_host", Str, "its host"),
                ("messages", I64, "messages matched between them"),
                ("pub_to_take_mean_ns", F64, "mean publish → take latency"),
                ("pub_to_take_p99_ns", I64, "99th percentile"),
                ("pub_to_take_max_ns", I64, "maximum"),
                ("pub_to_callback_mean_ns", F64, "mean publish → callback start latency (null: none known)"),
                ("pub_to_callback_p99_ns", I64, "99th percentile"),
                ("pub_to_callback_max_ns", I64, "maximum"),
            ]),
        },
        Table {
            name: "callback_runs",
            doc: "one per callback run (`callback_start` to `callback_end`)",
            columns: cols(&[
                ("run", I64, "run id (row number)"),
                TRACE,
                VPID,
                VTID,
                ("callback", U64, "address of the callback object"),
                ("node", Str, "owning node (empty: unknown)"),
                ("kind", Str, "callback kind"),
                ("start_ns", I64, "callback_start"),
                ("end_ns", I64, "callback_end (null: still running when the trace ended)"),
                ("duration_ns", I64, "end − start (null: unfinished)"),
                ("intra_process", Bool, "`is_intra_process` of callback_start"),
            ]),
        },
        Table {
            name: "publications",
            doc: "one per message published, across the rclcpp/rcl/rmw/DDS layers of one thread",
            columns: cols(&[
                ("publication", I64, "publication id (row number)"),
                TRACE,
                VPID,
                VTID,
                ("topic", Str, "topic (null: no rcl publisher in the trace owns the rmw publisher: the middleware's own, as rmw_fastrtps_cpp's `ros_discovery_info`, published at each entity created, or one created before tracing began)"),
                ("publisher", U64, "rcl publisher handle (null: as for `topic`)"),
                ("message", U64, "message address"),
                ("ts_ns", I64, "first layer's event"),
                ("rclcpp_ns", I64, "rclcpp_publish (null: absent)"),
                ("rcl_ns", I64, "rcl_publish"),
                ("rmw_ns", I64, "rmw_publish"),
                ("dds_ns", I64, "DDS write"),
                ("source_timestamp_ns", I64, "DDS source timestamp"),
                ("intra_process", Bool, "intra-process publication"),
                ("callback_run", I64, "the run it was published from (`callback_runs.run`)"),
            ]),
        },
        Table {
            name: "takes",
            doc: "one per take of a message by a subscription",
            columns: cols(&[
                ("take", I64, "take id (row number)"),
                TRACE,
                VPID,
                VTID,
                ("topic", Str, "topic (null: unknown)"),
                ("subscription", U64, "rmw subscription handle (null: CARET dispatch)"),
                ("message", U64, "message address"),
                ("ts_ns", I64, "time of the take"),
                ("source_timestamp_ns", I64, "DDS source timestamp (null: absent)"),
                ("taken", Bool, "whether a message was taken"),
                ("intra_process", Bool, "intra-process delivery"),
                ("callback_run", I64, "the run it led to (`callback_runs.run`)"),
            ]),
        },
        Table {
            name: "flows",
            doc: "one per message matched from its publication to its take",
            columns: cols(&[
                ("publication", I64, "`publications.publication`"),
                ("take", I64, "`takes.take`"),
                ("topic", Str, "topic"),
                ("matched_by", Str, "`source_timestamp`, `publish_window` or `intra_process`"),
                ("publish_ns", I64, "publication time"),
                ("take_ns", I64, "take time"),
                ("callback_start_ns", I64, "start of the callback run it led to (null: unknown)"),
                ("pub_to_take_ns", I64, "publish → take"),
                ("pub_to_callback_ns", I64, "publish → callback start (null: unknown)"),
                ("publisher_host", Str, "the publication's host (a message between hosts: its latency is within the hosts' clock alignment, `docs/multi-host.md`)"),
                ("take_host", Str, "the take's host"),
            ]),
        },
        Table {
            name: "service_calls",
            doc: "one per service request, as the client sent it or the server took it",
            columns: cols(&[
                TRACE,
                VPID,
                VTID,
                ("side", Str, "`client` or `server`"),
                ("rmw_handle", U64, "rmw client or service handle"),
                ("service", Str, "service name (null: unknown)"),
                ("sequence", I64, "sequence number"),
                ("request_ns", I64, "sent (client) or taken (server)"),
                ("response_ns", I64, "response taken (client) or sent (server); null: none"),
                ("callback_run", I64, "the run that served it (server side)"),
            ]),
        },
        Table {
            name: "executor_threads",
            doc: "one per executor thread: time in each executor phase",
            columns: cols(&[
                TRACE,
                VPID,
                VTID,
                ("get_next_ns", I64, "getting the next executable"),
                ("wait_ns", I64, "waiting for work"),
                ("execute_ns", I64, "executing"),
                ("executions", I64, "executables run"),
            ]),
        },
        Table {
            name: "paths",
            doc: "one per end-to-end path exported (`--path`, `--named-path`): how its messages went and their latency \
                  (written only when paths are asked for; [paths.md](paths.md))",
            columns: cols(&[
                ("path", Str, "the path's label (`/a -/t1-> /b -/t2-> /c`), as `rostrace e2e` and `rostrace diff` name it"),
                ("nodes", Str, "its nodes, comma-separated"),
                ("topics", Str, "its topics, comma-separated"),
                ("records", I64, "records: messages of the first topic (more where a node republishes)"),
                ("complete", I64, "records that went the whole way"),
                ("superseded", I64, "dropped at the input of a node that uses the latest message"),
                ("lost", I64, "dropped elsewhere"),
                ("in_flight", I64, "on the way when the trace ended"),
                ("latency_mean_ns", F64, "mean latency of the complete records (null: none)"),
                ("latency_min_ns", I64, "shortest"),
                ("latency_p50_ns", I64, "median (nearest rank)"),
                ("latency_p99_ns", I64, "99th percentile (nearest rank)"),
                ("latency_max_ns", I64, "longest"),
            ]),
        },
        Table {
            name: "path_messages",
            doc: "one per record of an exported path (a message followed along it), as `rostrace e2e` follows it",
            columns: cols(&[
                ("path", Str, "`paths.path`"),
                ("record", I64, "the record's index, in the order of its first event"),
                ("start_ns", I64, "its first event (the first topic's publication, or the first callback's start)"),
                ("end_ns", I64, "its last event along the path (null: it got nowhere)"),
                ("latency_ns", I64, "end-to-end latency (null: not complete)"),
                ("status", Str, "`complete`, `superseded`, `lost` or `in_flight`"),
            ]),
        },
    ]
}

/// The table `name` of [`tables`] (one this crate writes: a name not in the schema is a bug).
pub(crate) fn table(name: &str) -> Table {
    tables().into_iter().find(|t| t.name == name).unwrap_or_else(|| panic!("table {name} in the schema"))
}

/// The tables written only when end-to-end paths are asked for ([`crate::write_paths`]).
pub const PATH_TABLES: [&str; 2] = ["paths", "path_messages"];

/// The columns every raw event table starts with (`events/<provider>.<event>`); the event's
/// context and payload fields follow, one column each.
pub fn event_columns() -> Vec<Column> {
    cols(&[TRACE, ("timestamp_ns", I64, "event time"), ("cpu", I64, "CPU (null: unknown)")])
}

/// The schema as a Markdown table per table (the README's).
pub fn markdown() -> String {
    let mut s = String::new();
    for t in tables() {
        s.push_str(&format!("**`{}`**: {}.\n\n| column | type | meaning |\n|---|---|---|\n", t.name, t.doc));
        for c in &t.columns {
            s.push_str(&format!("| `{}` | {} | {} |\n", c.name, c.kind.name(), c.doc));
        }
        s.push('\n');
    }
    s.push_str("**`events/<provider>.<event>`**: one per event of that name (`ros2.callback_start`, ...).\n\n| column | type | meaning |\n|---|---|---|\n");
    for c in event_columns() {
        s.push_str(&format!("| `{}` | {} | {} |\n", c.name, c.kind.name(), c.doc));
    }
    s.push_str("| *context fields* | by field | the event's context (`vpid`, `vtid`, `procname`, ...) |\n");
    s.push_str("| *payload fields* | by field | integers as int64/uint64, floats as double, strings and enumeration labels as string, arrays and structures as JSON strings |\n");
    s
}
