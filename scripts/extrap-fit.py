#!/usr/bin/env python3
"""Run Extra-P's default modeler on a measurements file and print the models as JSON.

Used by the fitting benchmark (`cargo run -p perfcompose-core --release --example fit_bench`)
and by the agreement report: it times only the modeling step (not Python's start-up or file
reading), so the per-region time compares like with like, and it prints every model's terms
with exact exponents so that the caller can evaluate and compare them without parsing
Extra-P's printed strings.

Usage: .venv/bin/python scripts/extrap-fit.py [--measure mean] [--format text|json] FILE
"""
import argparse
import json
import time
import warnings
from fractions import Fraction


def exponent(x):
    # Extra-P keeps exponents as floats derived from small fractions (5/4, 2/3, ...).
    return str(Fraction(x).limit_denominator(64))


def compound_factors(compound_term, parameter):
    """(exponent, log exponent) of one compound term of one parameter."""
    exp, log = Fraction(0), Fraction(0)
    for simple in compound_term.simple_terms:
        if simple.term_type == "polynomial":
            exp += Fraction(exponent(simple.exponent))
        else:
            log += Fraction(exponent(simple.exponent))
    return {"parameter": parameter, "exponent": str(exp), "log_exponent": str(log)}


def model_terms(function, parameters):
    terms = []
    for term in function.compound_terms:
        if hasattr(term, "parameter_term_pairs"):
            factors = [compound_factors(ct, parameters[p]) for p, ct in term.parameter_term_pairs]
            terms.append({"coefficient": float(term.coefficient), "factors": factors})
        else:
            terms.append({"coefficient": float(term.coefficient),
                          "factors": [compound_factors(term, parameters[0])]})
    return terms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--measure", default="mean", choices=["mean", "median", "minimum", "maximum"])
    ap.add_argument("--format", default="text", choices=["text", "json"])
    ap.add_argument("file")
    args = ap.parse_args()

    from extrap.entities.measurement import Measure
    from extrap.modelers.model_generator import ModelGenerator
    if args.format == "text":
        from extrap.fileio.file_reader.text_file_reader import TextFileReader
        experiment = TextFileReader().read_experiment(args.file)
    else:
        from extrap.fileio.file_reader.json_file_reader import JsonFileReader
        experiment = JsonFileReader().read_experiment(args.file)

    measure = {"mean": Measure.MEAN, "median": Measure.MEDIAN,
               "minimum": Measure.MINIMUM, "maximum": Measure.MAXIMUM}[args.measure]
    parameters = [str(p) for p in experiment.parameters]
    generator = ModelGenerator(experiment, "Default", use_measure=measure)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # CPU time of this thread: the machine is shared and wall time would include
        # other processes' load (the Rust side measures the same way).
        start = time.thread_time()
        generator.model_all()
        seconds = time.thread_time() - start

    models = []
    for (callpath, metric), model in generator.models.items():
        h = model.hypothesis
        f = h.function
        models.append({
            "callpath": callpath.name,
            "metric": metric.name,
            "parameters": parameters,
            "model": f.to_string(*experiment.parameters),
            "constant": float(f.constant_coefficient),
            "terms": model_terms(f, parameters),
            "rss": float(h.RSS),
            "smape": float(h.SMAPE),
            "ar2": float(h.AR2),
        })
    print(json.dumps({"seconds": seconds, "regions": len(models), "models": models}))


if __name__ == "__main__":
    main()
