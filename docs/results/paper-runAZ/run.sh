#!/usr/bin/env bash
# Run AZ (2026-11-28, AMD EPYC guest): the 31 judged rows with build fba0b42, whose stage
# tests time every stage in every repetition and whose pipelines of single blocks are
# composed with what they lose to their stages' best repetitions not coinciding
# (`PhaseLoss::apart`). Run AH's commands (run Y's host checks, a fresh calibration,
# `--from` with the segmented default and with one model per block), validate waiting up
# to two minutes for a quiet host before each design of two threads.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAZ}
VALIDATE_ARGS="--wait-quiet 120" bash docs/results/paper-runAH-replica/run.sh "$PC" "$OUT"
