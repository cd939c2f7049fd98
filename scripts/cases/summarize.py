#!/usr/bin/env python3
"""Helpers of scripts/bench-cases.

    summarize.py threads TERM   threads a term keeps busy, counted as `validate` counts
                                them: a pipeline's stages add up, a task pool multiplies,
                                a sequence takes its largest part
    summarize.py report DIR     the Markdown table of a bench-cases run in DIR
"""
import json
import os
import re
import statistics
import sys


def parse(term):
    """A term as nested (op, count, parts) tuples; a component name is a string."""
    tokens = re.findall(r"[A-Za-z_][A-Za-z0-9_]*|\d+|[(),]", term)
    pos = 0

    def node():
        nonlocal pos
        tok = tokens[pos]
        pos += 1
        if pos < len(tokens) and tokens[pos] == "(":
            pos += 1
            parts = []
            while True:
                if tokens[pos].isdigit():
                    parts.append(int(tokens[pos]))
                    pos += 1
                else:
                    parts.append(node())
                sep = tokens[pos]
                pos += 1
                if sep == ")":
                    break
            return (tok, parts)
        return tok

    return node()


def threads(n):
    if isinstance(n, str):
        return 1
    op, parts = n
    if op == "pipe":
        return sum(threads(p) for p in parts)
    if op == "seq":
        return max(threads(p) for p in parts)
    if op == "tpool":
        return parts[0] * threads(parts[1])
    raise SystemExit(f"summarize.py: cannot count the threads of {op}(...)")


def ms(ns):
    return f"{ns / 1e6:.3g} ms"


def case_title(case_dir):
    root = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "cases")
    path = os.path.join(root, os.path.basename(case_dir) + ".sh")
    title = unit = os.path.basename(case_dir)
    if os.path.exists(path):
        for line in open(path):
            m = re.match(r'CASE_TITLE="(.*)"', line)
            if m:
                title = m.group(1)
            m = re.match(r'CASE_UNIT="(.*)"', line)
            if m:
                unit = m.group(1)
    return title, unit


def report(out):
    lines = []
    machine = open(os.path.join(out, "machine.txt")).read().strip().splitlines()
    lines.append("# Case studies: measured against predicted")
    lines.append("")
    lines += [f"- {m}" for m in machine]
    lines.append("")
    lines.append(
        "Times are wall time per unit of input (ms per unit), the statistic of the "
        "repetitions being the minimum (what `validate` fits and compares); the spread "
        "is the coefficient of variation (CV) of the repetitions at that point. Error = "
        "(predicted − measured) / measured."
    )
    verdicts = []
    for name in sorted(os.listdir(out)):
        d = os.path.join(out, name)
        if not os.path.isdir(d) or not os.path.exists(os.path.join(d, "blocks.toml")):
            continue
        title, unit = case_title(d)
        lines += ["", f"## {name}: {title}", "", f"Unit: one {unit}.", ""]
        lines.append("| block | x | time per unit (min) | median | CV | reps |")
        lines.append("|---|---|---|---|---|---|")
        for f in sorted(os.listdir(d)):
            m = re.match(r"measure-(.*)\.json$", f)
            if not m:
                continue
            try:
                data = json.load(open(os.path.join(d, f)))
            except (ValueError, OSError):
                lines.append(f"| {m.group(1)} | – | failed: see measure-{m.group(1)}.stderr | | | |")
                continue
            for p in data["points"]:
                x = int(p["point"]["x"])
                lines.append(
                    f"| {data['name']} | {x} | {ms(p['value'])} | {ms(p['median'])} | "
                    f"{100 * p['cv']:.1f}% | {len(p['values'])} |"
                )
        lines += ["", "| workers | term | --cores | load | x | predicted | measured (min) | CV | error | verdict |"]
        lines.append("|---|---|---|---|---|---|---|---|---|---|")
        metas = sorted(f for f in os.listdir(d) if f.endswith(".meta"))
        for f in sorted(metas, key=lambda f: int(f.split("-")[1].split(".")[0])):
            n, term, cores, load = open(os.path.join(d, f)).read().splitlines()[:4]
            try:
                rep = json.load(open(os.path.join(d, f"validate-{n}.json")))
                row = rep["rows"][0]
            except (ValueError, OSError, KeyError, IndexError):
                lines.append(f"| {n} | `{term}` | {cores} | {load} | – | failed: see validate-{n}.stderr | | | | |")
                continue
            verdicts.append((name, n, row["verdict"], row["time_error"]))
            for i, p in enumerate(row["points"]):
                err = (p["predicted"] - p["measured"]) / p["measured"]
                first = i == 0
                lines.append(
                    f"| {n if first else ''} | {'`' + term + '`' if first else ''} | "
                    f"{cores if first else ''} | {load if first else ''} | {p['x']} | "
                    f"{ms(p['predicted'])} | {ms(p['measured'])} | {100 * p['cv']:.1f}% | "
                    f"{100 * err:+.1f}% | {row['verdict'] if first else ''} |"
                )
        paired = os.path.join(d, "paired.json")
        if os.path.exists(paired):
            pr = json.load(open(paired))
            lines += [
                "",
                f"Paired rounds at x = {pr['x']} ({len(pr['rounds'])} rounds, each timing "
                "every block and every program back to back; the prediction of a round is "
                "composed from that round's block times):",
                "",
                "| workers | predicted (median over rounds, CV) | measured (median, CV) | "
                "error: median over rounds | range over rounds | cores the program kept busy (median) |",
                "|---|---|---|---|---|---|",
            ]
            for n, sm in pr["summary"].items():
                lines.append(
                    f"| {n} | {ms(sm['predicted_median_ns'])} ({100 * sm['predicted_cv']:.0f}%) | "
                    f"{ms(sm['measured_median_ns'])} ({100 * sm['measured_cv']:.0f}%) | "
                    f"{100 * sm['error_median']:+.1f}% | "
                    f"{100 * sm['error_min']:+.1f}% .. {100 * sm['error_max']:+.1f}% | "
                    + (f"{sm['cores_used_median']:.2f} |" if "cores_used_median" in sm else "– |")
                )
    lines += ["", "## Verdicts", ""]
    lines.append("| case | workers | verdict | time error (largest over x) |")
    lines.append("|---|---|---|---|")
    for name, n, verdict, err in verdicts:
        lines.append(f"| {name} | {n} | {verdict} | {100 * err:.1f}% |")
    judged = [v for v in verdicts if v[2] != "reported_only"]
    if judged:
        within = sum(1 for v in judged if v[2] == "within")
        lines.append("")
        lines.append(
            f"{within} of {len(judged)} judged rows within the 10% target; median time "
            f"error {100 * statistics.median(v[3] for v in judged):.1f}%."
        )
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "threads":
        print(threads(parse(sys.argv[2])))
    elif len(sys.argv) == 3 and sys.argv[1] == "report":
        sys.stdout.write(report(sys.argv[2]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
