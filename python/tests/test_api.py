"""The Python forms of the inputs (dicts, DataFrames, numbers for `at`) give what the
command gives for the same input written as files and flags; simulate; to_frame; the
documentation."""

import json
import math

import pytest

import perfcompose as pc
from conftest import CASES, TESTDATA


def test_components_dict_is_the_components_file(cli_json, tmp_path, monkeypatch):
    toml = tmp_path / "blocks.toml"
    toml.write_text(
        '[components.a]\nmodel = "200 + 3 * x"\nstderr = [20, 0.05]\n'
        "measured = { x = [1000, 64000] }\n\n"
        '[components.b]\nmodel = "5000 + 2 * x"\nrelative_error = 0.1\n\n'
        '[components.c]\nmodel = "4 * x * log2(x)"\n'
    )
    table = {
        "a": {"model": "200 + 3 * x", "stderr": [20, 0.05], "measured": {"x": [1000, 64000]}},
        "b": {"model": "5000 + 2 * x", "relative_error": 0.1},
        "c": "4 * x * log2(x)",
    }
    term = "pipe(tpool(4, c), seq(a, b))"
    expected = cli_json(["predict", "--components", str(toml), term, "--at", "x=1000,1e6"])
    assert pc.predict(term, components=table, at={"x": [1000, 1e6]}) == expected
    assert pc.predict(term, components=toml, at="x=1000,1e6") == expected
    # A model object stands for its text.
    table["c"] = pc.Model("4 * x * log2(x)")
    assert pc.predict(term, components=table, at={"x": [1000, 1e6]}) == expected


def test_components_dict_with_measurements(cli_json, monkeypatch):
    case = CASES / "predict-intervals"
    monkeypatch.chdir(case)
    table = {
        "qsort": {"measurements": "qsort.txt"},
        "inc": {"model": "200 + 3 * x", "stderr": [20, 0.05], "measured": {"x": [1000, 64000]}},
        "sync": {"model": "5000 + 2 * x", "relative_error": 0.1},
    }
    term = "pipe(tpool(4, qsort), seq(inc, sync))"
    expected = cli_json(
        ["predict", "--components", "design.toml", term, "--at", "x=1000,1e6", "--advise"], case
    )
    assert pc.predict(term, components=table, at={"x": [1000, 1e6]}, advise=True) == expected


@pytest.mark.parametrize(
    "at, text",
    [
        ({"x": [1024, 4096.5]}, ["x=1024,4096.5"]),
        ({"x": 1024, "n": [1, 24]}, ["x=1024", "n=1,24"]),
        ({"x": [0.1, 1e-7, 3e20]}, ["x=0.1,1e-7,3e20"]),
        ("x=2^10..2^20:6", ["x=2^10..2^20:6"]),
    ],
)
def test_at_as_dict_or_text(cli_json, at, text):
    term = "pipe(tpool(24, qsort), tpool(n, inc))" if "n" in str(at) else "pipe(qsort, inc)"
    args = ["predict", term]
    for t in text:
        args += ["--at", t]
    assert pc.predict(term, at=at) == cli_json(args)


def test_at_takes_numpy_arrays(cli_json):
    np = pytest.importorskip("numpy")
    xs = np.logspace(1, 6, 7)
    expected = cli_json(["predict", "pipe(qsort, inc)", "--at", "x=" + ",".join(repr(float(x)) for x in xs)])
    assert pc.predict("pipe(qsort, inc)", at={"x": xs}) == expected


def test_overhead_from_a_calibration_file(cli_json, tmp_path):
    calibration = TESTDATA / "validate" / "intel-seq-inc-nop" / "overhead-calibration.json"
    toml = tmp_path / "kernels.toml"
    toml.write_text('[components.inc]\nmodel = "2 * x"\n\n[components.nop]\nmodel = "1"\n')
    term = "pipe(inc, tpool(2, nop))"
    expected = cli_json(
        ["predict", "--components", str(toml), "--calibration", str(calibration), term, "--at", "x=10,1000"]
    )
    got = pc.predict(term, components=toml, calibration=calibration, at={"x": [10, 1000]})
    assert got == expected
    assert got["calibration"] == str(calibration)
    assert got["model"] != pc.predict(term, components=toml, at={"x": [10, 1000]})["model"]


def test_check_and_laws(cli_json):
    assert pc.check("pipe(qsort, inc)", "tpool(2, seq(qsort, inc))", at={"x": [2, 1024]}) == cli_json(
        ["check", "pipe(qsort, inc)", "tpool(2, seq(qsort, inc))", "--at", "x=2,1024"]
    )
    assert pc.check(laws=True, cores=1) == cli_json(["check", "--laws", "--cores", "1"])


def test_optimize(cli_json):
    design = "pipe(tpool(?, qsort), tpool(?, inc), nop)"
    expected = cli_json(["optimize", "--cores", "16", design, "--at", "x=4096", "--top", "3"])
    assert pc.optimize(design, cores=16, at={"x": 4096}, top=3) == expected


def measurements():
    points = [64, 128, 256, 512, 1024, 2048]
    reps = [[152.0 * x * (1 + 0.01 * k) + 900 for k in range(3)] for x in points]
    return points, reps


def test_fit_dict_is_the_file(cli_json, tmp_path):
    points, reps = measurements()
    text = "PARAMETER x\n\n" + "".join(f"POINTS ( {x} )\n" for x in points)
    text += "\nREGION blk\nMETRIC time\n" + "".join(
        "DATA " + " ".join(repr(v) for v in r) + "\n" for r in reps
    )
    path = tmp_path / "blk.txt"
    path.write_text(text)
    expected = cli_json(["fit", str(path)])
    got = pc.fit(
        {
            "parameters": ["x"],
            "points": [[x] for x in points],
            "repetitions": reps,
            "callpath": "blk",
            "metric": "time",
        }
    )
    assert got["models"][0]["file"] == "<measurements>"
    for m in expected["models"] + got["models"]:
        m.pop("file")
    assert got == expected
    assert pc.fit(path, modeler="extrap") == cli_json(["fit", "--modeler", "extrap", str(path)])
    assert pc.fit([path], basis="1, x") == cli_json(["fit", "--basis", "1, x", str(path)])


def test_fit_data_frame_is_the_csv_file(cli_json, tmp_path):
    pd = pytest.importorskip("pandas")
    points, reps = measurements()
    rows = [{"x": x, "value": v} for x, r in zip(points, reps) for v in r]
    frame = pd.DataFrame(rows)
    path = tmp_path / "blk.csv"
    frame.to_csv(path, index=False)
    expected = cli_json(["fit", str(path)])
    got = pc.fit(frame)
    for m in expected["models"] + got["models"]:
        m.pop("file")
    assert got == expected
    renamed = frame.rename(columns={"value": "time_ns"})
    assert pc.fit(renamed, value="time_ns")["models"][0]["model"] == got["models"][0]["model"]


WALL = ("wall_time_s", "actions_per_s", "slowdown", "gain")


def test_simulate(cli_json):
    d = TESTDATA / "sim" / "two-hosts"
    platform, trace = str(d / "platform.xml"), str(d / "index.txt")
    for extra, kw in [
        ([], {}),
        (["--network", "latency-bandwidth", "--speed-scale", "2"], {"network": "latency-bandwidth", "speed_scale": 2}),
        (["--measured-time", "1.2", "--eager-threshold", "0"], {"measured_time": 1.2, "eager_threshold": 0}),
    ]:
        expected = cli_json(["simulate", "--platform", platform, "--trace", trace, *extra])
        got = pc.simulate(platform, trace, **kw)
        for k in WALL:
            assert (k in got) == (k in expected)
            got.pop(k, None)
            expected.pop(k, None)
        assert got == expected
    assert math.isclose(pc.simulate(platform, trace)["simulated_time_s"], 1.011000160, rel_tol=1e-9)


def test_simulate_writes_the_timelines(cli, tmp_path):
    d = TESTDATA / "sim" / "two-hosts"
    platform, trace = str(d / "platform.xml"), str(d / "index.txt")
    pc.simulate(platform, trace, timeline=tmp_path / "py.json", paje=tmp_path / "py.paje")
    out = cli(["simulate", "--platform", platform, "--trace", trace,
               "--timeline", str(tmp_path / "cli.json"), "--paje", str(tmp_path / "cli.paje")])
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "py.json").read_text()) == json.loads((tmp_path / "cli.json").read_text())
    assert (tmp_path / "py.paje").read_text() == (tmp_path / "cli.paje").read_text()


def test_to_frame():
    pd = pytest.importorskip("pandas")
    p = pc.predict("pipe(qsort, inc)", components={"qsort": {"model": "3 * x", "relative_error": 0.1}, "inc": "2 * x"},
                   at={"x": [10, 100]})
    f = pc.to_frame(p)
    assert list(f["x"]) == [10, 100]
    assert list(f["value"]) == [v["value"] for v in p["values"]]
    assert (f["low"] <= f["value"]).all() and (f["value"] <= f["high"]).all()
    c = pc.to_frame(pc.check("qsort", "inc", at={"x": [2, 16]}))
    assert list(c.columns[:3]) == ["x", "first", "second"]
    o = pc.to_frame(pc.optimize("tpool(?, qsort)", cores=4, at={"x": 64}))
    assert o["threads"].iloc[0] == 4
    points, reps = measurements()
    fitted = pc.fit({"parameters": ["x"], "points": [[x] for x in points], "repetitions": reps})
    ff = pc.to_frame(fitted)
    assert len(ff) == len(points) and list(ff["x"]) == points
    d = TESTDATA / "sim" / "two-hosts"
    s = pc.to_frame(pc.simulate(d / "platform.xml", d / "index.txt"))
    assert list(s["rank"]) == [0, 1]
    laws = pc.to_frame(pc.check(laws=True))
    assert "law" in laws.columns
    with pytest.raises(TypeError):
        pc.to_frame({"nothing": 1})


def test_the_documentation_is_there():
    for f in (pc.predict, pc.check, pc.optimize, pc.fit, pc.simulate, pc.to_frame, pc.Model, pc.Model.evaluate):
        assert f.__doc__ and len(f.__doc__) > 60, f
    assert "docs/composition.md" in pc.predict.__doc__
    names = [n for n, _ in pc.modelers()]
    assert names[0] == "perfcompose" and "extrap" in names


def test_results_are_plain_json_values():
    p = pc.predict("pipe(qsort, inc)", at={"x": [4]})
    assert json.loads(json.dumps(p)) == p
