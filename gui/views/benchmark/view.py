"""Benchmark: what the lab's own kernels do on this machine, beside the copy of the same bytes.

The view only builds and wires.  A run starts when the Run button is
pressed (never by itself: a benchmark takes the cores it measures) and
runs in a background job that hands the model a partial result after each
measurement, so the curves grow; Cancel stops it at the next one.  A saved
export can be drawn dashed beside the run ("Compare with saved…").  A
headless export measures first (:meth:`BenchmarkView.measure_for_export`).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gui.format import fmt
from gui.model.benchmark import BenchmarkModel, run_job
from gui.model.benchmark.backends import ALL, CEILING_OF, CEILINGS, Reason, device_possible
from gui.model.benchmark.sweep import BenchResult, Sweep
from gui.model.texts import tr
from gui.views.base import BaseView
from gui.views.benchmark.plots import AttentionPlot, ThroughputPlot
from gui.widgets.file_strip import FileDrops, FileStrip
from gui.widgets.sliders import param_form

PARAMS = ("dtype", "rows", "n_min", "n_max", "repeats", "quick")
READOUTS = ("benchmark.readout.state", "benchmark.readout.ceiling", "benchmark.readout.numpy",
            "benchmark.readout.best")


def reason_text(reason: Reason) -> str:
    return tr(reason.key, **dict(reason.values))


def unavailable_text(reasons: dict[str, Reason | None], failed: dict[str, str] | None = None) -> str:
    """One line per reason: the implementations it keeps from running here, then why."""
    by_reason: dict[str, list[str]] = {}
    for name in ALL:
        reason = reasons.get(name)
        if reason is not None:
            by_reason.setdefault(reason_text(reason), []).append(tr(f"benchmark.series.{name}"))
    for name, message in (failed or {}).items():
        label = tr(f"benchmark.series.{name}")
        by_reason.setdefault(tr("benchmark.reason.failed", text=message), []).append(label)
    if not by_reason:
        return tr("benchmark.note.all_available")
    lines = [tr("benchmark.note.unavailable")]
    lines += [tr("benchmark.note.unavailable_line", names=tr("benchmark.list_separator").join(names), reason=why)
              for why, names in by_reason.items()]
    return "\n".join(lines)


def n_text(n: int) -> str:
    """A row length as the N axis writes it: 1M, 512K, 2048 (K = 1024)."""
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20}M"
    if n >= 1 << 12 and n % (1 << 10) == 0:
        return f"{n >> 10}K"
    return f"{n:,}"


def at_largest(s: Sweep, name: str) -> tuple[float, int] | None:
    """``name``'s GB/s at the largest N it was measured at, and that N; None if not measured."""
    if name not in s.seconds:
        return None
    gbps = s.gbps(name)
    ok = [i for i in range(len(gbps)) if gbps[i] == gbps[i]]  # not NaN
    if not ok:
        return None
    i = max(ok, key=lambda j: int(s.n[j]))
    return float(gbps[i]), int(s.n[i])


class BenchmarkView(FileDrops, BaseView):
    model: BenchmarkModel

    def build(self) -> None:
        m = self.model
        self.controls: dict[str, QWidget] = {}
        sweep_box = QGroupBox(tr("benchmark.group.sweep"))
        lay = QVBoxLayout(sweep_box)
        lay.setContentsMargins(6, 4, 6, 4)
        lay.addWidget(param_form(m, PARAMS, message=self.status, controls=self.controls))
        dtype = self.controls["dtype"]  # the parameter is shared with the Precision view: its own words here
        for w in (dtype, dtype.label, dtype.combo):
            w.setToolTip(tr("benchmark.dtype.tooltip"))

        self.run_button = QPushButton(tr("benchmark.run"))
        self.run_button.setToolTip(tr("benchmark.run.tooltip"))
        self.run_button.clicked.connect(self.start_run)
        self.cancel_button = QPushButton(tr("benchmark.cancel"))
        self.cancel_button.setToolTip(tr("benchmark.cancel.tooltip"))
        self.cancel_button.clicked.connect(self.cancel_run)
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(True)
        self.progress.setToolTip(tr("benchmark.progress.tooltip"))
        buttons = QWidget()
        row = QHBoxLayout(buttons)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.run_button, 1)
        row.addWidget(self.cancel_button, 1)

        self.file_strip = FileStrip(self._load_saved, button=tr("benchmark.compare"),
                                    tooltip=tr("benchmark.compare.tooltip"), dialog_title=tr("benchmark.compare.dialog"),
                                    no_file=tr("benchmark.compare.none"), file_filter=tr("benchmark.compare.filter"),
                                    object_name="benchmark.compare_file")
        self.file_strip.message.connect(lambda text, error: self.tell(text, error=error))
        self.clear_button = QPushButton(tr("benchmark.compare.clear"))
        self.clear_button.setToolTip(tr("benchmark.compare.clear.tooltip"))
        self.clear_button.clicked.connect(lambda: self.model.set_param("compare_file", ""))
        self.file_strip.layout().addWidget(self.clear_button)
        self.setAcceptDrops(True)

        readouts = self.readout_box(READOUTS)
        self.availability = QLabel(objectName="benchmark.availability", wordWrap=True)
        self.note = QLabel(objectName="benchmark.note", wordWrap=True)

        self.by_n = self.add_plot("throughput_n", ThroughputPlot("n", (m.n_min, m.n_max), 2))
        self.by_rows = self.add_plot("throughput_rows", ThroughputPlot("rows", (1, 4096), 2))
        self.attention = None
        plots = QWidget()
        grid = QGridLayout(plots)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.by_n, 0, 0, 1, 2)
        if device_possible(m.reasons()):  # the fused attention is timed on a CUDA device only
            self.attention = self.add_plot("attention", AttentionPlot())
            grid.addWidget(self.by_rows, 1, 0)
            grid.addWidget(self.attention, 1, 1)
        else:
            grid.addWidget(self.by_rows, 1, 0, 1, 2)
        grid.setRowStretch(0, 3)
        grid.setRowStretch(1, 2)

        column = QWidget()
        lay = QVBoxLayout(column)
        lay.setContentsMargins(0, 0, 0, 0)
        for w in (sweep_box, buttons, self.progress, self.file_strip, readouts, self.availability, self.note):
            lay.addWidget(w)
        lay.addStretch(1)
        self.arrange([column], plots, min_width=320)
        self._message = ("", False)

        self.job = self.add_job(run_job)
        self.job.partial.connect(self._arrived)
        self.job.delivered.connect(self._arrived)
        self.job.failed.connect(lambda _key, text: self.tell(text, error=True))
        self.job.busy_changed.connect(self._busy)

    # -- running ------------------------------------------------------------------------------------
    def start_run(self) -> None:
        """Measure the current settings in the background (a run already going is stopped)."""
        key, plan = self.model.new_run()
        self.job.request(key, plan, again=True)
        self._message = ("", False)
        self.state_changed()

    def cancel_run(self) -> None:
        if self.job.cancel() is not None:
            self.tell(tr("benchmark.cancelled"))

    @property
    def running(self) -> bool:
        return self.job.busy

    def _arrived(self, key, result: BenchResult) -> None:
        self.model.offer_result(key, result)
        self.state_changed()  # a hidden view only notes it (it redraws when shown)

    def _busy(self, busy: bool) -> None:
        self.cancel_button.setEnabled(busy)
        self.state_changed()

    def measure_for_export(self) -> None:
        """A headless export measures the current settings first, here (the window's Run does it in the
        background); nothing is measured twice."""
        m = self.model
        r = m.result
        if r is None or not r.finished or r.plan != m.plan():
            m.measure()
        self.state_changed()

    # -- files and messages ---------------------------------------------------------------------------
    def _load_saved(self, path: str) -> str:
        self.model.set_param("compare_file", path)  # a bad file raises LoadError; nothing changes
        return tr("benchmark.compare.loaded", name=Path(path).name)

    def load_path(self, path: str | Path) -> bool:
        """Load a saved run as the button or a drop does; False (and a message) if refused."""
        return self.file_strip.load_path(path)

    def tell(self, text: str, *, error: bool = False) -> None:
        self._message = (text, error)
        self.note.setText(text)
        self.status.emit(text)

    # -- drawing ------------------------------------------------------------------------------------
    def redraw(self) -> None:
        m = self.model
        r = m.result
        s = m.saved
        plan = m.plan()
        names = tuple(n for n, why in m.reasons().items() if why is None)
        if r is not None:
            names = r.names
        saved_name = s.name if s is not None else ""
        self.by_n.show_legend(names, saved_name)
        self.by_rows.show_legend(names, saved_name)
        lo, hi = sorted((m.n_min, m.n_max))
        if r is not None:
            lo, hi = min(lo, int(r.by_n.n.min())), max(hi, int(r.by_n.n.max()))
        self.by_n.set_x_range(lo, hi)
        self.by_n.show_sweep(None if r is None else r.by_n, "n")
        self.by_rows.show_sweep(None if r is None else r.by_rows, "rows")
        self.by_n.show_saved(None if s is None else s.by_n, "n")
        self.by_rows.show_saved(None if s is None or s.by_rows is None else s.by_rows, "rows")
        for plot in (self.by_n, self.by_rows):
            plot.fit_y()
        self.by_rows.set_now(m.rows)
        if self.attention is not None:
            self.attention.show_result(plan.attention_n if r is None else r.plan.attention_n,
                                       None if r is None else r.attention)
        self.clear_button.setEnabled(bool(m.compare_file))
        self.file_strip.show_path(m.compare_file if s is not None else "")
        self._show_progress(r)
        self._show_readouts(r)
        self.availability.setText(unavailable_text(m.reasons() if r is None else r.reasons,
                                                   None if r is None else r.failed))
        notes = [self._message[0]] if self._message[0] else []
        if m.saved_error:
            notes.append(m.saved_error)
        if r is not None and r.plan != plan and not self.running:
            notes.append(tr("benchmark.note.stale"))
        self.note.setText("\n".join(notes))

    def _show_progress(self, r: BenchResult | None) -> None:
        if r is None:
            self.progress.setValue(0)
            self.progress.setFormat(tr("benchmark.progress.none"))
            return
        self.progress.setValue(round(1000 * r.fraction))
        if r.finished:
            key = "benchmark.progress.done"
        elif self.running:
            key = "benchmark.progress.running"
        else:
            key = "benchmark.progress.stopped"
        self.progress.setFormat(tr(key, done=r.done, total=r.total, seconds=fmt(r.elapsed, 1)))

    def _show_readouts(self, r: BenchResult | None) -> None:
        out = self.readouts
        dash = "–"
        if r is None:
            out["benchmark.readout.state"].setText(tr("benchmark.readout.state.none"))
            for key in READOUTS[1:]:
                out[key].setText(dash)
            return
        out["benchmark.readout.state"].setText(tr(
            "benchmark.readout.state.value", dtype=r.plan.dtype, rows=r.plan.rows, repeats=r.plan.repeats))
        ceiling = at_largest(r.by_n, "copy")
        out["benchmark.readout.ceiling"].setText(dash if ceiling is None else tr(
            "benchmark.readout.gbps_at", gbps=fmt(ceiling[0], 2), n=n_text(ceiling[1])))
        numpy = at_largest(r.by_n, "numpy")
        if numpy is None:
            out["benchmark.readout.numpy"].setText(dash)
        else:
            share = "" if ceiling is None or ceiling[1] != numpy[1] or not ceiling[0] > 0 else tr(
                "benchmark.readout.share", percent=f"{100 * numpy[0] / ceiling[0]:.0f}")
            out["benchmark.readout.numpy"].setText(tr("benchmark.readout.gbps_at", gbps=fmt(numpy[0], 2),
                                                      n=n_text(numpy[1])) + share)
        best = None
        for name in r.names:
            if name in CEILINGS:
                continue
            got = at_largest(r.by_n, name)
            if got is not None and (best is None or (got[1], got[0]) > (best[1][1], best[1][0])):
                best = (name, got)
        if best is None:
            out["benchmark.readout.best"].setText(dash)
        else:
            name, (gbps, n) = best
            top = at_largest(r.by_n, CEILING_OF[name])
            share = "" if top is None or top[1] != n or not top[0] > 0 else tr(
                "benchmark.readout.share", percent=f"{100 * gbps / top[0]:.0f}")
            out["benchmark.readout.best"].setText(tr("benchmark.readout.best.value",
                                                     name=tr(f"benchmark.series.{name}"), gbps=fmt(gbps, 2)) + share)
