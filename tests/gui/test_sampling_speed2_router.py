"""The router's kept embeddings and its one softmax: the same numbers as drawing and computing everything anew."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import compute
from gui.model.sampling import SamplingModel
from gui.model.sampling.router import ROUTER_DIM, Embeddings, router, router_scores


def old_router_scores(experts, tokens, seed):
    """router_scores as it was: every embedding drawn for each call."""
    x = np.random.default_rng(seed).standard_normal((tokens, ROUTER_DIM))
    w = np.random.default_rng([seed, 1]).standard_normal((64, ROUTER_DIM))[:experts].T / np.sqrt(ROUTER_DIM)
    bias = np.random.default_rng([seed, 2]).normal(0.0, 0.5, 64)[:experts]
    return x @ w + bias


def old_router(experts, k, tokens, seed, temperature):
    """router as it was: the full softmax computed apart from moe_route's."""
    logits = old_router_scores(experts, tokens, seed) / temperature
    indices, weights = compute.moe_route(logits, min(k, experts))
    gates = compute.softmax(logits, axis=-1)
    return logits, gates, np.asarray(indices), np.asarray(weights), compute.expert_load(indices, experts), \
        gates.sum(axis=0)


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), sizes=st.lists(st.integers(1, 3000), min_size=1, max_size=6))
def test_embeddings_are_the_fresh_draw_whatever_the_order_of_sizes(seed, sizes):
    emb = Embeddings(seed)
    for n in sizes:
        got = emb.take(n)
        same_bits(got, np.random.default_rng(seed).standard_normal((n, ROUTER_DIM)))
        got[:] = 0.0  # a copy: the kept rows are not changed through it
    n = max(sizes)
    same_bits(emb.take(n), np.random.default_rng(seed).standard_normal((n, ROUTER_DIM)))


def test_router_scores_with_kept_embeddings_and_without():
    emb = Embeddings(7)
    for experts, tokens in ((8, 100), (8, 3000), (64, 2000), (2, 4097), (8, 16)):
        same_bits(router_scores(experts, tokens, 7, emb), old_router_scores(experts, tokens, 7))
        same_bits(router_scores(experts, tokens, 7), old_router_scores(experts, tokens, 7))
    # embeddings of another seed are not used
    same_bits(router_scores(8, 50, 8, emb), old_router_scores(8, 50, 8))


@settings(max_examples=20, deadline=None)
@given(experts=st.integers(2, 64), k=st.integers(1, 8), tokens=st.integers(1, 2000), seed=st.integers(0, 1000),
       temperature=st.floats(0.05, 5.0))
def test_router_is_the_old_router_bit_for_bit(experts, k, tokens, seed, temperature):
    rt = router(experts, k, tokens, seed, temperature)
    for got, want in zip((rt.gate_logits, rt.gates, rt.indices, rt.weights, rt.load, rt.importance),
                         old_router(experts, k, tokens, seed, temperature)):
        same_bits(got, want)
    np.testing.assert_allclose(rt.gates.sum(axis=1), 1.0, rtol=1e-12)
    for n in (0, 1, min(24, tokens), tokens):
        same_bits(rt.dense_rows(n), rt.dense[:n])
    # dense: the renormalised weights at the chosen experts, zero elsewhere (a plain loop)
    want = np.zeros((tokens, experts))
    for i in range(tokens):
        for j in range(rt.indices.shape[1]):
            want[i, rt.indices[i, j]] = rt.weights[i, j]
    same_bits(rt.dense, want)


def test_the_models_router_follows_token_counts_and_seeds():
    m = SamplingModel()
    for tokens, seed, gate_t in ((1024, 0, 1.0), (3000, 0, 1.0), (200, 0, 0.5), (5000, 3, 2.0), (1024, 0, 1.0)):
        m.update_from_dict({"router_tokens": tokens, "seed": seed, "gate_temperature": gate_t})
        rt = m.router()
        want = old_router(m.experts, m.router_k, tokens, seed, gate_t)
        same_bits(rt.gate_logits, want[0])
        same_bits(rt.gates, want[1])
        same_bits(rt.indices, want[2])
        same_bits(rt.load, want[4])
