#!/usr/bin/env bash
# Runs X, Y (judged rows), Z, AA (AMD host) and AB (Intel host) validated again from their
# saved measurements, nothing run: the default modeler, `--modeler segmented --caches
# none` (breaks wherever the data says, five sizes a side), and `--modeler segmented`
# with the caches of the host that measured them (AMD EPYC guest: L1d 32 KiB, L2 1 MiB,
# L3 32 MiB; Intel Xeon guest: L1d 48 KiB, L2 2 MiB, L3 260 MiB): breaks only near a
# cache size, four sizes a side. Each run's own calibration, the default statistic.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/cache-breaks-from}
ONLY=()
while IFS= read -r t; do ONLY+=(--only "$t"); done < <(grep -o "'[^']*'" docs/results/paper-runY-judged/run.sh | tr -d "'")
RUNS=(paper-runJ paper-runL paper-runQ-pinned paper-runS paper-runU paper-runW paper-runX paper-runY-judged paper-runZ paper-runAA-judged paper-runAB-judged paper-runAC-inc)
for run in "${RUNS[@]}"; do
  case $run in
    paper-runAB-judged | paper-runAC-inc) caches=48K,2M,260M ;;
    *) caches=32K,1M,32M ;;
  esac
  # The judged rows of every run (the whole-suite runs have the others too; run J
  # predates some of them, run AC has six).
  args=(validate --suite paper --from "docs/results/$run" --json "${ONLY[@]}")
  "$PC" "${args[@]}" > "$OUT/$run-default.json" 2> /dev/null
  "$PC" "${args[@]}" --modeler segmented --caches none > "$OUT/$run-segmented.json" 2> /dev/null
  "$PC" "${args[@]}" --modeler segmented --caches "$caches" > "$OUT/$run-segmented-caches.json" 2> /dev/null
done
python3 - "$OUT" <<'PY' > "$OUT/table.md"
import json, sys, os
out = sys.argv[1]
runs = ["paper-runJ", "paper-runL", "paper-runQ-pinned", "paper-runS", "paper-runU", "paper-runW", "paper-runX", "paper-runY-judged", "paper-runZ", "paper-runAA-judged", "paper-runAB-judged", "paper-runAC-inc"]
kinds = ["default", "segmented", "segmented-caches"]
print("Judged rows (n <= cores) within target, and the median time error:")
print()
print("| run | " + " | ".join(f"{k}" for k in kinds) + " |")
print("|---|" + "---|" * len(kinds))
rows = {}
for r in runs:
    cells = []
    for k in kinds:
        rep = json.load(open(os.path.join(out, f"{r}-{k}.json")))
        judged = [x for x in rep["rows"] if x["within_cores"]]
        target = lambda x: 0.15 if x["configuration"].startswith("mapreduce") else 0.10
        ok = sum(1 for x in judged if x["time_error"] <= target(x))
        errs = sorted(x["time_error"] for x in judged)
        cells.append(f"{ok} of {len(judged)} ({100 * errs[len(errs) // 2]:.1f}%)")
        # Rows in suite order (a MapReduce appears once per image): keyed by position.
        for i, x in enumerate(judged):
            rows.setdefault((r, i, x["configuration"]), {})[k] = x["time_error"]
    print(f"| {r} | " + " | ".join(cells) + " |")
print()
print("Rows whose time error changed by more than 0.5 points between the default modeler and segmented with caches:")
print()
print("| run | configuration | " + " | ".join(kinds) + " |")
print("|---|---|" + "---|" * len(kinds))
for (r, i, c), e in rows.items():
    if abs(e.get("default", 0) - e.get("segmented-caches", 0)) > 0.005:
        print(f"| {r} | `{c}` | " + " | ".join(f"{100*e[k]:.1f}%" for k in kinds) + " |")
PY
cat "$OUT/table.md"
