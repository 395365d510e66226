#!/usr/bin/env bash
# Builds the checkout's Python package (python/: rostrace, its native module, rostrace.launch,
# its ros2cli commands, rostrace.tracetools_test) and installs it into a virtualenv.
#
#   tools/python-package.sh VENV
#
# The build keeps its directory ($ROSTRACE_PYTHON_TARGET, else $CARGO_TARGET_DIR/python-package,
# else target/python-package: the one python/tests/pytest.rs builds in), so an unchanged checkout
# costs seconds and a change rebuilds rostrace's crates only. The virtualenv needs maturin (and
# pyarrow, pandas to import the package); tools/data-venv.sh and tools/ros2-tools-jazzy.sh put
# them in theirs. Installed without dependencies, without build isolation: offline.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
VENV="${1:?usage: tools/python-package.sh VENV}"
[ -x "$VENV/bin/python" ] || { echo "python-package: $VENV/bin/python not found" >&2; exit 2; }
"$VENV/bin/python" -m maturin --version >/dev/null 2>&1 || [ -x "$VENV/bin/maturin" ] ||
  { echo "python-package: no maturin in $VENV" >&2; exit 2; }
TARGET="${ROSTRACE_PYTHON_TARGET:-${CARGO_TARGET_DIR:-$here/../target}/python-package}"
t0=$SECONDS
PATH="$VENV/bin:$PATH" CARGO_TARGET_DIR="$TARGET" "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
  --no-input --no-deps --no-build-isolation --force-reinstall "$here/../python"
echo "python-package: rostrace installed into $VENV ($((SECONDS - t0)) s)"
