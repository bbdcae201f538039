"""Nothing overlaps, nothing is clipped, nothing is stale (issue 12, section 3).

Slider decade labels are drawn whole or not at all; a greyed control shows
the value in use (or nothing); the texts use real symbols.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest
from psygnal import evented
from PySide6.QtGui import QFontMetrics

from gui.model.attention import AttentionModel
from gui.model.base import ViewModel, param
from gui.widgets.slider_scale import Mark, SliderScale, placement_order
from gui.widgets.sliders import ParamSlider, ParamSpin, ValueSlider, param_control


def check_scale(scale: SliderScale) -> list[str]:
    """The texts drawn; asserts each is drawn whole, inside the row, apart from its neighbours."""
    shown = scale.shown()
    for mark, rect in shown:
        font = scale.font()
        font.setBold(mark.bold)
        assert rect.width() >= QFontMetrics(font).horizontalAdvance(mark.text), mark.text
        assert rect.left() >= 0, mark.text
        assert rect.right() < scale.width(), mark.text
    for (a, ra), (b, rb) in zip(shown, shown[1:]):
        assert ra.right() < rb.left(), (a.text, b.text)
    return [m.text for m, _ in shown]


def shown_slider(qtbot, width: int, lo=1.0, hi=1e5) -> ValueSlider:
    slider = ValueSlider("top-k", lo, hi, 50, log=True)
    qtbot.addWidget(slider)
    slider.resize(width, slider.sizeHint().height())
    slider.show()
    qtbot.waitExposed(slider)
    return slider


def test_decade_labels_thin_out_instead_of_clipping(qtbot):
    """A wide row shows every decade; a narrow one drops some, keeps the ends and the bold 1, clips none."""
    wide = shown_slider(qtbot, 600)
    assert check_scale(wide.scale) == ["1", "10", "100", "1000", "10k", "100k"]
    narrow = shown_slider(qtbot, 230)
    texts = check_scale(narrow.scale)
    assert texts[0] == "1"
    assert texts[-1] == "100k"
    assert len(texts) < 6


def test_decade_labels_sit_under_their_ticks(qtbot):
    slider = shown_slider(qtbot, 600, lo=0.01, hi=100.0)
    shown = dict((m.text, r) for m, r in slider.scale.shown())
    centres = [shown[t].center().x() for t in ("0.1", "1", "10")]
    # equal decades, equal travel: the middle labels are evenly spaced (the ends are kept inside)
    assert abs((centres[1] - centres[0]) - (centres[2] - centres[1])) <= 2
    one = slider.scale.tick_x(slider._to_pos(1.0))
    assert abs(shown["1"].center().x() - one) <= 1


def test_placement_order_pins_then_thins():
    assert placement_order(7, [0, 6]) == [0, 6, 4, 2, 1, 3, 5]
    assert placement_order(3, [1, 0, 2]) == [1, 0, 2]


def test_a_single_label_wider_than_the_row_is_dropped(qtbot):
    slider = shown_slider(qtbot, 600)
    scale = SliderScale(slider.slider, [Mark(0, "x" * 200)])
    qtbot.addWidget(scale)
    scale.resize(40, 20)
    assert scale.shown() == []


@pytest.mark.parametrize("view_name", ["sampling", "attention", "temperature", "online", "precision"])
def test_every_slider_of_a_view_draws_its_labels_whole(qtbot, view_name, tmp_path):
    from gui.app import MainWindow

    window = MainWindow(settings_dir=str(tmp_path), restore=False)
    qtbot.addWidget(window)
    window.resize(1280, 800)
    window.show()
    view = window.show_view(view_name)
    qtbot.waitExposed(window)
    view.flush()
    scales = [s for s in view.findChildren(SliderScale) if s.isVisible()]
    assert scales
    for scale in scales:
        texts = check_scale(scale)
        assert texts, [m.text for m in scale.marks]
        assert texts[0] == scale.marks[0].text
        assert texts[-1] == scale.marks[-1].text


# -- a greyed control shows the value in use ---------------------------------------------------------
@evented
@dataclass
class Overridden(ViewModel):
    name: ClassVar[str] = "overridden"
    n: int = param(8, minimum=2, maximum=64, integer=True, control="spin")
    temperature: float = param(1.0, minimum=0.01, maximum=100.0, log=True)
    data: int | None = None  # not a parameter: data that fix n (None: n applies)

    def applies(self, name: str) -> bool:
        return self.data is None

    def value_in_use(self, name: str) -> Any:
        if name == "n":
            return self.data
        return None if self.data == 0 else super().value_in_use(name)


def test_a_disabled_control_shows_the_value_in_use_and_the_stored_one_comes_back(qtbot):
    model = Overridden()
    spin = param_control(model, "n")
    qtbot.addWidget(spin)
    assert isinstance(spin, ParamSpin)
    assert spin.text() == "8"
    model.data = 10
    assert not spin.isEnabled()
    assert spin.value() == 10
    assert spin.text() == "10"
    assert model.n == 8  # the stored parameter does not change
    model.data = None
    assert spin.isEnabled()
    assert spin.text() == "8"


def test_nothing_in_use_shows_nothing(qtbot):
    model = Overridden()
    spin, slider = param_control(model, "n"), param_control(model, "temperature")
    for w in (spin, slider):
        qtbot.addWidget(w)
    slider.show()
    model.data = 0  # below n's range: n shows nothing rather than a clamped 2; T is not in use
    assert spin.text() == ""
    assert isinstance(slider, ParamSlider)
    assert slider.blank
    assert slider.spin.text() == ""
    assert not slider.slider.isVisible()
    model.data = None
    assert spin.text() == "8"
    assert not slider.blank
    assert slider.slider.isVisible()
    assert slider.spin.value() == 1.0


def test_attention_greyed_controls_show_the_data_in_use(qtbot):
    """A 10-word sentence: n shows 10, not the stored 8; the tables: d_k shows their d, no seed; T = √d_k."""
    model = AttentionModel()
    controls = {name: param_control(model, name) for name in ("n", "d_k", "heads", "seed", "temperature")}
    for w in controls.values():
        qtbot.addWidget(w)
    assert controls["temperature"].spin.value() == pytest.approx(math.sqrt(64))  # the standard scale 1/√64
    model.source = "sentence"
    words = len(model.sentence.split())
    assert words == 10
    assert controls["n"].text() == "10"
    assert model.n == 8
    model.source = "tables"
    d = model.tables.q.shape[1]
    assert d == 16
    assert controls["d_k"].spin.value() == d
    assert controls["d_k"].slider.value() == controls["d_k"]._to_pos(d)
    assert controls["heads"].text() == "1"
    assert controls["seed"].text() == ""
    assert controls["temperature"].spin.value() == pytest.approx(4.0)
    assert model.d_k == 64
    model.scaling = "none"
    assert controls["temperature"].spin.value() == 1.0
    model.scaling = "custom"
    model.temperature = 2.5
    assert controls["temperature"].isEnabled()
    assert controls["temperature"].spin.value() == 2.5
    model.source = "random"
    assert controls["n"].text() == "8"
    assert controls["d_k"].spin.value() == 64
    assert controls["seed"].text() == "0"


def test_sampling_vocabulary_size_in_use(qtbot, tmp_path):
    """V greyed: a file's length while a file is read, nothing for the score row, the stored V again for Zipf."""
    import numpy as np

    from gui.model.sampling import SamplingModel

    model = SamplingModel()
    control = param_control(model, "vocab")
    qtbot.addWidget(control)
    assert control.spin.value() == 50257
    path = tmp_path / "logits.npy"
    np.save(path, np.linspace(0.0, 3.0, 50))
    model.load_file(path)
    assert not control.isEnabled()
    assert control.spin.value() == 50
    model.logits = "scores"
    assert control.blank
    model.logits = "zipf"
    assert control.isEnabled()
    assert control.spin.value() == 50257
    assert model.vocab == 50257


# -- plots that show something at their defaults ---------------------------------------------------
def test_the_gumbel_tab_opens_on_a_sample_that_is_peaked_but_not_one_hot():
    import numpy as np

    from gui.model.sampling import SamplingModel

    g = SamplingModel().gumbel_result(None)
    assert g.hard.max() == 1.0
    top = np.sort(g.relaxed)[::-1]
    assert 0.2 < top[0] < 0.9  # a bar of its own beside the one-hot, not a sliver and not a copy
    assert top[1] > 0.02  # and a second one that can be seen
    # at τ = 1 (the old default) over 50,257 tokens the shown bars were slivers
    old = SamplingModel(tau=1.0).gumbel_result(None)
    assert old.relaxed.max() < 0.1


# -- real symbols in every text ---------------------------------------------------------------------
def visible_text(value: str) -> str:
    """A text as the user reads it: {placeholders} and HTML tags left out."""
    import re

    value = re.sub(r"\{[^{}]*\}", "", value)
    return re.sub(r"<[^<>]*>", "", value)


#: Texts that may keep a "_" or "^": a session file's own key, named so the file can be fixed.
ALLOWED: set[str] = {"error.session.current_view"}
#: API names a lesson quotes as they are spelled in code (the article contrasts them).
API_NAMES = ("log_softmax", "cross_entropy")


def test_no_text_shows_a_raw_underscore_or_caret():
    import json

    from resources import RESOURCES

    bad = []
    for path in sorted((RESOURCES / "texts" / "en").glob("*.json")):
        for key, value in json.loads(path.read_text(encoding="utf-8")).items():
            shown = visible_text(value)
            for name in API_NAMES:
                shown = shown.replace(name, "")
            if ("_" in shown or "^" in shown) and key not in ALLOWED:
                bad.append(f"{path.name}: {key} = {value[:80]!r}")
    assert not bad, "\n".join(bad)


def test_the_scan_sees_through_placeholders_and_tags_only():
    assert visible_text("{n_q} queries, d<sub>k</sub>") == " queries, dk"
    assert "_" in visible_text("d_k = {d}")
    assert "^" in visible_text("e^(s/T)")


def test_titles_use_real_symbols():
    from gui.model.texts import tr
    from gui.widgets.step_table import HEADERS

    assert tr("gradients.heatmap.title") == "Jacobian ∂αᵢ/∂sⱼ"
    assert tr("param.d_k.label") == "dₖ"
    assert tr("attention.sweep.sqrt") == "√dₖ"
    for header in HEADERS.values():
        assert "_" not in header
        assert "^" not in header


# -- line labels cross no curve and no line ------------------------------------------------------------
def drawn_box(plot, line):
    """The label's drawn rectangle in view units, from the scene (not from the placer's own sums)."""
    vb = plot.getPlotItem().getViewBox()
    r = vb.mapSceneToView(line.label.sceneBoundingRect()).boundingRect()
    return r.left(), r.right(), min(r.top(), r.bottom()), max(r.top(), r.bottom())


def assert_clear(plot, lines, curve, now_line):
    import numpy as np

    from gui.widgets.line_labels import hits_curve

    x, y = (np.asarray(a, float) for a in curve.getData())
    (x0, x1), (y0, y1) = plot.getPlotItem().getViewBox().viewRange()
    boxes = []
    for line in lines:
        box = drawn_box(plot, line)
        text = line.label.toPlainText()
        left, right, bottom, top = box
        assert x0 <= left and right <= x1, text
        assert y0 <= bottom and top <= y1, text
        assert not hits_curve(box, x, y), f"the curve crosses {text!r}"
        # on its line, or stacked one label up over a line that nearly coincides with it
        height = top - bottom
        assert min(abs(bottom - line.value()), abs(top - line.value())) < 1.5 * height, text
        # its own line runs along one edge of it, never through it; no other line does either
        for other in lines:
            assert not bottom + 1e-9 < other.value() < top - 1e-9, (text, other.label.toPlainText())
        if now_line is not None:
            assert not left < now_line.value() < right, f"the current value's line crosses {text!r}"
        for b in boxes:
            assert not (left < b[1] and b[0] < right and bottom < b[3] and b[2] < top), text
        boxes.append(box)


@pytest.fixture
def window(qtbot, tmp_path):
    from gui.app import MainWindow

    w = MainWindow(settings_dir=str(tmp_path), restore=False)
    w.lessons.dismiss()  # the plain layout: the Lessons panel is tested in test_lessons.py
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    qtbot.waitExposed(w)
    return w


@pytest.mark.parametrize("values", [[2.0, 1.0, 0.5, -1.0], [2.0, 2.0, 1.0], [3.0, 0.0], [1.0, 0.9, 0.8, 0.7, 0.6, 0.5]])
@pytest.mark.parametrize("t", [1.0, 0.03, 30.0])
def test_the_entropy_limit_labels_cross_neither_curve_nor_line(qtbot, window, values, t):
    window.lab.scores.set_values(values)
    window.lab.models["temperature"].temperature = t
    view = window.show_view("temperature")
    view.flush()
    qtbot.wait(20)
    plot = view.entropy
    assert_clear(plot, [plot.cold, plot.hot], plot.curve, plot.now_line)


@pytest.mark.parametrize("values", [[2.0, 1.0, 0.5, -1.0], [50.0, 1.0], [9.0, 3.0, 1.0], [0.5, 0.1]])
@pytest.mark.parametrize("scale", [1.0, 30.0])
def test_the_overflow_threshold_labels_cross_neither_curve_nor_line(qtbot, window, values, scale):
    window.lab.scores.set_values(values)
    window.lab.models["precision"].scale = scale
    view = window.show_view("precision")
    view.flush()
    qtbot.wait(20)
    plot = next(p for p in view.plots().values() if hasattr(p, "lines") and hasattr(p, "crossing"))
    # at the default scale the marker of the scale is clear too (a narrow plot leaves no room for that everywhere)
    assert_clear(plot, plot.lines, plot.curve, plot.now_line if scale == 1.0 else None)


# -- colour bars stay inside their plots -------------------------------------------------------------
@pytest.mark.parametrize("size", [(1280, 800), (1260, 690)])
def test_every_colour_bar_and_its_labels_fit_inside_its_plot(qtbot, tmp_path, size):
    from PySide6.QtGui import QFontMetrics

    from gui.app import MainWindow
    from gui.registry import VIEWS
    from gui.widgets.heatmap import Heatmap

    window = MainWindow(settings_dir=str(tmp_path), restore=False)
    qtbot.addWidget(window)
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    window.lab.models["online"].mode = "attention"  # its two heatmaps
    seen = 0
    for spec in VIEWS:
        view = window.show_view(spec.name)
        tabs = getattr(view, "tabs", None)
        for i in range(tabs.count() if tabs is not None else 1):
            if tabs is not None:
                tabs.setCurrentIndex(i)
            view.flush()
            qtbot.wait(10)
            for heatmap in (h for h in view.findChildren(Heatmap) if h.isVisible()):
                axis = heatmap.colorbar.axis
                name = f"{spec.name}: {heatmap.getPlotItem().titleLabel.text}"
                assert axis.sceneBoundingRect().right() <= heatmap.width() + 0.5, name
                lo, hi = axis.range
                metrics = QFontMetrics(axis.style["tickFont"] or axis.font())
                for spacing, values in axis.tickValues(lo, hi, axis.height()):
                    for text in axis.tickStrings(values, axis.autoSIPrefixScale, spacing):
                        room = axis.width() - axis.style["tickTextOffset"][0] - max(axis.style["tickLength"], 0)
                        assert metrics.horizontalAdvance(text) <= room, (name, text)
                seen += 1
    assert seen >= 7


# -- what is shared and what is each view's own --------------------------------------------------------
def test_every_score_table_says_it_is_shared_and_the_rest_is_the_views_own(qtbot, tmp_path):
    from PySide6.QtWidgets import QLabel

    from gui.app import MainWindow
    from gui.model.texts import tr
    from gui.registry import VIEWS
    from gui.widgets.score_table import ScoreEditor

    window = MainWindow(settings_dir=str(tmp_path), restore=False)
    qtbot.addWidget(window)
    window.resize(1280, 800)
    window.show()
    window.lab.models["online"].row = "scores"
    window.lab.models["sampling"].logits = "scores"
    with_table = []
    for spec in VIEWS:
        view = window.show_view(spec.name)
        view.flush()
        for editor in (e for e in view.findChildren(ScoreEditor) if e.isVisible()):
            note = editor.findChild(QLabel, "shared_note")
            assert note is not None, spec.name
            assert note.isVisible(), spec.name
            assert note.text() == tr("scores.shared_note")
            assert "Shared by all views" in note.text()
            assert "This view only" in note.text()
            with_table.append(spec.name)
    # every view that reads the shared scores shows the note (attention, learning and benchmark have
    # data of their own)
    assert set(with_table) == {s.name for s in VIEWS} - {"attention", "learning", "benchmark"}
