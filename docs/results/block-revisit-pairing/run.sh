#!/usr/bin/env bash
# Block points measured again alone, re-analysed: every saved run whose rows note block
# revisits, validated again from its measurements as saved (`base`) and with each block
# point that kept a lone second visit put back to its first visit (`first`,
# first-visits.py). Nothing run on the host; seconds per run. Each run's own calibration
# and caches (its machine.json), the judged rows, validate's defaults.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/block-revisit-pairing}
HERE=$(dirname "$0")
ONLY=()
while IFS= read -r t; do ONLY+=(--only "$t"); done < <(grep -o "'[^']*'" docs/results/paper-runY-judged/run.sh | tr -d "'")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for dir in docs/results/paper-run*; do
  run=$(basename "$dir")
  [[ -f $dir/rows.jsonl && -f $dir/machine.json && -f $dir/blocks.txt ]] || continue
  grep -q 'measured block `' "$dir/rows.jsonl" || continue
  caches=$(python3 -c 'import json, sys; print(",".join(f"{b // 1024}K" for b in json.load(open(sys.argv[1]))["caches_bytes"]))' "$dir/machine.json")
  args=(validate --suite paper --json "${ONLY[@]}" --caches "$caches")
  "$PC" "${args[@]}" --from "$dir" > "$OUT/$run-base.json" 2> /dev/null || true
  python3 "$HERE/first-visits.py" "$dir" "$TMP/$run" 2>> "$OUT/restored.txt"
  "$PC" "${args[@]}" --from "$TMP/$run" > "$OUT/$run-first.json" 2> /dev/null || true
done
python3 "$HERE/table.py" "$OUT" > "$OUT/table.md"
