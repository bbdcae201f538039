"""The numerical core must stay importable without Qt (headless use, CI)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
QT_PACKAGES = ("PySide6", "PyQt5", "PyQt6", "shiboken6", "pyqtgraph", "qtpy", "superqt")

CHECK = (
    "import compute, sys; "
    f"bad=[m for m in sys.modules if m.split('.')[0] in {QT_PACKAGES!r}]; "
    "assert not bad, bad"
)


def test_compute_imports_no_qt():
    result = subprocess.run(
        [sys.executable, "-c", CHECK],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
