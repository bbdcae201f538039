"""Legends and titles that keep off the data and inside their plot.

* :func:`outside_legend` puts a legend in a row of its own between a plot's
  title and its data (the cell of the hidden top axis), so it never covers
  a bar; :func:`fit_columns` gives it as many columns as the width allows.
* :func:`float_legend` is pyqtgraph's floating legend, moved to the corner
  of the plot that holds the fewest data points whenever the data or the
  range change (:func:`emptiest_corner`).
* :func:`elide_title` shortens the drawn title to the plot's width: a
  pyqtgraph title's minimum width otherwise widens the plot item past its
  widget, and the right part of the plot is cut off.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetricsF

from gui.qt import pg

#: Gap between a floating legend and the plot's edge, in pixels.
MARGIN = 6
#: Title font size (points), as Plot sets it.
TITLE_POINTS = 11.0


def outside_legend(item: pg.PlotItem, **kwargs) -> pg.LegendItem:
    """A legend in the row above the plot's data; named items added later join it."""
    kwargs.pop("offset", None)
    legend = pg.LegendItem(**kwargs)
    item.layout.removeItem(item.getAxis("top"))  # the hidden top axis's cell holds the legend instead
    item.layout.addItem(legend, 1, 1)
    item.legend = legend  # PlotItem.addItem adds named items to item.legend
    return legend


def fit_columns(legend: pg.LegendItem, most: int, room: float) -> None:
    """Lay ``legend`` out in the most columns (up to ``most``) whose widths fit ``room`` pixels."""
    if not legend.items:
        return
    spacing = legend.layout.horizontalSpacing()
    widths = [sample.boundingRect().width() + label.item.boundingRect().width() + 2 * spacing
              for sample, label in legend.items]
    cols = max(1, min(most, len(widths)))
    while cols > 1 and sum(max(widths[c::cols]) for c in range(cols)) > room:
        cols -= 1
    if cols == legend.columnCount and legend.layout.count() == 2 * len(legend.items):
        return
    for i in range(legend.layout.count() - 1, -1, -1):
        legend.layout.removeAt(i)
    for k, (sample, label) in enumerate(legend.items):
        row, col = divmod(k, cols)
        legend.layout.addItem(sample, row, 2 * col, alignment=Qt.AlignmentFlag.AlignVCenter)
        legend.layout.addItem(label, row, 2 * col + 1)
    legend.columnCount, legend.rowCount = cols, -(-len(widths) // cols)
    legend.updateSize()


def elide_title(label, title: str, room: float) -> None:
    """Draw ``title`` in ``label`` shortened with "…" to ``room`` pixels; ``label.text`` keeps it whole."""
    if not title or "<" in title or not label.isVisible():
        return
    font = QFont(label.item.font())
    font.setPointSizeF(TITLE_POINTS)
    shown = QFontMetricsF(font).elidedText(title, Qt.TextElideMode.ElideRight, max(room, 40.0))
    if shown != label.item.toPlainText():
        label.setText(shown)
    label.text = title  # exports and tests read the whole title


def float_legend(item: pg.PlotItem, **kwargs) -> pg.LegendItem:
    """pyqtgraph's floating legend (at ``offset``), kept in the emptiest corner from then on."""
    return item.addLegend(**kwargs)
