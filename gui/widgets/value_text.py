"""Text items for the many value labels of one plot: pyqtgraph's TextItem, with cheaper transform updates.

A :class:`pyqtgraph.TextItem` keeps its text unscaled inside a zoomed view by
giving itself the inverse of its parent's scene transform (less the
translation), turned by its angle.  It recomputes that on every change of the
view's transform and before every paint of the scene, one label at a time,
and then re-anchors its text, though the anchor offset depends only on the
text's size and the anchor, not on the view.  A bar chart or heatmap shows up
to hundreds of labels under one parent, so every slider step paid this per
label (about 0.8 ms of a Sampling step at V = 200,000).

:class:`ValueText` computes the transform once per parent transform and angle
for all the labels that share a :class:`Turns`, and re-anchors only when the
text's size or the anchor changed.  The results are the very same transforms
and positions (``tests/gui/test_value_text.py`` compares them with
pyqtgraph's own, and the pixels).  A text with a ``rotateAxis`` keeps
pyqtgraph's code.
"""

from __future__ import annotations

from PySide6.QtGui import QTransform

from gui.qt import pg


class Turns:
    """The transform a label under a parent with scene transform ``pt`` needs at each angle, the last one computed."""

    def __init__(self):
        self._last: dict[float, tuple[QTransform, QTransform]] = {}  # angle -> (parent transform, label transform)

    def transform(self, pt: QTransform, angle: float) -> QTransform:
        last = self._last.get(angle)
        if last is not None and last[0] == pt:
            return last[1]
        # pyqtgraph's TextItem.updateTransform, step for step (so the same bits)
        t = pg.functions.invertQTransform(pt)
        t.setMatrix(t.m11(), t.m12(), t.m13(), t.m21(), t.m22(), t.m23(), 0, 0, t.m33())
        t.rotate(-angle)
        if len(self._last) > 8:
            self._last.clear()
        self._last[angle] = (QTransform(pt), t)
        return t


class ValueText(pg.TextItem):
    """A :class:`pyqtgraph.TextItem` sharing its transform computation with the others of a :class:`Turns`."""

    def __init__(self, turns: Turns, *args, **kwargs):
        self._turns = turns
        self._placed: tuple[float, float, float, float] | None = None  # (width, height, anchor x, anchor y) last anchored
        super().__init__(*args, **kwargs)

    def updateTextPos(self):
        # pyqtgraph maps the text's bounding rect's corners to this item and scales their difference by the
        # anchor: the text item is only translated, so that difference is the rect's size
        r = self.textItem.boundingRect()
        key = (r.width(), r.height(), float(self.anchor.x()), float(self.anchor.y()))
        if key != self._placed:
            self._placed = key
            self.textItem.setPos(-(key[0] * key[2]), -(key[1] * key[3]))

    def updateTransform(self, force=False):
        if self.rotateAxis is not None:
            return super().updateTransform(force)
        if not self.isVisible():
            return
        p = self.parentItem()
        pt = QTransform() if p is None else p.sceneTransform()
        if not force and pt == self._lastTransform:
            return
        self.setTransform(self._turns.transform(pt, self.angle))
        self._lastTransform = pt
        self.updateTextPos()
