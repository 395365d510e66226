//! The tracetools ABI of each ROS 2 distribution, served by one library.
//!
//! rcl, rclcpp and rmw of a distribution call `ros_trace_*` with the signatures of that
//! distribution's tracetools, and tools read its traces with that distribution's event layout.
//! The differences from Humble to Rolling (`../shared/spec/ros2-tracepoints.md` §3):
//!
//! | distro | tracetools | events | GID bytes | `rmw_publish` |
//! |---|---|---|---|---|
//! | Humble | 4.1.1 | 28 | 24 | `message` |
//! | Iron | 6.3.1 | 35 | 24 | `message` |
//! | Jazzy | 8.2.4 | 35 | 24 | `rmw_publisher_handle, message, timestamp` |
//! | Kilted | 8.6.0 | 40 | 16 | idem |
//! | Rolling, Lyrical | 8.10.1 | 42 | 16 | idem |
//!
//! A process uses the ABI of `ROSTRACE_DISTRO`, else of `ROS_DISTRO` (set by every ROS 2 setup
//! script), else Rolling's. An unknown name turns tracing off in that process, with a message.

use crate::catalog::{FieldType, Tracepoint, TRACEPOINTS};
use rostrace_ctf_write::{EventDecl, FieldDecl, TraceDecl};
use std::sync::OnceLock;

include!("abis.rs");

/// The ABI used when neither `ROSTRACE_DISTRO` nor `ROS_DISTRO` is set: Rolling's.
pub const DEFAULT: &str = "rolling";

/// The largest GID any ABI has.
pub const MAX_GID_SIZE: usize = 24;

/// The names accepted, for messages.
pub fn names() -> String {
    ABIS.iter().flat_map(|a| std::iter::once(a.name).chain(a.aliases.iter().copied())).collect::<Vec<_>>().join(", ")
}

/// The ABI of a distribution name (case-insensitive).
pub fn by_name(name: &str) -> Result<&'static Abi, String> {
    let n = name.trim().to_ascii_lowercase();
    ABIS.iter()
        .find(|a| a.name == n || a.aliases.contains(&n.as_str()))
        .ok_or_else(|| format!("unknown ROS 2 distribution {name:?} (known: {})", names()))
}

static CURRENT: OnceLock<Result<&'static Abi, String>> = OnceLock::new();

/// Read once per process: the encoding of events (GIDs, `rmw_publish`) asks on every call.
fn env_abi() -> &'static Result<&'static Abi, String> {
    CURRENT.get_or_init(|| {
        for var in [crate::env::DISTRO, crate::env::ROS_DISTRO] {
            if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
                return by_name(&v.to_string_lossy()).map_err(|e| format!("{var}: {e}"));
            }
        }
        by_name(DEFAULT)
    })
}

/// The ABI of this process, from `ROSTRACE_DISTRO`, `ROS_DISTRO` or the default; an error names
/// the variable and its unknown value.
pub fn from_env() -> Result<&'static Abi, String> {
    env_abi().clone()
}

/// Whether this process's ABI is the default's because neither `ROSTRACE_DISTRO` nor
/// `ROS_DISTRO` names one: its distribution is a guess (written into its trace's metadata as
/// `ros_distro_assumed`, so that the analysis says so).
pub fn assumed() -> bool {
    [crate::env::DISTRO, crate::env::ROS_DISTRO].iter().all(|v| std::env::var_os(v).is_none_or(|x| x.is_empty()))
}

/// The ABI of this process (the default's when the environment names an unknown one: tracing
/// is then off, see [`from_env`]).
#[inline]
pub fn current() -> &'static Abi {
    match env_abi() {
        Ok(a) => a,
        Err(_) => &ABIS[ABIS.len() - 1],
    }
}

impl Abi {
    /// Whether the tracepoint exists in this ABI (CARET's events exist in all).
    pub fn has(&self, tp: &Tracepoint) -> bool {
        self.has_since(tp.provider, tp.since)
    }

    /// The payload fields of a tracepoint in this ABI.
    pub fn fields(&self, tp: &Tracepoint) -> Vec<(&'static str, FieldType)> {
        let message_only = message_only_event(tp.provider, tp.name) && self.rmw_publish_message_only();
        tp.fields
            .iter()
            .filter(|(n, _)| !message_only || *n == "message")
            .map(|(n, ty)| {
                let ty = match ty {
                    FieldType::U8Array(_) => FieldType::U8Array(self.gid_size as u32),
                    t => t.clone(),
                };
                (*n, ty)
            })
            .collect()
    }
}

/// The metadata declaration of a trace of a process with `abi`: its events (id = catalog
/// index) with its layout.
pub fn trace_decl(
    abi: &Abi,
    uuid: [u8; 16],
    clock_uuid: [u8; 16],
    clock_offset_ns: i64,
    env: Vec<(String, String)>,
) -> TraceDecl {
    TraceDecl {
        uuid,
        clock_offset_ns,
        clock_uuid,
        env,
        events: TRACEPOINTS
            .iter()
            .map(|t| match abi.has(t) {
                true => EventDecl {
                    name: t.full_name(),
                    fields: abi.fields(t).into_iter().map(|(n, ty)| FieldDecl { name: n.to_string(), ty }).collect(),
                },
                // Not in this distribution: not declared, its id unused.
                false => EventDecl { name: String::new(), fields: Vec::new() },
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::TRACEPOINTS;

    #[test]
    fn event_counts_per_distro() {
        let count = |n: &str| {
            let a = by_name(n).unwrap();
            TRACEPOINTS.iter().filter(|t| t.provider == "ros2" && a.has(t)).count()
        };
        assert_eq!(
            [count("humble"), count("iron"), count("jazzy"), count("kilted"), count("rolling")],
            [28, 35, 35, 40, 42]
        );
        assert_eq!(by_name("Lyrical").unwrap().name, "rolling");
        assert!(by_name("foxy").unwrap_err().contains("humble, iron"));
        let publish = TRACEPOINTS.iter().find(|t| t.name == "rmw_publish").unwrap();
        let humble = by_name("humble").unwrap().fields(publish);
        assert_eq!(humble.iter().map(|f| f.0).collect::<Vec<_>>(), ["message"]);
        let init = TRACEPOINTS.iter().find(|t| t.name == "rmw_publisher_init").unwrap();
        assert_eq!(by_name("jazzy").unwrap().fields(init)[1].1, FieldType::U8Array(24));
        assert_eq!(by_name("kilted").unwrap().fields(init)[1].1, FieldType::U8Array(16));
    }
}
