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
max-pooling for display and the d_k sweep, :mod:`compute.sampling` for the
LM head (temperature, top-k, top-p, min-p, seeded draws, Gumbel tricks, the
MoE router, a chi-square test), :mod:`compute.online` for the online-softmax
algorithm the CUDA kernels run, and :mod:`compute.backends` for the NumPy /
CuPy dispatch (the public functions accept CuPy arrays and fall back to
NumPy, saying why, when a kernel fails).
"""

from compute._attention import (
    attention,
    attention_memory,
    attention_scores,
    causal_mask,
    masked_rows,
    padding_mask,
)
from compute.backends import (
    active,
    add_fallback_listener,
    available_backends,
    refresh,
    remove_fallback_listener,
    set_backend,
    take_fallback_message,
    unavailable_reasons,
)
from compute._checks import Cancelled, check_temperature
from compute._flash import FlashStep, FlashTrace, flash_attention, flash_attention_trace
from compute._gradients import (
    cross_entropy,
    cross_entropy_grad,
    smoothed_target,
    softmax_jacobian,
)
from compute._logdomain import (
    lse_gradient_check,
    smooth_max,
    smooth_max_curve,
    smooth_min,
    smooth_min_curve,
)
from compute._normalizers import (
    entmax,
    hardmax,
    linear_normalize,
    shifted_linear_normalize,
    sigmoid,
    sparsemax,
)
from compute._online import (
    MEMORY_METHODS,
    MemoryTraffic,
    OnlineStep,
    TreeNode,
    finish_softmax,
    memory_passes,
    online_softmax_trace,
    tree_merge_trace,
)
from compute._pooling import max_pool2d
from compute._precision import (
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
from compute._chi_square import chi2_sf, chi_square_test
from compute._curves import sampling_curves, top_indices, zipf_logits
from compute._dk_sweep import dk_sweep, dk_sweep_steps
from compute._draws import gumbel_max_sample, gumbel_max_steps, gumbel_softmax, sample, sample_counts
from compute._filters import (
    STAGE_KEPT,
    STAGE_MASKED,
    STAGE_MIN_P,
    STAGE_NAMES,
    STAGE_TOP_K,
    STAGE_TOP_P,
    FilterResult,
    Stage,
    filter_probs,
    filter_result,
)
from compute._moe import MoERoute, expert_load, moe_route
from compute._softmax import log_softmax, logsumexp, naive_softmax, softmax
from compute._steps import (
    SoftmaxSteps,
    entropy,
    perplexity,
    softmax_over_temperatures,
    softmax_steps,
)

__all__ = [
    "active",
    "add_fallback_listener",
    "attention",
    "attention_memory",
    "attention_scores",
    "available_backends",
    "Cancelled",
    "causal_mask",
    "check_temperature",
    "chi2_sf",
    "chi_square_test",
    "cross_entropy",
    "cross_entropy_grad",
    "dk_sweep",
    "dk_sweep_steps",
    "entmax",
    "entropy",
    "exp_in",
    "expert_load",
    "filter_probs",
    "filter_result",
    "finish_softmax",
    "FilterResult",
    "flash_attention",
    "flash_attention_trace",
    "FlashStep",
    "FlashTrace",
    "gumbel_max_sample",
    "gumbel_max_steps",
    "gumbel_softmax",
    "hardmax",
    "linear_normalize",
    "log_softmax",
    "logsumexp",
    "lowest_finite",
    "lse_gradient_check",
    "masked_rows",
    "max_pool2d",
    "MEMORY_METHODS",
    "memory_passes",
    "MemoryTraffic",
    "moe_route",
    "MoERoute",
    "naive_softmax",
    "nextafter_in",
    "online_softmax_trace",
    "OnlineStep",
    "overflow_threshold",
    "padding_mask",
    "perplexity",
    "PRECISION_DTYPES",
    "precision_info",
    "PrecisionInfo",
    "refresh",
    "remove_fallback_listener",
    "renormalize_in",
    "sample",
    "sample_counts",
    "sampling_curves",
    "set_backend",
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
    "SOFTMAX_METHODS",
    "softmax_over_temperatures",
    "softmax_steps",
    "SoftmaxSteps",
    "sparsemax",
    "STAGE_KEPT",
    "STAGE_MASKED",
    "STAGE_MIN_P",
    "STAGE_NAMES",
    "STAGE_TOP_K",
    "STAGE_TOP_P",
    "Stage",
    "take_fallback_message",
    "to_bfloat16",
    "top_indices",
    "tree_merge_trace",
    "TreeNode",
    "unavailable_reasons",
    "underflow_threshold",
    "zipf_logits",
]
