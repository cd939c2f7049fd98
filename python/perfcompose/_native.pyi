"""The compiled half (crates/python): each function returns the command's JSON as text."""

from typing import List, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

def predict(
    term: Optional[str] = None,
    term_file: Optional[str] = None,
    components_path: Optional[str] = None,
    components_table: Optional[str] = None,
    at: Sequence[str] = ...,
    cores: Optional[int] = None,
    level: Optional[float] = None,
    advise: bool = False,
    overhead: bool = False,
    calibration: Optional[str] = None,
) -> str: ...
def check(
    first: Optional[str] = None,
    second: Optional[str] = None,
    laws: bool = False,
    components_path: Optional[str] = None,
    components_table: Optional[str] = None,
    at: Sequence[str] = ...,
    cores: Optional[int] = None,
    level: Optional[float] = None,
) -> str: ...
def optimize(
    design: str,
    cores: int,
    at: Sequence[str],
    components_path: Optional[str] = None,
    components_table: Optional[str] = None,
    rewrites: bool = False,
    top: int = 10,
) -> str: ...
def fit(
    files: Sequence[str] = ...,
    text: Optional[Tuple[str, str, str]] = None,
    modeler: Optional[str] = None,
    measure: Optional[str] = None,
    basis: Sequence[str] = ...,
    allow_negative: bool = False,
    breaks: Sequence[float] = ...,
    format: Optional[str] = None,
    csv_parameters: Sequence[str] = ...,
    csv_values: Sequence[str] = ...,
    csv_callpath: Sequence[str] = ...,
    csv_metric: Optional[str] = None,
) -> str: ...
def modelers() -> List[Tuple[str, str]]: ...
def simulate(
    platform: str,
    trace: str,
    hostfile: Optional[str] = None,
    np: Optional[int] = None,
    network: str = "maxmin",
    coll: Sequence[str] = ...,
    eager_threshold: float = 65536.0,
    speed_scale: float = 1.0,
    latency_factor: float = 1.0,
    bandwidth_factor: float = 1.0,
    tcp_gamma: float = 0.0,
    legacy_compute: str = "flops",
    window: int = ...,
    measured_time: Optional[float] = None,
    timeline: Optional[str] = None,
    paje: Optional[str] = None,
) -> str: ...

class Model:
    def __init__(self, text: str) -> None: ...
    @property
    def parameters(self) -> List[str]: ...
    def extrap(self) -> str: ...
    def value(self, point: Sequence[Tuple[str, float]]) -> float: ...
    def batch(
        self,
        columns: Sequence[Tuple[str, npt.NDArray[np.float64]]],
        scalars: Sequence[Tuple[str, float]],
        len: int,
    ) -> npt.NDArray[np.float64]: ...
