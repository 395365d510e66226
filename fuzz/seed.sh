#!/usr/bin/env bash
# Seeds the fuzz corpora from the traces in ../shared: metadata files for `metadata`, the first
# 64 KiB of data stream files (prefixed by the index of their trace's metadata) for `stream`.
set -euo pipefail
cd "$(dirname "$0")"
shared=../../shared
mkdir -p corpus/metadata corpus/stream
k=0
find "$shared/traces" "$shared/ctf-edge" -name metadata -type f | sort | while read -r m; do
  k=$((k + 1))
  cp "$m" "corpus/metadata/m$k"
done
traces=(
  traces/tc-ros2-example2
  traces/caret-demos-e2e-jazzy/ust/uid/1000/64-bit
  ctf-edge/tc-bug446190
  ctf-edge/tc-flipping-endianness
  ctf-edge/tc-ctfwriter_JF8nq3
  ctf-edge/tc-funky_trace
  ctf-edge/babeltrace/ctf-traces/succeed/session-rotation/3/ust/pid/10352
)
for i in "${!traces[@]}"; do
  for f in "$shared/${traces[$i]}"/*; do
    [ -f "$f" ] && [ "$(basename "$f")" != metadata ] || continue
    out="corpus/stream/s${i}_$(basename "$f")"
    { printf "\\x$(printf %02x "$i")"; head -c 65536 "$f"; } > "$out"
  done
done
echo "corpus: $(ls corpus/metadata | wc -l) metadata, $(ls corpus/stream | wc -l) stream inputs"
