"""Pearson's chi-square test of draws, with its p-value from the incomplete gamma function.

:func:`chi_square_test` pools small bins; its p-value comes from
:func:`chi2_sf`, the regularised upper incomplete gamma function implemented
here (series and continued fraction), so SciPy is not needed at run time.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from compute._checks import _check_count, _check_finite, _real
from compute._rows import _refuse_masked

__all__ = ["chi2_sf", "chi_square_test"]


_EPS = 4e-16  # a couple of ulps: |delta - 1| < 1e-16 may never be reached


_TINY = 1e-300


_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def _stirlerr(a: float) -> float:
    """``lgamma(a) - ((a - 1/2) log a - a + log(2 pi) / 2)``, without cancellation.

    The error of Stirling's formula; for ``a > 15`` from its asymptotic
    series (as in Loader's algorithm for the binomial and Poisson laws),
    below that directly (the terms are small enough not to cancel badly).
    """
    if a <= 15.0:
        return math.lgamma(a) - (a - 0.5) * math.log(a) + a - _HALF_LOG_2PI
    s0, s1, s2, s3, s4 = 1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188
    nn = a * a
    if a > 500:
        return (s0 - s1 / nn) / a
    if a > 80:
        return (s0 - (s1 - s2 / nn) / nn) / a
    if a > 35:
        return (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / a
    return (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / a


def _bd0(a: float, x: float) -> float:
    """``a log(a / x) + x - a`` (>= 0), accurate also when ``x`` is close to ``a``."""
    if abs(a - x) < 0.1 * (a + x):
        v = (a - x) / (a + x)
        s = (a - x) * v
        ej = 2.0 * a * v
        v2 = v * v
        for j in range(1, 1000):
            ej *= v2
            s1 = s + ej / (2 * j + 1)
            if s1 == s:
                return s1
            s = s1
        return s
    return a * math.log(a / x) + x - a


def _log_prefactor(a: float, x: float) -> float:
    """``log(x**a e**-x / Gamma(a))``, the common factor of P(a, x) and Q(a, x).

    Written as ``-bd0(a, x) + log(a / 2 pi) / 2 - stirlerr(a)`` so that the
    large terms ``a log x``, ``x`` and ``lgamma(a)`` never cancel in floating
    point (their naive sum loses ~``log10(a log x)`` digits for large ``a``).
    """
    return -_bd0(a, x) + 0.5 * math.log(a) - _HALF_LOG_2PI - _stirlerr(a)


def _gamma_p_series(a: float, x: float) -> float:
    """Regularised lower incomplete gamma P(a, x) by its series (x < a + 1)."""
    term = 1.0 / a
    total = term
    ap = a
    for _ in range(1_000_000):
        ap += 1.0
        term *= x / ap
        total += term
        if term < total * _EPS:
            break
    return total * math.exp(_log_prefactor(a, x))


def _gamma_q_cf(a: float, x: float) -> float:
    """Regularised upper incomplete gamma Q(a, x) by its continued fraction
    (modified Lentz, x >= a + 1)."""
    b = x + 1.0 - a
    c = 1.0 / _TINY
    d = 1.0 / b
    h = d
    for i in range(1, 1_000_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        if abs(d) < _TINY:
            d = _TINY
        c = b + an / c
        if abs(c) < _TINY:
            c = _TINY
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return math.exp(_log_prefactor(a, x)) * h


def _gamma_q(a: float, x: float) -> float:
    """Regularised upper incomplete gamma ``Q(a, x) = Gamma(a, x) / Gamma(a)``."""
    if x <= 0.0:
        return 1.0
    if math.isinf(x):
        return 0.0
    if x < a + 1.0:
        return max(0.0, 1.0 - _gamma_p_series(a, x))
    return _gamma_q_cf(a, x)


def chi2_sf(statistic: float, dof: int) -> float:
    """Survival function of the chi-square law: ``P(X >= statistic)``.

    ``Q(dof / 2, statistic / 2)``, the regularised upper incomplete gamma
    function, by its power series below ``a + 1`` and its continued fraction
    (modified Lentz) above, as in Numerical Recipes' ``gammq``.  Accurate to
    about 1e-12 relative against ``scipy.stats.chi2.sf`` for ``dof`` from 1 to
    10**5 and p-values down to 1e-300; underflows to 0 below that.

    Parameters
    ----------
    statistic
        >= 0 (``inf`` gives 0).
    dof
        degrees of freedom, an integer >= 1.
    """
    dof = _check_count(dof, "dof", 1)
    x, _ = _real(statistic, "statistic")
    if math.isnan(x) or x < 0:
        raise ValueError(f"statistic must be >= 0, got {statistic!r}")
    return _gamma_q(dof / 2.0, x / 2.0)


def chi_square_test(
    observed: ArrayLike, expected: ArrayLike, min_expected: float = 5.0
) -> tuple[float, int, float]:
    """Pearson's chi-square goodness-of-fit test of counts against expected counts.

    Bins whose expected count is below ``min_expected`` are pooled into one
    bin (observed and expected summed); if that pooled bin is itself still
    below ``min_expected`` it is merged into the remaining bin with the
    smallest expected count.  Then ``statistic = sum((O - E)**2 / E)`` over
    the bins, ``dof = bins - 1`` and ``p_value = chi2_sf(statistic, dof)``
    (see :func:`chi2_sf`; no SciPy).  Without pooling this equals
    ``scipy.stats.chisquare(observed, expected)``.

    A bin with expected count exactly 0 but observed draws (an impossible
    event under the hypothesis) makes the statistic ``inf`` and the p-value 0
    before any pooling.  With a single bin left (``dof == 0``) there is
    nothing to test: the statistic is 0 and the p-value NaN.

    Parameters
    ----------
    observed
        counts, 1-D, >= 0.
    expected
        expected counts, same shape, >= 0; the totals must agree
        to 1e-6 relative (like SciPy's check), e.g. ``n * filter_probs``.
    min_expected
        pooling threshold (default 5, the textbook rule); 0
        disables pooling.

    Returns
    -------
    tuple
        ``(statistic, dof, p_value)`` as ``(float, int, float)``.

    Raises
    ------
    ValueError
        shapes differ, not 1-D, empty, negative or non-finite
        entries, totals that disagree, or a negative ``min_expected``.
    """
    _refuse_masked(observed, "observed")
    _refuse_masked(expected, "expected")
    o = np.asarray(observed, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    if o.ndim != 1 or o.shape != e.shape:
        raise ValueError(f"observed and expected must be 1-D of the same length, got {o.shape} and {e.shape}")
    if o.size == 0:
        raise ValueError("observed and expected must not be empty")
    if not (np.all(np.isfinite(o)) and np.all(np.isfinite(e))) or (o < 0).any() or (e < 0).any():
        raise ValueError("observed and expected counts must be finite and >= 0")
    min_expected = _check_finite(min_expected, "min_expected")
    if min_expected < 0:
        raise ValueError(f"min_expected must be >= 0, got {min_expected}")
    total_o, total_e = float(o.sum()), float(e.sum())
    if abs(total_o - total_e) > 1e-6 * max(total_o, total_e):
        raise ValueError(
            f"observed and expected totals differ ({total_o:g} vs {total_e:g}); "
            "expected counts must be n times the probabilities"
        )
    if ((e == 0) & (o > 0)).any():
        return math.inf, max(int(np.count_nonzero(e > 0)) - 1, 0), 0.0
    small = e < min_expected
    big_o, big_e = o[~small], e[~small]
    if small.any():
        pool_o, pool_e = float(o[small].sum()), float(e[small].sum())
        if pool_e >= min_expected or big_e.size == 0:
            big_o, big_e = np.append(big_o, pool_o), np.append(big_e, pool_e)
        else:
            j = int(np.argmin(big_e))
            big_o, big_e = big_o.copy(), big_e.copy()
            big_o[j] += pool_o
            big_e[j] += pool_e
    keep = big_e > 0  # 0/0 bins (nothing expected, nothing seen) carry no information
    big_o, big_e = big_o[keep], big_e[keep]
    dof = int(big_e.size) - 1
    stat = float(np.sum((big_o - big_e) ** 2 / big_e))
    if dof < 1:
        return 0.0, 0, math.nan
    return stat, dof, chi2_sf(stat, dof)
