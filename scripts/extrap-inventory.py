#!/usr/bin/env python3
"""Print what Extra-P 4.2.5 reads from each file of its own test data (testdata/peers/extrap).

Run with the venv of scripts/install-extrap:
    .venv/bin/python scripts/extrap-inventory.py > /tmp/inventory.tsv
One line per input: path, reader, then either `ok` with the parameter names, the number of
series (callpath, metric) that hold measurements, the number of coordinates and the total
number of repetition values, or `rejected` with Extra-P's exception. The Rust test
`crates/core/tests/extrap_testdata.rs` carries these figures as its expectations.
"""
import sys
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")

from extrap.fileio.file_reader.text_file_reader import TextFileReader
from extrap.fileio.file_reader.json_file_reader import JsonFileReader
from extrap.fileio.file_reader.talpas_file_reader import TalpasFileReader
from extrap.fileio.file_reader.extrap3_experiment_reader import Extrap3ExperimentFileReader
from extrap.fileio.experiment_io import read_experiment
from extrap.fileio.file_reader.cube_file_reader2 import CubeFileReader2

ROOT = Path(__file__).resolve().parent.parent / "testdata" / "peers" / "extrap"


def keep(reader):
    reader.keep_values = True  # so that the repetitions can be counted
    return reader


def cube_dirs():
    """The directories under cubeset/ that Extra-P's CUBE reader is pointed at."""
    return sorted({p.parent.parent for p in (ROOT / "cubeset").rglob("*.cubex")})


def reader_for(path: Path):
    rel = path.relative_to(ROOT).as_posix()
    if rel.startswith("talpas/"):
        return "talpas", lambda p: keep(TalpasFileReader()).read_experiment(p)
    if path.suffix == ".extra-p":
        return "experiment", read_experiment
    if path.name.startswith("experiment_3"):
        return "extrap3", lambda p: Extrap3ExperimentFileReader().read_experiment(p)
    if path.suffix.lower() in (".json", ".jsonl"):
        return "json", lambda p: keep(JsonFileReader()).read_experiment(p)
    if path.suffix == ".txt":
        return "text", lambda p: keep(TextFileReader()).read_experiment(p)
    return None, None


def values_of(m):
    # Every reader records the repetition count, whether or not it keeps the values.
    return int(m.repetitions) if m.repetitions is not None else -1


def main():
    targets = sorted(p for p in ROOT.rglob("*") if p.is_file() and "cubeset" not in p.parts)
    for d in cube_dirs():
        rel = d.relative_to(ROOT).as_posix()
        try:
            reader = keep(CubeFileReader2())
            exp = reader.read_experiment(str(d))
        except Exception as e:  # noqa: BLE001
            msg = str(e).replace("\t", " ").replace("\n", " ")[:120]
            print(f"{rel}\tcube\trejected\t{type(e).__name__}: {msg}")
            continue
        report(rel, "cube", exp)
    for path in targets:
        name, read = reader_for(path)
        rel = path.relative_to(ROOT).as_posix()
        if read is None:
            continue
        try:
            exp = read(str(path))
        except Exception as e:  # noqa: BLE001 - we report whatever Extra-P raises
            msg = str(e).replace("\t", " ").replace("\n", " ")[:120]
            print(f"{rel}\t{name}\trejected\t{type(e).__name__}: {msg}")
            continue
        report(rel, name, exp)


def report(rel, name, exp):
    params = ",".join(p.name for p in exp.parameters)
    series = [k for k, v in exp.measurements.items() if v]
    nvalues = sum(values_of(m) for v in exp.measurements.values() for m in v)
    npoints = sum(len(v) for v in exp.measurements.values())
    print(f"{rel}\t{name}\tok\t{params}\t{len(series)}\t{len(exp.coordinates)}\t{npoints}\t{nvalues}")


if __name__ == "__main__":
    sys.exit(main())
