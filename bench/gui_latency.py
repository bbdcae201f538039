"""Slider-to-repaint latency of every view, beside a bare pyqtgraph baseline.

Run from the repository root::

    python bench/gui_latency.py            # 200 steps per slider
    python bench/gui_latency.py --steps 20 # quick look

For each registered view (built on a fresh ``Lab``, shown at 1400x900 on the
offscreen platform, in the app's light theme: its Python style and palette,
which the window installs; until December 2026 the views were timed in
plain Fusion, which skips the style's Python calls) and each ``ValueSlider`` in it, the slider's QSlider is
moved through ``--steps`` positions (a triangle wave of 10/1000 of the range
per step, so every step changes the value).  One step is timed from just
before ``QSlider.setValue`` to the end of a synchronous ``repaint()`` of the
view's plot viewports, after ``view.redraw_count`` has gone up:

* ``setValue`` runs the slider -> model -> throttled redraw chain; with the
  default pacing the throttle's leading edge fires, so the redraw runs inside
  ``setValue``.  Should a change be held back by the 16 ms throttle anyway,
  the step waits (processing events) for the trailing redraw, and the wait is
  part of its time; ``held_by_throttle`` counts such steps.
* then events are processed until the plots that were told to repaint have
  painted (no plot paints in two rounds in a row): a plot whose items did
  not change is not repainted at all (``gui/widgets/unchanged.py``), so a
  step costs only what changed.  ``plots_painted`` is the median number of
  the view's plots that painted per step, of ``plots`` shown.
* ``to_redraw_median_ms``/``to_redraw_p95_ms`` time the first part alone
  (recompute + setData), ``paint_median_ms`` the second (the event loop's
  rounds until everything the change touched has painted, the controls'
  texts included), and ``plots_paint_median_ms`` the time spent inside the
  plots' own paint events (pyqtgraph's ``GraphicsView.paintEvent``, timed
  for the app's plots and the baseline's alike), to set beside
  ``baseline_paint_median_ms``: the same items painted by bare pyqtgraph.

Between steps the script processes events until the throttle's window has
passed (``--no-pace`` drops that wait and times a back-to-back drag instead,
where most steps include the throttle delay).

The baseline is a bare ``pg.PlotWidget`` per plot the slider changes (those
that painted during an untimed probe step), of the same size, holding the
same items holding the same data (points, bars, texts, images, pens, log
axes and view range as the app's plot showed them), each moved a little per
step (every point by a relative 1e-6, one digit of every label) and then
repainted synchronously: what pyqtgraph alone needs to show the items that
actually change.  Where the app's view range moved during the timed steps
(a plot whose range follows its data), the bare widget takes the app's range
of the same step before each repaint, so it redoes the axes' ticks and grid
as the app must (``baseline_ranges_move``; until December 2026 the bare
range never moved).  (Until December 2026 the baseline
drew smooth random curves instead, which understated what a noisy curve,
such as a training loss, costs to stroke.)

Prints one JSON document to stdout.  Nothing is asserted: it only measures.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

# Before any Qt import: always offscreen, and never touch the user's config.
os.environ["QT_QPA_PLATFORM"] = "offscreen"
os.environ["SOFTMAX_LAB_CONFIG_DIR"] = tempfile.mkdtemp(prefix="softmax-lab-bench-")

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import PySide6  # noqa: E402
from PySide6.QtCore import QEvent, QEventLoop, QObject, QTimer, qVersion  # noqa: E402
from PySide6.QtGui import QGuiApplication  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from gui import registry  # noqa: E402
from gui import theme as themes  # noqa: E402
from gui.app import make_app  # noqa: E402  (imports PySide6, then pyqtgraph via gui.qt)
from gui.model.lab import Lab  # noqa: E402
from gui.qt import pg  # noqa: E402
from gui.views.base import REDRAW_MS  # noqa: E402
from gui.widgets.sliders import ValueSlider  # noqa: E402

VIEW_SIZE = (1400, 900)
STEP = 10  # slider positions per step (the QSlider runs 0..1000)
WAIT_LIMIT_S = 2.0  # give up waiting for one redraw after this long
#: Views benched at settings other than their defaults (each config is one more pass).
CONFIGS: dict[str, tuple[dict, ...]] = {
    "attention": ({"n": 64, "heads": 8}, {"n": 512, "heads": 8}),
    "sampling": ({"vocab": 50257}, {"vocab": 200000}),
}


# -- helpers ---------------------------------------------------------------------
#: Milliseconds spent inside plots' paint events (every pyqtgraph GraphicsView) since the last reset.
PLOT_PAINT_MS = [0.0]
_graphics_view_paint = pg.GraphicsView.paintEvent


def _timed_paint(self, ev):  # the app's plots and the baseline's alike
    t = time.perf_counter()
    try:
        return _graphics_view_paint(self, ev)
    finally:
        PLOT_PAINT_MS[0] += (time.perf_counter() - t) * 1000


pg.GraphicsView.paintEvent = _timed_paint


def settle(seconds: float = 0.0) -> None:
    """Process events for at least ``seconds`` (and at least once)."""
    end = time.perf_counter() + seconds
    while True:
        QApplication.processEvents()
        if time.perf_counter() >= end:
            return
        time.sleep(0.0005)


def wait_for_events() -> None:
    """Process events, blocking in Qt's event loop until the next one (a job's result, a timer), as the
    app's own loop waits; until December 2026 the waits polled every 0.2 ms, and the polling thread
    took a share of the cores and of the GIL from the job it waited for. A caller waiting with a
    deadline keeps a timer running (``measure_slider``'s 50 ms one) so that the deadline is seen."""
    QApplication.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)


def print_and_clean(app, doc: dict) -> None:
    """Print ``doc`` as JSON to stdout and remove the benchmark's temporary config folder."""
    json.dump(doc, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    app.processEvents()
    shutil.rmtree(os.environ["SOFTMAX_LAB_CONFIG_DIR"], ignore_errors=True)


def step_for(vs: ValueSlider) -> int:
    """Slider positions per step: :data:`STEP`, or enough for one unit of a linear whole-number
    slider (Heads 1..16 would otherwise change its value only every seventh step)."""
    whole = vs.spin.decimals() == 0 and not vs.log and vs.maximum > vs.minimum
    return max(STEP, math.ceil(vs.slider.maximum() / (vs.maximum - vs.minimum))) if whole else STEP


def positions(start: int, lo: int, hi: int, count: int, step: int = STEP) -> list[int]:
    """``count`` slider positions bouncing between lo and hi, each != the last."""
    out, pos, direction = [], start, 1 if start < hi else -1
    for _ in range(count):
        nxt = pos + direction * step
        if nxt > hi or nxt < lo:
            direction = -direction
            nxt = pos + direction * step
        pos = min(max(nxt, lo), hi)
        out.append(pos)
    return out


def stats(samples_ms: list[float]) -> dict[str, float | int]:
    if not samples_ms:
        return {"n": 0, "median_ms": None, "p95_ms": None}
    return {
        "n": len(samples_ms),
        "median_ms": round(statistics.median(samples_ms), 3),
        "p95_ms": round(float(np.percentile(samples_ms, 95)), 3),
    }


def throttle_idle(view) -> bool:
    """Whether the view's redraw throttle would fire on the leading edge now."""
    return not view.redraw_pending


def wait_throttle(view, since: float) -> None:
    """Process events until the throttle window opened at ``since`` has closed."""
    settle(max(since + REDRAW_MS / 1000 + 0.001 - time.perf_counter(), 0.0))
    deadline = time.perf_counter() + WAIT_LIMIT_S
    while not throttle_idle(view) and time.perf_counter() < deadline:
        settle(0.0005)


def repaint_plots(plots) -> None:
    for plot in plots:
        plot.viewport().repaint()


class PaintCounter(QObject):
    """Counts the paint events of each plot's viewport."""

    def __init__(self, plots):
        super().__init__()
        self.counts = {id(p): 0 for p in plots}
        self._viewports = {}
        for p in plots:
            self._viewports[id(p.viewport())] = id(p)
            p.viewport().installEventFilter(self)

    def eventFilter(self, obj, event):  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Paint:
            key = self._viewports.get(id(obj))
            if key is not None:
                self.counts[key] += 1
        return False

    def total(self) -> int:
        return sum(self.counts.values())


def paint_pending(counter: PaintCounter, limit_s: float = WAIT_LIMIT_S) -> None:
    """Process events until no plot has painted for two rounds in a row."""
    deadline = time.perf_counter() + limit_s
    quiet, last = 0, counter.total()
    while quiet < 2 and time.perf_counter() < deadline:
        QApplication.processEvents()
        now = counter.total()
        quiet = quiet + 1 if now == last else 0
        last = now


# -- the views ---------------------------------------------------------------------
def measure_slider(view, vs: ValueSlider, steps: int, warmup: int, pace: bool) -> dict:
    slider = vs.slider
    plots = list(view.plots().values())
    counter = PaintCounter(plots)
    painted_per_step: list[int] = []
    painted_plots: set[int] = set()
    seq = positions(slider.value(), slider.minimum(), slider.maximum(), warmup + steps, step_for(vs))
    samples: list[float] = []
    to_redraw: list[float] = []  # the part up to the finished redraw(), before painting
    painting: list[float] = []  # the rest: the event loop's rounds until the plots (and controls) have painted
    plots_painting: list[float] = []  # the time inside the plots' own paint events
    ranges: list[dict[int, tuple]] = []  # each timed step's view range of every plot (for the baseline)
    held = timeouts = 0
    wake = QTimer()  # wakes a wait for the next event at least this often, so its deadline is seen
    wake.setInterval(50)
    wake.start()
    redraws_before = view.redraw_count
    wait_throttle(view, time.perf_counter())
    for i, pos in enumerate(seq):
        if i == warmup:
            redraws_before = view.redraw_count  # count the timed steps' redraws only
        before = view.redraw_count
        PLOT_PAINT_MS[0] = 0.0
        t0 = time.perf_counter()
        slider.setValue(pos)
        t_set = time.perf_counter()  # a leading-edge redraw restarts the throttle timer here
        was_held = view.redraw_count == before
        deadline = t0 + WAIT_LIMIT_S
        while view.redraw_count == before and time.perf_counter() < deadline:
            wait_for_events()
            t_set = time.perf_counter()
        redrawn = view.redraw_count != before
        t_redrawn = time.perf_counter()
        counts_before = dict(counter.counts)
        paint_pending(counter)
        t1 = time.perf_counter()
        changed = {k for k, v in counter.counts.items() if v > counts_before[k]}
        painted_plots |= changed
        if i >= warmup and redrawn:  # a step that did not redraw (timed out) says nothing of the plots
            painted_per_step.append(len(changed))
        if i >= warmup:
            if not redrawn:
                timeouts += 1
            else:
                samples.append((t1 - t0) * 1000)
                to_redraw.append((t_redrawn - t0) * 1000)
                painting.append((t1 - t_redrawn) * 1000)
                plots_painting.append(PLOT_PAINT_MS[0])
                held += was_held
            ranges.append({id(p): view_range(p) for p in plots})
        if pace:
            # Let the throttle window close and the queued scene updates paint,
            # so the next step starts from a quiet event loop.
            wait_throttle(view, t_set)
        else:
            QApplication.processEvents()
    wake.stop()
    wait_throttle(view, time.perf_counter())
    out = stats(samples)
    split = stats(to_redraw)
    out["to_redraw_median_ms"] = split["median_ms"]
    out["to_redraw_p95_ms"] = split["p95_ms"]
    out["paint_median_ms"] = stats(painting)["median_ms"]
    out["plots_paint_median_ms"] = stats(plots_painting)["median_ms"]
    out["redraws"] = view.redraw_count - redraws_before
    out["held_by_throttle"] = held
    out["plots"] = len(plots)
    out["plots_painted"] = statistics.median(painted_per_step) if painted_per_step else 0
    out["painted"] = [p for p in plots if id(p) in painted_plots]
    out["ranges"] = ranges
    if timeouts:
        out["timeouts"] = timeouts
    return out


# -- the baseline ------------------------------------------------------------------
def _nudged(words: str) -> str:
    """``words`` with its last digit changed (or a character added): a same-sized label that Qt must lay out again."""
    for i in range(len(words) - 1, -1, -1):
        if words[i] in "0123456789":
            return words[:i] + str((int(words[i]) + 1) % 10) + words[i + 1:]
    return words + " "


def _mirror(item, rng: np.random.Generator):
    """A fresh pyqtgraph item holding what ``item`` holds now, and a function that changes it a little.

    The baseline paints the app's own data (the same points, bars, texts and
    images), so a noisy curve costs it what it costs the app.  Each update
    moves the data by a relative 1e-6 (invisible, but every point moves, as
    when a slider moves) and changes one digit of each label, alternating, so
    pyqtgraph and Qt redo all the work a real change needs.
    """
    flip = [1.0, 1.0 + 1e-6]

    def wobble() -> float:
        flip.reverse()
        return flip[0]

    if isinstance(item, pg.BarGraphItem):
        o = item.opts
        n = len(o.get("height")) if o.get("height") is not None else 1
        x = np.asarray(o["x"], dtype=float) if o.get("x") is not None else np.arange(n, dtype=float)
        height = np.array(o.get("height") if o.get("height") is not None else rng.random(n), dtype=float)
        keep = {k: o.get(k) for k in ("width", "brush", "brushes", "pen", "pens", "y0") if o.get(k) is not None}
        keep.setdefault("width", 0.4)
        bar = pg.BarGraphItem(x=x, height=height, **keep)
        return bar, lambda: bar.setOpts(height=height * wobble())
    if isinstance(item, pg.PlotDataItem):
        x = np.array(item.xData if item.xData is not None else np.arange(2.0), dtype=float)
        y = np.array(item.yData if item.yData is not None else rng.random(len(x)), dtype=float)
        o = item.opts
        keep = {k: o.get(k) for k in ("pen", "symbol", "symbolSize", "symbolBrush", "symbolPen", "connect",
                                      "fillLevel", "fillBrush", "stepMode") if o.get(k) is not None}
        curve = pg.PlotDataItem(x, y, **keep)
        return curve, lambda: curve.setData(x, y * wobble())
    if isinstance(item, pg.TextItem):
        words = item.toPlainText() or "0.0%"
        text = pg.TextItem(words, color=item.color, anchor=item.anchor)
        pos = item.pos()
        text.setPos(pos)
        labels = [words, _nudged(words)]

        def update_text():
            labels.reverse()
            text.setText(labels[0])
            text.setPos(pos.x(), pos.y() * wobble())
        return text, update_text
    if isinstance(item, pg.ImageItem) and item.image is not None:
        image = np.array(item.image, dtype=float)
        levels = item.getLevels()
        picture = pg.ImageItem(image, levels=levels, lut=item.lut)
        return picture, lambda: picture.setImage(image * wobble(), levels=levels)
    if isinstance(item, pg.InfiniteLine):
        value = float(item.value())
        line = pg.InfiniteLine(pos=value, angle=item.angle, pen=item.pen, movable=False)
        return line, lambda: line.setValue(value * wobble() + (flip[0] - 1.0))
    curve = pg.PlotDataItem(np.arange(4.0), rng.random(4))  # anything else: a small curve
    return curve, lambda: curve.setData(np.arange(4.0), rng.random(4))


def view_range(plot) -> tuple:
    """A plot's view range as ((x0, x1), (y0, y1)) (in its axes' units: log10 on a log axis)."""
    (x0, x1), (y0, y1) = plot.getViewBox().viewRange()
    return (float(x0), float(x1)), (float(y0), float(y1))


class Baseline:
    """Bare PlotWidgets mirroring a view's plots (sizes and items).

    ``ranges`` (one dict per timed step of the app, ``id(plot) -> view_range``): each step the bare
    widget takes the view range the app's plot showed at the same step, so a plot whose range follows
    its data (its axes' ticks and grid made again) costs the baseline that too; a range that stays put
    is set once.  (Until December 2026 the bare range never moved, so it left that work out.)
    """

    def __init__(self, plots, seed: int = 0, ranges: list[dict[int, tuple]] | None = None):
        rng = np.random.default_rng(seed)
        self.widgets: list[pg.PlotWidget] = []
        self.updates = []
        for plot in plots:
            w = pg.PlotWidget()
            w.resize(plot.size())
            source, mirror = plot.getPlotItem(), w.getPlotItem()
            mirror.setLogMode(x=source.ctrl.logXCheck.isChecked(), y=source.ctrl.logYCheck.isChecked())
            for item in list(source.items):
                new, update = _mirror(item, rng)
                mirror.addItem(new)
                self.updates.append(update)
            mirror.setRange(rect=source.getViewBox().viewRect(), padding=0)  # the app's view, not autorange
            mirror.disableAutoRange()
            w.show()
            self.widgets.append(w)
        steps = [[r.get(id(p)) for p in plots] for r in (ranges or [])]
        #: the app's ranges step by step, when any of them moved (else the one set above serves)
        self.ranges = steps if len({tuple(map(str, s)) for s in steps}) > 1 else []
        settle(0.01)

    @property
    def item_count(self) -> int:
        return sum(len(w.getPlotItem().items) for w in self.widgets)

    def measure(self, steps: int, warmup: int) -> dict:
        samples = []
        settle()
        painting = []
        for i in range(warmup + steps):
            t0 = time.perf_counter()
            for update in self.updates:
                update()
            if self.ranges:
                for w, r in zip(self.widgets, self.ranges[i % len(self.ranges)]):
                    if r is not None:
                        w.getPlotItem().getViewBox().setRange(xRange=r[0], yRange=r[1], padding=0)
            PLOT_PAINT_MS[0] = 0.0
            repaint_plots(self.widgets)
            t1 = time.perf_counter()
            if i >= warmup:
                samples.append((t1 - t0) * 1000)
                painting.append(PLOT_PAINT_MS[0])
            settle()
        return stats(samples) | {"paint_median_ms": stats(painting)["median_ms"]}

    def close(self) -> None:
        for w in self.widgets:
            w.close()
            w.deleteLater()
        settle()


# -- main ----------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200, help="timed steps per slider (default 200)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps before them (default 5)")
    parser.add_argument("--view", action="append", dest="views", metavar="NAME",
                        help="bench only this view (repeatable; default: every view)")
    parser.add_argument("--no-pace", dest="pace", action="store_false",
                        help="move the slider back-to-back (a fast drag: the throttle holds changes back)")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.warmup < 0:
        parser.error("--steps must be >= 1 and --warmup >= 0")

    app = make_app([sys.argv[0]])
    themes.manager().set_mode("light")  # the app's own style and palette, as the window installs them
    results = []
    started = time.perf_counter()
    specs = [s for s in registry.VIEWS if not args.views or s.name in args.views]
    for spec, config in [(s, c) for s in specs for c in CONFIGS.get(s.name, ({},))]:
        lab = Lab()
        lab.models[spec.name].update_from_dict(config)
        view = spec.widget_class()(lab.scores, lab.models[spec.name])
        view.resize(*VIEW_SIZE)
        view.show()
        settle(0.05)
        view.flush()
        settle(0.02)
        plot_items = sum(len(p.getPlotItem().items) for p in view.plots().values())
        for vs in view.findChildren(ValueSlider):
            row = {"view": spec.name, "slider": vs.label.text(), **({"config": config} if config else {})}
            if not vs.isEnabled():
                row["skipped"] = "slider disabled"
                results.append(row)
                continue
            if not vs.isVisible():  # on another tab: show the tab that holds it
                for tab in view.tab_names():
                    view.select_tab(tab)
                    settle(0.02)
                    if vs.isVisible():
                        row["tab"] = tab
                        break
                view.flush()
                settle(0.02)
            if not vs.isVisible():
                row["skipped"] = "slider not shown"
                results.append(row)
                continue
            binding = getattr(vs, "binding", None)
            start = getattr(binding.model, binding.name) if binding is not None else None
            row.update(measure_slider(view, vs, args.steps, args.warmup, args.pace))
            # put the parameter back, so the next slider runs at the view's settings (until December
            # 2026 it was not: the Sampling view's later sliders ran at V = 91,464, not 50,257)
            if binding is not None:
                binding.model.set_param(binding.name, start)
            wait_throttle(view, time.perf_counter())
            view.flush()
            settle(0.02)
            painted = row.pop("painted")
            # the bare baseline for the plots this slider changes (timed per slider), following their ranges
            ranges = row.pop("ranges")
            baseline = Baseline(painted, ranges=ranges)
            row["baseline_ranges_move"] = bool(baseline.ranges)
            base = baseline.measure(args.steps, args.warmup) if painted else {"median_ms": 0.0, "p95_ms": 0.0}
            row["baseline_median_ms"] = base["median_ms"]
            row["baseline_p95_ms"] = base["p95_ms"]
            row["baseline_paint_median_ms"] = base.get("paint_median_ms", 0.0)
            row["plot_items"] = plot_items
            row["baseline_plot_items"] = baseline.item_count
            baseline.close()
            results.append(row)
        view.close()
        view.deleteLater()
        settle()

    doc = {
        "python": platform.python_version(),
        "qt": qVersion(),
        "pyside6": PySide6.__version__,
        "pyqtgraph": pg.__version__,
        "numpy": np.__version__,
        "platform": QGuiApplication.platformName(),
        "antialias": bool(pg.getConfigOption("antialias")),
        "view_size": list(VIEW_SIZE),
        "steps": args.steps,
        "warmup": args.warmup,
        "paced": args.pace,
        "throttle_ms": REDRAW_MS,
        "timed": "QSlider.setValue -> view.redraw_count up -> the plots told to repaint have painted",
        "results": results,
        "total_s": round(time.perf_counter() - started, 2),
    }
    print_and_clean(app, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
