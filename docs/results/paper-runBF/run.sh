#!/usr/bin/env bash
# Run BF (2026-11-28, 21:19 UTC, AMD EPYC guest): the 31 judged rows with build 2b90ef0
# (every worker's calls pooled in the loaded block tests), `core_states 10` first. Stopped
# by hand after five rows (21:38): the one-thread `inc` rows missed by 10-28% with CVs up
# to 20% on a host whose cores were in their slow state, and the session's time went to
# run BG, with the cores' speed states sampled around each design.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runBF}
"$(dirname "$PC")/examples/core_states" 10 > "$OUT/core-states-before.txt" 2>&1 || true
bash docs/results/paper-runY-judged/run.sh "$PC" "$OUT"
