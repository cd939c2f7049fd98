#!/usr/bin/env bash
# Run Y: the paper suite's 31 judged rows only (n <= cores; `--only` with their 23 terms,
# a MapReduce keeping its three images), with the build whose revisits keep the faster
# visit under the minimum (5b9f7c3 on). Host checks and a fresh calibration first, as in
# run S.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runY-judged}
EX=$(dirname "$PC")/examples
TERMS=(
  'seq(qsort, nop)' 'seq(qsort, inc)' 'seq(inc, qsort)' 'seq(inc, inc)' 'seq(inc, nop)'
  'tpool(1, qsort)' 'tpool(2, qsort)'
  'pipe(qsort, nop)' 'pipe(qsort, inc)' 'pipe(inc, qsort)' 'pipe(inc, inc)' 'pipe(inc, nop)'
  'pipe(tpool(1, qsort), tpool(1, inc))' 'tpool(1, pipe(qsort, inc))'
  'tpool(2, seq(qsort, nop))' 'tpool(2, seq(qsort, inc))' 'tpool(2, seq(inc, qsort))'
  'tpool(2, seq(inc, inc))' 'tpool(2, seq(inc, nop))'
  'mapreduce(map, reduce_pairwise, nodes=1, threads=1, keys=x, per_key=768)'
  'mapreduce(map, reduce_per_key, nodes=1, threads=1, keys=768, per_key=x)'
  'mapreduce(map, reduce_pairwise, nodes=1, threads=2, keys=x, per_key=768)'
  'mapreduce(map, reduce_per_key, nodes=1, threads=2, keys=768, per_key=x)'
)
# ONLY_TERMS (one term a line) replaces the list (run AL).
if [[ -n ${ONLY_TERMS:-} ]]; then mapfile -t TERMS <<< "$ONLY_TERMS"; fi
ONLY=()
# SKIP=PREFIX leaves out the terms that start with it (run AD: SKIP=mapreduce).
for t in "${TERMS[@]}"; do
  [[ -n ${SKIP:-} && $t == "$SKIP"* ]] && continue
  ONLY+=(--only "$t")
done
# VALIDATE_ARGS (words) go to `validate` too (run AT: --wait-quiet 120).
read -ra EXTRA <<< "${VALIDATE_ARGS:-}"
mkdir -p "$OUT"
{ date -u +%H:%M:%S; cat /proc/loadavg; } > "$OUT/started.txt"
{ "$EX/cpu_gaps"; "$EX/co_runner"; "$PC" bench inc --sizes 4096,16384,262144; } > "$OUT/host-before.txt" 2>&1
"$PC" bench --overhead > "$OUT/overhead.txt" 2>&1
"$PC" validate --suite paper "${ONLY[@]}" ${EXTRA[@]+"${EXTRA[@]}"} --save "$OUT" > "$OUT/stdout.txt" 2> "$OUT/stderr.txt"
{ date -u +%H:%M:%S; cat /proc/loadavg; } > "$OUT/finished.txt"
{ "$EX/cpu_gaps"; "$EX/co_runner"; "$PC" bench inc --sizes 4096,16384,262144; } > "$OUT/host-after.txt" 2>&1
