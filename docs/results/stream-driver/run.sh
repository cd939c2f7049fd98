#!/usr/bin/env bash
# Side by side, 2026-11-26 07:23 UTC: the stream driver before (build of 980b214, OLD) and
# after the gate (NEW; the loaded unit test then still dealt the stream out), three rounds:
# per round the two-thread unit test of `inc`, then `tpool(2, inc)` and `inc` as programs
# with each build. Files: par2-R.json, pool-{old,new}-R.json, alone-{old,new}-R.json.
# Then (07:33 UTC, q-*.json, two rounds) the build with the queued unit test:
#   NEW bench inc --siblings 1 ... > q-par2-R.json; NEW bench --term 'tpool(2, inc)' ... > q-pool-R.json
# Old build: git worktree add /tmp/old 980b214 && (cd /tmp/old && cargo build --release --bin perfcompose)
set -euo pipefail
OLD=${1:?path of the old perfcompose}
NEW=${2:-target/release/perfcompose}
OUT=${3:-docs/results/stream-driver}
S=1024,4096,16384,131072
for r in 1 2 3; do
  "$NEW" bench inc --siblings 1 --sizes $S --json > "$OUT/par2-$r.json"
  for v in old new; do
    B=$OLD; [ $v = new ] && B=$NEW
    "$B" bench --term 'tpool(2, inc)' --sizes $S --json > "$OUT/pool-$v-$r.json"
    "$B" bench --term 'inc' --sizes $S --json > "$OUT/alone-$v-$r.json"
  done
done
