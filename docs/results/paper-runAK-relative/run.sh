#!/usr/bin/env bash
# Run AK (2026-11-27, Intel host): the 31 judged rows with the build whose busy hand-off's
# rise is composed on the pipeline's slack less a tenth of its slowest stage
# (Saturating::relative_threshold, HANDOFF_SLACK_RESOLUTION). Run AH's commands (run Y's
# host checks, a fresh calibration, `--from` with the segmented default and with one model
# per block).
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAK-relative}
bash docs/results/paper-runAH-replica/run.sh "$PC" "$OUT"
