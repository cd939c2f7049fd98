#!/usr/bin/env bash
# Re-analyse saved paper runs with the repetitions' minimum (the default since this
# comparison) and with the median (the default before it): runs nothing, takes seconds.
# Keeps each analysis's rows.jsonl and points.json, and one table per run with the
# minimum's columns first and the median's in the last column.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/statistic-minimum}
TMP=$(mktemp -d)
for run in paper-runL paper-runQ-pinned paper-runS paper-runU; do
  for m in minimum median; do
    "$PC" validate --suite paper --from "docs/results/$run" --measure "$m" --save "$TMP/$run-$m" \
      > /dev/null 2> "$TMP/$run-$m.stderr"
    mkdir -p "$OUT/$run-$m"
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); open(sys.argv[2],"w").write("".join(json.dumps(x)+"\n" for x in r["rows"]))' \
      "$TMP/$run-$m/report.json" "$OUT/$run-$m/rows.jsonl"
    cp "$TMP/$run-$m/points.json" "$OUT/$run-$m/points.json"
  done
  python3 scripts/validation-table.py "$OUT/$run-minimum" median="$OUT/$run-median" > "$OUT/table-$run.md"
done
rm -rf "$TMP"
