// The tracetools ABI of each distribution: included by the library (`distro.rs`) and by
// `build.rs` (which builds an LTTng-UST provider per ABI), so that both use one table.

/// One distribution's tracetools ABI.
#[derive(Debug, PartialEq, Eq)]
pub struct Abi {
    /// `humble`, `iron`, `jazzy`, `kilted`, `rolling`.
    pub name: &'static str,
    /// Other names of the same ABI (`lyrical` for Rolling's).
    pub aliases: &'static [&'static str],
    /// The tracetools version recorded by `rcl_init`.
    pub version: &'static str,
    /// `version` as numbers.
    pub number: (u32, u32, u32),
    /// `TRACETOOLS_GID_STORAGE_SIZE`.
    pub gid_size: usize,
}

/// Every ABI, oldest first.
pub static ABIS: [Abi; 5] = [
    Abi { name: "humble", aliases: &[], version: "4.1.1", number: (4, 1, 1), gid_size: 24 },
    Abi { name: "iron", aliases: &[], version: "6.3.1", number: (6, 3, 1), gid_size: 24 },
    Abi { name: "jazzy", aliases: &[], version: "8.2.4", number: (8, 2, 4), gid_size: 24 },
    Abi { name: "kilted", aliases: &[], version: "8.6.0", number: (8, 6, 0), gid_size: 16 },
    Abi { name: "rolling", aliases: &["lyrical"], version: "8.10.1", number: (8, 10, 1), gid_size: 16 },
];

impl Abi {
    /// Whether a tracepoint of `provider` that appeared in `since` (the catalog's column: a
    /// version first, e.g. `3.1.0 Humble`) exists in this ABI; CARET's events exist in all.
    pub fn has_since(&self, provider: &str, since: &str) -> bool {
        let version = || -> Option<(u32, u32, u32)> {
            let mut it = since.split_whitespace().next()?.split('.').map(|p| p.parse::<u32>().ok());
            Some((it.next()??, it.next()??, it.next()??))
        };
        provider != "ros2" || version().is_some_and(|v| v <= self.number)
    }

    /// Humble and Iron: `ros_trace_rmw_publish(const void * message)`, and the event's only
    /// field is `message`.
    pub fn rmw_publish_message_only(&self) -> bool {
        self.number < (8, 0, 0)
    }
}

/// Events whose only field is `message` in Humble and Iron: `ros2:rmw_publish` (its function
/// then takes the message only) and CARET's `ros2_caret:dds_write` (caret_trace's `tp.h`: the
/// `rmw_publisher_handle, message, timestamp` layout under `ROS_DISTRO_JAZZY` only).
pub fn message_only_event(provider: &str, name: &str) -> bool {
    matches!((provider, name), ("ros2", "rmw_publish") | ("ros2_caret", "dds_write"))
}

/// The ROS 2 distribution a tracetools version (`rcl_init.version`) belongs to, by its name as
/// people write it (older ones than [`ABIS`] included, for their traces).
pub fn of_version(version: &str) -> Option<&'static str> {
    let mut it = version.split('.').map(|p| p.parse::<u32>().ok());
    let major = it.next()??;
    let minor = it.next().flatten().unwrap_or(0);
    Some(match (major, minor) {
        (0, _) => "Dashing/Eloquent",
        (1, _) => "Foxy",
        (2, _) => "Galactic",
        (3, _) => "Rolling (before Humble)",
        (4, _) => "Humble",
        (5, _) => "Rolling (before Iron)",
        (6, _) => "Iron",
        (7, _) => "Rolling (before Jazzy)",
        (8, 0..=2) => "Jazzy",
        (8, 3..=4) => "Rolling (before Kilted)",
        (8, 5..=6) => "Kilted",
        _ => "Rolling",
    })
}
