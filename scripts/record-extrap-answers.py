#!/usr/bin/env python3
"""Record Extra-P 4.2.5's models, with the data they were fitted to, as known answers.

Writes testdata/fit/extrap-answers.json: for each series of the given files, the
parameters, every point's coordinate and repetitions, and the model Extra-P's default
modeler picks (constant and terms with exact exponents). The core crate's tests check
that `--modeler extrap` reproduces these models without needing Extra-P or a file reader.

Usage: .venv/bin/python scripts/record-extrap-answers.py OUT FILE...
"""
import json
import sys
import warnings

sys.path.insert(0, __file__.rsplit("/", 1)[0])
extrap_fit = __import__("extrap-fit")


def raw_jsonl_values(path, parameters):
    """Repetitions per (callpath, metric, coordinate) straight from a JSON Lines file:
    Extra-P's reader keeps only their mean there even with keep_values."""
    out = {}
    with open(path) as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            d = json.loads(line)
            coord = tuple(float(d["params"][p]) for p in parameters)
            key = (d.get("callpath", "<root>"), d.get("metric", "<default>"), coord)
            v = d["value"]
            out.setdefault(key, []).extend(v if isinstance(v, list) else [v])
    return out


def main():
    from extrap.modelers.model_generator import ModelGenerator
    from extrap.fileio.file_reader.text_file_reader import TextFileReader
    from extrap.fileio.file_reader.json_file_reader import JsonFileReader

    out, files = sys.argv[1], sys.argv[2:]
    cases = []
    for path in files:
        reader = TextFileReader() if path.endswith(".txt") else JsonFileReader()
        reader.keep_values = True
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                experiment = reader.read_experiment(path)
                parameters = [str(p) for p in experiment.parameters]
                generator = ModelGenerator(experiment, "Default")
                generator.model_all()
        except Exception as e:  # Extra-P rejects some of its own test files on purpose
            print(f"skipped {path}: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        raw = {}
        if path.endswith(".jsonl"):
            try:
                raw = raw_jsonl_values(path, parameters)
            except (KeyError, ValueError, TypeError):
                raw = {}
        for (callpath, metric), model in generator.models.items():
            f = model.hypothesis.function
            # Readers that do not keep repetitions give the mean, which is all the
            # default modeler (measure: mean) uses anyway.
            def values(m):
                key = (callpath.name, metric.name, tuple(float(c) for c in m.coordinate.as_tuple()))
                if m.values is not None:
                    return [float(v) for v in m.values]
                if key in raw and abs(sum(raw[key]) / len(raw[key]) - m.mean) <= 1e-9 * abs(m.mean):
                    return [float(v) for v in raw[key]]
                return [float(m.mean)]
            points = [{"coordinate": list(m.coordinate.as_tuple()), "values": values(m)}
                      for m in experiment.measurements[(callpath, metric)]]
            cases.append({
                "file": path.split("testdata/", 1)[-1],
                "callpath": callpath.name,
                "metric": metric.name,
                "parameters": parameters,
                "points": points,
                "model": f.to_string(*experiment.parameters),
                "constant": float(f.constant_coefficient),
                "terms": extrap_fit.model_terms(f, parameters),
            })
    with open(out, "w") as fh:
        json.dump({"extrap": "4.2.5", "cases": cases}, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
