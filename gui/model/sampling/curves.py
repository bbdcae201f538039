"""The Sampling view's temperature curves of a vocabulary row, as a plain function and as a job.

Pure NumPy through compute (no Qt): the view runs :func:`curve_steps` in
its background job for a long vocabulary, and :func:`curve_job` at once
for a short one, for flush and for export.
"""

from __future__ import annotations

from collections.abc import Generator

import numpy as np

import compute

__all__ = ["CURVES_IN_JOB_V", "CURVE_T", "curve_job", "curve_steps"]

#: Temperatures of the curves (the T slider's range).
CURVE_T = np.geomspace(0.05, 5.0, 61)
#: A vocabulary at least this long gets its temperature curves in a background job (61 softmaxes of
#: V: about 150 ms at V = 200,000 on two cores), the last curves staying on screen meanwhile.  Below it
#: they are computed in the redraw: about 2 ms at V = 5,000 (at 16,000, 4.4 ms: a Vocabulary V step there
#: took 16-18 ms against 10 just above the former 20,000).
CURVES_IN_JOB_V = 5_000


def curve_job(logits: np.ndarray) -> dict[str, np.ndarray]:
    """The temperature curves of one vocabulary row (pure: a job runs it off the GUI thread)."""
    return compute.sampling_curves(logits, CURVE_T)


#: compute.sampling_curves works through this many probabilities at a time (its blocks of temperatures).
_CURVE_BLOCK = 1 << 21


def curve_steps(logits: np.ndarray) -> Generator[float, None, dict[str, np.ndarray]]:
    """:func:`curve_job` as a job generator: a block of temperatures at a time, progress between blocks.

    The blocks are compute.sampling_curves' own (2**21 // V temperatures, V
    counting the finite logits only, or all of them when one is +inf), each
    asked for in a call of its own, so the same block arithmetic gives the
    same numbers as one call; a job superseded by a new vocabulary (a V
    drag) stops at the next block instead of finishing all 61 temperatures.
    """
    x = np.asarray(logits)
    v = x.size if np.isposinf(x).any() else int(np.count_nonzero(np.isfinite(x)))
    block = max(1, _CURVE_BLOCK // max(v, 1))
    parts = []
    for start in range(0, CURVE_T.size, block):
        parts.append(compute.sampling_curves(logits, CURVE_T[start:start + block]))
        yield min(start + block, CURVE_T.size) / CURVE_T.size
    return {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
