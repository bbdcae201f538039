"""The Learning view's training: how long a run takes, and whether the window keeps responding meanwhile.

Run from the repository root::

    python bench/learning_train.py              # the default run (MLP, 60 epochs) and a few others
    python bench/learning_train.py --repeats 5

Two measurements:

* ``headless``: seconds for :meth:`LearningModel.training_run` (the whole
  run, the per-epoch curves included), for the default settings and for
  softmax regression, the longest run (200 epochs) and the students of the
  Distil tab; the median of ``--repeats`` runs after one warm-up.
* ``window``: the Learning view, offscreen at 1280x800, trains the default
  run in its background job while a 5 ms timer ticks on the GUI thread.
  ``longest_gap_ms`` is the longest the GUI thread went without running the
  timer (what a user would feel as a freeze), ``draws_per_s`` how many
  redraws of growing curves it made per second of training, and
  ``train_s`` the run's wall time with the window drawing.

Prints one JSON document.  Nothing is asserted: it only measures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

CASES = {
    "default (MLP 64, 60 epochs)": {},
    "softmax regression, 60 epochs": {"classifier": "linear"},
    "MLP 64, 200 epochs": {"epochs": 200},
    "MLP 256, 60 epochs": {"hidden": 256},
}


def model_with(params):
    from gui.model.learning import LearningModel

    m = LearningModel()
    for name, value in params.items():
        m.set_param(name, value)
    return m


def headless(repeats: int) -> dict:
    out = {}
    for name, params in CASES.items():
        model_with(params).training_run()  # warm-up
        times = []
        for _ in range(repeats):
            m = model_with(params)
            t = time.perf_counter()
            run = m.training_run()
            times.append(time.perf_counter() - t)
        out[name] = {"median_s": round(statistics.median(times), 3), "min_s": round(min(times), 3),
                     "epochs": run.epochs_done, "val_accuracy": round(float(run.history["val_accuracy"][-1]), 4)}
    m = model_with({})
    run = m.training_run()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        m._students.clear()
        m.students(run)
        times.append(time.perf_counter() - t)
    out["students (2 x softmax regression, 200 digits, 60 epochs)"] = {
        "median_s": round(statistics.median(times), 3), "min_s": round(min(times), 3)}
    return out


def window() -> dict:
    from PySide6.QtCore import QTimer

    from gui import registry
    from gui.app import make_app
    from gui.model.lab import Lab

    app = make_app()
    lab = Lab()
    view = registry.get("learning").widget_class()(lab.scores, lab.models["learning"])
    view.resize(1280, 800)
    stamps: list[float] = []
    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(lambda: stamps.append(time.perf_counter()))
    draws = [0]
    original = view.train.show_result

    def counting(run, epoch, epochs):
        if run is not None and not run.finished:
            draws[0] += 1
        original(run, epoch, epochs)

    view.train.show_result = counting
    timer.start()
    start = time.perf_counter()
    view.show()
    model = view.model
    while not model.trained:
        app.processEvents()
        time.sleep(0.001)
    train_s = time.perf_counter() - start
    timer.stop()
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    view.shutdown()
    view.close()
    return {"train_s": round(train_s, 3), "longest_gap_ms": round(1000 * max(gaps), 1) if gaps else None,
            "draws_during_training": draws[0], "draws_per_s": round(draws[0] / train_s, 1),
            "timer_ticks": len(stamps)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    result = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                          "load": os.getloadavg()[0]},
              "headless": headless(args.repeats), "window": window()}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
