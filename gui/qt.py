"""The one place that imports pyqtgraph, after PySide6, with our options set.

pyqtgraph picks the first Qt binding it finds; importing PySide6 first (and
setting PYQTGRAPH_QT_LIB) makes sure it never picks PyQt if that is also
installed.

pyqtgraph's RawImageWidget imports CUDA Python (``cuda.bindings.runtime``,
about 0.1 s) when pyqtgraph is imported, for the CUDA-OpenGL path of a widget
this app never uses; where CUDA Python is installed (CuPy brings it), it is
kept out of sys.modules while pyqtgraph loads, and then imports as usual for
whoever asks (CuPy, when the window probes it after its first paint).
"""

import os
import sys

os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

_CUDA = "cuda.bindings"
_hide_cuda = _CUDA not in sys.modules
if _hide_cuda:
    sys.modules[_CUDA] = None  # pyqtgraph's ``from cuda.bindings import runtime`` raises ImportError
try:
    # isort: off
    import PySide6  # noqa: E402,F401  (must come before pyqtgraph)
    import pyqtgraph as pg  # noqa: E402
    import pyqtgraph.exporters  # noqa: E402,F401
    # isort: on
finally:
    if _hide_cuda and sys.modules.get(_CUDA, "") is None:
        del sys.modules[_CUDA]

pg.setConfigOptions(imageAxisOrder="row-major", antialias=True)

__all__ = ["pg"]
