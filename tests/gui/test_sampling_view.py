"""The Sampling view's stages, controls and background draws, driven as a user does."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF

import compute
from gui.model.sampling import SYNC_DRAWS, SamplingModel, compute_draws, draw_steps, needs_worker
from gui.model.texts import tr
from gui.widgets.sliders import ParamSpin


def hover(plot, x: float, y: float) -> None:
    """Move the mouse over data point (x, y) of ``plot``: the scene's signal, as Qt sends it."""
    vb = plot.getPlotItem().getViewBox()
    plot.scene().sigMouseMoved.emit(vb.mapViewToScene(QPointF(x, y)))


@pytest.fixture
def view(make_view, lab):
    lab.models["sampling"].vocab = 3000
    v = make_view("sampling")
    v.flush()
    return v


# -- the stages --------------------------------------------------------------------------------
def test_every_stage_has_a_text():
    for stage in compute.Stage:
        assert tr(f"sampling.stage.{stage.name.lower()}")
    assert tr("sampling.stage.masked") == "cut: the logit was −inf"


def test_hovering_every_bar_names_its_stage_even_for_a_minus_inf_score(view, lab):
    """-inf in the score row is stage MASKED (4); hovering its bar once raised IndexError."""
    labels = ("A", "B", "C", "D", "E", "F")
    lab.scores.set_values([4.0, 3.0, 2.5, 1.0, 0.0, -np.inf], labels)
    m = view.model
    m.logits = "scores"
    m.set_param("top_k", 4)
    m.set_param("top_p", 0.8)
    m.min_p_on = "on"
    m.set_param("min_p", 0.5)
    view.flush()
    r = m.result(view.scores)
    assert r.size == 6
    np.testing.assert_array_equal(r.stage[r.shown], [0, 3, 2, 2, 1, 4])
    wanted = ["kept", "cut by min-p", "cut by top-p", "cut by top-p", "cut by top-k", "cut: the logit was −inf"]
    messages: list[str] = []
    view.status.connect(messages.append)
    for plot in (view.bars, view.draw_bars):
        lo, hi = plot.getPlotItem().getViewBox().viewRange()[1]
        for i, text in enumerate(wanted):
            messages.clear()
            hover(plot, float(i), (lo + hi) / 2)
            assert len(messages) == 1, (plot, i)
            assert messages[0].startswith(view.scores.labels[int(r.shown[i])] + " — ")
            assert messages[0].endswith(" — " + text)
            assert plot.describe(float(i), 0.0) == messages[0]


def test_bars_without_stages_name_none(view):
    """The Gumbel and router bars are not cut by the knobs: their hover names no stage."""
    view.tabs.setCurrentIndex(2)
    view.flush()
    for plot in (view.gumbel, view.router_load):
        text = plot.describe(0.0, 0.0)
        assert text
        assert "kept" not in text


# -- controls from the model --------------------------------------------------------------------
def test_applies_follows_the_source_and_the_switches():
    m = SamplingModel()
    assert m.applies("vocab")
    m.logits = "scores"
    assert not m.applies("vocab")
    assert m.applies("top_k")
    m.top_k_on = "off"
    assert not m.applies("top_k")
    assert not m.applies("min_p")  # off by default
    assert m.applies("top_k_on")
    assert m.applies("seed")


def test_controls_enable_as_the_model_says(view):
    m = view.model
    assert view.controls["vocab"].isEnabled()
    m.logits = "scores"
    assert not view.controls["vocab"].isEnabled()
    assert view.editor.isVisibleTo(view)
    assert not view.controls["min_p"].isEnabled()
    view.controls["min_p_on"].setChecked(True)
    assert m.min_p_on == "on"
    assert view.controls["min_p"].isEnabled()


def test_the_seed_is_a_spin_box_and_refusals_reach_the_note(view):
    assert SamplingModel.params()["seed"].control == "spin"
    spin = view.controls["seed"]
    assert isinstance(spin, ParamSpin)
    spin.setValue(7)
    assert view.model.seed == 7
    messages: list[str] = []
    view.status.connect(messages.append)
    spin.binding.write(-1)  # what a refused edit does
    assert view.model.seed == 7
    assert "seed" in messages[-1]
    assert "seed" in view.note.text()


def test_a_loaded_file_is_named_beside_the_button(tmp_path, view):
    np.save(tmp_path / "row.npy", np.linspace(-2, 2, 50))
    assert view.load_path(tmp_path / "row.npy")
    view.flush()
    strip = view.vocabulary.files
    assert strip.name.text() == "row.npy"
    assert strip.name.isVisibleTo(view)
    assert not view.controls["vocab"].isEnabled()
    assert view.model.result(view.scores).size == 50


# -- draws as a job ---------------------------------------------------------------------------
def test_draw_steps_yield_fractions_and_return_what_compute_draws_returns():
    m = SamplingModel(vocab=500, draws=30_000)
    m.draw_method = "gumbel_max"
    inputs = m.draw_inputs()
    steps = draw_steps(inputs)
    fractions = []
    while True:
        try:
            fractions.append(next(steps))
        except StopIteration as stop:
            result = stop.value
            break
    assert fractions[-1] == 1.0
    assert all(0 < a <= b for a, b in zip(fractions, fractions[1:]))
    np.testing.assert_array_equal(result.draws, compute_draws(inputs).draws)
    assert result.counts.sum() == 30_000


def test_inverse_cdf_draws_yield_once():
    inputs = SamplingModel(vocab=100, draws=1000).draw_inputs()
    steps = draw_steps(inputs)
    assert next(steps) == 1.0
    with pytest.raises(StopIteration):
        next(steps)


def test_which_draws_run_in_the_background():
    m = SamplingModel(vocab=100)
    m.draws = SYNC_DRAWS
    assert not needs_worker(m.draw_inputs(), kept=50)
    m.draws = SYNC_DRAWS + 1
    assert needs_worker(m.draw_inputs(), kept=50)
    m.draw_method = "gumbel_max"
    m.draws = 1000
    assert not needs_worker(m.draw_inputs(), kept=2000)
    assert needs_worker(m.draw_inputs(), kept=2001)


def test_flush_waits_for_the_job_so_exports_are_current(view):
    m = view.model
    m.set_param("draws", 500_000)
    view.redraw()
    assert view.job.busy
    view.flush()
    assert not view.job.busy
    d = m.cached_draws(view.scores)
    assert d is not None
    assert d.inputs.n == 500_000
    assert view.arrays()["draws"].data.shape == (500_000,)


def test_a_newer_input_replaces_the_running_job_and_only_its_draws_land(qtbot, view):
    m = view.model
    m.top_k_on = m.top_p_on = "off"
    m.draw_method = "gumbel_max"
    m.set_param("draws", 1_000_000)  # minutes of Gumbel-max: stopped at its next chunk
    view.redraw()
    assert view.job.busy
    m.draw_method = "inverse_cdf"  # still above the synchronous limit: a new job
    view.redraw()
    qtbot.waitUntil(lambda: not view.job.busy, timeout=60_000)
    d = m.cached_draws(view.scores)
    assert d is not None
    assert d.inputs.method == "inverse_cdf"
    _expected, observed = view.draw_bars.heights
    np.testing.assert_allclose(observed, d.counts[m.result(view.scores).shown])


def test_shutdown_stops_the_job(view):
    m = view.model
    m.top_k_on = m.top_p_on = "off"
    m.draw_method = "gumbel_max"
    m.set_param("draws", 1_000_000)
    view.redraw()
    assert view.job.running
    view.shutdown()
    assert not view.job.running
    assert not view.job.busy


def test_a_file_dropped_on_the_view_is_loaded(tmp_path, view):
    from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
    from PySide6.QtGui import QDropEvent

    np.save(tmp_path / "dropped.npy", np.linspace(-1, 1, 30))
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(tmp_path / "dropped.npy"))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
                       Qt.KeyboardModifier.NoModifier)
    view.dropEvent(event)  # what Qt calls on a drop (sendEvent delivers drops only during a real drag)
    assert view.model.logits == "file"
    assert view.model.file_path.endswith("dropped.npy")


def test_closing_the_window_stops_the_draws(qtbot, tmp_path):
    from gui.app import MainWindow

    w = MainWindow(settings_dir=tmp_path / "cfg")
    qtbot.addWidget(w)
    w.show()
    m = w.lab.models["sampling"]
    m.top_k_on = m.top_p_on = "off"
    m.draw_method = "gumbel_max"
    m.set_param("draws", 1_000_000)
    view = w.show_view("sampling")
    view.redraw()
    assert view.job.running
    w.close()  # the view gets no close event of its own: the window calls its shutdown()
    assert not view.job.running
