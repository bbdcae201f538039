"""The Sampling view's speculative-decoding tab: a draft q against the target p, the rule's N simulated steps."""

from __future__ import annotations

import numpy as np
import pytest

import compute
from gui.model.sampling import SamplingModel
from gui.model.sampling.speculative import DRAFT_T


def plain_rate(p, q) -> float:
    """Σ min(p, q), written out."""
    return float(sum(min(a, b) for a, b in zip(p, q)))


@pytest.fixture
def model():
    m = SamplingModel()
    m.vocab = 2000
    m.shown = 10
    return m


def test_without_noise_the_draft_is_the_target_at_the_draft_temperature(model):
    model.draft_noise = 0.0
    model.draft_temperature = 2.0
    s = model.speculative_result()
    logits = model.vocabulary(None).logits
    cuts = {k: v for k, v in model.knobs().items() if k != "temperature"}
    np.testing.assert_allclose(s.p, compute.filter_probs(logits, **model.knobs()), rtol=0, atol=0)
    np.testing.assert_allclose(s.q, compute.filter_probs(logits, temperature=2.0, **cuts), rtol=0, atol=0)
    assert s.rate == pytest.approx(plain_rate(s.p, s.q), abs=1e-12)
    rest = np.maximum(s.p - s.q, 0)
    np.testing.assert_allclose(s.residual, rest / rest.sum(), atol=1e-15)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_allclose(s.accept, np.where(s.q > 0, np.minimum(1, s.p / s.q), 1.0), atol=1e-15)
    # the draft at the target's own temperature is the target: every proposal is accepted
    model.draft_temperature = model.temperature
    same = model.speculative_result()
    assert same.rate == pytest.approx(1.0, abs=1e-12) and same.rejected == 0
    np.testing.assert_array_equal(same.counts, same.accepted)
    assert s.rate < 1.0 and s.rejected > 0


def test_the_rate_curve_is_the_overlap_at_each_draft_temperature(model):
    s = model.speculative_result()
    assert s.curve_t is DRAFT_T and s.curve_rate.shape == DRAFT_T.shape
    i = int(np.argmin(np.abs(np.log(DRAFT_T / model.draft_temperature))))
    model.draft_temperature = float(DRAFT_T[i])
    at = model.speculative_result()
    assert at.curve_rate[i] == pytest.approx(plain_rate(at.p, at.q), abs=1e-12)
    assert ((s.curve_rate > 0) & (s.curve_rate <= 1 + 1e-12)).all()


def test_the_output_follows_p_whatever_the_draft(model):
    """Over many seeds the chi-square p-values of the output against N·p are uniform, not small."""
    model.draft_noise = 1.5
    model.draft_temperature = 3.0
    model.spec_steps = 20_000
    p_values, observed = [], []
    for seed in range(40):
        model.seed = seed
        s = model.speculative_result()
        assert s.counts.sum() == s.n and (s.counts[s.p == 0] == 0).all()
        p_values.append(s.p_value)
        observed.append(s.observed_rate - s.rate)
    assert 0.2 < s.rate < 0.9  # the draft really differs from the target
    assert sum(p < 0.01 for p in p_values) <= 3  # about 0.4 expected at the 1 % level
    assert np.mean(p_values) == pytest.approx(0.5, abs=0.12)
    sd = np.sqrt(s.rate * (1 - s.rate) / s.n)
    assert np.abs(observed).max() < 5 * sd  # the share accepted is the acceptance rate


def test_the_tab_draws_the_result_and_its_sliders_drive_the_model(make_view, lab):
    lab.models["sampling"].vocab = 3000
    view = make_view("sampling")
    view.select_tab("speculative")
    view.flush()
    m = view.model
    s = m.speculative_result(view.scores)
    ids = s.shown
    tab = view.spec_tab
    np.testing.assert_array_equal(tab.pq.heights[0], s.p[ids])
    np.testing.assert_array_equal(tab.pq.heights[1], s.q[ids])
    np.testing.assert_array_equal(tab.residual.heights[0], s.residual[ids])
    np.testing.assert_array_equal(tab.steps.heights[1], s.counts[ids])
    assert view.readouts["sampling_model.spec.readout.rate"].text().startswith(f"{s.rate:.4f}"[:5])
    # a higher draft temperature, and the draft drifts away from the target
    before = s.rate
    view.controls["draft_temperature"].spin.setValue(4.0)
    view.flush()
    assert m.draft_temperature == pytest.approx(4.0)
    assert m.speculative_result(view.scores).rate < before
    arrays = view.arrays()
    summary = arrays["speculative_summary"].data[0]
    assert summary[0] == m.spec_steps and summary[1] == pytest.approx(m.speculative_result(view.scores).rate)
    assert set(view.plots()) >= {"speculative_pq", "speculative_residual", "speculative_steps", "speculative_rate"}
