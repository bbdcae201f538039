"""The synthetic vocabulary with its rank terms kept: compute.zipf_logits' row, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compute
from gui.model.sampling import SamplingModel
from gui.model.sampling import vocabulary as vocab_module
from gui.model.sampling.vocabulary import MAX_V, zipf_logits


def same_bits(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_array_equal(a.view(np.uint64), b.view(np.uint64))


@settings(max_examples=40, deadline=None)
@given(v=st.one_of(st.integers(1, 300), st.integers(1, MAX_V)), seed=st.integers(0, 2**31 - 1))
def test_zipf_logits_is_computes_row(v, seed):
    same_bits(zipf_logits(v, seed), compute.zipf_logits(v, seed=seed))


@pytest.mark.parametrize("v", [1, 2, 10, 50_257, 91_464, MAX_V - 1, MAX_V, MAX_V + 5])
def test_zipf_logits_at_the_ends_and_past_the_table(v):
    same_bits(zipf_logits(v, 3), compute.zipf_logits(v, seed=3))


def test_a_fresh_table_and_a_grown_one_give_the_same_rows(monkeypatch):
    monkeypatch.setattr(vocab_module, "_zipf_table", (np.empty(0), np.empty(0)))
    first = zipf_logits(1000, 0)
    assert vocab_module._zipf_table[0].size == MAX_V  # made once, for every rank up to MAX_V
    same_bits(first, compute.zipf_logits(1000, seed=0))
    same_bits(zipf_logits(MAX_V + 10, 1), compute.zipf_logits(MAX_V + 10, seed=1))
    same_bits(zipf_logits(5, 2), compute.zipf_logits(5, seed=2))


def test_bad_sizes_and_seeds_are_refused_as_compute_refuses_them():
    for v, seed in ((0, 0), (-3, 0), (10, -1)):
        with pytest.raises(ValueError):
            compute.zipf_logits(v, seed=seed)
        with pytest.raises(ValueError):
            zipf_logits(v, seed)


def test_the_models_vocabulary_is_the_zipf_row():
    m = SamplingModel()
    for v, seed in ((50_257, 0), (91_464, 0), (1234, 5)):
        m.update_from_dict({"vocab": v, "seed": seed})
        same_bits(m.vocabulary(None).logits, compute.zipf_logits(v, seed=seed))
