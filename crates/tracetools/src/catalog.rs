//! The tracepoint catalog, generated from `tracepoints.def`: names, C arguments, CTF fields and
//! the version each appeared in. The CTF metadata of written traces comes from it too.

use crate::GID_SIZE;
pub use rostrace_ctf_write::FieldType;

/// One tracepoint.
#[derive(Debug)]
pub struct Tracepoint {
    /// Provider (`ros2`, `ros2_caret`).
    pub provider: &'static str,
    /// Name within the provider.
    pub name: &'static str,
    /// Initialization event (else runtime).
    pub init: bool,
    /// Version and distribution it appeared in, and later changes.
    pub since: &'static str,
    /// C arguments: (type, name), upstream's.
    pub args: &'static [(&'static str, &'static str)],
    /// CTF payload fields, in order.
    pub fields: &'static [(&'static str, FieldType)],
}

impl Tracepoint {
    /// `provider:name`.
    pub fn full_name(&self) -> String {
        format!("{}:{}", self.provider, self.name)
    }
}

include!(concat!(env!("OUT_DIR"), "/catalog_gen.rs"));

/// Catalog ids of the events whose full name matches one of the `*` patterns.
pub fn matching(patterns: &[&str]) -> Vec<u16> {
    TRACEPOINTS
        .iter()
        .enumerate()
        .filter(|(_, t)| {
            let n = t.full_name();
            patterns.iter().any(|p| glob(p.trim(), &n))
        })
        .map(|(i, _)| i as u16)
        .collect()
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters.
pub fn glob(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, rest) = match parts.split_first() {
        Some(x) => x,
        None => return name.is_empty(),
    };
    if rest.is_empty() {
        return pattern == name;
    }
    let Some(mut tail) = name.strip_prefix(first) else { return false };
    let (last, middle) = rest.split_last().expect("at least one part after a '*'");
    for p in middle {
        match tail.find(p) {
            Some(i) => tail = &tail[i + p.len()..],
            None => return false,
        }
    }
    tail.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forty_two_ros2_tracepoints_in_upstream_order() {
        let ros2: Vec<&str> = TRACEPOINTS.iter().filter(|t| t.provider == "ros2").map(|t| t.name).collect();
        assert_eq!(ros2.len(), 42);
        assert_eq!(ros2[0], "rcl_init");
        assert_eq!(ros2[41], "message_link_partial_sync");
        let rmw_publish = TRACEPOINTS.iter().find(|t| t.name == "rmw_publish").unwrap();
        assert_eq!(
            rmw_publish.fields.iter().map(|f| f.0).collect::<Vec<_>>(),
            ["rmw_publisher_handle", "message", "timestamp"]
        );
        // rclcpp_publish takes the publisher handle but does not record it.
        let p = TRACEPOINTS.iter().find(|t| t.name == "rclcpp_publish").unwrap();
        assert_eq!((p.args.len(), p.fields.len()), (2, 1));
        assert_eq!(id::callback_start as usize, TRACEPOINTS.iter().position(|t| t.name == "callback_start").unwrap());
    }

    #[test]
    fn metadata_parses_with_every_event() {
        let rolling = crate::distro::by_name("rolling").unwrap();
        let text = rostrace_ctf_write::metadata_text(&crate::distro::trace_decl(rolling, [1; 16], [2; 16], 0, vec![]));
        let s = rostrace_ctf::metadata::parse_schema(&text).unwrap();
        assert_eq!(s.streams[0].events.len(), TRACEPOINTS.len());
        let ml = s.event_classes().find(|e| e.name == "ros2:message_link_periodic_async").unwrap();
        assert_eq!(ml.field_names(), ["_subs_length", "subs", "_pubs_length", "pubs"]);
    }

    #[test]
    fn patterns() {
        assert!(glob("ros2:*", "ros2:rcl_init"));
        assert!(!glob("ros2:*", "ros2_caret:rcl_init"));
        assert!(glob("*callback*", "ros2:callback_start"));
        assert_eq!(matching(&["ros2:callback_*"]).len(), 2);
        assert!(glob("*", "") && glob("a*a", "aba") && !glob("a*a", "a") && glob("*b*d", "abcd") && !glob("x", "xy"));
    }
}
