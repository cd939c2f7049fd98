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


def main():
    from extrap.modelers.model_generator import ModelGenerator
    from extrap.fileio.file_reader.text_file_reader import TextFileReader
    from extrap.fileio.file_reader.json_file_reader import JsonFileReader

    out, files = sys.argv[1], sys.argv[2:]
    cases = []
    for path in files:
        reader = TextFileReader() if path.endswith(".txt") else JsonFileReader()
        reader.keep_values = True
        experiment = reader.read_experiment(path)
        parameters = [str(p) for p in experiment.parameters]
        generator = ModelGenerator(experiment, "Default")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            generator.model_all()
        for (callpath, metric), model in generator.models.items():
            f = model.hypothesis.function
            # Readers that do not keep repetitions give the mean, which is all the
            # default modeler (measure: mean) uses anyway.
            points = [{"coordinate": list(m.coordinate.as_tuple()),
                       "values": ([float(v) for v in m.values] if m.values is not None
                                  else [float(m.mean)])}
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
