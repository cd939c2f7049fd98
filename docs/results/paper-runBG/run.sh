#!/usr/bin/env bash
# Run BG (2026-11-28, from 21:56 UTC, AMD EPYC guest): ten judged rows, those of `inc`
# and of two threads that missed most in runs BE and BF, with build 6749c6a (the host
# check samples the cores' speed states at both ends of each design), `core_states 10`
# before and after.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runBG}
EX=$(dirname "$PC")/examples
mkdir -p "$OUT"
"$EX/core_states" 10 > "$OUT/core-states-before.txt" 2>&1
ONLY_TERMS='seq(inc, inc)
seq(inc, nop)
tpool(2, qsort)
pipe(inc, inc)
pipe(inc, nop)
pipe(inc, qsort)
tpool(2, seq(inc, inc))
tpool(2, seq(inc, nop))
mapreduce(map, reduce_pairwise, nodes=1, threads=2, keys=x, per_key=768)
mapreduce(map, reduce_per_key, nodes=1, threads=2, keys=768, per_key=x)' \
  bash docs/results/paper-runY-judged/run.sh "$PC" "$OUT"
"$EX/core_states" 10 > "$OUT/core-states-after.txt" 2>&1
