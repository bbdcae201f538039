"""What the compute tests share: special values, the float dtypes, quiet references."""

import warnings

import numpy as np

INF = np.inf
NAN = np.nan
FLOAT_DTYPES = [np.float16, np.float32, np.float64]
EPS = {np.dtype(d): float(np.finfo(d).eps) for d in FLOAT_DTYPES}


def ref(fn, *args, **kwargs):
    """Call a reference function (SciPy, a plain loop) with all warnings silenced."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)
