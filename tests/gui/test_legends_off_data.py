"""Legends never sit on data: the Log-domain plots and the Attention d_k sweep, in the window.

The check is independent of :mod:`gui.widgets.legends` (which counts points in
view-box pixels): every data item's points are mapped to the scene through the
item's own scene transform, each line is walked in 1 px steps, every bar is
mapped as a rectangle, and no visible point or bar may fall inside a legend's
scene rectangle.
"""

import numpy as np
import pytest
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QPolygonF

from gui.qt import pg

#: (view, plot attribute) of every plot checked.
PLOTS = [("log-domain", "lse"), ("log-domain", "gradient"), ("log-domain", "sigmoid"),
         ("log-domain", "difference"), ("attention", "sweep")]
SIZES = [(1280, 800), (1920, 1080)]


@pytest.fixture(scope="module", params=SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def window(request, qapp, tmp_path_factory):
    from gui.app import MainWindow

    w = MainWindow(settings_dir=tmp_path_factory.mktemp("legend-config"), restore=False)
    w.set_theme("light")
    w.resize(*request.param)
    w.show()
    yield w
    w.close()


def shown_plot(window, qapp, view_name: str, attr: str):
    view = window.show_view(view_name)
    for _ in range(5):
        qapp.processEvents()
    view.flush()
    for _ in range(2):  # a legend finds its place before a paint; one moved above the plot needs a layout pass
        window.grab()
        qapp.processEvents()
    return getattr(view, attr)


def view_boxes(plot) -> list:
    boxes = [plot.getPlotItem().getViewBox()]
    right = getattr(plot, "right", None)  # the sweep's right-hand axis box
    if right is not None:
        boxes.append(right)
    return boxes


def legends_of(plot) -> list:
    out = list(getattr(plot, "_legends", []))
    own = plot.getPlotItem().legend
    if own is not None and own not in out:
        out.append(own)
    return [lg for lg in out if lg.isVisible() and lg.items]


def data_points(plot) -> np.ndarray:
    """Scene points of everything the plot's data items draw inside their view box, lines in 1 px steps."""
    out = []
    for vb in view_boxes(plot):
        clip = vb.sceneBoundingRect()
        for el in vb.addedItems:
            if not el.isVisible() or not isinstance(el, pg.PlotDataItem):
                continue
            x, y = el.getData()
            if x is None or len(x) == 0:
                continue
            ok = np.isfinite(x) & np.isfinite(y)
            poly = el.sceneTransform().map(QPolygonF([QPointF(a, b) for a, b in zip(x[ok], y[ok])]))
            pts = np.array([[p.x(), p.y()] for p in poly])
            if el.opts.get("pen") is not None and len(pts) > 1:
                steps = [np.linspace(a, b, max(2, int(np.hypot(*(b - a))) + 1)) for a, b in zip(pts[:-1], pts[1:])]
                pts = np.vstack(steps)
            inside = ((pts[:, 0] >= clip.left()) & (pts[:, 0] <= clip.right())
                      & (pts[:, 1] >= clip.top()) & (pts[:, 1] <= clip.bottom()))
            out.append(pts[inside])
    return np.vstack(out) if out else np.zeros((0, 2))


def bar_rects(plot) -> list[QRectF]:
    rects = []
    vb = plot.getPlotItem().getViewBox()
    for el in vb.addedItems:
        if isinstance(el, pg.BarGraphItem) and el.isVisible():
            o = el.opts
            for x, h in zip(np.atleast_1d(o["x"]), np.atleast_1d(o["height"])):
                w = o["width"]
                rect = el.sceneTransform().mapRect(QRectF(x - w / 2, min(0.0, h), w, abs(h)))
                rects.append(rect.intersected(vb.sceneBoundingRect()))
    return [r for r in rects if r.width() > 0 and r.height() > 0]


@pytest.mark.parametrize("view_name, attr", PLOTS)
def test_no_legend_covers_a_data_point_or_a_bar(window, qapp, view_name, attr):
    plot = shown_plot(window, qapp, view_name, attr)
    found = legends_of(plot)
    assert found, "the plot has a legend"
    points = data_points(plot)
    bars = bar_rects(plot)
    assert len(points) or bars, "the plot draws something"
    for legend in found:
        rect = legend.sceneBoundingRect()
        assert rect.width() > 0 and rect.height() > 0
        inside = ((points[:, 0] > rect.left()) & (points[:, 0] < rect.right())
                  & (points[:, 1] > rect.top()) & (points[:, 1] < rect.bottom()))
        assert not inside.any(), (f"{view_name}.{attr}: {int(inside.sum())} points under the legend {rect}, "
                                  f"e.g. {points[inside][:3]}")
        for bar in bars:
            assert not bar.intersects(rect.adjusted(1, 1, -1, -1)), f"{view_name}.{attr}: a bar under the legend"
        # and the legend stays inside its plot (a row above the data spans the plot item's width)
        frame = plot.getPlotItem().sceneBoundingRect()
        assert frame.adjusted(-1, -1, 1, 1).contains(rect), (rect, frame)


@pytest.mark.parametrize("view_name, attr", PLOTS)
def test_a_legend_above_the_plot_leaves_the_data_its_height(window, qapp, view_name, attr):
    """A legend moved off the data does not squash it: above the plot it takes at most a quarter of
    the widget's height (the sweep's six-entry legend once took three 26 px rows of a 182 px plot)."""
    plot = shown_plot(window, qapp, view_name, attr)
    vb = plot.getPlotItem().getViewBox()
    for legend in legends_of(plot):
        if not legend.sceneBoundingRect().intersects(vb.sceneBoundingRect()):
            assert legend.sceneBoundingRect().height() <= 0.25 * plot.height()
    assert vb.height() >= 0.4 * plot.height(), (vb.height(), plot.height())


def test_the_check_sees_a_legend_on_data(window, qapp):
    """The check can fail: a legend dragged onto the middle of the sigmoid curve covers points."""
    plot = shown_plot(window, qapp, "log-domain", "sigmoid")
    legend = legends_of(plot)[0]
    vb = plot.getPlotItem().getViewBox()
    probe = pg.LegendItem()
    probe.setParentItem(vb)
    try:
        probe.setGeometry(QRectF(0, 0, legend.boundingRect().width(), legend.boundingRect().height()))
        centre = vb.mapViewToScene(QPointF(0.0, 0.5))
        probe.setPos(probe.parentItem().mapFromScene(centre) - QPointF(probe.boundingRect().width() / 2, 0))
        rect = probe.sceneBoundingRect()
        points = data_points(plot)
        inside = ((points[:, 0] > rect.left()) & (points[:, 0] < rect.right())
                  & (points[:, 1] > rect.top()) & (points[:, 1] < rect.bottom()))
        assert inside.any()
    finally:
        probe.setParentItem(None)
        plot.scene().removeItem(probe)
