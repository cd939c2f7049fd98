#!/usr/bin/env bash
# The stages' best repetitions, measured (2026-11-28, 00:07–00:20 UTC, AMD EPYC guest):
# two rounds of `validate --suite paper --only TERM` for `pipe(inc, inc)` and
# `pipe(inc, nop)` with build fba0b42, whose stage tests record every stage's mean call
# in each repetition (phases.json, "stages"). Each round saves under OUT/rROUND-ROW/ and
# appends the row's time error to OUT/ab-log.txt. Then `python3 apart.py OUT/r*-*/` prints
# the factors and `python3 variants.py PC OUT/r*-*/` the rows composed four ways.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/stages-apart}
mkdir -p "$OUT"
for r in 1 2; do
  for t in "pipe(inc, inc)" "pipe(inc, nop)"; do
    row=$(echo "$t" | tr -c 'a-z0-9' '_' | sed 's/_*$//')
    dir=$OUT/r$r-$row
    start=$(date -u +%H:%M:%S)
    "$PC" validate --suite paper --only "$t" --save "$dir" --json > "$dir.json" 2> "$dir.err"
    python3 - "$dir.json" "$start" "$r" >> "$OUT/ab-log.txt" <<'PY'
import json, sys
for row in json.load(open(sys.argv[1]))["rows"]:
    print(sys.argv[2], sys.argv[3], row["configuration"], round(row["time_error"] * 100, 1), row["modular"][:200])
PY
  done
done
