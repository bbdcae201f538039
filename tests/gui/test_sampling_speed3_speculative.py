"""The speculative tab's tokens shown, looked for among the non-zero tokens: the whole-row answer."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import compute
from gui.model.sampling import SamplingModel
from gui.model.sampling.speculative import shown_ids


def plain_shown_ids(p, q, shown):
    """shown_ids as it was: the whole row's max(p, q), argpartition, then sorted (ties: the lower id)."""
    k = min(shown, p.size)
    both = np.maximum(p, q)
    top = np.argpartition(-both, k - 1)[:k] if k < p.size else np.arange(p.size)
    return top[np.lexsort((top, -both[top]))]


@st.composite
def pairs(draw):
    v = draw(st.sampled_from([4096, 6000, 30_000]))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    rows = []
    for _ in range(2):
        row = np.zeros(v)
        k = draw(st.integers(1, 60))
        at = rng.choice(v, size=k, replace=False)
        row[at] = rng.exponential(size=k)
        if draw(st.booleans()):
            row[at] = np.round(row[at] * 2) + 1  # ties, also at the boundary of the tokens shown
        rows.append(row / row.sum())
    if draw(st.booleans()):
        rows[1] = rows[0].copy()  # the same support
    return rows[0], rows[1], draw(st.integers(1, 45))


@settings(max_examples=120, deadline=None)
@given(pairs())
def test_shown_ids_among_the_non_zero_tokens_is_the_whole_row_answer(case):
    p, q, shown = case
    np.testing.assert_array_equal(shown_ids(p, q, shown), plain_shown_ids(p, q, shown))


def test_shown_ids_of_dense_rows_and_of_a_short_support():
    z = compute.zipf_logits(8000, seed=5)
    p, q = compute.softmax(z), compute.softmax(z, temperature=2.0)  # dense: the whole row
    np.testing.assert_array_equal(shown_ids(p, q, 20), plain_shown_ids(p, q, 20))
    p = compute.filter_probs(z, top_k=3)  # fewer non-zero tokens than shown: zeros by the lowest id
    q = compute.filter_probs(z, temperature=0.5, top_k=3)
    got = shown_ids(p, q, 12)
    np.testing.assert_array_equal(got, plain_shown_ids(p, q, 12))
    assert got.size == 12 and np.count_nonzero(np.maximum(p, q)[got]) == 3


def test_the_speculative_tab_of_a_moved_model_is_a_fresh_models():
    m = SamplingModel()
    m.update_from_dict({"vocab": 9000, "spec_steps": 3000})
    for name, value in [("draft_noise", 1.2), ("spec_steps", 7000), ("draft_temperature", 0.7), ("shown", 25),
                        ("top_k", 200), ("spec_steps", 100), ("draft_noise", 0.0), ("temperature", 1.6)]:
        before = m.speculative_result()
        m.set_param(name, value)
        s = m.speculative_result()
        # q and the rule are kept only while what they depend on stays (a Steps N or Tokens shown move)
        assert (s.q is before.q) == (name in ("spec_steps", "shown")), name
        fresh = SamplingModel()
        fresh.update_from_dict({k: getattr(m, k) for k in ("vocab", "spec_steps", "draft_noise", "draft_temperature",
                                                            "shown", "top_k", "temperature")})
        assert fresh.spec_steps == m.spec_steps
        f = fresh.speculative_result()
        for field in ("p", "q", "accept", "residual", "shown", "counts", "accepted", "curve_rate"):
            np.testing.assert_array_equal(getattr(s, field), getattr(f, field), err_msg=f"{name} {field}")
        assert (s.rate, s.chi2, s.rejected, s.labels) == (f.rate, f.chi2, f.rejected, f.labels)
        np.testing.assert_array_equal(s.shown, plain_shown_ids(s.p, s.q, m.shown))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([50, 4096, 20_000]), st.integers(0, 2**31 - 1), st.booleans(), st.data())
def test_kth_largest_in_a_reused_buffer_is_numpys_partition(v, seed, ties, data):
    from gui.model.sampling.rowmath import kth_largest

    rng = np.random.default_rng(seed)
    x = rng.normal(size=v)
    if ties:
        x = np.round(x)
    x[rng.random(v) < 0.2] = -np.inf
    k = data.draw(st.integers(1, v))
    got, want = kth_largest(x, k), np.partition(x, v - k)[v - k]
    assert got == want and np.signbit(got) == np.signbit(want)
    assert kth_largest(x[: v // 2 + 1], 1) == x[: v // 2 + 1].max()  # a shorter row after it: its own


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([10, 5000]), st.integers(0, 2**31 - 1), st.floats(0.01, 3.0))
def test_the_draft_logits_are_logits_plus_noise_times_eps(v, seed, noise):
    from gui.model.sampling.speculative import draft_eps, draft_logits

    z = compute.zipf_logits(v, seed=seed % 1000)
    z[:2] = -np.inf
    eps = draft_eps(v, seed)
    want = z + noise * eps
    for got in (draft_logits(z, noise, seed, eps), draft_logits(z, noise, seed)):
        np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))
    assert draft_logits(z, 0.0, seed) is z
