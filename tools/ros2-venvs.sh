#!/usr/bin/env bash
# Real ROS 2 stacks for the real-stack tests (crates/cli/tests/real_ros2.rs), from PyPI wheels.
#
#   tools/ros2-venvs.sh [DIR]
#
# DIR (default: $ROSTRACE_VENV_DIR, else /var/tmp/rostrace-ci-cache/venvs) receives:
#   DIR/kilted                 virtualenv: rclpy 9.x, rmw_fastrtps_cpp, std_msgs, std_srvs, sensor_msgs,
#                              geometry_msgs (tracetools 8.6.0)
#   DIR/jazzy                  virtualenv: the same for Jazzy (tracetools 8.2.4)
#   DIR/upstream-8.6.0         upstream tracetools 8.6.0 built against the system's LTTng-UST (the oracle)
#   DIR/upstream-8.2.4         the same, 8.2.4
#
# Each is reused when it is complete and works (a marker written last, `import rclpy` runs, the
# library exists), so a second run takes about a second; an incomplete one is made anew.
# Upstream's sources come from ../shared/upstream beside the repository ($ROSTRACE_TEST_DATA).
# Environment: ROSTRACE_PYTHON (the interpreter for the virtualenvs, default python3),
# ROSTRACE_VENV_DISTROS (default "kilted jazzy").
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
DIR="${1:-${ROSTRACE_VENV_DIR:-/var/tmp/rostrace-ci-cache/venvs}}"
PYTHON="${ROSTRACE_PYTHON:-python3}"
SHARED="${ROSTRACE_TEST_DATA:-$here/../../shared}"
DISTROS="${ROSTRACE_VENV_DISTROS:-kilted jazzy}"

mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"

packages() {
  case "$1" in
    kilted) echo "ros-rclpy ros-rmw-fastrtps-cpp ros-std-msgs ros-std-srvs ros-sensor-msgs ros-geometry-msgs" ;;
    jazzy) echo "ros-jazzy-rclpy ros-jazzy-rmw-fastrtps-cpp ros-jazzy-std-msgs ros-jazzy-std-srvs ros-jazzy-sensor-msgs ros-jazzy-geometry-msgs" ;;
    *) echo "unknown distro $1" >&2; return 1 ;;
  esac
}

tracetools_version() {
  case "$1" in
    kilted) echo 8.6.0 ;;
    jazzy) echo 8.2.4 ;;
  esac
}

# Whether the virtualenv imports everything the test system uses.
venv_works() {
  local venv="$1"
  [ -x "$venv/bin/python" ] || return 1
  "$venv/bin/python" -c 'import rclpy, std_msgs.msg, std_srvs.srv, sensor_msgs.msg, geometry_msgs.msg, rclpy.qos' >/dev/null 2>&1
}

# DIR/<distro>: made anew unless its marker says it holds exactly these packages and it works.
make_venv() {
  local distro="$1" venv="$DIR/$1" pkgs marker
  pkgs="$(packages "$distro")"
  marker="$venv/.rostrace-complete"
  if [ -f "$marker" ] && [ "$(cat "$marker")" = "$pkgs" ] && venv_works "$venv"; then
    echo "ros2-venvs: $venv (cached)"
    return 0
  fi
  local t0=$SECONDS
  rm -rf "$venv"
  "$PYTHON" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-input $pkgs
  if ! venv_works "$venv"; then
    echo "ros2-venvs: $venv: 'import rclpy' fails after the install:" >&2
    "$venv/bin/python" -c 'import rclpy, std_msgs.msg, std_srvs.srv' >&2 || true
    return 1
  fi
  echo "$pkgs" >"$marker"
  made=1
  echo "ros2-venvs: $venv (created in $((SECONDS - t0)) s)"
}

# DIR/upstream-<version>/libtracetools.so: upstream's tracetools built with the system's LTTng-UST.
make_upstream() {
  local version="$1" out="$DIR/upstream-$1"
  local marker="$out/.rostrace-complete"
  if [ -f "$marker" ] && [ -f "$out/libtracetools.so" ]; then
    echo "ros2-venvs: $out (cached)"
    return 0
  fi
  local build="$SHARED/upstream/build-tracetools.sh"
  if [ ! -x "$build" ]; then
    echo "ros2-venvs: $build not found: upstream tracetools $version not built" >&2
    return 1
  fi
  rm -rf "$out"
  "$build" "$version" "$out" >"$DIR/upstream-$version.log" 2>&1 || {
    cat "$DIR/upstream-$version.log" >&2
    return 1
  }
  touch "$marker"
  made=1
  echo "ros2-venvs: $out (built)"
}

status=0
made=0
for d in $DISTROS; do
  make_venv "$d" || status=1
  make_upstream "$(tracetools_version "$d")" || status=1
done
# The tests' probe of what this machine has (crates/testkit-macros/build.rs) reruns at the next
# build and finds what was just made: the tests that need it are no longer ignored.
if [ "$made" = 1 ]; then touch "$here/../crates/testkit-macros/build.rs" 2>/dev/null || true; fi
exit $status
