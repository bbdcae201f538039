"""The Normalizers view and its measured property table."""

import math

import numpy as np
from scipy.special import expit
from scipy.special import softmax as sp_softmax

import compute
from gui.model.normalizers import METHODS, PROPERTIES, NormalizersModel
from gui.model.scores import ScoreRow


def result_for(values, alpha=1.5):
    row = ScoreRow()
    row.set_values(values)
    return NormalizersModel(alpha=alpha).result(row)


def table(r):
    return {m: dict(zip(PROPERTIES, r.properties[i])) for i, m in enumerate(METHODS)}


def test_weights_match_independent_references():
    x = [2.0, 1.0, 0.5, -1.0]
    r = result_for(x)
    np.testing.assert_allclose(r.weights_of("softmax"), sp_softmax(x), rtol=1e-15)
    np.testing.assert_allclose(r.weights_of("linear"), np.array(x) / sum(x), rtol=1e-15)
    np.testing.assert_allclose(r.weights_of("sigmoid"), expit(x), rtol=1e-15)
    assert r.weights_of("hardmax").tolist() == [1.0, 0.0, 0.0, 0.0]
    shifted = np.array(x) - min(x)
    np.testing.assert_allclose(r.weights_of("shifted_linear"), shifted / shifted.sum(), rtol=1e-15)


def test_softmax_is_the_only_method_with_every_property():
    for values in ([2.0, 1.0, 0.5, -1.0], [3.0, -1.0, 2.0], [5.2, 3.1, 1.8]):
        t = table(result_for(values))
        assert [m for m in METHODS if all(t[m].values())] == ["softmax"], values


def test_close_scores_leave_sparsemax_and_entmax_without_zeros():
    """The table is measured, not typed in: sparsemax only zeroes scores far below the top."""
    t = table(result_for([0.3, 0.2, 0.1]))
    assert all(t["softmax"].values())
    assert all(t["sparsemax"].values())
    assert all(t["entmax"].values())


def test_negative_score_gives_linear_a_negative_weight():
    r = result_for([3.0, -1.0, 2.0])
    assert r.weights_of("linear").tolist() == [0.75, -0.25, 0.5]
    t = table(r)
    assert not t["linear"]["nonnegative"]
    assert t["linear"]["sums_to_one"]
    assert not t["linear"]["shift_invariant"]  # [4, 0, 3] / 7 differs
    assert t["softmax"]["nonnegative"]


def test_zero_sum_makes_linear_nan():
    r = result_for([1.0, -1.0])
    assert np.isnan(r.weights_of("linear")).all()
    assert not any(table(r)["linear"].values())


def test_hardmax_has_no_useful_gradient_and_ties_share():
    t = table(result_for([2.0, 1.0, 0.0]))
    assert not t["hardmax"]["differentiable"]
    assert not t["hardmax"]["all_positive"]
    assert t["sigmoid"]["differentiable"]
    assert not t["sigmoid"]["sums_to_one"]
    assert result_for([1.0, 3.0, 3.0]).weights_of("hardmax").tolist() == [0.0, 0.5, 0.5]


def test_sparsemax_zeros_and_kinks_are_measured():
    r = result_for([10.0, 0.0, -10.0])
    assert r.weights_of("sparsemax").tolist() == [1.0, 0.0, 0.0]
    t = table(r)
    assert not t["sparsemax"]["all_positive"]
    assert t["sparsemax"]["sums_to_one"]
    assert t["sparsemax"]["shift_invariant"]


def test_entmax_alpha_moves_between_softmax_and_sparsemax():
    x = [1.0, 0.8, 0.1]
    near_softmax = result_for(x, alpha=1.0).weights_of("entmax")
    np.testing.assert_allclose(near_softmax, compute.softmax(np.array(x)), rtol=1e-12)
    at_two = result_for(x, alpha=2.0).weights_of("entmax")
    np.testing.assert_allclose(at_two, compute.sparsemax(np.array(x)), atol=1e-12)


def test_non_finite_scores_fail_every_property_without_warnings():
    r = result_for([1.0, math.inf, 0.0])
    assert not r.properties.any()


def test_arrays_are_compute_to_the_bit():
    row = ScoreRow()
    row.set_values([3.0, -1.0, 2.0])
    a = NormalizersModel(alpha=1.7).arrays(row)
    x = row.values
    w = a["weights"].data
    assert a["weights"].columns == METHODS
    assert a["weights"].rows == row.labels
    assert np.array_equal(w[:, 0], compute.softmax(x))
    assert np.array_equal(w[:, METHODS.index("entmax")], compute.entmax(x, 1.7))
    assert np.array_equal(w[:, METHODS.index("sparsemax")], compute.sparsemax(x))
    assert a["properties"].data.shape == (len(METHODS), len(PROPERTIES))


# -- the widget ---------------------------------------------------------------------


def settle(qtbot, view):
    qtbot.wait(40)
    view.flush()


def test_bars_table_and_notes_follow_the_presets(qtbot, make_view, lab):
    view = make_view("normalizers")
    view.editor.presets.activated.emit(4)  # [3, -1, 2]
    assert lab.scores.values.tolist() == [3.0, -1.0, 2.0]
    settle(qtbot, view)
    linear = view.bars.heights[METHODS.index("linear")]
    assert linear.tolist() == [0.75, -0.25, 0.5]
    lo, _hi = view.bars.getPlotItem().getViewBox().viewRange()[1]
    assert lo < -0.25  # the negative bar is visible
    symbols = view.table.symbols()
    assert symbols[METHODS.index("softmax")] == ["✓"] * len(PROPERTIES)
    assert symbols[METHODS.index("linear")][PROPERTIES.index("nonnegative")] == "✗"
    assert "negative weight (-0.250)" in view.notes.text()

    view.editor.presets.activated.emit(5)  # [1, -1]
    settle(qtbot, view)
    assert "divides by zero" in view.notes.text()
    assert view.table.symbols()[METHODS.index("linear")] == ["✗"] * len(PROPERTIES)


def test_alpha_slider_redraws_entmax(qtbot, make_view, lab):
    view = make_view("normalizers")
    view.alpha.spin.setValue(2.0)
    assert lab.models["normalizers"].alpha == 2.0
    settle(qtbot, view)
    i = METHODS.index("entmax")
    np.testing.assert_allclose(view.bars.heights[i], compute.sparsemax(lab.scores.values), atol=1e-12)
    legend = view.bars.getPlotItem().legend
    assert "2.00" in legend.items[i][1].text
    assert view.table.verticalHeaderItem(i).text() == "entmax (α = 2.00)"
