#!/usr/bin/env bash
# Upstream's trace tests against rostrace: ros2_tracing 8.2.2's own test suites, run on the
# Jazzy stack of tools/ros2-tools-jazzy.sh, each file in a pytest process of its own, as
# upstream's CMake registers them.
#
#   tools/upstream-tracing-tests.sh [--library rostrace|upstream|FILE] [--preload]
#                                   [--suite lttng|embedded|launch|ros2trace ...] [DIR] [TEST ...]
#
# The suites (default: all four with rostrace's library, `lttng` alone with another):
#   lttng      test_tracetools' 13 cases unchanged: upstream's TraceTestCase launches its C++ test
#              nodes under an LTTng session it sets up through lttngpy, reads the trace with
#              babeltrace and checks each family of tracepoints; the library under test is in
#              place of the wheels' tracetools.
#   embedded   the same 13 cases through rostrace's TraceTestCase (rostrace.tracetools_test:
#              only the import changed): the nodes launched under rostrace.launch.Trace, recorded
#              by rostrace's embedded tracer (no LTTng), the trace read by rostrace.
#   launch     test_tracetools_launch's 8 cases with rostrace.launch.Trace for tracetools_launch's
#              (only the import and the <trace>/`trace:` tag names changed).
#   ros2trace  test_ros2trace's 12 cases with `ros2 rostrace-trace`, rostrace's `ros2 trace`
#              (only the command name changed), the test nodes loading rostrace's library in its
#              LTTng mode.
# The last line, `N passed, M failed`, counts the lttng and embedded suites together (the 26
# runs of test_tracetools); each suite's counts come above it, each file's above those.
#
# --library rostrace (the default): rostrace's libtracetools.so with ROSTRACE_BACKEND=lttng and
#     rostrace's LTTng-UST provider of Jazzy, as `rostrace record --backend lttng` runs programs.
#     Both come from `rostrace lib` and `rostrace lib --provider` of the rostrace program named by
#     $ROSTRACE (default: target/release/rostrace of this repository, $CARGO_TARGET_DIR's if set,
#     else `rostrace` on PATH). The suites that use rostrace's Python package install the
#     checkout's into the stack's virtualenv first (tools/python-package.sh).
# --library upstream: upstream's tracetools 8.2.4 built with Debian's LTTng-UST, the baseline
#     ($ROSTRACE_VENV_DIR/upstream-8.2.4 of tools/ros2-venvs.sh, else built into DIR once).
# --library FILE: that libtracetools.so.
# DIR: the stack of tools/ros2-tools-jazzy.sh (default: $ROSTRACE_RCLCPP_DIR, else
#     /var/tmp/rostrace-ci-cache/rclcpp-jazzy), which this script brings up to date first.
# TEST: test files of test_tracetools to run (e.g. test_node), default all of them.
#
# The library's directory goes first in LD_LIBRARY_PATH: the test nodes, rcl and the rmw find
# libtracetools.so by its SONAME there, before the wheels' copy. With --preload the library is
# preloaded (LD_PRELOAD) into every process of the run instead, pytest's and launch's included,
# as `rostrace record` runs programs (rostrace's hooks on DDS and rclcpp then load too). A file
# runs within its time limit ($ROSTRACE_UPSTREAM_TESTS_TIMEOUT, default 60 s; five times that for
# test_ros2trace's one file of 12 cases) and is run again
# when it hangs ($ROSTRACE_UPSTREAM_TESTS_TRIES, default 2 runs at most): test_pong's reply to
# test_ping (published volatile, as soon as pong has the transient-local ping; the same in their
# generic twins) is lost when ping's subscription has not matched pong's publisher yet, and ping
# then waits forever, whatever the tracer. A hang is said as such, its output kept.
# LTTng sessions left by a killed run are destroyed; the trace of a failed or killed run is moved
# beside its output.
#
# Exits 1 when any case of any suite run failed, except those listed in EXPECTED_FAILURES below
# (each with why). Each file's pytest output is kept in $ROSTRACE_UPSTREAM_TESTS_OUT (default
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
suites=""
while [ $# -gt 0 ]; do
  case "$1" in
    --suite)
      [ $# -ge 2 ] || die "--suite needs lttng, embedded, launch or ros2trace"
      case "$2" in lttng | embedded | launch | ros2trace) ;; *) die "unknown suite $2" ;; esac
      suites="$suites $2"
      shift 2
      ;;
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

# Every session (TraceTestCase's `session-test-*`, the ros2trace tests' own names): those a run
# leaves (a hung one, killed) are destroyed, or a retry of the same test could not create them.
sessions() { lttng list 2>/dev/null | sed -n 's/^ *[0-9][0-9]*) \([^ ]*\) .*/\1/p' | sort; }
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
  for t in "$@"; do tests+=("${t%.py}.py"); done
else
  tests=()
  for f in "$TESTS_DIR"/test/test_*.py; do tests+=("$(basename "$f")"); done
fi
[ -n "$suites" ] || { [ "$library" = rostrace ] && suites="lttng embedded launch ros2trace" || suites="lttng"; }

# Cases that cannot pass with rostrace, each with why; counted as failures, said as expected.
EXPECTED_FAILURES="
launch:test_trace_action.py::TestTraceAction::test_action_ld_preload the test asks for LTTng-UST's helper libraries (libc, pthread, dl, cyg-profile wrappers) as the only 4 entries of LD_PRELOAD; rostrace's action preloads its own libtracetools.so beside them, and with its default, embedded backend their events (LTTng-UST's) are not recorded
"

# Runs the test files of one suite (in DIR, each in a pytest process of its own) and adds their
# counts to the suite's: suite_p, suite_f, suite_s.
run_files() {
  local dir="$1" label="$2"
  shift 2
  local file name note try before before_traces t0 rc secs p f s case why
  suite_p=0 suite_f=0 suite_s=0 suite_e=0
  cd "$dir"
  for file in "$@"; do
    [ -f "$file" ] || die "$dir/$file: no such test"
    name="$label-$(basename "$file" .py)"
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
    suite_p=$((suite_p + p)) suite_f=$((suite_f + f)) suite_s=$((suite_s + s))
    echo "  $(basename "$file" .py): $p passed, $f failed$([ "$s" = 0 ] || echo ", $s skipped") ($secs s${note})"
    if [ "$f" != 0 ]; then
      # upstream's messages carry whole event lists: each line cut short.
      grep -E '^(E |FAILED|ERROR)' "$OUT/$name.log" | head -n 30 | cut -c1-400 | sed 's/^/    /' || true
      while read -r case; do
        why="$(echo "$EXPECTED_FAILURES" | sed -n "s|^$label:$case ||p")"
        [ -z "$why" ] || { echo "    expected: $why"; suite_e=$((suite_e + 1)); }
      done < <(grep -E '^FAILED' "$OUT/$name.log" | sed 's/^FAILED \([^ ]*\).*/\1/')
      echo "    (whole output: $OUT/$name.log)"
    fi
  done
}

# Copies of upstream's test files (read-only where tests run) with the lines that must change
# changed: sed expressions, then the files.
rewritten() {
  local to="$1" expr="$2"
  shift 2
  rm -rf "$to"
  mkdir -p "$to"
  for f in "$@"; do sed -e "$expr" "$f" >"$to/$(basename "$f")"; done
  echo "$to"
}

# The environment of the rostrace suites: the checkout's Python package in the stack, rostrace's
# library named to it, the processes not told to use LTTng unless the suite says so.
if echo "$suites" | grep -qE 'embedded|launch|ros2trace'; then
  [ "$library" = rostrace ] || die "the embedded, launch and ros2trace suites test rostrace's own tools: --library rostrace"
  "$here/python-package.sh" "$DIR/venv" >&2 || die "installing rostrace's Python package failed"
fi

ALL_P=0 ALL_F=0 ALL_S=0 FAILED=0
for suite in $suites; do
  case "$suite" in
    lttng)
      echo "lttng: test_tracetools, upstream's TraceTestCase and LTTng session, the library under test"
      (run_files "$TESTS_DIR/test" lttng "${tests[@]}"; echo "$suite_p $suite_f $suite_s $suite_e" >"$OUT/.lttng.counts")
      ;;
    embedded)
      echo "embedded: test_tracetools through rostrace's TraceTestCase, rostrace's embedded tracer"
      dir="$(rewritten "$OUT/embedded-tests" 's/^from tracetools_test\.case import TraceTestCase$/from rostrace.tracetools_test.case import TraceTestCase/' \
        "${tests[@]/#/$TESTS_DIR/test/}")"
      (
        unset LD_PRELOAD ROSTRACE_BACKEND ROSTRACE_LTTNG_PROVIDER
        export LD_LIBRARY_PATH="${LD_LIBRARY_PATH#"$LIBDIR":}" ROSTRACE_LIB="$lib"
        run_files "$dir" embedded "${tests[@]}"
        echo "$suite_p $suite_f $suite_s $suite_e" >"$OUT/.embedded.counts"
      )
      ;;
    launch)
      echo "launch: test_tracetools_launch with rostrace.launch.Trace"
      dir="$(rewritten "$OUT/launch-tests" 's/^from tracetools_launch\.action import Trace$/from rostrace.launch import Trace/; s/<trace$/<rostrace/; s/^\( *\)- trace:$/\1- rostrace:/' \
        "$ROSTRACE_ROS2_TOOLS_SRC"/test_tracetools_launch/test/test_tracetools_launch/test_*.py)"
      (
        unset LD_PRELOAD ROSTRACE_BACKEND ROSTRACE_LTTNG_PROVIDER
        export LD_LIBRARY_PATH="${LD_LIBRARY_PATH#"$LIBDIR":}" ROSTRACE_LIB="$lib"
        run_files "$dir" launch $(cd "$dir" && ls test_*.py)
        echo "$suite_p $suite_f $suite_s $suite_e" >"$OUT/.launch.counts"
      )
      ;;
    ros2trace)
      echo "ros2trace: test_ros2trace with \`ros2 rostrace-trace\` (rostrace's \`ros2 trace\`)"
      dir="$(rewritten "$OUT/ros2trace-tests" "s/\['ros2', 'trace', \*args\]/['ros2', 'rostrace-trace', *args]/" \
        "$ROSTRACE_ROS2_TOOLS_SRC"/test_ros2trace/test/test_ros2trace/test_*.py)"
      (
        export ROSTRACE_LIB="$lib"
        # One file of 12 cases, each starting nodes and sessions: about 100 s.
        TIMEOUT=$((TIMEOUT * 5))
        run_files "$dir" ros2trace $(cd "$dir" && ls test_*.py)
        echo "$suite_p $suite_f $suite_s $suite_e" >"$OUT/.ros2trace.counts"
      )
      ;;
  esac
  read -r p f s e <"$OUT/.$suite.counts"
  echo "$suite: $p passed, $f failed$([ "$s" = 0 ] || echo ", $s skipped")$([ "$e" = 0 ] || echo " ($e expected, said why above)")"
  [ "$f" -le "$e" ] || FAILED=1
  if [ "$suite" = lttng ] || [ "$suite" = embedded ]; then
    ALL_P=$((ALL_P + p)) ALL_F=$((ALL_F + f)) ALL_S=$((ALL_S + s))
  fi
done

echo "$ALL_P passed, $ALL_F failed$([ "$ALL_S" = 0 ] || echo ", $ALL_S skipped")"
[ "$FAILED" = 0 ]
