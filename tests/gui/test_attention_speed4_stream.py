"""The Attention view's random Q, K, V: the kept normals are filled in place and a draw longer than
the kept STREAM_MAX continues from the generator's state there; both are a fresh generator's draws."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gui.model.attention import sources
from gui.model.normal_stream import NormalStream


def fresh(seed, count):
    return np.random.default_rng(seed).standard_normal(count)


@settings(max_examples=40, deadline=None)
@given(st.integers(8, 60), st.lists(st.tuples(st.integers(0, 2), st.integers(1, 150)), min_size=1, max_size=8))
def test_draws_of_any_lengths_across_the_kept_size_are_a_fresh_generators(keep, calls):
    stream = NormalStream(keep)
    earlier = []
    for seed, count in calls:
        got = stream.first(seed, count)
        assert np.array_equal(got, fresh(seed, count)) and got.shape == (count,)
        earlier.append((seed, count, got))
    for seed, count, got in earlier:  # later draws wrote after them or elsewhere: numbers kept
        assert np.array_equal(got, fresh(seed, count))


def test_a_longer_draw_writes_after_the_kept_ones_without_a_copy():
    stream = NormalStream(sources.STREAM_MAX)
    short = stream.first(5, 1000)
    long = stream.first(5, 3000)
    assert np.shares_memory(short, long) and not short.flags.writeable
    assert np.array_equal(long, fresh(5, 3000)) and np.array_equal(short, fresh(5, 1000))
    assert np.array_equal(sources.random_qkv(64, 100, 8, 5)[2], fresh(5, 3 * 8 * 64 * 100)[-8 * 64 * 100:].reshape(8, 64, 100))
