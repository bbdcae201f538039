"""The Sampling view's model (``from gui.model.sampling import SamplingModel``), without Qt.

One module per part: ``vocabulary`` (the logit row's sources and the file
loader), ``draws`` (the seeded draws as a generator over an immutable
snapshot, and their chi-square test), ``router`` (the mixture-of-experts
gate), ``real`` (the model source: a real model's next-token logits and
the generate strip), ``speculative`` (a draft q against the target p),
``results`` (what the panels are handed), ``knobs`` (the knobs applied to
the vocabulary row, made from a kept softmax while only a cut moves),
``rowmath`` (row arithmetic that skips work for the same bits) and
``model`` (the parameters, the caches and the export).
"""

from gui.model.sampling.curves import CURVE_T, CURVES_IN_JOB_V, curve_job, curve_steps
from gui.model.sampling.draws import (
    MIN_EXPECTED,
    SYNC_DRAWS,
    SYNC_GUMBEL_WORK,
    DrawInputs,
    DrawResult,
    compute_draws,
    draw_steps,
    needs_worker,
)
from gui.model.sampling.model import (
    CUM_POINTS,
    CURVES,
    MAX_DRAWS,
    METHODS,
    SWITCH,
    SWITCHED_KNOBS,
    TAU_GRID,
    SamplingModel,
)
from gui.model.sampling.results import CurveResult, GumbelResult, SamplingResult
from gui.model.sampling.router import ROUTER_DIM, ROUTER_SHOWN, RouterResult, router
from gui.model.sampling.vocabulary import (
    MAX_V,
    MIN_V,
    SOURCES,
    LoadError,
    Vocabulary,
    load_logits,
    word_labels,
    words,
)

__all__ = [
    "CUM_POINTS", "CURVES", "CURVES_IN_JOB_V", "CURVE_T", "MAX_DRAWS", "MAX_V", "METHODS", "MIN_EXPECTED", "MIN_V", "ROUTER_DIM",
    "ROUTER_SHOWN", "SOURCES", "SWITCH", "SWITCHED_KNOBS", "SYNC_DRAWS", "SYNC_GUMBEL_WORK", "TAU_GRID",
    "CurveResult", "DrawInputs", "DrawResult", "GumbelResult", "LoadError", "RouterResult", "SamplingModel",
    "SamplingResult", "Vocabulary", "compute_draws", "curve_job", "curve_steps", "draw_steps", "load_logits", "needs_worker", "router",
    "word_labels", "words",
]
