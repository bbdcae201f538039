"""The Simplex view's Qt-free geometry and model (the widget's tests are in test_simplex.py)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compute
from gui.model.scores import ScoreRow
from gui.model.simplex import (
    CENTRE,
    CORNERS,
    FIELD_P,
    ISO_K,
    ISO_SEGMENTS,
    KL_LEVELS,
    P_MIN,
    PATH_T,
    SimplexModel,
    from_xy,
    kl_divergence,
    project,
    scores_for,
    to_xy,
)

simplex_points = st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3).filter(lambda v: sum(v) > 1e-3).map(
    lambda v: np.array(v) / sum(v)
)
interior_points = st.lists(st.floats(1e-3, 1.0), min_size=3, max_size=3).map(lambda v: np.array(v) / sum(v))


def row(*values) -> ScoreRow:
    r = ScoreRow()
    r.set_values(values)
    return r


# -- the map between weights and the plane ----------------------------------------------


def test_corners_and_centre():
    np.testing.assert_array_equal(to_xy(np.eye(3)), CORNERS)
    np.testing.assert_allclose(to_xy([1 / 3, 1 / 3, 1 / 3]), CENTRE, atol=1e-15)
    np.testing.assert_allclose(CORNERS[0], [0.5, math.sqrt(3) / 2])  # token 1 on top
    sides = [np.hypot(*(CORNERS[i] - CORNERS[(i + 1) % 3])) for i in range(3)]
    np.testing.assert_allclose(sides, 1.0)  # equilateral


@settings(max_examples=200, deadline=None)
@given(simplex_points)
def test_barycentric_map_round_trips(p):
    xy = to_xy(p)
    np.testing.assert_allclose(from_xy(xy), p, atol=1e-12)
    np.testing.assert_allclose(to_xy(from_xy(xy)), xy, atol=1e-12)
    assert from_xy(xy).sum() == pytest.approx(1.0, abs=1e-12)


def test_map_works_on_arrays_and_outside_points_get_negative_weights():
    p = np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]])
    assert to_xy(p).shape == (2, 2)
    np.testing.assert_allclose(from_xy(to_xy(p)), p, atol=1e-15)
    assert from_xy((-0.1, 0.0))[1] > 1
    assert from_xy((-0.1, 0.0)).min() < 0


# -- dragging: the inverse map ---------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(interior_points, st.lists(st.floats(-20, 20), min_size=3, max_size=3),
       st.floats(0.01, 100.0))
def test_inverse_map_gives_p_back_and_keeps_the_mean(p, old, t):
    s = scores_for(p, old, t)
    np.testing.assert_allclose(compute.softmax(s, temperature=t), p, rtol=1e-9, atol=1e-15)
    assert s.mean() == pytest.approx(np.mean(old), abs=1e-9 * (1 + t))


def test_inverse_map_clamps_into_the_triangle():
    p = project([1.0, 0.0, 0.0])
    assert p.min() >= P_MIN * (1 - 1e-12)
    assert p.sum() == pytest.approx(1.0)
    s = scores_for(from_xy((-0.5, -0.5)), [0.0, 0.0, 0.0], 1.0)  # far outside: still finite scores
    assert np.all(np.isfinite(s))
    assert np.all(compute.softmax(s) >= P_MIN * (1 - 1e-9))
    assert scores_for([0.5, 0.25, 0.25], [np.inf, 0.0, 1.0], 1.0).mean() == pytest.approx(0.0)


# -- what the model computes -------------------------------------------------------------------


def test_temperature_path_runs_from_the_top_corner_to_the_centre():
    r = SimplexModel().result(row(1.0, 2.0, 0.5))
    assert r.path_t[0] == 0.01
    assert r.path_t[-1] == 100.0
    assert np.hypot(*(r.path_xy[0] - CORNERS[1])) < 1e-12  # token 2 has the top score
    assert np.hypot(*(r.path_xy[-1] - CENTRE)) < 0.01
    # one 2-D pass gives the same bits as one softmax call per T
    expected = np.array([compute.softmax(np.array([1.0, 2.0, 0.5]), temperature=t) for t in PATH_T])
    np.testing.assert_array_equal(r.path_p, expected)


def test_point_is_softmax_at_t_and_lies_on_the_path():
    model = SimplexModel(temperature=PATH_T[100])
    r = model.result(row(2.0, 1.0, 0.5, -1.0))
    np.testing.assert_array_equal(r.p, compute.softmax(np.array([2.0, 1.0, 0.5]), temperature=PATH_T[100]))
    np.testing.assert_allclose(r.xy, r.path_xy[100], atol=1e-15)
    assert r.entropy == compute.entropy(r.p)
    assert r.n_scores == 4
    assert r.labels == ("Token 1", "Token 2", "Token 3")


def test_shift_invariance():
    model = SimplexModel(temperature=0.7)
    a, b = model.result(row(2.0, 1.0, 0.5)), model.result(row(7.0, 6.0, 5.5))
    np.testing.assert_allclose(b.p, a.p, rtol=1e-12)
    np.testing.assert_allclose(b.path_p, a.path_p, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(b.sparsemax, a.sparsemax, atol=1e-12)
    np.testing.assert_allclose(b.entmax, a.entmax, atol=1e-12)


def test_sparsemax_and_entmax_land_on_the_boundary_with_exact_zeros():
    model = SimplexModel()
    r = model.result(row(5.0, 0.0, -5.0))
    assert r.sparsemax.tolist() == [1.0, 0.0, 0.0]
    np.testing.assert_allclose(r.sparsemax_xy, CORNERS[0], atol=1e-15)
    assert r.entmax[2] == 0.0
    assert r.p.min() > 0  # softmax never reaches the boundary
    r = model.result(row(1.0, 0.8, -3.0))
    assert r.sparsemax[2] == 0.0
    assert r.sparsemax[0] == pytest.approx(0.6)
    assert abs(from_xy(r.sparsemax_xy)[2]) < 1e-12  # on the edge between tokens 1 and 2
    # applied to s / T, like softmax
    model.set_param("temperature", 4.0)
    r = model.result(row(1.0, 0.8, -3.0))
    np.testing.assert_array_equal(r.sparsemax, compute.sparsemax(np.array([1.0, 0.8, -3.0]) / 4.0))
    np.testing.assert_array_equal(r.entmax, compute.entmax(np.array([1.0, 0.8, -3.0]) / 4.0, 1.5))


def test_iso_lines_hold_the_ratio_and_start_at_token_3():
    assert len(ISO_SEGMENTS) == 2 * len(ISO_K)
    starts, ends = from_xy(ISO_SEGMENTS[0::2]), from_xy(ISO_SEGMENTS[1::2])
    np.testing.assert_allclose(starts, np.tile([0.0, 0.0, 1.0], (len(ISO_K), 1)), atol=1e-12)
    np.testing.assert_allclose(ends[:, 2], 0.0, atol=1e-12)
    np.testing.assert_allclose(ends[:, 0] / ends[:, 1], np.exp(ISO_K), rtol=1e-12)
    # every point of the line has the same ratio: halfway along it too
    mid = from_xy((ISO_SEGMENTS[0::2] + ISO_SEGMENTS[1::2]) / 2)
    np.testing.assert_allclose(mid[:, 0] / mid[:, 1], np.exp(ISO_K), rtol=1e-12)


@pytest.mark.parametrize("j", [1, 2, 3])
@pytest.mark.parametrize("t", [1.0, 0.3])
def test_arrows_are_the_jacobian_column(j, t):
    model = SimplexModel(temperature=t, arrows=j)
    xy, d, segments = model.arrow_field()
    np.testing.assert_allclose(from_xy(xy), FIELD_P, atol=1e-12)
    h = 1e-6
    for p, dxy in zip(FIELD_P, d):
        s = t * np.log(p)  # scores whose softmax at T is this grid point
        bumped = s.copy()
        bumped[j - 1] += h
        fd = (compute.softmax(bumped, temperature=t) - compute.softmax(s, temperature=t)) / h
        np.testing.assert_allclose(dxy, to_xy(fd), atol=1e-5 / t)
    # the drawn shafts point the same way, scaled to fit the grid
    shafts = segments.reshape(-1, 6, 2)[:, :2]
    drawn = shafts[:, 1] - shafts[:, 0]
    np.testing.assert_allclose(drawn[:, 0] * d[:, 1] - drawn[:, 1] * d[:, 0], 0.0, atol=1e-12)
    assert np.all(np.einsum("ij,ij->i", drawn, d) > 0)
    np.testing.assert_allclose((shafts[:, 0] + shafts[:, 1]) / 2, xy, atol=1e-12)


def test_kl_grid_and_contours():
    model = SimplexModel(show_kl=True)
    model.pin_q([0.6, 0.3, 0.1])
    r = model.result(row(2.0, 1.0, 0.5))
    assert r.q.tolist() == pytest.approx([0.6, 0.3, 0.1])
    assert r.kl_pq == pytest.approx(float(np.sum(r.p * np.log(r.p / r.q))))
    assert kl_divergence(r.q, r.q) == pytest.approx(0.0, abs=1e-15)
    assert kl_divergence([1.0, 0.0, 0.0], r.q) == pytest.approx(-math.log(0.6))  # 0 log 0 = 0
    assert set(np.unique(r.kl_levels)) <= set(KL_LEVELS)
    assert len(r.kl_levels) > 50
    ends = r.kl_segments.reshape(-1, 2)
    assert np.all(from_xy(ends) > -1e-12)  # the contours stay inside the triangle
    kl_at_ends = kl_divergence(from_xy(ends).clip(0, 1), r.q)
    np.testing.assert_allclose(kl_at_ends, np.repeat(r.kl_levels, 2), rtol=0.05, atol=2e-3)
    # cached on q: moving the point does not recompute the grid
    assert model.result(row(0.0, 1.0, 0.5)).kl_values is r.kl_values
    model.pin_q([0.2, 0.2, 0.6])
    assert model.result(row(0.0, 1.0, 0.5)).kl_values is not r.kl_values
    assert "kl_grid" in model.arrays(row(1.0, 2.0, 3.0))
    model.show_kl = False
    assert "kl_grid" not in model.arrays(row(1.0, 2.0, 3.0))


def test_fewer_than_three_scores_compute_nothing_to_draw():
    model = SimplexModel(show_kl=True)
    for values in ([1.0], [1.0, 2.0]):
        r = model.result(row(*values))
        assert not r.ok
        assert len(r.path_xy) == 0
        assert len(r.arrow_segments) == 0
        assert np.isnan(r.p).all()
        arrays = model.arrays(row(*values))
        assert arrays["path"].data.shape == (0, 6)
        assert "kl_grid" not in arrays


@pytest.mark.parametrize("values", [[np.inf, 1.0, 0.0], [-np.inf, 1.0, 0.0], [np.nan, 1.0, 0.0]])
def test_special_scores(values):
    r = SimplexModel().result(row(*values))
    np.testing.assert_array_equal(r.p, compute.softmax(np.array(values)))
    assert r.path_p.shape == (len(PATH_T), 3)
    SimplexModel(show_kl=True).arrays(row(*values))


def test_parameters_and_view_state():
    assert list(SimplexModel.params()) == ["temperature", "alpha", "arrows"]
    model = SimplexModel()
    with pytest.raises(ValueError):
        model.set_param("arrows", 4)
    with pytest.raises(ValueError):
        model.set_param("alpha", 0.5)
    model.pin_q([0.0, 0.0, 1.0])
    assert min(model.q) >= P_MIN * (1 - 1e-12)
    assert model.to_dict() == {"temperature": 1.0, "alpha": 1.5, "arrows": 1}  # q is not saved


def test_session_keeps_the_parameters_but_not_q(tmp_path):
    from gui.model.lab import Lab
    from gui.model.session import Session

    lab = Lab()
    model = lab.models["simplex"]
    model.update_from_dict({"temperature": 0.3, "alpha": 2.5, "arrows": 3})
    model.pin_q([0.5, 0.25, 0.25])
    lab.session("simplex").save(tmp_path / "s.json")
    other = Lab()
    other.restore(Session.load(tmp_path / "s.json"))
    assert other.models["simplex"].to_dict() == {"temperature": 0.3, "alpha": 2.5, "arrows": 3}
    assert other.models["simplex"].q == pytest.approx((1 / 3, 1 / 3, 1 / 3))
