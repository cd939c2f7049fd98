#!/usr/bin/env bash
# Run BP (2026-11-29, from 14:47 UTC, AMD EPYC guest): run BH's script again (the 31
# judged rows under `--measure auto`) with the build of 3a5cef9, whose stage rig hands on
# one element at a time as the program does (docs/validation.md, run BP).
set -euo pipefail
exec bash docs/results/paper-runBH/run.sh "${1:-target/release/perfcompose}" "${2:-docs/results/paper-runBP}"
