#!/usr/bin/env bash
# Run AM (2026-11-27, AMD EPYC guest): the 31 judged rows with the build that takes one
# block call out per block as a design composes its blocks (overhead::BlockCall, the `nop`
# unit test calibrated by `bench --overhead`). Run AH's commands (run Y's host checks, a
# fresh calibration, `--from` with the segmented default and with one model per block).
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAM-calls}
bash docs/results/paper-runAH-replica/run.sh "$PC" "$OUT"
