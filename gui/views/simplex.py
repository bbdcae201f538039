"""Simplex: three weights as one point of a triangle, dragged, shifted and differentiated."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np
from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
)

from gui import theme as themes
from gui.binding import connect_while_alive
from gui.format import fmt
from gui.model.simplex import (
    CENTRE,
    CORNERS,
    ISO_K,
    ISO_SEGMENTS,
    OUTLINE,
    SimplexModel,
    SimplexResult,
    from_xy,
    kl_divergence,
    scores_for,
)
from gui.model.texts import tr
from gui.qt import pg
from gui.views.base import BaseView
from gui.widgets import unchanged
from gui.widgets.plot import Plot
from gui.widgets.signals import signals_blocked
from gui.widgets.sliders import ParamSlider, ValueSlider

SCORE_MIN, SCORE_MAX = -10.0, 10.0
#: How far past the triangle's edges a press still counts as on the triangle.
GRAB_MARGIN = 0.06
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_CORNER_COORDS = ("(1, 0, 0)", "(0, 1, 0)", "(0, 0, 1)")
TOP = float(CORNERS[0, 1]) + 0.15  # room above the top corner for its label


def triple(values) -> str:
    return "(" + ", ".join(fmt(v) for v in values) + ")"


class TriangleArea(pg.GraphicsObject):
    """An invisible item over the triangle that turns left-button drags and clicks into calls.

    pyqtgraph tells the two apart: a press and release without moving is a
    click; moving with the button held is a drag (start, moves, finish).
    Positions arrive in view (data) coordinates.
    """

    def __init__(self, on_drag: Callable[[float, float], None], on_click: Callable[[float, float], None]):
        super().__init__()
        lo, hi = CORNERS.min(axis=0) - GRAB_MARGIN, CORNERS.max(axis=0) + GRAB_MARGIN
        self._rect = QRectF(lo[0], lo[1], hi[0] - lo[0], hi[1] - lo[1])
        self.on_drag, self.on_click = on_drag, on_click
        self.setZValue(1000)

    def boundingRect(self) -> QRectF:
        return self._rect

    def paint(self, painter, *args) -> None:  # nothing to see: it only catches the mouse
        pass

    def mouseDragEvent(self, ev) -> None:
        if ev.button() != Qt.MouseButton.LeftButton:
            ev.ignore()
            return
        ev.accept()
        pos = ev.pos()
        self.on_drag(pos.x(), pos.y())

    def mouseClickEvent(self, ev) -> None:
        if ev.button() != Qt.MouseButton.LeftButton:
            return
        ev.accept()
        pos = ev.pos()
        self.on_click(pos.x(), pos.y())


class SimplexPlot(Plot):
    """The triangle and everything drawn on it; it only draws a SimplexResult."""

    def __init__(self, on_drag, on_click):
        self._on_drag, self._on_click = on_drag, on_click
        super().__init__(tr("plot.simplex.title"))
        self.describe = lambda x, y: ""

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        item.showGrid(x=False, y=False)
        item.hideAxis("left")
        item.hideAxis("bottom")
        item.setMouseEnabled(x=False, y=False)
        vb = item.getViewBox()
        vb.setAspectLocked(True)
        vb.setRange(xRange=(-0.15, 1.15), yRange=(-0.13, TOP), padding=0)
        vb.disableAutoRange()
        self.legend = self.add_legend(offset=(8, 8), labelTextSize="9pt")

        def curve(name=None, **kw):
            c = pg.PlotDataItem([], [], name=name, **kw)
            item.addItem(c)
            return c

        self.outline = curve()
        unchanged.set_curve(self.outline, OUTLINE[:, 0], OUTLINE[:, 1])
        self.iso = curve(tr("plot.simplex.iso"), connect="pairs")
        self.arrows = curve(tr("plot.simplex.arrows", token="1"), connect="pairs")
        self.kl = curve(connect="pairs")  # joins the legend only while shown
        self.path = curve(tr("plot.simplex.path"))
        self.centre = curve(pen=None, symbol="o", symbolSize=7)
        unchanged.set_curve(self.centre, [CENTRE[0]], [CENTRE[1]])
        self.q = curve(tr("plot.simplex.q"), pen=None, symbol="+", symbolSize=15)
        self.sparsemax = curve(tr("plot.simplex.sparsemax"), pen=None, symbol="s", symbolSize=11)
        self.entmax = curve(tr("plot.simplex.entmax", alpha="1.5"), pen=None, symbol="d", symbolSize=13)
        self.point = curve(tr("plot.simplex.softmax"), pen=None, symbol="o", symbolSize=15)
        self._kl_in_legend = False

        self.corner_texts = [pg.TextItem(anchor=a) for a in ((0.5, 1.0), (0.5, 0.0), (0.5, 0.0))]
        offsets = ((0.0, 0.03), (0.0, -0.02), (0.0, -0.02))
        for text, corner, off in zip(self.corner_texts, CORNERS, offsets):
            text.setPos(corner[0] + off[0], corner[1] + off[1])
            item.addItem(text, ignoreBounds=True)
        self.centre_text = pg.TextItem(tr("plot.simplex.centre"), anchor=(0.5, 0.0))
        self.centre_text.setPos(CENTRE[0], CENTRE[1] - 0.02)
        item.addItem(self.centre_text, ignoreBounds=True)
        self.iso_texts = []
        normal = np.array([-np.sqrt(3) / 2, 0.5])  # outward from the edge between tokens 2 and 1
        for k, end in zip(ISO_K, ISO_SEGMENTS[1::2]):
            label = "1" if k == 0 else "e" + str(int(k)).translate(_SUPERSCRIPT)
            text = pg.TextItem(label, anchor=(1.0, 0.5))
            pos = end + 0.025 * normal
            text.setPos(pos[0], pos[1])
            item.addItem(text, ignoreBounds=True)
            self.iso_texts.append(text)

        self.area = TriangleArea(self._on_drag, self._on_click)
        item.addItem(self.area, ignoreBounds=True)

    def theme_changed(self, theme: themes.Theme) -> None:
        dot = pg.QtCore.Qt.PenStyle.DotLine
        self.outline.setPen(pg.mkPen(theme.foreground, width=1.5))
        self.iso.setPen(pg.mkPen(theme.muted, width=1, style=dot))
        self.arrows.setPen(pg.mkPen(theme.secondary, width=1.3))
        amber, green, pink = (themes.colour(theme, i) for i in (1, 2, 3))
        self.kl.setPen(pg.mkPen(amber, width=1.2))
        self.path.setPen(pg.mkPen(theme.accent, width=2.5))
        self.centre.setSymbolPen(pg.mkPen(theme.muted, width=1.5))
        self.centre.setSymbolBrush(pg.mkBrush(theme.background))
        self.q.setSymbolPen(pg.mkPen(amber, width=2.5))
        self.q.setSymbolBrush(pg.mkBrush(amber))
        self.sparsemax.setSymbolBrush(pg.mkBrush(green))
        self.sparsemax.setSymbolPen(pg.mkPen(theme.foreground, width=1))
        self.entmax.setSymbolBrush(pg.mkBrush(pink))
        self.entmax.setSymbolPen(pg.mkPen(theme.foreground, width=1))
        self.point.setSymbolBrush(pg.mkBrush(theme.highlight))
        self.point.setSymbolPen(pg.mkPen(theme.foreground, width=1.5))
        for text in self.corner_texts:
            text.setColor(theme.foreground)
        for text in (self.centre_text, *self.iso_texts):
            text.setColor(theme.muted)
        self._style_legend(theme)

    def _style_legend(self, theme: themes.Theme) -> None:
        for _sample, label in self.legend.items:
            label.setText(label.text, color=theme.foreground)

    def _rename(self, curve, name: str) -> None:
        for sample, label in self.legend.items:
            if sample.item is curve and label.text != name:
                label.setText(name, color=themes.current().foreground)

    @staticmethod
    def _points(curve, xy: np.ndarray) -> None:
        """Draw the finite rows of ``xy`` (pyqtgraph warns on all-NaN data)."""
        xy = np.asarray(xy, dtype=float).reshape(-1, 2)
        xy = xy[np.isfinite(xy).all(axis=1)]
        unchanged.set_curve(curve, xy[:, 0], xy[:, 1])

    def show_result(self, r: SimplexResult) -> None:
        self._points(self.path, r.path_xy)
        self._points(self.point, r.xy)
        self._points(self.sparsemax, r.sparsemax_xy)
        self._points(self.entmax, r.entmax_xy)
        self._points(self.q, r.q_xy)
        unchanged.set_curve(self.arrows, r.arrow_segments[:, 0], r.arrow_segments[:, 1], connect="pairs")
        unchanged.set_curve(self.iso, r.iso_segments[:, 0], r.iso_segments[:, 1], connect="pairs")
        unchanged.set_curve(self.kl, r.kl_segments[:, 0], r.kl_segments[:, 1], connect="pairs")
        for text in self.iso_texts:
            text.setVisible(r.ok)
        if r.show_kl != self._kl_in_legend:
            if r.show_kl:
                self.legend.addItem(self.kl, tr("plot.simplex.kl"))
                self._style_legend(themes.current())
            else:
                self.legend.removeItem(self.kl)
            self._kl_in_legend = r.show_kl
        self._rename(self.entmax, tr("plot.simplex.entmax", alpha=f"{r.alpha:.3g}"))
        names = [*r.labels, *(tr("label.token_default", n=i + 1) for i in range(len(r.labels), 3))]
        self._rename(self.arrows, tr("plot.simplex.arrows", token=names[r.arrows - 1]))
        for i, text in enumerate(self.corner_texts):
            label = tr("plot.simplex.corner", label=names[i], coords=_CORNER_COORDS[i]) if r.ok \
                else _CORNER_COORDS[i]
            if text.toPlainText() != label:
                text.setText(label)

    # -- for the tests -------------------------------------------------------------------
    def point_xy(self) -> np.ndarray:
        """Where the softmax point is drawn (empty when it is not)."""
        x, y = self.point.getData()
        return np.array([] if x is None else np.column_stack([x, y]).ravel())


class SimplexView(BaseView):
    model: SimplexModel

    def build(self) -> None:
        self.editor = self.score_editor()

        scores_box = QGroupBox(tr("simplex.scores.title"))
        column = QVBoxLayout(scores_box)
        self.note = QLabel()
        self.note.setObjectName("simplex_note")
        self.note.setWordWrap(True)
        self.add_scores = QPushButton(tr("simplex.add_scores"))
        self.add_scores.setToolTip(tr("simplex.add_scores.tooltip"))
        self.add_scores.clicked.connect(self._add_scores)
        self.sliders = []
        for i in range(3):
            slider = ValueSlider("", SCORE_MIN, SCORE_MAX, 0.0, spin_limits=(-1e6, 1e6))  # named by _sync_scores
            slider.valueEdited.connect(partial(self._slider_edited, i))
            self.sliders.append(slider)
        self.shift = QPushButton(tr("simplex.shift"))
        self.shift.setToolTip(tr("simplex.shift.tooltip"))
        self.shift.clicked.connect(self._shift)
        column.addWidget(self.note)
        column.addWidget(self.add_scores)
        for slider in self.sliders:
            column.addWidget(slider)
        column.addWidget(self.shift)

        self.temperature = ParamSlider(self.model, "temperature")
        self.alpha = ParamSlider(self.model, "alpha")

        extras = QGroupBox(tr("simplex.extras.title"))
        grid = QVBoxLayout(extras)
        row = QHBoxLayout()
        arrows_label = QLabel(tr("param.arrows.label"))
        self.arrow_choice = QComboBox()
        self.arrow_choice.addItems(["", "", ""])
        for w in (arrows_label, self.arrow_choice):
            w.setToolTip(tr("param.arrows.tooltip"))
        self.arrow_choice.currentIndexChanged.connect(self._arrows_chosen)
        row.addWidget(arrows_label)
        row.addWidget(self.arrow_choice, 1)
        grid.addLayout(row)
        row = QHBoxLayout()
        self.kl_box = QCheckBox(tr("simplex.kl"))
        self.kl_box.setToolTip(tr("simplex.kl.tooltip"))
        self.kl_box.toggled.connect(self._kl_toggled)
        self.pin = QPushButton(tr("simplex.pin"))
        self.pin.setToolTip(tr("simplex.pin.tooltip"))
        self.pin.clicked.connect(self._pin_here)
        row.addWidget(self.kl_box, 1)
        row.addWidget(self.pin)
        grid.addLayout(row)

        readouts = self.readout_box((
            "readout.simplex.p", "readout.simplex.scores", "readout.simplex.mean", "readout.entropy",
            "readout.simplex.sparsemax", "readout.simplex.entmax", "readout.simplex.kl",
            "readout.simplex.q",
        ))
        self.triangle = self.add_plot("triangle", SimplexPlot(self._dragged, self._clicked))
        self.triangle.describe = self._describe
        self.arrange([self.editor, scores_box, self.temperature, self.alpha, extras, readouts],
                     self.triangle, min_width=340)

        connect_while_alive(self, self.scores.events.entries, self._sync_scores)
        connect_while_alive(self, self.model.events.arrows, self._sync_view_state)
        connect_while_alive(self, self.model.events.show_kl, self._sync_view_state)
        self._sync_scores()
        self._sync_view_state()

    # -- writing state ---------------------------------------------------------------------
    def _slider_edited(self, index: int, value: float) -> None:
        if index < len(self.scores):
            self.scores.set_value(index, value)

    def _set_first_three(self, three) -> None:
        values = self.scores.values
        values[:3] = three
        self.scores.set_values(values, self.scores.labels)

    def _add_scores(self) -> None:
        while len(self.scores) < 3:
            self.scores.insert(len(self.scores), 0.0)

    def _shift(self) -> None:
        self.scores.set_values(self.scores.values + 1.0, self.scores.labels)

    def _dragged(self, x: float, y: float) -> None:
        if len(self.scores) < 3:
            return
        s = self.scores.values[:3]
        self._set_first_three(scores_for(from_xy((x, y)), s, self.model.temperature))

    def _clicked(self, x: float, y: float) -> None:
        self.model.pin_q(from_xy((x, y)))

    def _pin_here(self) -> None:
        if len(self.scores) < 3:
            return
        r = self.model.result(self.scores)
        if np.all(np.isfinite(r.p)):
            self.model.pin_q(r.p)

    def _arrows_chosen(self, index: int) -> None:
        if index >= 0:
            self.model.set_param("arrows", index + 1)

    def _kl_toggled(self, checked: bool) -> None:
        self.model.show_kl = bool(checked)

    # -- following state ----------------------------------------------------------------------
    def _sync_scores(self, *_args) -> None:
        n = len(self.scores)
        values, labels = self.scores.values, self.scores.labels
        for i, slider in enumerate(self.sliders):
            slider.setEnabled(i < n)
            name = labels[i] if i < n else f"s{i + 1}"
            if slider.label.text() != name:  # a drag sends many events: touch only what changed
                slider.label.setText(name)
                slider.setToolTip(tr("simplex.slider.tooltip", label=name))
                self.arrow_choice.setItemText(i, tr("simplex.arrows.item", i=i + 1, label=name))
            v = values[i] if i < n else 0.0
            if not np.isnan(v):
                slider.setValue(v)  # clamps ±inf (and any score beyond ±10) to the ends
        if n > 3:
            self.note.setText(tr("simplex.note.first_three", n=n))
        elif n < 3:
            self.note.setText(tr("simplex.note.too_few", n=n))
        self.note.setVisible(n != 3)
        self.add_scores.setVisible(n < 3)
        self.shift.setEnabled(n >= 3)
        self.pin.setEnabled(n >= 3)

    def _sync_view_state(self, *_args) -> None:
        with signals_blocked(self.arrow_choice), signals_blocked(self.kl_box):
            self.arrow_choice.setCurrentIndex(self.model.arrows - 1)
            self.kl_box.setChecked(self.model.show_kl)

    def _describe(self, x: float, y: float) -> str:
        p = from_xy((x, y))
        if np.any(p < -1e-9):
            return ""
        p = np.clip(p, 0.0, 1.0)
        text = tr("plot.simplex.hover", p1=fmt(p[0]), p2=fmt(p[1]), p3=fmt(p[2]))
        if self.model.show_kl:
            kl = float(kl_divergence(p, np.array(self.model.q)))
            text += tr("plot.simplex.hover_kl", kl=fmt(kl))
        return text

    def redraw(self) -> None:
        r = self.model.result(self.scores)
        self.triangle.show_result(r)
        dash = "–"
        if not r.ok:
            for label in self.readouts.values():
                label.setText(dash)
            return
        self.readouts["readout.simplex.p"].setText(triple(r.p))
        self.readouts["readout.simplex.scores"].setText(triple(r.scores))
        self.readouts["readout.simplex.mean"].setText(fmt(float(np.mean(r.scores))))
        self.readouts["readout.entropy"].setText(f"{fmt(r.entropy)} nats")
        self.readouts["readout.simplex.sparsemax"].setText(triple(r.sparsemax))
        self.readouts["readout.simplex.entmax"].setText(
            tr("readout.simplex.entmax.value", p=triple(r.entmax), alpha=f"{r.alpha:.3g}")
        )
        self.readouts["readout.simplex.kl"].setText(f"{fmt(r.kl_pq)} nats")
        self.readouts["readout.simplex.q"].setText(triple(r.q))
