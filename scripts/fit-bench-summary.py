#!/usr/bin/env python3
"""Summarise several `fit_bench` runs (one markdown output per seed) into one table.

Usage:
  for s in 1 2 3; do target/release/examples/fit_bench --seed $s > bench-out/fit_bench_seed$s.md; done
  python3 scripts/fit-bench-summary.py bench-out/fit_bench_seed{1,2,3}.md

Each cell lists the seeds' values in order, "perfcompose / Extra-P" where both apply; the
oracle column is the share of identifiable regions whose truth fits better than every
other hypothesis of its size (what selection by fit can reach at best).
"""
import re
import sys


def main():
    rows = {}
    for path in sys.argv[1:]:
        for line in open(path):
            if not line.startswith("| ") or line.startswith("| class"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            cls, who = cells[0], cells[1]
            if "modeler extrap" in who:
                continue
            side = "ours" if "perfcompose" in who else "oracle" if who.startswith("oracle") else "extrap"
            rows.setdefault(cls, {}).setdefault(side, []).append(cells[2:])
    pct = lambda cell: cell.split("%")[0] + "%"
    both = lambda ours, theirs, i, f: " · ".join(f"{f(a[i])} / {f(b[i])}" for a, b in zip(ours, theirs))
    print("| class | recovery, all | recovery, identifiable | oracle, identifiable "
          "| recovery, distinguishable | lead-order term, all | median error at 4× | speed-up |")
    print("|---|---|---|---|---|---|---|---|")
    for cls, d in rows.items():
        ours, theirs, oracle = d["ours"], d.get("extrap", []), d.get("oracle", [])
        speed = []
        for a in ours:
            m = re.search(r"\((\d+)× faster\)", a[5])
            speed.append(m.group(1) + "×" if m else "–")
        print("| {} | {} | {} | {} | {} | {} | {} | {} |".format(
            cls,
            both(ours, theirs, 0, pct),
            both(ours, theirs, 1, pct),
            " · ".join(pct(o[1]) for o in oracle),
            both(ours, theirs, 2, pct),
            both(ours, theirs, 3, pct),
            both(ours, theirs, 4, str),
            " · ".join(speed),
        ))


if __name__ == "__main__":
    main()
