#!/usr/bin/env bash
# Run BA (2026-11-28, AMD EPYC guest, load average 0.15 at the start): the 31 judged rows
# with build 391160d (the default composition of run AZ; `--stages-apart` off), run AH's
# commands (run Y's host checks, a fresh calibration, `--from` with the segmented default
# and with one model per block), validate waiting up to two minutes for a quiet host
# before each design of two threads.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runBA}
VALIDATE_ARGS="--wait-quiet 120" bash docs/results/paper-runAH-replica/run.sh "$PC" "$OUT"
