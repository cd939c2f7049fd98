#!/usr/bin/env bash
# Run V: the rows of run T again, live, with the repetitions' minimum as the statistic (the
# default since d9e0e8a: it also decides the revisits). Defaults otherwise; the
# calibration run S stored. Host checks before and after, as in run S.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runV-minimum}
EX=$(dirname "$PC")/examples
mkdir -p "$OUT"
{ date -u +%H:%M:%S; cat /proc/loadavg; } > "$OUT/started.txt"
{ "$EX/cpu_gaps"; "$EX/co_runner"; "$PC" bench inc --sizes 4096,16384,262144; } > "$OUT/host-before.txt" 2>&1
"$PC" validate --suite paper --save "$OUT" \
  --only 'seq(inc, inc)' --only 'seq(inc, nop)' --only 'tpool(2, qsort)' \
  --only 'pipe(inc, inc)' --only 'pipe(inc, nop)' --only 'tpool(2, seq(qsort, nop))' \
  --only 'tpool(2, seq(inc, qsort))' --only 'tpool(2, seq(inc, inc))' --only 'tpool(2, seq(inc, nop))' \
  --only 'mapreduce(map, reduce_per_key, nodes=1, threads=2, keys=768, per_key=x)' \
  > "$OUT/stdout.txt" 2> "$OUT/stderr.txt"
{ date -u +%H:%M:%S; cat /proc/loadavg; } > "$OUT/finished.txt"
{ "$EX/cpu_gaps"; "$EX/co_runner"; "$PC" bench inc --sizes 4096,16384,262144; } > "$OUT/host-after.txt" 2>&1
