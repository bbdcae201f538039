"""Draw one plot as a figure: laid out at the export size, drawn to PNG or SVG.

The plot on screen is whatever shape the window gives it (a tall column,
a wide strip).  A figure is laid out at :attr:`ExportOptions.layout`
(landscape by default) for the time of the export and put back at once;
nothing is repainted in between, so the window never shows it.  While it
is laid out, interaction hints are taken out of its texts: a hint is a
part in parentheses naming an action ("q (click to pin)"), the actions
listed in the ``export.hint_words`` text.

The PNG is drawn on an image whose device pixel ratio is ``dpi / 96``:
Qt then scales text, legends and symbols together, exactly as on a
high-resolution screen; cosmetic (1 px) pens, which Qt leaves at their
width in device pixels, are widened by the same factor (gui.export.pens).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from PySide6.QtCore import QRectF, QSize
from PySide6.QtGui import QColor, QFontInfo, QGuiApplication, QImage, QPainter, QResizeEvent
from PySide6.QtWidgets import QGraphicsWidget

from gui.export.options import CSS_DPI, ExportOptions
from gui.export.pens import wider_pens
from gui.export.svg_fix import fix_svg, font_list
from gui.model.texts import tr
from gui.qt import pg

_MAX_SIZE = 16777215  # QWIDGETSIZE_MAX
_PARENS = re.compile(r"\s*[(（]([^()（）]*)[)）]")
_TAGS = re.compile(r"<[^>]*>")


def hint_words() -> tuple[str, ...]:
    return tuple(w.strip().lower() for w in tr("export.hint_words").split(",") if w.strip())


def without_hints(text: str, words: tuple[str, ...] | None = None) -> str:
    """``text`` less its parenthesised interaction hints.

    >>> without_hints("q (click to pin)", ("click",))
    'q'
    >>> without_hints("entmax (α = 1.50)", ("click",))
    'entmax (α = 1.50)'
    >>> without_hints("p (compressed)", ("press",))
    'p (compressed)'
    """
    words = hint_words() if words is None else words

    def drop(m: re.Match) -> str:
        inner = m.group(1).lower()
        hint = any(re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", inner) for w in words)
        return "" if hint else m.group(0)

    return _PARENS.sub(drop, text)


def plain(text: str) -> str:
    """A label's HTML as plain text (for the SVG's title)."""
    return html.unescape(_TAGS.sub("", text)).strip()


def _strip_hints(item: pg.PlotItem) -> list[Callable[[], None]]:
    """Take the hints out of every text of the plot; returns what puts them back."""
    words = hint_words()
    undo: list[Callable[[], None]] = []
    for el in item.scene().items():
        if isinstance(el, pg.LabelItem) and el.text:
            old = el.text
            new = without_hints(old, words)
            if new != old:
                el.setText(new)
                undo.append(lambda el=el, old=old: el.setText(old))
        elif isinstance(el, pg.TextItem):
            old_plain = el.toPlainText()
            new = without_hints(old_plain, words)
            if new != old_plain:
                old_html = el.textItem.toHtml()
                el.setText(new)
                undo.append(lambda el=el, h=old_html: el.setHtml(h))
        elif isinstance(el, pg.AxisItem) and el.labelText:
            old = el.labelText
            new = without_hints(old, words)
            if new != old:
                el.labelText = new
                el._updateLabel()

                def put_back(el=el, old=old):
                    el.labelText = old
                    el._updateLabel()

                undo.append(put_back)
    return undo


def background(plot) -> QColor:
    return QColor(plot.backgroundBrush().color())


def _screen_dpi() -> float:
    screen = QGuiApplication.primaryScreen()
    return float(screen.logicalDotsPerInch()) if screen is not None else CSS_DPI


def _layout_state(scene) -> tuple:
    return tuple(el.sceneBoundingRect().getRect() for el in scene.items() if isinstance(el, QGraphicsWidget))


def _settle(plot) -> None:
    """Lay the plot out at its widget's size until it stops changing.

    Axes find the room their tick labels need only while they paint, and
    the plot fits its title and legends to the room the axes leave: a
    throwaway paint, the plot's own resize handling and its layouts are
    repeated until nothing moves, so the PNG and the SVG (and the screen,
    once the plot is put back) are drawn from the same, final layout.
    """
    item = plot.getPlotItem()
    scene = item.scene()
    size = plot.size()
    scratch = QImage(max(1, size.width()), max(1, size.height()), QImage.Format.Format_ARGB32)
    dpm = round(_screen_dpi() / 0.0254)
    scratch.setDotsPerMeterX(dpm)
    scratch.setDotsPerMeterY(dpm)
    before = None
    for _ in range(5):
        plot.resizeEvent(QResizeEvent(size, size))
        for el in scene.items():
            # pyqtgraph's items keep their layout in an attribute that hides the method
            layout = QGraphicsWidget.layout(el) if isinstance(el, QGraphicsWidget) else None
            if layout is not None:
                layout.activate()
        scene.prepareForPaint()  # view boxes update their transforms
        now = _layout_state(scene)
        if now == before:
            return
        before = now
        painter = QPainter(scratch)
        try:
            scene.render(painter, QRectF(scratch.rect()), item.sceneBoundingRect())
        finally:
            painter.end()


def _resize(plot, size: QSize) -> None:
    """Resize the plot widget now, shown or not, so everything sized from it follows."""
    old = plot.size()
    if size.width() < plot.minimumWidth() or size.height() < plot.minimumHeight():
        plot.setMinimumSize(0, 0)
    if size.width() > plot.maximumWidth() or size.height() > plot.maximumHeight():
        plot.setMaximumSize(_MAX_SIZE, _MAX_SIZE)
    plot.resize(size)
    if not plot.isVisible() and old != size:
        # A widget not shown yet (a plot on another tab) gets its resize event only when
        # shown, and Qt drops one sent before it was ever created: deliver it by hand.
        plot.resizeEvent(QResizeEvent(size, old))


def layout_size(options: ExportOptions) -> QSize:
    """The export layout in whole widget pixels."""
    w, h = options.layout
    return QSize(round(w), round(h))


@contextmanager
def laid_out(plot, options: ExportOptions) -> Iterator[pg.PlotItem]:
    """The plot laid out at the export size, without hints; put back afterwards.

    The plot *widget* is resized (not only its PlotItem), so whatever the
    plots fit to their widget's size (titles, legends, cell numbers, tick
    labels) is fitted to the figure; no event is processed in between, so
    neither its layout nor a repaint sees the export size.
    """
    item = plot.getPlotItem()
    old_size, old_min, old_max = plot.size(), plot.minimumSize(), plot.maximumSize()
    # First as on screen: what a plot decides once for good while it paints (a legend
    # moving out of the data for good) is then decided before the PNG, not between it and the SVG.
    _settle(plot)
    undo = _strip_hints(item)
    try:
        _resize(plot, layout_size(options))
        _settle(plot)
        yield item
    finally:
        for put_back in reversed(undo):
            put_back()
        _resize(plot, old_size)
        plot.setMinimumSize(old_min)
        plot.setMaximumSize(old_max)
        _settle(plot)


def render_png(plot, options: ExportOptions) -> QImage:
    """The plot as a ``options.width`` x ``options.height`` image, tagged with its dpi."""
    bg = background(plot)
    image = QImage(options.width, options.height, QImage.Format.Format_ARGB32)
    dpm = round(_screen_dpi() / 0.0254)  # text is measured as on screen, where it was laid out
    image.setDotsPerMeterX(dpm)
    image.setDotsPerMeterY(dpm)
    image.setDevicePixelRatio(options.scale)
    image.fill(bg)
    with laid_out(plot, options) as item, wider_pens(item.scene(), options.scale):
        exporter = pg.exporters.ImageExporter(item)  # for the items' export mode only
        painter = QPainter(image)
        try:
            exporter.setExportMode(True, {"antialias": True, "background": bg, "painter": painter,
                                          "resolutionScale": 1.0})
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
            item.scene().render(painter, QRectF(0, 0, *options.layout), item.sceneBoundingRect())
        finally:
            exporter.setExportMode(False)
            painter.end()
    image.setDevicePixelRatio(1.0)
    dpm = round(options.dpi / 0.0254)
    image.setDotsPerMeterX(dpm)
    image.setDotsPerMeterY(dpm)
    return image


def render_svg(plot, options: ExportOptions) -> bytes:
    """The plot as an SVG document that every renderer draws alike (see gui.export.svg_fix)."""
    from pyqtgraph.exporters.SVGExporter import generateSvg  # after gui.qt bound pyqtgraph to PySide6

    with laid_out(plot, options) as item:
        # The whole scene, as the PNG draws it: a second view box for a right-hand
        # axis is a top-level scene item, not a child of the PlotItem.
        size = layout_size(options)
        raw = generateSvg(item.scene(), {"width": size.width(), "height": size.height(),
                                         "background": background(plot), "scaling stroke": False}).encode("utf-8")
        title = plain(item.titleLabel.text) if item.titleLabel.isVisible() else ""
    family = QFontInfo(QGuiApplication.font()).family()
    return fix_svg(raw, size=(size.width(), size.height()), physical=options.layout,
                   background=background(plot).name(), fonts=font_list(family), title=title or None)
