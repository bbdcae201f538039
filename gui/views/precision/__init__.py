"""The Precision view (``gui.views.precision:PrecisionView`` in the registry).

One module per part: ``cells`` (cell texts, colours and the table both
grids use), ``grid`` (the format × formula grid), ``masking`` (the masking
panel), ``plots`` (the overflow and float32-sum plots) and ``view`` (the
view, which only builds and wires them).
"""

from gui.views.precision.view import PrecisionView

__all__ = ["PrecisionView"]
