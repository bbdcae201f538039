"""Numerical core of Softmax Lab: stable softmax and friends in plain NumPy.

Nothing in this package may import Qt (``tests/compute/test_no_qt.py`` checks
it), so it can be used and tested headless.  See :mod:`compute.softmax` for
the stability tricks, dtype rules and special-value semantics,
:mod:`compute.normalizers` for the other score-to-weight maps (linear,
hardmax, sparsemax, entmax, sigmoid), :mod:`compute.gradients` for the
softmax Jacobian and the (label-smoothed) cross-entropy,
:mod:`compute.precision` for overflow/underflow thresholds, emulated bfloat16
and softmax computed in a chosen dtype for real, :mod:`compute.logdomain` for
the smooth max/min (T·LSE) and the gradient check, and
:mod:`compute.attention` for scaled dot-product attention with masks, block
max-pooling for display and the d_k sweep.
"""

from compute.attention import (
    Cancelled,
    attention,
    attention_memory,
    attention_scores,
    causal_mask,
    dk_sweep,
    masked_rows,
    max_pool2d,
    padding_mask,
)
from compute.gradients import (
    cross_entropy,
    cross_entropy_grad,
    smoothed_target,
    softmax_jacobian,
)
from compute.logdomain import (
    lse_gradient_check,
    smooth_max,
    smooth_max_curve,
    smooth_min,
    smooth_min_curve,
)
from compute.normalizers import (
    entmax,
    hardmax,
    linear_normalize,
    shifted_linear_normalize,
    sigmoid,
    sparsemax,
)
from compute.precision import (
    PRECISION_DTYPES,
    SOFTMAX_METHODS,
    PrecisionInfo,
    exp_in,
    lowest_finite,
    nextafter_in,
    overflow_threshold,
    precision_info,
    renormalize_in,
    softmax_in,
    to_bfloat16,
    underflow_threshold,
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
    softmax_over_temperatures,
    softmax_steps,
)

__all__ = [
    "Cancelled",
    "PRECISION_DTYPES",
    "PrecisionInfo",
    "SOFTMAX_METHODS",
    "SoftmaxSteps",
    "attention",
    "attention_memory",
    "attention_scores",
    "causal_mask",
    "check_temperature",
    "cross_entropy",
    "cross_entropy_grad",
    "dk_sweep",
    "entmax",
    "entropy",
    "exp_in",
    "hardmax",
    "linear_normalize",
    "log_softmax",
    "logsumexp",
    "lowest_finite",
    "lse_gradient_check",
    "masked_rows",
    "max_pool2d",
    "naive_softmax",
    "nextafter_in",
    "overflow_threshold",
    "padding_mask",
    "perplexity",
    "precision_info",
    "renormalize_in",
    "shifted_linear_normalize",
    "sigmoid",
    "smooth_max",
    "smooth_max_curve",
    "smooth_min",
    "smooth_min_curve",
    "smoothed_target",
    "softmax",
    "softmax_in",
    "softmax_jacobian",
    "softmax_over_temperatures",
    "softmax_steps",
    "sparsemax",
    "to_bfloat16",
    "underflow_threshold",
]
