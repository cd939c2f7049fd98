"""Per saved run, the judged rows validated from their measurements as saved (`base`) and
with block points kept from a lone second visit put back to their first (`first`):
rows within target and the rows whose time error moved by more than a point.

    python3 table.py DIR
"""
import glob, json, os, sys

d = sys.argv[1]


def target(row):
    return 0.15 if row["configuration"].startswith("mapreduce") else 0.10


def rows(path):
    try:
        got = json.load(open(path))["rows"]
    except (OSError, ValueError, KeyError):
        return None
    return {r["configuration"]: r for r in got if r.get("within_cores", True)}


print("| run | within target, as saved | with first visits | rows that moved over a point (as saved → first visits) |")
print("|---|---|---|---|")
totals = [0, 0, 0]
for base_path in sorted(glob.glob(os.path.join(d, "*-base.json"))):
    run = os.path.basename(base_path)[: -len("-base.json")]
    base, first = rows(base_path), rows(os.path.join(d, run + "-first.json"))
    if not base or not first:
        continue
    ok = lambda rs: sum(r["time_error"] <= target(r) for r in rs.values())
    moved = [
        f"`{c}` {100 * base[c]['time_error']:.1f} → {100 * first[c]['time_error']:.1f}%"
        for c in base
        if c in first and abs(base[c]["time_error"] - first[c]["time_error"]) > 0.01
    ]
    totals[0] += ok(base)
    totals[1] += ok(first)
    totals[2] += len(base)
    print(f"| {run} | {ok(base)} of {len(base)} | {ok(first)} of {len(first)} | {'; '.join(moved) or '—'} |")
print(f"| all | {totals[0]} of {totals[2]} | {totals[1]} of {totals[2]} | |")
