"""The Benchmark view's model (no Qt): the sweep's shapes, the timing arithmetic, results, files.

Nothing here asserts a duration.  The timing loop runs on a fake clock whose
every measurement lasts a known time, so the medians and the GB/s are
checked against a plain calculation; the implementations themselves are
checked against SciPy on a small input; the shapes against a plain loop.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st

from gui.model.base import drain
from gui.model.benchmark import BenchmarkModel, backends, saved, sweep
from gui.model.benchmark.backends import ALL, Implementation, Reason
from gui.model.npfile import LoadError
from tests.conftest import run_main


class FakeClock:
    """A clock read twice per measurement: 0, then the next of ``durations`` (so each measurement lasts it)."""

    def __init__(self, durations):
        self.durations = iter(durations)
        self.readings = 0

    def __call__(self) -> float:
        self.readings += 1
        return 0.0 if self.readings % 2 else next(self.durations)


def durations(count: int) -> list[float]:
    return [1e-4 * (1 + (7 * k) % 5) for k in range(count)]


def tiny_plan(**changes) -> sweep.Plan:
    """Three row lengths of three rows, a rows sweep of two shapes: a run of milliseconds."""
    plan = sweep.make_plan(dtype="float32", rows=3, n_min=128, n_max=512, repeats=3, quick=False)
    return dataclasses.replace(plan, rows_points=(1, 2), **changes)


def host_reasons() -> dict[str, Reason | None]:
    """Only NumPy and the copy run (the others' reasons are made up for the test)."""
    return {name: None if name in ("numpy", "copy") else Reason("benchmark.reason.torch_missing") for name in ALL}


# -- the shapes ----------------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.integers(128, 1 << 20), st.integers(128, 1 << 20), st.sampled_from([1, 4]))
def test_the_row_lengths_are_the_ends_and_every_strideth_power_of_two_between(a, b, stride):
    lo, hi = min(a, b), max(a, b)
    powers = [2**k for k in range(0, 21) if lo <= 2**k <= hi]  # a plain loop over every power of two
    want = sorted({lo, hi} | set(powers[::stride]))
    assert list(sweep.n_grid(a, b, stride)) == want


def test_the_default_plan_sweeps_128_to_1m_and_caps_the_elements_of_a_shape():
    m = BenchmarkModel()
    plan = m.plan()
    assert plan.n_points == tuple(2**k for k in range(7, 21))
    for n, rows in zip(plan.n_points, plan.n_rows):
        want = 64
        while want > 1 and want * n > sweep.MAX_ELEMENTS:  # fewer rows until the shape fits
            want -= 1
        assert rows == want
    assert plan.rows_n == 1024 and plan.rows_points == (1, 4, 16, 64, 256, 1024, 4096)
    np.testing.assert_array_equal(plan.n_bytes, [2 * r * n * 4 for r, n in zip(plan.n_rows, plan.n_points)])
    m.set_param("dtype", "float64")
    assert m.plan().itemsize == 8 and m.plan().n_bytes[0] == 2 * 64 * 128 * 8


def test_quick_is_a_smaller_sweep_with_one_timed_call_and_greys_repeats():
    m = BenchmarkModel()
    full = m.plan()
    m.set_param("quick", "on")
    quick = m.plan()
    assert set(quick.n_points) < set(full.n_points) and quick.n_points[0] == 128 and quick.n_points[-1] == 1 << 20
    assert quick.repeats == 1 and quick.max_elements < full.max_elements and len(quick.rows_points) == 3
    assert not m.applies("repeats") and m.value_in_use("repeats") == 1 and m.repeats == 5
    assert all(r * n <= quick.max_elements or r == 1 for r, n in zip(quick.n_rows, quick.n_points))


def test_reversed_ends_sweep_the_same_range():
    m = BenchmarkModel()
    m.set_param("n_min", 4096)
    m.set_param("n_max", 512)
    assert m.plan().n_points == (512, 1024, 2048, 4096)


# -- the timing arithmetic ----------------------------------------------------------------------------------
def test_the_medians_and_gbps_follow_a_fake_clock_by_plain_arithmetic():
    plan = tiny_plan()
    impls, failed = backends.implementations(("numpy", "copy"), clock=(clock := FakeClock(durations(10_000))))
    assert failed == {} and [i.name for i in impls] == ["numpy", "copy"]
    result = drain(sweep.run_steps(plan, implementations=impls, reasons=host_reasons()))
    assert result.finished and result.done == result.total == (3 + 2) * 2
    # the same durations, replayed in the documented order: the N sweep then the rows sweep, each shape,
    # each implementation in turn, `repeats` timed calls each
    it = iter(durations(10_000))
    shapes = [("n", i, n, r) for i, (n, r) in enumerate(zip(plan.n_points, plan.n_rows))]
    shapes += [("rows", i, plan.rows_n, r) for i, r in enumerate(plan.rows_points)]
    for axis, i, n, rows in shapes:
        for name in ("numpy", "copy"):
            median = float(np.median([next(it) for _ in range(plan.repeats)]))
            s = result.by_n if axis == "n" else result.by_rows
            assert s.seconds[name][i] == median
            assert s.gbps(name)[i] == pytest.approx(2 * rows * n * 4 / median / 1e9, rel=1e-12)
    assert clock.readings == 2 * plan.repeats * result.total  # every timed call read the clock twice, no more


def test_each_implementation_computes_softmax_and_the_copy_copies():
    x = (np.random.default_rng(3).standard_normal((4, 300)) * 5).astype(np.float32)
    impls, _failed = backends.implementations(tuple(n for n in backends.HOST if backends.status()[n] is None))
    assert {"numpy", "copy"} <= {i.name for i in impls}
    want = scipy.special.softmax(x.astype(np.float64), axis=-1)
    for impl in impls:
        out = np.asarray(impl.prepare(x, {})())
        if impl.name == "copy":
            np.testing.assert_array_equal(out, x)
            assert out is not x
        else:
            np.testing.assert_allclose(out, want, rtol=2e-6, atol=1e-9, err_msg=impl.name)


def test_a_run_yields_growing_partial_results_then_the_finished_one():
    plan = tiny_plan(repeats=1)
    impls, _ = backends.implementations(("numpy", "copy"))
    steps = sweep.run_steps(plan, implementations=impls, reasons=host_reasons())
    partials = []
    while True:
        try:
            fraction, partial = next(steps)
        except StopIteration as stop:
            final = stop.value
            break
        partials.append((fraction, partial))
    fractions = [f for f, _ in partials]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
    measured = [sum(int(np.isfinite(p.by_n.seconds[k]).sum() + np.isfinite(p.by_rows.seconds[k]).sum())
                    for k in ("numpy", "copy")) for _, p in partials]
    assert measured == list(range(len(partials)))  # one more measurement per step, from none
    assert not any(p.finished for _, p in partials) and final.finished
    assert final.names == ("numpy", "copy") and set(final.by_n.seconds) == {"numpy", "copy"}


def test_a_failing_implementation_is_reported_and_never_loses_the_others():
    def broken(x, shared):
        raise RuntimeError("no such device\nsecond line")

    impls, _ = backends.implementations(("numpy",))
    impls.append(Implementation("cupy", broken, backends.host_measure()))
    r = drain(sweep.run_steps(tiny_plan(repeats=1), implementations=impls, reasons=host_reasons()))
    assert r.failed == {"cupy": "RuntimeError: no such device second line"}
    assert np.isfinite(r.by_n.seconds["numpy"]).all() and np.isnan(r.by_n.seconds["cupy"]).all()
    assert r.finished and r.done == r.total


def test_an_abandoned_run_stops_measuring():
    calls = []
    impls = [Implementation("numpy", lambda x, s: lambda: calls.append(x.shape), backends.host_measure())]
    steps = sweep.run_steps(tiny_plan(repeats=2), implementations=impls, reasons=host_reasons())
    next(steps)  # the empty result
    next(steps)  # the first measurement
    steps.close()  # what a cancelled Job does: the generator is not resumed
    assert calls == [(3, 128)] * 3  # one untimed call and two timed ones, of the first shape only


# -- what runs here ----------------------------------------------------------------------------------------
def test_the_status_names_every_implementation_and_numpy_and_the_copy_always_run():
    s = backends.status()
    assert list(s) == list(ALL) and s["numpy"] is None and s["copy"] is None
    from compute import backends as compute_backends

    cupy_missing = "cupy" in compute_backends.unavailable_reasons()
    assert (s["cupy"] is not None) == cupy_missing == (s["copy_cuda"] is not None)


@pytest.mark.parametrize(("reason", "key", "text"), [
    ("CuPy is not installed (pip install -e '.[gpu]')", "benchmark.reason.cupy_missing", None),
    ("no CUDA device answered: cudaErrorNoDevice: no CUDA-capable device", "benchmark.reason.no_device",
     "cudaErrorNoDevice: no CUDA-capable device"),
    ("CuPy failed to import: ImportError: libcuda.so", "benchmark.reason.cupy_import", "ImportError: libcuda.so"),
    ("something else", "benchmark.reason.verbatim", "something else"),
])
def test_computes_cupy_reasons_become_the_views_words(monkeypatch, reason, key, text):
    from compute import backends as compute_backends

    assert compute_backends.NOT_INSTALLED == "CuPy is not installed (pip install -e '.[gpu]')"
    monkeypatch.setattr(compute_backends, "unavailable_reasons", lambda: {"cupy": reason})
    s = backends.status()
    for name in ("cupy", "cupyx", "copy_cuda"):
        assert s[name].key == key and dict(s[name].values).get("text") == text
    assert not backends.device_possible(s)


# -- the export and a saved run ------------------------------------------------------------------------------
def test_before_a_run_only_the_plan_is_exported():
    m = BenchmarkModel()
    a = m.arrays()
    assert set(a) == {"plan_n", "plan_rows"}
    plan = m.plan()
    rows = [[n, r, 2 * r * n * 4] for n, r in zip(plan.n_points, plan.n_rows)]
    np.testing.assert_array_equal(a["plan_n"].data, rows)
    assert a["plan_n"].columns == ("n", "rows", "bytes")


def test_after_a_run_the_tables_hold_its_seconds_and_gbps():
    m = BenchmarkModel()
    for name, value in (("n_min", 128), ("n_max", 256), ("rows", 2), ("repeats", 1)):
        m.set_param(name, value)
    impls, _ = backends.implementations(("numpy", "copy"), clock=FakeClock(durations(1000)))
    r = m.measure(implementations=impls, reasons=host_reasons())
    a = m.arrays()
    t = a["throughput_n"]
    assert t.columns == ("n", "rows", "bytes", "numpy_seconds", "numpy_gbps", "copy_seconds", "copy_gbps")
    np.testing.assert_array_equal(t.data[:, 0], [128, 256])
    np.testing.assert_array_equal(t.data[:, 3], r.by_n.seconds["numpy"])
    np.testing.assert_allclose(t.data[:, 6], 2 * t.data[:, 1] * t.data[:, 0] * 4 / t.data[:, 5] / 1e9, rtol=1e-12)
    assert a["run"].data[0, a["run"].columns.index("finished")] == 1.0
    timed = dict(zip(a["implementations"].rows, a["implementations"].data[:, 0]))
    assert timed == {name: float(name in ("numpy", "copy")) for name in ALL}
    assert "attention" not in a  # the GPU-only table


def write_saved(path, table: np.ndarray, columns: list[str], **more) -> None:
    """An .npz laid out as the view's export writes it (the table and its ``__columns``)."""
    np.savez(path, throughput_n=table, throughput_n__columns=np.array(columns, dtype=str), **more)


def test_a_saved_run_reads_back_and_gives_each_implementations_curve(tmp_path):
    table = np.array([[128, 4, 4096, 1e-6, 4.096, 1e-7, 40.96], [256, 4, 8192, 2e-6, 4.096, 1e-7, 81.92]])
    write_saved(tmp_path / "run.npz", table,
                ["n", "rows", "bytes", "numpy_seconds", "numpy_gbps", "copy_seconds", "copy_gbps"])
    m = BenchmarkModel()
    m.set_param("compare_file", str(tmp_path / "run.npz"))
    s = m.saved
    assert s.name == "run.npz" and s.by_rows is None
    curves = s.by_n.curves("n")
    assert list(curves) == ["numpy", "copy"]
    np.testing.assert_array_equal(curves["copy"][0], [128, 256])
    np.testing.assert_array_equal(curves["copy"][1], [40.96, 81.92])
    m.set_param("compare_file", "")
    assert m.saved is None and m.compare_file == ""


def test_undo_putting_an_older_name_back_reads_that_file(tmp_path):
    for name, gbps in (("a.npz", 1.0), ("b.npz", 2.0)):
        write_saved(tmp_path / name, np.array([[128, 1, 512, 1e-6, gbps]]),
                    ["n", "rows", "bytes", "numpy_seconds", "numpy_gbps"])
    m = BenchmarkModel()
    m.set_param("compare_file", str(tmp_path / "a.npz"))
    m.set_param("compare_file", str(tmp_path / "b.npz"))
    m.compare_file = str(tmp_path / "a.npz")  # what the undo stack does: the field, not set_param
    assert m.saved.by_n.curves("n")["numpy"][1].tolist() == [1.0]


@pytest.mark.parametrize("case", ["npy", "no_table", "no_columns", "one_d", "object", "strings", "huge",
                                  "no_n", "negative", "no_curve"])
def test_a_file_that_is_no_benchmark_export_is_refused_and_nothing_changes(tmp_path, case):
    path = tmp_path / "bad.npz"
    cols = ["n", "rows", "bytes", "numpy_seconds", "numpy_gbps"]
    good = np.array([[128.0, 1, 512, 1e-6, 0.5]])
    if case == "npy":
        path = tmp_path / "bad.npy"
        np.save(path, good)
    elif case == "no_table":
        np.savez(path, logits=np.zeros(3))
    elif case == "no_columns":
        np.savez(path, throughput_n=good)
    elif case == "one_d":
        write_saved(path, good[0], cols)
    elif case == "object":
        np.savez(path, throughput_n=good.astype(object), throughput_n__columns=np.array(cols))
    elif case == "strings":
        write_saved(path, good.astype(str), cols)
    elif case == "huge":  # a header declaring 10**8 rows over a few bytes: refused from the header alone
        import io
        import zipfile

        from numpy.lib import format as npy_format

        buf = io.BytesIO()
        npy_format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": (10**8, 5)})
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("throughput_n.npy", buf.getvalue() + b"\0" * 40)
            names = io.BytesIO()
            np.save(names, np.array(cols))
            z.writestr("throughput_n__columns.npy", names.getvalue())
    elif case == "no_n":
        write_saved(path, good, ["length", "rows", "bytes", "numpy_seconds", "numpy_gbps"])
    elif case == "negative":
        write_saved(path, good * [1, 1, 1, 1, -1], cols)
    elif case == "no_curve":
        write_saved(path, good, ["n", "rows", "bytes", "numpy_seconds", "numpy_speed"])
    m = BenchmarkModel()
    with pytest.raises(LoadError) as err:
        m.set_param("compare_file", str(path))
    assert path.name in str(err.value) and "\n" not in str(err.value)
    assert m.compare_file == "" and m.saved is None
    with pytest.raises(LoadError):
        saved.load_saved(path)


def test_a_saved_file_gone_since_says_why_instead_of_drawing(tmp_path):
    write_saved(tmp_path / "a.npz", np.array([[128, 1, 512, 1e-6, 1.0]]),
                ["n", "rows", "bytes", "numpy_seconds", "numpy_gbps"])
    m = BenchmarkModel()
    m.set_param("compare_file", str(tmp_path / "a.npz"))
    (tmp_path / "a.npz").unlink()
    m.compare_file = str(tmp_path / "b.npz")  # an undo to a name whose file is gone
    assert m.saved is None and "b.npz" in m.saved_error


def test_quick_export_runs_headless_and_writes_the_run(tmp_path):
    result = run_main("export", "--view", "benchmark", "--quick", "--arrays-only", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    from gui.export import read_npz

    a = read_npz(tmp_path / "benchmark.npz")
    cols = [str(c) for c in a["throughput_n__columns"]]
    t = a["throughput_n"]
    plan = BenchmarkModel(quick="on").plan()
    np.testing.assert_array_equal(t[:, 0], plan.n_points)
    for name in ("numpy", "copy"):
        gbps = t[:, cols.index(f"{name}_gbps")]
        seconds = t[:, cols.index(f"{name}_seconds")]
        assert np.isfinite(gbps).all() and (seconds > 0).all()
        np.testing.assert_allclose(gbps, 2 * t[:, 1] * t[:, 0] * 4 / seconds / 1e9, rtol=1e-12)
    run = dict(zip([str(c) for c in a["run__columns"]], a["run"][0]))
    assert run["quick"] == 1.0 and run["finished"] == 1.0 and run["repeats"] == 1
    assert (tmp_path / "benchmark_throughput_rows.csv").exists()
    assert math.isclose(run["itemsize"], 4)


def fake_cupy(monkeypatch):
    """Just enough of CuPy (and cupyx) over NumPy to run the device implementations' plumbing here."""
    import sys
    import types

    log = {"fills": 0, "records": 0, "freed": 0, "synced": 0}

    class Flush(np.ndarray):
        def fill(self, value):
            log["fills"] += 1
            super().fill(value)

    class Event:
        def record(self):
            log["records"] += 1
            self.t = time.perf_counter()

        def synchronize(self):
            pass

    class Device:
        id = 0

        def synchronize(self):
            log["synced"] += 1

    cupy = types.ModuleType("cupy")
    cupy.asarray = lambda a: np.array(a)
    cupy.empty_like = np.empty_like
    cupy.copyto = np.copyto
    cupy.empty = lambda n, dtype: np.empty(n, dtype).view(Flush)
    cupy.cuda = types.SimpleNamespace(
        Event=Event, Device=Device, get_elapsed_time=lambda a, b: 1e3 * (b.t - a.t),
        runtime=types.SimpleNamespace(getDeviceProperties=lambda i: {"l2CacheSize": 1 << 16}))
    cupy.get_default_memory_pool = lambda: types.SimpleNamespace(
        free_all_blocks=lambda: log.__setitem__("freed", log["freed"] + 1))
    special = types.ModuleType("cupyx.scipy.special")
    special.softmax = scipy.special.softmax
    for name, module in (("cupy", cupy), ("cupyx", types.ModuleType("cupyx")),
                         ("cupyx.scipy", types.ModuleType("cupyx.scipy")), ("cupyx.scipy.special", special)):
        monkeypatch.setitem(sys.modules, name, module)
    return log


def test_the_device_implementations_time_by_events_after_flushing_the_l2(monkeypatch):
    log = fake_cupy(monkeypatch)
    impls, failed = backends.implementations(("cupyx", "copy_cuda"))
    assert failed == {} and [i.name for i in impls] == ["cupyx", "copy_cuda"]
    assert impls[0].measure is impls[1].measure  # one flush buffer for all of them
    x = np.random.default_rng(1).standard_normal((3, 200)).astype(np.float32)
    shared: dict = {}
    np.testing.assert_allclose(impls[0].prepare(x, shared)(), scipy.special.softmax(x, axis=-1), rtol=1e-6)
    np.testing.assert_array_equal(impls[1].prepare(x, shared)(), x)
    assert log["synced"] == 1  # the device copy of the input is made once per shape, for both
    r = drain(sweep.run_steps(tiny_plan(repeats=2), implementations=impls, reasons=host_reasons()))
    timed = r.total * 2  # two timed calls per measurement
    assert log["fills"] == timed and log["records"] == 2 * timed  # a flush, then an event either side
    assert np.isfinite(r.by_n.seconds["copy_cuda"]).all() and (r.by_n.seconds["cupyx"] >= 0).all()
    assert log["freed"] == 1  # the device's cached memory is given back after the run
