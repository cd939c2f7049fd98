#!/usr/bin/env bash
# Run AY (2026-11-27, AMD EPYC guest): the 31 judged rows a fourth time with run AV's build
# (288aed1; HEAD 1451a9e behaves the same), a fourth run of the revisit budget on this
# host. Run AH's commands (run Y's host checks, a fresh calibration, `--from` with the
# segmented default and with one model per block), validate waiting up to two minutes
# for a quiet host before each design of two threads.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAY}
VALIDATE_ARGS="--wait-quiet 120" bash docs/results/paper-runAH-replica/run.sh "$PC" "$OUT"
