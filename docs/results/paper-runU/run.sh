#!/usr/bin/env bash
# Run U: the full paper suite at 5a83e2e: defaults (interleaved, pinned, blocks timed loaded,
# statistic median then) and, new since run S, disturbed program points measured again
# (revisits, default on). The same commands as run S, host checks included.
set -euo pipefail
exec bash docs/results/paper-runS/run.sh "${1:-target/release/perfcompose}" "${2:-docs/results/paper-runU}"
