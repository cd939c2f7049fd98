#!/usr/bin/env bash
# Re-analyse saved paper runs L, Q, S and U with the wake-up cost on each pipeline's
# slack (since 2026-11-24, late): runs nothing, takes seconds. The same measurements and
# calibration points as docs/results/statistic-minimum/*-minimum, whose rows came from
# the build before (the ramp from the origin on the whole model); both use the minimum.
# Keeps each analysis's rows.jsonl and points.json, one table per run (this build's
# columns first, the ramp's in the last column) and summary.md (pipeline points within
# 10% of their prediction).
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/wake-slack}
BEFORE=docs/results/statistic-minimum
TMP=$(mktemp -d)
RUNS="paper-runL paper-runQ-pinned paper-runS paper-runU"
for run in $RUNS; do
  "$PC" validate --suite paper --from "docs/results/$run" --measure minimum --save "$TMP/$run" \
    > /dev/null 2> "$TMP/$run.stderr"
  mkdir -p "$OUT/$run"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); open(sys.argv[2],"w").write("".join(json.dumps(x)+"\n" for x in r["rows"]))' \
    "$TMP/$run/report.json" "$OUT/$run/rows.jsonl"
  cp "$TMP/$run/points.json" "$OUT/$run/points.json"
  python3 scripts/validation-table.py "$OUT/$run" ramp="$BEFORE/$run-minimum" > "$OUT/table-$run.md"
done
python3 - "$OUT" "$BEFORE" $RUNS > "$OUT/summary.md" <<'PY'
import json, sys
out, before, runs = sys.argv[1], sys.argv[2], sys.argv[3:]
def load(d):
    return [json.loads(l) for l in open(f"{d}/rows.jsonl")], json.load(open(f"{d}/points.json"))
def target(c):
    return 0.15 if c.startswith("mapreduce") else 0.10
print("| run | analysis | judged rows within target | pipeline points within 10%, judged rows | median / 90th percentile error | pipeline points within 10%, rows beyond the cores |")
print("|---|---|---|---|---|---|")
for run in runs:
    for label, d in [("ramp on the model", f"{before}/{run}-minimum"), ("slack, threshold", f"{out}/{run}")]:
        rows, points = load(d)
        judged = [r for r in rows if r["within_cores"]]
        within = {r["configuration"]: r["within_cores"] for r in rows if "pipe" in r["configuration"]}
        ok = sum(r["time_error"] <= target(r["configuration"]) for r in judged)
        errs = {True: [], False: []}
        for p in points:
            c = p["configuration"]
            if "pipe" in c:
                errs[within[c]] += [abs(q["predicted"] / q["measured"] - 1) for q in p["points"]]
        j = sorted(errs[True]); b = errs[False]
        med = (j[len(j) // 2] + j[(len(j) - 1) // 2]) / 2
        print(f"| {run[9:]} | {label} | {ok} of {len(judged)} | {sum(e <= 0.1 for e in j)} of {len(j)} "
              f"| {100 * med:.1f}% / {100 * j[int(0.9 * len(j))]:.1f}% | {sum(e <= 0.1 for e in b)} of {len(b)} |")
PY
rm -rf "$TMP"
