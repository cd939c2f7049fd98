"""perfcompose from Python: predict the performance of parallel programs from models of
their building blocks.

The same Rust libraries as the ``perfcompose`` command, compiled into this package. Every
function returns what the command prints with ``--json`` on the same input, as plain
dicts and lists (``json.loads`` of it), and its keyword arguments mirror the command's
flags::

    import perfcompose as pc

    fits = pc.fit({"parameters": ["x"], "points": [[4], [8], [16], [32], [64]],
                   "repetitions": [[41.0], [83.0], [161.0], [325.0], [640.0]],
                   "callpath": "scan"})
    scan = fits["models"][0]["model"]
    p = pc.predict("pipe(tpool(4, scan), inc)", components={"scan": scan, "inc": "2 + x"},
                   at={"x": [1024, 4096]})
    pc.to_frame(p)            # one row per point (pandas)
    pc.Model(scan).evaluate(x=numpy.arange(1, 1e6))

Errors in the input raise :class:`InputError` (a ``ValueError``) with the command's
message, and ``source``, ``line`` and ``column`` where the problem has a place.

``docs/python.md`` in the repository is the guide; the JSON schemas are those of
``docs/composition.md`` (predict, check, optimize), ``docs/fitting.md`` (fit) and
``docs/simulation.md`` (simulate).
"""

import json
import math
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native
from ._errors import InputError

__all__ = [
    "InputError",
    "Model",
    "check",
    "fit",
    "modelers",
    "optimize",
    "predict",
    "simulate",
    "to_frame",
]

PathLike = Union[str, "os.PathLike[str]"]


def _path(p: Any, what: str) -> str:
    try:
        return os.fspath(p)
    except TypeError:
        raise TypeError(f"{what} must be a path (str or os.PathLike), not {type(p).__name__}") from None


def _number(v: Any) -> str:
    """A number as the command's `--at` reads it, exactly (``repr`` of a float round-trips)."""
    if isinstance(v, bool):
        raise TypeError("a grid value must be a number, not a bool")
    if isinstance(v, int):
        return str(v)
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise TypeError(f"a grid value must be a number, not {v!r}") from None
    if f.is_integer() and abs(f) < 2**53:
        return str(int(f))
    return repr(f)


def _at(at: Any) -> List[str]:
    """The command's `--at` arguments for ``at``: a dict ``{"x": [values]}`` (or one value),
    the command's text (``"x=1..2^20:32"``), or a list of such texts."""
    if at is None:
        return []
    if isinstance(at, str):
        return [at]
    if isinstance(at, Mapping):
        out = []
        for name, values in at.items():
            if isinstance(values, str):
                out.append(f"{name}={values}")
                continue
            try:
                items = list(values)
            except TypeError:
                items = [values]
            out.append(f"{name}=" + ",".join(_number(v) for v in items))
        return out
    if isinstance(at, (list, tuple)) and all(isinstance(a, str) for a in at):
        return list(at)
    raise TypeError('at must be a dict {"x": [values]}, a text "x=1..2^20" or a list of texts')


def _components(components: Any) -> Tuple[Optional[str], Optional[str]]:
    """(path, table as JSON) for ``components``: a path to a components file, or a dict
    ``{name: "model" | {"model": ..., "relative_error": 0.1} | {"measurements": path,
    "callpath": name}}`` (or a whole file's tables: ``{"components": {...}, "machine": {...}}``)."""
    if components is None:
        return None, None
    if isinstance(components, Mapping):
        whole = isinstance(components.get("components"), Mapping)
        table = dict(components) if whole else {"components": components}
        entries = {}
        for name, value in table["components"].items():
            if isinstance(value, (str, Model)):
                value = {"model": str(value)}
            elif isinstance(value, Mapping):
                value = {
                    k: (_path(v, "measurements") if k in ("measurements", "machine_file") else v)
                    for k, v in value.items()
                }
                if isinstance(value.get("model"), Model):
                    value["model"] = str(value["model"])
            else:
                raise TypeError(
                    f"component {name!r}: give a model string or a dict, not {type(value).__name__}"
                )
            entries[str(name)] = value
        table["components"] = entries
        return None, json.dumps(table)
    return _path(components, "components"), None


def predict(
    term: Optional[str] = None,
    *,
    term_file: Optional[PathLike] = None,
    components: Any = None,
    at: Any = None,
    level: Optional[float] = None,
    cores: Optional[int] = None,
    advise: bool = False,
    overhead: bool = False,
    calibration: Optional[PathLike] = None,
) -> Dict[str, Any]:
    """Compose the model of a design and evaluate it: ``perfcompose predict --json``.

    term: the design, e.g. ``"pipe(tpool(4, qsort), seq(inc, nop))"``.
    term_file: read the term from this file instead.
    components: a components file (path), a dict ``{name: "model string" |
        {"model": "...", "relative_error": 0.1} | {"measurements": path, "callpath": name}}``,
        or None for the pattern-composition paper's Table 1 blocks (built in).
    at: where to evaluate: ``{"x": [1024, 4096]}`` (a grid over several names), or the
        command's text ``"x=1..2^20:32"`` (or a list of such texts).
    level: confidence level of the prediction intervals (None: the command's 0.95).
    cores: cores per node; thread counts above it do not divide further.
    advise: say which component's uncertainty widens the interval most.
    overhead: add the pattern runtime's own per-element cost, as ``perfcompose calibrate
        overhead`` stored it for this machine, to a design of the runtime's kernels (their
        models from ``components``, in ns); the result's ``calibration`` names the file.
    calibration: add the overhead calibration in this file instead (implies overhead).

    Returns the dict of ``docs/composition.md``: ``term``, ``model``, ``dominant``,
    ``values`` (one per point, with ``interval`` where components are uncertain),
    ``pipelines``, ``crossovers``, ``notes``, ``suggestions``, ...
    """
    path, table = _components(components)
    return json.loads(
        _native.predict(
            term,
            None if term_file is None else _path(term_file, "term_file"),
            path,
            table,
            _at(at),
            cores,
            level,
            advise,
            overhead,
            None if calibration is None else _path(calibration, "calibration"),
        )
    )


def check(
    first: Optional[str] = None,
    second: Optional[str] = None,
    *,
    components: Any = None,
    at: Any = None,
    level: Optional[float] = None,
    cores: Optional[int] = None,
    laws: bool = False,
) -> Any:
    """Compare two designs (``perfcompose check --json A B``), or with ``laws=True`` check
    the relational laws on the components (``perfcompose check --laws --json``, a list).

    ``components``, ``at``, ``cores`` as in :func:`predict` (``at`` defaults to
    x = 2^0 .. 2^30); ``level``: the confidence a design must reach to be called faster.
    """
    path, table = _components(components)
    return json.loads(
        _native.check(first, second, laws, path, table, _at(at), cores, level)
    )


def optimize(
    design: str,
    *,
    cores: int,
    at: Any,
    components: Any = None,
    rewrites: bool = False,
    top: int = 10,
) -> Dict[str, Any]:
    """The best design under a core budget: ``perfcompose optimize --json``.

    design: the design with ``?`` for the thread counts to choose, e.g.
        ``"pipe(tpool(?, qsort), tpool(?, inc))"``.
    cores: the cores the design's threads must fit in.
    at: the one point to compare at, e.g. ``{"x": 4096}``.
    rewrites: also score the designs the relational laws make comparable.
    top: designs to return, best first.
    """
    path, table = _components(components)
    return json.loads(
        _native.optimize(design, cores, _at(at), path, table, rewrites, top)
    )


def _jsonl(data: Mapping[str, Any]) -> str:
    """JSON Lines (one repetition a line) of ``{"parameters", "points", "repetitions",
    "callpath", "metric"}``."""
    try:
        params = [str(p) for p in data["parameters"]]
        points = [list(p) for p in data["points"]]
        reps = [list(r) if isinstance(r, Iterable) else [r] for r in data["repetitions"]]
    except KeyError as e:
        raise InputError(
            f"error: the measurements dict has no {e.args[0]!r}: give "
            '{"parameters": ["x"], "points": [[4], [8]], "repetitions": [[1.0, 1.1], [2.0, 2.1]]}',
            "<measurements>",
        ) from None
    if len(points) != len(reps):
        raise InputError(
            f"error: {len(points)} points but {len(reps)} lists of repetitions",
            "<measurements>",
        )
    lines = []
    for point, values in zip(points, reps):
        if len(point) != len(params):
            raise InputError(
                f"error: the point {point} has {len(point)} values for {len(params)} parameters",
                "<measurements>",
            )
        for v in values:
            line: Dict[str, Any] = {
                "params": {p: float(x) for p, x in zip(params, point)},
                "value": float(v),
            }
            if data.get("callpath") is not None:
                line["callpath"] = str(data["callpath"])
            if data.get("metric") is not None:
                line["metric"] = str(data["metric"])
            lines.append(json.dumps(line, allow_nan=True))
    return "\n".join(lines) + "\n"


def _is_frame(x: Any) -> bool:
    return hasattr(x, "to_csv") and hasattr(x, "columns")


def fit(
    measurements: Any,
    *,
    modeler: Optional[str] = None,
    measure: Optional[str] = None,
    basis: Union[str, Sequence[str], None] = None,
    allow_negative: bool = False,
    breaks: Optional[Sequence[float]] = None,
    format: Optional[str] = None,
    csv_parameters: Optional[Sequence[str]] = None,
    csv_values: Optional[Sequence[str]] = None,
    csv_callpath: Optional[Sequence[str]] = None,
    csv_metric: Optional[str] = None,
    value: str = "value",
) -> Dict[str, Any]:
    """Fit performance models to measurements: ``perfcompose fit --json``.

    measurements: a file in any format the command reads (Extra-P text, JSON Lines,
        Extra-P JSON, CSV, ...; see ``format``), a list of such files, a dict
        ``{"parameters": ["x"], "points": [[4], [8]], "repetitions": [[1.0, 1.1], [2.0, 2.1]],
        "callpath": "name"}``, or a pandas DataFrame with one column per parameter and a
        ``value`` column (one row per repetition; optional ``callpath``/``metric`` columns).
    modeler: ``"perfcompose"`` (default), ``"extrap"`` or ``"segmented"`` (:func:`modelers`).
    measure: the statistic of the repetitions: mean, median, minimum or maximum.
    basis: basis functions to fit by least squares instead, e.g. ``"1, N, M"`` (or a list).
    allow_negative, breaks, format, csv_*: as the command's flags.
    value: the value column of a DataFrame.

    Returns ``{"models": [...]}``, one entry per series in the schema of ``docs/fitting.md``.
    """
    files: List[str] = []
    text = None
    params = list(csv_parameters or [])
    values = list(csv_values or [])
    callpath = list(csv_callpath or [])
    metric = csv_metric
    if isinstance(measurements, Mapping):
        text = ("<measurements>", "jsonl", _jsonl(measurements))
    elif _is_frame(measurements):
        columns = [str(c) for c in measurements.columns]
        if value not in columns:
            raise InputError(
                f"error: the DataFrame has no value column {value!r} (columns: {', '.join(columns)})",
                "<DataFrame>",
            )
        special = {value, "callpath", "metric"}
        params = params or [c for c in columns if c not in special]
        values = values or [value]
        if not callpath and "callpath" in columns:
            callpath = ["callpath"]
        if metric is None and "metric" in columns:
            metric = "metric"
        text = ("<DataFrame>", "csv", measurements.to_csv(index=False))
    elif isinstance(measurements, (list, tuple)):
        files = [_path(m, "measurements") for m in measurements]
    else:
        files = [_path(measurements, "measurements")]
    bases = [basis] if isinstance(basis, str) else list(basis or [])
    return json.loads(
        _native.fit(
            files,
            text,
            modeler,
            measure,
            bases,
            allow_negative,
            [float(b) for b in breaks or []],
            format,
            params,
            values,
            callpath,
            metric,
        )
    )


def modelers() -> List[Tuple[str, str]]:
    """The modelers ``fit`` knows, as (name, description), the default first."""
    return list(_native.modelers())


def simulate(
    platform: PathLike,
    trace: PathLike,
    *,
    hostfile: Optional[PathLike] = None,
    np: Optional[int] = None,
    network: str = "maxmin",
    coll: Union[str, Sequence[str], None] = None,
    eager_threshold: float = 65536.0,
    speed_scale: float = 1.0,
    latency_factor: float = 1.0,
    bandwidth_factor: float = 1.0,
    tcp_gamma: float = 0.0,
    legacy_compute: str = "flops",
    window: Optional[int] = None,
    measured_time: Optional[float] = None,
    timeline: Optional[PathLike] = None,
    paje: Optional[PathLike] = None,
) -> Dict[str, Any]:
    """Replay time-independent traces on a SimGrid platform: ``perfcompose simulate --json``.

    platform: SimGrid platform XML; trace: an index file (one trace per rank) or a shared
    trace file. The keywords mirror the command's flags (``coll``: ``"bcast=binomial_tree"``
    or a list of such). ``timeline`` writes what each rank did when as a Chrome trace
    (Perfetto), ``paje`` as a Paje trace (Vite). OTF2 archives are read by the command only.

    Returns the dict of ``docs/simulation.md``: ``simulated_time_s``, ``ranks`` (per rank:
    compute, communication, waiting, finish), ``actions``, ``messages``, ``notes``, and
    ``wall_time_s``/``actions_per_s`` of this replay.
    """
    colls = [coll] if isinstance(coll, str) else list(coll or [])
    kwargs: Dict[str, Any] = {}
    if window is not None:
        kwargs["window"] = window
    return json.loads(
        _native.simulate(
            _path(platform, "platform"),
            _path(trace, "trace"),
            None if hostfile is None else _path(hostfile, "hostfile"),
            np,
            network,
            colls,
            float(eager_threshold),
            float(speed_scale),
            float(latency_factor),
            float(bandwidth_factor),
            float(tcp_gamma),
            legacy_compute,
            measured_time=None if measured_time is None else float(measured_time),
            timeline=None if timeline is None else _path(timeline, "timeline"),
            paje=None if paje is None else _path(paje, "paje"),
            **kwargs,
        )
    )


class Model:
    """A performance model: a function of named parameters, in the syntax of components
    files and of ``predict``'s ``model`` (Extra-P's, plus max, min, log2, sums, ...).

    >>> m = Model("2.5 + 0.5 * x * log2(x)")
    >>> m.parameters
    ['x']
    >>> m.evaluate(x=[2.0, 4.0])
    array([3.5, 6.5])

    ``str(m)`` prints the model canonically (it parses back to the same model).
    """

    __slots__ = ("_m",)

    def __init__(self, text: Union[str, "Model"]) -> None:
        self._m = _native.Model(str(text))

    @property
    def parameters(self) -> List[str]:
        """The model's parameters, sorted."""
        return self._m.parameters

    def extrap(self) -> str:
        """The model in Extra-P's syntax (``2.5 + 0.5 * x^(1) * log2(x)^(1)``)."""
        return self._m.extrap()

    def value(self, **point: float) -> float:
        """The value at one point, every parameter a number; raises InputError where the
        model is not a finite real number there."""
        return self._m.value([(k, float(v)) for k, v in point.items()])

    def evaluate(self, **arrays: Any) -> Any:
        """The values over numpy arrays (or numbers, lists): one keyword per parameter,
        broadcast together by numpy's rules; returns a float64 array of the broadcast
        shape. Computed by the compiled batch evaluator without the GIL; where the model
        is not a finite real number the value is NaN (or an infinity).
        """
        import numpy as np

        given = {k: np.asarray(v, dtype=np.float64) for k, v in arrays.items()}
        shape = np.broadcast_shapes(*(a.shape for a in given.values())) if given else ()
        size = math.prod(shape)
        columns = []
        scalars = []
        for name, a in given.items():
            if a.size == 1 and size != 0:
                scalars.append((name, float(a.reshape(-1)[0])))
                continue
            if a.shape != shape:
                a = np.broadcast_to(a, shape)
            columns.append((name, np.ascontiguousarray(a).reshape(-1)))
        return self._m.batch(columns, scalars, size).reshape(shape)

    def __str__(self) -> str:
        return str(self._m)

    def __repr__(self) -> str:
        return repr(self._m)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Model) and self._m == other._m

    def __hash__(self) -> int:
        return hash(str(self._m))

    def __reduce__(self) -> Tuple[Any, Tuple[str]]:
        return (Model, (str(self),))


def _rows_of(result: Any) -> List[Dict[str, Any]]:
    """The rows ``to_frame`` makes of a result."""
    rows: List[Dict[str, Any]] = []
    if isinstance(result, list):
        # check(laws=True): one row per law.
        for r in result:
            rows.append({k: v for k, v in r.items() if not isinstance(v, (list, dict))})
        return rows
    if not isinstance(result, Mapping):
        raise TypeError("to_frame takes a result of predict, check, optimize, fit or simulate")
    if "values" in result and "term" in result:  # predict
        for v in result["values"]:
            row = dict(v["point"])
            row["value"] = v["value"]
            interval = v.get("interval")
            if interval:
                row["low"], row["high"], row["level"] = interval["low"], interval["high"], interval["level"]
            if v.get("bottleneck") is not None:
                row["bottleneck"] = v["bottleneck"]
            rows.append(row)
        return rows
    if "first" in result and "points" in result:  # check A B
        for p in result["points"]:
            row = dict(p["point"])
            row.update({k: v for k, v in p.items() if k != "point"})
            rows.append(row)
        return rows
    if "designs" in result:  # optimize
        for d in result["designs"]:
            row = {k: v for k, v in d.items() if not isinstance(v, (list, dict))}
            interval = d.get("interval")
            if interval:
                row["low"], row["high"], row["level"] = interval["low"], interval["high"], interval["level"]
            rows.append(row)
        return rows
    if "models" in result:  # fit: one row per fitted point
        for m in result["models"]:
            for p in m["points"]:
                row = {"callpath": m["callpath"], "metric": m["metric"], "model": m["model"]}
                row.update(dict(zip(m["parameters"], p["coordinate"])))
                row.update(value=p["value"], predicted=p["predicted"], cv=p["cv"])
                rows.append(row)
        return rows
    if "ranks" in result and "simulated_time_s" in result:  # simulate
        return [dict(r) for r in result["ranks"]]
    raise TypeError("to_frame takes a result of predict, check, optimize, fit or simulate")


def to_frame(result: Any) -> Any:
    """A pandas DataFrame of a result's points: predict's values (point, value, interval
    low/high/level, bottleneck), check's points, optimize's designs, fit's fitted points
    (callpath, metric, model, parameters, value, predicted, cv), simulate's ranks, or
    check(laws=True)'s laws. Needs pandas (an optional dependency)."""
    try:
        import pandas as pd
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("perfcompose.to_frame needs pandas: pip install pandas") from e
    return pd.DataFrame(_rows_of(result))
