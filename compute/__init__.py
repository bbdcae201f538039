"""Numerical core of Softmax Lab: stable softmax and friends in plain NumPy.

Nothing in this package may import Qt (``tests/compute/test_no_qt.py`` checks
it), so it can be used and tested headless.  See :mod:`compute.softmax` for
the stability tricks, dtype rules and special-value semantics,
:mod:`compute.normalizers` for the other score-to-weight maps (linear,
hardmax, sparsemax, entmax, sigmoid) and :mod:`compute.gradients` for the
softmax Jacobian and the (label-smoothed) cross-entropy.
"""

from compute.gradients import (
    cross_entropy,
    cross_entropy_grad,
    smoothed_target,
    softmax_jacobian,
)
from compute.normalizers import (
    entmax,
    hardmax,
    linear_normalize,
    shifted_linear_normalize,
    sigmoid,
    sparsemax,
)
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
    "cross_entropy",
    "cross_entropy_grad",
    "entmax",
    "entropy",
    "hardmax",
    "linear_normalize",
    "log_softmax",
    "logsumexp",
    "naive_softmax",
    "perplexity",
    "shifted_linear_normalize",
    "sigmoid",
    "smoothed_target",
    "softmax",
    "softmax_jacobian",
    "softmax_steps",
    "sparsemax",
]
