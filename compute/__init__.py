"""Numerical core of Softmax Lab: stable softmax and friends in plain NumPy.

Every public name is imported from here (``compute.softmax``,
``compute.attention``, ...); the modules behind them are private, as in
SciPy, and may move.  Nothing in this package imports Qt
(``tests/compute/test_no_qt.py`` checks it), so it runs headless.

Modules
-------
_softmax       softmax, log_softmax, logsumexp, naive_softmax; the stability tricks
_steps         softmax_steps, softmax_over_temperatures, entropy, perplexity
_normalizers   linear and shifted linear, hardmax, sparsemax, entmax, sigmoid
_gradients     softmax Jacobian, cross-entropy with label smoothing and its gradient
_losses        softmax + MSE, focal and class-weighted cross-entropy, with their gradients
_training      softmax regression and a one-hidden-layer MLP trained by mini-batch gradient descent
_calibration   reliability bins, ECE/MCE, NLL, Brier score, temperature scaling (fit_temperature)
_distill       soft targets, the distillation loss (T^2 KL), dark knowledge, InfoNCE
_precision     softmax computed in float16/bfloat16/float32/float64; thresholds
_logdomain     smooth max/min (T * LSE) and the LSE gradient check
_attention     scaled dot-product attention, its scores (attention_parts keeps them) and masks
_memory        the bytes one attention call holds
_pooling       block max-pooling of big matrices for display
_dk_sweep      the d_k sweep (dk_sweep, dk_sweep_steps)
_online        online softmax (m, d) partials, their traces, memory passes
_flash         FlashAttention's tile loop and its trace
_filters       the LM head's knobs: temperature, top-k, top-p, min-p (Stage), over many temperatures
_draws         seeded draws: sample, sample_probs, sample_counts, gumbel_max_*, gumbel_softmax
_moe           mixture-of-experts routing
_chi_square    Pearson's chi-square test and its p-value (chi2_sf)
_curves        temperature curves, the synthetic Zipf vocabulary, top_indices
_checks        shared argument checks, check_temperature, Cancelled (private helpers)
_rows          shared row helpers: dtype policy, the max shift (private helpers)
_variants      soft-capping, softmax_one and sinks, SSMax and log-n scaling, ALiBi
_variants_attention  sigmoid attention, QK-norm
_variants_speculative  speculative decoding's accept/resample rule
backends       NumPy / CuPy dispatch (public subpackage): the public functions
               accept CuPy arrays and fall back to NumPy, saying why

Special values
--------------
compute's special values, per row along the axis, for softmax and every map
that follows it (log_softmax, softmax_steps, the online softmax,
sparsemax, entmax, hardmax, the LM head's filters):

* ``-inf`` entries get exactly 0 (log_softmax: ``-inf``).
* ``k >= 1`` entries of ``+inf`` and no NaN share the mass: ``1/k`` each,
  exactly 0 elsewhere (log_softmax: ``-log(k)`` and ``-inf``); the limit as
  those scores grow together.
* a row of only ``-inf``, or with any NaN, comes back all NaN.
* logsumexp and the smooth max/min reduce a row to one number: a row with
  ``+inf`` gives ``+inf``, ``-inf`` entries drop out (only ``-inf``, or an
  empty row, gives ``-inf``), a NaN gives NaN.
* no warnings: the special values are produced on purpose, under
  ``np.errstate(all="ignore")``.

Finite scores near the dtype's limits follow two more rules:

* **Overflowing shift.**  Every map above computes ``(x - max) / T``
  (shift first, then divide).  For finite scores of opposite signs near the
  limit, ``x - max`` overflows to ``-inf`` (``-1e308 - 1e308``) although the
  quotient is finite when ``T > 1``; such entries are computed as
  ``(x/2 - max/2) / (T/2)`` (the halvings are exact), so a shifted score is
  ``-inf`` only where the true ``(x - max) / T`` is below the dtype's range,
  and every other entry keeps the plain formula's bits.
  ``log_softmax(float32[3.4028235e38, -3.4028235e38], T=2)`` is
  ``[0, -3.4028235e38]``; ``softmax([1e308, -1e308], T=1e308)`` is
  ``[0.881, 0.119]``.  Ordinary rows pay one comparison per block of rows:
  only for ``T > 1``, rows whose maximum exceeds ``2**(maxexp - nmant - 3)``
  (about 5e30 in float32, 5e291 in float64) are looked at.  The online partials (and so
  the kernels' emulation and the CUDA kernels) follow the same rule.
* **Out-of-range factors.**  A temperature or attention scale that is not a
  normal number of the working dtype (``1e-50`` or ``1e50`` for float32) is
  applied in float64 and rounded back, never rounded to 0 or inf first.

logsumexp and the smooth max take one maximum's ``exp(0) = 1`` out of the
shifted sum and add the rest ``s`` through ``log1p``: ``max + log1p(s)``
(``log(1 + s)`` once ``s >= 1``, exactly ``log(k)`` for ``k`` equal scores),
as SciPy does since its gh-18295, so ``logsumexp([0, -40])`` is
``4.248e-18``, not 0.  (The CUDA kernels finish with ``max + log(d)``, a rest below eps lost.)

Rows are independent.  Functions that differ say so (attention gives a fully
masked row zeros; the samplers refuse rows they cannot sample).

dtype rules
-----------
Lists, ints and bools become float64; float16, float32 and float64 keep their
dtype (float16 is computed in float32 and rounded back); complex, object and
other non-real input raises ``TypeError``, and so does a NumPy masked array
(``numpy.ma``: ``np.asarray`` would silently drop its mask; pass
``x.filled(-np.inf)`` or ``x.compressed()``).  A 0-d input is a one-element
vector.
"""

from compute._attention import (
    AttentionParts,
    attention,
    attention_parts,
    attention_scores,
    causal_mask,
    masked_rows,
    padding_mask,
)
from compute._calibration import (
    CalibrationReport,
    ReliabilityBins,
    brier_score,
    calibration_report,
    expected_calibration_error,
    fit_temperature,
    max_calibration_error,
    negative_log_likelihood,
    reliability_bins,
    sweep_confidences,
    sweep_ece,
    temperature_sweep,
)
from compute._checks import Cancelled, check_temperature
from compute._chi_square import chi2_sf, chi_square_test
from compute._curves import sampling_curves, top_indices, zipf_logits
from compute._distill import (
    InfoNCE,
    dark_knowledge,
    distillation_loss,
    info_nce,
    info_nce_sweep,
    soft_targets,
)
from compute._dk_sweep import dk_sweep, dk_sweep_steps
from compute._draws import (
    gumbel_max_sample,
    gumbel_max_steps,
    gumbel_softmax,
    sample,
    sample_counts,
    sample_probs,
)
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
from compute._filters_over_t import filter_over_temperatures
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
from compute._losses import (
    LOSSES,
    batch_mean,
    focal_loss,
    focal_loss_grad,
    loss_rows,
    softmax_mse,
    softmax_mse_grad,
    weighted_cross_entropy,
    weighted_cross_entropy_grad,
)
from compute._memory import attention_memory
from compute._moe import MoERoute, expert_load, moe_route
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
from compute._softmax import log_softmax, logsumexp, naive_softmax, softmax
from compute._steps import (
    SoftmaxSteps,
    entropy,
    perplexity,
    softmax_over_temperatures,
    softmax_steps,
)
from compute._training import (
    MODELS,
    TRAIN_HISTORY,
    TrainConfig,
    TrainRun,
    balanced_weights,
    classifier_features,
    classifier_gradients,
    classifier_logits,
    init_classifier,
    train_classifier,
    train_classifier_steps,
)
from compute._variants import (
    alibi_bias,
    alibi_slopes,
    logn_scale,
    logn_softmax,
    sink_tokens_softmax,
    sink_window_mask,
    softcap,
    softcap_grad,
    softmax_one,
    softmax_with_sink,
    ssmax,
)
from compute._variants_attention import QK_NORMS, qk_norm, sigmoid_attention
from compute._variants_speculative import (
    SpeculativeAccept,
    SpeculativeDraws,
    speculative_accept,
    speculative_sample,
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

__all__ = [
    "sample_probs",
    "info_nce_sweep",
    "sweep_confidences",
    "sweep_ece",
    "temperature_sweep",
    "TRAIN_HISTORY",
    "balanced_weights",
    "classifier_features",
    "classifier_gradients",
    "classifier_logits",
    "init_classifier",
    "train_classifier",
    "train_classifier_steps",
    "CalibrationReport",
    "ReliabilityBins",
    "brier_score",
    "calibration_report",
    "expected_calibration_error",
    "fit_temperature",
    "max_calibration_error",
    "negative_log_likelihood",
    "reliability_bins",
    "InfoNCE",
    "dark_knowledge",
    "distillation_loss",
    "info_nce",
    "soft_targets",
    "LOSSES",
    "batch_mean",
    "focal_loss",
    "focal_loss_grad",
    "loss_rows",
    "softmax_mse",
    "softmax_mse_grad",
    "weighted_cross_entropy",
    "weighted_cross_entropy_grad",
    "MODELS",
    "TrainConfig",
    "TrainRun",
    "active",
    "add_fallback_listener",
    "alibi_bias",
    "alibi_slopes",
    "attention",
    "attention_memory",
    "attention_parts",
    "AttentionParts",
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
    "filter_over_temperatures",
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
    "logn_scale",
    "logn_softmax",
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
    "qk_norm",
    "QK_NORMS",
    "refresh",
    "remove_fallback_listener",
    "renormalize_in",
    "sample",
    "sample_counts",
    "sampling_curves",
    "set_backend",
    "shifted_linear_normalize",
    "sigmoid",
    "sigmoid_attention",
    "sink_tokens_softmax",
    "sink_window_mask",
    "smooth_max",
    "smooth_max_curve",
    "smooth_min",
    "smooth_min_curve",
    "smoothed_target",
    "softcap",
    "softcap_grad",
    "softmax",
    "softmax_in",
    "softmax_jacobian",
    "SOFTMAX_METHODS",
    "softmax_one",
    "softmax_over_temperatures",
    "softmax_steps",
    "SoftmaxSteps",
    "softmax_with_sink",
    "sparsemax",
    "speculative_accept",
    "SpeculativeAccept",
    "SpeculativeDraws",
    "speculative_sample",
    "ssmax",
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
