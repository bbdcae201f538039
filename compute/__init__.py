"""Numerical core of Softmax Lab: stable softmax and friends in plain NumPy.

Nothing in this package may import Qt (``tests/compute/test_no_qt.py`` checks
it), so it can be used and tested headless.  See :mod:`compute.softmax` for
the stability tricks, dtype rules and special-value semantics.
"""

from compute.softmax import (
    SoftmaxSteps,
    check_temperature,
    entropy,
    log_softmax,
    logsumexp,
    naive_softmax,
    perplexity,
    softmax,
    softmax_steps,
)

__all__ = [
    "SoftmaxSteps",
    "check_temperature",
    "entropy",
    "log_softmax",
    "logsumexp",
    "naive_softmax",
    "perplexity",
    "softmax",
    "softmax_steps",
]
