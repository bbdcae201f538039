"""speculative_sample over the tokens that can come out: the same draws, bit for bit, as the whole-row code.

The reference is the code speculative_sample had before (one multinomial and
one binomial over the whole vocabulary), kept here as it was.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compute
from compute._variants_speculative import _multinomial


def old_speculative_sample(p, q, n, seed):
    """speculative_sample as it was (whole-row multinomials and binomial), for p and q already checked."""
    pa, qa = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    rng = np.random.default_rng(seed)
    rule = compute.speculative_accept(pa, qa)
    proposed = rng.multinomial(n, qa / qa.sum()).astype(np.int64)
    accepted = rng.binomial(proposed, rule.accept).astype(np.int64)
    rejected = int(n - accepted.sum())
    redraw = rule.residual if rule.residual.sum() > 0 else pa / pa.sum()
    redrawn = rng.multinomial(rejected, redraw).astype(np.int64) if rejected else np.zeros_like(accepted)
    return accepted + redrawn, accepted, proposed, rejected, rng.random()


def sparse_row(rng, v, kept, *, last=False):
    """A distribution over ``v`` tokens that is non-zero on ``kept`` random tokens (and on the last if asked)."""
    row = np.zeros(v)
    ids = rng.choice(v, size=min(kept, v), replace=False)
    row[ids] = rng.gamma(0.5, size=ids.size) + 1e-12
    if last:
        row[-1] = rng.gamma(0.5) + 1e-12
    return row / row.sum()


def assert_same(p, q, n, seed):
    new = compute.speculative_sample(p, q, n, seed)
    counts, accepted, proposed, rejected, _ = old_speculative_sample(p, q, n, seed)
    np.testing.assert_array_equal(new.counts, counts)
    np.testing.assert_array_equal(new.accepted, accepted)
    np.testing.assert_array_equal(new.proposed, proposed)
    assert new.rejected == rejected
    assert new.counts.dtype == new.accepted.dtype == new.proposed.dtype == np.int64


@settings(max_examples=60, deadline=None)
@given(v=st.integers(1, 3000), kp=st.integers(1, 80), kq=st.integers(1, 80), n=st.integers(0, 20_000),
       seed=st.integers(0, 2**31 - 1), last_p=st.booleans(), last_q=st.booleans())
def test_sparse_rows_give_the_same_draws(v, kp, kq, n, seed, last_p, last_q):
    rng = np.random.default_rng(seed)
    assert_same(sparse_row(rng, v, kp, last=last_p), sparse_row(rng, v, kq, last=last_q), n, seed)


@settings(max_examples=25, deadline=None)
@given(v=st.integers(1, 400), n=st.integers(0, 5000), seed=st.integers(0, 2**31 - 1))
def test_dense_rows_give_the_same_draws(v, n, seed):
    rng = np.random.default_rng(seed)
    p, q = rng.dirichlet(np.ones(v)), rng.dirichlet(np.ones(v))
    assert_same(p, q, n, seed)


def test_the_sampling_views_target_and_draft():
    """The Sampling view's case: top-k and top-p on a Zipf row, the draft a noisy copy at its own temperature."""
    z = compute.zipf_logits(30_000, seed=3)
    knobs = {"top_k": 50, "top_p": 0.9}
    p = compute.filter_probs(z, temperature=1.0, **knobs)
    eps = np.random.default_rng(1).standard_normal(z.size)
    for noise, draft_t in ((0.0, 1.0), (0.5, 1.5), (2.0, 0.3), (3.0, 5.0)):
        q = compute.filter_probs(z + noise * eps, temperature=draft_t, **knobs)
        for n in (1, 10_000, 1_000_000):
            assert_same(p, q, n, seed=7)


def test_equal_rows_and_no_residual():
    """p == q: nothing is rejected (no residual); p == q but for one token: the residual is one token."""
    rng = np.random.default_rng(0)
    p = sparse_row(rng, 5000, 30)
    assert_same(p, p, 10_000, 0)
    q = p.copy()
    i, j = np.flatnonzero(p)[:2]
    q[i], q[j] = p[i] + p[j], 0.0
    assert_same(p, q, 10_000, 1)


def test_the_accept_rule_given_gives_the_same_draws():
    rng = np.random.default_rng(5)
    p, q = sparse_row(rng, 2000, 40), sparse_row(rng, 2000, 40)
    rule = compute.speculative_accept(p, q)
    a = compute.speculative_sample(p, q, 50_000, 11, accept=rule)
    b = compute.speculative_sample(p, q, 50_000, 11)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("v, kept, last", [(1, 1, False), (2, 1, False), (2, 1, True), (10_000, 1, False),
                                           (10_000, 5, True), (10_000, 3000, False), (500, 500, False)])
def test_multinomial_matches_numpy_and_leaves_the_stream_where_numpy_does(v, kept, last):
    for seed in range(5):
        pvals = sparse_row(np.random.default_rng(seed + 100), v, kept, last=last)
        for n in (0, 1, 37, 100_000):
            a, b = np.random.default_rng(seed), np.random.default_rng(seed)
            np.testing.assert_array_equal(_multinomial(a, n, pvals), b.multinomial(n, pvals).astype(np.int64))
            assert a.random() == b.random()  # the same number of draws taken


def test_multinomial_refuses_what_numpy_refuses():
    for bad in (np.array([0.5, np.nan, 0.5]), np.array([0.0, -0.1, 1.1]), np.array([0.9, 0.9, 0.0, 0.0])):
        with pytest.raises(ValueError):
            np.random.default_rng(0).multinomial(10, bad)
        with pytest.raises(ValueError):
            _multinomial(np.random.default_rng(0), 10, bad)
