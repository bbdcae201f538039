"""The Benchmark view's model: the sweep's parameters, the run shown, the saved run beside it.

A run starts only when asked (the view's Run button, or
:meth:`BenchmarkModel.measure` for a headless export): a benchmark takes
the machine's cores for seconds, and its numbers mean nothing while
something else runs.  The run's result is held here (not a parameter:
never saved in a session) with the plan it measured; changing a
parameter afterwards leaves it shown until the next run.

``compare_file`` names a saved export (.npz) drawn dashed beside the run;
the comparison follows the name (an undo that puts an older name back
reads that file again).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from psygnal import evented

from gui.model.base import ExportArray, ViewModel, choice, drain, param, path_param
from gui.model.benchmark import backends, saved, sweep
from gui.model.benchmark.backends import ALL, Reason
from gui.model.benchmark.sweep import BenchResult, Plan
from gui.model.npfile import LoadError
from gui.model.scores import ScoreRow

DTYPES = ("float32", "float64")
#: The sweep's own columns in the exported tables, before each implementation's seconds and GB/s.
SHAPE_COLUMNS = ("n", "rows", "bytes")
RUN_COLUMNS = ("itemsize", "rows", "repeats", "warmup", "max_elements", "quick", "measured", "measurements",
               "elapsed_seconds", "finished")


def run_job(plan: Plan) -> Any:
    """The view's background job: :func:`sweep.run_steps` of ``plan`` (yields (fraction, partial))."""
    return sweep.run_steps(plan)


@evented
@dataclass
class BenchmarkModel(ViewModel):
    name: ClassVar[str] = "benchmark"
    dtype: str = choice("float32", DTYPES)
    rows: int = param(64, minimum=sweep.ROWS_LIMITS[0], maximum=sweep.ROWS_LIMITS[1], log=True, integer=True)
    n_min: int = param(sweep.N_LIMITS[0], minimum=sweep.N_LIMITS[0], maximum=sweep.N_LIMITS[1], log=True,
                       integer=True)
    n_max: int = param(sweep.N_LIMITS[1], minimum=sweep.N_LIMITS[0], maximum=sweep.N_LIMITS[1], log=True,
                       integer=True)
    repeats: int = param(5, minimum=1, maximum=50, integer=True)
    quick: str = choice("off", ("off", "on"))
    #: a saved export (.npz) to draw beside the run ("" for none)
    compare_file: str = path_param()

    def __post_init__(self) -> None:
        self._result: BenchResult | None = None
        self._run_key: tuple | None = None
        self._runs = 0
        self._saved: saved.Saved | None = None
        self._saved_error: str = ""

    # -- the controls -------------------------------------------------------------------------------
    def applies(self, name: str) -> bool:
        if name == "repeats":
            return self.quick == "off"
        return True

    def value_in_use(self, name: str) -> Any:
        if name == "repeats" and self.quick == "on":
            return sweep.QUICK_REPEATS
        return super().value_in_use(name)

    def set_param(self, name: str, value: Any) -> None:
        """As ViewModel.set_param; setting ``compare_file`` reads it (a bad file raises LoadError and
        nothing changes; "" drops the comparison)."""
        if name == "compare_file":
            path = self.params()[name].check(value)
            if path:
                self.load_saved(path)
            else:
                self._saved, self._saved_error = None, ""
                self.compare_file = ""
            return
        super().set_param(name, value)

    def reset(self) -> None:
        super().reset()
        self._saved, self._saved_error = None, ""

    # -- the plan and the run -----------------------------------------------------------------------
    def plan(self) -> Plan:
        return sweep.make_plan(dtype=self.dtype, rows=self.rows, n_min=self.n_min, n_max=self.n_max,
                               repeats=self.repeats, quick=self.quick == "on")

    @staticmethod
    def reasons() -> dict[str, Reason | None]:
        """Which implementations run here and why the others do not (torch's CUDA may be pending)."""
        return backends.status()

    def new_run(self) -> tuple[tuple, Plan]:
        """The key and plan of a new run of the current parameters (the last result stays until it
        is replaced by the new run's first partial)."""
        self._runs += 1
        plan = self.plan()
        self._run_key = ("run", self._runs, plan)
        return self._run_key, plan

    def offer_result(self, key: tuple, result: BenchResult) -> None:
        """A partial or finished result of the run ``key``; kept if it is the newest run's."""
        if key == self._run_key:
            self._result = result

    @property
    def result(self) -> BenchResult | None:
        """The newest run's result (partial while it runs, or where it was cancelled), or None."""
        return self._result

    @property
    def running_key(self) -> tuple | None:
        return self._run_key

    def measure(self, **kwargs: Any) -> BenchResult:
        """Run the sweep of the current parameters here, to its end (a headless export; tests pass
        run_steps' keyword arguments: fake implementations and clock)."""
        key, plan = self.new_run()
        self.offer_result(key, drain(sweep.run_steps(plan, **kwargs)))
        return self._result

    # -- the saved run --------------------------------------------------------------------------------
    def load_saved(self, path: str | os.PathLike) -> saved.Saved:
        """Read a saved run to compare with (LoadError, and nothing changes, if it is refused)."""
        data = saved.load_saved(path)
        self._saved, self._saved_error = data, ""
        self.compare_file = os.fspath(path)
        return data

    @property
    def saved(self) -> saved.Saved | None:
        """The saved run ``compare_file`` names, read again if the name changed (undo); None if none
        is named or it cannot be read (:attr:`saved_error` says why)."""
        if not self.compare_file:
            return None
        if self._saved is None or self._saved.path != self.compare_file:
            try:
                self._saved, self._saved_error = saved.load_saved(self.compare_file), ""
            except LoadError as exc:
                self._saved, self._saved_error = None, str(exc)
                return None
        return self._saved

    @property
    def saved_error(self) -> str:
        return self._saved_error

    # -- export -------------------------------------------------------------------------------------
    def arrays(self, scores: ScoreRow | None = None) -> dict[str, ExportArray]:
        """The plan of the current parameters, and the newest run's measurements when there is one
        (a run is never started here: see :meth:`measure`)."""
        plan = self.plan()
        out = {
            "plan_n": ExportArray(np.column_stack([plan.n_points, plan.n_rows, plan.n_bytes]).astype(float),
                                  SHAPE_COLUMNS),
            "plan_rows": ExportArray(np.column_stack([[plan.rows_n] * len(plan.rows_points), plan.rows_points,
                                                      plan.rows_bytes]).astype(float), SHAPE_COLUMNS),
        }
        r = self._result
        if r is None:
            return out
        out["throughput_n"] = sweep_table(r.by_n, r.names)
        out["throughput_rows"] = sweep_table(r.by_rows, r.names)
        if r.attention is not None:
            n = np.asarray(r.plan.attention_n, float)
            out["attention"] = ExportArray(
                np.column_stack([n] + [r.attention[k] for k in backends.ATTENTION]),
                ("n",) + tuple(f"{k}_seconds" for k in backends.ATTENTION))
        p = r.plan
        out["run"] = ExportArray(np.array([[p.itemsize, p.rows, p.repeats, p.warmup, p.max_elements, float(p.quick),
                                            r.done, r.total, r.elapsed, float(r.finished)]]), RUN_COLUMNS)
        out["implementations"] = ExportArray(
            np.array([[float(n in r.names and n not in r.failed)] for n in ALL]), ("timed",), ALL)
        return out


def sweep_table(s: sweep.Sweep, names: tuple[str, ...]) -> ExportArray:
    """One sweep as a table: n, rows, bytes, then each implementation's median seconds and GB/s."""
    shown = [n for n in ALL if n in names]
    cols = [s.n.astype(float), s.rows.astype(float), s.bytes]
    for name in shown:
        cols += [s.seconds[name], s.gbps(name)]
    return ExportArray(np.column_stack(cols),
                       SHAPE_COLUMNS + tuple(f"{n}_{what}" for n in shown for what in ("seconds", "gbps")))
