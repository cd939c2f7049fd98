#!/usr/bin/env bash
# Run AD (2026-11-26, Intel host, build of fad3ea5): run Y's judged rows without the
# MapReduce ones (those 12 passed in run AB; the 19 seq/pipe/tpool rows are what this host
# misses), with run Y's host checks and a fresh calibration. `--save` now writes the
# measurements after every row, and machine.json, so the folder can be validated again
# with `--from` (default modeler and `--modeler segmented` with this host's caches).
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAD-patterns}
EX=$(dirname "$PC")/examples
ONLY=()
while IFS= read -r t; do
  case $t in mapreduce*) ;; *) ONLY+=(--only "$t") ;; esac
done < <(grep -o "'[^']*'" docs/results/paper-runY-judged/run.sh | tr -d "'")
mkdir -p "$OUT"
{ date -u +%H:%M:%S; cat /proc/loadavg; } > "$OUT/started.txt"
{ "$EX/cpu_gaps"; "$EX/co_runner"; "$PC" bench inc --sizes 4096,16384,262144; } > "$OUT/host-before.txt" 2>&1
"$PC" bench --overhead > "$OUT/overhead.txt" 2>&1
"$PC" validate --suite paper "${ONLY[@]}" --save "$OUT" > "$OUT/stdout.txt" 2> "$OUT/stderr.txt"
{ date -u +%H:%M:%S; cat /proc/loadavg; } > "$OUT/finished.txt"
{ "$EX/cpu_gaps"; "$EX/co_runner"; "$PC" bench inc --sizes 4096,16384,262144; } > "$OUT/host-after.txt" 2>&1
"$PC" validate --suite paper "${ONLY[@]}" --from "$OUT" --modeler segmented --json > "$OUT/segmented.json" 2> /dev/null
# After the run (build with WAKE_FLOOR = 0.05): the same measurements validated again.
"$PC" validate --suite paper "${ONLY[@]}" --from "$OUT" --json > "$OUT/again-default.json" 2> /dev/null
