#!/usr/bin/env python3
"""Table of run.sh's re-analyses: per run, each judged row's time error under the
minimum, the median, the mean and `--measure auto` (with what it chose), and per run and
statistic the rows within target and the errors summed. Usage: table.py DIR RUN..."""
import json
import sys

STATS = ["minimum", "median", "mean", "auto"]


def chosen(path):
    """What `--measure auto` chose: the statistic and the median fast share."""
    try:
        with open(path) as f:
            a = json.load(f).get("auto_measure")
    except (OSError, ValueError):
        return "-"
    if not a:
        return "-"
    share = "no samples" if a["fast_share"] is None else f"fast share {100 * a['fast_share']:.0f}%"
    return f"{a['measure']} ({share}, {a['samples']} samples)"


def rows(path):
    try:
        with open(path) as f:
            out, seen = {}, {}
            for r in json.load(f)["rows"]:
                if not r["within_cores"]:
                    continue
                # A MapReduce has a row per image under one name: numbered in order.
                c = r["configuration"]
                seen[c] = seen.get(c, 0) + 1
                out[c if seen[c] == 1 else f"{c} #{seen[c]}"] = r
            return out
    except (OSError, ValueError, KeyError):
        return {}


def target(r):
    return 0.15 if r["configuration"].startswith("mapreduce") else 0.10


def main():
    out, runs = sys.argv[1], sys.argv[2:]
    print("| run | statistic | within target | time errors summed [points] |")
    print("|---|---|---|---|")
    detail = []
    for run in runs:
        got = {m: rows(f"{out}/{run}-{m}.json") for m in STATS}
        for m in STATS:
            rs = got[m].values()
            ok = sum(r["coefficient_error"] <= target(r) and r["time_error"] <= target(r) for r in rs)
            total = sum(100 * r["time_error"] for r in rs)
            name = f"auto: {chosen(f'{out}/{run}-auto.json')}" if m == "auto" else m
            print(f"| {run} | {name} | {ok} of {len(rs)} | {total:.1f} |")
        for c in got["minimum"]:
            cells = [f"{100 * got[m][c]['time_error']:.1f}%" if c in got[m] else "-" for m in STATS]
            detail.append(f"| {run} | `{c}` | " + " | ".join(cells) + " |")
    print()
    print("| run | configuration | " + " | ".join(f"time error, {m}" for m in STATS) + " |")
    print("|---|---|" + "---|" * len(STATS))
    print("\n".join(detail))


main()
