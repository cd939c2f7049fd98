#!/bin/bash
# A/B: the same program not pinned and pinned, alternating, two rounds; the median ns per
# element at x = 1,024, 16,384, 262,144 (`bench --term`, default sampling).
# ab.txt was made between 08:12 and 08:18 UTC on 2026-11-24 by the binary before pinning became the
# default (then: no flag = free, --pin = pinned), which is what this script does now.
PC=${1:-target/release/perfcompose}
for r in 1 2; do
for t in 'pipe(inc, inc)' 'pipe(qsort, inc)' 'tpool(2, qsort)' 'tpool(2, seq(inc, inc))' 'pipe(inc, nop)'; do
for pin in "--no-pin" ""; do
  $PC bench --term "$t" --sizes 1024,16384,262144 $pin --json 2>/dev/null | python3 -c "
import json,sys
d=json.load(sys.stdin)
s=d['series'][0] if 'series' in d else d[0]
print('$r', '$t'.ljust(26), ('free' if '$pin' else 'pinned').ljust(7), ' '.join('%10.0f'%p['median'] for p in s['points']))
"
done; done; done
