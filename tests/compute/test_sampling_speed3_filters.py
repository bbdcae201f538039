"""The knobs again from a softmax already made, and the top-k partition in a reused buffer.

filter_result_given_probs (a k, p or min-p move at an unchanged T) is checked bit for bit against
filter_result, on short rows (the whole-row code) and long ones (the top-k survivors code); the
reused partition buffer against fresh calls of other lengths and other threads.
"""

from __future__ import annotations

import threading

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import compute
from compute._filters import filter_result_given_probs


def same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def same_result(got, want):
    for name in ("probs", "filtered", "kept", "stage"):
        same_bits(getattr(got, name), getattr(want, name))
    assert (got.temperature, got.top_k, got.top_p, got.min_p) == (want.temperature, want.top_k, want.top_p, want.min_p)


@st.composite
def rows_and_knobs(draw):
    v = draw(st.sampled_from([5, 300, 2049, 5000]))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    row = rng.normal(0.0, draw(st.sampled_from([0.3, 3.0, 30.0])), v)
    if draw(st.booleans()):  # ties, also at the k-th largest
        row = np.round(row * draw(st.sampled_from([1.0, 4.0])))
    if draw(st.booleans()):  # -inf logits
        row[rng.random(v) < draw(st.sampled_from([0.01, 0.5]))] = -np.inf
        row[rng.integers(v)] = 0.0
    t = draw(st.sampled_from([0.01, 0.3, 1.0, 2.5, 50.0]))
    knobs = [dict(top_k=draw(st.one_of(st.none(), st.integers(1, 60), st.just(v // 2))),
                  top_p=draw(st.sampled_from([None, 0.05, 0.5, 0.9, 1.0])),
                  min_p=draw(st.sampled_from([None, 0.0, 1e-4, 0.5]))) for _ in range(3)]
    return row, t, knobs


@settings(max_examples=80, deadline=None)
@given(rows_and_knobs())
def test_cuts_from_a_known_softmax_are_filter_result_bit_for_bit(case):
    row, t, knobs = case
    probs = compute.filter_result(row, temperature=t).probs
    for k in knobs:  # several moves of the cuts from the same softmax
        got = filter_result_given_probs(row, probs, temperature=t, **k)
        same_result(got, compute.filter_result(row, temperature=t, **k))
        assert got.probs is probs  # the softmax is not made again
    np.testing.assert_array_equal(probs, compute.softmax(row, temperature=t))  # and never written


def test_other_logits_go_to_filter_result():
    """float32 logits (filtered in float64, probs in float32), a batch: the plain call, the same bits."""
    row32 = np.random.default_rng(1).normal(0, 2, 3000).astype(np.float32)
    probs = compute.filter_result(row32, temperature=0.7).probs
    same_result(filter_result_given_probs(row32, probs, temperature=0.7, top_k=40, top_p=0.9),
                compute.filter_result(row32, temperature=0.7, top_k=40, top_p=0.9))
    batch = np.random.default_rng(2).normal(0, 2, (3, 50))
    probs = compute.filter_result(batch, temperature=1.3).probs
    same_result(filter_result_given_probs(batch, probs, temperature=1.3, top_k=5),
                compute.filter_result(batch, temperature=1.3, top_k=5))


def test_bad_knobs_are_refused_as_filter_result_refuses_them():
    row = np.linspace(0.0, 1.0, 10)
    probs = compute.softmax(row)
    for bad in (dict(top_k=0), dict(top_p=1.5), dict(min_p=-0.1), dict(temperature=0.0)):
        knobs = dict(temperature=1.0) | bad
        try:
            compute.filter_result(row, **knobs)
        except (ValueError, TypeError) as exc:
            want = type(exc)
        else:  # pragma: no cover - the knob is valid after all
            raise AssertionError(bad)
        try:
            filter_result_given_probs(row, probs, **knobs)
        except want:
            pass
        else:
            raise AssertionError(f"{bad} was not refused")


def plain_top_k_filter(row, t, k, top_p):
    """The whole-row code (no top-k survivors path) for the same knobs."""
    import compute._filters as filters

    saved = filters._SPARSE
    filters._SPARSE = 10**12
    try:
        return compute.filter_result(row, temperature=t, top_k=k, top_p=top_p)
    finally:
        filters._SPARSE = saved


def test_the_reused_partition_buffer_gives_fresh_results_for_other_lengths_and_threads():
    rng = np.random.default_rng(5)
    rows = [rng.normal(0, 2, v) for v in (20_000, 3000, 50_000, 3000)]
    want = [plain_top_k_filter(r, 0.8, 30, 0.9) for r in rows]
    got = [compute.filter_result(r, temperature=0.8, top_k=30, top_p=0.9) for r in rows]
    for g, w in zip(got, want):  # each result still holds its own numbers after the later calls
        same_result(g, w)
    out: dict[int, list] = {}

    def work(i: int) -> None:
        out[i] = [compute.filter_result(r, temperature=0.8, top_k=30, top_p=0.9) for r in rows[i % 2:]]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for i, results in out.items():
        for g, w in zip(results, want[i % 2:]):
            same_result(g, w)


def test_rows_longer_than_the_kept_buffer_get_a_fresh_copy(monkeypatch):
    import compute._filters as filters

    row = np.random.default_rng(8).normal(0, 2, 5000)
    want = plain_top_k_filter(row, 1.1, 25, 0.8)
    monkeypatch.setattr(filters, "_SCRATCH_MAX", 1000)
    same_result(compute.filter_result(row, temperature=1.1, top_k=25, top_p=0.8), want)
