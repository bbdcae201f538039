"""compute.sample_probs: sample() from a row already filtered, the same draws bit for bit."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compute


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), v=st.integers(1, 300), n=st.integers(0, 2000),
       temperature=st.floats(0.05, 5.0), top_k=st.one_of(st.none(), st.integers(1, 50)),
       top_p=st.one_of(st.none(), st.floats(0.05, 1.0)), min_p=st.one_of(st.none(), st.floats(0.0, 0.5)))
def test_sample_probs_of_the_filtered_row_is_sample(seed, v, n, temperature, top_k, top_p, min_p):
    logits = np.random.default_rng(seed).normal(0, 3, v)
    knobs = {"temperature": temperature, "top_k": top_k, "top_p": top_p, "min_p": min_p}
    expected = compute.sample(logits, n, seed, **knobs)
    got = compute.sample_probs(compute.filter_probs(logits, **knobs), n, seed)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("bad", [np.zeros(3), np.array([0.5, -0.1, 0.6]), np.ones((2, 2)),
                                 np.ones(3, dtype=np.float32)])
def test_sample_probs_refuses_what_is_not_a_float64_row_of_mass(bad):
    with pytest.raises(ValueError):
        compute.sample_probs(bad, 5, 0)
