"""The Learning view's model (``from gui.model.learning import LearningModel``), without Qt.

``data`` (the digits and their seeded split), ``results`` (what each tab
shows, from a training run), ``model`` (parameters, the run, caches) and
``export`` (the arrays).
"""

from gui.model.learning.model import EMBEDDINGS, MAX_EPOCHS, TAB_PARAMS, TRAIN_PARAMS, LearningModel

__all__ = ["EMBEDDINGS", "MAX_EPOCHS", "TAB_PARAMS", "TRAIN_PARAMS", "LearningModel"]
