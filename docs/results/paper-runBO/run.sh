#!/usr/bin/env bash
# Run BO (2026-11-29, from 12:24 UTC, AMD EPYC guest): run BH's script again (the 31
# judged rows under `--measure auto`) with the build of e9b1550 (the same code as run BM),
# on a host whose cores read fast together (docs/validation.md, run BO).
set -euo pipefail
exec bash docs/results/paper-runBH/run.sh "${1:-target/release/perfcompose}" "${2:-docs/results/paper-runBO}"
