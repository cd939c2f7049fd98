#!/usr/bin/env python3
"""Per saved `validate --save DIR` run: `pipe(inc, inc)`'s program (its fastest
repetition per size, DIR/programs.txt) over the fastest repetition of its first stage's
unit test (`inc_stage1_of_inc_then_inc`) and over that of the pool's co-running `inc`
(`inc_par2_seq1_of_inc_then_inc`, timed while the other core runs `inc` too, from
`tpool(2, seq(inc, inc))`), and the co-running `inc` over the stage, at the first eight
sizes (x = 1,024 … 98,304). Runs without those three series are skipped.

Usage: python3 corun.py DIR [DIR ...]. A malformed file: a message naming it and the
line, exit status 2."""
import os
import sys


def fail(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(2)


def fastest(path):
    """REGION name -> the fastest repetition of each DATA line, in order."""
    out, region = {}, None
    try:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                if line.startswith("REGION"):
                    region = line.split(None, 1)[1].strip()
                    out[region] = []
                elif line.startswith("DATA") and region is not None:
                    try:
                        out[region].append(min(float(v) for v in line.split()[1:]))
                    except ValueError:
                        fail(f"{path}:{n}:1: a DATA line of numbers")
    except OSError:
        return None
    return out


def ratios(a, b):
    return " ".join(f"{p / q:.2f}" for p, q in zip(a[:8], b[:8]))


def main(dirs):
    if not dirs:
        fail("usage: corun.py DIR [DIR ...]")
    for d in dirs:
        blocks, programs = fastest(f"{d}/blocks.txt"), fastest(f"{d}/programs.txt")
        if blocks is None or programs is None:
            continue
        pick = lambda end: next((v for k, v in blocks.items() if k.endswith(end)), None)
        par, stage = pick("->inc_par2_seq1_of_inc_then_inc"), pick("->inc_stage1_of_inc_then_inc")
        prog = programs.get("pipe(inc, inc)")
        if not (par and stage and prog):
            continue
        print(f"{os.path.basename(d.rstrip('/')):24s} program/co-running: {ratios(prog, par)}"
              f" | program/stage 1: {ratios(prog, stage)}"
              f" | co-running/stage 1: {ratios(par, stage)}")


if __name__ == "__main__":
    main(sys.argv[1:])
