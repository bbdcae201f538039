"""Value labels send no geometry changes (no Python itemChange per move): they must still land, and
paint, exactly where labels that do send them land."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QGraphicsItem

from gui.widgets.bar_chart import BarChart

FLAG = QGraphicsItem.GraphicsItemFlag.ItemSendsGeometryChanges


def _chart(qtbot, notify: bool) -> BarChart:
    chart = BarChart("t", [("a", 0), ("b", 1)])
    qtbot.addWidget(chart)
    chart.resize(480, 320)
    chart.show()
    qtbot.waitExposed(chart)
    chart.set_data([f"w{i}" for i in range(8)], [np.linspace(0.05, 0.4, 8), np.linspace(0.3, 0.02, 8)])
    if notify:
        for text in chart.values._texts:
            text.setFlag(FLAG, True)
    return chart


def test_labels_without_geometry_changes_land_and_paint_alike(qtbot):
    quiet, noisy = _chart(qtbot, False), _chart(qtbot, True)
    assert quiet.values._texts and not any(t.flags() & FLAG for t in quiet.values._texts)
    rng = np.random.default_rng(5)
    for step in range(4):  # new heights and a y range that follows them: labels move and turn
        heights = [rng.random(8) * (0.5 + step), rng.random(8) * 0.3]
        for chart in (quiet, noisy):
            with chart.batched():
                chart.set_data([f"w{i}" for i in range(8)], heights)
                chart.set_y_range(0.0, float(max(h.max() for h in heights)) * 1.15)
        qtbot.wait(10)
        where = [[(t.isVisible(), t.pos().x(), t.pos().y(), t.angle, t.toPlainText()) for t in c.values._texts[:16]]
                 for c in (quiet, noisy)]
        assert where[0] == where[1]
        a, b = quiet.grab().toImage(), noisy.grab().toImage()
        assert a == b
