"""The minima of the first block of the pool's seq and of the program, per size, OLD/NEW,
from the folders ab.sh wrote: `python3 minima.py [DIR]`."""
import os
import sys


def read(path):
    """Extra-P text: {region: [(x, minimum of its repetitions)]}."""
    out, xs, region, i = {}, [], None, 0
    for line in open(path):
        line = line.strip()
        if line.startswith("POINTS"):
            xs.append(float(line.split()[2]))
        elif line.startswith("REGION"):
            region, i = line[7:], 0
            out[region] = []
        elif line.startswith("DATA"):
            out[region].append((xs[i], min(map(float, line.split()[1:]))))
            i += 1
    return out


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    higher = total = 0
    for row in ["tpool_2__seq_inc__nop", "tpool_2__seq_inc__inc"]:
        r = 1
        while os.path.isdir(f"{d}/old-{r}-{row}"):
            for what in ["blocks", "programs"]:
                old = read(f"{d}/old-{r}-{row}/{what}.txt")
                new = read(f"{d}/new-{r}-{row}/{what}.txt")
                for k in old:
                    if what == "blocks" and "seq1" not in k:
                        continue
                    pairs = list(zip(old[k], new[k]))
                    if what == "blocks":
                        higher += sum(b[1] > a[1] for a, b in pairs)
                        total += len(pairs)
                    cells = " ".join(f"{int(a[0])}: {a[1]:.0f}/{b[1]:.0f}" for a, b in pairs)
                    print(f"{row} round {r} {k.split('->')[-1]}: {cells}")
            r += 1
    print(f"pooled block minimum above the timed thread's in {higher} of {total}")


if __name__ == "__main__":
    main()
