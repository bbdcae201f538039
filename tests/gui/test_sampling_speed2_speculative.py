"""The speculative tab's kept draft noise: a model moved through noise levels gives what a fresh model gives."""

from __future__ import annotations

import numpy as np

from gui.model.sampling import SamplingModel
from gui.model.sampling.speculative import draft_eps, draft_logits


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


def test_draft_logits_with_the_noise_given_or_drawn():
    z = np.random.default_rng(0).normal(size=500)
    z[3] = -np.inf
    eps = draft_eps(z.size, 4)
    for noise in (0.0, 0.25, 3.0):
        same_bits(draft_logits(z, noise, 4, eps), draft_logits(z, noise, 4))
    # the noise is the seeded normal row: logits + noise * eps (and -inf stays -inf)
    want = z + 0.25 * np.random.default_rng([4, 0x5BEC]).standard_normal(z.size)
    same_bits(draft_logits(z, 0.25, 4), want)
    assert draft_logits(z, 0.25, 4)[3] == -np.inf


def test_noise_levels_seeds_and_sizes_moved_through_give_a_fresh_models_result():
    moved = SamplingModel()
    moved.update_from_dict({"vocab": 3000, "spec_steps": 5000})
    for values in ({"draft_noise": 0.5}, {"draft_noise": 0.0}, {"draft_noise": 1.2}, {"seed": 3},
                   {"vocab": 2000}, {"draft_noise": 0.5, "draft_temperature": 0.7}, {"seed": 0}):
        moved.update_from_dict(values)
        got = moved.speculative_result()
        fresh = SamplingModel()
        fresh.update_from_dict({k: getattr(moved, k) for k in ("vocab", "spec_steps", "seed", "draft_noise",
                                                              "draft_temperature")})
        want = fresh.speculative_result()
        for name in ("p", "q", "accept", "residual", "counts", "accepted", "curve_rate"):
            same_bits(getattr(got, name), getattr(want, name))
        assert got.rejected == want.rejected and got.rate == want.rate
