"""The Benchmark view's plots: GB/s against N and against rows (log-log), the fused attention's time.

Each throughput plot holds a curve per implementation (the copies, the
ceilings, drawn wide and muted under the others) and the same again
dashed for the saved run; the legend lists only the implementations that
run here or were measured, and one entry for the saved run.
"""

from __future__ import annotations

import math

import numpy as np

from gui import theme as themes
from gui.model.benchmark.backends import ALL, ATTENTION
from gui.model.benchmark.saved import SavedTable
from gui.model.benchmark.sweep import Sweep
from gui.model.texts import tr
from gui.widgets.curves import Curves

#: Each implementation's colour (a series index, or the muted role for the copies) and style.
ROLES: dict[str, str | int] = {"numpy": 0, "scipy": 1, "torch_cpu": 2, "copy": "muted", "cupy": 3, "cupyx": 4,
                               "torch_cuda": 5, "copy_cuda": 6}
STYLES = {"copy": "wide", "copy_cuda": "wide"}


def binary_ticks(lo: float, hi: float, step: int = 1) -> list[tuple[float, str]]:
    """Ticks at every ``step``-th power of two from ``lo`` to ``hi`` (and the last one) at their log10
    positions: 128, 512, 2048, 8K, ..., 1M (K = 1024, from 4K)."""
    out = []
    first, last = math.ceil(math.log2(lo) - 1e-9), math.floor(math.log2(hi) + 1e-9)
    for k in range(first, last + 1):
        if (k - first) % step and k != last:
            continue
        v = 1 << k
        text = f"{v >> 20}M" if v >= 1 << 20 else f"{v >> 10}K" if v >= 1 << 12 else str(v)
        out.append((math.log10(v), text))
    return out


class ThroughputPlot(Curves):
    """GB/s against a log x (row length N, or rows): a curve per implementation, and the saved run dashed."""

    def __init__(self, key: str, x_range: tuple[float, float], tick_step: int) -> None:
        series = [(tr(f"benchmark.series.{n}"), ROLES[n], STYLES.get(n, "solid")) for n in ALL]
        series += [(tr(f"benchmark.series.{n}"), ROLES[n], "dash") for n in ALL]
        series.append((tr("benchmark.series.saved", name=""), "muted", "dash"))  # the saved run's legend sample
        self._tick_step = tick_step
        self._legend_entries: tuple = ()
        super().__init__(tr(f"benchmark.plot.{key}"), series, x_label=tr(f"benchmark.axis.{key}"),
                         y_label=tr("benchmark.axis.gbps"), log_x=True, log_y=True, legend_columns=4,
                         x_name=tr(f"benchmark.axis.{key}.name"), y_name=tr("benchmark.axis.gbps.name"))
        self.set_x_range(*x_range)
        self.show_legend(())

    def set_x_range(self, lo: float, hi: float) -> None:
        """The x axis from ``lo`` to ``hi`` (binary ticks); nothing is repainted if it already is."""
        lo, hi = sorted((lo, hi))
        if hi <= lo:
            lo, hi = lo / 2, hi * 2
        if getattr(self, "_x_span", None) == (lo, hi):
            return
        self._x_span = (lo, hi)
        item = self.getPlotItem()
        item.getAxis("bottom").setTicks([binary_ticks(lo, hi, self._tick_step), []])
        a, b = math.log10(lo), math.log10(hi)
        pad = 0.03 * (b - a)
        item.setXRange(a - pad, b + pad, padding=0)

    def curve_of(self, name: str, *, saved: bool = False) -> int:
        return ALL.index(name) + (len(ALL) if saved else 0)

    def show_legend(self, names: tuple[str, ...], saved: str = "") -> None:
        """The legend lists ``names`` (in ALL's order) and, if ``saved`` names a file, the saved run."""
        entries = (tuple(n for n in ALL if n in names), saved)
        if entries == self._legend_entries:
            return
        self._legend_entries = entries
        legend = self.getPlotItem().legend
        legend.clear()
        for n in entries[0]:
            legend.addItem(self.curves[self.curve_of(n)], tr(f"benchmark.series.{n}"))
        if saved:
            legend.addItem(self.curves[-1], tr("benchmark.series.saved", name=saved))
        self.fit_legend()

    def theme_changed(self, theme: themes.Theme) -> None:
        super().theme_changed(theme)
        for name in ALL:  # the run's measurements are few: each one marked (the copies are wide enough)
            if name not in STYLES:
                curve = self.curves[self.curve_of(name)]
                curve.setSymbol("o")
                curve.setSymbolSize(5)
                curve.setSymbolPen(curve.opts["pen"])
                curve.setSymbolBrush(curve.opts["pen"].color())

    def show_sweep(self, sweep: Sweep | None, x: str) -> None:
        """The run's curves (``x``: "n" or "rows"); None clears them."""
        for n in ALL:
            i = self.curve_of(n)
            if sweep is None or n not in sweep.seconds:
                self.set_curve(i, np.zeros(0), np.zeros(0))
            else:
                self.set_curve(i, getattr(sweep, x), sweep.gbps(n))

    def fit_y(self) -> None:
        """Autorange over what is drawn; 0.1 to 100 GB/s while nothing is (set once, not every redraw)."""
        drawn = any(self.data(i)[0].size for i in range(len(self.curves)))
        if drawn == getattr(self, "_y_drawn", None):
            return
        self._y_drawn = drawn
        if drawn:
            self.getPlotItem().enableAutoRange(axis="y")
        else:
            self.set_y_range(0.1, 100.0)

    def show_saved(self, table: SavedTable | None, x: str) -> None:
        curves = {} if table is None else table.curves(x)
        for n in ALL:
            i = self.curve_of(n, saved=True)
            if n in curves:
                self.set_curve(i, *curves[n])
            else:
                self.set_curve(i, np.zeros(0), np.zeros(0))

    def drawn(self, name: str, *, saved: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The points of ``name``'s curve in data units (x and GB/s; the axes are log)."""
        x, y = self.data(self.curve_of(name, saved=saved))
        return 10.0 ** x if x.size else x, 10.0 ** y if y.size else y


class AttentionPlot(Curves):
    """The fused attention kernel against the reference path (scores, softmax kernel, product): ms per call."""

    def __init__(self) -> None:
        super().__init__(tr("benchmark.plot.attention"),
                         [(tr(f"benchmark.series.attention_{k}"), role, "solid")
                          for k, role in zip(ATTENTION, ("accent", 1))],
                         x_label=tr("benchmark.axis.attention"), y_label=tr("benchmark.axis.ms"), log_x=True,
                         log_y=True, legend_columns=2, x_name=tr("benchmark.axis.attention.name"),
                         y_name=tr("benchmark.axis.ms.name"))
        self.getPlotItem().getAxis("bottom").setTicks([binary_ticks(256, 4096), []])

    def show_result(self, n: tuple[int, ...], seconds: dict[str, np.ndarray] | None) -> None:
        for i, k in enumerate(ATTENTION):
            if seconds is None:
                self.set_curve(i, np.zeros(0), np.zeros(0))
            else:
                self.set_curve(i, np.asarray(n, float), 1e3 * seconds[k])
        if n and getattr(self, "_x_span", None) != (min(n), max(n)):
            self._x_span = (min(n), max(n))
            a, b = math.log10(min(n)), math.log10(max(n))
            self.getPlotItem().setXRange(a - 0.05, b + 0.05, padding=0)
            self.getPlotItem().getAxis("bottom").setTicks([binary_ticks(min(n), max(n)), []])
