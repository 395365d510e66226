#!/usr/bin/env bash
# ROS 2's own tools for Jazzy (launch, ros2cli, ros2_tracing) on the stack of tools/rclcpp-jazzy.sh,
# so that `ros2 launch`, `ros2 run`, `ros2 topic`, `ros2 trace` and upstream's trace tests run
# without /opt/ros.
#
#   tools/ros2-tools-jazzy.sh [DIR]
#   . DIR/env.sh
#   ros2 launch tracetools_launch example.launch.py      # ros2 run, ros2 pkg list, ros2 trace ...
#
# DIR is the rclcpp stack's (default: $ROSTRACE_RCLCPP_DIR, else
# /var/tmp/rostrace-ci-cache/rclcpp-jazzy); this script first runs tools/rclcpp-jazzy.sh on it
# (a second of checks when it is built). It adds:
#   DIR/venv          from PyPI (pinned below): rclpy and the Python libraries of the tools;
#                     from copies of the shared sources (pip, no dependencies): launch, launch_xml,
#                     launch_yaml, launch_testing, launch_pytest, launch_ros, launch_testing_ros,
#                     ros2launch, ros2cli, ros2run, ros2pkg, ros2node, ros2topic, rosidl_runtime_py,
#                     tracetools_trace, tracetools_launch, tracetools_read, tracetools_test,
#                     ros2trace, test_tracetools_launch, test_ros2trace; their data files
#                     (package.xml, launch files, ament index markers) under DIR/venv/share as a
#                     colcon install puts them under its prefix; Debian's babeltrace (1) bindings,
#                     which tracetools_read reads traces with, linked in
#   DIR/install       built with CMake: composition_interfaces (messages), lttngpy (pybind11 binding
#                     of Debian's liblttng-ctl), test_tracetools (its C++ test nodes in
#                     lib/test_tracetools, linked to rclcpp 28.1.6)
#   DIR/tools-src     the copies of the Python packages (setuptools writes beside setup.py) and of
#                     test_tracetools, whose test/ holds upstream's trace tests
#   DIR/env.sh        a block at its end (see write_env_block)
#
# The test nodes link libtracetools.so by its SONAME and no RPATH: the first one in
# LD_LIBRARY_PATH serves them. After `. DIR/env.sh` that is the wheel's (DIR/venv/lib, built without
# an LTTng-UST that Debian's session daemon talks to); put another directory first to trace them
# with rostrace's or upstream's (tools/upstream-tracing-tests.sh does).
#
# Reused while its marker (DIR/.rostrace-tools-complete, written last) holds the same key (this
# script, the rclcpp stack's marker, the interpreter, the sources) and the tools answer; anything
# else installs them again over the stack (tools/rclcpp-jazzy.sh building the stack anew removes
# them with it).
# Sources are only read: $ROSTRACE_TEST_DATA/upstream (default ../../shared beside the repository).
# Needs, besides what tools/rclcpp-jazzy.sh needs: pkg-config, liblttng-ctl-dev, liblttng-ust-dev,
# python3-babeltrace (Debian); apt-get installs what is missing when this runs as root.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
DIR="${1:-${ROSTRACE_RCLCPP_DIR:-/var/tmp/rostrace-ci-cache/rclcpp-jazzy}}"
SHARED="${ROSTRACE_TEST_DATA:-$here/../../shared}"
JOBS="${ROSTRACE_RCLCPP_JOBS:-$(nproc 2>/dev/null || echo 2)}"
UP="$SHARED/upstream"

# Python packages installed from the shared sources, as folder paths under upstream/.
PY_SOURCES="
launch/3.4.3/launch
launch/3.4.3/launch_xml
launch/3.4.3/launch_yaml
launch/3.4.3/launch_testing
launch/3.4.3/launch_pytest
launch_ros/0.26.6/launch_ros
launch_ros/0.26.6/launch_testing_ros
launch_ros/0.26.6/ros2launch
ros2cli/0.32.2/ros2cli
ros2cli/0.32.2/ros2pkg
ros2cli/0.32.2/ros2run
ros2cli/0.32.2/ros2node
ros2cli/0.32.2/ros2topic
rosidl_runtime_py/0.13.1
ros2_tracing/8.2.2/tracetools_trace
ros2_tracing/8.2.2/tracetools_launch
ros2_tracing/8.2.2/tracetools_read
ros2_tracing/8.2.2/tracetools_test
ros2_tracing/8.2.2/ros2trace
ros2_tracing/8.2.2/test_tracetools_launch
ros2_tracing/8.2.2/test_ros2trace
"
# CMake packages, in build order. test_tracetools builds its nodes only with BUILD_TESTING.
CMAKE_SOURCES="
composition_interfaces/2.0.2/composition_interfaces
ros2_tracing/8.2.2/lttngpy
ros2_tracing/8.2.2/test_tracetools
"
# Folders whose content makes the key (everything above lives in them).
KEY_SOURCES="launch/3.4.3 launch_ros/0.26.6 ros2cli/0.32.2 rosidl_runtime_py/0.13.1 ros2_tracing/8.2.2 composition_interfaces/2.0.2"

# From PyPI, pinned. The ros-jazzy-* wheels are the stack's distribution (rclpy is what ros2cli,
# launch_ros and the trace tests' launch service use); the others are the tools' Python
# dependencies at the versions of Ubuntu 24.04 (Jazzy's platform) where PyPI has them, so that
# upstream's tests meet the libraries they were released with (pytest 8 changed the hooks
# launch_testing's plugin implements).
WHEELS="
ros-jazzy-rclpy==7.1.6
ros-jazzy-ament-index-python==1.8.1
ros-jazzy-rpyutils==0.4.2
ros-jazzy-pybind11-vendor==3.1.3
pybind11==2.12.0
osrf-pycommon==2.0.2
PyYAML==6.0.1
psutil==5.9.8
argcomplete==3.1.4
packaging==24.0
pytest==7.4.4
wheel==0.42.0
maturin==1.9.6
pyarrow==26.0.1
pandas==3.1.1
"

log() { echo "ros2-tools-jazzy: $*"; }
die() { echo "ros2-tools-jazzy: $*" >&2; exit 1; }

[ -d "$UP" ] || die "$UP not found (set ROSTRACE_TEST_DATA)"
for s in $PY_SOURCES; do
  [ -f "$UP/$s/setup.py" ] || die "$UP/$s/setup.py not found"
done
for s in $CMAKE_SOURCES; do
  [ -f "$UP/$s/CMakeLists.txt" ] || die "$UP/$s/CMakeLists.txt not found"
done

# The stack first (cached: a second); it takes its own lock, so this script's is another file.
"$here/rclcpp-jazzy.sh" "$DIR"
DIR="$(cd "$DIR" && pwd)"
VENV="$DIR/venv"
PREFIX="$DIR/install"
BUILD="$DIR/build"
SRC="$DIR/tools-src"
MARKER="$DIR/.rostrace-tools-complete"
ENV_BEGIN="# --- ROS 2 tools (tools/ros2-tools-jazzy.sh) ---"

exec 8>"$DIR/.tools-lock"
flock 8

key() {
  local s
  sha256sum "$0" | cut -d' ' -f1
  cat "$DIR/.rostrace-complete"
  "$VENV/bin/python" -c 'import sys; print(sys.version.split()[0])'
  for s in $KEY_SOURCES; do
    echo "$s $(cd "$UP/$s" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)"
  done
}
KEY="$(key)"

# What the trace tests import, and lttngpy's binding answering.
IMPORTS='import babeltrace, launch_ros.actions, tracetools_test.case, composition_interfaces.srv
from lttngpy import impl
assert impl.is_available()'

# Whether the tools answer: the imports the trace tests need, and the commands.
works() {
  (
    # shellcheck disable=SC1091
    . "$DIR/env.sh"
    python -c "$IMPORTS" &&
      ros2 pkg prefix test_tracetools >/dev/null && ros2 pkg prefix tracetools_launch >/dev/null &&
      [ -x "$PREFIX/lib/test_tracetools/test_ping" ]
  ) >/dev/null 2>&1
}

if [ -f "$MARKER" ] && [ "$(cat "$MARKER")" = "$KEY" ] && grep -qxF "$ENV_BEGIN" "$DIR/env.sh" && works; then
  log "$DIR (cached)"
  exit 0
fi

# --- Tools -------------------------------------------------------------------------------------

need_debian() {
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing Debian packages: $*"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1 ||
      { apt-get update -qq && apt-get install -y -qq --no-install-recommends "$@" >/dev/null; } ||
      die "apt-get install $* failed"
  else
    die "missing tools: install the Debian packages: $*"
  fi
}
missing=""
command -v pkg-config >/dev/null || missing="$missing pkg-config"
pkg-config --exists lttng-ctl 2>/dev/null || missing="$missing liblttng-ctl-dev"
pkg-config --exists lttng-ust 2>/dev/null || missing="$missing liblttng-ust-dev"
# tracetools_read reads traces with babeltrace 1's bindings, which PyPI does not have.
BT_DIR=/usr/lib/python3/dist-packages/babeltrace
[ -f "$BT_DIR/babeltrace.py" ] || missing="$missing python3-babeltrace"
# shellcheck disable=SC2086
[ -z "$missing" ] || need_debian $missing

# --- Install -----------------------------------------------------------------------------------

rm -f "$MARKER"
t_all=$SECONDS

step() {
  local name="$1"; shift
  if ! "$@" >"$DIR/tools-$name.log" 2>&1; then
    tail -n 60 "$DIR/tools-$name.log" >&2
    die "$name failed (whole log: $DIR/tools-$name.log)"
  fi
}

# shellcheck disable=SC1091
. "$DIR/env.sh"
SITE="$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
PY_INSTALL="$PREFIX/lib/python3.11/site-packages"

t0=$SECONDS
# shellcheck disable=SC2086
step pip python -m pip install --disable-pip-version-check --no-input $WHEELS
log "PyPI packages ($((SECONDS - t0)) s)"

# The copies: setuptools writes egg-info and build/ beside setup.py. test_tracetools is copied
# too, for its test/ (the trace tests run from there, as ament runs them from the source tree).
t0=$SECONDS
copy_sources() {
  local s
  rm -rf "$SRC"
  mkdir -p "$SRC"
  for s in $PY_SOURCES ros2_tracing/8.2.2/test_tracetools; do
    cp -R "$UP/$s" "$SRC/$(basename "$s")"
  done
  # rosidl_runtime_py's folder is named by its version.
  mv "$SRC/0.13.1" "$SRC/rosidl_runtime_py"
  chmod -R u+w "$SRC"
}
step copy copy_sources
install_python() {
  local dirs=() s
  for s in $PY_SOURCES; do
    s="$(basename "$s")"
    [ "$s" = 0.13.1 ] && s=rosidl_runtime_py
    dirs+=("$SRC/$s")
  done
  # --force-reinstall: the same version from changed sources is installed again.
  python -m pip install --disable-pip-version-check --no-input --no-deps --no-build-isolation \
    --force-reinstall "${dirs[@]}"
}
step pip-sources install_python
log "Python packages from the shared sources ($((SECONDS - t0)) s)"

# colcon installs the scripts of a package whose setup.cfg says install_scripts=$base/lib/PKG
# there, off PATH (`ros2 run PKG SCRIPT` finds them); pip put them in DIR/venv/bin.
place_scripts() {
  python - "$SRC" "$VENV" <<'EOF'
import configparser, importlib.metadata as md, os, shutil, sys
src, venv = sys.argv[1:]
for pkg in sorted(os.listdir(src)):
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(src, pkg, "setup.cfg"))
    target = cfg.get("install", "install_scripts", fallback="")
    if target != f"$base/lib/{pkg}":
        continue
    try:
        eps = md.distribution(pkg).entry_points
    except md.PackageNotFoundError:
        continue
    for ep in eps:
        if ep.group != "console_scripts":
            continue
        dest = os.path.join(venv, "lib", pkg)
        os.makedirs(dest, exist_ok=True)
        shutil.move(os.path.join(venv, "bin", ep.name), os.path.join(dest, ep.name))
        print(f"{pkg}: {ep.name} -> lib/{pkg}")
EOF
}
step scripts place_scripts

ln -sfn "$BT_DIR" "$SITE/babeltrace"
# The CMake packages' Python modules (lttngpy, the messages' bindings) are installed under
# DIR/install, as in a colcon install; the interpreter finds them there.
echo "$PY_INSTALL" >"$SITE/rostrace-ros2-tools.pth"

# ament_lint_auto has no wheel. test_tracetools' CMakeLists.txt asks for it (for its lint tests,
# not its nodes): this config gives its one macro, which finds the package's test dependencies
# as the real one does; no linter is installed, so no lint test is registered.
SHIMS="$BUILD/tools-cmake"
mkdir -p "$SHIMS/ament_lint_auto"
cat >"$SHIMS/ament_lint_auto/ament_lint_autoConfig.cmake" <<'EOF'
# Written by tools/ros2-tools-jazzy.sh: ament_lint_auto without linters.
macro(ament_lint_auto_find_test_dependencies)
  ament_package_xml()
  foreach(_dep ${${PROJECT_NAME}_TEST_DEPENDS})
    find_package("${_dep}" QUIET)
  endforeach()
endmacro()
EOF

build_package() {
  local src="$UP/$1" name extra=()
  name="$(basename "$1")"
  case "$name" in
    test_tracetools) extra=(-DBUILD_TESTING=ON -Dament_lint_auto_DIR="$SHIMS/ament_lint_auto") ;;
    # The vendor package's wheel only depends on pybind11's, which has the CMake config.
    lttngpy) extra=(-DBUILD_TESTING=OFF -Dpybind11_DIR="$(python -m pybind11 --cmakedir)") ;;
    *) extra=(-DBUILD_TESTING=OFF) ;;
  esac
  rm -rf "${BUILD:?}/$name"
  cmake -S "$src" -B "$BUILD/$name" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$PREFIX" \
    -DPython3_EXECUTABLE="$VENV/bin/python" \
    "${extra[@]}" &&
    cmake --build "$BUILD/$name" -j "$JOBS" &&
    cmake --install "$BUILD/$name"
}
for s in $CMAKE_SOURCES; do
  t0=$SECONDS
  step "$(basename "$s")" build_package "$s"
  log "$(basename "$s"): built and installed in $PREFIX ($((SECONDS - t0)) s)"
done

# Every package where the ament index says it is, as colcon would have it.
check_index() {
  local s name prefix
  for s in $PY_SOURCES $CMAKE_SOURCES; do
    name="$(basename "$s")"
    [ "$name" = 0.13.1 ] && name=rosidl_runtime_py
    prefix="$(ros2 pkg prefix "$name")" || { echo "ros2 pkg prefix $name failed"; return 1; }
    [ -f "$prefix/share/$name/package.xml" ] || { echo "$prefix/share/$name/package.xml missing"; return 1; }
  done
}

# --- env.sh ------------------------------------------------------------------------------------

# rclpy's wheels bring libraries directories (site-packages/ros_*.libs) the stack's env.sh does not
# name: its LD_LIBRARY_PATH stops the wheels' bootstrapper from adding them itself.
write_env_block() {
  local d more=""
  for d in "$SITE"/ros_*.libs; do
    case ":$LD_LIBRARY_PATH:" in *":$d:"*) ;; *) more="$more:$d" ;; esac
  done
  cat <<EOF
$ENV_BEGIN
# launch, ros2cli (ros2 launch/run/pkg/node/topic), ros2_tracing's tools (ros2 trace,
# tracetools_launch, tracetools_test) and test_tracetools' nodes: see tools/ros2-tools-jazzy.sh.
export LD_LIBRARY_PATH="\$LD_LIBRARY_PATH$more"
# Copies of the tools' sources; test_tracetools/test holds upstream's trace tests.
export ROSTRACE_ROS2_TOOLS_SRC="$SRC"
EOF
}
# The block goes at the end, replacing the one a previous run wrote.
sed -i "/^$(printf '%s' "$ENV_BEGIN" | sed 's/[][\/.*^$]/\\&/g')\$/,\$d" "$DIR/env.sh"
write_env_block >>"$DIR/env.sh"

# --- Check, then mark complete -----------------------------------------------------------------

t0=$SECONDS
check() {
  (
    # shellcheck disable=SC1091
    . "$DIR/env.sh"
    check_index &&
      python -c "$IMPORTS" &&
      ros2 launch --show-args tracetools_launch example.launch.py &&
      ros2 run tracetools_trace trace --help >/dev/null &&
      ros2 trace --help >/dev/null &&
      ros2 topic list --no-daemon >/dev/null &&
      ROS_DOMAIN_ID=232 timeout 60 ros2 run test_tracetools test_publisher
  )
}
step check check
log "ros2 launch, run, topic and trace answer ($((SECONDS - t0)) s)"

echo "$KEY" >"$MARKER"
# The tests' probe of what this machine has (crates/testkit-macros/build.rs) reruns at the next
# build and finds what was just made (rclcpp's stack and these tools): the tests that need them
# are no longer ignored.
touch "$here/../crates/testkit-macros/build.rs" 2>/dev/null || true
log "$DIR (installed in $((SECONDS - t_all)) s)"
