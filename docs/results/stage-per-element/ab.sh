#!/usr/bin/env bash
# Side by side: pipeline stage unit tests timed in groups of what is waiting and handed
# on in bursts, the first stage reading a vector, helpers blocking on their queues (OLD),
# against each call timed on its own and handed on at once, the first stage reading a
# queue that holds the stream, every stage waiting as the runtime's workers do (NEW).
# Alternating, ROUNDS rounds of `validate --suite paper --only TERM` per build and row;
# each saves its measurements under OUT/<build>-<round>-<row>/. NEW is a build with
# per-element.patch applied (on aefcf84: `git apply
# docs/results/stage-per-element/per-element.patch && cargo build --release`). TERMS lists
# the rows, spaces written as `_`. `python3 minima.py OUT` prints the minima side by side.
set -euo pipefail
OLD=$1 NEW=$2 OUT=${3:-docs/results/stage-per-element} ROUNDS=${ROUNDS:-2}
read -ra TERMS_ARR <<< "${TERMS:-pipe(inc,_inc)}"
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
  for t0 in "${TERMS_ARR[@]}"; do
    t=${t0//_/ }
    row=$(echo "$t" | tr -c 'a-z0-9' '_' | sed 's/_*$//')
    for b in old new; do
      pc=$OLD; [ "$b" = new ] && pc=$NEW
      dir="$OUT/$b-$r-$row"
      start=$(date -u +%H:%M:%S)
      "$pc" validate --suite paper --only "$t" --save "$dir" --json > "$dir.json" 2> "$dir.err"
      python3 - "$dir.json" "$b" "$r" "$t" "$start" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
for row in rep["rows"]:
    hc = row.get("host_check", {})
    print(f"{sys.argv[5]} round {sys.argv[3]} {sys.argv[2]:3s} {sys.argv[4]:18s} time error {row['time_error']*100:5.1f}%  host check {hc.get('before', 0):.2f}/{hc.get('after', 0):.2f}")
PY
    done
  done
done
