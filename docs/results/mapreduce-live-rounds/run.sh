#!/usr/bin/env bash
# The two-thread MapReduce rows of the paper suite, live, under --protocol rounds, with the caller-maps runtime and
# the uneven-spin busy-job calibration (the one stored by `perfcompose bench --overhead`).
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/mapreduce-live-rounds}
mkdir -p "$OUT"
{ date -u +%H:%M:%S; cat /proc/loadavg; } > "$OUT/started.txt"
"$PC" validate --suite paper --protocol rounds \
  --only "mapreduce(map, reduce_pairwise, nodes=1, threads=2, keys=x, per_key=768)" \
  --only "mapreduce(map, reduce_per_key, nodes=1, threads=2, keys=768, per_key=x)" \
  --save "$OUT" > "$OUT/stdout.txt" 2> "$OUT/stderr.txt"
{ date -u +%H:%M:%S; cat /proc/loadavg; } > "$OUT/finished.txt"
