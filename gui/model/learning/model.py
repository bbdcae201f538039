"""The Learning view's model: a softmax classifier trained live on the digits, and what it shows.

The training run is a pure function of the training parameters and the
seed (:meth:`LearningModel.train_key`); the window computes it in a
background job (:func:`train_job`, one partial run per epoch) and hands
each partial and the finished run to :meth:`LearningModel.offer_run`;
exports and tests compute it here (:meth:`LearningModel.training_run`).
``epoch`` is the transport's step: the epoch whose weights every tab uses
(beyond the run's end means its end).  The students of the Distil tab are a
second job (:func:`students_job`), keyed by the teacher and their own
parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from psygnal import evented

from compute import LOSSES, MODELS, TrainConfig, TrainRun
from compute._calibration import calibration_scores
from gui.model.base import ExportArray, ViewModel, choice, drain, param
from gui.model.learning import data as dataset
from gui.model.learning import results, worker
from gui.model.scores import ScoreRow

MAX_EPOCHS = 200
EMBEDDINGS = ("model", "pixels")
CONVENTIONS = ("others", "pytorch")
#: The parameters each tab's controls show (the transport and the seed are on every tab).
TAB_PARAMS: dict[str, tuple[str, ...]] = {
    "train": ("classifier", "hidden", "epochs", "learning_rate", "batch_size", "loss", "label_smoothing",
              "convention", "focal_gamma"),
    "calibrate": ("calibration_t", "bins"),
    "distil": ("distil_t", "distil_alpha", "student_examples", "example"),
    "contrast": ("embedding", "contrast_tau", "contrast_batch", "contrast_noise"),
    "digits": (),
}
#: The parameters a training run depends on (a change starts a new run).
TRAIN_PARAMS = ("classifier", "hidden", "epochs", "learning_rate", "batch_size", "loss", "label_smoothing",
                "convention", "focal_gamma", "seed")


def train_job(inputs: tuple) -> Any:
    """The view's training job: ``train_inputs()`` trained in the child process, one partial run per epoch
    (see :mod:`gui.model.learning.worker`)."""
    return worker.process_steps(inputs)


def students_job(inputs: tuple) -> Any:
    """The students' job: the arguments of :func:`results.train_students`, the students trained in their
    own child process (:func:`worker.student_steps`: thousands of small NumPy calls in a thread would
    make the window's thread wait for the GIL while they train, and every redraw with it)."""
    return results.train_students(*inputs, steps=worker.student_steps)


@dataclass(frozen=True)
class TrainState:
    """The run the tabs draw now: finished, or the partial run of a job still training."""

    key: tuple
    run: TrainRun

    @property
    def finished(self) -> bool:
        return self.run.finished


@evented
@dataclass
class LearningModel(ViewModel):
    name: ClassVar[str] = "learning"
    TAB_NAMES: ClassVar[tuple[str, ...]] = tuple(TAB_PARAMS)
    classifier: str = choice("mlp", MODELS)
    hidden: int = param(64, minimum=4, maximum=256, log=True, integer=True)
    epochs: int = param(60, minimum=1, maximum=MAX_EPOCHS, integer=True)
    learning_rate: float = param(1.0, minimum=0.001, maximum=5.0, log=True)
    batch_size: int = param(32, minimum=4, maximum=512, log=True, integer=True)
    loss: str = choice("cross_entropy", LOSSES)
    label_smoothing: float = param(0.0, minimum=0.0, maximum=0.5)
    convention: str = choice("others", CONVENTIONS)
    focal_gamma: float = param(2.0, minimum=0.0, maximum=5.0)
    seed: int = param(0, minimum=0, maximum=2**31 - 1, integer=True, control="spin")
    epoch: int = param(MAX_EPOCHS, minimum=0, maximum=MAX_EPOCHS, integer=True)
    calibration_t: float = param(1.0, minimum=0.1, maximum=10.0, log=True)
    bins: int = param(10, minimum=3, maximum=30, integer=True)
    distil_t: float = param(4.0, minimum=1.0, maximum=20.0)
    distil_alpha: float = param(0.9, minimum=0.0, maximum=1.0)
    student_examples: int = param(200, minimum=20, maximum=1078, log=True, integer=True)
    example: int = param(0, minimum=0, maximum=359, integer=True, control="spin")
    embedding: str = choice("model", EMBEDDINGS)
    contrast_tau: float = param(results.CLIP_TAU, minimum=0.01, maximum=1.0, log=True)
    contrast_batch: int = param(16, minimum=4, maximum=64, integer=True)
    contrast_noise: float = param(0.3, minimum=0.0, maximum=1.0)

    def __post_init__(self) -> None:
        self._runs: dict[tuple, TrainRun] = {}  # finished runs by key (the newest few)
        self._live: TrainState | None = None  # the partial run of the job training now
        self._students: dict[tuple, results.Students] = {}
        self._cache: dict[str, tuple[tuple, Any]] = {}

    # -- the controls -------------------------------------------------------------------------------
    def applies(self, name: str) -> bool:
        if name == "hidden":
            return self.classifier == "mlp"
        if name == "focal_gamma":
            return self.loss == "focal"
        if name == "convention":
            return self.label_smoothing > 0
        return True

    def bounds(self, name: str) -> tuple[float, float]:
        if name == "epoch":
            return 0, self.epochs
        if name == "student_examples":
            return 20, min(len(self.split().train), self.params()[name].maximum)
        if name == "example":
            return 0, min(len(self.split().test) - 1, self.params()[name].maximum)
        return super().bounds(name)

    def value_in_use(self, name: str) -> Any:
        if name == "epoch":
            return self.shown_epoch
        if name == "student_examples":
            return min(self.student_examples, len(self.split().train))
        return super().value_in_use(name)

    @staticmethod
    def tab_params(tab: str) -> tuple[str, ...]:
        return TAB_PARAMS[tab]

    @property
    def shown_epoch(self) -> int:
        return min(self.epoch, self.epochs)

    # -- the data -----------------------------------------------------------------------------------
    @staticmethod
    def digits() -> dataset.Digits:
        return dataset.load_digits()

    def split(self) -> dataset.Split:
        return dataset.split(self.seed)

    # -- training -----------------------------------------------------------------------------------
    def config(self) -> TrainConfig:
        return TrainConfig(model=self.classifier, hidden=self.hidden, epochs=self.epochs,
                           learning_rate=self.learning_rate, batch_size=self.batch_size, loss=self.loss,
                           label_smoothing=self.label_smoothing, convention=self.convention,
                           gamma=self.focal_gamma, seed=self.seed)

    def train_key(self) -> tuple:
        return tuple(getattr(self, name) for name in TRAIN_PARAMS)

    def train_inputs(self) -> tuple:
        d, s = self.digits(), self.split()
        x = d.x
        return (self.config(), x[s.train], d.labels[s.train], x[s.val], d.labels[s.val], dataset.N_CLASSES)

    def offer_run(self, key: tuple, run: TrainRun) -> None:
        """A partial or finished run from the job; kept if it is for the current parameters."""
        if key != self.train_key():
            return
        if run.finished:
            self._runs[key] = run
            while len(self._runs) > 4:
                self._runs.pop(next(iter(self._runs)))
            self._live = None
        elif self._live is None or self._live.key != key or run.epochs_done >= self._live.run.epochs_done:
            self._live = TrainState(key, run)

    def current_run(self) -> TrainRun | None:
        """The finished run for the current parameters, else the newest partial one, else None."""
        key = self.train_key()
        if key in self._runs:
            return self._runs[key]
        if self._live is not None and self._live.key == key:
            return self._live.run
        return None

    def training_run(self) -> TrainRun:
        """The finished run for the current parameters, computed here if need be."""
        key = self.train_key()
        if key not in self._runs:
            self.offer_run(key, drain(worker.local_steps(self.train_inputs())))
        return self._runs[key]

    @property
    def trained(self) -> bool:
        return self.train_key() in self._runs


    def _run_key(self, run: TrainRun) -> tuple:
        return (self.train_key(), run.epochs_done, min(self.epoch, run.epochs_done))

    # -- the tabs' results (of a run: the current one by default) -------------------------------------
    def calibration(self, run: TrainRun | None = None) -> results.CalibrationResult:
        run = run or self.training_run()
        key = self._run_key(run)
        fit = self._cached("calibration_fit", key, lambda: results.calibration_fit(
            run, self.epoch, self.digits(), self.split()))
        # the predictions' confidences, NLL and Brier at T = 1, the fitted T and T by hand: a new bin count
        # only bins them again
        scores = self._cached("calibration_scores", key, lambda: results.fit_scores(fit))
        manual = self._cached("calibration_manual", key + (self.calibration_t,),
                              lambda: calibration_scores(fit.z_test, fit.t_test, self.calibration_t))
        binned = self._cached("calibration_binned", key + (self.bins,),
                              lambda: results.calibration_binned(fit, self.bins, scores))
        return self._cached("calibration", key + (self.calibration_t, self.bins),
                            lambda: results.calibration_result(run, self.epoch, self.digits(), self.split(),
                                                               self.calibration_t, self.bins, fit, binned, manual))

    def _distil_logits(self, run: TrainRun) -> tuple[tuple, tuple]:
        """The cache key of the Distil tab's teacher logits and the logits (:func:`results.distil_logits`)."""
        n = self.value_in_use("student_examples")
        key = self._run_key(run) + (n, self.example)
        return key, self._cached("distil_logits", key, lambda: results.distil_logits(
            run.at(self.epoch), self.digits(), self.split(), n, self.example))

    def distil(self, run: TrainRun | None = None) -> results.DistilResult:
        run = run or self.training_run()
        n = self.value_in_use("student_examples")
        key, logits = self._distil_logits(run)
        at_one = self._cached("distil_at_one", key, lambda: results.distil_at_one(logits))
        return self._cached("distil", key + (self.distil_t,),
                            lambda: results.distil_result(run.at(self.epoch), self.digits(), self.split(), n,
                                                          self.distil_t, self.example, logits, at_one))

    def students_key(self, run: TrainRun) -> tuple:
        return self._run_key(run) + (self.value_in_use("student_examples"), self.distil_t, self.distil_alpha)

    def students_inputs(self, run: TrainRun) -> tuple:
        """The arguments of :func:`results.train_students`, with the teacher's logits of the students'
        digits that the Distil tab already has (not a second product while the window redraws)."""
        return (run.at(self.epoch), self.digits(), self.split(), self.value_in_use("student_examples"),
                self.distil_t, self.distil_alpha, self.seed, self._distil_logits(run)[1][1])

    def offer_students(self, key: tuple, students: results.Students) -> None:
        self._students = {key: students}

    def students_for(self, run: TrainRun) -> results.Students | None:
        return self._students.get(self.students_key(run))

    def students(self, run: TrainRun | None = None) -> results.Students:
        """The students for the current teacher, trained here if need be."""
        run = run or self.training_run()
        key = self.students_key(run)
        if key not in self._students:
            self.offer_students(key, drain(results.train_students(*self.students_inputs(run))))
        return self._students[key]

    def contrast(self, run: TrainRun | None = None) -> results.ContrastResult:
        run = run or self.training_run()
        params = run.at(self.epoch) if self.embedding == "model" else None
        key = ((self._run_key(run) if params is not None else ()) + (self.embedding, self.contrast_batch,
               self.contrast_noise, self.seed))
        pairs = self._cached("contrast_pairs", key, lambda: results.contrast_pairs(
            params, self.digits(), self.split(), self.contrast_batch, self.contrast_noise, self.seed))
        return self._cached("contrast", key + (self.contrast_tau,), lambda: results.contrast_result(
            params, self.digits(), self.split(), self.contrast_batch, self.contrast_noise, self.contrast_tau,
            self.seed, pairs))

    def digit_predictions(self, run: TrainRun | None = None) -> results.DigitsResult:
        run = run or self.training_run()
        return self._cached("digits", self._run_key(run),
                            lambda: results.digits_result(run, self.epoch, self.digits(), self.split()))

    # -- export -------------------------------------------------------------------------------------
    def arrays(self, scores: ScoreRow) -> dict[str, ExportArray]:
        from gui.model.learning.export import export_arrays

        return export_arrays(self)

