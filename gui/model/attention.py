"""The Attention view's model: softmax(Q Kᵀ · scale) V, one softmax per query row.

Everything the view draws is computed here, without Qt, through ``compute``'s
attention functions, so the window, the tests and the headless export share
one code path.

Sources
    ``random``: seeded Gaussian Q, K, V of shape (heads, n, d_k) (d_v = d_k).
    ``sentence``: the whitespace tokens of ``sentence``; each token gets a
    random embedding seeded by the CRC-32 of its text (the same token always
    gets the same vector, across runs and machines), and seeded random
    projections W_q, W_k, W_v per head turn the embeddings into Q, K, V.
    ``tables``: editable Q, K, V of at most 16 tokens and d <= 16 (one head),
    started from head 1 of what was shown (see :meth:`AttentionModel.start_tables`).
    ``file``: arrays loaded from a ``.npz`` (arrays ``q``, ``k``, ``v`` and
    optionally a boolean ``mask``) or a ``.npy`` holding a (3, [heads,] n, d)
    stack of q, k, v; see :func:`load_arrays`.  With this source ``n``,
    ``d_k`` and ``heads`` come from the file.

Parameters (controls, ``--NAME`` options, session entries)
    ``causal`` is a choice, ``off`` or ``on`` (``--causal on``), so that the
    command line reads plainly.  ``padding`` masks the last m keys.  ``head``
    and ``query`` are 1-based and clamped to the data; ``head`` 0 means all
    heads (the view draws a grid of them; the bars, the steps and the export
    use head 1).

Plain fields (view state, not saved)
    ``sentence``, ``file_path``, ``loaded`` (the validated arrays of the
    last good file) and ``tables`` (the tables source's arrays).
"""

from __future__ import annotations

import math
import os
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
from psygnal import evented

import compute
from gui.model.base import ExportArray, ViewModel, choice, param, path_param
from gui.model.calculator import STEP_COLUMNS
from gui.model.scores import ScoreRow

SOURCES = ("random", "sentence", "file", "tables")
#: The tables source holds at most this many tokens and this d (d_v).
MAX_TABLE = 16
SCALINGS = ("sqrt_dk", "none", "custom")
SWITCH = ("off", "on")
DEFAULT_SENTENCE = "the cat sat on the mat because it was tired"
MAX_N = 2048
MAX_HEADS = 16
#: Token labels go on the heatmap axes up to this many rows/columns.
MAX_LABELLED = 40
#: At most this many score entries go into the histogram (a strided sample beyond).
HIST_SAMPLE = 1_000_000
HIST_BINS = 60
FALLBACK_RAM = 8 * 1024**3


def total_ram() -> int:
    """The machine's physical memory in bytes (8 GiB where it cannot be read)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return FALLBACK_RAM


def memory_limit() -> int:
    """Configurations needing more than this many bytes are refused."""
    return total_ram() // 4


def _gib(nbytes: float) -> str:
    if nbytes >= 1024**3:
        return f"{nbytes / 1024**3:.2f} GiB"
    return f"{nbytes / 1024**2:.1f} MiB"


class LoadError(ValueError):
    """A file that cannot be used; the message says which and what was expected."""


@dataclass(frozen=True, eq=False)  # compared by identity: arrays have no truth value
class LoadedArrays:
    """Validated float64 arrays of one file: q (H, n_q, d), k (H, n_k, d), v (H, n_k, d_v)."""

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    mask: np.ndarray | None  # bool, (n_k,), (n_q, n_k) or (H, n_q, n_k)
    path: str


_EXPECTED = "a .npz with float arrays q (n, d), k (n, d), v (n, d_v) (optionally with a leading heads axis) and optionally a bool mask"


def _float_array(name: str, a: np.ndarray, where: str) -> np.ndarray:
    if not np.issubdtype(a.dtype, np.floating):
        raise LoadError(f"{where}: array '{name}' has dtype {a.dtype}; expected a floating-point array "
                        "(float16, float32 or float64)")
    if a.ndim not in (2, 3):
        raise LoadError(f"{where}: array '{name}' has shape {a.shape}; expected (n, d) or (heads, n, d)")
    a = np.asarray(a, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise LoadError(f"{where}: array '{name}' holds inf or NaN; expected finite numbers")
    return a[None] if a.ndim == 2 else a


def validate(q, k, v, mask, where: str) -> LoadedArrays:
    """Check shapes and dtypes of raw arrays; raise LoadError saying what is wrong."""
    q, k, v = (_float_array(n, a, where) for n, a in (("q", q), ("k", k), ("v", v)))
    heads = {q.shape[0], k.shape[0], v.shape[0]}
    if len(heads) != 1:
        raise LoadError(f"{where}: q, k and v have different numbers of heads "
                        f"({q.shape[0]}, {k.shape[0]}, {v.shape[0]}); expected the same")
    h = q.shape[0]
    if not 1 <= h <= MAX_HEADS:
        raise LoadError(f"{where}: {h} heads; expected 1 to {MAX_HEADS}")
    if q.shape[2] != k.shape[2]:
        raise LoadError(f"{where}: q has shape {q.shape[1:]} and k has shape {k.shape[1:]}; "
                        "expected the same last dimension d_k")
    if k.shape[1] != v.shape[1]:
        raise LoadError(f"{where}: k has {k.shape[1]} rows and v has {v.shape[1]}; expected one value row per key")
    n_q, n_k = q.shape[1], k.shape[1]
    if not (1 <= n_q <= MAX_N and 1 <= n_k <= MAX_N):
        raise LoadError(f"{where}: {n_q} queries and {n_k} keys; expected 1 to {MAX_N} of each")
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype != np.bool_:
            raise LoadError(f"{where}: array 'mask' has dtype {mask.dtype}; expected bool (True = may attend)")
        if mask.shape not in ((n_k,), (n_q, n_k), (h, n_q, n_k)):
            raise LoadError(f"{where}: array 'mask' has shape {mask.shape}; expected ({n_k},), "
                            f"({n_q}, {n_k}) or ({h}, {n_q}, {n_k})")
        mask = mask.copy()
    return LoadedArrays(q, k, v, mask, where)


def load_arrays(path: str | os.PathLike) -> LoadedArrays:
    """Read and validate a .npz (q, k, v, optional mask) or a .npy (3, [heads,] n, d) stack.

    Never unpickles anything.  Raises LoadError with a message naming the
    file, what is wrong and what was expected.
    """
    path = Path(path)
    where = path.name
    try:
        with open(path, "rb") as fh:
            magic = fh.read(6)
    except OSError as exc:
        raise LoadError(f"cannot read {where}: {exc.strerror or exc}") from None
    try:
        if magic.startswith(b"PK"):
            with np.load(path, allow_pickle=False) as f:
                missing = [name for name in ("q", "k", "v") if name not in f.files]
                if missing:
                    found = ", ".join(f.files) or "nothing"
                    raise LoadError(f"{where} has no array named {', '.join(repr(m) for m in missing)} "
                                    f"(it holds: {found}); expected {_EXPECTED}")
                arrays = {name: f[name] for name in ("q", "k", "v")}
                mask = f["mask"] if "mask" in f.files else None
            return validate(arrays["q"], arrays["k"], arrays["v"], mask, where)
        if magic == b"\x93NUMPY":
            stack = np.load(path, allow_pickle=False)
            if stack.ndim not in (3, 4) or stack.shape[0] != 3:
                raise LoadError(f"{where}: a .npy of shape {stack.shape}; expected a (3, n, d) or "
                                "(3, heads, n, d) stack of q, k, v (or use a .npz)")
            return validate(stack[0], stack[1], stack[2], None, where)
    except LoadError:
        raise
    except ValueError as exc:
        if "allow_pickle" in str(exc) or "pickle" in str(exc).lower():
            raise LoadError(f"{where} holds Python objects (pickled data), which are never loaded; "
                            f"expected {_EXPECTED}") from None
        raise LoadError(f"{where} is not a readable NumPy file ({exc}); expected {_EXPECTED}") from None
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise LoadError(f"cannot read {where}: {exc}; expected {_EXPECTED}") from None
    raise LoadError(f"{where} is not a NumPy .npz or .npy file; expected {_EXPECTED}")


@dataclass(frozen=True, eq=False)  # compared by identity, like LoadedArrays
class TableArrays:
    """The tables source: float64 q (n, d), k (n, d), v (n, d_v), n and d at most MAX_TABLE."""

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray

    def with_value(self, which: str, row: int, col: int, value: float) -> TableArrays:
        return self.with_block(which, row, col, np.array([[value]]), np.ones((1, 1), dtype=bool))

    def with_block(self, which: str, row: int, col: int, block: np.ndarray, good: np.ndarray) -> TableArrays:
        """A copy with the ``good`` cells of ``block`` written at (row, col) of array ``which``."""
        arrays = {"q": self.q, "k": self.k, "v": self.v}
        a = arrays[which].copy()
        target = a[row:row + block.shape[0], col:col + block.shape[1]]
        fit = block[:target.shape[0], :target.shape[1]]
        np.copyto(target, fit, where=good[:target.shape[0], :target.shape[1]])
        arrays[which] = a
        return TableArrays(**arrays)


def default_tables(core: AttentionCore | None, d_k: int, seed: int) -> TableArrays:
    """Head 1 of ``core`` (what is shown now) cut to MAX_TABLE tokens and d, or seeded random values."""
    if core is None:
        q, k, v = random_qkv(MAX_TABLE // 2, min(d_k, MAX_TABLE), 1, seed)
    else:
        q, k, v = core.q, core.k, core.v
    n = min(q.shape[1], k.shape[1], MAX_TABLE)
    return TableArrays(*(np.array(a[0, :n, :MAX_TABLE], dtype=np.float64) for a in (q, k, v)))


# -- the data sources --------------------------------------------------------------------
def tokens_of(sentence: str) -> list[str]:
    return sentence.split()[:MAX_N] or ["(empty)"]


def token_embedding(token: str, dim: int) -> np.ndarray:
    """A unit-variance random vector seeded by the token's CRC-32: stable across runs."""
    return np.random.default_rng(zlib.crc32(token.encode("utf-8"))).standard_normal(dim)


def sentence_qkv(tokens: list[str], d_k: int, heads: int, seed: int):
    """Q, K, V (heads, n, d_k) from token embeddings and seeded projections per head."""
    emb = np.stack([token_embedding(t, d_k) for t in tokens])  # (n, d_model = d_k)
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((3, heads, d_k, d_k)) / np.sqrt(d_k)  # keeps unit variance
    return tuple(emb @ w[i] for i in range(3))


def random_qkv(n: int, d_k: int, heads: int, seed: int):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((heads, n, d_k)) for _ in range(3))


def distinct_labels(tokens: list[str]) -> tuple[str, ...]:
    """Token labels; a repeated token gets its position, so every label is unique."""
    seen: dict[str, int] = {}
    for t in tokens:
        seen[t] = seen.get(t, 0) + 1
    return tuple(f"{t}·{i + 1}" if seen[t] > 1 else t for i, t in enumerate(tokens))


# -- the result ------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class AttentionCore:
    """The expensive part, for all heads (cached on the inputs)."""

    q_labels: tuple[str, ...]
    k_labels: tuple[str, ...]
    q: np.ndarray  # (H, n_q, d)
    k: np.ndarray  # (H, n_k, d)
    v: np.ndarray  # (H, n_k, d_v)
    scale: float  # the factor the scores were multiplied by
    raw: np.ndarray  # (H, n_q, n_k) Q Kᵀ
    scores: np.ndarray  # (H, n_q, n_k) Q Kᵀ · scale
    weights: np.ndarray  # (H, n_q, n_k)
    output: np.ndarray  # (H, n_q, d_v)
    allowed: np.ndarray  # (H, n_q, n_k) bool
    empty_rows: np.ndarray  # (H, n_q) bool: rows with no allowed key
    memory: int
    hist_edges: np.ndarray
    hist_raw: np.ndarray
    hist_scaled: np.ndarray
    std_raw: float
    std_scaled: float
    note: str


@dataclass(frozen=True, eq=False)
class AttentionResult:
    core: AttentionCore
    head: int  # 0-based
    query: int  # 0-based
    steps: compute.SoftmaxSteps  # the selected query row of the selected head
    show_all: bool = False  # head 0: all heads in a grid

    def __getattr__(self, name):  # the core's fields read through the result
        return getattr(self.core, name)

    @property
    def n_q(self) -> int:
        return self.core.weights.shape[1]

    @property
    def n_k(self) -> int:
        return self.core.weights.shape[2]

    @property
    def heads(self) -> int:
        return self.core.weights.shape[0]

    @property
    def all_heads(self) -> bool:
        """``head`` 0: every head is shown (``head`` is then head 1, the one the rest shows)."""
        return self.show_all

    @property
    def row(self) -> np.ndarray:
        return self.core.weights[self.head, self.query]

    @property
    def masked_row_indices(self) -> list[int]:
        """0-based query rows of the shown head that have no key to attend to."""
        return [int(i) for i in np.flatnonzero(self.core.empty_rows[self.head])]

    def table(self) -> np.ndarray:
        """The step table of the selected row, in calculator.STEP_COLUMNS order."""
        s = self.steps
        with np.errstate(over="ignore"):
            raw = np.exp(s.scaled)
        return np.column_stack([s.scores, s.scaled, raw, s.shifted, s.exps, s.probs, s.log_probs])


@dataclass(frozen=True, eq=False)
class CoreInputs:
    """An immutable snapshot of everything the core depends on (see AttentionModel.snapshot)."""

    source: str
    n: int
    d_k: int
    heads: int
    seed: int
    scaling: str
    temperature: float
    causal: str
    padding: int
    sentence: str
    loaded: LoadedArrays | None
    file_path: str = ""
    tables: TableArrays | None = None

    @property
    def key(self) -> tuple:
        """Equal keys mean equal cores (a loaded file is compared by identity)."""
        return (self.source, self.n, self.d_k, self.heads, self.seed, self.scaling, self.temperature,
                self.causal, self.padding, self.sentence if self.source == "sentence" else None,
                id(self.loaded) if self.source == "file" else None,
                id(self.tables) if self.source == "tables" else None)

    def table_arrays(self) -> TableArrays:
        return self.tables if self.tables is not None else default_tables(None, self.d_k, self.seed)

    def shape(self) -> tuple[int, int, int, int, int]:
        """(heads, n_q, n_k, d_k, d_v)."""
        if self.source == "file" and self.loaded is not None:
            h, n_q, d = self.loaded.q.shape
            return h, n_q, self.loaded.k.shape[1], d, self.loaded.v.shape[2]
        if self.source == "tables":
            t = self.table_arrays()
            return 1, t.q.shape[0], t.k.shape[0], t.q.shape[1], t.v.shape[1]
        n = len(tokens_of(self.sentence)) if self.source == "sentence" else self.n
        return self.heads, n, n, self.d_k, self.d_k

    def work(self) -> int:
        """About how many multiply-adds the core takes (both matrix products)."""
        h, n_q, n_k, d, d_v = self.shape()
        return h * n_q * n_k * (d + d_v)

    def scale_factor(self) -> float | None:
        """What compute.attention gets as ``scale`` (None: its own 1/sqrt(d_k))."""
        if self.scaling == "sqrt_dk":
            return None
        if self.scaling == "none":
            return 1.0
        return 1.0 / self.temperature


def _inputs(inp: CoreInputs):
    note = ""
    if inp.source == "file" and inp.loaded is not None:
        a = inp.loaded
        n_q, n_k = a.q.shape[1], a.k.shape[1]
        labels = (tuple(str(i + 1) for i in range(n_q)), tuple(str(j + 1) for j in range(n_k)))
        return a.q, a.k, a.v, a.mask, labels, note
    if inp.source == "tables":
        t = inp.table_arrays()
        labels = tuple(str(i + 1) for i in range(t.q.shape[0]))
        return t.q[None], t.k[None], t.v[None], None, (labels, labels), note
    if inp.source == "sentence":
        tokens = tokens_of(inp.sentence)
        q, k, v = sentence_qkv(tokens, inp.d_k, inp.heads, inp.seed)
        labels = distinct_labels(tokens)
        return q, k, v, None, (labels, labels), note
    if inp.source == "file":
        note = "no file loaded: showing random data (drop a .npz on the view or use Load file)"
    q, k, v = random_qkv(inp.n, inp.d_k, inp.heads, inp.seed)
    labels = tuple(str(i + 1) for i in range(inp.n))
    return q, k, v, None, (labels, labels), note


def _weights_and_output(scores: np.ndarray, v: np.ndarray, allowed: np.ndarray | None):
    """compute.attention's masking and softmax on precomputed float64 scores, bit for bit.

    The same operations in the same order as compute.attention (masked scores
    to -inf, softmax per row, rows with no finite score zeroed), so the tests
    that compare against compute.attention with array_equal hold.
    """
    with np.errstate(all="ignore"):
        masked = scores if allowed is None else np.where(allowed, scores, -np.inf)
        empty = (masked == -np.inf).all(axis=-1, keepdims=True)
        weights = compute.softmax(masked, axis=-1)
        np.copyto(weights, 0, where=empty)
        output = np.matmul(weights, v)
        np.copyto(output, 0, where=empty)
    return np.ascontiguousarray(weights), output


def compute_core(inp: CoreInputs) -> AttentionCore:
    """The core for ``inp``: a pure function of the snapshot (no model, no Qt; thread-safe).

    Q Kᵀ is computed once; the scaled scores are that matrix times the scale
    (what compute.attention_scores does) and the weights follow
    compute.attention's masking and softmax, so both match those functions
    to the bit.
    """
    q, k, v, file_mask, (q_labels, k_labels), note = _inputs(inp)
    h, n_q, n_k = q.shape[0], q.shape[1], k.shape[1]
    m = min(inp.padding, n_k)
    mask = compute.padding_mask(n_k, m) if m else None
    if file_mask is not None:
        mask = file_mask if mask is None else (file_mask & mask)
    causal = inp.causal == "on"
    scale = inp.scale_factor()
    factor = 1.0 / math.sqrt(q.shape[2]) if scale is None else compute.check_temperature(scale)
    with np.errstate(all="ignore"):
        raw = np.matmul(q, np.swapaxes(k, -1, -2))
        scores = raw * np.float64(factor) if factor != 1.0 else raw.copy()
    allowed = np.ones((n_q, n_k), dtype=bool)
    if causal:
        allowed = allowed & compute.causal_mask(n_q, n_k)
    if mask is not None:
        allowed = allowed & mask
    weights, output = _weights_and_output(scores, v, allowed if (causal or mask is not None) else None)
    allowed = np.broadcast_to(allowed, (h, n_q, n_k))
    empty = np.broadcast_to(np.asarray(compute.masked_rows(causal, mask, n_q, n_k)), (h, n_q))
    sample_raw = raw.reshape(-1)[:: max(1, raw.size // HIST_SAMPLE)]
    sample_scaled = scores.reshape(-1)[:: max(1, scores.size // HIST_SAMPLE)]
    top = float(max(np.abs(sample_raw).max(), np.abs(sample_scaled).max(), 1e-12))
    edges = np.linspace(-top, top, HIST_BINS + 1)
    return AttentionCore(
        q_labels=q_labels, k_labels=k_labels, q=q, k=k, v=v, scale=float(factor), raw=raw,
        scores=scores, weights=weights, output=output, allowed=allowed, empty_rows=empty,
        memory=int(compute.attention_memory(n_q, n_k, q.shape[2], v.shape[2], heads=h)),
        hist_edges=edges,
        hist_raw=np.histogram(sample_raw, edges)[0] / sample_raw.size,
        hist_scaled=np.histogram(sample_scaled, edges)[0] / sample_scaled.size,
        std_raw=float(raw.std()), std_scaled=float(scores.std()), note=note,
    )


@evented
@dataclass
class AttentionModel(ViewModel):
    name: ClassVar[str] = "attention"
    source: str = choice("random", SOURCES)
    n: int = param(8, minimum=2, maximum=MAX_N, integer=True)
    d_k: int = param(64, minimum=4, maximum=1024, log=True, integer=True)
    heads: int = param(1, minimum=1, maximum=MAX_HEADS, integer=True)
    seed: int = param(0, minimum=0, maximum=2**31 - 1, integer=True)
    scaling: str = choice("sqrt_dk", SCALINGS)
    temperature: float = param(1.0, minimum=0.01, maximum=100.0, log=True)
    causal: str = choice("off", SWITCH)
    padding: int = param(0, minimum=0, maximum=MAX_N - 1, integer=True)
    head: int = param(1, minimum=0, maximum=MAX_HEADS, integer=True)  # 0: all heads (a grid)
    query: int = param(1, minimum=1, maximum=MAX_N, integer=True)
    #: a .npz/.npy to load (``--file`` on the command line, saved in sessions)
    file: str = path_param()
    # view state: not saved, not options
    sentence: str = DEFAULT_SENTENCE
    file_path: str = ""
    loaded: LoadedArrays | None = None
    tables: TableArrays | None = None

    def __post_init__(self) -> None:
        self._core_key: tuple | None = None
        self._core: AttentionCore | None = None
        self._core_inputs: CoreInputs | None = None
        # the tables start from what is shown at the moment of the switch: this runs before
        # any view's callbacks (it is connected first), so before a redraw computes the new source
        self.events.source.connect(self._source_changed)

    def _source_changed(self, source: str) -> None:
        if source == "tables":
            self.start_tables()

    # -- the inputs ----------------------------------------------------------------
    def shape(self, **override) -> tuple[int, int, int, int, int]:
        """(heads, n_q, n_k, d_k, d_v) of the current source, with parameters overridden."""
        get = lambda name: override.get(name, getattr(self, name))  # noqa: E731
        source = get("source")
        if source == "file" and self.loaded is not None:
            h, n_q, d = self.loaded.q.shape
            return h, n_q, self.loaded.k.shape[1], d, self.loaded.v.shape[2]
        if source == "tables":
            t = self.tables if self.tables is not None else default_tables(None, self.d_k, self.seed)
            return 1, t.q.shape[0], t.k.shape[0], t.q.shape[1], t.v.shape[1]
        n = len(tokens_of(self.sentence)) if source == "sentence" else get("n")
        return get("heads"), n, n, get("d_k"), get("d_k")

    def memory_needed(self, **override) -> int:
        h, n_q, n_k, d, d_v = self.shape(**override)
        return int(compute.attention_memory(n_q, n_k, d, d_v, heads=h))

    def memory_problem(self, **override) -> str | None:
        """A message when the configuration needs more than a quarter of the RAM, else None."""
        need, limit = self.memory_needed(**override), memory_limit()
        if need <= limit:
            return None
        h, n_q, n_k, d, _ = self.shape(**override)
        return (f"{h} head(s) of {n_q} x {n_k} attention with d_k = {d} would need about {_gib(need)}, "
                f"more than a quarter of this machine's memory ({_gib(limit)}); the setting was not changed")

    def set_param(self, name: str, value) -> None:
        """As ViewModel.set_param, but a size the machine cannot hold is refused (state kept),
        and setting ``file`` loads it (a bad file raises LoadError and changes nothing)."""
        spec = self.params().get(name)
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
        if need > memory_limit():
            raise LoadError(f"{loaded.path}: {h} head(s) of {n_q} x {loaded.k.shape[1]} attention would need "
                            f"about {_gib(need)}, more than a quarter of this machine's memory")
        self.loaded = loaded
        self.file_path = self.file = os.fspath(path)
        self.source = "file"
        return loaded

    def scale_factor(self) -> float | None:
        """What compute.attention gets as ``scale`` (None: its own 1/sqrt(d_k))."""
        if self.scaling == "sqrt_dk":
            return None
        if self.scaling == "none":
            return 1.0
        return 1.0 / self.temperature

    def snapshot(self) -> CoreInputs:
        """The immutable inputs of :func:`compute_core` (safe to hand to a worker thread)."""
        return CoreInputs(
            source=self.source, n=self.n, d_k=self.d_k, heads=self.heads, seed=self.seed,
            scaling=self.scaling, temperature=self.temperature, causal=self.causal, padding=self.padding,
            sentence=self.sentence, loaded=self.loaded, file_path=self.file_path, tables=self.tables)

    def start_tables(self) -> TableArrays:
        """The tables of the tables source; the first time, head 1 of what was last computed
        (cut to MAX_TABLE tokens and d), or seeded random values."""
        if self.tables is None:
            self.tables = default_tables(self._core, self.d_k, self.seed)
        return self.tables

    def restore(self, inputs: CoreInputs) -> None:
        """Put back the inputs of ``inputs`` (the view's Cancel: controls match what is drawn)."""
        self.loaded, self.file_path, self.sentence = inputs.loaded, inputs.file_path, inputs.sentence
        self.file = inputs.file_path
        self.tables = inputs.tables
        for name in ("source", "n", "d_k", "heads", "seed", "scaling", "temperature", "causal", "padding"):
            if getattr(self, name) != getattr(inputs, name):
                setattr(self, name, getattr(inputs, name))

    def core_key(self) -> tuple:
        return self.snapshot().key

    def cached_core(self) -> AttentionCore | None:
        """The core of the current inputs when it is already computed, else None (never computes)."""
        if self._core is not None and self._core_key == self.core_key():
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

    def store_core(self, inputs: CoreInputs, core: AttentionCore) -> bool:
        """Keep a core computed elsewhere (a worker, on the GUI thread's call) if it is for the
        current inputs; a stale one is dropped.  Returns whether it was kept."""
        if inputs.key != self.core_key():
            return False
        self._core_key, self._core, self._core_inputs = inputs.key, core, inputs
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
        self._core = compute_core(inputs)
        self._core_key, self._core_inputs = inputs.key, inputs
        return self._core

    def result(self, scores: ScoreRow | None = None) -> AttentionResult:
        """Everything the view draws. ``scores`` (the shared score row) is not used."""
        return self.result_for(self.core())

    def result_for(self, core: AttentionCore) -> AttentionResult:
        """The selected head and query of ``core`` (which may be for earlier inputs).

        With ``head`` 0 (all heads) the selected head is head 1.
        """
        head = min(max(self.head, 1), core.weights.shape[0]) - 1
        query = min(self.query, core.weights.shape[1]) - 1
        row = np.where(core.allowed[head, query], core.scores[head, query], -np.inf)
        return AttentionResult(core, head, query, compute.softmax_steps(row), show_all=self.head == 0)

    def arrays(self, scores: ScoreRow | None = None) -> dict[str, ExportArray]:
        """Full-resolution 2-D arrays of the shown head (the .npz and one CSV each).

        With ``head`` 0 (all heads) these are head 1's arrays.
        """
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
                np.array([[h + 1, r.heads, r.n_q, r.n_k, c.q.shape[2], c.scale, r.query + 1,
                           c.std_raw, c.std_scaled, float(c.memory)]]),
                ("head", "heads", "n_q", "n_k", "d_k", "scale", "query", "std_raw", "std_scaled", "memory_bytes"),
            ),
        }
