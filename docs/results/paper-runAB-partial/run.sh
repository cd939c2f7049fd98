#!/usr/bin/env bash
# Run AB: the full paper suite with the build whose wake-up calibration streams arrays and
# composes through its points (52d33cb on; run AA ran the judged rows only). The same
# commands as run S: host checks, a fresh calibration, then `validate --suite paper`.
set -euo pipefail
exec bash docs/results/paper-runS/run.sh "${1:-target/release/perfcompose}" "${2:-docs/results/paper-runAB}"
