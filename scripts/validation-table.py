#!/usr/bin/env python3
"""Markdown table of `perfcompose validate --save DIR` runs, one row per configuration.

    python3 scripts/validation-table.py MAIN_DIR [LABEL=DIR ...]

MAIN_DIR gives the full columns (errors, measured/predicted per point, verdict); every
LABEL=DIR adds a "coef. / time error" column of another run of the same suite (rows are
matched by configuration, a MapReduce's with its image; "—" where that run has no such
row, as when one of them ran `--only` a subset). A DIR needs `rows.jsonl` and
`points.json`; a `rescore.txt` there (the output of the `rescore` example) replaces the
stored coefficient errors. Prints the table, then one summary line per run.
"""

import json
import re
import sys
from pathlib import Path

IMAGES = ["small", "medium", "large"]


def load(d):
    d = Path(d)
    rows = [json.loads(l) for l in (d / "rows.jsonl").read_text().splitlines() if l.strip()]
    points = json.loads((d / "points.json").read_text())
    rescore = d / "rescore.txt"
    if rescore.exists():
        now = [float(m.group(1)) / 100 for m in
               re.finditer(r"now\s+([-\d.]+|NaN|inf)%", rescore.read_text())]
        if len(now) == len(rows):
            for r, c in zip(rows, now):
                r["coefficient_error"] = c
    for r in rows:
        t = 0.15 if r["configuration"].startswith("mapreduce") else 0.10
        r["target"] = t if r["within_cores"] else None
        r["ok"] = None if r["target"] is None else (
            r["coefficient_error"] <= t and r["time_error"] <= t)
    return rows, points


def label(rows):
    """Configuration names, MapReduce rows with their image size (suite order)."""
    out, seen = [], {}
    for r in rows:
        c = r["configuration"]
        if c.startswith("mapreduce"):
            k = seen.get(c, 0)
            seen[c] = k + 1
            c = f"{c} ({IMAGES[k] if k < len(IMAGES) else k})"
        out.append(c)
    return out


def pct(v):
    return "n/a" if v is None or v != v else f"{100 * v:.1f}%"


def main():
    main_rows, main_points = load(sys.argv[1])
    others = []
    for arg in sys.argv[2:]:
        name, d = arg.split("=", 1)
        rows = load(d)[0]
        others.append((name, rows, dict(zip(label(rows), rows))))
    head = ["configuration", "threads", "coef. error", "time error",
            "measured / predicted", "verdict"] + [f"{n}: coef. / time" for n, _, _ in others]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for i, (name, r) in enumerate(zip(label(main_rows), main_rows)):
        ratios = " ".join(f"{p['measured'] / p['predicted']:.2f}" for p in main_points[i]["points"])
        verdict = {True: "ok", False: "**MISS**", None: "reported only"}[r["ok"]]
        threads = str(r["threads"]) + ("" if r["within_cores"] else " > 2")
        cells = [f"`{name}`", threads, pct(r["coefficient_error"]), pct(r["time_error"]),
                 ratios, verdict]
        for _, _, by_label in others:
            o = by_label.get(name)
            if o is None:
                cells.append("—")
                continue
            miss = o["ok"] is False
            t = pct(o["time_error"])
            c = pct(o["coefficient_error"])
            cells.append(f"{c} / {t}" + (" (miss)" if miss else ""))
        print("| " + " | ".join(cells) + " |")
    print()
    for name, rows in [("main", main_rows)] + [(n, rows) for n, rows, _ in others]:
        judged = [r for r in rows if r["ok"] is not None]
        ok = sum(r["ok"] for r in judged)
        misses = [n for n, r in zip(label(rows), rows) if r["ok"] is False]
        print(f"{name}: {ok} of {len(judged)} judged within target; misses: {'; '.join(misses) or 'none'}")


if __name__ == "__main__":
    main()
