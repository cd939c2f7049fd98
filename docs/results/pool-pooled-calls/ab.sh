#!/usr/bin/env bash
# Side by side: the blocks of tpool(2, seq(inc, ·)) timed on the timed thread only (OLD)
# against every thread's calls on the shared stream pooled (NEW), alternating, ROUNDS
# rounds; each `validate --term` saves its measurements under OUT/<build>-<round>-<row>/.
# NEW is a build with pooled-calls.patch applied (on 1451a9e: `git apply
# docs/results/pool-pooled-calls/pooled-calls.patch && cargo build --release`).
# `python3 minima.py OUT` prints the blocks' and programs' minima side by side.
set -euo pipefail
OLD=$1 NEW=$2 OUT=${3:-docs/results/pool-pooled-calls} ROUNDS=${ROUNDS:-2}
SIZES=${SIZES:-1024,2048,4096,8192,16384,65536}
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
  for t in 'tpool(2, seq(inc, nop))' 'tpool(2, seq(inc, inc))'; do
    row=$(echo "$t" | tr -c 'a-z0-9' '_' | sed 's/_*$//')
    for b in old new; do
      pc=$OLD; [ "$b" = new ] && pc=$NEW
      dir="$OUT/$b-$r-$row"
      "$pc" validate --term "$t" --sizes "$SIZES" --save "$dir" --json > "$dir.json" 2> /dev/null
      python3 - "$dir.json" "$b" "$r" "$t" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
for row in rep["rows"]:
    print(f"round {sys.argv[3]} {sys.argv[2]:3s} {sys.argv[4]:26s} time error {row['time_error']*100:5.1f}%")
PY
    done
  done
done
