#!/usr/bin/env python3
"""Summarise several `fit_bench` runs (one markdown output per seed) into one table.

Usage:
  for s in 1 2 3; do target/release/examples/fit_bench --seed $s > bench-out/fit_bench_seed$s.md; done
  python3 scripts/fit-bench-summary.py bench-out/fit_bench_seed{1,2,3}.md
"""
import re
import sys


def main():
    rows = {}
    for path in sys.argv[1:]:
        for line in open(path):
            if not line.startswith("| ") or "class" in line:
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            cls, who = cells[0], cells[1]
            if "modeler extrap" in who:
                continue
            side = "ours" if "perfcompose" in who else "extrap"
            rows.setdefault(cls, {}).setdefault(side, []).append(cells[2:])
    pct = lambda cell: cell.split("%")[0] + "%"
    print("| class | recovery, all (perfcompose / Extra-P) | recovery, identifiable (perfcompose / Extra-P) "
          "| median error at 4× (perfcompose / Extra-P) | speed-up |")
    print("|---|---|---|---|---|")
    for cls, d in rows.items():
        ours, theirs = d["ours"], d.get("extrap", [])
        pairs = list(zip(ours, theirs))
        print("| {} | {} | {} | {} | {} |".format(
            cls,
            " · ".join(f"{pct(a[0])} / {pct(b[0])}" for a, b in pairs),
            " · ".join(f"{pct(a[1])} / {pct(b[1])}" for a, b in pairs),
            " · ".join(f"{a[2]} / {b[2]}" for a, b in pairs),
            " · ".join(re.search(r"\((\d+)× faster\)", a[3]).group(1) + "×" for a in ours),
        ))


if __name__ == "__main__":
    main()
