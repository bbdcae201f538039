"""Block max-pooling of a big weight matrix, for display.

:func:`max_pool2d` shrinks a big weight matrix to at most ``max_rows x
max_cols`` cells by taking block maxima, so a single sharp weight (one key
that takes everything) still shows; averaging would dilute it by the block
area.  Blocks are ``fr = ceil(R / max_rows)`` by ``fc = ceil(C / max_cols)``;
the last block row/column may be partial.  It is padded with NaN and the
maximum is ``np.fmax`` (NaN-ignoring), so padding never wins, a NaN cell is
ignored unless its whole block is NaN (then the block is NaN), and no
warning is emitted (``np.nanmax`` would warn on all-NaN blocks).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from compute._checks import _check_count
from compute._rows import FloatArray, _as_float_array

__all__ = ["max_pool2d"]


def max_pool2d(a: ArrayLike, max_rows: int, max_cols: int) -> tuple[FloatArray, tuple[int, int]]:
    """Block maxima over the last two axes, to at most ``max_rows x max_cols``.

    Parameters
    ----------
    a
        ``(..., R, C)``; leading axes are kept.  Ints/bools become
        float64 (the house dtype policy); float dtypes are kept (a max
        is exact in any precision).
    max_rows, max_cols
        the largest allowed result size, ints ``>= 1``.

    Returns
    -------
    tuple
        ``(pooled, (fr, fc))``.  If ``R <= max_rows`` and ``C <= max_cols``
        this is ``a`` itself (the very same object when it already is a
        float ndarray: no copy, so don't modify it) and ``(1, 1)``.
        Otherwise ``fr = ceil(R / max_rows)``, ``fc = ceil(C / max_cols)``
        and ``pooled`` is a new ``(..., ceil(R / fr), ceil(C / fc))`` array
        whose cell ``[I, J]`` is the max of ``a[..., I*fr:(I+1)*fr,
        J*fc:(J+1)*fc]`` (the last block row/column may be smaller).  NaN
        cells are ignored unless the whole block is NaN (then NaN); ``±inf``
        are ordinary values.  No warnings.
    """
    arr = _as_float_array(a)
    if arr.ndim < 2:
        raise ValueError(f"max_pool2d needs at least 2 dimensions, got shape {arr.shape}")
    max_rows = _check_count(max_rows, "max_rows", 1)
    max_cols = _check_count(max_cols, "max_cols", 1)
    rows, cols = arr.shape[-2:]
    if rows <= max_rows and cols <= max_cols:
        return arr, (1, 1)
    fr = max(1, -(-rows // max_rows))
    fc = max(1, -(-cols // max_cols))
    out_r, out_c = -(-rows // fr), -(-cols // fc)
    lead = arr.shape[:-2]
    if out_r * fr != rows or out_c * fc != cols:
        padded = np.full(lead + (out_r * fr, out_c * fc), np.nan, dtype=arr.dtype)
        padded[..., :rows, :cols] = arr
    else:
        padded = arr
    blocks = padded.reshape(lead + (out_r, fr, out_c, fc))
    # fmax ignores NaN (fmax(nan, x) == x) and never warns; the contiguous
    # block-column axis first, then the block-row axis.
    pooled = np.fmax.reduce(np.fmax.reduce(blocks, axis=-1), axis=-2)
    return pooled, (fr, fc)
