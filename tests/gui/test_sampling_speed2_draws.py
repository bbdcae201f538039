"""The draws' chi-square over the support found once, and the cached log ranks: the same numbers as before."""

from __future__ import annotations

import numpy as np
import pytest

import compute
from gui.model.sampling import MIN_EXPECTED, SamplingModel, compute_draws
from gui.model.sampling.model import CUM_POINTS, _log_ranks


@pytest.mark.parametrize("values", [
    {"vocab": 5000},
    {"vocab": 5000, "top_k_on": "off", "top_p": 0.5},
    {"vocab": 300, "top_k_on": "off", "top_p_on": "off"},
    {"vocab": 5000, "draw_method": "gumbel_max", "draws": 2000},
    {"vocab": 20_000, "min_p_on": "on", "min_p": 0.2, "temperature": 0.3},
])
def test_draws_chi_square_is_the_boolean_mask_computation(values):
    m = SamplingModel()
    m.update_from_dict(values)
    d = compute_draws(m.draw_inputs())
    filtered = compute.filter_probs(m.vocabulary(None).logits, **m.knobs())
    keep = filtered > 0
    counts = np.bincount(d.draws, minlength=filtered.size)
    stat, dof, p = compute.chi_square_test(counts[keep], (d.inputs.n * filtered)[keep], min_expected=MIN_EXPECTED)
    assert (d.chi2, d.dof, d.p_value) == (float(stat), int(dof), float(p))
    np.testing.assert_array_equal(d.counts, counts)
    np.testing.assert_array_equal(d.expected, d.inputs.n * filtered)
    assert not counts[~keep].any()  # nothing drawn where the filtered probability is 0


def test_log_ranks_are_made_once_per_v_and_cannot_be_changed():
    for v in (10, 11, 50_257, 200_000):
        ranks = _log_ranks(v)
        np.testing.assert_array_equal(ranks, np.unique(np.geomspace(1, v, CUM_POINTS).round().astype(np.int64)))
        assert ranks is _log_ranks(v)
        assert ranks[0] == 1 and ranks[-1] == v and (np.diff(ranks) > 0).all()
        with pytest.raises(ValueError):
            ranks[0] = 2
