"""What the Learning view's tabs show, computed from a training run (no Qt).

* :func:`calibration_result`: the test split's reliability before and after
  temperature scaling (T fitted on the validation split's NLL) and at a
  temperature set by hand, with ECE and NLL against T;
* :func:`train_students` / :func:`distil_result`: two softmax-regression
  students on a few training digits, one on hard labels and one on the
  teacher's soft targets at T, and the soft targets of one digit;
* :func:`contrast_result`: InfoNCE over two noisy views of a batch of test
  digits, embedded by the pixels or by the trained model, against τ;
* :func:`digits_result`: the test digits' predicted distributions, the
  mistakes first.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass

import numpy as np

from compute import (
    CalibrationReport,
    InfoNCE,
    TrainConfig,
    TrainRun,
    calibration_report,
    classifier_features,
    classifier_logits,
    dark_knowledge,
    fit_temperature,
    info_nce,
    info_nce_sweep,
    soft_targets,
    sweep_confidences,
    sweep_ece,
    train_classifier_steps,
)
from compute._calibration import CalibrationScores, calibration_scores, report_from_scores
from gui.model.learning.data import N_CLASSES, Digits, Split

#: The temperatures the Calibrate tab's curves run over, and the range of the fitted T.
T_CURVE = np.geomspace(0.1, 10.0, 41)
T_FIT = (0.05, 20.0)
#: The articles' teacher: cat, dog, bird.
SEED_TEACHER = (0.95, 0.04, 0.01)
#: The students: softmax regression, trained this long at this rate.
STUDENT = TrainConfig(model="linear", epochs=60, learning_rate=0.5, batch_size=16)
#: The Contrast tab's τ curve (CLIP starts its learnable τ near 0.07).
TAU_CURVE = np.geomspace(0.01, 1.0, 41)
CLIP_TAU = 0.07
#: How many digits the Digits tab shows.
SHOWN_DIGITS = 12


# -- Calibrate -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CalibrationResult:
    epoch: int
    fitted_t: float
    manual_t: float
    before: CalibrationReport  # test split, T = 1
    after: CalibrationReport  # test split, fitted T
    manual: CalibrationReport  # test split, T by hand
    temperatures: np.ndarray
    ece: np.ndarray  # test ECE at each temperature
    nll: np.ndarray  # test NLL at each temperature
    val_nll: np.ndarray  # validation NLL at each temperature (what the fit minimises)


@dataclass(frozen=True)
class CalibrationFit:
    """What the Calibrate tab needs of a run that no knob of the tab changes: the split's logits,
    the T fitted on the validation NLL, and the T sweeps' confidences (binned per bin count)."""

    epoch: int
    z_test: np.ndarray
    t_test: np.ndarray
    fitted_t: float
    nll: np.ndarray  # test NLL at each T of T_CURVE
    val_nll: np.ndarray  # validation NLL at each T
    confidence: np.ndarray  # (T_CURVE, test rows): the top probability at each T
    correct: np.ndarray  # (test rows,): whether the top class is right (the same at every T)


def calibration_fit(run: TrainRun, epoch: int, digits: Digits, split: Split) -> CalibrationFit:
    params = run.at(epoch)
    x = digits.x
    z_val, z_test = classifier_logits(params, x[split.val]), classifier_logits(params, x[split.test])
    t_val, t_test = digits.labels[split.val], digits.labels[split.test]
    nll, confidence, correct = sweep_confidences(z_test, t_test, T_CURVE)
    val_nll, _, _ = sweep_confidences(z_val, t_val, T_CURVE)
    return CalibrationFit(min(epoch, run.epochs_done), z_test, t_test, fit_temperature(z_val, t_val, *T_FIT),
                          nll, val_nll, confidence, correct)


def calibration_result(run: TrainRun, epoch: int, digits: Digits, split: Split, manual_t: float,
                       n_bins: int, fit: CalibrationFit | None = None,
                       binned: tuple[CalibrationReport, CalibrationReport, np.ndarray] | None = None,
                       manual: CalibrationScores | None = None) -> CalibrationResult:
    """The Calibrate tab's result; ``fit`` (:func:`calibration_fit`), ``binned``
    (:func:`calibration_binned` at ``n_bins``) and ``manual`` (:func:`calibration_scores` of the
    test logits at ``manual_t``) may be passed in from a cache."""
    fit = fit or calibration_fit(run, epoch, digits, split)
    before, after, ece = binned or calibration_binned(fit, n_bins)
    manual = manual or calibration_scores(fit.z_test, fit.t_test, manual_t)
    return CalibrationResult(fit.epoch, fit.fitted_t, manual_t, before, after, report_from_scores(manual, n_bins),
                             T_CURVE, ece, fit.nll, fit.val_nll)


def fit_scores(fit: CalibrationFit) -> tuple[CalibrationScores, CalibrationScores]:
    """What the reports at T = 1 and at the fitted T need whatever the bins (:func:`calibration_scores`)."""
    return calibration_scores(fit.z_test, fit.t_test, 1.0), calibration_scores(fit.z_test, fit.t_test, fit.fitted_t)


def calibration_binned(fit: CalibrationFit, n_bins: int,
                       scores: tuple[CalibrationScores, CalibrationScores] | None = None,
                       ) -> tuple[CalibrationReport, CalibrationReport, np.ndarray]:
    """The reports at T = 1 and at the fitted T, and the ECE curve, for ``n_bins`` bins (``scores``:
    :func:`fit_scores` of ``fit``, from a cache: a new bin count then only bins them again)."""
    before, after = scores or fit_scores(fit)
    return (report_from_scores(before, n_bins), report_from_scores(after, n_bins),
            sweep_ece(fit.confidence, fit.correct, n_bins))


# -- Distil ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Students:
    """Two students trained on the same few digits: on hard labels, and on the teacher's soft targets."""

    temperature: float
    alpha: float
    examples: np.ndarray  # the training indices the students saw
    hard: TrainRun
    soft: TrainRun
    hard_test: CalibrationReport
    soft_test: CalibrationReport


def student_rows(split: Split, n: int) -> np.ndarray:
    """The first ``n`` training digits (the split is already shuffled by its seed)."""
    return split.train[:n]


def _steps_here(inputs: tuple) -> Generator[tuple[float, TrainRun], None, TrainRun]:
    config, x_tr, y_tr, x_va, y_va, n_classes, teacher = inputs
    return (yield from train_classifier_steps(config, x_tr, y_tr, x_va, y_va, teacher=teacher,
                                              n_classes=n_classes))


def train_students(teacher: dict[str, np.ndarray], digits: Digits, split: Split, n: int, temperature: float,
                   alpha: float, seed: int, teacher_logits: np.ndarray | None = None,
                   steps: Callable[[tuple], Generator] | None = None) -> Generator[float, None, Students]:
    """Train both students (a job: yields progress); the teacher's weights are fixed.

    ``teacher_logits``: the teacher's logits of the students' digits, if already at hand (the second
    of :func:`distil_logits`, the same product); computed here otherwise.

    ``steps`` trains one student from ``(config, x_train, y_train, x_val, y_val, n_classes,
    teacher_logits)``, yielding ``(fraction, run so far)`` and returning the run: by default
    :func:`compute.train_classifier_steps` here; the view's job passes the students' child process
    (:func:`gui.model.learning.worker.student_steps`), which runs the same function."""
    rows = student_rows(split, n)
    x, labels = digits.x, digits.labels
    config = TrainConfig(**{**STUDENT.__dict__, "seed": seed, "temperature": temperature, "alpha": alpha})
    runs = []
    if teacher_logits is None:
        teacher_logits = classifier_logits(teacher, x[rows])
    for i, targets in enumerate((None, teacher_logits)):
        steps_of = (steps or _steps_here)((config, x[rows], labels[rows], x[split.val], labels[split.val],
                                           N_CLASSES, targets))
        try:
            while True:
                try:
                    fraction, _partial = next(steps_of)
                except StopIteration as stop:
                    runs.append(stop.value)
                    break
                yield (i + fraction) / 2
        finally:
            steps_of.close()  # closed early (a cancelled job): a child stops after its epoch
    z = [classifier_logits(r.at(r.epochs_done), x[split.test]) for r in runs]
    t_test = labels[split.test]
    return Students(temperature, alpha, rows, runs[0], runs[1], calibration_report(z[0], t_test),
                    calibration_report(z[1], t_test))


@dataclass(frozen=True)
class DistilResult:
    temperature: float
    position: int  # the digit's position in the test split
    example: int  # its index into the digits
    label: int
    soft_1: np.ndarray  # the teacher's distribution of that digit at T = 1
    soft_t: np.ndarray  # ... at T
    seed_1: np.ndarray  # the articles' teacher (cat, dog, bird) at T = 1
    seed_t: np.ndarray  # ... at T
    dark_1: float  # mean entropy of the teacher's soft targets over the students' digits, T = 1
    dark_t: float  # ... at T


def distil_logits(teacher: dict[str, np.ndarray], digits: Digits, split: Split, n: int,
                  example: int) -> tuple[np.ndarray, np.ndarray]:
    """The teacher's logits of the shown test digit ``(classes,)`` and of the students' digits
    ``(n, classes)``: what the Distil tab needs of the teacher whatever T is."""
    position = min(example, len(split.test) - 1)
    idx = int(split.test[position])
    return (classifier_logits(teacher, digits.x[idx:idx + 1])[0],
            classifier_logits(teacher, digits.x[student_rows(split, n)]))


def distil_at_one(logits: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray, float]:
    """What the Distil tab shows at T = 1 (whatever T is set): the shown digit's and the articles'
    teacher's distributions, and the dark knowledge of the students' digits."""
    z, zs = logits
    return (soft_targets(z, 1.0), soft_targets(probabilities=SEED_TEACHER, temperature=1.0),
            float(dark_knowledge(zs, 1.0).mean()))


def distil_result(teacher: dict[str, np.ndarray], digits: Digits, split: Split, n: int, temperature: float,
                  example: int, logits: tuple[np.ndarray, np.ndarray] | None = None,
                  at_one: tuple[np.ndarray, np.ndarray, float] | None = None) -> DistilResult:
    """The soft targets of one test digit (``example``: its position in the test split) and of the
    articles' teacher, and the dark knowledge of the students' digits; ``logits``
    (:func:`distil_logits`) and ``at_one`` (:func:`distil_at_one` of them) may come from a cache."""
    position = min(example, len(split.test) - 1)
    idx = int(split.test[position])
    z, zs = logits if logits is not None else distil_logits(teacher, digits, split, n, example)
    soft_1, seed_1, dark_1 = at_one if at_one is not None else distil_at_one((z, zs))
    return DistilResult(
        temperature, position, idx, int(digits.labels[idx]), soft_1, soft_targets(z, temperature),
        seed_1, soft_targets(probabilities=SEED_TEACHER, temperature=temperature),
        dark_1, float(dark_knowledge(zs, temperature).mean()))


# -- Contrast --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ContrastResult:
    tau: float
    indices: np.ndarray  # the batch's digits
    similarity: np.ndarray  # (B, B) cosine similarity of view 1's row i and view 2's column j
    info: InfoNCE
    taus: np.ndarray
    losses: np.ndarray
    positive: np.ndarray  # the mean probability of the true pair at each τ

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(str(i + 1) for i in range(len(self.indices)))


def _normalise(e: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(e, axis=1, keepdims=True)
    return e / np.where(norms > 0, norms, 1.0)


@dataclass(frozen=True)
class ContrastPairs:
    """What the Contrast tab needs whatever τ is: the batch, its similarity matrix and the τ curves."""

    indices: np.ndarray
    similarity: np.ndarray
    losses: np.ndarray  # InfoNCE at each τ of TAU_CURVE
    positive: np.ndarray


def contrast_pairs(params: dict[str, np.ndarray] | None, digits: Digits, split: Split, batch: int,
                   noise: float, seed: int) -> ContrastPairs:
    """Two noisy views (pixel noise of standard deviation ``noise``) of the first ``batch`` test digits,
    embedded by the model's features (``params``) or, with ``params`` None, by the pixels."""
    idx = split.test[:batch]
    rng = np.random.default_rng(seed)
    x = digits.x[idx]
    views = [x + noise * rng.normal(size=x.shape) for _ in range(2)]
    e1, e2 = (_normalise(v if params is None else classifier_features(params, v)) for v in views)
    s = e1 @ e2.T
    losses, positive = info_nce_sweep(s, TAU_CURVE)
    return ContrastPairs(idx, s, losses, positive)


def contrast_result(params: dict[str, np.ndarray] | None, digits: Digits, split: Split, batch: int,
                    noise: float, tau: float, seed: int, pairs: ContrastPairs | None = None) -> ContrastResult:
    """:func:`contrast_pairs` and InfoNCE at ``tau``; ``pairs`` may come from a cache."""
    pairs = pairs or contrast_pairs(params, digits, split, batch, noise, seed)
    s = pairs.similarity
    return ContrastResult(tau, pairs.indices, s, info_nce(s, tau), TAU_CURVE, pairs.losses, pairs.positive)


# -- Digits ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DigitsResult:
    epoch: int
    indices: np.ndarray  # the test digits shown: mistakes first (most confident first), then the least sure
    probabilities: np.ndarray  # (shown, 10)
    labels: np.ndarray
    predicted: np.ndarray
    mistakes: int  # over the whole test split
    test_size: int
    all_probabilities: np.ndarray  # (test, 10), for the export
    test_indices: np.ndarray


def digits_result(run: TrainRun, epoch: int, digits: Digits, split: Split,
                  shown: int = SHOWN_DIGITS) -> DigitsResult:
    params = run.at(epoch)
    z = classifier_logits(params, digits.x[split.test])
    p = soft_targets(z, 1.0)
    labels = digits.labels[split.test]
    predicted = p.argmax(axis=1)
    confidence = p.max(axis=1)
    wrong = predicted != labels
    # mistakes by falling confidence, then the right ones by rising confidence (the hardest first)
    order = np.lexsort((np.where(wrong, -confidence, confidence), ~wrong))[:shown]
    return DigitsResult(min(epoch, run.epochs_done), split.test[order], p[order], labels[order], predicted[order],
                        int(wrong.sum()), len(labels), p, split.test)
