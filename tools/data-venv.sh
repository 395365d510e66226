#!/usr/bin/env bash
# The notebook tools the export tests read rostrace's exports with, from PyPI:
# pyarrow, pandas, duckdb (Parquet, CSV, SQL over many recordings) and protobuf with
# grpcio-tools (to decode Perfetto traces with Perfetto's own proto definitions); and what
# the Python package's tests need: maturin (to build it), pytest, matplotlib, tqdm, and pyspark
# (rostrace.spark; it needs Java at run time: openjdk-17-jre-headless) with fsspec and aiohttp
# (recordings read over HTTP).
#
#   tools/data-venv.sh [DIR]      -> DIR/data (default DIR: $ROSTRACE_VENV_DIR, else
#                                    /var/tmp/rostrace-ci-cache/venvs)
#
# Reused while its marker lists exactly these packages and they import; else made anew.
set -euo pipefail
DIR="${1:-${ROSTRACE_VENV_DIR:-/var/tmp/rostrace-ci-cache/venvs}}"
PKGS="pyarrow pandas duckdb protobuf grpcio-tools maturin pytest matplotlib tqdm pyspark fsspec aiohttp"
venv="$DIR/data"
marker="$venv/.rostrace-complete"
imports() {
  "$venv/bin/python" -c 'import pyarrow.parquet, pandas, duckdb, google.protobuf, grpc_tools.protoc, pytest, matplotlib, tqdm, pyspark, fsspec, aiohttp' 2>/dev/null &&
    "$venv/bin/maturin" --version >/dev/null 2>&1
}
if [ -f "$marker" ] && [ "$(cat "$marker")" = "$PKGS" ] && imports; then
  echo "data-venv: $venv (cached)"
  exit 0
fi
t0=$SECONDS
rm -rf "$venv"
mkdir -p "$DIR"
"${ROSTRACE_PYTHON:-python3}" -m venv "$venv"
# shellcheck disable=SC2086
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-input $PKGS
imports || { echo "data-venv: $venv: the packages do not import" >&2; exit 1; }
echo "$PKGS" >"$marker"
# The tests' probe of what this machine has (crates/testkit-macros/build.rs) reruns at the next
# build and finds what was just made: the tests that need it are no longer ignored.
touch "$(dirname "$0")/../crates/testkit-macros/build.rs" 2>/dev/null || true
echo "data-venv: $venv (created in $((SECONDS - t0)) s)"
