"""Compare rendered widgets with approved images, with a tolerance (never byte for byte).

Modelled on pyqtgraph's ``tests/image_testing.py``: an image matches when it
has the same size and few pixels differ by more than a small amount, so
anti-aliasing noise passes and a squashed, shifted or overlapped plot fails.
``SOFTMAX_LAB_WRITE_IMAGES=1 pytest tests/gui/test_images.py`` writes the
approved images anew (look at them before committing).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from PySide6.QtGui import QImage

IMAGES = Path(__file__).parent / "images"
#: A pixel differs when a channel moved by more than this (0..255).
PIXEL_TOLERANCE = 48
#: An image matches when at most this share of its pixels differ.
MAX_DIFFERENT = 0.01


def to_array(image: QImage) -> np.ndarray:
    """An (h, w, 3) uint8 copy of a QImage."""
    image = image.convertToFormat(QImage.Format.Format_RGB888)
    h, w, stride = image.height(), image.width(), image.bytesPerLine()
    buf = np.frombuffer(image.constBits(), dtype=np.uint8, count=h * stride).reshape(h, stride)
    return buf[:, : 3 * w].reshape(h, w, 3).copy()


def from_array(a: np.ndarray) -> QImage:
    h, w, _ = a.shape
    data = np.ascontiguousarray(a)
    return QImage(data.data, w, h, 3 * w, QImage.Format.Format_RGB888).copy()


def difference(actual: np.ndarray, expected: np.ndarray) -> float:
    """The share of pixels that differ by more than PIXEL_TOLERANCE (1.0 when the sizes differ)."""
    if actual.shape != expected.shape:
        return 1.0
    diff = np.abs(actual.astype(np.int16) - expected.astype(np.int16)).max(axis=-1)
    return float((diff > PIXEL_TOLERANCE).mean())


def assert_matches(actual: np.ndarray, name: str) -> None:
    path = IMAGES / f"{name}.png"
    if os.environ.get("SOFTMAX_LAB_WRITE_IMAGES"):
        IMAGES.mkdir(exist_ok=True)
        assert from_array(actual).save(str(path)), path
        return
    assert path.exists(), f"no approved image {path.name}: run with SOFTMAX_LAB_WRITE_IMAGES=1 and look at it"
    expected = to_array(QImage(str(path)))
    if actual.shape != expected.shape:
        failed = IMAGES.parent / f"{name}.failed.png"
        from_array(actual).save(str(failed))
        raise AssertionError(f"{name}: rendered {actual.shape[1]}x{actual.shape[0]}, approved "
                             f"{expected.shape[1]}x{expected.shape[0]} (saved {failed.name})")
    share = difference(actual, expected)
    if share > MAX_DIFFERENT:
        failed = IMAGES.parent / f"{name}.failed.png"
        from_array(actual).save(str(failed))
        raise AssertionError(f"{name}: {100 * share:.1f}% of pixels differ from the approved image "
                             f"(at most {100 * MAX_DIFFERENT:.0f}% may; saved {failed.name})")
