"""Guards for the pinned Qt stack (see pyproject.toml).

PySide6 6.12.0 with pyqtgraph 0.14 on Python 3.11 dies with
``Fatal Python error: none_dealloc`` after a few hundred repaints, and Qt
6.11/6.12 break pyqtgraph 0.14's SVG exporter.  Whoever moves the pins
sees the breakage here first.
"""

import numpy as np
import pyqtgraph as pg
import PySide6
from PySide6.QtGui import QImage

import compute


def test_the_pinned_versions_are_installed():
    major, minor = (int(x) for x in PySide6.__version__.split(".")[:2])
    assert (major, minor) == (6, 10)
    assert pg.__version__.startswith("0.14")


def test_hundreds_of_repaints_survive(qtbot, make_view, lab):
    view = make_view("temperature")
    slider = view.temperature.slider
    image = QImage(view.size(), QImage.Format.Format_ARGB32)
    for i in range(300):
        slider.setValue(100 + (i * 37) % 800)
        view.flush()
        view.bars.viewport().repaint()
        view.entropy.viewport().repaint()
        if i % 50 == 0:
            view.render(image)
    t = lab.models["temperature"].temperature
    np.testing.assert_array_equal(view.bars.heights[0], compute.softmax(lab.scores.values, temperature=t))


def test_svg_export_works(make_view):
    view = make_view("temperature")
    for plot in view.plots().values():
        svg = pg.exporters.SVGExporter(plot.getPlotItem()).export(toBytes=True)
        assert svg.lstrip().startswith(b"<?xml")
        assert b"</svg>" in svg


def test_pyqtgraph_binds_to_pyside6():
    import subprocess
    import sys

    from tests.conftest import ROOT

    code = "import os; os.environ.pop('PYQTGRAPH_QT_LIB', None); from gui.qt import pg; print(pg.Qt.QT_LIB)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "PySide6"
