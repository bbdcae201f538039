"""The Learning view's arrays: every tab's numbers, for the .npz and the CSVs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from compute import TRAIN_HISTORY, CalibrationReport, TrainRun
from gui.model.base import ExportArray
from gui.model.learning.data import N_CLASSES

if TYPE_CHECKING:
    from gui.model.learning.model import LearningModel

CLASSES = tuple(f"class_{k}" for k in range(N_CLASSES))
REPORT_COLUMNS = ("temperature", "ece", "mce", "nll", "brier", "accuracy")
STUDENT_ROWS = ("hard_labels", "soft_targets")


def history_table(run: TrainRun) -> ExportArray:
    """One row per epoch (0 is the initial weights), one column per curve."""
    table = np.column_stack([np.arange(run.epochs_done + 1.0)] + [run.history[c] for c in TRAIN_HISTORY])
    return ExportArray(table, ("epoch",) + TRAIN_HISTORY)


def _report_row(r: CalibrationReport) -> list[float]:
    return [r.temperature, r.ece, r.mce, r.nll, r.brier, r.accuracy]


def _bins(reports: dict[str, CalibrationReport]) -> ExportArray:
    first = next(iter(reports.values())).bins
    cols, data = ["bin_lo", "bin_hi"], [first.edges[:-1], first.edges[1:]]
    for name, r in reports.items():
        cols += [f"{name}_count", f"{name}_confidence", f"{name}_accuracy"]
        data += [r.bins.counts.astype(np.float64), r.bins.confidence, r.bins.accuracy]
    return ExportArray(np.column_stack(data), tuple(cols))


def _weights(run: TrainRun, epoch: int) -> dict[str, ExportArray]:
    out = {}
    for name, w in run.at(epoch).items():
        if w.ndim == 1:
            out[f"weights_{name}"] = ExportArray(w, ("value",))
        else:
            out[f"weights_{name}"] = ExportArray(w, tuple(f"out_{j}" for j in range(w.shape[1])))
    return out


def export_arrays(model: LearningModel) -> dict[str, ExportArray]:
    run = model.training_run()
    epoch = model.shown_epoch
    cal = model.calibration(run)
    dis = model.distil(run)
    stu = model.students(run)
    con = model.contrast(run)
    dig = model.digit_predictions(run)
    reports = {"before": cal.before, "fitted": cal.after, "manual": cal.manual}
    out = {
        "history": history_table(run),
        **_weights(run, epoch),
        "reliability": _bins(reports),
        "calibration": ExportArray(np.array([_report_row(r) for r in reports.values()]), REPORT_COLUMNS,
                                   tuple(reports)),
        "temperature_curve": ExportArray(np.column_stack([cal.temperatures, cal.ece, cal.nll, cal.val_nll]),
                                         ("temperature", "test_ece", "test_nll", "val_nll")),
        "soft_targets": ExportArray(np.column_stack([dis.soft_1, dis.soft_t]),
                                    ("teacher_T1", "teacher_T"), CLASSES),
        "seed_teacher": ExportArray(np.column_stack([dis.seed_1, dis.seed_t]), ("T1", "T"),
                                    ("cat", "dog", "bird")),
        "students": ExportArray(np.array([[stu.temperature, stu.alpha, len(stu.examples)] + _report_row(r)[1:]
                                          for r in (stu.hard_test, stu.soft_test)]),
                                ("temperature", "alpha", "examples") + REPORT_COLUMNS[1:], STUDENT_ROWS),
        "student_hard_history": history_table(stu.hard),
        "student_soft_history": history_table(stu.soft),
        "contrast_similarity": ExportArray(con.similarity, tuple(f"view2_{j + 1}" for j in range(len(con.indices))),
                                           tuple(f"view1_{i + 1}" for i in range(len(con.indices)))),
        "contrast_probabilities": ExportArray(con.info.row_probabilities,
                                              tuple(f"view2_{j + 1}" for j in range(len(con.indices))),
                                              tuple(f"view1_{i + 1}" for i in range(len(con.indices)))),
        "contrast_tau_curve": ExportArray(np.column_stack([con.taus, con.losses, con.positive]),
                                          ("tau", "info_nce", "positive_probability")),
        "test_predictions": ExportArray(
            np.column_stack([dig.test_indices.astype(np.float64), dig.all_probabilities]),
            ("digit_index",) + CLASSES),
        "summary": ExportArray(np.array([[epoch, run.epochs_done, run.history["train_loss"][epoch],
                                          run.history["val_accuracy"][epoch], cal.fitted_t, dis.dark_1, dis.dark_t,
                                          con.info.loss, float(con.info.positive.mean())]]),
                               ("epoch", "epochs", "train_loss", "val_accuracy", "fitted_temperature",
                                "dark_knowledge_T1", "dark_knowledge_T", "info_nce", "positive_probability")),
    }
    return out
