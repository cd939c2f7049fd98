#!/usr/bin/env bash
# What the busy hand-off (HandoffCalibration) does to the saved Intel runs AB–AI, nothing
# run: each run's folder validated again with `--from` (segmented modeler, the host's
# caches), once with its own calibration and once with the hand-off points of
# handoff.json grafted into it (the first hand-off calibration, `bench --overhead`,
# 2026-11-26 22:34 UTC, its one no-slack point at T = 2 µs). The "before" column is this
# build with the run's calibration as saved. Seconds.
set -euo pipefail
PC=${1:-target/release/perfcompose}
HERE=docs/results/handoff-whatif
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
ONLY=()
while IFS= read -r t; do ONLY+=(--only "$t"); done < <(grep -o "'[^']*'" docs/results/paper-runY-judged/run.sh | tr -d "'")
for run in paper-runAB-judged paper-runAC-inc paper-runAD-patterns paper-runAE-judged paper-runAF-judged paper-runAG-judged paper-runAH-replica paper-runAI-streamend; do
  d=$TMP/$run
  mkdir -p "$d"
  for f in docs/results/$run/*; do ln -s "$PWD/$f" "$d/"; done
  rm "$d/overhead-calibration.json"
  python3 - "docs/results/$run/overhead-calibration.json" "$HERE/handoff.json" "$d/overhead-calibration.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["pipe_handoff"] = json.load(open(sys.argv[2]))["pipe_handoff"]
json.dump(c, open(sys.argv[3], "w"))
PY
  args=(validate --suite paper --json "${ONLY[@]}" --caches 48K,2M,260M --modeler segmented)
  "$PC" "${args[@]}" --from "docs/results/$run" > "$TMP/$run-before.json" 2> /dev/null || true
  "$PC" "${args[@]}" --from "$d" > "$TMP/$run-after.json" 2> /dev/null || true
  python3 - "$TMP/$run-before.json" "$TMP/$run-after.json" "$run" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ok = lambda r: r["time_error"] <= (0.15 if r["configuration"].startswith("mapreduce") else 0.10)
ja = [r for r in a["rows"] if r["within_cores"]]
jb = [r for r in b["rows"] if r["within_cores"]]
print(f"{sys.argv[3]}: judged rows within target {sum(map(ok, ja))}/{len(ja)} -> {sum(map(ok, jb))}/{len(jb)}")
for ra, rb in zip(ja, jb):
    if "pipe" in ra["configuration"] or not ok(ra) or not ok(rb):
        print(f"   {ra['configuration'][:48]:48} {100 * ra['time_error']:5.1f}% -> {100 * rb['time_error']:5.1f}%")
PY
done
