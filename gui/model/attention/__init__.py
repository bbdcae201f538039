"""The Attention view's model: its data sources, its results and the evented model (no Qt).

``sources`` reads and validates files and builds Q, K, V; ``core`` computes
what the view draws for a snapshot of the inputs (thread-safe); ``model`` is
the evented :class:`AttentionModel` that caches those results.
"""

from gui.model.attention.core import (
    SWEEP_COLUMNS,
    SWEEP_DK,
    AttentionCore,
    AttentionResult,
    CoreInputs,
    SweepInputs,
    compute_core,
    sweep_steps,
)
from gui.model.attention.model import ASYNC_CELLS, ASYNC_WORK, MAX_LABELLED, AttentionModel, needs_worker
from gui.model.attention.sources import (
    DEFAULT_SENTENCE,
    MAX_HEADS,
    MAX_N,
    MAX_TABLE,
    SOURCES,
    LoadedArrays,
    LoadError,
    TableArrays,
    default_tables,
    distinct_labels,
    load_arrays,
    memory_limit,
    random_qkv,
    sentence_qkv,
    token_embedding,
    tokens_of,
    total_ram,
    validate,
    validate_tables,
)

__all__ = [
    "ASYNC_CELLS", "ASYNC_WORK", "DEFAULT_SENTENCE", "MAX_HEADS", "MAX_LABELLED", "MAX_N", "MAX_TABLE",
    "SOURCES", "SWEEP_COLUMNS", "SWEEP_DK", "AttentionCore", "AttentionModel", "AttentionResult", "CoreInputs",
    "LoadError", "LoadedArrays", "SweepInputs", "TableArrays", "compute_core", "default_tables",
    "distinct_labels", "load_arrays", "memory_limit", "needs_worker", "random_qkv", "sentence_qkv",
    "sweep_steps", "token_embedding", "tokens_of", "total_ram", "validate", "validate_tables",
]
