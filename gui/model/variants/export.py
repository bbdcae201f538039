"""The Variants view's arrays: every tab's numbers, for the .npz and the CSVs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from gui.model.base import ExportArray
from gui.model.scores import ScoreRow
from gui.model.variants import rows

if TYPE_CHECKING:
    from gui.model.variants.model import VariantsModel

#: Rows longer than this go to the .npz only.
CSV_ROWS = 4096
SUMMARY_COLUMNS = ("n", "scale", "cap", "sink_logit", "sink_share", "ssmax_s", "logn_length", "logn_factor",
                   "alibi_heads", "alibi_head", "alibi_slope", "sigmoid_n", "qk_d", "qk_scale", "qk_gain",
                   "qk_bound")


def _keys(n: int) -> tuple[str, ...]:
    return tuple(f"key_{j + 1}" for j in range(n))


def _queries(n: int) -> tuple[str, ...]:
    return tuple(f"query_{i + 1}" for i in range(n))


def _matrix(m: np.ndarray, full: np.ndarray | None = None) -> ExportArray:
    return ExportArray(m, _keys(m.shape[1]), _queries(m.shape[0]), npz_data=full)


def export_arrays(model: VariantsModel, scores: ScoreRow) -> dict[str, ExportArray]:
    r = model.row_result(scores)
    length = model.length_result()
    cap = model.softcap_result(scores)
    alibi = model.alibi_result()
    sig = model.sigmoid_result()
    qk = model.qk_result()
    short = r.n <= CSV_ROWS
    logn_factor = float(rows.logn_factor(r.n, model.logn_length))
    length_cols = ["n"]
    length_data = [length.n.astype(np.float64)]
    for m in rows.LENGTH_METHODS:
        length_cols += [f"{m}_top", f"{m}_entropy"]
        length_data += [length.top[m], length.entropy[m]]
    summary = [r.n, model.scale, model.cap, model.sink_logit, r.sink_share, model.ssmax_s, model.logn_length,
               logn_factor, alibi.heads, alibi.head, alibi.slope, sig.n, qk.d, qk.scale, qk.gain, qk.bound]
    return {
        "row": ExportArray(np.column_stack([r.logits] + [r.weights[m] for m in rows.METHODS]),
                           ("logit",) + rows.METHODS, r.labels, csv=short),
        "row_sums": ExportArray(np.array([[r.total(m) for m in rows.METHODS] + [r.sink_share]]),
                                rows.METHODS + ("sink_share",)),
        "length": ExportArray(np.column_stack(length_data + [length.log_n]), tuple(length_cols) + ("ln_n",)),
        "softcap_curve": ExportArray(np.column_stack([cap.x, cap.capped, cap.x, cap.clipped, cap.grad, cap.clip_grad]),
                                     ("x", "softcap", "identity", "hard_clip", "softcap_grad", "hard_clip_grad")),
        "softcap_row": ExportArray(np.column_stack([cap.logits, cap.capped_logits, cap.before, cap.after]),
                                   ("logit", "capped_logit", "softmax_before", "softmax_after"), r.labels,
                                   csv=short),
        "alibi_slopes": ExportArray(alibi.slopes, ("slope",), tuple(f"head_{h + 1}" for h in range(alibi.heads))),
        "alibi_bias": _matrix(alibi.head_bias, alibi.bias),
        "alibi_weights_plain": _matrix(alibi.plain),
        "alibi_weights_biased": _matrix(alibi.biased),
        "sigmoid_weights": _matrix(sig.sigmoid),
        "sigmoid_softmax_weights": _matrix(sig.softmax),
        "sigmoid_row_sums": ExportArray(np.column_stack([np.arange(1.0, sig.n + 1), sig.sigmoid_sums,
                                                         sig.softmax_sums]),
                                        ("query", "sigmoid_sum", "softmax_sum")),
        "sigmoid_curve": ExportArray(np.column_stack([sig.curve_n.astype(np.float64), sig.curve_sum,
                                                      sig.curve_sum_b0]),
                                     ("n", "mean_row_sum_bias_minus_log_n", "mean_row_sum_bias_0")),
        "qk_histogram": ExportArray(np.column_stack([qk.edges[:-1], qk.edges[1:], qk.plain_counts,
                                                     qk.normed_counts]),
                                    ("bin_lo", "bin_hi", "count_plain", "count_qk_norm")),
        "qk_curves": ExportArray(np.column_stack([qk.scales, qk.plain_max, qk.normed_max, qk.plain_entropy,
                                                  qk.normed_entropy]),
                                 ("input_scale", "max_abs_logit_plain", "max_abs_logit_qk_norm",
                                  "mean_entropy_plain", "mean_entropy_qk_norm")),
        "summary": ExportArray(np.array([summary], dtype=np.float64), SUMMARY_COLUMNS),
    }
