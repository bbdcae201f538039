"""The Learning view's Distil, Contrast and Digits panels: each draws one result in ``show_result``."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF

from gui import theme as themes
from gui.format import fmt
from gui.model.learning.data import N_CLASSES, SIDE
from gui.model.learning.results import CLIP_TAU, ContrastResult, DigitsResult, DistilResult, Students
from gui.model.texts import tr
from gui.qt import pg
from gui.widgets import unchanged
from gui.widgets.bar_chart import BarChart
from gui.widgets.curves import Curves
from gui.widgets.heatmap import Heatmap
from gui.widgets.plot import Plot

CLASS_LABELS = tuple(str(k) for k in range(N_CLASSES))


class DistilPanels:
    """The teacher's soft targets of one digit and of the articles' example at T = 1 and at T, and the
    two students' validation accuracy as they train."""

    def __init__(self) -> None:
        self.soft = BarChart(tr("learning.plot.soft_targets"),
                             [(tr("learning.series.t1"), "secondary"), (tr("learning.series.t"), "accent")],
                             y_label=tr("learning.axis.probability"), legend_columns=2)
        self.seed = BarChart(tr("learning.plot.seed_teacher"),
                             [(tr("learning.series.t1"), "secondary"), (tr("learning.series.t"), "accent")],
                             y_label=tr("learning.axis.probability"), legend_columns=2)
        self.students = Curves(tr("learning.plot.students"),
                               [(tr("learning.series.hard"), "secondary", "dash"),
                                (tr("learning.series.soft"), "accent", "solid")],
                               x_label=tr("learning.axis.epoch"), y_label=tr("learning.axis.accuracy"),
                               legend_columns=2, x_name=tr("learning.axis.epoch"),
                               y_name=tr("learning.axis.accuracy"))

    def plots(self) -> dict[str, Plot]:
        return {"soft_targets": self.soft, "seed_teacher": self.seed, "students": self.students}

    def show_result(self, r: DistilResult, students: Students | None) -> None:
        t = fmt(r.temperature, 3)
        self.soft.set_title(tr("learning.plot.soft_targets.value", index=r.position, label=r.label))
        for chart in (self.soft, self.seed):
            chart.set_series_name(1, tr("learning.series.t.value", t=t))
        self.soft.set_data(CLASS_LABELS, [r.soft_1, r.soft_t])
        self.seed.set_data((tr("learning.class.cat"), tr("learning.class.dog"), tr("learning.class.bird")),
                           [r.seed_1, r.seed_t])
        if students is None:
            for i in range(2):
                self.students.set_curve(i, np.zeros(0), np.zeros(0))
            return
        for i, run in enumerate((students.hard, students.soft)):
            self.students.set_curve(i, np.arange(run.epochs_done + 1.0), run.history["val_accuracy"])
        self.students.set_y_range(0.0, 1.0)


class ContrastPanels:
    """The batch's pair probabilities at τ, and InfoNCE and the true pair's probability against τ."""

    def __init__(self) -> None:
        self.matrix = Heatmap(tr("learning.plot.pairs"), diverging=False, levels=(0.0, 1.0),
                              value_name=tr("learning.axis.probability"))
        self.loss = Curves(tr("learning.plot.info_nce"), [(tr("learning.series.info_nce"), "accent", "solid")],
                           x_label="τ", y_label=tr("learning.axis.loss"), log_x=True, x_range=(0.01, 1.0),
                           x_name="τ", y_name=tr("learning.axis.loss"))
        self.positive = Curves(tr("learning.plot.positive"), [(tr("learning.series.positive"), "accent", "solid")],
                               x_label="τ", y_label=tr("learning.axis.probability"), log_x=True,
                               x_range=(0.01, 1.0), x_name="τ", y_name=tr("learning.axis.probability"))
        self.clip_lines = [plot.add_line(tr("learning.line.clip"), angle=90, position=0.9)
                           for plot in (self.loss, self.positive)]

    def plots(self) -> dict[str, Plot]:
        return {"pairs": self.matrix, "info_nce": self.loss, "positive": self.positive}

    def show_result(self, r: ContrastResult) -> None:
        labels = r.labels
        self.matrix.set_title(tr("learning.plot.pairs.value", tau=fmt(r.tau, 3)))
        self.matrix.set_matrix(r.info.row_probabilities, labels, labels)
        self.loss.set_curve(0, r.taus, r.losses)
        self.positive.set_curve(0, r.taus, r.positive)
        self.positive.set_y_range(0.0, 1.0)
        top = float(np.nanmax(r.losses)) if r.losses.size else 1.0
        self.loss.set_y_range(0.0, top * 1.05 if top > 0 else 1.0)
        for plot, line in zip((self.loss, self.positive), self.clip_lines):
            plot.set_line(line, CLIP_TAU)
            plot.set_now(r.tau)


#: The Digits plot's grid: columns, and each cell's width and height in data units (an image is 8 x 8).
COLUMNS = 3
CELL_W, CELL_H = 21.0, 14.0
BAR_X0, BAR_W = 9.5, 1.0


class DigitsPlot(Plot):
    """Test digits, the mistakes first: each image with its predicted distribution as ten bars, the true
    class's bar outlined and the prediction written above."""

    def __init__(self) -> None:
        self._images: list[pg.ImageItem] = []
        self._bars: list[pg.BarGraphItem] = []
        self._truth: list[pg.BarGraphItem] = []
        self._texts: list[pg.TextItem] = []
        self._classes: list[list[pg.TextItem]] = []  # each cell's 0..9 under its bars
        self._shown = 0
        super().__init__(tr("learning.plot.digits"))

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        item.setMouseEnabled(x=False, y=False)
        item.hideAxis("left")
        item.hideAxis("bottom")
        item.getViewBox().invertY(True)
        item.getViewBox().setAspectLocked(True)  # square pixels

    def _cell(self, i: int) -> tuple[float, float]:
        return (i % COLUMNS) * CELL_W, (i // COLUMNS) * CELL_H

    def _ensure(self, n: int) -> None:
        item = self.getPlotItem()
        while len(self._images) < n:
            image = pg.ImageItem(axisOrder="row-major")
            bars = pg.BarGraphItem(x=np.zeros(0), height=np.zeros(0), width=BAR_W * 0.8)
            truth = pg.BarGraphItem(x=np.zeros(0), height=np.zeros(0), width=BAR_W * 0.8)
            text = pg.TextItem(anchor=(0, 1))
            for it in (image, bars, truth, text):
                item.addItem(it)
            self._images.append(image)
            self._bars.append(bars)
            self._truth.append(truth)
            self._texts.append(text)
            classes = [pg.TextItem(str(k), anchor=(0.5, 0)) for k in range(N_CLASSES)]
            for c in classes:
                font = c.textItem.font()
                font.setPointSizeF(font.pointSizeF() * 0.8)
                c.setFont(font)
                item.addItem(c)
            self._classes.append(classes)
        self._style(themes.current())

    def _style(self, theme: themes.Theme) -> None:
        lut = np.linspace(pg.mkColor(theme.background).getRgb()[:3], pg.mkColor(theme.foreground).getRgb()[:3],
                          256).astype(np.uint8)
        for image, bars, truth, text in zip(self._images, self._bars, self._truth, self._texts):
            image.setLookupTable(lut)
            bars.setOpts(brush=pg.mkBrush(themes.colour(theme, "accent")), pen=pg.mkPen(None))
            truth.setOpts(brush=pg.mkBrush(None), pen=pg.mkPen(theme.foreground, width=1.5))
            text.setColor(theme.foreground)
        for classes in self._classes:
            for c in classes:
                c.setColor(theme.muted)

    def theme_changed(self, theme: themes.Theme) -> None:
        super().theme_changed(theme)
        self._style(theme)

    def show_result(self, r: DigitsResult, images: np.ndarray) -> None:
        n = len(r.indices)
        self._ensure(n)
        self._shown = n
        for i in range(len(self._images)):
            visible = i < n
            for it in (self._images[i], self._bars[i], self._truth[i], self._texts[i], *self._classes[i]):
                it.setVisible(visible)
            if not visible:
                continue
            x0, y0 = self._cell(i)
            top = y0 + SIDE  # the bars stand on the image's bottom edge (y grows downwards)
            unchanged.set_image(self._images[i], images[i], levels=(0.0, 16.0))
            self._images[i].setRect(QRectF(x0, y0, SIDE, SIDE))
            p = r.probabilities[i]
            xs = x0 + BAR_X0 + np.arange(N_CLASSES) * BAR_W + BAR_W / 2
            unchanged.set_opts(self._bars[i], x=xs, y0=top - p * SIDE, height=p * SIDE, width=BAR_W * 0.8)
            t = int(r.labels[i])
            unchanged.set_opts(self._truth[i], x=[xs[t]], y0=[y0], height=[SIDE], width=BAR_W * 0.8)
            for k, c in enumerate(self._classes[i]):
                c.setPos(xs[k], top)
            key = "learning.digit.right" if r.predicted[i] == t else "learning.digit.wrong"
            self._texts[i].setText(tr(key, label=t, predicted=int(r.predicted[i]),
                                      p=fmt(float(p[r.predicted[i]]), 2)))
            self._texts[i].setPos(x0, y0 - 0.3)
        rows = max(1, -(-n // COLUMNS))
        self.getPlotItem().setRange(xRange=(-0.5, COLUMNS * CELL_W - 1.5), yRange=(-2.5, rows * CELL_H - 2.5),
                                    padding=0)
        self.set_title(tr("learning.plot.digits.value", mistakes=r.mistakes, n=r.test_size, epoch=r.epoch))

    def texts(self) -> list[str]:
        """The captions shown (for tests)."""
        return [t.toPlainText() for t in self._texts[:self._shown]]
