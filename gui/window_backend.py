"""The window's compute-backend line: the backend's name, and compute's fallback messages."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QObject, Signal

import compute


def backend_name() -> str:
    """The compute backend in use, with its version (and the GPU's name for CuPy)."""
    if compute.active() == "cupy":
        try:
            import cupy

            props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
            name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
            return f"CuPy {cupy.__version__} ({name})"
        except Exception:  # noqa: BLE001 - a label must never fail
            return "CuPy"
    return "NumPy " + np.__version__


class FallbackRelay(QObject):
    """Carries compute's fallback messages (from any thread) to the GUI thread."""

    message = Signal(str)

    def relay(self, text: str) -> None:
        self.message.emit(text)  # queued across threads by Qt
