"""The one place that imports pyqtgraph, after PySide6, with our options set.

pyqtgraph picks the first Qt binding it finds; importing PySide6 first (and
setting PYQTGRAPH_QT_LIB) makes sure it never picks PyQt if that is also
installed.
"""

import os

os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

# isort: off
import PySide6  # noqa: E402,F401  (must come before pyqtgraph)
import pyqtgraph as pg  # noqa: E402
import pyqtgraph.exporters  # noqa: E402,F401
# isort: on

pg.setConfigOptions(imageAxisOrder="row-major", antialias=True)

__all__ = ["pg"]
