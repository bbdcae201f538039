"""The Attention view: ``view`` builds and wires, ``panels`` show the result, ``plots`` and ``tables`` are its parts."""

from gui.views.attention.view import AttentionView

__all__ = ["AttentionView"]
