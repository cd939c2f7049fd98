#!/usr/bin/env python3
"""Markdown table of the runtime-overhead targets over saved calibrations.

    python3 scripts/overhead-table.py [DIR ...]

Every DIR (default: every folder of docs/results/ that holds one) needs the
`overhead-calibration.json` that `perfcompose calibrate overhead -o FILE` (or a
`validate --save` run script) wrote. One row per distinct calibration (with every folder that holds it): `tpool(2, nop)` and
`pipe(nop, nop)` in ns per element next to the hand-written crossbeam-channel baseline
measured side by side, their ratio, and whether both targets of issue #4 hold (under
1 µs per element, within 1.5x of the baseline). Then a summary line: how many
calibrations met each target, and the range of each figure. Folders are listed in
name order. Exits with status 2 naming the folder when a calibration cannot be read.
"""

import json
import sys
from pathlib import Path

PATTERNS = ["tpool(2, nop)", "pipe(nop, nop)"]
LIMIT_NS = 1000.0
LIMIT_RATIO = 1.5


def row(d):
    """The two patterns of the calibration in folder `d`: {term: (ns, baseline_ns)}."""
    cal = json.loads((d / "overhead-calibration.json").read_text())
    got = {}
    for p in cal.get("patterns", []):
        if p["term"] in PATTERNS:
            got[p["term"]] = (p["ns_per_element"], p["baseline_ns_per_element"])
    return cal.get("host", "?"), got


def main(args):
    dirs = [Path(a) for a in args] or sorted(
        p.parent for p in Path("docs/results").glob("*/overhead-calibration.json"))
    met = {"ns": 0, "ratio": 0}
    seen = 0
    ranges = {t: [] for t in PATTERNS}
    # Run scripts copy one calibration into the folders of several runs: one row each,
    # naming every folder that holds it.
    calibrations = {}
    for d in dirs:
        try:
            host, got = row(d)
        except (OSError, ValueError, KeyError) as e:
            print(f"{d}: cannot read overhead-calibration.json: {e}", file=sys.stderr)
            return 2
        if any(t not in got for t in PATTERNS):
            print(f"{d}: the calibration lacks one of {PATTERNS}", file=sys.stderr)
            return 2
        key = (host, tuple(sorted(got.items())))
        calibrations.setdefault(key, []).append(d.name)
    head = "| run | host | " + " | ".join(
        f"`{t}` ns / baseline (ratio)" for t in PATTERNS) + " | under 1 µs | within 1.5x |"
    print(head)
    print("|" + "---|" * (4 + len(PATTERNS)))
    for (host, got), names in calibrations.items():
        got = dict(got)
        seen += 1
        cells = []
        ns_ok = ratio_ok = True
        for t in PATTERNS:
            ns, base = got[t]
            ratio = ns / base
            ranges[t].append((ns, ratio))
            ns_ok &= ns < LIMIT_NS
            ratio_ok &= ratio <= LIMIT_RATIO
            cells.append(f"{ns:.0f} / {base:.0f} ({ratio:.2f})")
        met["ns"] += ns_ok
        met["ratio"] += ratio_ok
        yes = lambda ok: "yes" if ok else "**no**"
        print(f"| {', '.join(names)} | {host} | " + " | ".join(cells) +
              f" | {yes(ns_ok)} | {yes(ratio_ok)} |")
    print()
    spans = "; ".join(
        f"`{t}` {min(n for n, _ in v):.0f}–{max(n for n, _ in v):.0f} ns, "
        f"{min(r for _, r in v):.2f}–{max(r for _, r in v):.2f}x"
        for t, v in ranges.items() if v)
    print(f"{seen} calibrations: under 1 µs in {met['ns']}, within 1.5x in "
          f"{met['ratio']}; {spans}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
