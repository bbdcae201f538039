"""The router's kept matrix and embeddings views: the numbers of the plain seeded draws, never changed."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gui.model.sampling import SamplingModel
from gui.model.sampling.router import ROUTER_DIM, Embeddings, router_scores


def plain_scores(experts, tokens, seed):
    x = np.random.default_rng(seed).standard_normal((tokens, ROUTER_DIM))
    w = np.random.default_rng([seed, 1]).standard_normal((64, ROUTER_DIM))[:experts].T / np.sqrt(ROUTER_DIM)
    bias = np.random.default_rng([seed, 2]).normal(0.0, 0.5, 64)[:experts]
    return x @ w + bias


def same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(np.uint64), b.view(np.uint64))


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.integers(2, 64), st.integers(16, 3000)), min_size=1, max_size=4),
       st.integers(0, 2**31 - 1))
def test_scores_from_the_kept_matrix_are_the_plain_draws(moves, seed):
    emb = Embeddings(seed)
    for experts, tokens in moves:
        same_bits(router_scores(experts, tokens, seed, emb), plain_scores(experts, tokens, seed))
        same_bits(router_scores(experts, tokens, seed), plain_scores(experts, tokens, seed))


def test_the_embeddings_viewed_are_read_only_and_stay_as_they_were():
    emb = Embeddings(4)
    first = emb.view(100)
    with pytest.raises(ValueError):
        first[0, 0] = 1.0
    emb.view(5000)  # more rows drawn: the view handed out before keeps its numbers
    same_bits(first, np.random.default_rng(4).standard_normal((100, ROUTER_DIM)))
    same_bits(emb.view(3000), emb.take(3000))
    assert emb.take(10).flags.writeable  # take still hands out a copy


def test_a_model_moving_tokens_and_experts_shows_a_fresh_models_router():
    m = SamplingModel()
    for name, value in [("router_tokens", 5000), ("experts", 16), ("router_tokens", 40), ("seed", 3),
                        ("router_tokens", 3000), ("gate_temperature", 0.3)]:
        m.set_param(name, value)
        rt = m.router()
        fresh = SamplingModel()
        fresh.update_from_dict({k: getattr(m, k) for k in ("experts", "router_k", "router_tokens", "seed",
                                                            "gate_temperature")})
        want = fresh.router()
        for field in ("gate_logits", "gates", "indices", "weights", "load", "importance"):
            np.testing.assert_array_equal(getattr(rt, field), getattr(want, field))
        same_bits(rt.gate_logits, plain_scores(m.experts, m.router_tokens, m.seed) / m.gate_temperature)
