//! The distributions' table of docs/abi.md and the one of the crate's docs say what the ABI
//! table (`src/abis.rs`, the only place that knows distro names and versions) and the catalog
//! say: names, tracetools version, `ros2:` events, GID size, `rmw_publish` fields.

use tracetools::catalog::{Tracepoint, TRACEPOINTS};
use tracetools::distro::{Abi, ABIS};

/// One row per ABI as the tables write it: names, version, events, GID bytes, rmw_publish.
fn expected(abi: &Abi) -> (Vec<String>, String, usize, usize, bool) {
    let names = std::iter::once(abi.name).chain(abi.aliases.iter().copied()).map(str::to_lowercase).collect();
    let events = TRACEPOINTS.iter().filter(|t: &&Tracepoint| t.provider == "ros2" && abi.has(t)).count();
    (names, abi.version.to_string(), events, abi.gid_size, abi.rmw_publish_message_only())
}

/// The table rows of `text` whose first cell names distributions (backquoted or capitalized).
fn rows(text: &str) -> Vec<(Vec<String>, String, usize, usize, bool)> {
    let known: Vec<String> =
        ABIS.iter().flat_map(|a| std::iter::once(a.name).chain(a.aliases.iter().copied())).map(String::from).collect();
    text.lines()
        .map(|l| l.trim_start_matches("//!").trim())
        .filter(|l| l.starts_with('|'))
        .filter_map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            let names: Vec<String> =
                cells.first()?.split(',').map(|n| n.trim().trim_matches('`').to_lowercase()).collect();
            if cells.len() < 5 || !names.iter().all(|n| known.contains(n)) {
                return None;
            }
            let message_only = cells[4].trim_matches('`') == "message" || cells[4].starts_with("`message` (");
            Some((names, cells[1].to_string(), cells[2].parse().ok()?, cells[3].parse().ok()?, message_only))
        })
        .collect()
}

#[test]
fn distribution_tables_match_the_abi_table() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let want: Vec<_> = ABIS.iter().map(expected).collect();
    for file in [root.join("../../docs/abi.md"), root.join("src/distro.rs")] {
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert_eq!(rows(&text), want, "{}: the distributions' table differs from src/abis.rs", file.display());
    }
}
