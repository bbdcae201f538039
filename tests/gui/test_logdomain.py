"""The Log-domain view: LSE between its bounds, softmax as its gradient,
log_softmax against log(softmax), sigmoid as two-class softmax."""

import json
import math
import warnings

import numpy as np
import pytest
import scipy.special as sps
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import compute
from gui.export import export_view, read_npz
from gui.model.logdomain import (
    DIGIT_LOSS,
    SIGMOID_HALF_WIDTH,
    SIGMOID_MAX_HALF_WIDTH,
    LogDomainModel,
    LogTable,
)
from gui.model.scores import ScoreRow
from gui.model.temperature import CURVE_T
from tests.conftest import run_main

DEFAULT = [2.0, 1.0, 0.5, -1.0]
finite_rows = hnp.arrays(np.float64, st.integers(1, 10),
                         elements=st.floats(-500, 500, allow_nan=False, allow_infinity=False))


def row(values):
    r = ScoreRow()
    r.set_values(values)
    return r


def scipy_lse(x, t=1.0):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return t * sps.logsumexp(np.asarray(x, dtype=np.float64) / t)


# -- the model ------------------------------------------------------------------------


def test_readouts_at_t1_against_scipy():
    r = LogDomainModel().result(row(DEFAULT))
    assert r.lse == pytest.approx(scipy_lse(DEFAULT), rel=1e-15)
    assert (r.max, r.min, r.k) == (2.0, -1.0, 4)
    assert r.max_log_k == 2.0 + math.log(4)
    assert r.min_log_k == -1.0 - math.log(4)
    assert r.max <= r.lse <= r.max_log_k
    assert r.softmin == pytest.approx(-scipy_lse(-np.array(DEFAULT)), rel=1e-15)
    assert r.min_log_k <= r.softmin <= r.min
    # one dominant score: LSE is close to the max; equal scores: exactly max + ln K
    assert LogDomainModel().result(row([50.0, 0.0, 0.0])).lse == pytest.approx(50.0, abs=1e-20)
    eq = LogDomainModel().result(row([1.0, 1.0, 1.0, 1.0]))
    assert eq.lse == pytest.approx(eq.max_log_k, rel=1e-15)


def test_curves_against_scipy_at_every_temperature():
    model = LogDomainModel(temperature=0.3)
    r = model.result(row(DEFAULT))
    c = r.curves
    assert np.array_equal(c.t, CURVE_T)
    expected = np.array([scipy_lse(DEFAULT, t) for t in CURVE_T])
    np.testing.assert_allclose(c.smooth_max, expected, rtol=1e-13)
    np.testing.assert_allclose(c.smooth_min, [-scipy_lse(-np.array(DEFAULT), t) for t in CURVE_T], rtol=1e-13)
    np.testing.assert_array_equal(c.max_hi, 2.0 + CURVE_T * math.log(4))
    np.testing.assert_array_equal(c.min_lo, -1.0 - CURVE_T * math.log(4))
    # the 2-D pass gives the bits of one call per T, and the marker sits on the curve
    assert np.array_equal(c.smooth_max, [float(compute.smooth_max(DEFAULT, t)) for t in CURVE_T])
    assert r.smooth_max_t == float(compute.smooth_max(DEFAULT, 0.3))
    assert c.smooth_max[0] == 2.0  # T = 0.01: the max and min themselves
    assert c.smooth_min[0] == -1.0


@settings(max_examples=60, deadline=None)
@given(x=finite_rows)
def test_bounds_hold_for_every_temperature(x):
    c = LogDomainModel().lse_curves(x)
    slack = 1e-12 * (1 + np.abs(c.max_hi))
    assert np.all(c.max_lo <= c.smooth_max)
    assert np.all(c.smooth_max <= c.max_hi + slack)
    slack = 1e-12 * (1 + np.abs(c.min_lo))
    assert np.all(c.min_lo - slack <= c.smooth_min)
    assert np.all(c.smooth_min <= c.min_hi)


def test_curves_are_cached_on_the_scores():
    model = LogDomainModel()
    scores = row(DEFAULT)
    first = model.result(scores).curves
    model.temperature = 0.2
    assert model.result(scores).curves is first  # T does not change the curves
    scores.set_value(0, 3.0)
    again = model.result(scores).curves
    assert again is not first
    assert again.max_lo[0] == 3.0


@settings(max_examples=60, deadline=None)
@given(x=finite_rows, t=st.sampled_from([0.01, 0.1, 0.5, 1.0, 3.0, 30.0, 100.0]))
def test_softmax_is_the_finite_difference_gradient_of_lse(x, t):
    r = LogDomainModel(temperature=t).result(row(x))
    assert np.array_equal(r.grad_softmax, compute.softmax(x, temperature=t))
    np.testing.assert_allclose(r.grad_fd, r.grad_softmax, atol=1e-7)
    assert r.grad_max_difference < 1e-7


def test_gradient_check_against_scipy_differences():
    t = 0.7
    r = LogDomainModel(temperature=t).result(row(DEFAULT))
    h = 1e-6
    fd = []
    for i in range(4):
        e = np.zeros(4)
        e[i] = h
        fd.append((scipy_lse(np.add(DEFAULT, e), t) - scipy_lse(np.subtract(DEFAULT, e), t)) / (2 * h))
    np.testing.assert_allclose(r.grad_fd, fd, atol=1e-7)
    np.testing.assert_allclose(r.grad_softmax, fd, atol=1e-7)


def test_spread_1000_makes_the_naive_log_minus_inf_but_not_log_softmax():
    t = LogDomainModel(spread=1000.0).result(row(DEFAULT)).log_table
    assert t.scores.tolist() == [2000.0, 1000.0, 500.0, -1000.0]
    assert t.stable.tolist() == [0.0, -1000.0, -1500.0, -3000.0]
    assert t.naive64.tolist() == [0.0, -np.inf, -np.inf, -np.inf]
    assert LogTable.underflowed(t.naive64, t.stable).tolist() == [False, True, True, True]
    assert not np.isinf(t.stable).any()


def test_float32_loses_digits_first():
    t = LogDomainModel(spread=10.0).result(row(DEFAULT)).log_table  # the top weight is 0.99995...
    assert t.naive32.dtype == np.float64  # widened for the table, computed in float32
    expected32 = np.log(compute.softmax(np.float32([20, 10, 5, -10])))
    assert np.array_equal(t.naive32, expected32.astype(np.float64))
    lost = LogTable.lost_digits(t.naive32, t.stable)
    assert lost.tolist() == [True, False, False, False]
    assert t.rel32[0] > 1e-4
    assert not LogTable.lost_digits(t.naive64, t.stable).any()
    assert np.all(t.rel64 <= DIGIT_LOSS)
    # spread 30: the smallest float32 weight e^-120 is below float32's range, float64's is not
    t = LogDomainModel(spread=30.0).result(row(DEFAULT + [-2.0])).log_table
    assert LogTable.underflowed(t.naive32, t.stable).tolist() == [False, False, False, False, True]
    assert not LogTable.underflowed(t.naive64, t.stable).any()


@settings(max_examples=80, deadline=None)
@given(x=finite_rows, spread=st.floats(1.0, 1000.0))
def test_minus_inf_appears_exactly_where_the_float64_weight_underflows(x, spread):
    t = LogDomainModel(spread=spread).result(row(x)).log_table
    with np.errstate(all="ignore"):
        weights = compute.softmax(spread * x)
    assert np.array_equal(t.naive64 == -np.inf, weights == 0.0)
    assert np.isfinite(t.stable).all()
    assert np.array_equal(t.stable, compute.log_softmax(spread * x))


def test_sigmoid_is_two_class_softmax():
    s = LogDomainModel().result(row(DEFAULT)).sigmoid
    assert s.d[0] == -SIGMOID_HALF_WIDTH
    assert s.d[-1] == SIGMOID_HALF_WIDTH
    assert np.max(np.abs(s.difference)) < 1e-15
    np.testing.assert_allclose(s.sigmoid, sps.expit(s.d), rtol=1e-15, atol=0)
    with np.errstate(all="ignore"):
        assert np.max(np.abs(s.naive_difference)) <= 2.3e-16  # rounding only
    # the first two scores of a longer row
    assert s.pair == (2.0, 1.0)
    assert s.pair_d == 1.0
    assert s.pair_sigmoid == float(compute.sigmoid(1.0)) == pytest.approx(1 / (1 + math.exp(-1)))
    assert abs(s.pair_difference) < 1e-15


def test_sigmoid_panel_edges():
    model = LogDomainModel()
    one = model.result(row([3.0])).sigmoid
    assert one.pair is None
    assert math.isnan(one.pair_d)
    assert math.isnan(one.pair_difference)
    wide = model.result(row([30.0, -10.0])).sigmoid  # d = 40: the grid widens to show it
    assert wide.d[-1] >= 40.0
    assert wide.pair_sigmoid == pytest.approx(1.0)
    huge = model.result(row([1e308, -1e308])).sigmoid  # d overflows to inf: no widening
    assert huge.d[-1] == SIGMOID_HALF_WIDTH
    assert math.isinf(huge.pair_d)
    far = model.result(row([1e9, 0.0])).sigmoid
    assert far.d[-1] == SIGMOID_MAX_HALF_WIDTH


@pytest.mark.parametrize("values", [[1.0], [1.0, math.nan, 0.0], [math.inf, 1.0], [-math.inf, 1.0, 2.0],
                                    [-math.inf, -math.inf], [1e308, -1e308, 0.0]])
def test_special_values_compute_without_warnings(values):
    a = LogDomainModel(temperature=0.05, spread=1000.0).arrays(row(values))
    assert a["gradient_check"].data.shape == (len(values), 3)
    assert a["lse_curves"].data.shape == (len(CURVE_T), 7)


def test_arrays_columns_and_parameters():
    model = LogDomainModel(temperature=0.5, spread=3.0)
    a = model.arrays(row(DEFAULT))
    assert set(a) == {"lse_curves", "gradient_check", "log_softmax_table", "sigmoid_curve", "summary"}
    assert a["log_softmax_table"].rows == ("Token 1", "Token 2", "Token 3", "Token 4")
    assert np.array_equal(a["log_softmax_table"].data[:, 1], compute.log_softmax(3.0 * np.array(DEFAULT)))
    summary = dict(zip(a["summary"].columns, a["summary"].data[0]))
    assert summary["temperature"] == 0.5
    assert summary["spread"] == 3.0
    assert summary["K"] == 4
    assert summary["smooth_max_at_T"] == float(compute.smooth_max(DEFAULT, 0.5))
    assert LogDomainModel.name == "log-domain"
    with pytest.raises(ValueError, match="between 1 and 1000"):
        model.set_param("spread", 0.5)


def test_session_round_trip_with_the_hyphenated_name(tmp_path):
    from gui.model.lab import Lab
    from gui.model.session import Session

    lab = Lab()
    lab.models["log-domain"].update_from_dict({"temperature": 0.25, "spread": 200.0})
    lab.session("log-domain").save(tmp_path / "s.json")
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["views"]["log-domain"] == {"temperature": 0.25, "spread": 200.0}
    assert doc["current_view"] == "log-domain"
    other = Lab()
    other.restore(Session.load(tmp_path / "s.json"))
    assert other.models["log-domain"].to_dict() == {"temperature": 0.25, "spread": 200.0}


# -- the widget -------------------------------------------------------------------------


def points(item) -> int:
    """How many points a PlotDataItem holds (pyqtgraph keeps None for empty data)."""
    return 0 if item.xData is None else len(item.xData)


def settle(qtbot, view):
    qtbot.wait(40)
    view.flush()


@pytest.fixture
def view(make_view):
    return make_view("log-domain")


def test_temperature_slider_moves_the_markers(qtbot, view, lab):
    model = lab.models["log-domain"]
    slider = view.temperature.slider
    for pos in range(500, 200, -50):  # from T = 1 down to 10**(-2 + 4 * 0.25) = 0.1 and a bit
        slider.setValue(pos)
    t = model.temperature
    assert t == pytest.approx(10 ** (-2 + 4 * 250 / 1000))
    qtbot.waitUntil(lambda: view.lse.markers.xData is not None and view.lse.markers.xData[0] == t)
    x = lab.scores.values
    assert view.lse.markers.yData.tolist() == [float(compute.smooth_max(x, t)), float(compute.smooth_min(x, t))]
    assert view.lse.now_line.value() == pytest.approx(math.log10(t))
    assert np.array_equal(view.gradient.heights[0], compute.softmax(x, temperature=t))
    np.testing.assert_allclose(view.gradient.heights[1], view.gradient.heights[0], atol=1e-9)
    smax, smin = view.readouts["logdomain.readout.at_t"].text().split(", ")
    assert float(smax) == pytest.approx(float(compute.smooth_max(x, t)), abs=1e-3)
    assert float(smin) == pytest.approx(float(compute.smooth_min(x, t)), abs=1e-3)
    assert float(view.readouts["logdomain.readout.grad"].text()) < 1e-7


def test_curves_and_readouts_show_lse_between_its_bounds(qtbot, view, lab):
    view.temperature.spin.setValue(1.0)
    settle(qtbot, view)
    xs, ys = view.lse.max_curve.xData, view.lse.max_curve.yData
    assert np.array_equal(xs, CURVE_T)  # data, not log-mapped
    np.testing.assert_allclose(ys, [scipy_lse(DEFAULT, t) for t in CURVE_T], rtol=1e-13)
    assert np.all(ys <= view.lse.max_hi.yData)
    out = view.readouts
    assert out["logdomain.readout.lse"].text() == f"{scipy_lse(DEFAULT):.3f}" == "2.495"
    assert out["logdomain.readout.max"].text() == "2.000"
    assert out["logdomain.readout.max_log_k"].text() == f"{2 + math.log(4):.3f}"
    assert out["logdomain.readout.min_bounds"].text() == f"{-1 - math.log(4):.3f} … -1.000"
    lo, hi = view.lse.getPlotItem().getViewBox().viewRange()[1]
    assert lo < -1.0 - math.log(4)  # both bounds at T = 1 are in view
    assert hi > 2.0 + math.log(4)
    assert "T = " in view.lse.describe(1.0, 2.0)


def test_spread_slider_fills_the_table_with_minus_inf(qtbot, view, lab):
    table = view.table
    assert table.item(1, 2).text() == f"{math.log(compute.softmax(np.array(DEFAULT))[1]):.9g}"
    assert all(table.flags(r, c) == "" for r in range(4) for c in range(4))
    view.spread.spin.setValue(1000.0)
    assert lab.models["log-domain"].spread == 1000.0
    settle(qtbot, view)
    assert [table.item(r, 0).text() for r in range(4)] == ["2000", "1000", "500", "-1000"]
    assert [table.item(r, 1).text() for r in range(4)] == ["0", "-1000", "-1500", "-3000"]
    assert [table.item(r, 2).text() for r in range(4)] == ["0", "-inf", "-inf", "-inf"]
    assert [table.flags(r, 2) for r in range(4)] == ["", "underflow", "underflow", "underflow"]
    assert "-3000" in table.item(3, 2).toolTip()
    assert table.item(3, 2).background().color().name() != table.item(3, 1).background().color().name()
    view.spread.spin.setValue(10.0)
    settle(qtbot, view)
    assert table.flags(0, 3) == "lost"
    assert table.flags(0, 2) == ""
    assert table.item(0, 3).text() != table.item(0, 1).text()
    # the spread is this panel's only: the curves and the gradient bars did not move
    assert view.lse.markers.yData[0] == float(compute.smooth_max(DEFAULT, 1.0))
    assert np.array_equal(view.gradient.heights[0], compute.softmax(np.array(DEFAULT)))


def test_sigmoid_panel_marks_the_first_two_scores(qtbot, view, lab):
    assert view.sigmoid.marker.xData.tolist() == [1.0]
    assert view.sigmoid.marker.yData.tolist() == [float(compute.sigmoid(1.0))]
    assert view.difference.marker.yData.tolist() == [0.0]
    assert np.all(view.difference.exact.yData == 0.0)
    assert view.readouts["logdomain.readout.sigmoid_diff"].text() == "0"
    assert view.readouts["logdomain.readout.d"].text() == "1.000"
    lab.scores.set_values([4.0])
    settle(qtbot, view)
    assert view.readouts["logdomain.readout.sigmoid"].text() == "needs two scores"
    assert points(view.sigmoid.marker) == 0
    assert not view.sigmoid.now_line.isVisible()
    lab.scores.set_values([30.0, -5.0, 0.0])
    settle(qtbot, view)
    assert view.sigmoid.marker.xData.tolist() == [35.0]
    assert view.sigmoid.getPlotItem().getViewBox().viewRange()[0][1] > 35.0


@pytest.mark.parametrize("values", [[1.0, math.nan, 0.0], [math.nan], [math.inf, 1.0], [-math.inf, 1.0, 2.0],
                                    [-math.inf, -math.inf], [1e308, -1e308, 0.0], [7.0]])
def test_special_scores_draw_without_errors(qtbot, view, lab, values):
    lab.models["log-domain"].set_param("spread", 1000.0)
    lab.scores.set_values(values)
    settle(qtbot, view)
    for plot in view.plots().values():
        plot.grab()  # paint: pyqtgraph would warn on bad data here
    if any(math.isnan(v) for v in values):
        assert points(view.lse.max_curve) == 0
        assert view.readouts["logdomain.readout.grad"].text() == "NaN"


def test_theme_switch_restyles_plots_and_table(qtbot, view, lab):
    from gui import theme as themes

    view.spread.spin.setValue(1000.0)
    settle(qtbot, view)
    light = view.table.item(1, 2).background().color().name()
    themes.manager().set_mode("dark")
    settle(qtbot, view)
    assert view.table.item(1, 2).background().color().name() == themes.DARK.invalid != light
    assert view.lse.max_curve.opts["pen"].color().name() == themes.DARK.accent


def test_export_writes_plots_and_arrays_to_the_bit(view, lab, tmp_path):
    lab.models["log-domain"].set_param("spread", 1000.0)
    view.flush()
    written = {p.name for p in export_view(view, "log-domain", tmp_path)}
    plots = {f"log-domain_{k}.{ext}" for k in ("lse", "gradient", "sigmoid", "sigmoid_diff") for ext in ("png", "svg")}
    arrays = {f"log-domain_{k}.csv" for k in ("lse_curves", "gradient_check", "log_softmax_table",
                                                "sigmoid_curve", "summary")}
    assert written == plots | arrays | {"log-domain.npz"}
    data = read_npz(tmp_path / "log-domain.npz")
    for key, a in lab.models["log-domain"].arrays(lab.scores).items():
        assert np.array_equal(data[key], a.data, equal_nan=True)
        assert data[f"{key}__columns"].tolist() == list(a.columns)
    assert data["log_softmax_table"][1, 2] == -np.inf


def test_headless_export_subprocess(tmp_path):
    out = tmp_path / "out"
    result = run_main("export", "--view", "log-domain", "--scores", "2,1,0.5,-1", "--temperature", "0.5",
                      "--spread", "1000", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert (out / "log-domain_lse.png").exists()
    assert (out / "log-domain_sigmoid_diff.svg").exists()
    data = read_npz(out / "log-domain.npz")
    expected = LogDomainModel(temperature=0.5, spread=1000.0).arrays(row(DEFAULT))
    for key, a in expected.items():
        assert np.array_equal(data[key], a.data, equal_nan=True)
    bad = run_main("export", "--view", "temperature", "--spread", "5", "--out", str(tmp_path / "x"))
    assert bad.returncode == 2
    assert "does not apply to the temperature view" in bad.stderr
