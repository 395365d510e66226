//! ROS 2 names: resolving topic and service names against a node, parsing type names.

use crate::{Error, Result};
use ros2_client::{MessageTypeName, Name, NodeName, ServiceTypeName};

/// Parses a topic or service name (absolute `/a/b`, or relative to the node's namespace `a/b`;
/// `~/x` is private to the node) and returns it with its fully qualified form, as the trace records it.
pub(crate) fn resolve(node: &NodeName, name: &str) -> Result<(Name, String)> {
    let bad = |why: String| Error::Name { name: name.to_string(), why };
    let expanded = match name.strip_prefix("~/") {
        Some(rest) => format!("{}/{rest}", node.fully_qualified_name()),
        None => name.to_string(),
    };
    let parsed = Name::parse(&expanded).map_err(|e| bad(e.to_string()))?;
    let full = if parsed.is_absolute() {
        parsed.to_string()
    } else {
        format!("{}/{}", node.namespace().trim_end_matches('/'), parsed)
    };
    Ok((parsed, full))
}

fn split_type(name: &str, middle: &str) -> Result<(String, String)> {
    let parts: Vec<&str> = name.split('/').collect();
    match parts.as_slice() {
        [pkg, ty] if !pkg.is_empty() && !ty.is_empty() => Ok((pkg.to_string(), ty.to_string())),
        [pkg, m, ty] if *m == middle && !pkg.is_empty() && !ty.is_empty() => Ok((pkg.to_string(), ty.to_string())),
        _ => {
            Err(Error::Name { name: name.to_string(), why: format!("expected package/Type or package/{middle}/Type") })
        }
    }
}

/// A message type name, `std_msgs/String` or `std_msgs/msg/String`.
pub(crate) fn message_type(name: &str) -> Result<MessageTypeName> {
    let (pkg, ty) = split_type(name, "msg")?;
    Ok(MessageTypeName::new(&pkg, &ty))
}

/// A service type name, `std_srvs/Trigger` or `std_srvs/srv/Trigger`.
pub(crate) fn service_type(name: &str) -> Result<ServiceTypeName> {
    let (pkg, ty) = split_type(name, "srv")?;
    Ok(ServiceTypeName::new(&pkg, &ty))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_like_rcl() {
        let node = NodeName::new("/demo", "filter").unwrap();
        assert_eq!(resolve(&node, "/points").unwrap().1, "/points");
        assert_eq!(resolve(&node, "points").unwrap().1, "/demo/points");
        assert_eq!(resolve(&node, "a/b").unwrap().1, "/demo/a/b");
        assert_eq!(resolve(&node, "~/state").unwrap().1, "/demo/filter/state");
        let root = NodeName::new("/", "talker").unwrap();
        assert_eq!(resolve(&root, "chatter").unwrap().1, "/chatter");
        assert!(resolve(&node, "bad//name").is_err());
        assert!(message_type("std_msgs/String").is_ok());
        assert!(message_type("std_msgs/msg/String").is_ok());
        assert!(message_type("String").is_err());
        assert!(service_type("std_srvs/srv/Trigger").is_ok());
        assert!(service_type("std_srvs/msg/Trigger").is_err());
    }
}
