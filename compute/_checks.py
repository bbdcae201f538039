"""The argument checks every compute module shares, and the cancellation protocol.

One definition of each check, so that the same mistake gets the same error
message wherever it is made.  Only :func:`check_temperature` and
:class:`Cancelled` are public (re-exported by :mod:`compute`); the rest are
private helpers for the modules of this package.
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

__all__ = ["Cancelled", "check_temperature"]


class Cancelled(Exception):
    """Raised by a long computation when its ``cancelled()`` callback returns true."""


def _drive(
    steps: Iterator[tuple[int, int]],
    total: int,
    progress: Callable[[int, int], object] | None,
    cancelled: Callable[[], bool] | None,
    message: str,
) -> Any:
    """Run a steps generator to its end and return its return value.

    ``cancelled()`` is polled before each step while ``done < total`` (never
    after the last one); when it returns true, :class:`Cancelled` is raised
    with ``message.format(done=..., total=...)``.  ``progress(done, total)``
    is called after each step.
    """
    done = 0
    while True:
        if done < total and cancelled is not None and cancelled():
            raise Cancelled(message.format(done=done, total=total))
        try:
            done, total = next(steps)
        except StopIteration as stop:
            return stop.value
        if progress is not None:
            progress(done, total)


# --------------------------------------------------------------------------
# integers
# --------------------------------------------------------------------------
def _check_count(value: Any, name: str, minimum: int = 0) -> int:
    """An integer (Python or NumPy, not bool) ``>= minimum``, as a Python int."""
    if isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    try:
        result = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {value!r}") from None
    if result < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {result}")
    return result


def _check_seed(seed: Any) -> int:
    """A seed for ``np.random.default_rng``: an integer ``>= 0``."""
    return _check_count(seed, "seed", 0)


def _check_whole(value: Any, name: str) -> int:
    """A whole number ``>= 1`` (``4`` or ``4.0``, not bool), as a Python int."""
    if isinstance(value, bool) or int(value) != value or value < 1:
        raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
    return int(value)


def _check_bool(value: Any, name: str) -> bool:
    """``True`` or ``False`` (Python or NumPy), as a Python bool."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


# --------------------------------------------------------------------------
# real numbers
# --------------------------------------------------------------------------
def _real(value: Any, name: str) -> tuple[float, Any]:
    """A real number (Python or NumPy scalar, or 0-d array; not bool) as a float.

    Returns ``(as_float, plain)``: ``plain`` is the value as a Python number,
    for error messages.  An int too large for a float becomes ``±inf``.

    Raises
    ------
    TypeError
        not a real number; the message names ``name``.
    """
    if type(value) is float:  # the usual case, without the isinstance chain below
        return value, value
    plain: Any = value
    if isinstance(plain, np.ndarray) and plain.ndim == 0:
        plain = plain[()]
    if isinstance(plain, np.generic):
        plain = plain.item()  # -> Python bool / int / float / complex
    if isinstance(plain, bool) or not isinstance(plain, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {plain!r} ({type(value).__name__})")
    try:
        return float(plain), plain
    except OverflowError:  # e.g. an int like 10**400
        return (math.inf if plain > 0 else -math.inf), plain


def _check_finite(value: Any, name: str) -> float:
    """A finite real number, as a Python float (see :func:`_real`)."""
    result, plain = _real(value, name)
    if not math.isfinite(result):
        raise ValueError(f"{name} must be finite, got {plain!r}")
    return result


def _check_positive(value: Any, name: str) -> float:
    """A finite real number ``> 0``, as a Python float (see :func:`_real`)."""
    result, plain = _real(value, name)
    if not (math.isfinite(result) and result > 0.0):
        raise ValueError(f"{name} must be finite and > 0, got {plain!r}")
    return result


def check_temperature(t: float) -> float:
    """Validate a softmax temperature and return it as a Python ``float``.

    Parameters
    ----------
    t : real number
        Must be finite and strictly greater than 0.

    Raises
    ------
    TypeError
        ``t`` is not a real number (a string, ``None``, a complex number, a
        bool, an array with more than one element).
    ValueError
        ``t`` is NaN, infinite, zero or negative.  The message is
        ``"temperature must be finite and > 0, got <t>"``; the GUI shows it
        verbatim.
    """
    return _check_positive(t, "temperature")


def _check_scale(scale: float) -> float:
    """Validate an attention scale: a finite real number > 0."""
    return _check_positive(scale, "scale")


def _check_knobs(
    temperature: float, top_k: Any, top_p: Any, min_p: Any
) -> tuple[float, int | None, float | None, float | None]:
    """The sampling knobs validated: ``(T, top_k, top_p, min_p)``, each off knob ``None``."""
    t = check_temperature(temperature)
    k = None if top_k is None else _check_count(top_k, "top_k", 1)
    p = None
    if top_p is not None:
        p = _check_finite(top_p, "top_p")
        if not 0.0 < p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {top_p!r}")
    m = None
    if min_p is not None:
        m = _check_finite(min_p, "min_p")
        if not 0.0 <= m <= 1.0:
            raise ValueError(f"min_p must be in [0, 1], got {min_p!r}")
    return t, k, p, m
