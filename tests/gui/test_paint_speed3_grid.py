"""The plots' translucent grid lines blitted from cached images (gui/widgets/grid_lines.py) paint the same pixels.

Every comparison is bit for bit, against the same lines drawn by QPainter itself (on images) or the
same plot with its axes painted by pyqtgraph's own ``AxisItem.paint``, never against stored numbers.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QPointF, QRect
from PySide6.QtGui import QColor, QImage, QPainter, QPen
from PySide6.QtWidgets import QApplication

from gui import theme as themes
from gui.qt import pg
from gui.widgets import grid_lines
from gui.widgets.bar_chart import BarChart
from gui.widgets.plot import Plot
from gui.widgets.ticks import FittedAxis


def pixels(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_ARGB32)
    h, stride = image.height(), image.bytesPerLine()
    return np.frombuffer(image.constBits(), dtype=np.uint8, count=h * stride).reshape(h, stride).copy()


@pytest.fixture
def direct(monkeypatch):
    """Call ``direct(f, widget)``: f() with the widget's axes painted by pyqtgraph's own AxisItem.paint."""
    def run(f, widget):
        found = [a for a in widget.scene().items() if isinstance(a, FittedAxis)]
        assert found
        for a in found:
            a.picture = None
        with monkeypatch.context() as m:
            m.setattr(FittedAxis, "paint", pg.AxisItem.paint)
            out = f()
        for a in found:
            a.picture = None  # pyqtgraph's picture is not the one FittedAxis.paint keeps
        return out
    return run


# -- the layers themselves, on images ---------------------------------------------------------------
#: Coordinates on the 1/64 pixel grid and just off it, as layouts make them (52.011109 + 349.988891 = 402.0).
coordinate = st.builds(lambda k, eps: k / 64 + eps, st.integers(0, 150 * 64),
                       st.sampled_from([0.0, 1e-9, -1e-9, 0.011109, 0.988891, 1 / 3]))
offset = st.builds(lambda k, frac: k + frac, st.integers(-3, 40),
                   st.sampled_from([0.0, 0.5, 0.25, 0.011109, 0.988891, 52.011109 - 52, 1 / 3]))


@st.composite
def line_sets(draw):
    vertical = draw(st.booleans())
    n = draw(st.integers(1, 6))
    lines = []
    for _ in range(n):
        c, lo, hi = draw(coordinate), draw(coordinate), draw(coordinate)
        lines.append((c, lo, c, hi) if vertical else (lo, c, hi, c))
    return lines


def noise(w: int, h: int, seed: int, fmt: QImage.Format) -> QImage:
    """An image of random opaque pixels (what the lines blend over)."""
    rgb = np.random.default_rng(seed).integers(0, 256, (h, w, 4), dtype=np.uint8)
    rgb[..., 3] = 255
    image = QImage(rgb.data, w, h, 4 * w, QImage.Format.Format_ARGB32).copy()
    return image.convertToFormat(fmt)


@settings(max_examples=120, deadline=None)
# found by Hypothesis: two lines on one pixel with a third between them once went into one image (blended once)
@example(lines=[(0.0, 0.0, 0.0, 0.0), (2.000000001, 0.0, 2.000000001, 0.0), (0.0, 0.0, 0.0, 0.0)], tx=0.0, ty=0.0,
         alpha=1, rgb=0, width=0.0, seed=0, clip=None, fmt=QImage.Format.Format_RGB32)
# a horizontal grid line on the plot's bottom edge, at device y = 402.0 (a last-bit rounding once moved it a row)
@example(lines=[(41.6625, 349.988891, 419.5, 349.988891)], tx=1.0, ty=52.011109, alpha=38, rgb=0x63676E,
         width=0.0, seed=1, clip=None, fmt=QImage.Format.Format_RGB32)
@given(lines=line_sets(), tx=offset, ty=offset, alpha=st.integers(1, 254), rgb=st.integers(0, 0xFFFFFF),
       width=st.sampled_from([0.0, 1.0, 2.0]), seed=st.integers(0, 2**16),
       clip=st.one_of(st.none(), st.tuples(st.integers(0, 160), st.integers(0, 160), st.integers(1, 160),
                                           st.integers(1, 160))),
       fmt=st.sampled_from([QImage.Format.Format_RGB32, QImage.Format.Format_ARGB32_Premultiplied]))
def test_layers_paint_what_qpainter_paints(lines, tx, ty, alpha, rgb, width, seed, clip, fmt):
    colour = QColor(rgb)
    colour.setAlpha(alpha)
    pen = QPen(colour)
    pen.setWidthF(width)
    pen.setCosmetic(True)
    specs = [(pen, QPointF(x0, y0), QPointF(x1, y1)) for x0, y0, x1, y1 in lines]
    assert grid_lines.layerable(pen)

    def paint(layered: bool) -> np.ndarray:
        image = noise(200, 190, seed, fmt)
        p = QPainter(image)
        p.translate(tx, ty)
        if clip is not None:
            p.setClipRect(QRect(*clip).translated(-int(tx), -int(ty)))
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        if layered:
            assert grid_lines.usable(p)
            layers.draw(p, specs)
        else:
            p.setPen(pen)
            for _pen, a, b in specs:
                p.drawLine(a, b)
        p.end()
        return pixels(image)

    layers = grid_lines.GridLayers()
    want = paint(False)
    np.testing.assert_array_equal(paint(True), want)  # first seen: QPainter draws them
    assert layers.built == 0
    np.testing.assert_array_equal(paint(True), want)  # seen again: into images
    assert layers.built + layers.direct >= 1
    built = layers.built
    np.testing.assert_array_equal(paint(True), want)  # from the cache
    assert layers.built == built


def test_near_lines_get_images_of_their_own_and_still_blend_twice_where_they_meet():
    colour = QColor(99, 103, 110, 38)
    pen = QPen(colour, 0)
    # three vertical lines: the second 0.4 px from the first (one pixel column, blended twice), the third far off
    specs = [(pen, QPointF(x, 2.0), QPointF(x, 60.0)) for x in (10.2, 10.6, 30.0)]
    runs = grid_lines._groups(specs)
    assert [len(r) for r in runs] == [1, 2]

    layers = grid_lines.GridLayers()

    def paint(layered):
        image = QImage(50, 70, QImage.Format.Format_RGB32)
        image.fill(QColor("white"))
        p = QPainter(image)
        if layered:
            layers.draw(p, specs)
        else:
            p.setPen(pen)
            for _pen, a, b in specs:
                p.drawLine(a, b)
        p.end()
        return pixels(image)

    want = paint(False)
    np.testing.assert_array_equal(paint(True), want)
    np.testing.assert_array_equal(paint(True), want)
    assert layers.built == 2  # the two runs' images, drawn the second time
    assert len(np.unique(want.reshape(70, 50, 4)[30, :, 0])) == 3  # white, one line, two lines over each other


def test_no_layer_where_the_painter_scales_or_fades():
    image = QImage(10, 10, QImage.Format.Format_RGB32)
    p = QPainter(image)
    assert grid_lines.usable(p)
    p.scale(2, 2)
    assert not grid_lines.usable(p)
    p.resetTransform()
    p.setOpacity(0.5)
    assert not grid_lines.usable(p)
    p.end()
    assert not grid_lines.layerable(QPen(QColor(0, 0, 0, 255)))  # opaque: QPainter is fast there
    assert not grid_lines.layerable(QPen(QColor(0, 0, 0, 0)))


# -- in the plots ----------------------------------------------------------------------------------------
def curve_plot(qtbot, size) -> Plot:
    plot = Plot("grid", x_label="x", y_label="y")
    qtbot.addWidget(plot)
    x = np.linspace(0, 3.7, 40)
    plot.getPlotItem().plot(x, np.sin(x) * 1.3)
    plot.resize(*size)
    plot.show()
    qtbot.waitExposed(plot)
    for _ in range(3):
        QApplication.processEvents()
    return plot


def axes(plot):
    item = plot.getPlotItem()
    return [item.getAxis("left"), item.getAxis("bottom")]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(w=st.integers(230, 520), h=st.integers(170, 420), lo=st.floats(-3, 0), span=st.floats(0.3, 7))
def test_a_plot_with_layers_grabs_as_it_does_without(qtbot, direct, w, h, lo, span):
    plot = curve_plot(qtbot, (w, h))
    plot.getPlotItem().setYRange(lo, lo + span, padding=0)
    QApplication.processEvents()
    first = pixels(plot.grab().toImage())  # first seen at the grab's offset: drawn by QPainter
    with_layers = pixels(plot.grab().toImage())
    assert all(a._grid_lines for a in axes(plot))  # the grid's lines do go through the layers
    assert sum(a._grid_layers.built for a in axes(plot)) >= 2
    np.testing.assert_array_equal(first, with_layers)
    np.testing.assert_array_equal(with_layers, direct(lambda: pixels(plot.grab().toImage()), plot))


def test_on_screen_too_at_the_viewport_s_place_in_the_window(qtbot, direct):
    plot = curve_plot(qtbot, (410, 300))

    def screen():
        plot.viewport().repaint()
        return pixels(QApplication.primaryScreen().grabWindow(plot.winId()).toImage())

    screen()
    built = sum(a._grid_layers.built for a in axes(plot))
    layered = screen()
    assert sum(a._grid_layers.built for a in axes(plot)) == built  # from the images made before
    assert built >= 2 and (layered != 255).any()
    np.testing.assert_array_equal(layered, direct(screen, plot))


def test_a_theme_change_repaints_the_grid_in_the_new_colours(qtbot, direct):
    manager = themes.manager()
    start = manager.mode
    try:
        manager.set_mode("light")
        plot = curve_plot(qtbot, (400, 300))
        plot.grab()
        light = pixels(plot.grab().toImage())
        manager.set_mode("dark")
        QApplication.processEvents()
        plot.grab()
        dark = pixels(plot.grab().toImage())
        fresh = curve_plot(qtbot, (400, 300))
        np.testing.assert_array_equal(dark, direct(lambda: pixels(fresh.grab().toImage()), fresh))
        assert (dark != light).any()
        manager.set_mode("light")
        QApplication.processEvents()
        plot.grab()
        np.testing.assert_array_equal(pixels(plot.grab().toImage()), light)
    finally:
        manager.set_mode(start)


def test_a_bar_chart_s_grid_follows_new_bars_and_labels(qtbot, direct):
    chart = BarChart("bars", [("p", "accent")])
    qtbot.addWidget(chart)
    chart.resize(420, 320)
    chart.show()
    qtbot.waitExposed(chart)
    chart.set_data(["a", "b", "c"], [np.array([0.2, 0.5, 0.3])])
    QApplication.processEvents()
    first = pixels(chart.grab().toImage())
    chart.set_data(["a", "b", "c", "d", "e"], [np.array([0.1, 0.1, 0.6, 0.1, 0.1])])
    QApplication.processEvents()
    chart.grab()
    second = pixels(chart.grab().toImage())
    assert first.shape != second.shape or (first != second).any()
    np.testing.assert_array_equal(second, direct(lambda: pixels(chart.grab().toImage()), chart))


def test_exports_that_scale_draw_pyqtgraph_s_whole_picture(qtbot, direct):
    plot = curve_plot(qtbot, (300, 220))

    def export():
        exporter = pg.exporters.ImageExporter(plot.getPlotItem())
        exporter.parameters()["width"] = 600  # twice the size: the painter scales, no layer may be used
        return pixels(exporter.export(toBytes=True))

    before = sum(a._grid_layers.built for a in axes(plot))
    image = export()
    assert image.shape[1] == 4 * 600
    assert sum(a._grid_layers.built for a in axes(plot)) == before
    assert all(a._whole is not None for a in axes(plot))  # made for this painter only
    np.testing.assert_array_equal(image, direct(export, plot))


def test_a_hidden_plot_lets_go_of_its_images_and_paints_the_same_when_shown_again(qtbot, direct):
    plot = curve_plot(qtbot, (380, 280))
    plot.grab()
    before = pixels(plot.grab().toImage())
    assert any(a._grid_layers._cache for a in axes(plot))
    plot.hide()
    assert not any(a._grid_layers._cache or a._grid_layers._seen for a in axes(plot))
    plot.show()
    qtbot.waitExposed(plot)
    plot.grab()
    np.testing.assert_array_equal(pixels(plot.grab().toImage()), before)
    assert any(a._grid_layers._cache for a in axes(plot))  # made anew
    np.testing.assert_array_equal(before, direct(lambda: pixels(plot.grab().toImage()), plot))
