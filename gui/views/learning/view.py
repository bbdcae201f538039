"""Learning: a softmax classifier trained live on the digits; losses, calibration, distillation, InfoNCE.

The view only builds and wires.  Training runs in a background job that
hands the model one partial run per epoch (the curves grow as it trains;
redraws are throttled to about 60 a second); the students of the Distil tab
are a second job.  The transport steps through the epochs: every tab shows
the model's weights at the epoch shown.  Only the tab on screen is drawn
(all of them for an export or a flush).
"""

from __future__ import annotations

import math
import time

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QProgressBar, QTabWidget, QVBoxLayout, QWidget

from gui.format import fmt
from gui.model.learning import TAB_PARAMS, LearningModel, worker
from gui.model.learning.data import DataMissing
from gui.model.learning.model import students_job, train_job
from gui.model.texts import tr
from gui.views.base import BaseView, grid_page
from gui.views.learning.more_plots import ContrastPanels, DigitsPlot, DistilPanels
from gui.views.learning.plots import CalibratePanels, TrainPanels
from gui.widgets.plot import Plot
from gui.widgets.sliders import param_form
from gui.widgets.transport import Transport

#: The readouts each tab shows.
TAB_READOUTS = {
    "train": ("learning.readout.train_loss", "learning.readout.val_accuracy", "learning.readout.max_norm",
              "learning.readout.grad_true"),
    "calibrate": ("learning.readout.fitted_t", "learning.readout.ece", "learning.readout.nll",
                  "learning.readout.manual"),
    "distil": ("learning.readout.dark", "learning.readout.student_accuracy", "learning.readout.student_ece"),
    "contrast": ("learning.readout.info_nce", "learning.readout.positive"),
    "digits": ("learning.readout.mistakes",),
}
READOUTS = tuple(dict.fromkeys(k for keys in TAB_READOUTS.values() for k in keys))
#: New students asked for within this long of the last ask (a Distil slider dragged) wait until the
#: sliders rest this long: students of a T passed by would train for seconds and be dropped.
STUDENTS_REST_MS = 150



class LearningView(BaseView):
    model: LearningModel

    def build(self) -> None:
        m = self.model
        self.controls: dict[str, QWidget] = {}
        self.transport = Transport(m, "epoch", prefix="learning")
        self.transport.message.connect(self.status)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(True)
        self.progress.setToolTip(tr("learning.progress.tooltip"))
        self.groups = {tab: self.param_group(tr(f"learning.group.{tab}"), names)
                       for tab, names in TAB_PARAMS.items() if names}
        seed = param_form(m, ("seed",), message=self.status, controls=self.controls)
        self.readout_group = self.readout_box(READOUTS)
        self.readout_rows = self.readout_group.layout()

        self.train = TrainPanels()
        self.calibrate = CalibratePanels()
        self.distil = DistilPanels()
        self.contrast = ContrastPanels()
        self.digits = DigitsPlot()
        self.tab_plots: dict[str, dict[str, Plot]] = {
            "train": self.train.plots(), "calibrate": self.calibrate.plots(), "distil": self.distil.plots(),
            "contrast": self.contrast.plots(), "digits": {"digits": self.digits}}
        for plots in self.tab_plots.values():
            for key, plot in plots.items():
                self.add_plot(key, plot)
        t, c, d, k = self.train, self.calibrate, self.distil, self.contrast
        pages = {
            "train": grid_page((t.loss, t.accuracy), (t.norm, t.grad)),
            "calibrate": grid_page((c.reliability, c.counts), (c.ece, c.nll)),
            "distil": grid_page((d.soft, d.seed), (d.students,)),
            "contrast": grid_page((k.matrix, k.loss), (k.positive,)),
            "digits": grid_page((self.digits,)),
        }
        self.tabs = QTabWidget()
        self.tabs.setObjectName("learning.tabs")
        self.tabs.setUsesScrollButtons(False)
        for tab, page in pages.items():
            self.tabs.addTab(page, tr(f"learning.tab.{tab}"))
            self.tabs.setTabToolTip(self.tabs.count() - 1, tr(f"learning.tab.{tab}.tooltip"))
        self.tabs.currentChanged.connect(self._tab_changed)

        column = QWidget()
        lay = QVBoxLayout(column)
        lay.setContentsMargins(0, 0, 0, 0)
        for w in (self.transport, self.progress, *self.groups.values(), seed, self.readout_group):
            lay.addWidget(w)
        lay.addStretch(1)
        self.arrange([column], self.tabs, min_width=320)

        self.train_job = self.add_job(train_job)
        self.train_job.partial.connect(self._run_arrived)
        self.train_job.delivered.connect(self._run_arrived)
        self.train_job.delivered.connect(self._say_fallback)
        self.train_job.failed.connect(lambda _key, text: self.status.emit(text))
        self.students_job = self.add_job(students_job)
        self.students_job.delivered.connect(self._students_arrived)
        self.students_job.failed.connect(lambda _key, text: self.status.emit(text))
        self._students_asked = -math.inf  # when new students were last asked for (time.monotonic)
        self._students_timer = QTimer(self)
        self._students_timer.setSingleShot(True)
        self._students_timer.setInterval(STUDENTS_REST_MS)
        self._students_timer.timeout.connect(self._ask_students)
        self._arrange_tab()


    # -- tabs ---------------------------------------------------------------------------------------
    @property
    def current_tab(self) -> str:
        return self.model.TAB_NAMES[self.tabs.currentIndex()]

    def _tab_changed(self, *_args) -> None:
        self._arrange_tab()
        self.state_changed()

    def _arrange_tab(self) -> None:
        tab = self.current_tab
        for name, box in self.groups.items():
            box.setVisible(name == tab)
        for key in READOUTS:
            self.readout_rows.setRowVisible(self.readouts[key], key in TAB_READOUTS[tab])

    def plots(self) -> dict[str, Plot]:
        return dict(self.tab_plots[self.current_tab])

    # -- the jobs -----------------------------------------------------------------------------------
    def _run_arrived(self, key, run) -> None:
        self.model.offer_run(key, run)
        self.state_changed()  # a hidden view only notes it (it redraws when shown)

    def _say_fallback(self, *_args) -> None:
        if worker.FALLBACK:
            self.status.emit(tr("learning.fallback", reason=worker.FALLBACK))

    def _students_arrived(self, key, students) -> None:
        self.model.offer_students(key, students)
        self.state_changed()

    def _want_students(self, run) -> None:
        """New students for the run shown: asked for at once after a rest; a new key right after another
        (within STUDENTS_REST_MS: a drag) stops the job of the one before and is asked for once the
        sliders rest (:meth:`_ask_students`)."""
        key = self.model.students_key(run)
        if key == self.students_job.wanted_key and self.students_job.busy:
            return  # training already
        now = time.monotonic()
        resting = now - self._students_asked >= STUDENTS_REST_MS / 1000 and not self._students_timer.isActive()
        self._students_asked = now
        if resting:
            self.students_job.request(key, self.model.students_inputs(run), again=True)
            return
        if self.students_job.busy:
            self.students_job.cancel()  # students of a setting passed by: stop after their epoch
        self._students_timer.start()  # (re)started: asked for once the sliders rest

    def _ask_students(self) -> None:
        """The sliders have rested: ask for the students of what is shown now (unless known by now)."""
        m = self.model
        run = m.current_run()
        if run is None or not run.finished or self.current_tab != "distil" or m.students_for(run) is not None:
            return
        self.students_job.request(m.students_key(run), m.students_inputs(run), again=True)

    def _request_training(self) -> None:
        m = self.model
        key = m.train_key()
        if not m.trained:
            try:
                inputs = m.train_inputs()
            except DataMissing as exc:
                self.status.emit(str(exc))
                return
            self.train_job.request(key, inputs)

    # -- drawing ------------------------------------------------------------------------------------
    def redraw(self) -> None:
        m, every = self.model, self.synchronous
        run = m.training_run() if every else m.current_run()
        if run is None or not run.finished:
            self._request_training()
        self._show_progress(run)
        tab = self.current_tab
        out = self.readouts
        epoch = m.shown_epoch
        if tab == "train" or every:
            self.train.show_result(run, epoch, m.epochs)
            if run is not None:
                e = min(epoch, run.epochs_done)
                h = run.history
                out["learning.readout.train_loss"].setText(tr(
                    "learning.readout.train_loss.value", train=fmt(h["train_loss"][e], 4),
                    val=fmt(h["val_loss"][e], 4)))
                out["learning.readout.val_accuracy"].setText(tr(
                    "learning.readout.val_accuracy.value", train=f"{100 * h['train_accuracy'][e]:.1f}",
                    val=f"{100 * h['val_accuracy'][e]:.1f}"))
                out["learning.readout.max_norm"].setText(fmt(h["max_logit_norm"][e], 3))
                out["learning.readout.grad_true"].setText(tr(
                    "learning.readout.grad_true.value", ce=fmt(h["grad_true_ce"][e], 3),
                    mse=fmt(h["grad_true_mse"][e], 3)))
        if run is None:
            return
        if tab == "calibrate" or every:
            c = m.calibration(run)
            self.calibrate.show_result(c)
            out["learning.readout.fitted_t"].setText(fmt(c.fitted_t, 4))
            out["learning.readout.ece"].setText(tr("learning.readout.before_after", before=fmt(c.before.ece, 3),
                                                   after=fmt(c.after.ece, 3)))
            out["learning.readout.nll"].setText(tr("learning.readout.before_after", before=fmt(c.before.nll, 4),
                                                   after=fmt(c.after.nll, 4)))
            out["learning.readout.manual"].setText(tr("learning.readout.manual.value", t=fmt(c.manual_t, 3),
                                                      ece=fmt(c.manual.ece, 3), nll=fmt(c.manual.nll, 4)))
        if tab == "distil" or every:
            d = m.distil(run)
            students = m.students(run) if every else m.students_for(run)
            if students is None and run.finished:
                self._want_students(run)
            self.distil.show_result(d, students)
            out["learning.readout.dark"].setText(tr("learning.readout.dark.value", t=fmt(d.temperature, 3),
                                                    one=fmt(d.dark_1, 3), at_t=fmt(d.dark_t, 3)))
            if students is None:
                for key in ("learning.readout.student_accuracy", "learning.readout.student_ece"):
                    out[key].setText(tr("learning.readout.training"))
            else:
                out["learning.readout.student_accuracy"].setText(tr(
                    "learning.readout.students.value", hard=f"{100 * students.hard_test.accuracy:.1f}",
                    soft=f"{100 * students.soft_test.accuracy:.1f}"))
                out["learning.readout.student_ece"].setText(tr(
                    "learning.readout.students_ece.value", hard=fmt(students.hard_test.ece, 3),
                    soft=fmt(students.soft_test.ece, 3)))
        if tab == "contrast" or every:
            k = m.contrast(run)
            self.contrast.show_result(k)
            out["learning.readout.info_nce"].setText(fmt(k.info.loss, 4))
            out["learning.readout.positive"].setText(fmt(float(k.info.positive.mean()), 3))
        if tab == "digits" or every:
            g = m.digit_predictions(run)
            self.digits.show_result(g, m.digits().images[g.indices])
            out["learning.readout.mistakes"].setText(tr("learning.readout.mistakes.value", mistakes=g.mistakes,
                                                        n=g.test_size))

    def _show_progress(self, run) -> None:
        m = self.model
        done = 0 if run is None else run.epochs_done
        self.progress.setValue(round(1000 * done / max(m.epochs, 1)))
        key = "learning.progress.done" if run is not None and run.finished else "learning.progress.training"
        self.progress.setFormat(tr(key, done=done, epochs=m.epochs))



