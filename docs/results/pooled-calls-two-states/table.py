"""Table of run.sh's A/B: per row and round, the time error and measured/predicted at each
size under OLD (timed thread only) and NEW (every thread's calls pooled), and the cores'
states before each round: `python3 table.py OUT`."""
import glob
import math
import json
import os
import re
import sys


def ratios(folder):
    """measured / predicted per size, from a saved run's points.json."""
    rows = json.load(open(os.path.join(folder, "points.json")))
    return [p["measured"] / p["predicted"] for p in rows[0]["points"]]


def main():
    out = sys.argv[1]
    runs = {}
    for path in sorted(glob.glob(os.path.join(out, "*-*-*.json"))):
        m = re.match(r"(old|new)-(\d+)-(.*)\.json$", os.path.basename(path))
        if not m:
            continue
        build, rnd, row = m.groups()
        try:
            rep = json.load(open(path))
        except (OSError, ValueError):
            continue
        r = rep["rows"][0]
        runs[(row, int(rnd), build)] = (r["configuration"], r["time_error"], ratios(path[:-5]))
    print("| row | round | old: time error | new: time error | old: measured / predicted | new: measured / predicted | old / new: geometric mean |")
    print("|---|---|---|---|---|---|---|")
    wins = total = 0
    within = [0, 0]
    sums = [0.0, 0.0]
    logs = [[], []]
    for (row, rnd, build) in sorted(runs):
        if build != "old" or (row, rnd, "new") not in runs:
            continue
        conf, eo, ro = runs[(row, rnd, "old")]
        _, en, rn = runs[(row, rnd, "new")]
        total += 1
        wins += en < eo
        target = 0.15 if conf.startswith("mapreduce") else 0.10
        within[0] += eo <= target
        within[1] += en <= target
        sums[0] += eo
        sums[1] += en
        logs[0] += [math.log(x) for x in ro]
        logs[1] += [math.log(x) for x in rn]
        gm = [math.exp(sum(map(math.log, v)) / len(v)) for v in (ro, rn)]
        fmt = lambda v: " ".join(f"{x:.2f}" for x in v)
        print(f"| `{conf}` | {rnd} | {eo*100:.1f}% | {en*100:.1f}% | {fmt(ro)} | {fmt(rn)} | {gm[0]:.3f} / {gm[1]:.3f} |")
    print()
    print(f"pairs: {total}; new smaller error in {wins}; within target (10%, MapReduce 15%): old {within[0]}, new {within[1]}; "
          f"errors summed: old {sums[0]*100:.1f}, new {sums[1]*100:.1f} points")
    for name, v in zip(["old", "new"], logs):
        if v:
            mean = sum(v) / len(v)
            sd = math.sqrt(sum((x - mean) ** 2 for x in v) / max(len(v) - 1, 1))
            print(f"{name}: measured / predicted over all {len(v)} points, geometric mean {math.exp(mean):.3f}, "
                  f"spread (sd of the log) {sd:.3f}")
    for f in sorted(glob.glob(os.path.join(out, "states-*.txt"))):
        lines = open(f).read().splitlines()
        print(f"\n{os.path.basename(f)} (core_states 10 100, started {lines[0]} UTC):")
        for line in lines[1:]:
            print("    " + line)


if __name__ == "__main__":
    main()
