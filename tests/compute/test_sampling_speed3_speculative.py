"""speculative_accept / speculative_sample on long rows where p and q are mostly zeros (after top-k):
worked on the tokens where either is non-zero, checked bit for bit against the whole-row code."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import compute
import compute._variants_speculative as spec


def same_bits(a, b):
    a, b = np.atleast_1d(np.asarray(a)), np.atleast_1d(np.asarray(b))
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


def whole_rows(f, *args, **kwargs):
    saved = spec._SPARSE_ROW
    spec._SPARSE_ROW = 10**12  # never sparse: the whole-row code
    try:
        return f(*args, **kwargs)
    finally:
        spec._SPARSE_ROW = saved


@st.composite
def sparse_pairs(draw):
    v = draw(st.sampled_from([4096, 5000, 30_000]))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    k = draw(st.integers(1, 200))
    p = np.zeros(v)
    at = rng.choice(v, size=k, replace=False)
    p[at] = rng.exponential(size=k) ** draw(st.sampled_from([1.0, 6.0]))
    p /= p.sum()
    kind = draw(st.sampled_from(["overlap", "disjoint", "same", "dense_q", "neg_zero"]))
    if kind == "same":
        q = p.copy()
    elif kind == "dense_q":
        q = rng.exponential(size=v)
        q /= q.sum()
    else:
        q = np.zeros(v)
        pool = np.setdiff1d(np.arange(v), at) if kind == "disjoint" else np.arange(v)
        bt = rng.choice(pool, size=min(k + 3, pool.size), replace=False)
        q[bt] = rng.exponential(size=bt.size)
        q /= q.sum()
        if kind == "neg_zero":
            q[np.flatnonzero(q == 0)[:3]] = -0.0
    return p, q


@settings(max_examples=60, deadline=None)
@given(sparse_pairs(), st.integers(0, 5000), st.integers(0, 2**31 - 1))
def test_the_rule_and_the_steps_are_the_whole_row_codes_bit_for_bit(pq, n, seed):
    p, q = pq
    got = compute.speculative_accept(p, q)
    want = whole_rows(compute.speculative_accept, p, q)
    same_bits(got.rate, want.rate)
    same_bits(got.accept, want.accept)
    same_bits(got.residual, want.residual)
    d, w = compute.speculative_sample(p, q, n, seed, accept=got), whole_rows(compute.speculative_sample, p, q, n, seed)
    for name in ("counts", "accepted", "proposed"):
        np.testing.assert_array_equal(getattr(d, name), getattr(w, name))
    assert d.rejected == w.rejected


def test_the_sparse_rule_is_taken_and_matches_a_plain_reference():
    p = compute.filter_probs(compute.zipf_logits(20_000, seed=1), top_k=40)
    q = compute.filter_probs(compute.zipf_logits(20_000, seed=1) + 0.5, temperature=1.7, top_k=40)
    assert spec._sparse_accept(p, q) is not None
    r = compute.speculative_accept(p, q)
    np.testing.assert_allclose(r.rate, np.minimum(p, q).sum(), rtol=1e-14)
    plain_accept = np.ones_like(p)
    plain_accept[q > 0] = np.minimum(1.0, p[q > 0] / q[q > 0])
    np.testing.assert_array_equal(r.accept, plain_accept)
    rest = np.maximum(p - q, 0.0)
    np.testing.assert_allclose(r.residual, rest / rest.sum(), rtol=1e-14, atol=0)


def test_rows_handed_in_are_not_written_and_not_handed_back():
    p = compute.filter_probs(compute.zipf_logits(8000, seed=2), top_k=30)
    q = compute.filter_probs(compute.zipf_logits(8000, seed=3), top_k=30)
    p0, q0 = p.copy(), q.copy()
    r = compute.speculative_accept(p, q)
    compute.speculative_sample(p, q, 500, 1, accept=r)
    np.testing.assert_array_equal(p, p0)
    np.testing.assert_array_equal(q, q0)
    assert not np.shares_memory(r.accept, p) and not np.shares_memory(r.residual, q)


def test_the_steps_at_the_edges_of_numpys_multinomial():
    """q one-hot (the mass left reaches 0 before the last category: NumPy's own call), q on the last token,
    p and q equal (nothing to redraw from the residual): each the whole-row code's draws."""
    v = 6000
    p = np.zeros(v)
    p[[3, 17, v - 1]] = [0.5, 0.3, 0.2]
    cases = []
    for where in ([5], [v - 1], [2, v - 1], [3, 17, v - 1]):
        q = np.zeros(v)
        q[where] = 1.0 / len(where)
        cases.append(q)
    cases.append(p.copy())
    for q in cases:
        for seed in range(3):
            d = compute.speculative_sample(p, q, 4000, seed)
            w = whole_rows(compute.speculative_sample, p, q, 4000, seed)
            for name in ("counts", "accepted", "proposed"):
                np.testing.assert_array_equal(getattr(d, name), getattr(w, name))
            assert d.rejected == w.rejected
            assert d.counts.sum() == d.proposed.sum() == 4000


def test_rows_longer_than_the_kept_row_of_zeros_are_summed_in_their_own(monkeypatch):
    p = compute.filter_probs(compute.zipf_logits(9000, seed=4), top_k=30)
    q = compute.filter_probs(compute.zipf_logits(9000, seed=4) + 0.3, top_k=30)
    want = whole_rows(compute.speculative_accept, p, q)
    monkeypatch.setattr(spec, "_SCRATCH_MAX", 100)
    got = compute.speculative_accept(p, q)
    same_bits(got.rate, want.rate)
    same_bits(got.residual, want.residual)
