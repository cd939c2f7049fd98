#!/usr/bin/env bash
# Runs X, Y (judged rows) and Z validated again from their saved measurements, nothing
# run: once with the calibration each run took (wake-up points on `u64` elements, one
# fitted line) and once with the same calibration whose `pipe_wake` is run AA's (arrays of
# 10 bytes per ns of stage time, lines through the points: 52d33cb). Everything else of
# the calibration (pattern constants, MapReduce jobs, busy pools) stays the run's own, so
# only the wake-up term differs. Same measurements, the default modeler and statistic.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/wake-arrays-from}
AA=docs/results/paper-runAA-judged/overhead-calibration.json
ONLY=()
while IFS= read -r t; do ONLY+=(--only "$t"); done < <(grep -o "'[^']*'" docs/results/paper-runY-judged/run.sh | tr -d "'")
for run in paper-runX paper-runY-judged paper-runZ; do
  own="docs/results/$run/overhead-calibration.json"
  python3 - "$own" "$AA" > "$OUT/$run-calibration-AA-wake.json" <<'PY'
import json, sys
own, aa = (json.load(open(p)) for p in sys.argv[1:3])
own["pipe_wake"] = aa["pipe_wake"]
print(json.dumps(own, indent=1))
PY
  args=(validate --suite paper --from "docs/results/$run" --json)
  [ "$run" = paper-runY-judged ] && args+=("${ONLY[@]}")
  "$PC" "${args[@]}" > "$OUT/$run-own.json"
  "$PC" "${args[@]}" --calibration "$OUT/$run-calibration-AA-wake.json" > "$OUT/$run-AA-wake.json"
done
