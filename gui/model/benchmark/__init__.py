"""The Benchmark view's model (``from gui.model.benchmark import BenchmarkModel``), without Qt.

``backends`` (what is timed, what this machine has and why not), ``sweep``
(the shapes, the timing loop, its result), ``saved`` (a saved export read
back) and ``model`` (parameters, the run shown, the export arrays).
"""

from gui.model.benchmark.model import DTYPES, BenchmarkModel, run_job

__all__ = ["DTYPES", "BenchmarkModel", "run_job"]
