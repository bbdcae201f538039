"""The Variants view: its model against compute on the same inputs, its tabs, and its headless export.

The references are compute's public functions called here on inputs built
here (the row, the seeded noise, the random queries and keys), not the
model's own helpers.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import compute
from gui.export import read_npz
from gui.model.scores import ScoreRow
from gui.model.variants import METHODS, TAB_PARAMS, VariantsModel
from gui.model.variants.attention import QK_SCALES, qk_curves
from tests.conftest import run_main

SCORES = [3.0, 1.0, -2.0, 0.5, 2.5]
KNOBS = {"scale": 4.0, "cap": 5.0, "sink_logit": 2.0, "sink_tokens": 1, "window": 2, "ssmax_s": 0.7,
         "logn_length": 8}


def expected_row(x: np.ndarray, k: dict) -> dict[str, np.ndarray]:
    """Each method's weights for the row x (already scaled), straight from compute."""
    return {
        "softmax": compute.softmax(x),
        "softmax_one": compute.softmax_one(x),
        "sink": compute.softmax_with_sink(x, k["sink_logit"]),
        "sink_tokens": compute.sink_tokens_softmax(x, k["sink_tokens"], k["window"]),
        "softcap": compute.softmax(compute.softcap(x, k["cap"])),
        "ssmax": compute.ssmax(x, k["ssmax_s"]),
        "logn": compute.logn_softmax(x, k["logn_length"]),
    }


def test_the_headless_export_holds_computes_functions_of_the_same_inputs(tmp_path):
    options = [f"--{name}={value}" for name, value in KNOBS.items()]
    result = run_main("export", "--view", "variants", "--scores", ",".join(map(str, SCORES)), *options,
                      "--alibi_heads", "12", "--alibi_head", "10", "--out", str(tmp_path), "--arrays-only")
    assert result.returncode == 0, result.stderr
    data = read_npz(tmp_path / "variants.npz")
    x = KNOBS["scale"] * np.array(SCORES)
    row = data["row"]
    assert data["row__columns"].tolist() == ["logit", *METHODS]
    np.testing.assert_array_equal(row[:, 0], x)
    for i, (method, weights) in enumerate(expected_row(x, KNOBS).items()):
        np.testing.assert_array_equal(row[:, i + 1], weights, err_msg=method)
    sums = data["row_sums"][0]
    assert sums[METHODS.index("softmax_one")] < 1 and sums[METHODS.index("sink")] < 1
    sink = compute.softmax_with_sink(x, KNOBS["sink_logit"], return_sink=True)[1][0]
    assert sums[-1] == pytest.approx(sink, rel=1e-12)
    softcap = data["softcap_row"]
    np.testing.assert_array_equal(softcap[:, 1], compute.softcap(x, KNOBS["cap"]))
    curve = data["softcap_curve"]
    np.testing.assert_array_equal(curve[:, 1], compute.softcap(curve[:, 0], KNOBS["cap"]))
    np.testing.assert_array_equal(curve[:, 4], compute.softcap_grad(curve[:, 0], KNOBS["cap"]))
    np.testing.assert_array_equal(data["alibi_slopes"], compute.alibi_slopes(12))
    np.testing.assert_array_equal(data["alibi_bias"], compute.alibi_bias(16, 12))  # the .npz holds every head
    with open(tmp_path / "variants_alibi_bias.csv") as fh:  # the CSV the head shown
        first = fh.readlines()[2].split(",")
    assert float(first[1]) == pytest.approx(-compute.alibi_slopes(12)[9])
    assert (tmp_path / "variants_row.csv").exists() and (tmp_path / "variants_summary.csv").exists()


def test_the_synthetic_row_is_the_needle_among_the_seeds_noise():
    m = VariantsModel(row="random", row_n=300, needle=5.0, seed=7, **KNOBS)
    r = m.row_result(ScoreRow())
    noise = np.random.default_rng(7).normal(size=65_535)
    x = KNOBS["scale"] * np.concatenate([[5.0], noise[:299]])
    np.testing.assert_array_equal(r.logits, x)
    for method, weights in expected_row(x, KNOBS).items():
        np.testing.assert_array_equal(r.weights[method], weights, err_msg=method)
    assert r.shown.size == 16 and 0 in r.shown  # the 16 largest, the needle among them
    assert np.all(np.diff(r.shown) > 0)
    assert set(x[r.shown]) == set(np.sort(x)[-16:])


def test_the_length_curves_are_softmax_ssmax_and_logn_of_rows_of_n():
    m = VariantsModel(needle=6.0, seed=3, ssmax_s=0.5, logn_length=64)
    length = m.length_result()
    noise = np.random.default_rng(3).normal(size=65_535)
    for i in (0, len(length.n) // 2, len(length.n) - 1):
        n = int(length.n[i])
        x = np.concatenate([[6.0], noise[: n - 1]])
        assert length.top["softmax"][i] == compute.softmax(x).max()
        assert length.top["ssmax"][i] == compute.ssmax(x, 0.5).max()
        assert length.entropy["logn"][i] == compute.entropy(compute.logn_softmax(x, 64))
    # the fading the tab is about: softmax's top weight falls below 1 %, SSMax's stays above 90 %
    assert length.top["softmax"][-1] < 0.01 < 0.9 < length.top["ssmax"][-1]
    assert length.n[0] == 2 and length.n[-1] == 65_536


def test_the_qk_curves_are_the_normalised_logits_at_every_scale():
    curves = qk_curves(32, 1.5, 0)
    rng = np.random.default_rng([0, 4])
    q, k = rng.normal(size=(64, 32)), rng.normal(size=(64, 32))
    for i in (0, 12, 24):
        c = QK_SCALES[i]
        plain = compute.attention_scores(c * q, c * k)
        normed = compute.attention_scores(compute.qk_norm(c * q, gain=1.5), compute.qk_norm(c * k, gain=1.5))
        assert curves[0][i] == pytest.approx(np.abs(plain).max(), rel=1e-12)
        assert curves[1][i] == pytest.approx(np.abs(normed).max(), rel=1e-12)
        assert curves[3][i] == pytest.approx(compute.entropy(compute.softmax(normed)).mean(), rel=1e-10)
    assert curves[1].max() <= math.sqrt(32) * 1.5**2  # the bound the tab draws
    assert curves[0][-1] > 100 * curves[1][-1]


def test_the_model_clamps_the_head_and_greys_the_knobs_of_switched_off_variants():
    m = VariantsModel()
    m.set_param("alibi_head", 12)
    m.set_param("alibi_heads", 4)
    assert m.bounds("alibi_head") == (1, 4) and m.value_in_use("alibi_head") == 4
    assert m.alibi_result().head == 4
    assert not m.applies("window") and not m.applies("row_n")
    m.show_variant("sink_tokens", True)
    m.set_param("row", "random")
    assert m.applies("window") and m.applies("row_n")
    with pytest.raises(ValueError, match="between 1 and 100"):
        m.set_param("cap", 0.5)
    s = m.sigmoid_result()
    np.testing.assert_allclose(s.sigmoid_sums, s.sigmoid.sum(axis=-1))
    assert np.all(s.curve_sum < 3) and s.curve_sum_b0[-1] > 1000  # b = -log n keeps the sums near 1


def test_the_shown_variants_travel_in_the_session_and_bad_ones_are_refused(lab):
    m = lab.models["variants"]
    m.set_shown(["logn", "sink"])
    assert m.shown == ("sink", "logn") and m.selected() == ("softmax", "sink", "logn")
    again = type(lab)()
    again.restore(lab.session())
    assert again.models["variants"].shown == ("sink", "logn")
    with pytest.raises(ValueError, match="unknown variant"):
        m.check_extra_state({"shown": ["softmax_two"]})
    with pytest.raises(ValueError, match="list of names"):
        m.check_extra_state({"shown": "sink"})
    m.reset()
    assert m.shown == ("softmax_one", "sink", "softcap", "ssmax")


def test_the_tabs_show_their_controls_their_plots_and_the_models_numbers(qtbot, make_view, lab):
    lab.scores.set_values(SCORES)
    view = make_view("variants")
    m = view.model
    assert view.tab_names() == tuple(TAB_PARAMS)
    r = m.row_result(lab.scores)
    bars = view.row_bars
    shown = [i for i, on in enumerate(bars.shown) if on]
    assert [METHODS[i] for i in shown] == list(m.selected())
    for i in shown:
        np.testing.assert_array_equal(bars.heights[i], r.weights[METHODS[i]])
    legend = bars.getPlotItem().legend
    assert f"Σ {r.total('softmax_one'):.3f}" in legend.items[METHODS.index("softmax_one")][1].text
    assert view.editor.isVisible() and set(view.plots()) == {"row"}

    bars.seriesClicked.emit(METHODS.index("sink_tokens"))  # the legend switches a variant through the model
    assert "sink_tokens" in m.shown and view.show_boxes["sink_tokens"].isChecked()
    assert view.controls["window"].isEnabled()
    view.flush()
    assert bars.shown[METHODS.index("sink_tokens")]
    view.show_boxes["softmax_one"].click()  # and so does its check box
    view.flush()
    assert "softmax_one" not in m.shown and not bars.shown[METHODS.index("softmax_one")]

    view.select_tab("alibi")
    qtbot.waitUntil(lambda: view.groups["alibi"].isVisible())
    assert not view.editor.isVisible() and not view.source.isVisible()
    assert set(view.plots()) == {"alibi_bias", "alibi_slopes", "alibi_plain", "alibi_biased"}
    m.set_param("alibi_head", 3)
    view.flush()
    np.testing.assert_array_equal(view.alibi.bias.matrix, compute.alibi_bias(16, 8)[2])

    view.select_tab("length")
    m.set_param("row", "random")
    m.set_param("row_n", 1000)
    view.flush()
    assert view.length_top.now_line.isVisible()
    assert view.length_top.now_line.value() == pytest.approx(3.0)  # log10(1000)
    x, y = view.length_top.data(0)
    np.testing.assert_array_equal(y, m.length_result().top["softmax"])
    assert not view.editor.isVisible()
