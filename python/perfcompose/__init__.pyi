"""Type stubs of perfcompose (the docstrings are in __init__.py)."""

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from ._errors import InputError as InputError

PathLike = Union[str, os.PathLike[str]]
# A components file, or {name: "model" | {"model": ..., "relative_error": ...} |
# {"measurements": path, "callpath": name}}.
Components = Union[PathLike, Mapping[str, Any], None]
# {"x": [values]} (or one value), the command's text "x=1..2^20:32", or a list of texts.
At = Union[Mapping[str, Any], str, Sequence[str], None]
ArrayLike = npt.ArrayLike

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

def predict(
    term: Optional[str] = None,
    *,
    term_file: Optional[PathLike] = None,
    components: Components = None,
    at: At = None,
    level: Optional[float] = None,
    cores: Optional[int] = None,
    advise: bool = False,
    overhead: bool = False,
    calibration: Optional[PathLike] = None,
) -> Dict[str, Any]: ...
def check(
    first: Optional[str] = None,
    second: Optional[str] = None,
    *,
    components: Components = None,
    at: At = None,
    level: Optional[float] = None,
    cores: Optional[int] = None,
    laws: bool = False,
) -> Any: ...
def optimize(
    design: str,
    *,
    cores: int,
    at: At,
    components: Components = None,
    rewrites: bool = False,
    top: int = 10,
) -> Dict[str, Any]: ...
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
) -> Dict[str, Any]: ...
def modelers() -> List[Tuple[str, str]]: ...
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
) -> Dict[str, Any]: ...

class Model:
    def __init__(self, text: Union[str, Model]) -> None: ...
    @property
    def parameters(self) -> List[str]: ...
    def extrap(self) -> str: ...
    def value(self, **point: float) -> float: ...
    def evaluate(self, **arrays: ArrayLike) -> npt.NDArray[np.float64]: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

def to_frame(result: Any) -> Any: ...
