#!/usr/bin/env bash
# Run BI (2026-11-29, 03:13–04:23 UTC, AMD EPYC guest): run BH's script again, the 31
# judged rows under `--measure auto` with the build of 8e0d5af, this time to the end, on
# the host back at its usual speed. (docs/validation.md, run BI.)
set -euo pipefail
exec bash docs/results/paper-runBH/run.sh "${1:-target/release/perfcompose}" "${2:-docs/results/paper-runBI}"
