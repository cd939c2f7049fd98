#!/usr/bin/env bash
# Busy stages that sweep memory (`validate --co-running`), A/B on the same measurements:
# a fresh overhead calibration (with the sweeping pipelines), the pipelines of `inc`
# measured and saved once, then composed again from the saved folder without and with
# the co-running terms.
#   bash docs/results/co-running/run.sh [PERFCOMPOSE] [OUT]
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/co-running/round1}
mkdir -p "$OUT"
"$PC" bench --overhead --calibration "$OUT/calibration.json" > "$OUT/calibration.txt" 2>&1
"$PC" validate --suite paper --only 'pipe(inc, inc)' --only 'pipe(inc, nop)' --only 'pipe(inc, qsort)' \
  --calibration "$OUT/calibration.json" --save "$OUT/measured" --json > "$OUT/live.json" 2> "$OUT/live.err"
"$PC" validate --suite paper --only 'pipe(inc, inc)' --only 'pipe(inc, nop)' --only 'pipe(inc, qsort)' \
  --from "$OUT/measured" --json > "$OUT/default.json" 2> /dev/null
"$PC" validate --suite paper --only 'pipe(inc, inc)' --only 'pipe(inc, nop)' --only 'pipe(inc, qsort)' \
  --from "$OUT/measured" --co-running --json > "$OUT/co-running.json" 2> /dev/null
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
rows = lambda f: {r["configuration"]: r for r in json.load(open(f"{out}/{f}"))["rows"]}
a, b = rows("default.json"), rows("co-running.json")
for c in a:
    print(f"{c:18s} default {a[c]['time_error']*100:5.1f}%  --co-running {b[c]['time_error']*100:5.1f}%")
PY
