#!/usr/bin/env bash
# Installs rostrace as a user would (cargo install, into a temporary root) and records a traced
# C program with the installed binary alone: the library it preloads is the one embedded in it.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(mktemp -d)
trap 'rm -rf "$ROOT"' EXIT
cargo install --quiet --offline --locked --path crates/cli --root "$ROOT"
export XDG_CACHE_HOME="$ROOT/cache"
R="$ROOT/bin/rostrace"
# Installed binaries carry no debug info (the release profile's), which would make them 6x larger.
if readelf -S "$R" | grep -q '\.debug_info'; then
  echo "install check: the installed rostrace carries debug info ($(du -h "$R" | cut -f1))" >&2
  exit 1
fi
LIB=$("$R" lib)
INC="${CARGO_TARGET_DIR:-target}/release/include"
printf '#include "tracetools/tracetools.h"\nint main(void) { ros_trace_rcl_init((const void *)1); ros_trace_rcl_node_init((const void *)2, (const void *)3, "n", "/"); return 0; }\n' > "$ROOT/p.c"
cc -I "$INC" "$ROOT/p.c" -o "$ROOT/p" "$LIB"
"$R" record -s check -p "$ROOT" -- "$ROOT/p" > "$ROOT/out.txt"
# rcl_init, rcl_node_init, and CARET's caret_init (once per process, from rcl_init)
grep -q "3 events, 1 process" "$ROOT/out.txt" || { cat "$ROOT/out.txt"; echo "install check: unexpected summary" >&2; exit 1; }
echo "install check: cargo install, then the installed rostrace recorded 3 events with its embedded libtracetools.so"
