"""Tables of the quick-suite speed A/B: wall time and rows within target per run
(`ab*/`), and the measured values of the same tests under both builds (`points/`).

Usage: python3 docs/results/quick-speed/table.py docs/results/quick-speed
"""
import glob
import json
import os
import sys


def within(row):
    target = 0.15 if row["configuration"].startswith("mapreduce") else 0.10
    return row["coefficient_error"] <= target and row["time_error"] <= target


def runs(root):
    print("| A/B | run | build | wall [s] | within target | time errors summed [points] | fast share (auto) |")
    print("|---|---|---|---|---|---|---|")
    totals = {}
    for ab in sorted(glob.glob(os.path.join(root, "ab*"))):
        for line in open(os.path.join(ab, "log.txt")):
            parts = line.split()
            rnd, build, wall = parts[1], parts[3], float(parts[7])
            d = json.load(open(os.path.join(ab, f"{build}-{rnd}.json")))
            rows = [r for r in d["rows"] if r["within_cores"]]
            ok = sum(within(r) for r in rows)
            err = sum(100 * r["time_error"] for r in rows)
            share = d.get("auto_measure", {}).get("fast_share", float("nan"))
            t = totals.setdefault(build, [0.0, 0, 0, 0.0, 0])
            t[0] += wall
            t[1] += ok
            t[2] += len(rows)
            t[3] += err
            t[4] += 1
            print(f"| {os.path.basename(ab)} | {rnd} | {build} | {wall:.1f} | {ok}/{len(rows)} | {err:.1f} | {100 * share:.0f}% |")
    print()
    for build, (wall, ok, n, err, k) in sorted(totals.items()):
        print(f"- build {build}: {k} runs, mean wall {wall / k:.1f} s, {ok}/{n} rows within target, errors summed {err:.1f} points")
    print()


def points(root):
    rows = {}
    for f in sorted(glob.glob(os.path.join(root, "points", "*.json"))):
        build, rnd, _ = os.path.basename(f)[:-5].split("-")
        for s in json.load(open(f)):
            for p in s["points"]:
                rows.setdefault((s["name"], p["x"]), {}).setdefault(build, []).append(min(p["values"]))
    print("| series | x | A fastest repetition per run [ns] | B fastest repetition per run [ns] | B/A best |")
    print("|---|---|---|---|---|")
    for (name, x), v in rows.items():
        a = " ".join(f"{t:.0f}" for t in v["A"])
        b = " ".join(f"{t:.0f}" for t in v["B"])
        print(f"| `{name}` | {x} | {a} | {b} | {min(v['B']) / min(v['A']):.3f} |")


if __name__ == "__main__":
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__)
    runs(root)
    points(root)
