"""filter_over_temperatures: one filter_probs per temperature, bit for bit, in one pass."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute import filter_over_temperatures, filter_probs


@st.composite
def cases(draw):
    v = draw(st.sampled_from([1, 2, 7, 50, 300, 2048, 2049, 3000]))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    row = rng.normal(0.0, draw(st.sampled_from([0.5, 3.0, 30.0])), v)
    if draw(st.booleans()):  # ties
        row = np.round(row)
    if v > 1 and draw(st.booleans()):  # some -inf, never all
        row[rng.random(v) < 0.2] = -np.inf
        row[rng.integers(v)] = 0.0
    ts = np.geomspace(draw(st.sampled_from([0.01, 0.05, 0.5])), draw(st.sampled_from([1.0, 5.0, 50.0])),
                      draw(st.integers(1, 9)))
    top_k = draw(st.one_of(st.none(), st.integers(1, v + 3)))
    top_p = draw(st.one_of(st.none(), st.sampled_from([0.05, 0.5, 0.9, 0.999, 1.0])))
    min_p = draw(st.one_of(st.none(), st.sampled_from([0.0, 0.01, 0.2, 1.0])))
    return row, ts, dict(top_k=top_k, top_p=top_p, min_p=min_p)


@settings(max_examples=80, deadline=None)
@given(cases())
def test_each_row_is_filter_probs_at_its_temperature_bit_for_bit(case):
    row, ts, knobs = case
    got = filter_over_temperatures(row, ts, **knobs)
    assert got.shape == (ts.size, row.size) and got.dtype == np.float64
    for t, out in zip(ts, got):
        want = filter_probs(row, temperature=float(t), **knobs)
        np.testing.assert_array_equal(out.view(np.uint64), want.view(np.uint64))


def test_a_float32_row_is_filtered_in_float64_as_filter_probs_works():
    row = np.random.default_rng(1).normal(size=400).astype(np.float32)
    got = filter_over_temperatures(row, [0.3, 2.0], top_k=20)
    for t, out in zip((0.3, 2.0), got):
        np.testing.assert_array_equal(out.astype(np.float32), filter_probs(row, temperature=t, top_k=20))


def test_bad_input_is_refused_as_filter_probs_refuses_it():
    with pytest.raises(ValueError):
        filter_over_temperatures([1.0, 2.0], [1.0, 0.0])
    with pytest.raises(ValueError):
        filter_over_temperatures([1.0, 2.0], [1.0], top_p=1.5)
    with pytest.raises(ValueError):
        filter_over_temperatures([1.0, np.nan], [1.0])
    with pytest.raises(ValueError):
        filter_over_temperatures(np.ones((2, 3)), [1.0])
    with pytest.raises(TypeError):
        filter_over_temperatures([1.0, 2.0], [1.0], top_k=2.5)
    assert filter_over_temperatures([1.0, 2.0], []).shape == (0, 2)


def plain_filter(rows, t, k, top_p, min_p):
    """The knobs as written before the whole-array passes (boolean indexing, np.where), for comparison."""
    from compute._filters import _SMALL_ROW, _top_p_cut
    from compute._softmax import softmax

    n_rows, v = rows.shape
    probs = softmax(rows, temperature=t)
    stage = np.zeros(rows.shape, dtype=np.int8)
    masked = rows == -np.inf
    kept = ~masked
    stage[masked] = 4
    state = {"all": not masked.any()}

    def cut(mask, code):
        if mask.any():
            stage[mask] = code
            kept[mask] = False
            state["all"] = False

    def renormalised():
        if state["all"]:
            return probs
        p = np.where(kept, probs, 0.0)
        p /= p.sum(axis=-1, keepdims=True)
        return p

    with np.errstate(all="ignore"):
        if k is not None and k < v:
            kth = np.partition(rows, v - k, axis=-1)[:, v - k : v - k + 1]
            cut(kept & (rows < kth), 1)
        if top_p is not None:
            p1 = renormalised()
            if top_p >= 1.0:
                thresholds = np.full((n_rows, 1), np.nextafter(0.0, 1.0))
            elif v <= _SMALL_ROW:
                asc = np.sort(p1, axis=-1)
                tails = np.cumsum(asc, axis=-1)
                first = np.minimum(np.count_nonzero(tails <= 1.0 - top_p, axis=-1), v - 1)
                thresholds = np.take_along_axis(asc, first[:, None], axis=-1)
            else:
                thresholds = np.array([[_top_p_cut(p1[r][kept[r]] if k is not None and k < v else p1[r], top_p)]
                                       for r in range(n_rows)])
            cut(kept & (p1 < thresholds), 2)
        if min_p is not None and min_p > 0.0:
            p2 = renormalised()
            cut(kept & (p2 < min_p * p2.max(axis=-1, keepdims=True)), 3)
        filtered = renormalised()
        if filtered is probs:
            filtered = probs.copy()
    return probs, kept, filtered, stage


@settings(max_examples=80, deadline=None)
@given(cases(), st.integers(1, 3), st.booleans())
def test_the_knobs_give_the_bits_of_the_plain_indexing(case, n_rows, plus_inf):
    from compute import filter_result

    row, ts, knobs = case
    rows = np.array([np.roll(row, r) for r in range(n_rows)])
    if plus_inf and row.size > 1:
        rows[0, 0] = np.inf
    t = float(ts[0])
    fr = filter_result(rows, temperature=t, **knobs)
    want = plain_filter(rows, t, knobs["top_k"], knobs["top_p"], knobs["min_p"])
    for got, ref in zip((fr.probs, fr.kept, fr.filtered, fr.stage), want):
        np.testing.assert_array_equal(np.ascontiguousarray(got).view(np.uint8), np.ascontiguousarray(ref).view(np.uint8))
