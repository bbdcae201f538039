"""The Sampling model's shortcuts give exactly what the plain computations give (and follow their inputs).

Each shortcut (the cumulative curve sorting only p > 0, the entropy of a
row with many zeros, the draws over the support only, the filtered row
handed from the result to the draws and to speculative decoding) is checked
bit for bit against the plain computation it replaces, written out here.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compute
from compute import Stage
from gui.model.sampling import SamplingModel, compute_draws
from gui.model.sampling.draws import sample_support
from gui.model.sampling.model import _log_ranks
from gui.model.sampling.rowmath import cumulative_at, sparse_entropy
from gui.model.sampling.speculative import draft_logits, rate_curve, speculative


def sparse_rows(max_v: int = 400):
    """Rows >= 0 with zeros anywhere (most entries zero, or few), sometimes scaled to sum to 1."""
    @st.composite
    def make(draw):
        v = draw(st.integers(1, max_v))
        seed = draw(st.integers(0, 2**31 - 1))
        rng = np.random.default_rng(seed)
        share = draw(st.sampled_from([0.0, 0.01, 0.1, 0.3, 0.9, 1.0]))
        row = rng.exponential(size=v) ** draw(st.sampled_from([1.0, 5.0, 20.0]))
        row[rng.random(v) < share] = 0.0
        if draw(st.booleans()) and row.sum() > 0:
            row /= row.sum()
        return row
    return make()


def same_bits(a, b) -> None:
    np.testing.assert_array_equal(np.asarray(a).view(np.uint64), np.asarray(b).view(np.uint64))


@settings(max_examples=60, deadline=None)
@given(sparse_rows())
def test_the_cumulative_curve_sorting_only_positive_entries_is_the_full_sort(p):
    total = p.sum()
    ranks = _log_ranks(p.size)
    expected = np.cumsum(np.sort(p)[::-1] / (total if total > 0 else 1.0))[ranks - 1]
    same_bits(cumulative_at(p, total, ranks), expected)


@settings(max_examples=60, deadline=None)
@given(sparse_rows(max_v=3000))
def test_sparse_entropy_is_compute_entropy_bit_for_bit(p):
    same_bits(np.float64(sparse_entropy(p)), compute.entropy(p))


def test_sparse_entropy_hands_other_rows_to_compute():
    for row in (np.array([0.5, -0.1, 0.0, 0.0, 0.0, 0.6]), np.array([0.5, np.nan, 0, 0, 0, 0, 0, 0]),
                np.array([0.25, 0, 0, 0, 0, 0, 0, 0.75], dtype=np.float32)):
        h = sparse_entropy(row)
        ref = float(compute.entropy(row))
        assert h == ref or (np.isnan(h) and np.isnan(ref))


@settings(max_examples=40, deadline=None)
@given(sparse_rows(), st.integers(0, 2000), st.integers(0, 2**31 - 1))
def test_draws_over_the_support_are_sample_probs_bit_for_bit(p, n, seed):
    if not p.sum() > 0:
        with pytest.raises(ValueError):
            compute.sample_probs(p, n, seed)
        with pytest.raises(ValueError):
            sample_support(p, n, seed)
        return
    np.testing.assert_array_equal(sample_support(p, n, seed), compute.sample_probs(p, n, seed))


def test_draws_over_the_support_refuse_what_sample_probs_refuses():
    for row in (np.array([0.5, -0.5, 0.0, 1.0]), np.array([0.5, np.nan, 0.0, 1.0])):
        with pytest.raises(ValueError):
            sample_support(row, 10, 0)


KNOBS = [dict(temperature=1.0, top_k_on="on", top_p_on="on", min_p_on="off"),
         dict(temperature=0.3, top_k_on="off", top_p_on="on", min_p_on="on"),
         dict(temperature=2.5, top_k_on="on", top_p_on="off", min_p_on="off", top_k=3000),
         dict(temperature=0.05, top_k_on="off", top_p_on="off", min_p_on="off")]


def plain_result(logits, knobs):
    """The result's cumulative curve, top-p rank and entropies, computed the plain way."""
    fr = compute.filter_result(logits, **knobs)
    before_p = np.where(fr.stage == Stage.TOP_K, 0.0, fr.probs)
    total = before_p.sum()
    cum = np.cumsum(np.sort(before_p)[::-1] / (total if total > 0 else 1.0))
    ranks = _log_ranks(logits.size)
    rank = int(np.count_nonzero(np.isin(fr.stage, (Stage.KEPT, Stage.MIN_P)))) if knobs["top_p"] is not None else 0
    return fr, cum[ranks - 1], rank, compute.entropy(fr.probs), compute.entropy(fr.filtered)


@pytest.mark.parametrize("settings_", KNOBS)
def test_the_result_is_the_plain_computation(settings_):
    m = SamplingModel()
    m.update_from_dict({"vocab": 5000, **settings_})
    r = m.result()
    fr, cum, rank, h, hf = plain_result(r.vocab.logits, m.knobs())
    same_bits(r.filtered, fr.filtered)
    same_bits(r.cum_prob, cum)
    assert r.top_p_rank == rank
    same_bits(np.float64(r.entropy), h)
    same_bits(np.float64(r.entropy_filtered), hf)
    same_bits(np.float64(r.perplexity_filtered), np.exp(hf))


@pytest.mark.parametrize("settings_", KNOBS)
def test_draws_from_the_results_row_are_the_draws_that_filter_again(settings_):
    m = SamplingModel()
    m.update_from_dict({"vocab": 5000, "draws": 3000, **settings_})
    plain = compute_draws(m.draw_inputs())  # no result yet: the draws filter the row themselves
    assert m.draw_inputs().filtered is None
    m.result()
    handed = m.draw_inputs()
    assert handed.filtered is m.result().filtered and handed.key == plain.inputs.key
    d = compute_draws(handed)
    np.testing.assert_array_equal(d.draws, plain.draws)
    np.testing.assert_array_equal(d.counts, plain.counts)
    same_bits(d.expected, plain.expected)
    assert (d.chi2, d.dof, d.p_value) == (plain.chi2, plain.dof, plain.p_value)
    # and the old way, sample() filtering inside
    np.testing.assert_array_equal(d.draws, compute.sample(m.vocabulary(None).logits, 3000, 0, **m.knobs()))


def test_a_changed_knob_is_not_handed_the_old_row():
    m = SamplingModel()
    m.update_from_dict({"vocab": 3000, "draws": 2000})
    old = m.result().filtered
    m.set_param("temperature", 0.4)
    assert m.draw_inputs().filtered is None  # the cached result is of the old T
    d = m.draw()
    want = compute.filter_probs(m.vocabulary(None).logits, **m.knobs())
    same_bits(d.expected, 2000 * want)
    assert not np.array_equal(want, old)
    m.set_param("vocab", 4000)  # a new vocabulary: not the old row either
    assert m.draw_inputs().filtered is None
    assert m.draw().counts.size == 4000


def test_speculative_handed_the_results_row_is_the_plain_computation():
    m = SamplingModel()
    m.update_from_dict({"vocab": 4000, "spec_steps": 2000, "draft_noise": 0.8})
    m.result()
    s = m.speculative_result()
    vocab, knobs = m.vocabulary(None), m.knobs()
    plain = speculative(vocab, knobs, float(m.draft_temperature), 0.8, 2000, 0, int(m.shown))
    for name in ("p", "q", "accept", "residual", "counts", "accepted", "curve_rate", "shown"):
        same_bits(np.asarray(getattr(s, name), dtype=np.float64), np.asarray(getattr(plain, name), dtype=np.float64))
    assert (s.rate, s.chi2, s.rejected) == (plain.rate, plain.chi2, plain.rejected)
    cuts = {k: v for k, v in knobs.items() if k != "temperature"}
    same_bits(s.curve_rate, rate_curve(compute.filter_probs(vocab.logits, **knobs),
                                       draft_logits(vocab.logits, 0.8, 0), cuts))


RESULT_ARRAYS = ("probs", "filtered", "stage", "shown", "cum_rank", "cum_prob")
RESULT_VALUES = ("top_p", "top_p_rank", "kept", "entropy", "entropy_filtered", "perplexity", "perplexity_filtered")


def fresh(values: dict) -> SamplingModel:
    m = SamplingModel()
    m.update_from_dict(values)
    return m


def test_a_new_count_of_tokens_shown_reuses_the_filtered_row_and_equals_a_fresh_result():
    m = fresh({"vocab": 4000})
    first = m.result()
    for shown in (30, 3, 12):
        m.set_param("shown", shown)
        r = m.result()
        assert r.probs is first.probs  # not filtered again
        want = fresh({"vocab": 4000, "shown": shown}).result()
        for name in RESULT_ARRAYS:
            np.testing.assert_array_equal(getattr(r, name), getattr(want, name))
        assert [getattr(r, n) for n in RESULT_VALUES] == [getattr(want, n) for n in RESULT_VALUES]
        assert r.labels == want.labels and len(r.shown) == shown
    m.set_param("temperature", 0.5)  # a knob: filtered again
    assert m.result().probs is not first.probs


def test_a_new_count_of_tokens_shown_keeps_the_speculative_steps_and_equals_a_fresh_run():
    values = {"vocab": 3000, "spec_steps": 1500}
    m = fresh(values)
    first = m.speculative_result()
    for shown in (25, 4):
        m.set_param("shown", shown)
        s = m.speculative_result()
        assert s.counts is first.counts  # the steps are not run again
        want = fresh({**values, "shown": shown}).speculative_result()
        np.testing.assert_array_equal(s.shown, want.shown)
        assert s.labels == want.labels and len(s.shown) == shown
        np.testing.assert_array_equal(s.counts, want.counts)
        assert (s.rate, s.chi2, s.rejected) == (want.rate, want.chi2, want.rejected)
    m.set_param("draft_temperature", 0.9)
    assert m.speculative_result().counts is not first.counts


def test_a_gate_temperature_move_reuses_the_gate_scores_and_equals_a_fresh_router():
    from gui.model.sampling import router

    m = fresh({"experts": 12, "router_tokens": 300})
    first = m.router()
    for name, value in (("gate_temperature", 0.3), ("router_k", 3), ("experts", 6), ("seed", 4)):
        m.set_param(name, value)
        got = m.router()
        want = router(m.experts, m.router_k, m.router_tokens, m.seed, m.gate_temperature)
        for field in ("gate_logits", "gates", "indices", "weights", "load", "importance"):
            same_bits(np.asarray(getattr(got, field), dtype=np.float64), np.asarray(getattr(want, field), np.float64))
    assert not np.array_equal(m.router().gates[:, :6], first.gates[:, :6])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([0.0, 1.5, -2.0, 3e300, np.nan, np.inf, -np.inf]), min_size=1, max_size=6))
def test_the_bar_top_is_nan_to_num_max(values):
    from gui.views.sampling.bars import _top

    h = np.array(values)
    assert _top(h) == float(np.nan_to_num(h).max())


@pytest.mark.parametrize("settings_", KNOBS)
def test_the_rate_curve_is_one_filter_probs_per_draft_temperature(settings_):
    from gui.model.sampling.speculative import DRAFT_T

    m = fresh({"vocab": 3000, **settings_})
    vocab, knobs = m.vocabulary(None), m.knobs()
    p = compute.filter_probs(vocab.logits, **knobs)
    draft = draft_logits(vocab.logits, 0.5, 0)
    cuts = {k: v for k, v in knobs.items() if k != "temperature"}
    # the plain way: with top-k on, q is 0 outside the draft's top k (and ties), so the sums run over those
    k = cuts["top_k"]
    if k is not None and k < draft.size:
        inside = np.flatnonzero(draft >= np.sort(draft)[draft.size - k])
        p, draft = p[inside], draft[inside]
    want = np.array([np.minimum(p, compute.filter_probs(draft, temperature=float(t), **cuts)).sum() for t in DRAFT_T])
    p = compute.filter_probs(vocab.logits, **knobs)
    draft = draft_logits(vocab.logits, 0.5, 0)
    same_bits(rate_curve(p, draft, cuts), want)
    same_bits(m.speculative_result().curve_rate, want)
