#!/usr/bin/env python3
"""Paired rounds of a case study at one size: blocks and programs back to back.

    paired.py --perfcompose PC --run RUN --case CASE.sh --x X --rounds R --cores C OUT.json

Run in the case's work directory (its inputs made). A round times every block once and
the program once at each worker count, the blocks first in even rounds and last in odd
ones, so that one round's prediction and measurement are taken under one machine state.
Each round's prediction is composed by `perfcompose predict` from that round's block
times (components `model = "<time>"`, thread counts capped at C cores), and the round's
error is (predicted − measured) / measured; per-unit's CPU time gives the cores each
program run kept busy. On a machine whose speed drifts between
`measure` and `validate` (other work starting and stopping), the spread of these errors
over rounds separates the model's own error from the drift. The JSON holds every
round's times and, per worker count, the median error and its range.
"""
import argparse
import json
import re
import statistics
import subprocess
import tempfile

PER_UNIT = re.compile(r"([0-9.]+) ns per unit")
CORES = re.compile(r"cpu [0-9.]+ ns/unit, ([0-9.]+) cores")


def timed(cmd, cores=None):
    """The wall time per unit that `cmd` (per-unit) prints; the cores it kept busy on
    average go into `cores[key]` when given as (dict, key)."""
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    m = PER_UNIT.search(out)
    if not m:
        raise SystemExit(f"paired.py: no time per unit in the output of {' '.join(cmd)}: {out!r}")
    c = CORES.search(out)
    if cores is not None and c:
        cores[0][cores[1]] = float(c.group(1))
    return float(m.group(1))


def predict(pc, term, blocks, x, cores):
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        for name, ns in blocks.items():
            f.write(f'[components.{name}]\nmodel = "{ns!r}"\n')
        path = f.name
    out = subprocess.run(
        [pc, "predict", "--components", path, term, "--at", f"x={x}", "--cores", str(cores), "--json"],
        check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out)["values"][0]["value"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--perfcompose", required=True)
    p.add_argument("--run", required=True)
    p.add_argument("--case", required=True)
    p.add_argument("--x", required=True)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--cores", type=int, required=True)
    p.add_argument("--blocks", required=True, help="the block names, space-separated")
    p.add_argument("--workers", required=True, help="the worker counts, space-separated")
    p.add_argument("out")
    a = p.parse_args()
    blocks = a.blocks.split()
    workers = [int(n) for n in a.workers.split()]
    terms = {
        n: subprocess.run(["bash", a.run, a.case, "term", str(n)], check=True,
                          capture_output=True, text=True).stdout.strip()
        for n in workers
    }
    rounds = []
    for r in range(a.rounds):
        def time_blocks():
            return {b: timed(["bash", a.run, a.case, "block", b, a.x]) for b in blocks}

        busy = {}

        def time_programs():
            order = workers if r % 2 == 0 else list(reversed(workers))
            return {n: timed(["bash", a.run, a.case, "program", str(n), a.x], (busy, str(n)))
                    for n in order}

        if r % 2 == 0:
            b = time_blocks()
            progs = time_programs()
        else:
            progs = time_programs()
            b = time_blocks()
        preds = {n: predict(a.perfcompose, terms[n], b, a.x, a.cores) for n in workers}
        rounds.append({"blocks_ns": b, "measured_ns": {str(n): progs[n] for n in workers},
                       "predicted_ns": {str(n): preds[n] for n in workers},
                       "program_cores": busy})
    summary = {}
    for n in workers:
        errs = [(rd["predicted_ns"][str(n)] - rd["measured_ns"][str(n)]) / rd["measured_ns"][str(n)]
                for rd in rounds]
        meas = [rd["measured_ns"][str(n)] for rd in rounds]
        pred = [rd["predicted_ns"][str(n)] for rd in rounds]
        summary[str(n)] = {
            "term": terms[n],
            "error_median": statistics.median(errs),
            "error_min": min(errs),
            "error_max": max(errs),
            "measured_median_ns": statistics.median(meas),
            "measured_cv": statistics.pstdev(meas) / statistics.mean(meas),
            "predicted_median_ns": statistics.median(pred),
            "predicted_cv": statistics.pstdev(pred) / statistics.mean(pred),
            # Cores the program kept busy on average (CPU time over wall time).
            "cores_used_median": statistics.median(
                rd["program_cores"].get(str(n), 0.0) for rd in rounds),
        }
    json.dump({"x": a.x, "rounds": rounds, "cores": a.cores, "summary": summary},
              open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()
