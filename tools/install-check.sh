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

# The rclpy instrumentation (sitecustomize.py and rostrace/rclpy.py) is embedded in the binary too:
# a Python program recorded by the installed rostrace alone must get its callbacks traced.
VENV="${ROSTRACE_VENV_DIR:-/var/tmp/rostrace-ci-cache/venvs}/jazzy"
if [ ! -e "$VENV/.rostrace-complete" ]; then
  if [ "${ROSTRACE_REQUIRE_TOOLS:-}" = 1 ]; then
    echo "install check: no jazzy virtualenv in $VENV (tools/ros2-venvs.sh makes it)" >&2
    exit 1
  fi
  echo "install check: skipped the rclpy check: no jazzy virtualenv in $VENV (tools/ros2-venvs.sh makes it)"
  exit 0
fi
NS="/install_check_$$"
env -u PYTHONPATH -u ROSTRACE_RCLPY -u LD_PRELOAD -u LD_LIBRARY_PATH \
  RMW_IMPLEMENTATION=rmw_fastrtps_cpp ROS_DISTRO=jazzy ROS_DOMAIN_ID=$((1 + $$ % 98)) \
  ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST \
  "$R" record -s py -p "$ROOT" -- "$VENV/bin/python" crates/cli/tests/rclpy/callbacks.py \
  --ns "$NS" --messages 10 --calls 2 > "$ROOT/py.txt"
"$R" analyze --json "$ROOT/py.json" "$ROOT/py" > /dev/null
python3 - "$ROOT/py.txt" "$ROOT/py.json" "$NS" <<'PY'
import json, sys
out, analysis, ns = sys.argv[1:]
system = next(json.loads(l) for l in open(out) if l.startswith('{') and '"processes"' in l)
ran = sum(sum(p['runs'].values()) for p in system['processes'])
runs = sum(c.get('count', 0) for c in json.load(open(analysis))['callbacks']
           if str(c.get('node', '')).startswith(ns + '/'))
if not system['ok'] or ran == 0 or runs != ran:
    sys.exit(f'install check: the Python program ran {ran} callbacks, the installed rostrace recorded {runs}')
print(f'install check: the installed rostrace traced all {runs} rclpy callback runs with its embedded instrumentation')
PY
