"""The Variants view: ``view`` builds and wires; ``row_plots``, ``attention_plots`` and ``curves`` draw."""

from gui.views.variants.view import VariantsView

__all__ = ["VariantsView"]
