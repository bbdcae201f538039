"""compute's softmax variants against independent references.

References: the formulas written out as plain Python loops (``math.exp``),
PyTorch where it has the operation (``F.softmax`` with an extra zero column
for softmax₁ and the sink as gpt-oss's ``torch.cat``, ``tanh`` and autograd
for soft-capping, ``F.rms_norm`` / ``F.normalize``), the ALiBi paper's
stated slopes and its reference code's ``get_slopes`` (copied below), Qwen's
``logn_list`` comprehension, and for speculative sampling Pearson's χ² over
many seeds.  Hypothesis checks the properties the issue names.
"""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
import scipy.stats
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import compute
from compute import _variants, _variants_attention, _variants_speculative
from tests.compute.support import FLOAT_DTYPES, INF, NAN

FINITE = st.floats(-30, 30, allow_nan=False, width=64)
ROWS = hnp.arrays(np.float64, st.integers(1, 12), elements=FINITE)


def t(x) -> torch.Tensor:
    return torch.tensor(np.asarray(x, dtype=np.float64))


@pytest.mark.parametrize("module", [_variants, _variants_attention, _variants_speculative],
                         ids=lambda m: m.__name__)
def test_the_examples_in_the_docstrings_run(module):
    result = doctest.testmod(module, extraglobs={"compute": compute},
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 3 and result.failed == 0


def test_every_variant_is_public_and_documented_with_an_example():
    names = set(_variants.__all__) | set(_variants_attention.__all__) | set(_variants_speculative.__all__)
    for name in names:
        obj = getattr(compute, name)
        assert obj is getattr(_variants, name, None) or obj is getattr(_variants_attention, name, None) \
            or obj is getattr(_variants_speculative, name, None)
        if callable(obj) and not isinstance(obj, type):
            assert "Examples" in obj.__doc__, name


# -- soft-capping ---------------------------------------------------------------------------------
def test_softcap_is_torchs_cap_tanh_and_its_autograd_derivative():
    x = np.linspace(-200, 200, 401)
    for cap in (1.0, 30.0, 50.0):
        xt = t(x).requires_grad_(True)
        y = cap * torch.tanh(xt / cap)
        y.sum().backward()
        np.testing.assert_allclose(compute.softcap(x, cap), y.detach().numpy(), rtol=1e-15, atol=1e-14)
        # autograd's 1 - tanh² is exact to rounding of 1 (it is 0 far out): agree to an absolute 1e-15
        np.testing.assert_allclose(compute.softcap_grad(x, cap), xt.grad.numpy(), rtol=1e-12, atol=1e-15)
        # and relatively, everywhere, to sech² written out (where cosh does not overflow)
        sech2 = [1 / math.cosh(v / cap) ** 2 if abs(v / cap) < 700 else 0.0 for v in x]
        np.testing.assert_allclose(compute.softcap_grad(x, cap), sech2, rtol=1e-13, atol=1e-300)


@settings(max_examples=150, deadline=None)
@given(x=st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False), cap=st.floats(0.5, 100))
def test_softcap_is_bounded_by_the_cap_and_near_identity_for_small_x(x, cap):
    y = float(compute.softcap([x], cap)[0])
    assert abs(y) <= cap
    assert math.copysign(1, y) == math.copysign(1, x) or y == 0
    if abs(x) <= 1e-2 * cap:  # tanh(z) = z - z³/3 + ...: the error is at most |x|³ / (3 cap²)
        # (+ 1e-300: x / cap rounds to a subnormal for the tiniest x)
        assert abs(y - x) <= abs(x) ** 3 / (3 * cap**2) + 4e-16 * abs(x) + 1e-300


@settings(max_examples=100, deadline=None)
@given(x=st.floats(-150, 150), cap=st.floats(1, 100))
def test_softcap_grad_matches_central_differences(x, cap):
    h = 1e-5 * cap
    fd = (cap * math.tanh((x + h) / cap) - cap * math.tanh((x - h) / cap)) / (2 * h)
    assert float(compute.softcap_grad([x], cap)[0]) == pytest.approx(fd, rel=1e-6, abs=1e-9)


def test_softcap_special_values_dtypes_and_errors():
    np.testing.assert_array_equal(compute.softcap([INF, -INF, 0.0], 30), [30.0, -30.0, 0.0])
    assert np.isnan(compute.softcap([NAN], 30)).all()
    assert compute.softcap_grad([INF], 5)[0] == 0.0
    assert compute.softcap_grad([2000.0], 1.0)[0] == 0.0 and compute.softcap_grad([20.0], 1.0)[0] > 0
    for dtype in FLOAT_DTYPES:
        assert compute.softcap(np.ones(3, dtype), 2).dtype == dtype
    for bad in (0, -1, INF, NAN):
        with pytest.raises(ValueError, match="cap must be finite and > 0"):
            compute.softcap([1.0], bad)


# -- softmax_one and the sink ------------------------------------------------------------------------
def test_softmax_one_is_torch_softmax_with_an_extra_zero_logit():
    x = np.random.default_rng(0).normal(0, 5, (6, 9))
    ref = F.softmax(torch.cat([t(x), torch.zeros(6, 1, dtype=torch.float64)], dim=-1), dim=-1)[:, :-1]
    np.testing.assert_allclose(compute.softmax_one(x), ref.numpy(), rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(compute.softmax_one(x.T, axis=0), ref.numpy().T, rtol=1e-14)


@settings(max_examples=150, deadline=None)
@given(ROWS)
def test_softmax_one_is_the_formula_written_out(row):
    denom = 1.0 + sum(math.exp(v) for v in row)
    expected = [math.exp(v) / denom for v in row]
    np.testing.assert_allclose(compute.softmax_one(row), expected, rtol=1e-13)


@settings(max_examples=150, deadline=None)
@given(ROWS, st.floats(0, 1e4))
def test_softmax_one_rows_sum_below_one_and_fade_as_scores_fall(row, c):
    w = compute.softmax_one(row - c)
    total = float(w.sum())
    assert 0.0 <= total <= 1.0
    if row.max() - c <= 30:  # e^30 / (1 + e^30) still rounds below 1
        assert total < 1.0
    bound = len(row) * math.exp(min(row.max() - c, 0.0))  # sum <= n e^max / (1 + e^max) <= n e^max
    assert total <= bound * (1 + 1e-12)
    assert compute.softmax_one(row - c - 1.0).sum() <= total  # lower scores, less mass
    assert not np.isnan(w).any()


def test_softmax_one_special_values():
    np.testing.assert_array_equal(compute.softmax_one([-INF, -INF]), [0.0, 0.0])  # attends to nothing
    np.testing.assert_array_equal(compute.softmax_one([-1e308, -1e308]), [0.0, 0.0])
    np.testing.assert_array_equal(compute.softmax_one([INF, 1.0, INF]), [0.5, 0.0, 0.5])
    np.testing.assert_allclose(compute.softmax_one([1e308, 0.0]), [1.0, 0.0])
    assert np.isnan(compute.softmax_one([1.0, NAN])).all()
    assert compute.softmax_one(np.zeros((2, 0))).shape == (2, 0)
    for dtype in FLOAT_DTYPES:
        assert compute.softmax_one(np.zeros(3, dtype)).dtype == dtype


def test_softmax_with_sink_is_gpt_oss_concatenated_sink_column():
    """gpt-oss: S = sinks.reshape(heads, 1, 1).expand(...); W = softmax(cat([QK, S], -1))[..., :-1]."""
    rng = np.random.default_rng(1)
    qk = rng.normal(0, 3, (4, 5, 7))
    sinks = rng.normal(0, 2, 4)
    s = t(sinks).reshape(4, 1, 1).expand(-1, 5, -1)
    full = torch.softmax(torch.cat([t(qk), s], dim=-1), dim=-1)
    w, share = compute.softmax_with_sink(qk, sinks[:, None, None], return_sink=True)
    np.testing.assert_allclose(w, full[..., :-1].numpy(), rtol=1e-14)
    np.testing.assert_allclose(share, full[..., -1:].numpy(), rtol=1e-14)
    assert share.shape == (4, 5, 1)


@settings(max_examples=150, deadline=None)
@given(ROWS, st.floats(-40, 40))
def test_the_sinks_mass_is_what_the_row_is_missing(row, sink):
    w, share = compute.softmax_with_sink(row, sink, return_sink=True)
    assert float(w.sum() + share[0]) == pytest.approx(1.0, abs=1e-12)
    lse = math.log(sum(math.exp(v) for v in row))
    assert share[0] == pytest.approx(1.0 / (1.0 + math.exp(lse - sink)), rel=1e-12, abs=1e-300)
    more = compute.softmax_with_sink(row, sink + 1.0, return_sink=True)[1]
    assert more[0] >= share[0]  # a larger sink logit takes more
    np.testing.assert_array_equal(compute.softmax_with_sink(row, 0.0), compute.softmax_one(row))


def test_a_sink_of_minus_inf_is_plain_softmax_and_bad_shapes_are_refused():
    x = np.random.default_rng(2).normal(size=(3, 6))
    np.testing.assert_allclose(compute.softmax_with_sink(x, -INF), compute.softmax(x), rtol=1e-15)
    w, share = compute.softmax_with_sink([-INF, -INF], 1.5, return_sink=True)
    np.testing.assert_array_equal(w, [0.0, 0.0])
    assert share[0] == 1.0
    w, share = compute.softmax_with_sink([INF, 0.0], INF, return_sink=True)
    np.testing.assert_array_equal(w, [0.5, 0.0])
    assert share[0] == 0.5
    assert np.isnan(compute.softmax_with_sink([1.0, 2.0], NAN)).all()
    np.testing.assert_allclose(compute.softmax_with_sink(x.T, np.arange(3.0)[None, :], axis=0),
                               compute.softmax_with_sink(x, np.arange(3.0)[:, None]).T, rtol=1e-15)
    with pytest.raises(ValueError, match="does not broadcast"):
        compute.softmax_with_sink(x, np.zeros(3))  # (3,) is not (3, 1)


def test_sink_window_mask_is_the_rule_written_out():
    n, sinks, window = 9, 2, 3
    mask = compute.sink_window_mask(n, sinks, window)
    for i in range(n):
        for j in range(n):
            assert mask[i, j] == (j <= i and (j < sinks or i - window < j)), (i, j)
    np.testing.assert_array_equal(compute.sink_window_mask(5, 0, 5), compute.causal_mask(5, 5))
    with pytest.raises(ValueError, match="window must be >= 1"):
        compute.sink_window_mask(4, 1, 0)


def test_sink_tokens_softmax_is_the_last_row_of_attention_under_that_mask():
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(12, 4)), rng.normal(size=(12, 4)), rng.normal(size=(12, 2))
    weights, _ = compute.attention(q, k, v, mask=compute.sink_window_mask(12, 4, 3))
    row = compute.attention_scores(q, k)[-1]
    np.testing.assert_allclose(compute.sink_tokens_softmax(row, 4, 3), weights[-1], rtol=1e-14)
    kept = [0, 1, 2, 3, 9, 10, 11]
    expected = np.zeros(12)
    expected[kept] = [math.exp(row[j]) / sum(math.exp(row[i]) for i in kept) for j in kept]
    np.testing.assert_allclose(compute.sink_tokens_softmax(row, 4, 3), expected, rtol=1e-13)
    np.testing.assert_allclose(compute.sink_tokens_softmax(row[:5], 4, 3), compute.softmax(row[:5]))


# -- length: SSMax and log-n ---------------------------------------------------------------------------
@settings(max_examples=100, deadline=None)
@given(ROWS, st.floats(0.05, 2.0))
def test_ssmax_is_softmax_of_s_log_n_times_the_scores(row, s):
    n = len(row)
    z = [s * math.log(n) * v for v in row]
    top = max(z)
    expected = [math.exp(v - top) / sum(math.exp(u - top) for u in z) for v in z]
    np.testing.assert_allclose(compute.ssmax(row, s), expected, rtol=1e-12, atol=1e-300)
    ref = torch.softmax(s * math.log(n) * t(row), dim=-1).numpy()
    np.testing.assert_allclose(compute.ssmax(row, s), ref, rtol=1e-12, atol=1e-300)


def test_ssmax_keeps_the_top_weight_where_softmax_lets_it_fade():
    """A row (g, 0, ..., 0): softmax's top weight is e^g / (e^g + n - 1) → 0; with s·g = 1 SSMax's is
    n / (2n - 1) → 1/2, and with s·g > 1 it grows towards 1."""
    ns = [8, 64, 512, 4096, 65536]
    top_softmax, top_ssmax, top_sharp = [], [], []
    for n in ns:
        row = np.zeros(n)
        row[0] = 1.0
        top_softmax.append(compute.softmax(row)[0])
        top_ssmax.append(compute.ssmax(row, 1.0)[0])
        top_sharp.append(compute.ssmax(row, 2.0)[0])
        assert top_ssmax[-1] == pytest.approx(n / (2 * n - 1), rel=1e-12)
    assert np.all(np.diff(top_softmax) < 0) and top_softmax[-1] < 1e-4
    assert np.all(np.diff(top_sharp) > 0) and top_sharp[-1] > 0.99
    assert compute.ssmax([3.0], 1.0)[0] == 1.0  # n = 1: log 1 = 0
    assert compute.ssmax([0.0, -INF], 1.0)[1] == 0.0
    with pytest.raises(ValueError, match="s must be finite and > 0"):
        compute.ssmax([1.0, 2.0], 0.0)


def test_logn_scale_is_qwens_logn_list():
    for length in (2, 7, 2048):
        n = 3 * length
        qwen = [(math.log(i, length) if i > length else 1) for i in range(1, n + 1)]
        np.testing.assert_allclose(compute.logn_scale(n, length), qwen, rtol=1e-15)
    assert compute.logn_scale(8192, 2048)[-1] == pytest.approx(math.log(8192) / math.log(2048))
    with pytest.raises(ValueError, match="train_length must be >= 2"):
        compute.logn_scale(8, 1)


def test_logn_softmax_scales_the_logits_like_the_scaled_query():
    rng = np.random.default_rng(4)
    q, k = rng.normal(size=(1, 16)), rng.normal(size=(40, 16))
    length = 10
    factor = compute.logn_scale(40, length)[-1]
    ref = torch.softmax((t(q) * factor) @ t(k).T / 4.0, dim=-1).numpy()[0]  # Qwen: query *= logn
    np.testing.assert_allclose(compute.logn_softmax((q @ k.T)[0] / 4.0, length), ref, rtol=1e-13)
    row = rng.normal(size=10)
    np.testing.assert_array_equal(compute.logn_softmax(row, 10), compute.softmax(row))  # within L: 1
    np.testing.assert_allclose(compute.logn_softmax(row, 2, position=8), compute.softmax(3 * row), rtol=1e-14)


# -- ALiBi ----------------------------------------------------------------------------------------------
def reference_get_slopes(n):
    """ofirpress/attention_with_linear_biases, fairseq/models/transformer.py, written as it is there."""

    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return get_slopes_power_of_2(closest_power_of_2) + reference_get_slopes(2 * closest_power_of_2)[0::2][
        : n - closest_power_of_2]


def test_alibi_slopes_are_the_papers_and_its_reference_codes():
    # the paper: "For models with 8 heads, our slopes are 1/2^1, 1/2^2, ..., 1/2^8"
    np.testing.assert_array_equal(compute.alibi_slopes(8), [1 / 2**i for i in range(1, 9)])
    # 16 heads: "1/2^0.5, 1/2^1, ..., 1/2^8"
    np.testing.assert_allclose(compute.alibi_slopes(16), [2 ** (-i / 2) for i in range(1, 17)], rtol=1e-15)
    twelve = compute.alibi_slopes(12)
    np.testing.assert_array_equal(twelve[:8], compute.alibi_slopes(8))
    np.testing.assert_allclose(twelve[8:], [2**-0.5, 2**-1.5, 2**-2.5, 2**-3.5], rtol=1e-15)
    for heads in range(1, 65):
        np.testing.assert_allclose(compute.alibi_slopes(heads), reference_get_slopes(heads), rtol=1e-14)
    with pytest.raises(ValueError, match="heads must be >= 1"):
        compute.alibi_slopes(0)


def test_alibi_bias_is_minus_slope_times_distance():
    n, heads = 7, 5
    bias = compute.alibi_bias(n, heads)
    slopes = reference_get_slopes(heads)
    assert bias.shape == (heads, n, n)
    for h in range(heads):
        for i in range(n):
            for j in range(n):
                assert bias[h, i, j] == pytest.approx(-slopes[h] * abs(i - j), rel=1e-14)
    causal = compute.alibi_bias(n, heads, causal=True)
    assert np.all(causal[:, np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]] == -INF)
    np.testing.assert_array_equal(np.tril(causal[0]), np.tril(bias[0]))


def test_the_causal_bias_gives_the_reference_codes_softmax():
    """The reference code adds slope·j (a constant per row away from -slope·(i - j)) plus the future mask."""
    rng = np.random.default_rng(5)
    n, heads = 9, 4
    scores = rng.normal(size=(heads, n, n))
    slopes = np.array(reference_get_slopes(heads))
    future = np.triu(np.ones((n, n), bool), 1)
    theirs = np.where(future, -INF, scores + slopes[:, None, None] * np.arange(n)[None, None, :])
    np.testing.assert_allclose(compute.softmax(scores + compute.alibi_bias(n, heads, causal=True)),
                               torch.softmax(t(theirs), dim=-1).numpy(), rtol=1e-13, atol=1e-300)


# -- sigmoid attention -------------------------------------------------------------------------------------
def test_sigmoid_attention_is_the_formula_and_torchs():
    rng = np.random.default_rng(6)
    q, k, v = rng.normal(size=(5, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    w, out = compute.sigmoid_attention(q, k, v)
    for i in range(5):
        for j in range(6):
            s = sum(q[i, c] * k[j, c] for c in range(3)) / math.sqrt(3) - math.log(6)
            assert w[i, j] == pytest.approx(1 / (1 + math.exp(-s)), rel=1e-14)
    tw = torch.sigmoid(t(q) @ t(k).T / math.sqrt(3) - math.log(6))
    np.testing.assert_allclose(out, (tw @ t(v)).numpy(), rtol=1e-13)
    w2, _ = compute.sigmoid_attention(q, k, v, bias=0.5, scale=1.0, causal=True)
    ref = torch.sigmoid(t(q) @ t(k).T + 0.5).numpy()
    np.testing.assert_allclose(w2, np.where(compute.causal_mask(5, 6), ref, 0.0), rtol=1e-14)


@pytest.mark.parametrize("n", [1, 4, 64, 1024])
def test_the_minus_log_n_bias_makes_zero_scores_sum_to_n_over_n_plus_1(n):
    q = k = np.zeros((n, 2))
    w, _ = compute.sigmoid_attention(q, k, np.ones((n, 1)))
    np.testing.assert_allclose(w.sum(axis=-1), n / (n + 1), rtol=1e-12)  # σ(-log n) = 1 / (1 + n)
    assert np.all((w >= 0) & (w <= 1))


def test_sigmoid_attention_refuses_bad_input():
    q = np.zeros((3, 2))
    with pytest.raises(ValueError, match="same number of keys"):
        compute.sigmoid_attention(q, q, np.zeros((4, 1)))
    with pytest.raises(ValueError, match="bias must be finite"):
        compute.sigmoid_attention(q, q, q, bias=INF)
    with pytest.raises(ValueError, match="same last dimension"):
        compute.sigmoid_attention(q, np.zeros((3, 5)), q)


# -- QK-norm --------------------------------------------------------------------------------------------------
def test_qk_norm_is_torchs_rms_norm_and_normalize():
    x = np.random.default_rng(7).normal(0, 30, (3, 4, 16))
    gain = np.linspace(0.5, 2, 16)
    ref = F.rms_norm(t(x), (16,), weight=t(gain), eps=1e-6).numpy()
    np.testing.assert_allclose(compute.qk_norm(x, "rms", gain), ref, rtol=1e-12)
    np.testing.assert_allclose(compute.qk_norm(x, "l2", 2.0), 2 * F.normalize(t(x), dim=-1).numpy(), rtol=1e-13)
    np.testing.assert_allclose(compute.qk_norm(np.moveaxis(x, -1, 0), axis=0), np.moveaxis(
        compute.qk_norm(x), -1, 0), rtol=1e-15)
    with pytest.raises(ValueError, match="kind must be one of rms, l2"):
        compute.qk_norm(x, "layer")
    with pytest.raises(ValueError, match="gain has 3 values"):
        compute.qk_norm(x, gain=[1.0, 2.0, 3.0])


@settings(max_examples=60, deadline=None)
@given(d=st.sampled_from([4, 16, 64, 256]), scale=st.floats(1e-2, 1e6), g=st.floats(0.25, 4), seed=st.integers(0, 99))
def test_qk_norm_bounds_the_logits_whatever_the_input_scale(d, scale, g, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(0, scale, (8, d)), rng.normal(0, scale, (8, d))
    logits = compute.qk_norm(q, gain=g) @ compute.qk_norm(k, gain=g).T / math.sqrt(d)
    assert np.abs(logits).max() <= math.sqrt(d) * g * g * (1 + 1e-9)
    unit = compute.qk_norm(q, "l2") @ compute.qk_norm(k, "l2").T
    assert np.abs(unit).max() <= 1 + 1e-12


# -- speculative decoding --------------------------------------------------------------------------------------
PROBS = hnp.arrays(np.float64, st.integers(2, 10), elements=st.floats(0, 1)).filter(lambda a: a.sum() > 0.1)


@settings(max_examples=80, deadline=None)
@given(PROBS, PROBS)
def test_the_rule_recovers_p_and_its_rate_is_one_minus_total_variation(a, b):
    n = min(len(a), len(b))
    if a[:n].sum() < 0.1 or b[:n].sum() < 0.1:
        return
    p, q = a[:n] / a[:n].sum(), b[:n] / b[:n].sum()
    r = compute.speculative_accept(p, q)
    assert r.rate == pytest.approx(1 - 0.5 * sum(abs(x - y) for x, y in zip(p, q)), abs=1e-12)
    for i in range(n):
        expected = 1.0 if p[i] >= q[i] else p[i] / q[i]
        assert r.accept[i] == pytest.approx(expected, rel=1e-15)
    # accepted proposals plus redrawn rejections: q·a + (1 - rate)·residual = p
    np.testing.assert_allclose(q * r.accept + (1 - r.rate) * r.residual, p, atol=1e-12)
    if r.rate < 1 - 1e-9:
        assert r.residual.sum() == pytest.approx(1.0)


def test_speculative_accept_refuses_what_is_not_a_distribution():
    with pytest.raises(ValueError, match="p must sum to 1"):
        compute.speculative_accept([0.5, 0.6], [0.5, 0.5])
    with pytest.raises(ValueError, match="same length"):
        compute.speculative_accept([0.5, 0.5], [1.0])
    with pytest.raises(ValueError, match="q must hold finite probabilities"):
        compute.speculative_accept([0.5, 0.5], [1.5, -0.5])
    with pytest.raises(ValueError, match="one non-empty row"):
        compute.speculative_accept(np.eye(2) / 2, np.eye(2) / 2)
    equal = compute.speculative_accept([0.3, 0.7], [0.3, 0.7])
    assert equal.rate == 1.0 and not equal.residual.any()


def target_and_draft():
    """A 20-token target at T = 1 and its draft at T = 1.6 (a flatter, cheaper guess)."""
    logits = compute.zipf_logits(20, 0)
    return compute.softmax(logits), compute.softmax(logits, temperature=1.6)


def test_speculative_sample_follows_p_over_200_seeds_at_the_expected_rate():
    """The χ² test against p rejects at α = 0.01 about as often as chance says (Binomial(200, 0.01)),
    and the proposals (which follow q) fail it nearly every time: the test has power."""
    p, q = target_and_draft()
    rule = compute.speculative_accept(p, q)
    assert 0.6 < rule.rate < 0.95
    n, seeds, alpha = 20_000, 200, 0.01
    failures = proposal_failures = rejected = 0
    for seed in range(seeds):
        d = compute.speculative_sample(p, q, n, seed)
        assert d.counts.sum() == d.proposed.sum() == n and np.all(d.accepted <= d.proposed)
        assert d.rejected == n - d.accepted.sum()
        failures += compute.chi_square_test(d.counts, n * p)[2] < alpha
        proposal_failures += compute.chi_square_test(d.proposed, n * p)[2] < alpha
        rejected += d.rejected
    assert failures <= scipy.stats.binom.isf(1e-6, seeds, alpha)
    assert proposal_failures >= seeds - 2
    expected = seeds * n * (1 - rule.rate)
    assert abs(rejected - expected) <= 6 * math.sqrt(expected * rule.rate)


def test_speculative_sample_is_seeded_and_checks_its_arguments():
    p, q = target_and_draft()
    a, b = compute.speculative_sample(p, q, 1000, 3), compute.speculative_sample(p, q, 1000, 3)
    assert np.array_equal(a.counts, b.counts) and a.rejected == b.rejected
    assert compute.speculative_sample(p, p, 1000, 0).rejected == 0
    assert compute.speculative_sample(p, q, 0, 0).counts.sum() == 0
    with pytest.raises(ValueError, match="seed must be >= 0"):
        compute.speculative_sample(p, q, 10, -1)
    with pytest.raises(ValueError, match="n must be >= 0"):
        compute.speculative_sample(p, q, -1, 0)
