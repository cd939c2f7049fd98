#!/usr/bin/env python3
"""How well do fitted models follow their own measurements?

    python3 scripts/fit-residuals.py FILE [SUBSTRING] [--modeler NAME] [--perfcompose PATH]

FILE is Extra-P text (e.g. `blocks.txt` of `perfcompose validate --save DIR`). Every
region (optionally only those whose callpath contains SUBSTRING) is fitted with
`perfcompose fit --json --measure median` (`--modeler NAME`: another modeler, e.g.
`segmented`), and the model's prediction at each measured point is compared with the
median of its repetitions. One line per region: the largest relative
miss, the miss at every point in %, and the model. A composed prediction cannot be closer
to the program than its blocks' models are to the blocks: this separates the error of the
fit from the error of the composition (docs/validation.md, run I).

Exits with status 2 on bad arguments or a file `perfcompose fit` rejects.
"""
import json
import statistics
import subprocess
import sys

import extrap_text


def fail(msg):
    print(f"fit-residuals: {msg}", file=sys.stderr)
    sys.exit(2)


def read_medians(path):
    """Callpath -> medians per point, and the points (one parameter)."""
    points, data = extrap_text.read(path, "fit-residuals")
    return points, {r: [statistics.median(v) for v in reps] for r, reps in data.items()}


def main(argv):
    args = list(argv)
    options = {"--perfcompose": "target/release/perfcompose", "--modeler": "perfcompose"}
    for flag in list(options):
        if flag in args:
            i = args.index(flag)
            if i + 1 >= len(args):
                fail(f"{flag} needs a value")
            options[flag] = args[i + 1]
            del args[i : i + 2]
    if not args or len(args) > 2 or any(a.startswith("--") for a in args):
        fail("usage: fit-residuals.py FILE [SUBSTRING] [--modeler NAME] [--perfcompose PATH]")
    exe = options["--perfcompose"]
    path, pattern = args[0], (args[1] if len(args) > 1 else "")
    points, medians = read_medians(path)
    command = [exe, "fit", "--json", "--measure", "median", "--modeler", options["--modeler"], path]
    try:
        run = subprocess.run(command, capture_output=True, text=True)
    except OSError as e:
        fail(f"cannot run {exe}: {e}")
    if run.returncode != 0:
        fail(run.stderr.strip() or f"{exe} fit failed")
    for model in json.loads(run.stdout)["models"]:
        callpath = model["callpath"]
        if pattern not in callpath or callpath not in medians:
            continue
        predicted = {p["coordinate"][0]: p["predicted"] for p in model["points"]}
        misses = [predicted[x] / y - 1 for x, y in zip(points, medians[callpath]) if x in predicted]
        worst = max(map(abs, misses))
        print(
            f"{callpath:<48} max {100 * worst:5.1f}%  "
            + " ".join(f"{100 * m:+.0f}" for m in misses)
            + f"  | {model['model']}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
