"""The Learning view's data: scikit-learn's bundled handwritten digits, split with a seed.

1,797 grey 8×8 images of the digits 0–9 (values 0..16), shipped inside the
scikit-learn package (no download).  The file is read directly
(``sklearn/datasets/data/digits.csv.gz``) so that opening the view does not
import scikit-learn and SciPy; where the file is not found,
``sklearn.datasets.load_digits`` is asked instead.  A test checks both give
the same arrays.

Pixels are divided by 16 (inputs in 0..1).  :func:`split` shuffles the
indices with ``np.random.default_rng(seed)`` and cuts them 60 / 20 / 20 into
train, validation and test.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gui.model.texts import tr

N_CLASSES = 10
SIDE = 8
#: train, validation (the early-stopping and temperature-fitting split), test
FRACTIONS = (0.6, 0.2, 0.2)
SPLITS = ("train", "val", "test")


class DataMissing(RuntimeError):
    """scikit-learn (and so its bundled digits) is not installed."""


@dataclass(frozen=True)
class Digits:
    images: np.ndarray  # (n, 8, 8) float64, 0..16
    labels: np.ndarray  # (n,) intp

    @functools.cached_property
    def x(self) -> np.ndarray:
        """The inputs: each image flattened, divided by 16 (computed once, read-only)."""
        x = self.images.reshape(len(self.labels), -1) / 16.0
        x.setflags(write=False)
        return x

    def __len__(self) -> int:
        return len(self.labels)


def _bundled_file() -> Path | None:
    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "datasets" / "data" / "digits.csv.gz"
    return path if path.is_file() else None


@functools.cache
def load_digits() -> Digits:
    """The digits (read once per process); :class:`DataMissing` without scikit-learn."""
    path = _bundled_file()
    if path is not None:
        table = np.loadtxt(path, delimiter=",")
        images, labels = table[:, :-1], table[:, -1]
    else:
        try:
            from sklearn.datasets import load_digits as sk_load
        except ImportError:
            raise DataMissing(tr("learning.error.no_sklearn")) from None
        images, labels = sk_load(return_X_y=True)
    images = np.ascontiguousarray(images, dtype=np.float64).reshape(-1, SIDE, SIDE)
    images.setflags(write=False)
    labels = np.asarray(labels).astype(np.intp)
    labels.setflags(write=False)
    return Digits(images, labels)


@dataclass(frozen=True)
class Split:
    """Index arrays into the digits, one per split."""

    train: np.ndarray
    val: np.ndarray
    test: np.ndarray

    def __getitem__(self, name: str) -> np.ndarray:
        return getattr(self, name)


@functools.lru_cache(maxsize=8)
def split(seed: int, n: int | None = None) -> Split:
    """The seeded 60 / 20 / 20 split of ``n`` examples (all the digits by default)."""
    n = len(load_digits()) if n is None else n
    order = np.random.default_rng(seed).permutation(n)
    a = round(FRACTIONS[0] * n)
    b = a + round(FRACTIONS[1] * n)
    parts = [np.sort(order[:a]), np.sort(order[a:b]), np.sort(order[b:])]
    for p in parts:
        p.setflags(write=False)
    return Split(*parts)
