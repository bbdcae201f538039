"""The Variants view's model (``from gui.model.variants import VariantsModel``), without Qt.

``rows`` (one row of scores under each variant, its length, soft-capping),
``attention`` (ALiBi, sigmoid attention, QK-norm), ``model`` (parameters,
caches) and ``export`` (the arrays).
"""

from gui.model.variants.attention import AlibiResult, QkResult, SigmoidResult
from gui.model.variants.model import (
    ROW_TABS,
    SCORE_TABS,
    SOURCE_PARAMS,
    SWITCH_GRID,
    TAB_PARAMS,
    VariantsModel,
)
from gui.model.variants.rows import (
    BARS_SHOWN,
    GEMMA_CAPS,
    LENGTH_METHODS,
    MAX_N,
    METHODS,
    VARIANTS,
    LengthResult,
    RowResult,
    SoftcapResult,
)

__all__ = [
    "BARS_SHOWN", "GEMMA_CAPS", "LENGTH_METHODS", "MAX_N", "METHODS", "ROW_TABS", "SCORE_TABS", "SOURCE_PARAMS", "SWITCH_GRID", "VARIANTS", "TAB_PARAMS",
    "AlibiResult", "LengthResult", "QkResult", "RowResult", "SigmoidResult", "SoftcapResult", "VariantsModel",
]
