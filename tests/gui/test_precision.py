"""The Precision view: the format x formula grid, overflow thresholds, masking, float32 sums."""

import math

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QSpinBox

import compute
from gui import theme as themes
from gui.export import export_view, read_npz
from gui.model.precision import (
    DTYPES,
    EPS32,
    MASK_NAMES,
    METHODS,
    SUM_ROWS,
    PrecisionModel,
    masked_rows,
    sum_errors,
)
from gui.model.scores import ScoreRow
from gui.widgets.sliders import ParamSpin
from tests.conftest import run_main


def colour_name(colour: str) -> str:
    return QColor(colour).name()


def result_for(values=None, **params):
    row = ScoreRow()
    if values is not None:
        row.set_values(values)
    masked = params.pop("masked", ())
    model = PrecisionModel(**params)
    model.masked = masked
    return model.result(row)


# -- the model --------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [1.0, 7.0, 60.0, 500.0])
def test_grid_cells_are_softmax_in_to_the_bit(scale):
    r = result_for(scale=scale)
    logits = ScoreRow().values * scale
    for d in DTYPES:
        for m in METHODS:
            direct = compute.softmax_in(logits, d, m).astype(np.float64)
            assert np.array_equal(r.cell(d, m), direct, equal_nan=True), (d, m)
    assert np.array_equal(r.reference, compute.softmax(logits))
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(r.max_error, np.abs(r.weights - r.reference).max(axis=-1))
    np.testing.assert_array_equal(r.nan_count, np.isnan(r.weights).sum(axis=-1))
    np.testing.assert_array_equal(r.zero_count, (r.weights == 0).sum(axis=-1))


def test_float16_naive_overflows_exactly_past_threshold_over_max():
    t = compute.overflow_threshold("float16")
    top = 2.0  # the default scores' maximum; halving and doubling are exact
    at = t / top
    past = float(compute.nextafter_in(t, math.inf, "float16")) / top
    fine = result_for(scale=at)
    i, j = DTYPES.index("float16"), METHODS.index("naive")
    assert fine.break_scale[i] == at == pytest.approx(5.543, abs=1e-3)
    assert np.all(np.isfinite(fine.weights[i, j]))
    assert fine.nan_count[i, j] == 0
    broken = result_for(scale=past)
    assert broken.nan_count[i, j] == 1  # inf/inf
    assert broken.zero_count[i, j] == 3  # finite/inf
    assert math.isnan(broken.max_error[i, j])
    assert math.isnan(broken.sum_error[i, j])
    for k, m in enumerate(METHODS):  # the shifted formulas and the wider formats survive
        if m != "naive":
            assert broken.nan_count[i, k] == 0
    assert broken.nan_count[DTYPES.index("float32"), j] == 0


def test_counts_and_errors_at_a_large_scale():
    r = result_for(scale=100.0)  # logits 200, 100, 50, -100
    naive = METHODS.index("naive")
    # every logit past the format's threshold gives inf / inf: 200, 100, 50 in float16 (11.09),
    # 200 and 100 in bfloat16 (88.5) and float32 (88.72)
    assert r.nan_count[:, naive].tolist() == [3, 2, 2, 0]
    f64 = DTYPES.index("float64")
    assert r.nan_count[f64].tolist() == [0, 0, 0]
    assert r.inf_count.sum() == 0
    assert r.max_error[f64].max() < 1e-15
    assert r.sum_error[f64].max() < 1e-15
    shifted16 = r.cell("float16", "max_shifted")
    assert shifted16.tolist() == [1.0, 0.0, 0.0, 0.0]  # e^-100 is below float16's smallest subnormal
    assert r.zero_count[DTYPES.index("float16"), METHODS.index("max_shifted")] == 3


def test_scores_beyond_float16_make_even_the_shifted_formula_nan():
    r = result_for([100.0, 1.0], scale=1000.0)  # 1e5 > 65504: cast to inf, inf - inf
    f16 = DTYPES.index("float16")
    assert r.nan_count[f16].min() >= 1
    assert r.nan_count[DTYPES.index("float32"), METHODS.index("max_shifted")] == 0


def test_thresholds_and_the_break_scale():
    r = result_for()
    assert r.overflow.tolist() == [compute.overflow_threshold(d) for d in DTYPES]
    assert r.underflow.tolist() == [compute.underflow_threshold(d) for d in DTYPES]
    assert r.lowest.tolist() == [compute.lowest_finite(d) for d in DTYPES]
    np.testing.assert_array_equal(r.break_scale, r.overflow / 2.0)
    np.testing.assert_array_equal(r.curve_top, 2.0 * r.curve_scale)
    assert r.curve_scale[0] == 1.0
    assert r.curve_scale[-1] == pytest.approx(1000.0)
    negative = result_for([-1.0, -2.0])
    assert np.isnan(negative.break_scale).all()
    assert np.isnan(negative.curve_top).all()


@pytest.mark.parametrize("method", METHODS)
def test_mask_rows_are_softmax_in_of_the_masked_scores(method):
    r = result_for(scale=3.0, method=method, masked=(1, 3, 9))  # 9 is not in the row: ignored
    assert r.masked == (1, 3)
    logits = ScoreRow().values * 3.0
    for i, d in enumerate(DTYPES):
        rows = masked_rows(logits, (1, 3), d)
        for k, name in enumerate(MASK_NAMES):
            direct = compute.softmax_in(rows[k], d, method).astype(np.float64)
            assert np.array_equal(r.mask_weights[i, k], direct, equal_nan=True), (d, name)
    assert masked_rows(logits, (1, 3), "float16")[MASK_NAMES.index("lowest"), 1] == -65504.0


def test_masking_outcomes_per_format():
    partial = result_for(method="max_shifted", masked=(2, 3))
    for i, d in enumerate(DTYPES):
        for k in range(len(MASK_NAMES)):
            w = partial.mask_weights[i, k]
            assert w[2] == 0, (d, MASK_NAMES[k])
            assert w[3] == 0, (d, MASK_NAMES[k])
            assert w[0] > w[1] > 0, (d, MASK_NAMES[k])
    full = result_for(method="max_shifted", masked=(0, 1, 2, 3))
    col = {name: k for k, name in enumerate(MASK_NAMES)}
    for i, d in enumerate(DTYPES):
        assert full.mask_nan[i, col["minus_inf"]] == 4  # -inf - (-inf)
        for name in ("minus_1e4", "minus_65504", "lowest"):
            assert full.mask_weights[i, col[name]].tolist() == [0.25] * 4, (d, name)
        expected_nan = 4 if d == "float16" else 0  # -1e9 does not fit float16: -inf
        assert full.mask_nan[i, col["minus_1e9"]] == expected_nan
    naive = result_for(method="naive", masked=(0, 1, 2, 3))
    assert (naive.mask_nan == 4).all()  # 0 / 0 whatever the mask value


def test_sum_errors_stay_within_an_eps_and_renormalising_does_not_help():
    s = sum_errors(64, 0)
    assert s.plain.shape == s.renormalised.shape == (SUM_ROWS,)
    assert s.counts_plain.sum() == s.counts_renormalised.sum() == SUM_ROWS
    assert s.edges[0] == 0
    assert s.edges[-1] >= max(s.plain.max(), s.renormalised.max()) / EPS32
    for errors in (s.plain, s.renormalised):
        assert errors.max() < 2 * EPS32  # far below a few eps times the length
        assert 0.1 * EPS32 < errors.mean() < 0.5 * EPS32
    # dividing by the float32 sum again rounds every weight again: no better on average
    assert s.renormalised.mean() == pytest.approx(s.plain.mean(), rel=0.1)
    for length in (2, 8, 500):
        other = sum_errors(length, 1)
        assert max(other.plain.max(), other.renormalised.max()) < 2 * EPS32
    x = np.random.default_rng(0).standard_normal((SUM_ROWS, 64), dtype=np.float32)
    p = compute.softmax_in(x, "float32", "max_shifted")
    assert np.array_equal(s.plain, np.abs(p.sum(axis=-1, dtype=np.float64) - 1))


def test_sum_errors_are_cached_on_length_and_seed():
    model = PrecisionModel()
    first = model.sum_errors()
    model.scale = 300.0
    model.dtype = "float32"
    assert model.sum_errors() is first
    model.length = 10
    second = model.sum_errors()
    assert second is not first
    assert second.length == 10
    model.seed = 5
    assert model.sum_errors().seed == 5


def test_arrays_are_the_model_to_the_bit():
    row = ScoreRow()
    model = PrecisionModel(scale=50.0, method="naive", length=16)
    model.masked = (0, 2)
    a = model.arrays(row)
    r = model.result(row)
    n = len(row)
    grid = a["grid"]
    assert grid.rows == tuple(f"{d}/{m}" for d in DTYPES for m in METHODS)
    assert grid.columns[:n] == tuple(f"w[{label}]" for label in row.labels)
    assert np.array_equal(grid.data[:, :n], r.weights.reshape(-1, n), equal_nan=True)
    f32_naive = DTYPES.index("float32") * len(METHODS) + METHODS.index("naive")
    direct = compute.softmax_in(row.values * 50.0, "float32", "naive").astype(np.float64)
    assert np.array_equal(grid.data[f32_naive, :n], direct, equal_nan=True)
    assert grid.data[f32_naive, n + 2] == 1  # one NaN
    assert np.array_equal(a["mask"].data[:, :n], r.mask_weights.reshape(-1, n), equal_nan=True)
    assert a["mask_positions"].data.tolist() == [1.0, 0.0, 1.0, 0.0]
    assert a["thresholds"].data[:, 0].tolist() == [compute.overflow_threshold(d) for d in DTYPES]
    assert a["scale_curve"].data.shape == (121, 2)
    s = model.sum_errors()
    assert a["sum_error_hist"].data[:, 2].sum() == SUM_ROWS
    assert a["summary"].data[0].tolist()[:4] == [50.0, 2.0, 16.0, 0.0]
    assert a["summary"].data[0, 4] == s.plain.mean()


def test_session_keeps_the_parameters_and_the_mask(tmp_path):
    from gui.model.lab import Lab
    from gui.model.session import Session

    lab = Lab()
    m = lab.models["precision"]
    m.update_from_dict({"scale": 40.0, "dtype": "bfloat16", "method": "log_sum_exp",
                        "mask_value": "lowest", "length": 128, "seed": 3})
    m.masked = (1,)
    lab.session().save(tmp_path / "s.json")
    other = Lab()
    other.restore(Session.load(tmp_path / "s.json"))
    o = other.models["precision"]
    assert o.to_dict() == m.to_dict()
    assert o.masked == (1,)  # the ticked tokens are the user's work too
    with pytest.raises(ValueError, match="between 1 and 1000"):
        o.set_param("scale", 0.5)
    with pytest.raises(ValueError, match="one of"):
        o.set_param("dtype", "float8")


# -- the widget -------------------------------------------------------------------------


def settle(qtbot, view):
    qtbot.wait(40)
    view.flush()


def cell(view, dtype, method):
    return view.grid.texts()[DTYPES.index(dtype)][METHODS.index(method)]


def test_scale_slider_breaks_naive_float16_in_the_table_and_the_plot(qtbot, make_view, lab):
    view = make_view("precision")
    model = lab.models["precision"]
    assert cell(view, "float16", "naive").startswith("0.609 0.224 0.136 0.0303")
    assert "c > 5.543 (fine now)" in view.readouts["readout.precision.breaks"].text()
    slider = view.scale.slider
    slider.setValue(300)  # 0.9 of the three decades: scale 10**0.9 = 7.94, logits up to 15.9
    assert model.scale == pytest.approx(10**0.9)
    settle(qtbot, view)
    text = cell(view, "float16", "naive")  # only the top logit passes 11.09: inf / inf
    assert text.startswith("NaN 0 0 0")
    assert "NaN 1 · inf 0 · zero 3" in text
    assert cell(view, "float32", "naive").startswith("1 0.000355 6.69e-06 4.47e-11")
    view.scale.spin.setValue(10.0)
    settle(qtbot, view)
    f16 = DTYPES.index("float16")
    assert view.grid.colours()[f16][METHODS.index("naive")] == colour_name(themes.current().invalid)
    assert "broken now" in view.readouts["readout.precision.breaks"].text()
    assert view.overflow.marker.xData.tolist() == pytest.approx([10.0])
    assert view.overflow.marker.yData.tolist() == pytest.approx([20.0])
    xs, ys = view.overflow.curve.xData, view.overflow.curve.yData  # the data, not its logs
    assert xs[0] == 1.0
    assert ys[-1] == pytest.approx(2000.0)
    assert view.overflow.crossing.xData.tolist() == pytest.approx([compute.overflow_threshold("float16") / 2])
    tooltip = view.grid.item(f16, METHODS.index("naive")).toolTip()
    assert "Token 1: NaN\nToken 2: 0.0" in tooltip
    assert "softmax: NaN" in tooltip


def test_clicking_a_grid_cell_selects_format_and_formula(qtbot, make_view, lab):
    view = make_view("precision")
    model = lab.models["precision"]
    r, c = DTYPES.index("bfloat16"), METHODS.index("log_sum_exp")
    qtbot.mouseClick(view.grid.viewport(), Qt.MouseButton.LeftButton, pos=view.grid.click_cell(r, c))
    assert (model.dtype, model.method) == ("bfloat16", "log_sum_exp")
    settle(qtbot, view)
    assert view.grid.selected == (r, c)
    assert view.dtype.combo.currentIndex() == r
    assert view.method.combo.currentIndex() == c
    assert view.readouts["readout.precision.overflow"].text() == "88.5"
    assert view.masking.table.selected == (r, MASK_NAMES.index(model.mask_value))


def test_mask_checkboxes_and_the_mask_table(qtbot, make_view, lab):
    view = make_view("precision")
    model = lab.models["precision"]
    assert [b.text() for b in view.masking.boxes] == list(lab.scores.labels)
    qtbot.mouseClick(view.masking.boxes[3], Qt.MouseButton.LeftButton)
    assert model.masked == (3,)
    settle(qtbot, view)
    f16 = DTYPES.index("float16")
    assert view.masking.table.texts()[f16] == ["zero 1"] * len(MASK_NAMES)
    detail = view.masking.detail.text()
    assert detail.startswith("float16, −1e9, masked Token 4: ")
    assert detail.endswith(" 0")
    weights = lab.models["precision"].result(lab.scores).mask_weights[f16, MASK_NAMES.index("minus_1e9")]
    assert weights[3] == 0
    assert detail.split(": ")[1].split()[0] == f"{weights[0]:.3g}"
    qtbot.mouseClick(view.masking.all_button, Qt.MouseButton.LeftButton)
    assert model.masked == (0, 1, 2, 3)
    assert all(b.isChecked() for b in view.masking.boxes)
    settle(qtbot, view)
    rows = view.masking.table.texts()
    assert rows[f16][MASK_NAMES.index("minus_1e9")] == "NaN 4"
    assert rows[DTYPES.index("float32")][MASK_NAMES.index("minus_1e9")] == "uniform"
    assert all(rows[i][MASK_NAMES.index("minus_inf")] == "NaN 4" for i in range(len(DTYPES)))
    assert view.masking.detail.text().endswith("Token 4: NaN NaN NaN NaN")
    assert view.masking.table.colours()[f16][MASK_NAMES.index("minus_1e9")] == colour_name(themes.current().invalid)
    k = MASK_NAMES.index("minus_1e4")
    qtbot.mouseClick(view.masking.table.viewport(), Qt.MouseButton.LeftButton,
                     pos=view.masking.table.click_cell(DTYPES.index("float32"), k))
    assert (model.dtype, model.mask_value) == ("float32", "minus_1e4")
    qtbot.mouseClick(view.masking.clear_button, Qt.MouseButton.LeftButton)
    assert model.masked == ()
    assert not any(b.isChecked() for b in view.masking.boxes)
    lab.scores.set_values([1.0, 2.0])  # fewer tokens: fewer boxes
    settle(qtbot, view)
    assert [b.text() for b in view.masking.boxes] == ["Token 1", "Token 2"]


def test_length_and_seed_redraw_the_histogram(qtbot, make_view, lab):
    view = make_view("precision")
    model = lab.models["precision"]
    first = view.sum_plot.errors
    xs, ys = view.sum_plot.plain.getData()
    assert len(xs) == len(ys) + 1
    assert ys.sum() == SUM_ROWS
    view.length.setValue(16)
    assert model.length == 16
    settle(qtbot, view)
    assert view.sum_plot.errors is not first
    assert view.sum_plot.errors.length == 16
    s = model.sum_errors()
    assert view.readouts["readout.precision.sum_plain"].text() == (
        f"mean {s.plain.mean() / EPS32:.3f} ε, max {s.plain.max() / EPS32:.3f} ε")
    view.seed.setValue(9)
    assert model.seed == 9
    view.scale.spin.setValue(300.0)  # the scale leaves the experiment alone
    settle(qtbot, view)
    assert view.sum_plot.errors is model.sum_errors()


def test_theme_and_special_scores_draw_without_warnings(qtbot, make_view, lab):
    view = make_view("precision")
    themes.manager().set_mode("dark")
    lab.models["precision"].scale = 10.0
    settle(qtbot, view)
    f16 = DTYPES.index("float16")
    assert view.grid.colours()[f16][METHODS.index("naive")] == colour_name(themes.DARK.invalid)
    for values in ([1.0, math.nan], [-math.inf, -math.inf], [math.inf, 0.0], [-3.0, -4.0]):
        lab.scores.set_values(values)
        settle(qtbot, view)
    assert view.readouts["readout.precision.breaks"].text() == "never (max s ≤ 0)"
    xs = view.overflow.curve.xData
    assert xs is None or xs.size == 0  # nothing to draw on a log axis


def test_export_writes_plots_and_the_models_arrays(make_view, lab, tmp_path):
    lab.models["precision"].update_from_dict({"scale": 30.0, "length": 32})
    lab.models["precision"].masked = (1,)
    view = make_view("precision")
    written = export_view(view, "precision", tmp_path)
    names = {p.name for p in written}
    expected = {f"precision_{k}.{ext}" for k in ("overflow", "sum_error") for ext in ("png", "svg")}
    expected |= {"precision.npz"} | {f"precision_{k}.csv" for k in view.arrays()}
    assert names == expected
    data = read_npz(tmp_path / "precision.npz")
    for key, a in lab.models["precision"].arrays(lab.scores).items():
        assert np.array_equal(data[key], a.data, equal_nan=True), key
        assert data[f"{key}__columns"].tolist() == list(a.columns)


def test_headless_export_from_the_command_line(tmp_path):
    out = tmp_path / "out"
    result = run_main("export", "--view", "precision", "--scale", "100", "--dtype", "float16",
                      "--method", "naive", "--out", str(out))
    assert result.returncode == 0, result.stderr
    data = read_npz(out / "precision.npz")
    assert data["summary"][0, 0] == 100.0
    row = list(data["grid__rows"]).index("float16/naive")
    direct = compute.softmax_in(ScoreRow().values * 100, "float16", "naive").astype(np.float64)
    assert np.array_equal(data["grid"][row, :4], direct, equal_nan=True)
    assert (out / "precision_overflow.png").stat().st_size > 0
    assert (out / "precision_sum_error.svg").exists()


def test_length_and_seed_use_the_shared_spin_box(make_view):
    view = make_view("precision")
    for spin in (view.length, view.seed):
        assert isinstance(spin, ParamSpin)
        assert spin.stepType() == QSpinBox.StepType.AdaptiveDecimalStepType
