#!/usr/bin/env bash
# Run T: the rows of run S that missed, again, with disturbed program points measured a
# second time (`Options::revisit`, the default since this run). Defaults otherwise; the
# calibration run S stored.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runT-revisit}
mkdir -p "$OUT"
{ date -u +%H:%M:%S; cat /proc/loadavg; } > "$OUT/started.txt"
"$PC" validate --suite paper --save "$OUT" \
  --only 'seq(inc, inc)' --only 'seq(inc, nop)' --only 'tpool(2, qsort)' \
  --only 'pipe(inc, inc)' --only 'pipe(inc, nop)' --only 'tpool(2, seq(qsort, nop))' \
  --only 'tpool(2, seq(inc, qsort))' --only 'tpool(2, seq(inc, inc))' --only 'tpool(2, seq(inc, nop))' \
  --only 'mapreduce(map, reduce_per_key, nodes=1, threads=2, keys=768, per_key=x)' \
  > "$OUT/stdout.txt" 2> "$OUT/stderr.txt"
{ date -u +%H:%M:%S; cat /proc/loadavg; } > "$OUT/finished.txt"
