#!/usr/bin/env bash
# Upstream's trace tests against a libtracetools.so: the 13 pytest files of ros2_tracing 8.2.2's
# test_tracetools, unchanged (upstream's TraceTestCase launches test_tracetools' C++ nodes under
# an LTTng session it sets up through lttngpy, reads the trace with babeltrace and checks each
# family of tracepoints), with the chosen library in place of the wheels' tracetools.
#
#   tools/upstream-tracing-tests.sh [--library rostrace|upstream|FILE] [--preload] [DIR] [TEST ...]
#
# --library rostrace (the default): rostrace's libtracetools.so with ROSTRACE_BACKEND=lttng and
#     rostrace's LTTng-UST provider of Jazzy, as `rostrace record --backend lttng` runs programs.
#     Both come from `rostrace lib` and `rostrace lib --provider` of the rostrace program named by
#     $ROSTRACE (default: target/release/rostrace of this repository, $CARGO_TARGET_DIR's if set,
#     else `rostrace` on PATH).
# --library upstream: upstream's tracetools 8.2.4 built with Debian's LTTng-UST, the baseline
#     ($ROSTRACE_VENV_DIR/upstream-8.2.4 of tools/ros2-venvs.sh, else built into DIR once).
# --library FILE: that libtracetools.so.
# DIR: the stack of tools/ros2-tools-jazzy.sh (default: $ROSTRACE_RCLCPP_DIR, else
#     /var/tmp/rostrace-ci-cache/rclcpp-jazzy), which this script brings up to date first.
# TEST: test files to run (e.g. test_node), default all of test_tracetools/test/test_*.py.
#
# The library's directory goes first in LD_LIBRARY_PATH: the test nodes, rcl and the rmw find
# libtracetools.so by its SONAME there, before the wheels' copy. With --preload the library is
# preloaded (LD_PRELOAD) into every process of the run instead, pytest's and launch's included,
# as `rostrace record` runs programs (rostrace's hooks on DDS and rclcpp then load too). Each test file runs in a pytest
# process of its own, as upstream's CMake registers them, with its time limit
# ($ROSTRACE_UPSTREAM_TESTS_TIMEOUT, default 60 s). A file that hangs is run again
# ($ROSTRACE_UPSTREAM_TESTS_TRIES, default 2 runs at most): test_pong's reply to test_ping
# (published volatile, as soon as pong has the transient-local ping; the same in their generic
# twins) is lost when ping's subscription has not matched pong's publisher yet, and ping then
# waits forever, whatever the tracer. A hang is said as such, its output kept.
# LTTng sessions left by a killed run are destroyed; the trace of a failed or killed run is moved
# beside its output.
#
# Prints one line per test file and ends with the line `N passed, M failed`; exits 1 when any
# failed. Each file's pytest output is kept in $ROSTRACE_UPSTREAM_TESTS_OUT (default
# DIR/upstream-tests/<library>). TRACETOOLS_TEST_DEBUG=1 keeps the traces (upstream's switch).
# Takes the lock of rostrace's LTTng tests ($TMPDIR/rostrace-lttng-tests.lock) while it runs.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
SHARED="${ROSTRACE_TEST_DATA:-$here/../../shared}"
TIMEOUT="${ROSTRACE_UPSTREAM_TESTS_TIMEOUT:-60}"
TRIES="${ROSTRACE_UPSTREAM_TESTS_TRIES:-2}"
UPSTREAM_VERSION=8.2.4

die() { echo "upstream-tracing-tests: $*" >&2; exit 2; }

library=rostrace
preload=""
while [ $# -gt 0 ]; do
  case "$1" in
    --library)
      [ $# -ge 2 ] || die "--library needs rostrace, upstream or a file"
      library="$2"
      shift 2
      ;;
    --preload) preload=1 && shift ;;
    -*) die "unknown option $1" ;;
    *) break ;;
  esac
done
DIR="${ROSTRACE_RCLCPP_DIR:-/var/tmp/rostrace-ci-cache/rclcpp-jazzy}"
if [ $# -gt 0 ] && [ "${1#test_}" = "$1" ]; then
  DIR="$1"
  shift
fi

"$here/ros2-tools-jazzy.sh" "$DIR" >&2
DIR="$(cd "$DIR" && pwd)"

# The library, and what it needs in the environment of the traced processes.
lib_env=()
case "$library" in
  rostrace)
    if [ -n "${ROSTRACE:-}" ]; then
      rt="$ROSTRACE"
    elif [ -x "${CARGO_TARGET_DIR:-$here/../target}/release/rostrace" ]; then
      rt="${CARGO_TARGET_DIR:-$here/../target}/release/rostrace"
    else
      rt="$(command -v rostrace)" || die "no rostrace program: build it (cargo build --release -p rostrace -p rostrace-tracetools) or set ROSTRACE"
    fi
    lib="$(ROS_DISTRO=jazzy "$rt" lib)" || die "$rt lib failed"
    provider="$(ROS_DISTRO=jazzy "$rt" lib --provider)" || die "$rt lib --provider failed: rostrace's LTTng backend is not available"
    lib_env=(ROSTRACE_BACKEND=lttng ROSTRACE_DISTRO=jazzy "ROSTRACE_LTTNG_PROVIDER=$provider")
    ;;
  upstream)
    lib="${ROSTRACE_VENV_DIR:-/var/tmp/rostrace-ci-cache/venvs}/upstream-$UPSTREAM_VERSION/libtracetools.so"
    if [ ! -f "$lib" ]; then
      out="$DIR/upstream-tracetools-$UPSTREAM_VERSION"
      lib="$out/libtracetools.so"
      [ -f "$lib" ] || "$SHARED/upstream/build-tracetools.sh" "$UPSTREAM_VERSION" "$out" >&2 ||
        die "building upstream tracetools $UPSTREAM_VERSION failed"
    fi
    ;;
  *) lib="$library" ;;
esac
[ -f "$lib" ] || die "$lib: no such library"
lib="$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")"
label="$library"
[ -f "$library" ] && label=file
[ -z "$preload" ] || label="$label-preload"

# shellcheck disable=SC1091
. "$DIR/env.sh"
TESTS_DIR="$ROSTRACE_ROS2_TOOLS_SRC/test_tracetools"
OUT="${ROSTRACE_UPSTREAM_TESTS_OUT:-$DIR/upstream-tests/$label}"
rm -rf "$OUT"
mkdir -p "$OUT"

# A directory holding only the library under its SONAME's name: the one in front of the path.
LIBDIR="$OUT/lib"
mkdir -p "$LIBDIR"
ln -sfn "$lib" "$LIBDIR/libtracetools.so"
export LD_LIBRARY_PATH="$LIBDIR:$LD_LIBRARY_PATH"
unset LD_PRELOAD ROSTRACE_SESSION_DIR ROSTRACE_BACKEND ROSTRACE_LTTNG_PROVIDER ROSTRACE_DISTRO
[ ${#lib_env[@]} -eq 0 ] || export "${lib_env[@]}"
mode="first in LD_LIBRARY_PATH"
# Discovery kept on this machine and off the default domain: other ROS 2 programs running here
# would otherwise meet the test nodes.
export ROS_DOMAIN_ID="${ROSTRACE_UPSTREAM_TESTS_DOMAIN:-97}"
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST

used="$(ldd "$ROSTRACE_RCLCPP_PREFIX/lib/test_tracetools/test_ping" | sed -n 's/^\s*libtracetools\.so => \(\S*\).*/\1/p')"
[ "$used" = "$LIBDIR/libtracetools.so" ] || die "the test nodes would load $used, not $lib"

exec 7>"${TMPDIR:-/tmp}/rostrace-lttng-tests.lock"
flock 7
command -v lttng >/dev/null || die "lttng not found (Debian: lttng-tools)"
# Started before the preload: the session daemon loads no tracer.
pgrep -x lttng-sessiond >/dev/null || lttng-sessiond --daemonize >/dev/null 2>&1 || die "cannot start lttng-sessiond"
if [ -n "$preload" ]; then
  export LD_PRELOAD="$LIBDIR/libtracetools.so"
  mode="preloaded"
fi
echo "library: $lib ($label, $mode)${lib_env[*]:+, ${lib_env[*]}}"

sessions() { lttng list 2>/dev/null | sed -n 's/^ *[0-9][0-9]*) \(session-test-[^ ]*\) .*/\1/p' | sort; }
# The trace directories TraceTestCase writes (it removes one only when the test got past setUp).
TRACES="${TMPDIR:-/tmp}"
traces() { find "$TRACES" -maxdepth 1 -name 'session-test-*' -type d 2>/dev/null | sort; }

# The counts of one run of a test file: "passed failed skipped" from its JUnit report.
counts() {
  python - "$1" <<'EOF'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except (OSError, ET.ParseError):
    print("0 0 0")
    sys.exit()
suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
t = sum(int(s.get("tests", 0)) for s in suites)
f = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
s = sum(int(s.get("skipped", 0)) for s in suites)
print(t - f - s, f, s)
EOF
}

if [ $# -gt 0 ]; then
  tests=()
  for t in "$@"; do tests+=("$TESTS_DIR/test/${t%.py}.py"); done
else
  tests=("$TESTS_DIR"/test/test_*.py)
fi

cd "$TESTS_DIR"
total_p=0 total_f=0 total_s=0
for file in "${tests[@]}"; do
  [ -f "$file" ] || die "$file: no such test"
  name="$(basename "$file" .py)"
  note=""
  for ((try = 1; try <= TRIES; try++)); do
    before="$(sessions)" before_traces="$(traces)"
    t0=$SECONDS
    set +e
    # SIGINT first: the launch service then shuts its nodes down and destroys its session.
    timeout -s INT -k 20 "$TIMEOUT" python -m pytest -p no:cacheprovider -q -rfE \
      --junitxml="$OUT/$name.xml" "$file" >"$OUT/$name.log" 2>&1
    rc=$?
    set -e
    secs=$((SECONDS - t0))
    for s in $(comm -13 <(echo "$before") <(sessions)); do
      lttng destroy "$s" >/dev/null 2>&1 || true
    done
    # A failed or killed run's trace is kept beside its output; TRACETOOLS_TEST_DEBUG keeps all.
    if [ -z "${TRACETOOLS_TEST_DEBUG:-}" ]; then
      for d in $(comm -13 <(echo "$before_traces") <(traces)); do
        if [ "$rc" = 0 ]; then rm -rf "$d"; else rm -rf "$OUT/${d##*/}" && mv "$d" "$OUT/"; fi
      done
    fi
    [ "$rc" = 124 ] || [ "$rc" = 137 ] || break
    note="$note; run $try hung ($TIMEOUT s, $name.hung-$try.log)"
    mv "$OUT/$name.log" "$OUT/$name.hung-$try.log"
  done
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    read -r p f s <<<"0 1 0"
  else
    read -r p f s <<<"$(counts "$OUT/$name.xml")"
    # pytest stopped before its report (a crash, an import error): one failure.
    [ $((p + f + s)) -gt 0 ] || [ "$rc" = 0 ] || f=1
  fi
  total_p=$((total_p + p)) total_f=$((total_f + f)) total_s=$((total_s + s))
  echo "$name: $p passed, $f failed$([ "$s" = 0 ] || echo ", $s skipped") ($secs s${note})"
  if [ "$f" != 0 ]; then
    # upstream's messages carry whole event lists: each line cut short.
    grep -E '^(E |FAILED|ERROR)' "$OUT/$name.log" | head -n 30 | cut -c1-400 | sed 's/^/    /' || true
    echo "    (whole output: $OUT/$name.log)"
  fi
done

echo "$total_p passed, $total_f failed$([ "$total_s" = 0 ] || echo ", $total_s skipped")"
[ "$total_f" = 0 ]
