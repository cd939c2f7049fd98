#!/usr/bin/env bash
# Run AB: the paper suite's 31 judged rows on the Intel host (from 2026-11-26), the build of
# e304d77 (array wake-up calibration, 52d33cb on). Run Y's commands: host checks, a fresh
# calibration, `--only` with the 23 terms of the rows with n <= cores.
set -euo pipefail
exec bash docs/results/paper-runY-judged/run.sh "${1:-target/release/perfcompose}" "${2:-docs/results/paper-runAB-judged}"
