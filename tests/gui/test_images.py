"""One approved image per view's main plot, rendered in the window at 1280x800 (light theme)."""

import numpy as np
import pytest
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication

from gui import registry
from tests.gui.image_compare import assert_matches, difference, to_array


@pytest.fixture(scope="module")
def shown_window(qapp, tmp_path_factory):
    from gui.app import MainWindow

    w = MainWindow(settings_dir=tmp_path_factory.mktemp("images-config"), restore=False)
    w.lessons.close()  # approved without the Lessons panel beside the view
    w.set_theme("light")
    w.resize(1280, 800)
    w.show()
    yield w
    w.close()


def settle_layout(qapp, view, rounds: int = 3, limit: int = 100) -> None:
    """Process events until the view's widgets keep their sizes for ``rounds`` rounds in a row.

    A redraw that changes a control's text (a readout, a progress bar) makes the controls column
    ask for a new minimum width; the window lays out again only on a later pass of the event loop.
    One pass after a flush was not always enough (a run delivered late left the column 14 px narrower
    than its minimum and each plot 7 px wider than approved)."""
    def sizes():
        return [(w.width(), w.height()) for w in (view.controls_scroll, *view.plots().values()) if w is not None]

    last, quiet = None, 0
    for _ in range(limit):
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        qapp.processEvents()
        now = sizes()
        quiet = quiet + 1 if now == last else 0
        if quiet >= rounds:
            return
        last = now


def main_plot_image(window, qapp, name: str) -> np.ndarray:
    view = window.show_view(name)
    for _ in range(5):
        qapp.processEvents()
    view.flush()
    settle_layout(qapp, view)
    plot = next(iter(view.plots().values()))
    return to_array(plot.grab().toImage())


def layout_report(window, qapp, name: str) -> str:
    """What sizes the main plot: for a failure in CI, where the image cannot be looked at."""
    view = window.view(name)
    font = qapp.font()
    column = view.controls_scroll
    plots = {key: (p.width(), p.height()) for key, p in view.plots().items() if p.isVisible()}
    left = next(iter(view.plots().values())).getPlotItem().getAxis("left")
    return (f"window {window.width()}x{window.height()}, nav {window.nav.width()}, view {view.width()}, "
            f"controls column {column.width() if column is not None else None}, splitter {view.splitter.sizes()}, "
            f"font {font.family()!r} {font.pointSizeF()}, plots {plots}, main plot's left axis {left.width():.1f} "
            f"(text {left.textWidth}), status {window.statusBar().currentMessage()!r}")


@pytest.mark.parametrize("name", [spec.name for spec in registry.VIEWS])
def test_the_main_plot_looks_as_approved(shown_window, qapp, name):
    image = main_plot_image(shown_window, qapp, name)
    try:
        assert_matches(image, f"{name}_main")
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{layout_report(shown_window, qapp, name)}") from None


def test_the_comparison_catches_a_squashed_or_shifted_plot(shown_window, qapp):
    image = main_plot_image(shown_window, qapp, "calculator")
    assert difference(image, image.copy()) == 0.0
    assert difference(image[:-20], image) == 1.0  # squashed: another size
    shifted = np.roll(image, 12, axis=1)
    assert difference(shifted, image) > 0.01  # the bars moved sideways
    noisy = np.clip(image.astype(int) + np.random.default_rng(0).integers(-8, 9, image.shape), 0, 255)
    assert difference(noisy.astype(np.uint8), image) == 0.0  # rendering noise passes
