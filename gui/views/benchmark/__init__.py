"""The Benchmark view (a package: view, plots)."""

from gui.views.benchmark.view import BenchmarkView

__all__ = ["BenchmarkView"]
