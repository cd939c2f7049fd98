#!/usr/bin/env bash
# Every saved paper run with the judged rows (J to AZ) validated again from its
# measurements, nothing run: `--modeler perfcompose` (one PMNF model per block, the
# default of `validate` before 2026-11-26 15:00 UTC) and `--modeler segmented` (two models joined at a
# cache size where the block's measurements step up there), at the caches of the host
# that measured each run (its `machine.json`; without one, AMD EPYC guest: 32K,1M,32M for runs
# before AB, Intel Xeon guest: 48K,2M,260M from AB on).
# Each run's own calibration, the default statistic. Deterministic, seconds per run.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/segmented-default-from}
ONLY=()
while IFS= read -r t; do ONLY+=(--only "$t"); done < <(grep -o "'[^']*'" docs/results/paper-runY-judged/run.sh | tr -d "'")
RUNS=(paper-runJ paper-runL paper-runQ-pinned paper-runS paper-runU paper-runW paper-runX paper-runY-judged paper-runZ paper-runAA-judged
  paper-runAB-judged paper-runAC-inc paper-runAD-patterns paper-runAE-judged paper-runAF-judged paper-runAG-judged paper-runAH-replica paper-runAI-streamend
  paper-runAJ-handoff paper-runAK-relative paper-runAL-misses paper-runAM-calls paper-runAN-spun paper-runAO-again paper-runAQ-quiet paper-runAT-phases paper-runAU paper-runAV paper-runAW paper-runAX paper-runAY paper-runAZ)
for run in "${RUNS[@]}"; do
  [[ -d docs/results/$run ]] || continue
  if [[ -f docs/results/$run/machine.json ]]; then
    # The caches the run's own host reported (run AK was measured on the AMD host).
    caches=$(python3 -c 'import json, sys; print(",".join(f"{b // 1024}K" for b in json.load(open(sys.argv[1]))["caches_bytes"]))' "docs/results/$run/machine.json")
  else
    case $run in
      paper-runA[B-Z]*) caches=48K,2M,260M ;;
      *) caches=32K,1M,32M ;;
    esac
  fi
  args=(validate --suite paper --from "docs/results/$run" --json "${ONLY[@]}" --caches "$caches")
  "$PC" "${args[@]}" --modeler perfcompose > "$OUT/$run-perfcompose.json" 2> /dev/null || true
  "$PC" "${args[@]}" --modeler segmented > "$OUT/$run-segmented.json" 2> /dev/null || true
done
python3 - "$OUT" "${RUNS[@]}" <<'PY' > "$OUT/table.md"
import json, sys, os
out, runs = sys.argv[1], sys.argv[2:]
kinds = ["perfcompose", "segmented"]
target = lambda x: 0.15 if x["configuration"].startswith("mapreduce") else 0.10
print("Judged rows (n <= cores) within target, and the median time error:")
print()
print("| run | " + " | ".join(kinds) + " |")
print("|---|" + "---|" * len(kinds))
rows, total = {}, {k: [0, 0] for k in kinds}
for r in runs:
    cells = []
    for k in kinds:
        path = os.path.join(out, f"{r}-{k}.json")
        if not os.path.exists(path) or os.path.getsize(path) == 0:
            cells.append("—")
            continue
        judged = [x for x in json.load(open(path))["rows"] if x["within_cores"]]
        ok = sum(1 for x in judged if x["time_error"] <= target(x))
        total[k][0] += ok
        total[k][1] += len(judged)
        errs = sorted(x["time_error"] for x in judged)
        cells.append(f"{ok} of {len(judged)} ({100 * errs[len(errs) // 2]:.1f}%)")
        for i, x in enumerate(judged):
            rows.setdefault((r, i, x["configuration"]), {})[k] = x["time_error"]
    if any(c != "—" for c in cells):
        print(f"| {r} | " + " | ".join(cells) + " |")
print("| all | " + " | ".join(f"{t[0]} of {t[1]}" for t in total.values()) + " |")
print()
print("Rows whose verdict differs between the two:")
print()
print("| run | configuration | " + " | ".join(kinds) + " |")
print("|---|---|" + "---|" * len(kinds))
for (r, i, c), e in rows.items():
    if len(e) == 2:
        t = 0.15 if c.startswith("mapreduce") else 0.10
        if (e["perfcompose"] <= t) != (e["segmented"] <= t):
            print(f"| {r} | `{c}` | " + " | ".join(f"{100*e[k]:.1f}%" for k in kinds) + " |")
PY
cat "$OUT/table.md"
