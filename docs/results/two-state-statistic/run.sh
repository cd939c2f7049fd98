#!/usr/bin/env bash
# Which statistic of the repetitions on a host whose cores switch between two speeds:
# the saved runs of the half-speed host (BE, BF, BG) and of the host at its usual speed
# (AX, AZ) validated again under the minimum (the default), the median and the mean, and
# under `--measure auto` (since 2026-11-29: the mean where the saved speed states read the
# cores mostly slow; runs without the samples keep the minimum). Runs nothing live; a
# minute or two. Prints one line per run, statistic and row.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/two-state-statistic}
RUNS=${RUNS:-paper-runAX paper-runAZ paper-runBE paper-runBF paper-runBG paper-runBH paper-runBI paper-runBJ paper-runBL paper-runBM paper-runBO}
mkdir -p "$OUT"
for run in $RUNS; do
  for m in minimum median mean auto; do
    "$PC" validate --suite paper --from "docs/results/$run" --measure "$m" --json \
      > "$OUT/$run-$m.json" 2> "$OUT/$run-$m.stderr" || echo "$run $m: status $?" >&2
  done
done
python3 "$(dirname "$0")/table.py" "$OUT" $RUNS > "$OUT/table.md"
cat "$OUT/table.md"
