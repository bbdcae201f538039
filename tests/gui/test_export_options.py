"""The figure an export writes: its size and dpi, what scales with them, what is left out.

Sizes are read from the files themselves (the PNG's IHDR and pHYs chunks,
the SVG's root element), as a user's tools would read them.
"""

import struct
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QDialog, QFileDialog

from gui.export import ExportError, ExportOptions, export_view
from gui.export.figure import without_hints
from gui.export.options import CSS_DPI
from tests.conftest import run_main

SVG = "{http://www.w3.org/2000/svg}"


def png_info(path) -> tuple[int, int, float]:
    """(width, height, dpi) from the PNG's own header."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    at = data.find(b"pHYs")
    assert at > 0, "no resolution in the PNG"
    x_per_m, y_per_m, unit = struct.unpack(">IIB", data[at + 4:at + 13])
    assert unit == 1 and x_per_m == y_per_m  # pixels per metre, square pixels
    return width, height, x_per_m * 0.0254


def svg_root(path) -> ET.Element:
    return ET.parse(path).getroot()


def svg_texts(path) -> list[str]:
    return ["".join(t.itertext()) for t in svg_root(path).iter(f"{SVG}text")]


def ink(path) -> np.ndarray:
    image = QImage(str(path)).convertToFormat(QImage.Format.Format_RGB888)
    w, h = image.width(), image.height()
    a = np.frombuffer(image.constBits(), np.uint8).reshape(h, image.bytesPerLine())[:, : 3 * w].reshape(h, w, 3)
    return np.abs(a.astype(int) - a[0, 0].astype(int)).max(axis=-1) > 40


# -- the options (no Qt) ----------------------------------------------------------------------


def test_the_default_is_a_6_by_4_inch_landscape_figure_at_200_dpi():
    o = ExportOptions()
    assert (o.width, o.height, o.dpi) == (1200, 800, 200.0)
    assert o.inches == (6.0, 4.0)
    assert o.layout == (576.0, 384.0)  # CSS pixels: 6 x 96 by 4 x 96
    assert o.scale == pytest.approx(200 / 96)


@pytest.mark.parametrize(
    ("size", "dpi", "pixels", "res"),
    [
        (None, "300", (1800, 1200), 300.0),  # --dpi alone keeps the 6 x 4 in figure
        ("1600x900", None, (1600, 900), 200.0),  # --size alone keeps 200 dpi
        ("2400X1600", "400", (2400, 1600), 400.0),
        (" 800 x 600 ", "96", (800, 600), 96.0),
    ],
)
def test_size_and_dpi_from_the_command_line(size, dpi, pixels, res):
    o = ExportOptions.from_args(size=size, dpi=dpi)
    assert o.pixels == pixels
    assert o.dpi == res
    assert o.layout == pytest.approx((pixels[0] * CSS_DPI / res, pixels[1] * CSS_DPI / res))


@pytest.mark.parametrize(
    ("size", "dpi", "message"),
    [
        ("big", None, "WIDTHxHEIGHT"),
        ("1200", None, "WIDTHxHEIGHT"),
        ("-5x100", None, "WIDTHxHEIGHT"),
        ("50x800", None, "width must be 100 to 10000"),
        ("300x200", None, "smaller than"),  # 1.5 x 1 in: no room for axes and a legend
        ("9000x9000", None, "million pixels"),
        (None, "abc", "must be a number"),
        (None, "10", "50 to 1200"),
        (None, "nan", "50 to 1200"),
    ],
)
def test_impossible_figures_are_refused(size, dpi, message):
    with pytest.raises(ValueError, match=message):
        ExportOptions.from_args(size=size, dpi=dpi)


def test_a_new_dpi_keeps_the_inches():
    o = ExportOptions(1500, 1000, 250).with_dpi(100)
    assert (o.width, o.height, o.inches) == (600, 400, (6.0, 4.0))


def test_hints_are_the_parenthesised_parts_that_name_an_action():
    assert without_hints("q (click to pin)") == "q"
    assert without_hints("Weights (drag to move) over T") == "Weights over T"
    assert without_hints("entmax (α = 1.50)") == "entmax (α = 1.50)"
    assert without_hints("p (compressed)") == "p (compressed)"  # a word, not a part of one


# -- the files --------------------------------------------------------------------------------


def test_every_png_has_the_chosen_size_and_dpi_and_the_svg_its_inches(make_view, tmp_path):
    view = make_view("gradients")
    options = ExportOptions(900, 500, 150)
    written = export_view(view, "gradients", tmp_path, arrays=False, options=options)
    assert len(written) == 2 * len(view.plots())
    for key in view.plots():
        assert png_info(tmp_path / f"gradients_{key}.png") == (900, 500, pytest.approx(150, abs=0.1))
        root = svg_root(tmp_path / f"gradients_{key}.svg")
        assert (float(root.get("width")), float(root.get("height"))) == (576.0, 320.0)  # 6 x 3.33 in
        assert root.get("viewBox") == "0 0 576 320"


def test_plots_are_landscape_whatever_their_shape_on_screen(make_view, tmp_path):
    """The Gradients column and saturation plots are tall on screen (they exported as 1200x1812)."""
    view = make_view("gradients")
    for key in ("column", "saturation"):
        shown = view.plots()[key].size()
        assert shown.height() > shown.width()
    export_view(view, "gradients", tmp_path, arrays=False)
    for key in ("column", "saturation"):
        assert png_info(tmp_path / f"gradients_{key}.png")[:2] == (1200, 800)


def test_text_lines_and_symbols_scale_with_the_dpi(make_view, tmp_path):
    """The same 6 x 4 in figure at 100 and 200 dpi: every stroke is twice as wide and tall.

    Ink (non-background pixels) grows with the area, 4x, only if lines
    widen too: with 1 px pens left at 1 px (grid, axes, limit lines) the
    ratio was 2.7; with them widened it is 3.6 (anti-aliased edges and
    hinted text keep it under 4).
    """
    view = make_view("temperature")
    low, high = tmp_path / "low", tmp_path / "high"
    low.mkdir()
    high.mkdir()
    export_view(view, "temperature", low, arrays=False, options=ExportOptions(600, 400, 100))
    export_view(view, "temperature", high, arrays=False, options=ExportOptions(1200, 800, 200))
    small, big = ink(low / "temperature_entropy.png"), ink(high / "temperature_entropy.png")
    assert 3.3 < big.sum() / small.sum() < 4.6

    def title_height(mask):
        rows = np.flatnonzero(mask[: mask.shape[0] // 10, mask.shape[1] // 4: 3 * mask.shape[1] // 4].any(axis=1))
        return rows.max() - rows.min() + 1

    assert title_height(big) / title_height(small) == pytest.approx(2.0, rel=0.15)


def test_legend_text_is_as_large_as_the_axis_text(make_view, tmp_path):
    view = make_view("normalizers")
    export_view(view, "normalizers", tmp_path, arrays=False)
    root = svg_root(next(tmp_path.glob("*.svg")))

    def sizes(part):  # the groups are named after the items: LegendItem_1, AxisItem_2, FittedAxis_1
        return {float(t.get("font-size")) for g in root.iter(f"{SVG}g") if part in g.get("id", "")
                for t in g.iter(f"{SVG}text")}

    legend, axes = sizes("Legend"), sizes("Axis")
    assert legend
    assert axes
    assert legend == axes


def test_interaction_hints_are_left_out_of_the_figure_and_kept_on_screen(make_view, tmp_path):
    view = make_view("simplex")
    plot = next(iter(view.plots().values()))
    legend = plot.getPlotItem().legend
    on_screen = [label.text for _sample, label in legend.items]
    assert any("(click to pin)" in t for t in on_screen)
    export_view(view, "simplex", tmp_path, arrays=False)
    (svg,) = tmp_path.glob("*.svg")
    texts = " ".join(svg_texts(svg))
    assert "click" not in texts
    assert "pin" not in texts
    assert "q" in svg_texts(svg)  # the legend entry itself stays
    assert [label.text for _sample, label in legend.items] == on_screen


def test_the_plot_is_put_back_as_it_was(make_view, tmp_path):
    view = make_view("gradients")
    plot = view.plots()["column"]
    item = plot.getPlotItem()
    before = (item.geometry(), item.getViewBox().viewRange())
    export_view(view, "gradients", tmp_path, arrays=False)
    assert (item.geometry(), item.getViewBox().viewRange()) == before
    first = QImage(str(tmp_path / "gradients_column.png"))
    export_view(view, "gradients", tmp_path, arrays=False, overwrite=True)
    assert QImage(str(tmp_path / "gradients_column.png")) == first  # nothing drifts between exports


def test_a_failing_svg_leaves_no_png_either(make_view, tmp_path, monkeypatch):
    from gui.export import figure

    def fail(plot, options):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(figure, "render_svg", fail)
    with pytest.raises(ExportError, match="No space left"):
        export_view(make_view("calculator"), "calculator", tmp_path, arrays=False)
    assert list(tmp_path.iterdir()) == []


# -- the window -------------------------------------------------------------------------------


def test_the_dialog_keeps_the_inches_when_the_dpi_changes(qtbot):
    from gui.export.dialog import ExportOptionsDialog

    dialog = ExportOptionsDialog(ExportOptions())
    qtbot.addWidget(dialog)
    dialog.dpi_box.setValue(300)
    assert dialog.options() == ExportOptions(1800, 1200, 300)
    assert "6 × 4 in" in dialog.summary.text()
    dialog.width_box.setValue(2400)  # a side alone keeps the dpi
    assert dialog.options() == ExportOptions(2400, 1200, 300)
    dialog.reset_button.click()
    assert dialog.options() == ExportOptions()


def test_the_dialog_refuses_a_figure_too_small_to_lay_out(qtbot):
    from PySide6.QtWidgets import QDialogButtonBox

    from gui.export.dialog import ExportOptionsDialog

    dialog = ExportOptionsDialog(ExportOptions())
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    dialog.width_box.setValue(300)
    assert not ok.isEnabled()
    assert "Too small" in dialog.summary.text()
    dialog.dpi_box.setValue(100)  # the inches stay 1.5 x 4: still too narrow
    assert dialog.width_box.value() == 150
    assert not ok.isEnabled()
    dialog.width_box.setValue(300)  # 3 x 4 in at 100 dpi
    assert ok.isEnabled()
    assert dialog.options() == ExportOptions(300, 400, 100)


def test_the_size_is_remembered(qtbot, tmp_path, monkeypatch):
    from gui.export import dialog as dialogs

    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    seen = []

    def choose(self):
        seen.append(self.options())
        self.set_options(ExportOptions(1000, 700, 120))
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(dialogs.ExportOptionsDialog, "exec", choose)
    assert dialogs.ask_export_options(None, settings) == ExportOptions(1000, 700, 120)
    assert dialogs.ask_export_options(None, settings) == ExportOptions(1000, 700, 120)
    assert seen == [ExportOptions(), ExportOptions(1000, 700, 120)]  # the second starts from the first
    monkeypatch.setattr(dialogs.ExportOptionsDialog, "exec", lambda self: QDialog.DialogCode.Rejected)
    assert dialogs.ask_export_options(None, settings) is None
    settings.setValue("export/dpi", "lots")  # a damaged setting falls back to the default
    assert dialogs.load_options(settings) == ExportOptions()


def test_export_plots_asks_the_size_before_the_folder(qtbot, window, tmp_path, monkeypatch):
    import gui.app

    asked = []
    monkeypatch.setattr(QFileDialog, "getExistingDirectory",
                        staticmethod(lambda *args, **kwargs: asked.append("folder") or str(tmp_path)))
    monkeypatch.setattr(gui.app, "ask_export_options", lambda parent, settings: None)
    window.export_dialog(plots=True, arrays=False)
    assert asked == []  # cancelled at the size: no folder asked, nothing written
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr(gui.app, "ask_export_options", lambda parent, settings: ExportOptions(800, 500, 100))
    window.export_dialog(plots=True, arrays=False)
    assert asked == ["folder"]
    assert png_info(tmp_path / "calculator_probs.png") == (800, 500, pytest.approx(100, abs=0.1))
    window.export_dialog(plots=False, arrays=True)  # arrays need no size
    assert (tmp_path / "calculator.npz").exists()


# -- the command line -------------------------------------------------------------------------


def test_the_command_line_takes_dpi_and_size_and_prints_only_the_files(tmp_path):
    result = run_main("export", "--view", "gradients", "--plots-only", "--dpi", "100", "--out", str(tmp_path / "a"))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # no "This plugin does not support propagateSizeHints()"
    assert png_info(tmp_path / "a" / "gradients_column.png") == (600, 400, pytest.approx(100, abs=0.1))
    result = run_main("export", "--view", "calculator", "--plots-only", "--size", "800x600",
                      "--out", str(tmp_path / "b"))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert png_info(tmp_path / "b" / "calculator_probs.png") == (800, 600, pytest.approx(200, abs=0.1))
    assert sorted(result.stdout.split()) == sorted(str(p) for p in (tmp_path / "b").iterdir())


@pytest.mark.parametrize(("args", "message"), [(["--size", "big"], "--size"), (["--dpi", "5"], "--dpi"),
                                               (["--size", "200x150"], "smaller than")])
def test_a_bad_size_is_one_line_naming_softmax_lab(tmp_path, args, message):
    result = run_main("export", "--view", "calculator", *args, "--out", str(tmp_path / "o"))
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("softmax-lab export: error: ")
    assert message in line
    assert not (tmp_path / "o").exists()


def test_help_and_errors_name_softmax_lab_not_main_py():
    for args in (["--help"], ["export", "--help"]):
        result = run_main(*args)
        assert result.returncode == 0
        assert "softmax-lab" in result.stdout
        assert "main.py" not in result.stdout
    assert "--dpi" in run_main("export", "--help").stdout
    result = run_main("--frobnicate")
    assert result.stderr.startswith("softmax-lab: error:")
    result = run_main("export", "--view", "nope", "--out", "x")
    assert result.stderr.startswith("softmax-lab export: error:")


def test_only_the_known_qt_message_is_dropped():
    import subprocess
    import sys

    from tests.conftest import ROOT

    code = ("from gui.cli import quiet_qt\n"
            "from PySide6.QtCore import qWarning\n"
            "quiet_qt()\n"
            "qWarning('This plugin does not support propagateSizeHints()')\n"
            "qWarning('something else went wrong')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert "propagateSizeHints" not in result.stderr
    assert "something else went wrong" in result.stderr
