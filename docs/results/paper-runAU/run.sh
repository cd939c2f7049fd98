#!/usr/bin/env bash
# Run AU (2026-11-27, AMD EPYC guest): the 31 judged rows again with run AT's build
# (d203535: each pipeline of single blocks composed with the stochastic max of its
# stages' phases), in a quieter hour. Run AH's commands (run Y's host checks, a fresh
# calibration, `--from` with the segmented default and with one model per block),
# validate waiting up to two minutes for a quiet host before each design of two threads.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAU}
VALIDATE_ARGS="--wait-quiet 120" bash docs/results/paper-runAH-replica/run.sh "$PC" "$OUT"
