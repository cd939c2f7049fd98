"""Read Extra-P's text format with one parameter (`blocks.txt`, `programs.txt` of
`perfcompose validate --save DIR`) for the analysis scripts: the points, and per region
the repetitions measured at each point. A file that cannot be read or is malformed exits
with status 2 and names the file, line and column."""
import sys


def fail(prog, msg):
    print(f"{prog}: {msg}", file=sys.stderr)
    sys.exit(2)


def read(path, prog="extrap_text"):
    """(points, {region: [[repetition, ...] per point]}) of the file at `path`."""
    points, data, region = [], {}, None
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as e:
        fail(prog, f"{path}: {e}")
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if line.startswith("POINTS"):
            inner = line[len("POINTS"):].strip().strip("()").split()
            if len(inner) != 1:
                fail(prog, f"{path}:{n}:1: only one parameter is supported here")
            try:
                points.append(float(inner[0]))
            except ValueError:
                fail(prog, f"{path}:{n}:8: POINTS needs a number")
        elif line.startswith("REGION"):
            region = line[len("REGION"):].strip()
            data[region] = []
        elif line.startswith("DATA"):
            if region is None:
                fail(prog, f"{path}:{n}:1: DATA before any REGION")
            try:
                values = [float(v) for v in line.split()[1:]]
            except ValueError:
                values = []
            if not values:
                fail(prog, f"{path}:{n}:6: DATA needs numbers")
            data[region].append(values)
    return points, data
