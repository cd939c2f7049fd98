#!/usr/bin/env bash
# Run BB (2026-11-28, AMD EPYC guest at about half its usual speed: `bench inc` 8.3 µs at
# x = 4,096 at 07:11 UTC): the 31 judged rows with build 7faf2cd (the host check times the
# host's speed around every design, one thread included; `--wait-quiet` also waits while
# the blocks alone run more than 1.10x slower than their fastest check of the suite),
# run AH's commands (run Y's host checks, a fresh calibration with the paired sweep
# extras, `--from` with the segmented default and with one model per block), waiting up
# to a minute before each design; then the saved folder composed again with
# `--co-running` (co-running.json).
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runBB}
VALIDATE_ARGS="--wait-quiet 60" bash docs/results/paper-runAH-replica/run.sh "$PC" "$OUT"
ONLY=()
while IFS= read -r t; do ONLY+=(--only "$t"); done < <(grep -o "'[^']*'" docs/results/paper-runY-judged/run.sh | tr -d "'")
"$PC" validate --suite paper "${ONLY[@]}" --from "$OUT" --co-running --json > "$OUT/co-running.json" 2> /dev/null
