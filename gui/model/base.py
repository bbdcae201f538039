"""The base of every view's parameter model.

A view model is a psygnal evented dataclass whose parameters are declared
with :func:`param` (a float or integer with a range, optionally on a log
scale), :func:`choice` (one of a few names), :func:`path_param` (a file to
read) or :func:`text_param` (free text: a prompt, a model id).  The window
builds controls from that metadata, the session file saves it, and the
headless CLI turns it into ``--name`` options, so a new parameter needs no
code outside its model.
Fields declared without them are view-only state: not saved, not options.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from gui.model.texts import tr

if TYPE_CHECKING:
    from gui.model.scores import ScoreRow


@dataclass(frozen=True)
class Param:
    """Metadata for one parameter of a view model.

    ``kind`` is "float" (range, optional log scale), "int" (range),
    "choice" (one of ``choices``), "path" (a file to read; "" for none —
    the model's own ``set_param`` does the reading and refuses bad files)
    or "text" (any string of at most ``maximum`` characters: a prompt, a
    model id; the view builds its own control for it).
    """

    name: str
    default: Any
    minimum: float = 0.0
    maximum: float = 0.0
    log: bool = False
    kind: str = "float"
    choices: tuple[str, ...] = ()
    #: the control the window builds: "" for the kind's default (a slider for
    #: numbers, a combo box for choices, a check box for "off"/"on"), or "spin"
    control: str = ""

    def check(self, value: Any) -> Any:
        """Return ``value`` in the parameter's type, or raise ValueError saying what is wrong."""
        if self.kind == "path":
            if not isinstance(value, (str, os.PathLike)):
                raise ValueError(tr("error.param.not_path", name=self.name, value=repr(value)))
            return os.fspath(value)
        if self.kind == "text":
            if not isinstance(value, str):
                raise ValueError(tr("error.param.not_text", name=self.name, value=repr(value)[:60]))
            if len(value) > self.maximum:
                raise ValueError(tr("error.param.too_long", name=self.name, length=len(value),
                                    limit=int(self.maximum)))
            return value
        if self.kind == "choice":
            if value not in self.choices:
                raise ValueError(tr("error.param.not_choice", name=self.name, choices=", ".join(self.choices),
                                    value=repr(value)))
            return str(value)
        if isinstance(value, bool):
            raise ValueError(tr("error.param.not_number", name=self.name, value=repr(value)))
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(tr("error.param.not_number", name=self.name, value=repr(value))) from None
        if not math.isfinite(number):
            raise ValueError(tr("error.param.not_finite", name=self.name, value=repr(number)))
        if not self.minimum <= number <= self.maximum:
            raise ValueError(tr("error.param.out_of_range", name=self.name, minimum=f"{self.minimum:g}",
                                maximum=f"{self.maximum:g}", value=f"{number:g}"))
        if self.kind == "int":
            if number != int(number):
                raise ValueError(tr("error.param.not_whole", name=self.name, value=f"{number:g}"))
            return int(number)
        return number


def param(default: float, *, minimum: float, maximum: float, log: bool = False,
          integer: bool = False, control: str = "") -> Any:
    """Declare a numeric field of a view model with its allowed range.

    ``control="spin"`` asks for a spin box instead of a slider (seeds, counts
    over a huge range).
    """
    if control not in ("", "spin"):
        raise ValueError(f"unknown control {control!r}")
    kind = "int" if integer else "float"
    return field(default=default,
                 metadata={"param": Param("", default, minimum, maximum, log, kind, control=control)})


def path_param() -> Any:
    """Declare a file-path field of a view model ("" means no file)."""
    return field(default="", metadata={"param": Param("", "", kind="path")})


def text_param(default: str = "", *, max_length: int = 4096) -> Any:
    """Declare a free-text field of a view model (a prompt, a model id or folder).

    Any ``str`` of at most ``max_length`` characters (Chinese included);
    saved in sessions and offered as ``--NAME TEXT`` by the command line.
    Views build their own control for it (no slider or combo box fits).
    """
    if not isinstance(default, str) or len(default) > max_length:
        raise ValueError(f"default {default!r} is not a text of at most {max_length} characters")
    return field(default=default, metadata={"param": Param("", default, 0, max_length, kind="text")})


def choice(default: str, choices: tuple[str, ...]) -> Any:
    """Declare a field of a view model that takes one of a few names."""
    if default not in choices:
        raise ValueError(f"default {default!r} is not one of {choices}")
    return field(default=default, metadata={"param": Param("", default, kind="choice", choices=choices)})


@dataclass(frozen=True)
class ExportArray:
    """One array a view exports, with the names a CSV header needs.

    ``data`` is 1-D (one column) or 2-D (one column per entry of
    ``columns``); ``rows`` optionally labels each row (the token labels).
    ``npz_data``, when given, is what the .npz holds instead of ``data``.
    """

    data: np.ndarray
    columns: tuple[str, ...]
    rows: tuple[str, ...] | None = None
    #: The full array for the .npz when ``data`` is a 2-D slice of it (e.g. one
    #: head of a (heads, n, d) stack); the CSV always holds ``data``.
    npz_data: np.ndarray | None = None
    #: False for arrays too long to be useful as a CSV (a whole vocabulary, a
    #: million draws): they go to the .npz only.
    csv: bool = True

    def __post_init__(self) -> None:
        if self.npz_data is not None and self.npz_data.ndim < self.data.ndim:
            raise ValueError("npz_data holds the full array: at least as many axes as data")
        ncols = 1 if self.data.ndim == 1 else self.data.shape[1]
        if self.data.ndim not in (1, 2) or ncols != len(self.columns):
            raise ValueError(
                f"array of shape {self.data.shape} does not fit columns {self.columns}"
            )
        if self.rows is not None and len(self.rows) != self.data.shape[0]:
            raise ValueError("one row label is needed per row")


def drain(steps: Any) -> Any:
    """Run a job generator (yields progress, returns its result) to its end here; its result.

    A model's background jobs are generators (see gui.widgets.jobs); headless
    exports and flushes compute the same thing synchronously with this.
    """
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            return stop.value


#: ViewModel.params() of each class (Param is frozen; callers get their own dict).
_PARAMS: dict[type, dict[str, Param]] = {}


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
        """The parameters by name (built once per class: the controls ask for them after every change)."""
        cached = _PARAMS.get(cls)
        if cached is None:
            cached = _PARAMS[cls] = {
                f.name: replace(f.metadata["param"], name=f.name)
                for f in fields(cls)  # type: ignore[arg-type]
                if "param" in f.metadata
            }
        return dict(cached)

    def applies(self, name: str) -> bool:
        """Whether parameter ``name`` has an effect in the current mode (its control is enabled).

        Subclasses override this; the controls ask again after every change
        of the model, so no view code decides what is greyed out.
        """
        return True

    def bounds(self, name: str) -> tuple[float, float]:
        """The range a control offers for ``name`` now (default: the declared range).

        A model narrows it where the data limits it (a block size cannot
        exceed the row); values are still checked against the declared range.
        """
        spec = self.params()[name]
        return spec.minimum, spec.maximum

    def value_in_use(self, name: str) -> Any:
        """The value of ``name`` the result uses now: what a greyed control shows.

        By default the stored value.  A model whose data override a parameter
        returns the data's value (a sentence's token count for ``n``), or
        None when nothing of the parameter is used (the control shows
        nothing).  The stored value is not changed.
        """
        return getattr(self, name)

    def set_param(self, name: str, value: Any) -> None:
        """Validate ``value`` against the parameter's range, then assign it."""
        spec = self.params().get(name)
        if spec is None:
            raise ValueError(tr("error.param.unknown", view=self.name, name=repr(name)))
        setattr(self, name, spec.check(value))

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.params()}

    def update_from_dict(self, values: dict[str, Any]) -> None:
        """Apply saved parameters; all are checked before any is assigned."""
        specs = self.params()
        unknown = sorted(set(values) - set(specs))
        if unknown:
            raise ValueError(tr("error.param.unknown_many", view=self.name, names=", ".join(unknown)))
        checked = {name: specs[name].check(v) for name, v in values.items()}
        for name, number in checked.items():
            setattr(self, name, number)

    # -- what a session holds beyond the parameters (the user's typed or edited data) --------------
    def extra_state(self) -> dict[str, Any]:
        """JSON-ready state that is not a parameter but is the user's work (a typed sentence, edited tables)."""
        return {}

    def check_extra_state(self, state: dict[str, Any]) -> dict[str, Any]:
        """Validate saved extra state whole, before anything is applied; raise ValueError saying why."""
        if state:
            raise ValueError(tr("error.state.none_kept", view=self.name, names=", ".join(sorted(state))))
        return {}

    def apply_extra_state(self, checked: dict[str, Any]) -> None:
        """Apply what :meth:`check_extra_state` returned."""

    def reset(self) -> None:
        for name, spec in self.params().items():
            setattr(self, name, spec.default)

    def _cached(self, name: str, key: tuple, make) -> Any:
        """``make()``, kept under ``name`` while ``key`` (the inputs it depends on) stays the same.

        One entry per name in ``self._cache`` (a dict the model makes in ``__post_init__``).
        """
        hit = self._cache.get(name)
        if hit is not None and hit[0] == key:
            return hit[1]
        value = make()
        self._cache[name] = (key, value)
        return value

    def arrays(self, scores: ScoreRow) -> dict[str, ExportArray]:
        raise NotImplementedError
