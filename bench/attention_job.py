"""Where a d_k step of the Attention view goes at a large size: its background job, piece by piece.

Run from the repository root::

    python bench/attention_job.py                 # n = 512, 8 heads, 30 steps
    python bench/attention_job.py --n 256 --heads 4 --steps 20

Builds the Attention view offscreen (light theme, 1400 x 900, as bench/gui_latency.py does), moves
its d_k slider step by step (10/1000 of the slider a step) and times, for each step, from the
slider's change to the job's start, the job itself (``core_steps`` in the worker thread), from
its end to the delivery on the view's thread, and the redraw that draws the result; inside the
job it times the random Q, K, V (``_inputs``), one head's product (``compute.attention_parts(...,
weights=False)`` of one head's slices: the job calls it once per head, the shown head first), the
shown head's weights (the same call with that product), the histograms and the spreads, and when
the shown head is ready (the partial core the view draws before the rest: "job start to the shown
head", "change to the shown head drawn"). It also reports the view's thread's CPU time from the change to
the delivery (what the window itself did while the job ran), and then the same cores (at
d_k + 1, so none is cached) computed in a plain thread with the window idle. Prints one JSON
document: the median and 90th percentile of each, in ms, and the d_k values stepped through.

Nothing is asserted: it only measures, and the machine is shared (compare within one run).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ["QT_QPA_PLATFORM"] = "offscreen"
os.environ["SOFTMAX_LAB_CONFIG_DIR"] = tempfile.mkdtemp(prefix="softmax-lab-bench-")
REPO_ROOT = Path(__file__).resolve().parent.parent
for path in (REPO_ROOT, REPO_ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import argparse  # noqa: E402
import bisect  # noqa: E402
import collections  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

import gui_latency  # noqa: E402  (its offscreen set-up, settle() and the slider positions)
import numpy as np  # noqa: E402

import compute  # noqa: E402
from gui import theme as themes  # noqa: E402
from gui.app import make_app  # noqa: E402
from gui.model.attention import core  # noqa: E402
from gui.model.lab import Lab  # noqa: E402
from gui.views.attention import job as attention_job  # noqa: E402
from gui.views.attention import view as attention_view  # noqa: E402
from gui.widgets.sliders import ValueSlider  # noqa: E402

PIECES = collections.defaultdict(list)  # name -> ms of each call inside the job


def _timed(module, name: str, label: str | None = None) -> None:
    function = getattr(module, name)

    def timed(*args, **kwargs):
        t = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            PIECES[label or name].append((time.perf_counter() - t) * 1000)

    setattr(module, name, timed)


def _timed_parts() -> None:
    """Times compute.attention_parts (the core calls it through the package, at call time)."""
    function = compute.attention_parts

    def parts(q, *args, **kwargs):
        t = time.perf_counter()
        try:
            return function(q, *args, **kwargs)
        finally:
            which = "one head's product" if kwargs.get("weights") is False else "shown head's weights"
            PIECES[which].append((time.perf_counter() - t) * 1000)

    compute.attention_parts = parts


def summary(values: list[float]) -> dict[str, float]:
    return {"median_ms": round(float(np.median(values)), 2), "p90_ms": round(float(np.percentile(values, 90)), 2),
            "n": len(values)} if values else {"n": 0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args(argv)

    for name in ("_inputs", "sample_histograms", "spreads"):
        _timed(core, name)
    _timed_parts()
    marks = collections.defaultdict(list)
    job = attention_job.core_job

    def timed_job(request):  # the job is a generator: it ends when it returns
        marks["start"].append(time.perf_counter())
        steps = job(request)
        try:
            while True:
                try:
                    step = next(steps)
                except StopIteration as stop:
                    return stop.value
                if isinstance(step, tuple):  # the partial core: the shown head
                    marks["partial"].append(time.perf_counter())
                yield step
        finally:
            marks["end"].append(time.perf_counter())

    attention_job.core_job = timed_job  # the view's job is made with it (add_job at build time)

    app = make_app([sys.argv[0]])
    themes.manager().set_mode("light")
    lab = Lab()
    lab.models["attention"].update_from_dict({"n": args.n, "heads": args.heads})
    view = attention_view.AttentionView(lab.scores, lab.models["attention"])
    view.resize(*gui_latency.VIEW_SIZE)
    view.show()
    gui_latency.settle(0.05)
    view.flush()
    gui_latency.settle(0.02)
    delivered = view._core_delivered

    def timed_delivered(key, pair):
        marks["delivered"].append(time.perf_counter())
        marks["cpu_delivered"].append(time.thread_time())
        delivered(key, pair)
        marks["drawn"].append(time.perf_counter())

    view.core_job.delivered.disconnect()
    view.core_job.delivered.connect(timed_delivered)
    partial_drawn = view._core_partial

    def timed_partial(key, value):
        partial_drawn(key, value)
        marks["partial drawn"].append(time.perf_counter())

    view.core_job.partial.disconnect()
    view.core_job.partial.connect(timed_partial)
    slider = next(s for s in view.findChildren(ValueSlider) if getattr(s, "binding", None) is not None
                  and s.binding.name == "d_k")
    warmup = 3
    seq = gui_latency.positions(slider.slider.value(), slider.slider.minimum(), slider.slider.maximum(),
                                warmup + args.steps, gui_latency.step_for(slider))
    changes, cpu_changes, d_ks = [], [], []
    wake = gui_latency.QTimer()  # wakes a wait for the next event, so that its deadline is seen
    wake.setInterval(50)
    wake.start()
    for i, pos in enumerate(seq):
        if i == warmup:
            PIECES.clear()
            for key in marks:
                marks[key].clear()
            changes.clear()
            cpu_changes.clear()
            d_ks.clear()
        before = view.redraw_count
        changes.append(time.perf_counter())
        cpu_changes.append(time.thread_time())
        slider.slider.setValue(pos)
        deadline = time.perf_counter() + gui_latency.WAIT_LIMIT_S
        while view.redraw_count == before and time.perf_counter() < deadline:
            gui_latency.wait_for_events()
        d_ks.append(int(view.model.d_k))
        gui_latency.wait_throttle(view, time.perf_counter())
    wake.stop()
    steps = collections.defaultdict(list)
    for delivered_at, drawn_at, cpu_at in zip(marks["delivered"], marks["drawn"], marks["cpu_delivered"]):
        j = bisect.bisect_right(marks["end"], delivered_at) - 1
        if j < 0:
            continue
        start, end = marks["start"][j], marks["end"][j]
        c = bisect.bisect_right(changes, start) - 1
        if c < 0:
            continue
        steps["change to job start"].append((start - changes[c]) * 1000)
        steps["job"].append((end - start) * 1000)
        steps["job end to delivery"].append((delivered_at - end) * 1000)
        steps["redraw of the result"].append((drawn_at - delivered_at) * 1000)
        steps["change to drawn"].append((drawn_at - changes[c]) * 1000)
        shown = [t for t in marks["partial drawn"] if start <= t <= drawn_at]
        if shown:  # the shown head, drawn before the other heads and the statistics
            steps["change to the shown head drawn"].append((shown[0] - changes[c]) * 1000)
            ready = [t for t in marks["partial"] if start <= t <= end]
            if ready:
                steps["job start to the shown head"].append((ready[0] - start) * 1000)
        steps["view thread CPU, change to delivery"].append((cpu_at - cpu_changes[c]) * 1000)
    in_view = {k: summary(v) for k, v in PIECES.items()}
    # the same cores (d_k + 1: not cached) computed in a plain thread, the window idle
    PIECES.clear()
    model = view.model

    def cores() -> None:
        for d_k in d_ks:
            t = time.perf_counter()
            core.compute_core(model.snapshot(d_k=d_k + 1), head=0)
            PIECES["core"].append((time.perf_counter() - t) * 1000)

    worker = threading.Thread(target=cores)
    worker.start()
    worker.join()
    doc = {
        "n": args.n, "heads": args.heads, "steps": args.steps, "d_k": d_ks,
        "load_average": list(os.getloadavg()),
        "step": {k: summary(v) for k, v in steps.items()},
        "inside the job": in_view,
        "the same cores in a plain thread": {k: summary(v) for k, v in PIECES.items()},
    }
    view.close()
    gui_latency.print_and_clean(app, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
