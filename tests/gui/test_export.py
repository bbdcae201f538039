"""Exporting plots and arrays from a view, and what happens when it fails."""

import csv
import os
import stat

import numpy as np
import pytest
from PySide6.QtGui import QColor, QImage

import compute
from gui import export
from gui import theme as themes
from gui.export import ExportError, export_view, read_npz
from gui.model.files import write_all_atomic

EXPECTED = {
    "calculator": {"calculator_probs.png", "calculator_probs.svg", "calculator.npz",
                   "calculator_steps.csv", "calculator_probs.csv", "calculator_summary.csv"},
    "temperature": {"temperature_bars.png", "temperature_bars.svg", "temperature_entropy.png",
                    "temperature_entropy.svg", "temperature.npz", "temperature_probs.csv",
                    "temperature_entropy_curve.csv", "temperature_summary.csv"},
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_export_writes_every_plot_and_array(make_view, tmp_path, name):
    view = make_view(name)
    written = export_view(view, name, tmp_path)
    assert {p.name for p in written} == EXPECTED[name]
    assert {p.name for p in tmp_path.iterdir()} == EXPECTED[name]  # no temporaries left
    umask = os.umask(0)
    os.umask(umask)
    for path in written:  # ordinary files, not mkstemp's private 0600
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask


def test_npz_and_csv_hold_the_arrays_to_the_bit(make_view, lab, tmp_path):
    lab.scores.set_values([5.2, 3.1, 1.8], ["the", "cat", "sat"])
    lab.models["temperature"].set_param("temperature", 0.5)
    view = make_view("temperature")
    export_view(view, "temperature", tmp_path)
    data = read_npz(tmp_path / "temperature.npz")
    expected = compute.softmax(np.array([5.2, 3.1, 1.8]), temperature=0.5)
    assert np.array_equal(data["probs"][:, 1], expected)
    assert data["probs__columns"].tolist() == ["logit", "p_at_T", "p_at_T1"]
    assert data["probs__rows"].tolist() == ["the", "cat", "sat"]
    with open(tmp_path / "temperature_probs.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["label", "logit", "p_at_T", "p_at_T1"]
    assert [r[0] for r in rows[1:]] == ["the", "cat", "sat"]
    assert np.array_equal(np.array([float(r[2]) for r in rows[1:]]), expected)
    assert np.round(100 * expected, 1).tolist() == [98.4, 1.5, 0.1]


def test_csv_round_trips_special_values(make_view, lab, tmp_path):
    lab.scores.set_values([1.0, -np.inf, np.inf])
    export_view(make_view("calculator"), "calculator", tmp_path, plots=False)
    with open(tmp_path / "calculator_probs.csv", newline="") as fh:
        rows = list(csv.reader(fh))[1:]
    assert [float(r[1]) for r in rows] == [0.0, 0.0, 1.0]
    steps = read_npz(tmp_path / "calculator.npz")["steps"]
    assert steps[1, 0] == -np.inf


def test_png_shows_the_bars_in_the_theme_colours(make_view, tmp_path):
    view = make_view("calculator")
    export_view(view, "calculator", tmp_path, arrays=False)
    image = QImage(str(tmp_path / "calculator_probs.png"))
    assert image.width() == export.PNG_WIDTH
    assert image.height() > 300
    accent = QColor(themes.current().accent)
    width, height = image.width(), image.height()
    colours = {image.pixelColor(x, y).rgb() for x in range(0, width, 7) for y in range(0, height, 7)}
    assert accent.rgb() in colours  # the bars
    assert QColor(themes.current().background).rgb() in colours


def test_svg_export_is_valid_xml_with_the_bars(make_view, tmp_path):
    import xml.etree.ElementTree as ET

    view = make_view("calculator")
    export_view(view, "calculator", tmp_path, arrays=False)
    root = ET.parse(tmp_path / "calculator_probs.svg").getroot()
    assert root.tag.endswith("svg")
    text = (tmp_path / "calculator_probs.svg").read_text()
    assert themes.current().accent.lower() in text.lower()


def test_existing_files_are_not_replaced_without_confirmation(make_view, tmp_path):
    view = make_view("calculator")
    target = tmp_path / "calculator.npz"
    target.write_bytes(b"precious")
    with pytest.raises(FileExistsError, match="calculator.npz"):
        export_view(view, "calculator", tmp_path)
    assert target.read_bytes() == b"precious"
    assert {p.name for p in tmp_path.iterdir()} == {"calculator.npz"}
    export_view(view, "calculator", tmp_path, overwrite=True)
    assert "probs" in read_npz(target)


def test_window_asks_before_replacing(qtbot, window, tmp_path, monkeypatch):
    (tmp_path / "calculator.npz").write_bytes(b"precious")
    asked = []
    monkeypatch.setattr(window, "ask_overwrite", lambda folder, files: asked.append(files) or False)
    assert window.export_current(tmp_path, plots=False) == []
    assert asked
    assert "calculator.npz" in asked[0]
    assert (tmp_path / "calculator.npz").read_bytes() == b"precious"
    monkeypatch.setattr(window, "ask_overwrite", lambda folder, files: True)
    written = window.export_current(tmp_path, plots=False)
    assert len(written) == 4
    assert "Wrote 4 file(s)" in window.statusBar().currentMessage()


def test_read_only_folder_reports_and_writes_nothing(qtbot, window, tmp_path, monkeypatch):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    if os.geteuid() == 0:  # root writes anywhere: make the folder refuse as it would for a user
        from gui.export import atomic

        def refuse(tmp):  # making the first temporary in the folder
            raise PermissionError(13, "Permission denied", str(tmp.parent))

        monkeypatch.setattr(atomic, "_create", refuse)
    errors = []
    monkeypatch.setattr(window, "report_error", lambda title, text: errors.append(text))
    try:
        assert window.export_current(folder) == []
    finally:
        folder.chmod(0o755)
    assert errors
    assert "Nothing was written" in errors[0]
    assert list(folder.iterdir()) == []


def test_a_failing_write_changes_nothing_and_leaves_no_temporaries(qtbot, window, tmp_path, monkeypatch):
    """Like a full disk: the third file fails after two were written to temporaries."""
    old = tmp_path / "calculator_probs.csv"
    old.write_text("old")
    real = export.plan

    def plan_with_failure(*args, **kwargs):
        jobs = real(*args, **kwargs)

        def boom(tmp):
            tmp.write_bytes(b"half")
            raise OSError(28, "No space left on device")

        jobs.insert(2, (tmp_path / "extra.bin", boom))
        return jobs

    monkeypatch.setattr(export, "plan", plan_with_failure)
    errors = []
    monkeypatch.setattr(window, "report_error", lambda title, text: errors.append(text))
    monkeypatch.setattr(window, "ask_overwrite", lambda folder, files: True)
    assert window.export_current(tmp_path) == []
    assert errors
    assert "No space left on device" in errors[0]
    assert [p.name for p in tmp_path.iterdir()] == ["calculator_probs.csv"]
    assert old.read_text() == "old"


def test_write_all_atomic_renames_only_after_every_write(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("old a")

    def fail(tmp):
        raise OSError("disk full")

    with pytest.raises(OSError):
        write_all_atomic([(a, lambda t: t.write_text("new a")), (b, fail)])
    assert a.read_text() == "old a"
    assert not b.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]
    write_all_atomic([(a, lambda t: t.write_text("new a")), (b, lambda t: t.write_text("b"))])
    assert a.read_text() == "new a"
    assert b.read_text() == "b"


def test_export_to_a_missing_folder_is_an_error(make_view, tmp_path):
    with pytest.raises(ExportError, match="not a folder"):
        export_view(make_view("calculator"), "calculator", tmp_path / "nope")


def test_a_view_that_was_never_shown_is_not_exported(qtbot, lab, tmp_path):
    from gui import registry

    view = registry.get("calculator").widget_class()(lab.scores, lab.models["calculator"])
    qtbot.addWidget(view)
    with pytest.raises(ExportError, match="shown"):
        export_view(view, "calculator", tmp_path)
    assert list(tmp_path.iterdir()) == []
