"""The readouts of this step and the table of passes over memory; each shows a result in ``show_result``."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QTableWidget, QTableWidgetItem

from compute import MEMORY_METHODS, memory_passes
from gui.format import fmt
from gui.model.online import ITEMSIZE, AttentionRun, RowResult
from gui.model.texts import tr

#: The readout rows, in order (BaseView.readout_box makes their labels).
KEYS = ("online.readout.step", "online.readout.block", "online.readout.m", "online.readout.d",
        "online.readout.rescale", "online.readout.block_partial", "online.readout.partial",
        "online.readout.diff")
#: The rows that describe the step itself (all "–" at step 0).
STEP_KEYS = ("block", "m", "d", "rescale", "block_partial")


def spread(values: np.ndarray) -> str:
    """A few values in full; more as "lo … hi (count nodes)"."""
    if len(values) <= 3:
        return ", ".join(fmt(v) for v in values)
    all_nan = np.isnan(values).all()
    return tr("online.range", lo="NaN" if all_nan else fmt(np.nanmin(values)),
              hi="NaN" if all_nan else fmt(np.nanmax(values)), count=len(values))


def diff_text(v: float) -> str:
    return "NaN" if math.isnan(v) else "0" if v == 0 else f"{v:.2e}"


class _Readouts:
    """Writes the texts of one result into the readout labels (shared by both modes)."""

    def __init__(self, labels: dict[str, QLabel]):
        self.labels = labels

    def _set(self, texts: dict[str, str]) -> None:
        for key, text in texts.items():
            self.labels[f"online.readout.{key}"].setText(text)

    @staticmethod
    def _progress(r: RowResult | AttentionRun, partial_difference: float) -> dict[str, str]:
        """Step, gap so far and final difference: the rows both modes fill alike."""
        return {
            "step": tr("online.step.label", step=r.step, steps=r.n_steps),
            "partial": diff_text(partial_difference) if r.step else tr("online.readout.none"),
            "diff": diff_text(r.max_abs_difference) if r.done else tr("online.readout.at_end"),
        }


class RowReadouts(_Readouts):
    """This step of a sequential or tree run: the block or level, m, d, the rescale factor."""

    def show_result(self, r: RowResult) -> None:
        texts = self._sequential(r) if r.mode == "sequential" else self._tree(r)
        if texts is None:
            texts = dict.fromkeys(STEP_KEYS, tr("online.readout.none"))
        self._set({**texts, **self._progress(r, r.partial_difference)})

    @staticmethod
    def _sequential(r: RowResult) -> dict[str, str] | None:
        s = r.current
        if s is None:
            return None
        key = ("online.rescale.first" if s.d_before == 0 else
               "online.rescale.value" if s.max_changed else "online.rescale.same")
        return {
            "block": tr("online.block.span", index=s.index + 1, blocks=r.n_steps, first=s.start + 1, last=s.stop),
            "m": f"{fmt(s.m_before)} → {fmt(s.m_after)}",
            "d": f"{fmt(s.d_before)} → {fmt(s.d_after)}",
            "rescale": tr(key, factor=fmt(s.rescale, 4)),
            "block_partial": f"({fmt(s.m_block)}, {fmt(s.d_block)})",
        }

    @staticmethod
    def _tree(r: RowResult) -> dict[str, str] | None:
        level = r.current_level
        if not level:
            return None
        lv = level[0].level
        merges = sum(1 for node in level if node.right is not None)
        factors = [f for node in level if node.right is not None for f in (node.rescale_left, node.rescale_right)]
        return {
            "block": (tr("online.tree.leaves", count=len(level)) if lv == 0
                      else tr("online.tree.level", level=lv, merges=merges)),
            "m": spread(np.array([node.m for node in level])),
            "d": spread(np.array([node.d for node in level])),
            "rescale": (tr("online.rescale.smallest", factor=fmt(min(factors), 4)) if factors
                        else tr("online.readout.none")),
            "block_partial": tr("online.tree.nodes", count=len(level)),
        }


class AttentionReadouts(_Readouts):
    """This tile of the attention loop, told for the last query row (it sees every key)."""

    def show_result(self, r: AttentionRun) -> None:
        s = r.current
        if s is None:
            texts = dict.fromkeys(STEP_KEYS, tr("online.readout.none"))
        else:
            i = r.n - 1  # the last query row sees every key, with or without the causal mask
            row = f"q{r.n}"
            changed = int(np.sum(s.rescale < 1))
            texts = {
                "block": tr("online.tile.span", first=s.start + 1, last=s.stop),
                "m": tr("online.last_row", row=row, text=f"{fmt(s.m_before[i])} → {fmt(s.m_after[i])}"),
                "d": tr("online.last_row", row=row, text=f"l: {fmt(s.l_before[i])} → {fmt(s.l_after[i])}"),
                "rescale": tr("online.rescale.rows", changed=changed, rows=r.n,
                              factor=fmt(float(np.min(s.rescale)), 4)),
                "block_partial": tr("online.last_row", row=row, text=f"max {fmt(s.m_tile[i])}"),
            }
        gap = float(np.max(np.abs(r.partial_output - r.reference)))
        self._set({**texts, **self._progress(r, gap)})


class PassTable(QTableWidget):
    """Passes over global memory for safe, online and fused softmax, and the bytes for this row."""

    COLUMNS = ("passes", "reads", "writes", "bytes")

    def __init__(self):
        super().__init__(len(MEMORY_METHODS), len(self.COLUMNS))
        self.setHorizontalHeaderLabels([tr(f"online.passes.{c}") for c in self.COLUMNS])
        self.setVerticalHeaderLabels([tr(f"online.passes.{m}") for m in MEMORY_METHODS])
        for r, method in enumerate(MEMORY_METHODS):
            self.verticalHeaderItem(r).setToolTip(tr(f"online.passes.{method}.tooltip"))
            for c in range(len(self.COLUMNS)):
                item = QTableWidgetItem()
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                item.setToolTip(tr(f"online.passes.{method}.tooltip"))
                self.setItem(r, c, item)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.verticalHeader().setDefaultSectionSize(22)
        self.setToolTip(tr("online.passes.tooltip"))
        self.setFixedHeight(26 + 22 * len(MEMORY_METHODS) + 4)
        self._n = -1

    def show_result(self, r: RowResult) -> None:
        height = self.horizontalHeader().sizeHint().height() + 22 * len(MEMORY_METHODS) + 2 * self.frameWidth()
        if self.height() != height:
            self.setFixedHeight(height)
        if r.n == self._n:
            return
        self._n = r.n
        for row, method in enumerate(MEMORY_METHODS):
            t = memory_passes(method)
            for c, v in enumerate((t.passes, t.reads, t.writes, t.bytes(r.n, ITEMSIZE))):
                self.item(row, c).setText(f"{v:,}")
