"""The Benchmark view: a run in the background with growing curves, Cancel, the saved run beside it.

The view's job is replaced by the same sweep over NumPy and the copy only (no
torch import, tiny shapes), sometimes slowed by a sleep in each call so that
a run lasts long enough to watch or cancel.  No duration is asserted.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from PySide6.QtCore import QTimer

from gui.export import export_view, read_npz
from gui.model.benchmark import backends, sweep
from gui.model.benchmark.backends import ALL, Implementation
from gui.views.benchmark import view as view_module
from tests.gui.test_benchmark_model import host_reasons

WAIT_MS = 30_000
TINY = {"n_min": 128, "n_max": 512, "rows": 2, "repeats": 1}


def tiny(model) -> None:
    for name, value in TINY.items():
        model.set_param(name, value)


@pytest.fixture
def fake_job(monkeypatch):
    """The view's job times NumPy and the copy only; ``calls`` counts the timed calls, ``pause`` slows each."""
    state = {"calls": 0, "pause": 0.0}

    def slowed(impl: Implementation) -> Implementation:
        def prepare(x, shared):
            call = impl.prepare(x, shared)

            def slow():
                state["calls"] += 1
                time.sleep(state["pause"])
                return call()

            return slow

        return Implementation(impl.name, prepare, impl.measure)

    def job(plan):
        impls, _ = backends.implementations(("numpy", "copy"))
        return sweep.run_steps(plan, implementations=[slowed(i) for i in impls], reasons=host_reasons())

    monkeypatch.setattr(view_module, "run_job", job)
    return state


def test_the_view_never_runs_by_itself(make_view, lab):
    m = lab.models["benchmark"]
    view = make_view("benchmark")
    view.flush()
    assert m.result is None and not view.running
    assert all(view.by_n.data(i)[0].size == 0 for i in range(len(view.by_n.curves)))
    assert set(view.arrays()) == {"plan_n", "plan_rows"}
    assert "Run" in view.progress.format()


def test_a_run_goes_in_the_background_and_its_curves_grow(qtbot, make_view, lab, fake_job):
    m = lab.models["benchmark"]
    tiny(m)
    fake_job["pause"] = 0.01
    view = make_view("benchmark")
    drawn: list[int] = []
    original = view.by_n.show_sweep

    def spy(s, x):
        if s is not None:
            drawn.append(int(sum(np.isfinite(v).sum() for v in s.seconds.values())))
        original(s, x)

    view.by_n.show_sweep = spy
    ticks = [0]
    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(lambda: ticks.__setitem__(0, ticks[0] + 1))
    timer.start()
    view.run_button.click()
    assert view.running and view.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: m.result is not None and m.result.finished, timeout=WAIT_MS)
    timer.stop()
    view.flush()
    # partial results were drawn before the end, growing, while the window's event loop kept running
    assert drawn == sorted(drawn) and drawn[0] < drawn[-1] == 2 * len(m.plan().n_points)
    assert ticks[0] > 3
    r = m.result
    for name in ("numpy", "copy"):
        x, y = view.by_n.drawn(name)
        np.testing.assert_allclose(x, r.by_n.n)
        np.testing.assert_allclose(y, r.by_n.gbps(name), rtol=1e-9)
        x, y = view.by_rows.drawn(name)
        np.testing.assert_allclose(x, r.by_rows.rows)
    assert not view.cancel_button.isEnabled()
    assert str(r.total) in view.progress.format() and view.progress.value() == 1000
    assert "GB/s" in view.readouts["benchmark.readout.ceiling"].text()
    assert "%" in view.readouts["benchmark.readout.numpy"].text()
    legend = [label.text for _sample, label in view.by_n.getPlotItem().legend.items]
    assert legend == ["compute (NumPy)", "copy (ceiling)"]


def test_cancel_stops_the_run_and_keeps_what_was_measured(qtbot, make_view, lab, fake_job):
    m = lab.models["benchmark"]
    tiny(m)
    fake_job["pause"] = 0.05
    view = make_view("benchmark")
    view.run_button.click()
    qtbot.waitUntil(lambda: m.result is not None and m.result.done >= 1, timeout=WAIT_MS)
    view.cancel_button.click()
    qtbot.waitUntil(lambda: not view.job.running, timeout=WAIT_MS)
    calls = fake_job["calls"]
    qtbot.wait(300)
    assert fake_job["calls"] == calls  # nothing runs after the cancel
    r = m.result
    assert not r.finished and 1 <= r.done < r.total
    view.flush()
    assert "stopped" in view.progress.format() and "cancelled" in view.note.text()
    x, _y = view.by_n.drawn("numpy")
    assert x.size == int(np.isfinite(r.by_n.seconds["numpy"]).sum()) >= 1


def test_an_exported_run_reopens_and_is_drawn_dashed_beside_the_next(qtbot, make_view, lab, fake_job, tmp_path):
    from PySide6.QtCore import Qt

    m = lab.models["benchmark"]
    tiny(m)
    view = make_view("benchmark")
    view.run_button.click()
    qtbot.waitUntil(lambda: m.result is not None and m.result.finished, timeout=WAIT_MS)
    written = export_view(view, "benchmark", tmp_path)
    names = {p.name for p in written}
    assert {"benchmark.npz", "benchmark_throughput_n.csv", "benchmark_throughput_n.png",
            "benchmark_throughput_rows.svg"} <= names
    arrays = read_npz(tmp_path / "benchmark.npz")
    for key, a in m.arrays().items():  # the files round-trip the model's arrays
        np.testing.assert_array_equal(arrays[key], a.data)
        assert [str(c) for c in arrays[f"{key}__columns"]] == list(a.columns)
    first = m.result
    assert view.load_path(tmp_path / "benchmark.npz")
    assert m.compare_file == str(tmp_path / "benchmark.npz")
    view.run_button.click()
    qtbot.waitUntil(lambda: m.result is not first and m.result.finished, timeout=WAIT_MS)
    view.flush()
    table, cols = arrays["throughput_n"], [str(c) for c in arrays["throughput_n__columns"]]
    for name in ("numpy", "copy"):
        x, y = view.by_n.drawn(name, saved=True)
        np.testing.assert_allclose(x, table[:, cols.index("n")], rtol=1e-12)
        np.testing.assert_allclose(y, table[:, cols.index(f"{name}_gbps")], rtol=1e-12)
        curve = view.by_n.curves[view.by_n.curve_of(name, saved=True)]
        assert curve.opts["pen"].style() == Qt.PenStyle.DashLine
    assert not any(view.by_n.drawn(n, saved=True)[0].size for n in ALL if n not in ("numpy", "copy"))
    legend = [label.text for _sample, label in view.by_n.getPlotItem().legend.items]
    assert legend[-1] == "saved benchmark.npz (dashed)"
    assert view.file_strip.name.text() == "benchmark.npz" and view.clear_button.isEnabled()
    view.clear_button.click()
    view.flush()
    assert m.compare_file == "" and view.by_n.drawn("numpy", saved=True)[0].size == 0


def test_a_refused_file_says_why_and_keeps_the_comparison(make_view, lab, tmp_path):
    m = lab.models["benchmark"]
    view = make_view("benchmark")
    bad = tmp_path / "logits.npz"
    np.savez(bad, logits=np.zeros(3))
    assert not view.load_path(bad)
    assert "logits.npz" in view.note.text() and m.compare_file == ""


def test_the_view_says_what_does_not_run_here_and_why(make_view, lab):
    from gui.model.texts import tr
    from gui.views.benchmark.view import reason_text

    view = make_view("benchmark")
    view.flush()
    listed = {}  # each bullet: "• name, name: reason"
    for line in view.availability.text().splitlines()[1:]:
        names, _, why = line.removeprefix("• ").partition(": ")
        for name in names.split(", "):
            listed[name] = why
    status = backends.status()
    want = {tr(f"benchmark.series.{n}"): reason_text(r) for n, r in status.items() if r is not None}
    assert listed == want
    assert status["numpy"] is None and tr("benchmark.series.numpy") not in listed


def test_a_changed_setting_after_a_run_says_the_curves_are_the_last_runs(qtbot, make_view, lab, fake_job):
    m = lab.models["benchmark"]
    tiny(m)
    view = make_view("benchmark")
    view.run_button.click()
    qtbot.waitUntil(lambda: m.result is not None and m.result.finished, timeout=WAIT_MS)
    view.flush()
    assert view.note.text() == ""
    m.set_param("dtype", "float64")
    view.flush()
    assert "last run" in view.note.text()
    assert "float32" in view.readouts["benchmark.readout.state"].text()


def test_on_a_cuda_machine_the_attention_plot_draws_the_runs_times(monkeypatch, make_view, lab):
    monkeypatch.setattr(view_module, "device_possible", lambda reasons: True)
    m = lab.models["benchmark"]
    view = make_view("benchmark")
    assert "attention" in view.plots()
    plan = m.plan()
    seconds = {"fused": np.linspace(1e-4, 5e-4, len(plan.attention_n)),
               "reference": np.linspace(2e-4, 9e-3, len(plan.attention_n))}
    empty = sweep.Sweep(np.array(plan.n_points), np.array(plan.n_rows), 4, {})
    rows = sweep.Sweep(np.array([plan.rows_n] * len(plan.rows_points)), np.array(plan.rows_points), 4, {})
    key, _ = m.new_run()
    m.offer_result(key, sweep.BenchResult(plan, (), empty, rows, seconds, host_reasons(), finished=True))
    view.flush()
    for i, k in enumerate(("fused", "reference")):
        x, y = view.attention.data(i)
        np.testing.assert_allclose(10.0 ** x, plan.attention_n)
        np.testing.assert_allclose(10.0 ** y, 1e3 * seconds[k], rtol=1e-12)
    assert "attention" in m.arrays()


def test_a_redraw_of_the_same_run_paints_no_plot(qtbot, make_view, lab, fake_job):
    from tests.gui.test_paint_only_changes import Paints

    m = lab.models["benchmark"]
    tiny(m)
    view = make_view("benchmark")
    view.run_button.click()
    qtbot.waitUntil(lambda: m.result is not None and m.result.finished, timeout=WAIT_MS)
    view.flush()
    paints = Paints(view.plots())
    paints.settle(qtbot)
    view.flush()  # the same result again
    assert paints.settle(qtbot) == set()
    m.set_param("rows", 8)  # moves only the rows plot's mark
    view.flush()
    assert paints.settle(qtbot) == {"throughput_rows"}
