"""Big input stays responsive and bounded (issue 13, section 4).

The score row holds at most MAX_SCORES scores; the views with n x n or
n-probe work state their own limits (Normalizers' PROBE_LIMIT, Gradients'
JACOBIAN_LIMIT, Log domain's GRADIENT_CHECK_LIMIT) and say so above them;
hidden views do not recompute until shown.
"""

import tracemalloc

import numpy as np
import pytest

import compute
from gui import registry
from gui.model import gradients as gradients_model
from gui.model import normalizers as normalizers_model
from gui.model.gradients import JACOBIAN_LIMIT, GradientsModel, max_abs_entry
from gui.model.logdomain import GRADIENT_CHECK_LIMIT
from gui.model.normalizers import PROBE_LIMIT, NormalizersModel, _order_kept
from gui.model.scores import MAX_SCORES, ScoreRow
from gui.model.texts import tr
from gui.widgets.bar_chart import MAX_LABELLED_BARS
from gui.widgets.score_table import ScoreEditor

#: A redraw of the Normalizers or Gradients view at MAX_SCORES scores stays under this (traced by tracemalloc).
PEAK_MIB = 256


def column(n: int, seed: int = 0) -> str:
    return "\n".join(f"{v:.6f}" for v in np.random.default_rng(seed).normal(size=n)) + "\n"


# -- the score row's own limit -----------------------------------------------------------------
def test_score_row_refuses_more_than_its_limit():
    row = ScoreRow()
    row.set_values(np.zeros(MAX_SCORES))
    assert len(row) == MAX_SCORES
    with pytest.raises(ValueError, match=str(MAX_SCORES)):
        row.set_values(np.zeros(MAX_SCORES + 1))
    with pytest.raises(ValueError, match=str(MAX_SCORES)):
        row.insert(0, 1.0)
    assert len(row) == MAX_SCORES


def test_pasting_past_the_limit_is_refused_whole_with_a_message(qtbot):
    row = ScoreRow()
    editor = ScoreEditor(row)
    qtbot.addWidget(editor)
    messages = []
    editor.message.connect(messages.append)
    before = row.entries
    editor.paste(column(MAX_SCORES + 1))
    assert row.entries == before  # nothing changed
    assert messages[-1] == tr("scores.paste.too_many", rows=MAX_SCORES + 1, limit=MAX_SCORES)
    assert f"{MAX_SCORES}" in messages[-1]


def test_pasting_ten_thousand_rows_fills_the_row_and_add_then_refuses(qtbot):
    row = ScoreRow()
    editor = ScoreEditor(row)
    qtbot.addWidget(editor)
    messages = []
    editor.message.connect(messages.append)
    text = column(10_000)
    editor.paste(text)
    assert len(row) == 10_000 == MAX_SCORES
    np.testing.assert_array_equal(row.values, [float(v) for v in text.split()])
    editor.add_row()
    assert len(row) == MAX_SCORES
    assert messages[-1] == tr("scores.add.too_many", limit=MAX_SCORES)


# -- hidden views wait until shown ----------------------------------------------------------------
def test_hidden_views_do_not_redraw_on_score_changes_until_shown(qtbot, window):
    for spec in registry.VIEWS:
        window.view(spec.name)  # every view built
    window.show_view("calculator")
    qtbot.waitUntil(lambda: window.views["calculator"].isVisible())
    qtbot.wait(50)
    hidden = {name: v for name, v in window.views.items() if name != "calculator"}
    assert all(not v.isVisible() for v in hidden.values())
    counts = {name: v.redraw_count for name, v in hidden.items()}
    shown = window.views["calculator"]
    before = shown.redraw_count
    window.lab.scores.set_values(np.random.default_rng(1).normal(size=MAX_SCORES))
    qtbot.waitUntil(lambda: shown.redraw_count > before)
    qtbot.wait(50)
    assert {name: v.redraw_count for name, v in hidden.items()} == counts
    assert all(v.stale for v in hidden.values())
    # shown: it redraws, of the new scores
    view = window.show_view("gradients")
    qtbot.waitUntil(lambda: view.redraw_count > counts["gradients"])
    assert not view.stale
    assert view.heatmap._title == tr(
        "gradients.heatmap.too_large", n=MAX_SCORES, limit=JACOBIAN_LIMIT)
    # flush redraws a hidden view at once (the CLI and exports rely on it)
    other = window.views["temperature"]
    n = other.redraw_count
    other.flush()
    assert other.redraw_count == n + 1 and not other.stale


# -- every view at the limit ----------------------------------------------------------------------
@pytest.mark.parametrize("name", [spec.name for spec in registry.VIEWS])
def test_every_view_redraws_and_exports_at_the_row_limit(qtbot, lab, name):
    spec = registry.get(name)
    view = spec.widget_class()(lab.scores, lab.models[name])  # offscreen and never shown, as the CLI builds it
    qtbot.addWidget(view)
    lab.scores.set_values(np.random.default_rng(2).normal(size=MAX_SCORES))
    view.flush()
    arrays = view.arrays()
    assert arrays
    for plot in view.plots().values():  # no plot holds an item per bar beyond the label limit
        values = getattr(plot, "values", None)
        if values is not None and hasattr(values, "items"):
            assert len(list(values.items())) <= MAX_LABELLED_BARS * 8


def test_normalizers_at_the_limit_note_the_sample_and_stay_bounded(qtbot, lab, make_view):
    view = make_view("normalizers")
    lab.scores.set_values(np.random.default_rng(3).normal(size=MAX_SCORES))
    tracemalloc.start()
    try:
        view.flush()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < PEAK_MIB * 2**20
    assert tr("normalizers.note.sampled", n=MAX_SCORES, limit=PROBE_LIMIT) in view.notes.text()
    r = view.model.result(lab.scores)
    assert r.sampled and r.probed == PROBE_LIMIT
    assert len(view.notes.text()) < 4000  # token lists are cut, not 10,000 names


def test_normalizers_sampled_properties_agree_with_every_score_stepped(monkeypatch):
    row = ScoreRow()
    row.set_values(np.random.default_rng(4).normal(size=3 * PROBE_LIMIT))
    sampled = NormalizersModel().result(row)
    assert sampled.sampled
    monkeypatch.setattr(normalizers_model, "PROBE_LIMIT", 10 * PROBE_LIMIT)
    full = NormalizersModel().result(row)
    assert not full.sampled
    np.testing.assert_array_equal(sampled.properties, full.properties)
    np.testing.assert_array_equal(sampled.weights, full.weights)


def test_order_kept_matches_the_pairwise_definition():
    rng = np.random.default_rng(5)
    for _ in range(3000):
        n = int(rng.integers(1, 7))
        x = rng.integers(-2, 3, n).astype(float)
        w = rng.integers(-2, 3, n).astype(float)
        pairwise = bool(np.all((w[:, None] > w[None, :])[x[:, None] > x[None, :]]))
        assert _order_kept(x, w) == pairwise, (x, w)


def test_gradients_at_the_limit_refuse_the_matrix_and_stay_bounded(qtbot, lab, make_view):
    view = make_view("gradients")
    lab.scores.set_values(np.random.default_rng(6).normal(size=MAX_SCORES))
    tracemalloc.start()
    try:
        view.flush()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < PEAK_MIB * 2**20
    assert view.heatmap.matrix.size == 1  # one empty cell, not 10^8
    assert tr("gradients.heatmap.too_large", n=MAX_SCORES, limit=JACOBIAN_LIMIT) in \
        view.heatmap._title
    assert "too large for this view (limit 2048" in view.heatmap.toolTip()
    assert "jacobian" not in view.arrays()


def test_gradients_without_the_matrix_match_the_matrix(monkeypatch):
    row = ScoreRow()
    x = np.random.default_rng(7).normal(size=300) * 3
    row.set_values(x)
    model = GradientsModel(temperature=0.7, column=17)
    full = model.result(row)
    monkeypatch.setattr(gradients_model, "JACOBIAN_LIMIT", 100)
    cheap = GradientsModel(temperature=0.7, column=17).result(row)
    assert full.jacobian is not None and cheap.too_large
    reference = compute.softmax_jacobian(compute.softmax(x, temperature=0.7)) / 0.7
    np.testing.assert_allclose(cheap.column_values, reference[:, 16], rtol=1e-15, atol=0)
    assert cheap.max_entry == np.abs(reference).max()
    np.testing.assert_allclose(cheap.row_sums, reference.sum(axis=1), rtol=0, atol=1e-16)
    np.testing.assert_array_equal(cheap.curve_max, full.curve_max)


def test_saturation_curve_is_the_matrix_maximum_bit_for_bit():
    rng = np.random.default_rng(8)
    for n in (1, 2, 3, 17):
        probs = compute.softmax(rng.normal(size=(50, n)) * 4, axis=-1)
        expected = np.abs(compute.softmax_jacobian(probs)).max(axis=(1, 2))
        np.testing.assert_array_equal(max_abs_entry(probs), expected)
    nan = np.array([[0.5, np.nan, 0.5]])
    assert np.isnan(max_abs_entry(nan)[0])


def test_log_domain_above_its_limit_says_the_check_is_skipped(qtbot, lab, make_view):
    view = make_view("log-domain")
    lab.scores.set_values(np.random.default_rng(9).normal(size=GRADIENT_CHECK_LIMIT + 1))
    view.flush()
    assert view.readouts["logdomain.readout.grad"].text() == tr(
        "logdomain.readout.grad_too_large", limit=GRADIENT_CHECK_LIMIT)
