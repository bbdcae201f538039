"""The Sampling result made from a kept softmax and over the tokens that matter: the plain bits.

Checks each shortcut of gui.model.sampling.knobs / rowmath against the plain computation it
replaces (top tokens ranked among candidates, sums in a reused row of zeros, the entropy's terms
in a reused buffer), and a model moved knob by knob against a fresh model and the plain
computation, so that a kept softmax is reused only while T and the vocabulary stay.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compute
from gui.model.sampling import SamplingModel, compute_draws
from gui.model.sampling.draws import DrawInputs
from gui.model.sampling.rowmath import LONG_ROW, row_entropy, scattered_sum, top_ids, top_ids_among
from tests.gui.test_sampling_speed import plain_result


def same_bits(a, b) -> None:
    a, b = np.atleast_1d(np.asarray(a)), np.atleast_1d(np.asarray(b))
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


@st.composite
def rows_and_candidates(draw):
    v = draw(st.sampled_from([LONG_ROW, LONG_ROW + 1, 9000]))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    z = rng.normal(0.0, draw(st.sampled_from([0.5, 3.0, 40.0])), v)
    if draw(st.booleans()):
        z = np.round(z)  # ties, also at the boundary of the tokens shown
    p = compute.softmax(z, temperature=draw(st.sampled_from([0.02, 0.5, 1.0, 4.0])))  # cold: many zeros
    kind = draw(st.sampled_from(["top", "top_missing_one", "random", "none", "few"]))
    m = draw(st.integers(1, 300))
    order = np.argsort(-z, kind="stable")
    cands = {"top": order[:m], "top_missing_one": np.delete(order[:m + 1], draw(st.integers(0, m))),
             "random": rng.choice(v, size=m, replace=False), "none": None, "few": order[:2]}[kind]
    return p, cands, draw(st.integers(1, 45))


@settings(max_examples=150, deadline=None)
@given(rows_and_candidates())
def test_top_ids_among_candidates_is_top_ids(case):
    p, cands, shown = case
    np.testing.assert_array_equal(top_ids_among(p, cands, shown), top_ids(p, shown))


def test_top_ids_among_candidates_is_checked_not_trusted():
    """Candidates that miss the most probable token: without the check the answer would be wrong."""
    p = compute.softmax(np.random.default_rng(3).normal(0, 2, 6000))
    order = top_ids(p, 30)
    wrong = order[1:]  # the first is missing
    got = top_ids_among(p, wrong, 12)
    np.testing.assert_array_equal(got, order[:12])
    assert got[0] == order[0]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 30_000), st.integers(0, 2**31 - 1), st.sampled_from([0.0, 0.001, 0.3, 1.0]))
def test_scattered_sum_is_the_sum_of_a_row_of_zeros(size, seed, share):
    rng = np.random.default_rng(seed)
    where = np.flatnonzero(rng.random(size) < share)
    values = rng.exponential(size=where.size) ** 3
    row = np.zeros(size)
    row[where] = values
    same_bits(scattered_sum(size, where, values), row.sum())
    # the reused row is left all zeros: a second call elsewhere sums only its own values
    other = np.array([size - 1])
    same_bits(scattered_sum(size, other, np.array([0.25])), np.float64(0.25))


def entropy_rows():
    @st.composite
    def make(draw):
        v = draw(st.sampled_from([10, LONG_ROW - 1, LONG_ROW, 20_000]))
        rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
        p = rng.exponential(size=v) ** draw(st.sampled_from([1.0, 8.0]))
        p /= p.sum()
        zeros = draw(st.sampled_from([0.0, 0.1, 0.9]))
        p[rng.random(v) < zeros] = 0.0
        odd = draw(st.sampled_from([None, "negative", "nan"]))
        if odd == "negative":
            p[0] = -1e-3
        elif odd == "nan":
            p[-1] = np.nan
        return p
    return make()


@settings(max_examples=80, deadline=None)
@given(entropy_rows())
def test_row_entropy_is_compute_entropy_bit_for_bit(p):
    same_bits(np.float64(row_entropy(p)), compute.entropy(p))


def test_row_entropy_keeps_compute_entropys_dtype():
    p = (np.arange(1, LONG_ROW + 10) / np.arange(1, LONG_ROW + 10).sum()).astype(np.float32)
    h = row_entropy(p)
    same_bits(np.asarray(h), compute.entropy(p))
    assert np.asarray(h).dtype == np.float32


FIELDS = ("probs", "filtered", "stage", "shown", "cum_rank", "cum_prob", "support")
MOVES = [("top_k", 80), ("top_p", 0.5), ("min_p_on", "on"), ("min_p", 0.2), ("top_k_on", "off"), ("top_p", 0.95),
         ("temperature", 0.4), ("top_p_on", "off"), ("shown", 30), ("top_k_on", "on"), ("temperature", 2.0),
         ("top_k", 3000), ("vocab", 7000), ("top_p_on", "on"), ("temperature", 0.05), ("min_p", 0.0)]


def test_a_model_moved_knob_by_knob_shows_what_a_fresh_model_and_the_plain_computation_show():
    m = SamplingModel()
    m.update_from_dict({"vocab": 6000, "draws": 3000})
    m.result()
    for name, value in MOVES:
        before = m.result()
        m.set_param(name, value)
        r = m.result()
        fresh = SamplingModel()
        fresh.update_from_dict({k: getattr(m, k) for k in ("vocab", "draws", "temperature", "top_k_on", "top_k",
                                                            "top_p_on", "top_p", "min_p_on", "min_p", "shown")})
        f = fresh.result()
        for field in FIELDS:
            same_bits(getattr(r, field), getattr(f, field))
        for field in ("kept", "top_p_rank", "entropy", "entropy_filtered", "perplexity", "perplexity_filtered"):
            assert getattr(r, field) == getattr(f, field), (name, field)
        fr, cum, rank, h, hf = plain_result(r.vocab.logits, m.knobs())
        same_bits(r.filtered, fr.filtered)
        same_bits(r.cum_prob, cum)
        same_bits(np.float64(r.entropy), h)
        same_bits(np.float64(r.entropy_filtered), hf)
        assert r.top_p_rank == rank
        np.testing.assert_array_equal(r.support, np.flatnonzero(fr.filtered > 0))
        np.testing.assert_array_equal(r.shown, top_ids(fr.probs, m.shown))
        # the softmax is kept exactly while T and the vocabulary stay
        same_t = name not in ("temperature", "vocab")
        assert (r.probs is before.probs) == same_t, name
        if not same_t:
            assert not np.array_equal(r.probs, before.probs)


@pytest.mark.parametrize("method", ["inverse_cdf", "gumbel_max"])
def test_draws_handed_the_results_support_are_the_draws_that_find_it(method):
    m = SamplingModel()
    m.update_from_dict({"vocab": 6000, "draws": 2500, "draw_method": method, "temperature": 0.7})
    m.result()
    handed = m.draw_inputs()
    assert handed.support is m.result().support
    d = compute_draws(handed)
    plain = compute_draws(DrawInputs(handed.vocab, handed.knobs, handed.n, handed.seed, handed.method))
    np.testing.assert_array_equal(d.draws, plain.draws)
    np.testing.assert_array_equal(d.counts, plain.counts)
    same_bits(d.expected, plain.expected)
    same_bits(d.expected, 2500 * compute.filter_probs(handed.vocab.logits, **handed.knobs))
    assert (d.chi2, d.dof, d.p_value) == (plain.chi2, plain.dof, plain.p_value)


def test_the_synthetic_row_made_in_reused_buffers_is_compute_zipf_logits():
    """Rows of other lengths one after another, and from other threads: each compute.zipf_logits' bits,
    and a row handed out is not changed by the next one (the buffers are the work's, not the result's)."""
    import threading

    from gui.model.sampling.vocabulary import zipf_logits

    sizes = [60_000, 3, 50_001, 1000, 60_000]
    rows = [zipf_logits(v, seed) for v, seed in zip(sizes, (0, 1, 2, 3, 4))]
    for row, v, seed in zip(rows, sizes, (0, 1, 2, 3, 4)):
        same_bits(row, compute.zipf_logits(v, seed=seed))
    out = {}

    def work(i):
        out[i] = zipf_logits(40_000 + i, 7)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for i, row in out.items():
        same_bits(row, compute.zipf_logits(40_000 + i, seed=7))


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([5, 295, 296, 3000, 60_000]), st.integers(0, 2**31 - 1), st.booleans())
def test_word_labels_negated_in_a_reused_buffer_are_the_plain_ones(v, seed, ties):
    """The labelled tokens (the largest logits, ties included) and their order, as -logits picked them."""
    import gui.model.sampling.vocabulary as vocabulary

    x = np.random.default_rng(seed).normal(size=v)
    if ties:
        x = np.round(x * 2)
    got = vocabulary.word_labels(x)
    words = vocabulary.words()
    k = min(len(words), v)
    top = np.argpartition(-x, k - 1)[:k] if k < v else np.arange(v)
    top = top[np.argsort(-x[top], kind="stable")]
    assert list(got.items()) == [(int(i), words[r]) for r, i in enumerate(top)]
