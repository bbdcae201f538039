"""Speculative tab, Draft noise / Draft T at a long vocabulary: the redraws of the rejected proposals are added
into the counts where they fall (compute._variants_speculative._multinomial_into) instead of being made as a
row of their own and added to the accepted ones; checked bit for bit against that code."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import compute
import compute._variants_speculative as spec


def former_steps(p, q, n, seed, rule):
    """The steps as they were made before (the redraws as a row of their own, then accepted + redrawn)."""
    pa, qa = spec._pair(p, q)
    rng = np.random.default_rng(seed)
    v = qa.size
    near = np.flatnonzero(qa > 0)
    if v < spec._SPARSE_ROW or near.size > v // 8:
        return None
    at = qa[near] / qa.sum()
    keep = at > 0
    support, at = near[keep], at[keep]
    proposed = spec._multinomial_at(rng, n, v, support, at)
    if proposed is None:
        return None
    where = support[proposed[support] > 0]
    if proposed[v - 1] > 0 and (not where.size or where[-1] != v - 1):
        where = np.append(where, v - 1)
    accepted = np.zeros_like(proposed)
    accepted[where] = rng.binomial(proposed[where], rule.accept[where])
    rejected = int(n - accepted[where].sum())
    redraw = rule.residual if (rule.residual > 0).any() else pa / pa.sum()
    redrawn = spec._multinomial(rng, rejected, redraw) if rejected else np.zeros_like(accepted)
    return accepted + redrawn, accepted, proposed, rejected, rng.integers(2**62)


SIZES = st.sampled_from([4096, 5000, 12_000])


@st.composite
def rows(draw, size=SIZES):
    """A probability row: sparse (after top-k), on the last token, one-hot, dense or with -0.0 entries."""
    v = draw(size)
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    kind = draw(st.sampled_from(["sparse", "last", "one_hot", "dense", "neg_zero"]))
    p = np.zeros(v)
    if kind == "dense":
        p = rng.exponential(size=v)
    elif kind == "one_hot":
        p[draw(st.integers(0, v - 1))] = 1.0
    else:
        at = rng.choice(v, size=draw(st.integers(1, 120)), replace=False)
        if kind == "last":
            at[0] = v - 1
        p[at] = rng.exponential(size=at.size) ** draw(st.sampled_from([1.0, 8.0]))
    p /= p.sum()
    if kind == "neg_zero":
        p[np.flatnonzero(p == 0)[:2]] = -0.0
    return p


@settings(max_examples=40, deadline=None)
@given(rows(), st.integers(0, 20_000), st.integers(0, 2**31 - 1), st.integers(0, 3))
def test_multinomial_into_adds_the_same_draws_and_leaves_the_stream_where_the_row_draw_does(pvals, n, seed, start):
    into = np.random.default_rng(seed).integers(0, 50, pvals.size) * start
    want = into + spec._multinomial(a := np.random.default_rng(seed), n, pvals)
    got = into.copy()
    spec._multinomial_into(b := np.random.default_rng(seed), n, pvals, got)
    assert got.dtype == want.dtype == np.int64
    np.testing.assert_array_equal(got, want)
    assert a.integers(2**62) == b.integers(2**62)  # the same draws taken from the stream


@settings(max_examples=40, deadline=None)
@given(st.data(), st.booleans(), st.integers(0, 20_000), st.integers(0, 2**31 - 1))
def test_the_steps_give_the_former_counts_accepted_and_proposals(data, overlap, n, seed):
    p = data.draw(rows())
    q = data.draw(rows(st.just(p.size)))  # a draft of the same vocabulary
    if overlap:  # a draft on the target's tokens (accepted and redrawn tokens meet)
        q = np.abs(p) * np.random.default_rng(seed).exponential(size=p.size)
        q /= q.sum()
    p, q = np.abs(p), np.abs(q)  # -0.0 -> +0.0 (the rule's validation takes it either way)
    rule = compute.speculative_accept(p, q)
    want = former_steps(p, q, n, seed, rule)
    rng = np.random.default_rng(seed)
    got = spec._sparse_steps(rng, n, *spec._pair(p, q), rule)
    assert (got is None) == (want is None)
    if got is None:
        return
    for g, w in zip((got.counts, got.accepted, got.proposed), want[:3]):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    assert got.rejected == want[3] and got.counts.sum() == n
    assert rng.integers(2**62) == want[4]


def test_on_the_sampling_model_the_steps_are_the_former_ones_at_each_draft_noise():
    """The Sampling model's own target and drafts (top-k 50 and top-p on a 200,000-token vocabulary)."""
    from gui.model.sampling.model import SamplingModel

    m = SamplingModel()
    m.vocab = 200_000
    for noise in (0.0, 0.5, 2.5):
        m.draft_noise = noise
        s = m.speculative_result(None)
        want = former_steps(s.p, s.q, s.n, int(m.seed), compute.speculative_accept(s.p, s.q))
        assert want is not None  # the long-row way
        np.testing.assert_array_equal(s.counts, want[0])
        np.testing.assert_array_equal(s.accepted, want[1])
        assert s.rejected == want[3]
