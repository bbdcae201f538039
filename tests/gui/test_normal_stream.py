"""gui.model.normal_stream: the kept normals are a fresh generator's, and a generator after them
draws what the seed's generator draws after the same number of normals."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compute
from gui.model.normal_stream import NormalStream
from gui.model.sampling import vocabulary
from gui.model.sampling.router import ROUTER_DIM, Embeddings


def fresh(seed: int, count: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(count)


@settings(max_examples=40, deadline=None)
@given(capacity=st.integers(1, 300), every=st.integers(1, 40),
       calls=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 300)), min_size=1, max_size=8))
def test_a_generator_after_count_normals_draws_what_the_seeds_one_draws_next(capacity, every, calls):
    stream = NormalStream(capacity, every=every)
    for seed, count in calls:
        if count > capacity:
            with pytest.raises(ValueError, match="count <="):
                stream.generator_after(seed, count)
            continue
        rng = stream.generator_after(seed, count)
        plain = np.random.default_rng(seed)
        plain.standard_normal(count)
        assert np.array_equal(rng.standard_normal(7), plain.standard_normal(7))
        ids, plain_ids = np.arange(50), np.arange(50)
        rng.shuffle(ids)
        plain.shuffle(plain_ids)
        assert np.array_equal(ids, plain_ids)
        assert np.array_equal(stream.first(seed, count), fresh(seed, count))  # the kept ones untouched


def test_without_kept_states_there_is_no_generator_after():
    with pytest.raises(ValueError, match="every > 0"):
        NormalStream(100).generator_after(0, 10)
    with pytest.raises(ValueError):
        NormalStream(0)


def test_two_threads_drawing_at_once_get_a_fresh_generators_normals():
    stream = NormalStream(50_000, every=512)
    got: dict[int, list] = {}

    def draw(i: int) -> None:
        got[i] = [(n, stream.first(i % 2, n), stream.generator_after(i % 2, n).standard_normal(3))
                  for n in range(100 + i, 50_000, 4999)]

    threads = [threading.Thread(target=draw, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, rows in got.items():
        for n, values, after in rows:
            assert np.array_equal(values, fresh(i % 2, n))
            assert np.array_equal(after, fresh(i % 2, n + 3)[n:])


@settings(max_examples=25, deadline=None)
@given(sizes=st.lists(st.integers(2, 20_000), min_size=1, max_size=6), seed=st.integers(0, 3))
def test_the_synthetic_vocabulary_is_compute_zipf_logits_whatever_the_order_of_sizes(sizes, seed):
    for v in sizes:
        np.testing.assert_array_equal(vocabulary.zipf_logits(v, seed), compute.zipf_logits(v, seed=seed))


def test_the_synthetic_vocabulary_across_the_kept_states_and_at_the_largest_v():
    for v in (4095, 4096, 4097, 8192, 150_001, vocabulary.MAX_V, vocabulary.MAX_V + 5, 3):
        np.testing.assert_array_equal(vocabulary.zipf_logits(v, 5), compute.zipf_logits(v, seed=5))


def test_router_embeddings_grow_in_place_and_earlier_views_keep_their_rows():
    emb = Embeddings(3)
    small = emb.view(1000)
    big = emb.view(18_000)
    assert np.shares_memory(small, big) and not big.flags.writeable
    np.testing.assert_array_equal(big, np.random.default_rng(3).standard_normal((18_000, ROUTER_DIM)))
    np.testing.assert_array_equal(small, big[:1000])
