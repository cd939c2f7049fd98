#!/usr/bin/env python3
"""How well do fitted models follow their own measurements?

    python3 scripts/fit-residuals.py FILE [SUBSTRING] [--perfcompose PATH]

FILE is Extra-P text (e.g. `blocks.txt` of `perfcompose validate --save DIR`). Every
region (optionally only those whose callpath contains SUBSTRING) is fitted with
`perfcompose fit --json --measure median`, and the model is evaluated at each measured
point against the median of its repetitions. One line per region: the largest relative
miss, the miss at every point in %, and the model. A composed prediction cannot be closer
to the program than its blocks' models are to the blocks: this separates the error of the
fit from the error of the composition (docs/validation.md, run I).

Exits with status 2 on bad arguments or a file `perfcompose fit` rejects.
"""
import json
import math
import statistics
import subprocess
import sys
from fractions import Fraction


def fail(msg):
    print(f"fit-residuals: {msg}", file=sys.stderr)
    sys.exit(2)


def read_medians(path):
    """Callpath -> medians per point, and the points (one parameter)."""
    points, data, region = [], {}, None
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as e:
        fail(f"{path}: {e}")
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if line.startswith("POINTS"):
            inner = line[len("POINTS"):].strip().strip("()").split()
            if len(inner) != 1:
                fail(f"{path}:{n}:1: only one parameter is supported here")
            points.append(float(inner[0]))
        elif line.startswith("REGION"):
            region = line[len("REGION"):].strip()
            data[region] = []
        elif line.startswith("DATA"):
            if region is None:
                fail(f"{path}:{n}:1: DATA before any REGION")
            try:
                data[region].append(statistics.median(float(v) for v in line.split()[1:]))
            except (ValueError, statistics.StatisticsError):
                fail(f"{path}:{n}:6: DATA needs numbers")
    return points, data


def evaluate(model, x):
    value = model["constant"]
    for term in model["terms"]:
        product = term["coefficient"]
        for f in term["factors"]:
            product *= x ** float(Fraction(f["exponent"])) * math.log2(x) ** f["log_exponent"]
        value += product
    return value


def main(argv):
    args = list(argv)
    exe = "target/release/perfcompose"
    if "--perfcompose" in args:
        i = args.index("--perfcompose")
        if i + 1 >= len(args):
            fail("--perfcompose needs a path")
        exe = args[i + 1]
        del args[i : i + 2]
    if not args or len(args) > 2:
        fail("usage: fit-residuals.py FILE [SUBSTRING] [--perfcompose PATH]")
    path, pattern = args[0], (args[1] if len(args) > 1 else "")
    points, medians = read_medians(path)
    try:
        run = subprocess.run(
            [exe, "fit", "--json", "--measure", "median", path], capture_output=True, text=True
        )
    except OSError as e:
        fail(f"cannot run {exe}: {e}")
    if run.returncode != 0:
        fail(run.stderr.strip() or f"{exe} fit failed")
    for model in json.loads(run.stdout)["models"]:
        callpath = model["callpath"]
        if pattern not in callpath or callpath not in medians:
            continue
        misses = [evaluate(model, x) / y - 1 for x, y in zip(points, medians[callpath])]
        worst = max(map(abs, misses))
        print(
            f"{callpath:<48} max {100 * worst:5.1f}%  "
            + " ".join(f"{100 * m:+.0f}" for m in misses)
            + f"  | {model['model']}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
