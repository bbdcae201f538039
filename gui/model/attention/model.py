"""The Attention view's model: softmax(Q Kᵀ · scale) V, one softmax per query row.

Everything the view draws is computed here, without Qt, through ``compute``'s
attention functions, so the window, the tests and the headless export share
one code path: the core of every head (:func:`core.compute_core`) and the d_k
sweep (:func:`core.sweep_steps`).  Both are cached on their inputs; the view
runs large ones in its background jobs and hands the results back through
:meth:`AttentionModel.store_core` and :meth:`AttentionModel.store_sweep`.

Parameters (controls, ``--NAME`` options, session entries)
    ``causal`` is a choice, ``off`` or ``on`` (``--causal on``), so that the
    command line reads plainly.  ``padding`` masks the last m keys.  ``head``
    and ``query`` are 1-based and clamped to the data; ``head`` 0 means all
    heads (the view draws a grid of them; the bars, the steps and the export
    use head 1).  With the file source ``n``, ``d_k`` and ``heads`` come from
    the file, with the tables source from the tables (:meth:`applies`).
    The model source (``source`` "model") runs the real model ``model`` (a
    folder or a Hugging Face id) on ``prompt`` and shows layer ``layer`` of
    it (1-based, clamped); its own heads, tokens, scale and mask replace n,
    heads, d_k, the scaling and the masks, and ``head`` 0 shows every layer
    and head (see :class:`gui.model.attention.real.ModelSourceState`).

Plain fields (not parameters)
    ``sentence`` and ``tables`` (saved in sessions, see :meth:`extra_state`),
    ``file_path`` and ``loaded`` (the validated arrays of the last good file).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from psygnal import evented

import compute
from gui.model import llm
from gui.model.attention import sources
from gui.model.attention.core import (
    SWEEP_COLUMNS,
    AttentionCore,
    AttentionResult,
    CoreInputs,
    SweepInputs,
    compute_core,
    sweep_steps,
    sweep_table,
)
from gui.model.attention.real import ModelSourceState, scaling_name
from gui.model.attention.sources import (
    DEFAULT_SENTENCE,
    MAX_HEADS,
    MAX_N,
    SOURCES,
    LoadedArrays,
    LoadError,
    TableArrays,
    default_tables,
    gib_text,
    load_arrays,
)
from gui.model.base import ExportArray, ViewModel, choice, drain, param, path_param, text_param
from gui.model.calculator import STEP_COLUMNS
from gui.model.llm_source import MAX_MODEL_TEXT, MAX_PROMPT_TEXT, ModelSource
from gui.model.scores import ScoreRow
from gui.model.texts import tr

SCALINGS = ("sqrt_dk", "none", "custom")
SWITCH = ("off", "on")
#: Token labels go on the heatmap axes up to this many rows/columns.
MAX_LABELLED = 40
#: Inputs with at least this many score cells (heads x n_q x n_k) are computed in a worker thread.
ASYNC_CELLS = 512 * 512
#: ... and so are inputs needing at least this many multiply-adds (512 x 512 x 2 x 64: about 60 ms).
ASYNC_WORK = 512 * 512 * 128


def needs_worker(inputs: CoreInputs) -> bool:
    """Whether the core of ``inputs`` is big enough to compute off the GUI thread."""
    h, n_q, n_k, _, _ = inputs.shape()
    return h * n_q * n_k >= ASYNC_CELLS or inputs.work() >= ASYNC_WORK


@evented
@dataclass
class AttentionModel(ModelSourceState, ViewModel):
    name: ClassVar[str] = "attention"
    source: str = choice("random", SOURCES)
    n: int = param(8, minimum=2, maximum=MAX_N, integer=True, control="spin")
    d_k: int = param(64, minimum=4, maximum=1024, log=True, integer=True)
    heads: int = param(1, minimum=1, maximum=MAX_HEADS, integer=True, control="spin")
    seed: int = param(0, minimum=0, maximum=2**31 - 1, integer=True, control="spin")
    scaling: str = choice("sqrt_dk", SCALINGS)
    temperature: float = param(1.0, minimum=0.01, maximum=100.0, log=True)
    causal: str = choice("off", SWITCH)
    #: the weights' colours and the query bars over the weights' own range instead of 0..1 (drawing only)
    auto_levels: str = choice("off", SWITCH)
    padding: int = param(0, minimum=0, maximum=MAX_N - 1, integer=True, control="spin")
    head: int = param(1, minimum=0, maximum=max(MAX_HEADS, llm.MAX_HEADS), integer=True,
                      control="spin")  # 0: all heads (a grid)
    layer: int = param(1, minimum=1, maximum=llm.MAX_LAYERS, integer=True, control="spin")  # the model source
    query: int = param(1, minimum=1, maximum=MAX_N, integer=True, control="spin")
    #: a .npz/.npy to load (``--file`` on the command line, saved in sessions)
    file: str = path_param()
    #: the model source's model (a folder or a Hugging Face id) and prompt
    model: str = text_param("", max_length=MAX_MODEL_TEXT)
    prompt: str = text_param(DEFAULT_SENTENCE, max_length=MAX_PROMPT_TEXT)
    # not parameters
    sentence: str = DEFAULT_SENTENCE
    file_path: str = ""
    loaded: LoadedArrays | None = None
    tables: TableArrays | None = None

    def __post_init__(self) -> None:
        self._core: AttentionCore | None = None
        self._core_inputs: CoreInputs | None = None
        self._sweep: dict | None = None
        self._sweep_inputs: SweepInputs | None = None
        self.llm = ModelSource(llm.attention_steps)  # the model source's runs (not a field: not evented)
        # the tables start from what is shown at the moment of the switch: this runs before
        # any view's callbacks (it is connected first), so before a redraw computes the new source
        self.events.source.connect(self._source_changed)

    def _source_changed(self, source: str) -> None:
        if source == "tables":
            self.start_tables()

    # -- which parameters apply ------------------------------------------------------
    def applies(self, name: str) -> bool:
        """n, heads, d_k and the seed come from a loaded file or the tables; T only with the custom scale."""
        real = self.model_applies(name)
        if real is not None:
            return real
        fixed = (self.source == "file" and self.loaded is not None) or self.source == "tables"
        if name == "n":
            return self.source == "random" or (self.source == "file" and self.loaded is None)
        if name in ("heads", "d_k", "seed"):
            return not fixed
        if name == "temperature":
            return self.scaling == "custom"
        return True

    def value_in_use(self, name: str) -> Any:
        """n, heads and d_k of the data shown (a sentence's token count, a file's or the tables' sizes);
        no seed for a file or the tables; T = 1/scale (√d_k with the standard scale, 1 with none)."""
        if name == "layer" or (self.source == "model" and name in self.MODEL_FIXED):
            return self.model_value_in_use(name)
        if name not in ("n", "heads", "d_k", "seed", "temperature"):
            return super().value_in_use(name)
        heads, _, n_k, d, _ = self.shape()
        if name == "seed":
            fixed = (self.source == "file" and self.loaded is not None) or self.source == "tables"
            return None if fixed else self.seed
        if name == "temperature":
            return {"sqrt_dk": math.sqrt(d), "none": 1.0}.get(self.scaling, self.temperature)
        return {"n": n_k, "heads": heads, "d_k": d}[name]

    # -- the inputs ----------------------------------------------------------------
    def snapshot(self, **override: Any) -> CoreInputs:
        """The immutable inputs of :func:`compute_core` (safe to hand to a worker thread)."""
        get = lambda name: override.get(name, getattr(self, name))  # noqa: E731
        return CoreInputs(
            source=get("source"), n=get("n"), d_k=get("d_k"), heads=get("heads"), seed=get("seed"),
            scaling=get("scaling"), temperature=get("temperature"), causal=get("causal"),
            padding=get("padding"), sentence=self.sentence, loaded=self.loaded, file_path=self.file_path,
            tables=self.tables, llm=self.llm_shown if get("source") == "model" else None,
            layer=get("layer"))

    def shape(self, **override: Any) -> tuple[int, int, int, int, int]:
        """(heads, n_q, n_k, d_k, d_v) of the current source, with parameters overridden."""
        return self.snapshot(**override).shape()

    def memory_needed(self, **override: Any) -> int:
        h, n_q, n_k, d, d_v = self.shape(**override)
        return int(compute.attention_memory(n_q, n_k, d, d_v, heads=h))

    def memory_problem(self, **override: Any) -> str | None:
        """A message when the configuration needs more than a quarter of the RAM, else None."""
        need, limit = self.memory_needed(**override), sources.memory_limit()
        if need <= limit:
            return None
        h, n_q, n_k, d, _ = self.shape(**override)
        return tr("attention.memory.setting", h=h, n_q=n_q, n_k=n_k, d=d, need=gib_text(need), limit=gib_text(limit))

    def set_param(self, name: str, value) -> None:
        """As ViewModel.set_param, but a size the machine cannot hold is refused (state kept),
        and setting ``file`` loads it (a bad file raises LoadError and changes nothing)."""
        spec = self.params().get(name)
        self.check_model_param(name, value)
        if name == "file":
            path = spec.check(value)
            if path:
                self.load_file(path)
            else:
                self.file = ""
            return
        if spec is not None and name in ("n", "d_k", "heads", "source"):
            problem = self.memory_problem(**{name: spec.check(value)})
            if problem:
                raise ValueError(problem)
        super().set_param(name, value)

    def load_file(self, path: str | os.PathLike) -> LoadedArrays:
        """Load, validate, then switch to the file; on any error nothing changes (LoadError)."""
        loaded = load_arrays(path)
        h, n_q, d = loaded.q.shape
        need = compute.attention_memory(n_q, loaded.k.shape[1], d, loaded.v.shape[2], heads=h)
        if need > sources.memory_limit():
            raise LoadError(tr("attention.file.memory", where=loaded.path, h=h, n_q=n_q, n_k=loaded.k.shape[1],
                               need=gib_text(need)))
        self.loaded = loaded
        self.file_path = self.file = os.fspath(path)
        self.source = "file"
        return loaded

    def set_sentence(self, text: str) -> None:
        if text != self.sentence:
            self.sentence = text

    def start_tables(self) -> TableArrays:
        """The tables of the tables source; the first time, head 1 of what was last computed
        (cut to MAX_TABLE tokens and d), or seeded random values."""
        if self.tables is None:
            c = self._core
            self.tables = default_tables(*((c.q, c.k, c.v) if c is not None else (None, None, None)),
                                         self.d_k, self.seed)
        return self.tables

    def restore(self, inputs: CoreInputs) -> None:
        """Put back the inputs of ``inputs`` (the view's Cancel: controls match what is drawn)."""
        self.loaded, self.file_path, self.sentence = inputs.loaded, inputs.file_path, inputs.sentence
        self.file = inputs.file_path
        self.tables = inputs.tables
        for name in ("source", "n", "d_k", "heads", "seed", "scaling", "temperature", "causal", "padding",
                     "layer"):
            if getattr(self, name) != getattr(inputs, name):
                setattr(self, name, getattr(inputs, name))

    # -- the core: cached, computed here or handed in by a worker ---------------------------
    def core_key(self) -> tuple:
        return self.snapshot().key

    def cached_core(self) -> AttentionCore | None:
        """The core of the current inputs when it is already computed, else None (never computes)."""
        if self._core is not None and self._core_inputs is not None and self._core_inputs.key == self.core_key():
            return self._core
        return None

    @property
    def last_core(self) -> AttentionCore | None:
        """The last computed core, whatever inputs it was for (the view shows it while a job runs)."""
        return self._core

    @property
    def last_inputs(self) -> CoreInputs | None:
        """The inputs of :attr:`last_core`."""
        return self._core_inputs

    def pending_core(self) -> CoreInputs | None:
        """The inputs whose core is wanted but big enough for a worker (None: :meth:`core` is quick or cached)."""
        if self.cached_core() is not None or self.memory_problem():
            return None
        inputs = self.snapshot()
        return inputs if needs_worker(inputs) else None

    def store_core(self, inputs: CoreInputs, core: AttentionCore) -> bool:
        """Keep a core computed elsewhere if it is for the current inputs; a stale one is dropped."""
        if inputs.key != self.core_key():
            return False
        self._core, self._core_inputs = core, inputs
        return True

    def core(self) -> AttentionCore:
        """Scores, weights and output of every head; cached on everything they depend on."""
        cached = self.cached_core()
        if cached is not None:
            return cached
        problem = self.memory_problem()
        if problem:
            raise MemoryError(problem)
        inputs = self.snapshot()
        self._core, self._core_inputs = compute_core(inputs), inputs
        return self._core

    def result(self, scores: ScoreRow | None = None) -> AttentionResult:
        """Everything the view draws. ``scores`` (the shared score row) is not used."""
        return self.result_for(self.core())

    def result_for(self, core: AttentionCore) -> AttentionResult:
        """The selected head and query of ``core`` (which may be for earlier inputs).

        With ``head`` 0 (all heads) the selected head is head 1.
        """
        head = min(max(self.head, 1), core.heads) - 1
        query = min(self.query, core.n_q) - 1
        row = np.where(core.allowed[head, query], core.scores[head, query], -np.inf)
        scaling = self.scaling if core.real is None else scaling_name(core.real, core.layer)
        return AttentionResult(core, head, query, compute.softmax_steps(row), all_heads=self.head == 0,
                               scaling=scaling)

    # -- the d_k sweep ----------------------------------------------------------------------
    def sweep_inputs(self) -> SweepInputs:
        """The sweep runs at the number of keys shown, with the model's seed."""
        return SweepInputs(n=self.shape()[2], seed=self.seed)

    def sweep(self) -> dict | None:
        """The sweep of the current inputs when computed, else None (never computes)."""
        return self._sweep if self._sweep_inputs == self.sweep_inputs() else None

    def store_sweep(self, inputs: SweepInputs, sweep: dict) -> dict:
        self._sweep, self._sweep_inputs = sweep, inputs
        return sweep

    def sweep_now(self) -> dict:
        """The sweep of the current inputs, computed here if needed (headless export)."""
        inputs = self.sweep_inputs()
        return self.sweep() or self.store_sweep(inputs, drain(sweep_steps(inputs)))

    # -- what a session holds beyond the parameters ------------------------------------------------
    def extra_state(self) -> dict[str, Any]:
        """The typed sentence and the edited tables (JSON-ready), saved in sessions."""
        out: dict[str, Any] = {"sentence": self.sentence}
        if self.tables is not None:
            out["tables"] = {w: getattr(self.tables, w).tolist() for w in ("q", "k", "v")}
        return out

    def check_extra_state(self, state: dict[str, Any]) -> dict[str, Any]:
        """Validate saved extra state whole; raise ValueError saying what is wrong."""
        unknown = sorted(set(state) - {"sentence", "tables"})
        if unknown:
            raise ValueError(tr("attention.state.unknown", names=", ".join(unknown)))
        checked: dict[str, Any] = {}
        if "sentence" in state:
            if not isinstance(state["sentence"], str):
                raise ValueError(tr("attention.state.sentence"))
            checked["sentence"] = state["sentence"]
        if "tables" in state:
            t = state["tables"]
            if not isinstance(t, dict) or set(t) != {"q", "k", "v"}:
                raise ValueError(tr("attention.state.tables_keys"))
            try:
                arrays = {w: np.array(t[w], dtype=np.float64) for w in ("q", "k", "v")}
            except (TypeError, ValueError):
                raise ValueError(tr("attention.state.tables_numbers")) from None
            checked["tables"] = sources.validate_tables(arrays["q"], arrays["k"], arrays["v"])
        return checked

    def apply_extra_state(self, checked: dict[str, Any]) -> None:
        if "sentence" in checked:
            self.sentence = checked["sentence"]
        if "tables" in checked:
            self.tables = checked["tables"]

    # -- export -----------------------------------------------------------------------------------
    def arrays(self, scores: ScoreRow | None = None) -> dict[str, ExportArray]:
        """Full-resolution 2-D arrays of the shown head (the .npz and one CSV each), and the d_k sweep.

        With ``head`` 0 (all heads) these are head 1's arrays.  With the model
        source also the model's weights of every layer and head, its tokens and
        the recomputation's largest difference per layer (:meth:`model_arrays`).
        """
        self.ensure_model_result()  # the model source runs its model here when it has not yet (headless)
        r = self.result(scores)
        c, h = r.core, r.head
        d_cols = tuple(f"d{i + 1}" for i in range(c.q.shape[2]))
        dv_cols = tuple(f"d{i + 1}" for i in range(c.v.shape[2]))
        return {
            # the CSVs hold the shown head; the .npz holds every head, (heads, rows, columns)
            "q": ExportArray(c.q[h], d_cols, c.q_labels, npz_data=c.q),
            "k": ExportArray(c.k[h], d_cols, c.k_labels, npz_data=c.k),
            "v": ExportArray(c.v[h], dv_cols, c.k_labels, npz_data=c.v),
            "raw_scores": ExportArray(c.raw[h], c.k_labels, c.q_labels, npz_data=c.raw),
            "scores": ExportArray(c.scores[h], c.k_labels, c.q_labels, npz_data=c.scores),
            "weights": ExportArray(c.weights[h], c.k_labels, c.q_labels, npz_data=c.weights),
            "output": ExportArray(c.output[h], dv_cols, c.q_labels, npz_data=c.output),
            "masked": ExportArray((~c.allowed[h]).astype(np.float64), c.k_labels, c.q_labels,
                                  npz_data=(~c.allowed).astype(np.float64)),
            "steps": ExportArray(r.table(), STEP_COLUMNS, c.k_labels),
            "summary": ExportArray(
                np.array([[h + 1, c.heads, c.n_q, c.n_k, c.q.shape[2], c.scale, r.query + 1,
                           c.std_raw, c.std_scaled, float(c.memory)]]),
                ("head", "heads", "n_q", "n_k", "d_k", "scale", "query", "std_raw", "std_scaled", "memory_bytes"),
            ),
            "dk_sweep": ExportArray(sweep_table(self.sweep_now()), SWEEP_COLUMNS),
            **self.model_arrays(r),
        }



