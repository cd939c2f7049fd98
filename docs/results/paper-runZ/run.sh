#!/usr/bin/env bash
# Run Z: the full paper suite with the build whose revisits keep the faster visit under the
# minimum (5b9f7c3 on; run Y ran its judged rows only). The same commands as run S, host
# checks and a fresh calibration included.
set -euo pipefail
exec bash docs/results/paper-runS/run.sh "${1:-target/release/perfcompose}" "${2:-docs/results/paper-runZ}"
