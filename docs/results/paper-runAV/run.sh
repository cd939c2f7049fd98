#!/usr/bin/env bash
# Run AV (2026-11-27, AMD EPYC guest): the 31 judged rows with the build whose revisits
# that move a point no longer spend the sweep's budget (validate::revisit_sweep,
# max_all_revisits). Run AH's commands (run Y's host checks, a fresh calibration,
# `--from` with the segmented default and with one model per block), validate waiting
# up to two minutes for a quiet host before each design of two threads.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAV}
VALIDATE_ARGS="--wait-quiet 120" bash docs/results/paper-runAH-replica/run.sh "$PC" "$OUT"
