"""One approved image per view's main plot, rendered in the window at 1280x800 (light theme)."""

import numpy as np
import pytest

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


def main_plot_image(window, qapp, name: str) -> np.ndarray:
    view = window.show_view(name)
    for _ in range(5):
        qapp.processEvents()
    view.flush()
    qapp.processEvents()
    plot = next(iter(view.plots().values()))
    return to_array(plot.grab().toImage())


@pytest.mark.parametrize("name", [spec.name for spec in registry.VIEWS])
def test_the_main_plot_looks_as_approved(shown_window, qapp, name):
    assert_matches(main_plot_image(shown_window, qapp, name), f"{name}_main")


def test_the_comparison_catches_a_squashed_or_shifted_plot(shown_window, qapp):
    image = main_plot_image(shown_window, qapp, "calculator")
    assert difference(image, image.copy()) == 0.0
    assert difference(image[:-20], image) == 1.0  # squashed: another size
    shifted = np.roll(image, 12, axis=1)
    assert difference(shifted, image) > 0.01  # the bars moved sideways
    noisy = np.clip(image.astype(int) + np.random.default_rng(0).integers(-8, 9, image.shape), 0, 255)
    assert difference(noisy.astype(np.uint8), image) == 0.0  # rendering noise passes
