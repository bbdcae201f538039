"""The base of every view's parameter model.

A view model is a psygnal evented dataclass whose float fields are declared
with :func:`param` (range, log scale).  The window builds sliders from that
metadata, the session file saves it, and the headless CLI turns it into
``--name`` options, so a new parameter needs no code outside its model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

if TYPE_CHECKING:
    from gui.model.scores import ScoreRow


@dataclass(frozen=True)
class Param:
    """Range metadata for one float parameter of a view model."""

    name: str
    default: float
    minimum: float
    maximum: float
    log: bool = False

    def check(self, value: Any) -> float:
        """Return ``value`` as a float, or raise ValueError saying what is wrong."""
        if isinstance(value, bool):
            raise ValueError(f"{self.name} must be a number, got {value!r}")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{self.name} must be a number, got {value!r}") from None
        if not math.isfinite(number):
            raise ValueError(f"{self.name} must be finite, got {number!r}")
        if not self.minimum <= number <= self.maximum:
            raise ValueError(
                f"{self.name} must be between {self.minimum:g} and {self.maximum:g}, "
                f"got {number:g}"
            )
        return number


def param(default: float, *, minimum: float, maximum: float, log: bool = False) -> Any:
    """Declare a float field of a view model with its allowed range."""
    return field(
        default=default,
        metadata={"param": (minimum, maximum, log)},
    )


@dataclass(frozen=True)
class ExportArray:
    """One array a view exports, with the names a CSV header needs.

    ``data`` is 1-D (one column) or 2-D (one column per entry of
    ``columns``); ``rows`` optionally labels each row (the token labels).
    """

    data: np.ndarray
    columns: tuple[str, ...]
    rows: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        ncols = 1 if self.data.ndim == 1 else self.data.shape[1]
        if self.data.ndim not in (1, 2) or ncols != len(self.columns):
            raise ValueError(
                f"array of shape {self.data.shape} does not fit columns {self.columns}"
            )
        if self.rows is not None and len(self.rows) != self.data.shape[0]:
            raise ValueError("one row label is needed per row")


class ViewModel:
    """Mixin for the evented dataclasses that hold one view's parameters.

    Subclasses are ``@evented @dataclass`` classes; ``name`` is the view's
    command-line name.  ``arrays`` computes everything the view draws and
    exports, from the shared score row and the parameters; the widget only
    draws what it returns, so the window and the CLI share one code path.
    """

    name: ClassVar[str] = ""

    @classmethod
    def params(cls) -> dict[str, Param]:
        out = {}
        for f in fields(cls):  # type: ignore[arg-type]
            if "param" in f.metadata:
                lo, hi, log = f.metadata["param"]
                out[f.name] = Param(f.name, f.default, lo, hi, log)
        return out

    def set_param(self, name: str, value: Any) -> None:
        """Validate ``value`` against the parameter's range, then assign it."""
        spec = self.params().get(name)
        if spec is None:
            raise ValueError(f"{self.name} has no parameter {name!r}")
        setattr(self, name, spec.check(value))

    def to_dict(self) -> dict[str, float]:
        return {name: float(getattr(self, name)) for name in self.params()}

    def update_from_dict(self, values: dict[str, Any]) -> None:
        """Apply saved parameters; all are checked before any is assigned."""
        specs = self.params()
        unknown = sorted(set(values) - set(specs))
        if unknown:
            raise ValueError(f"{self.name} has no parameter(s) {', '.join(unknown)}")
        checked = {name: specs[name].check(v) for name, v in values.items()}
        for name, number in checked.items():
            setattr(self, name, number)

    def reset(self) -> None:
        for name, spec in self.params().items():
            setattr(self, name, spec.default)

    def arrays(self, scores: ScoreRow) -> dict[str, ExportArray]:
        raise NotImplementedError
