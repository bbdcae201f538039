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
    ``file``: arrays loaded from a ``.npz`` (arrays ``q``, ``k``, ``v`` and
    optionally a boolean ``mask``) or a ``.npy`` holding a (3, [heads,] n, d)
    stack of q, k, v; see :func:`load_arrays`.  With this source ``n``,
    ``d_k`` and ``heads`` come from the file.

Parameters (controls, ``--NAME`` options, session entries)
    ``causal`` is a choice, ``off`` or ``on`` (``--causal on``), so that the
    command line reads plainly.  ``padding`` masks the last m keys.  ``head``
    and ``query`` are 1-based and clamped to the data.

Plain fields (view state, not saved)
    ``sentence``, ``file_path`` and ``loaded`` (the validated arrays of the
    last good file).
"""

from __future__ import annotations

import os
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
from psygnal import evented

import compute
from gui.model.base import ExportArray, ViewModel, choice, param
from gui.model.calculator import STEP_COLUMNS
from gui.model.scores import ScoreRow

SOURCES = ("random", "sentence", "file")
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
    head: int = param(1, minimum=1, maximum=MAX_HEADS, integer=True)
    query: int = param(1, minimum=1, maximum=MAX_N, integer=True)
    # view state: not saved, not options
    sentence: str = DEFAULT_SENTENCE
    file_path: str = ""
    loaded: LoadedArrays | None = None

    def __post_init__(self) -> None:
        self._core_key: tuple | None = None
        self._core: AttentionCore | None = None

    # -- the inputs ----------------------------------------------------------------
    def shape(self, **override) -> tuple[int, int, int, int, int]:
        """(heads, n_q, n_k, d_k, d_v) of the current source, with parameters overridden."""
        get = lambda name: override.get(name, getattr(self, name))  # noqa: E731
        source = get("source")
        if source == "file" and self.loaded is not None:
            h, n_q, d = self.loaded.q.shape
            return h, n_q, self.loaded.k.shape[1], d, self.loaded.v.shape[2]
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
        """As ViewModel.set_param, but a size the machine cannot hold is refused (state kept)."""
        spec = self.params().get(name)
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
        self.file_path = str(path)
        self.source = "file"
        return loaded

    def scale_factor(self) -> float | None:
        """What compute.attention gets as ``scale`` (None: its own 1/sqrt(d_k))."""
        if self.scaling == "sqrt_dk":
            return None
        if self.scaling == "none":
            return 1.0
        return 1.0 / self.temperature

    def _inputs(self):
        note = ""
        if self.source == "file" and self.loaded is not None:
            a = self.loaded
            n_q, n_k = a.q.shape[1], a.k.shape[1]
            labels = (tuple(str(i + 1) for i in range(n_q)), tuple(str(j + 1) for j in range(n_k)))
            return a.q, a.k, a.v, a.mask, labels, note
        if self.source == "sentence":
            tokens = tokens_of(self.sentence)
            q, k, v = sentence_qkv(tokens, self.d_k, self.heads, self.seed)
            labels = distinct_labels(tokens)
            return q, k, v, None, (labels, labels), note
        if self.source == "file":
            note = "no file loaded: showing random data (drop a .npz on the view or use Load file)"
        q, k, v = random_qkv(self.n, self.d_k, self.heads, self.seed)
        labels = tuple(str(i + 1) for i in range(self.n))
        return q, k, v, None, (labels, labels), note

    def core(self) -> AttentionCore:
        """Scores, weights and output of every head; cached on everything they depend on."""
        key = (self.source, self.n, self.d_k, self.heads, self.seed, self.scaling, self.temperature,
               self.causal, self.padding, self.sentence if self.source == "sentence" else None,
               id(self.loaded) if self.source == "file" else None)
        if key == self._core_key and self._core is not None:
            return self._core
        problem = self.memory_problem()
        if problem:
            raise MemoryError(problem)
        q, k, v, file_mask, (q_labels, k_labels), note = self._inputs()
        h, n_q, n_k = q.shape[0], q.shape[1], k.shape[1]
        m = min(self.padding, n_k)
        mask = compute.padding_mask(n_k, m) if m else None
        if file_mask is not None:
            mask = file_mask if mask is None else (file_mask & mask)
        causal = self.causal == "on"
        scale = self.scale_factor()
        weights, output = compute.attention(q, k, v, scale=scale, causal=causal, mask=mask)
        scores = compute.attention_scores(q, k, scale=scale)
        raw = compute.attention_scores(q, k, scale=1.0)
        allowed = np.ones((n_q, n_k), dtype=bool)
        if causal:
            allowed = allowed & compute.causal_mask(n_q, n_k)
        if mask is not None:
            allowed = allowed & mask
        allowed = np.broadcast_to(allowed, (h, n_q, n_k))
        empty = np.broadcast_to(np.asarray(compute.masked_rows(causal, mask, n_q, n_k)), (h, n_q))
        factor = 1.0 / np.sqrt(q.shape[2]) if scale is None else scale
        sample_raw = raw.reshape(-1)[:: max(1, raw.size // HIST_SAMPLE)]
        sample_scaled = scores.reshape(-1)[:: max(1, scores.size // HIST_SAMPLE)]
        top = float(max(np.abs(sample_raw).max(), np.abs(sample_scaled).max(), 1e-12))
        edges = np.linspace(-top, top, HIST_BINS + 1)
        self._core = AttentionCore(
            q_labels=q_labels, k_labels=k_labels, q=q, k=k, v=v, scale=float(factor), raw=raw,
            scores=scores, weights=weights, output=output, allowed=allowed, empty_rows=empty,
            memory=int(compute.attention_memory(n_q, n_k, q.shape[2], v.shape[2], heads=h)),
            hist_edges=edges,
            hist_raw=np.histogram(sample_raw, edges)[0] / sample_raw.size,
            hist_scaled=np.histogram(sample_scaled, edges)[0] / sample_scaled.size,
            std_raw=float(raw.std()), std_scaled=float(scores.std()), note=note,
        )
        self._core_key = key
        return self._core

    def result(self, scores: ScoreRow | None = None) -> AttentionResult:
        """Everything the view draws. ``scores`` (the shared score row) is not used."""
        core = self.core()
        head = min(self.head, core.weights.shape[0]) - 1
        query = min(self.query, core.weights.shape[1]) - 1
        row = np.where(core.allowed[head, query], core.scores[head, query], -np.inf)
        return AttentionResult(core, head, query, compute.softmax_steps(row))

    def arrays(self, scores: ScoreRow | None = None) -> dict[str, ExportArray]:
        """Full-resolution 2-D arrays of the shown head (the .npz and one CSV each)."""
        r = self.result(scores)
        c, h = r.core, r.head
        d_cols = tuple(f"d{i + 1}" for i in range(c.q.shape[2]))
        dv_cols = tuple(f"d{i + 1}" for i in range(c.v.shape[2]))
        return {
            "q": ExportArray(c.q[h], d_cols, c.q_labels),
            "k": ExportArray(c.k[h], d_cols, c.k_labels),
            "v": ExportArray(c.v[h], dv_cols, c.k_labels),
            "raw_scores": ExportArray(c.raw[h], c.k_labels, c.q_labels),
            "scores": ExportArray(c.scores[h], c.k_labels, c.q_labels),
            "weights": ExportArray(c.weights[h], c.k_labels, c.q_labels),
            "output": ExportArray(c.output[h], dv_cols, c.q_labels),
            "masked": ExportArray((~c.allowed[h]).astype(np.float64), c.k_labels, c.q_labels),
            "steps": ExportArray(r.table(), STEP_COLUMNS, c.k_labels),
            "summary": ExportArray(
                np.array([[h + 1, r.heads, r.n_q, r.n_k, c.q.shape[2], c.scale, r.query + 1,
                           c.std_raw, c.std_scaled, float(c.memory)]]),
                ("head", "heads", "n_q", "n_k", "d_k", "scale", "query", "std_raw", "std_scaled", "memory_bytes"),
            ),
        }
