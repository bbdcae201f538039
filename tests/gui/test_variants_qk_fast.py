"""The QK-norm tab's shortcuts give the same bits as the plain computation.

* :func:`att.weights_entropy` (the curves' entropy, without compute.entropy's
  NaN fix-up) is compute.entropy bit for bit on weights, and hands anything
  else to it;
* the model keeps q, k per (d, seed) and the plain logits per (d, scale,
  seed): after any moves its result equals a fresh :func:`att.qk_result`
  with fresh curves, and a moved input replaces what it feeds.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import compute
from gui.model.variants import VariantsModel
from gui.model.variants import attention as att


def assert_bits(got: np.ndarray, want: np.ndarray) -> None:
    """Equal to the bit (the sign of a zero and NaN included)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))


WEIGHTS = st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 1.0, 5e-324, 2.2250738585072014e-308, 1e-300]))


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 40)), elements=WEIGHTS))
def test_weights_entropy_is_compute_entropy_to_the_bit(p):
    assert_bits(att.weights_entropy(p), compute.entropy(p))


@settings(max_examples=30, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(2, 30)),
              elements=st.floats(-1e4, 1e4)), st.floats(0.01, 1e4))
def test_weights_entropy_of_softmax_rows_with_underflowed_zeros(x, c):
    p = compute.softmax(c * x)
    assert_bits(att.weights_entropy(p), compute.entropy(p))


def test_weights_entropy_hands_other_input_to_compute_entropy():
    for p in (np.array([[0.5, -0.1, 0.6]]), np.array([0.5, np.nan, 0.5]), np.array([0.25, 0.75], np.float32),
              np.array([[0.2, 0.8], [0.4, 0.6]]).T, np.array([[np.inf, 0.0]])):
        got, want = att.weights_entropy(p), compute.entropy(p)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    # a one-hot row: -(1 * log 1) is -0.0, as compute.entropy's
    assert_bits(att.weights_entropy(np.array([1.0])), compute.entropy(np.array([1.0])))


def test_the_curves_entropy_is_the_mean_of_compute_entropy_over_rows():
    """The plain curve at one input scale, from compute alone (one softmax per scale)."""
    d, seed = 24, 5
    q, k = att.random_qk(att.QK_N, d, seed, 4)
    _, ent = att.qk_plain_curves(d, seed)
    for i in (0, 12, 24):
        c = att.QK_SCALES[i]
        logits = (c * c) * (q @ k.T / math.sqrt(d))
        assert ent[i] == compute.entropy(compute.softmax(logits)).mean()


def fresh(m: VariantsModel) -> att.QkResult:
    return att.qk_result(m.qk_d, m.qk_scale, m.qk_gain, m.seed, att.qk_curves(m.qk_d, m.qk_gain, m.seed))


def assert_qk_is_fresh(m: VariantsModel) -> None:
    got, want = m.qk_result(), fresh(m)
    assert (got.d, got.scale, got.gain) == (want.d, want.scale, want.gain)
    for name in ("plain", "normed", "edges", "plain_counts", "normed_counts", "scales", "plain_max", "normed_max",
                 "plain_entropy", "normed_entropy"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)
    # and compute's own functions at this scale
    q, k = att.random_qk(att.QK_N, m.qk_d, m.seed, 4)
    c = m.qk_scale
    np.testing.assert_array_equal(got.plain, compute.attention_scores(c * q, c * k))
    np.testing.assert_array_equal(got.normed, compute.attention_scores(
        compute.qk_norm(c * q, "rms", m.qk_gain, att.QK_EPS), compute.qk_norm(c * k, "rms", m.qk_gain, att.QK_EPS)))


def test_a_scale_move_replaces_the_plain_logits_and_keeps_the_curves():
    m = VariantsModel(qk_d=16)
    before = m.qk_result()
    m.set_param("qk_scale", 7.0)
    after = m.qk_result()
    assert after.plain_max is before.plain_max and after.normed_entropy is before.normed_entropy
    assert not np.array_equal(after.plain, before.plain)
    assert not np.array_equal(after.normed, before.normed)
    assert_qk_is_fresh(m)


def test_a_d_or_seed_move_draws_new_inputs():
    m = VariantsModel(qk_d=16)
    before = m.qk_result()
    m.set_param("qk_d", 40)
    assert m.qk_result().plain.shape == before.plain.shape  # (QK_N, QK_N) whatever d
    assert not np.array_equal(m.qk_result().plain, before.plain)
    assert_qk_is_fresh(m)
    old = m.qk_result()
    m.set_param("seed", 9)
    assert not np.array_equal(m.qk_result().plain, old.plain)
    assert not np.array_equal(m.qk_result().plain_entropy, old.plain_entropy)
    assert_qk_is_fresh(m)


MOVES = st.lists(st.tuples(st.sampled_from(["qk_d", "qk_scale", "qk_gain", "seed"]), st.integers(0, 3)),
                 max_size=8)
VALUES = {"qk_d": (4, 9, 64, 300), "qk_scale": (0.1, 1.0, 13.0, 100.0), "qk_gain": (0.1, 0.7, 2.0, 10.0),
          "seed": (0, 1, 2, 77)}


@settings(max_examples=10, deadline=None)
@given(MOVES)
def test_after_any_moves_the_qk_result_is_a_fresh_recompute(moves):
    m = VariantsModel(qk_d=8)
    m.qk_result()
    for name, i in moves:
        m.set_param(name, VALUES[name][i])
        m.qk_result()
    assert_qk_is_fresh(m)
