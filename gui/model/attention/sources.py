"""The Attention view's data: where Q, K and V come from, and how big they may get.

``random``: seeded Gaussian Q, K, V of shape (heads, n, d_k) (d_v = d_k).
``sentence``: the whitespace tokens of a sentence; each token gets a random
embedding seeded by the CRC-32 of its text (the same token always gets the
same vector, across runs and machines), and seeded random projections W_q,
W_k, W_v per head turn the embeddings into Q, K, V.
``tables``: editable Q, K, V of at most 16 tokens and d <= 16 (one head).
``model``: a real model's attention on a prompt (see ``real`` and gui.model.llm).
``file``: arrays from a ``.npz`` (``q``, ``k``, ``v``, optionally a boolean
``mask``) or a ``.npy`` holding a (3, [heads,] n, d) stack; see
:func:`load_arrays`.  Never unpickled; at most MAX_HEADS heads, MAX_N
tokens, d and d_v from 1 to MAX_D, and a quarter of the machine's memory.
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass

import numpy as np

import compute
from gui.model.normal_stream import NormalStream
from gui.model.npfile import LoadError, open_numpy
from gui.model.texts import tr

SOURCES = ("random", "sentence", "file", "tables", "model")
#: The tables source holds at most this many tokens and this d (d_v).
MAX_TABLE = 16
DEFAULT_SENTENCE = "the cat sat on the mat because it was tired"
MAX_N = 2048
MAX_HEADS = 16
#: d_k and d_v of a loaded file (the d_k slider's maximum): 1 to MAX_D
MAX_D = 1024
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


def gib_text(nbytes: float) -> str:
    if nbytes >= 1024**3:
        return f"{nbytes / 1024**3:.2f} GiB"
    return f"{nbytes / 1024**2:.1f} MiB"


@dataclass(frozen=True, eq=False)  # compared by identity: arrays have no truth value
class LoadedArrays:
    """Validated float64 arrays of one file: q (H, n_q, d), k (H, n_k, d), v (H, n_k, d_v)."""

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    mask: np.ndarray | None  # bool, (n_k,), (n_q, n_k) or (H, n_q, n_k)
    path: str


def _expected() -> str:
    """What a file must hold (ends the messages), in the current language."""
    return tr("attention.file.expected", heads=MAX_HEADS, tokens=MAX_N, d=MAX_D)


def _float_layout(name: str, shape: tuple[int, ...], dtype: np.dtype, where: str) -> tuple[int, int, int]:
    """(heads, n, d) of a q, k or v of ``shape``; LoadError unless it is a 2-D or 3-D float array."""
    if not np.issubdtype(dtype, np.floating):
        raise LoadError(tr("attention.file.bad_dtype", where=where, name=name, dtype=dtype))
    if len(shape) not in (2, 3):
        raise LoadError(tr("attention.file.bad_shape", where=where, name=name, shape=tuple(shape)))
    return (1, *shape) if len(shape) == 2 else tuple(shape)


def check_layout(q: tuple, k: tuple, v: tuple, mask: tuple | None, where: str) -> tuple[int, int, int, int, int]:
    """Check the (shape, dtype) of q, k, v and the mask against the view's limits; (H, n_q, n_k, d, d_v).

    Run on a file's headers before its data are read, and again on the arrays;
    raises LoadError saying what is wrong and the limit.
    """
    (hq, n_q, d), (hk, n_k, d_k), (hv, n_v, d_v) = (
        _float_layout(name, shape, dtype, where) for name, (shape, dtype) in (("q", q), ("k", k), ("v", v)))
    if len({hq, hk, hv}) != 1:
        raise LoadError(tr("attention.file.heads_differ", where=where, hq=hq, hk=hk, hv=hv))
    h = hq
    if not 1 <= h <= MAX_HEADS:
        raise LoadError(tr("attention.file.heads_range", where=where, h=h, limit=MAX_HEADS))
    if d != d_k:
        raise LoadError(tr("attention.file.dk_differ", where=where, q_shape=(n_q, d), k_shape=(n_k, d_k)))
    if n_k != n_v:
        raise LoadError(tr("attention.file.kv_rows", where=where, n_k=n_k, n_v=n_v))
    if not (1 <= n_q <= MAX_N and 1 <= n_k <= MAX_N):
        raise LoadError(tr("attention.file.tokens_range", where=where, n_q=n_q, n_k=n_k, limit=MAX_N))
    if not (1 <= d <= MAX_D and 1 <= d_v <= MAX_D):
        raise LoadError(tr("attention.file.d_range", where=where, d_k=d, d_v=d_v, limit=MAX_D))
    if mask is not None:
        shape, dtype = mask
        if dtype != np.bool_:
            raise LoadError(tr("attention.file.mask_dtype", where=where, dtype=dtype))
        if tuple(shape) not in ((n_k,), (n_q, n_k), (h, n_q, n_k)):
            raise LoadError(tr("attention.file.mask_shape", where=where, shape=tuple(shape), one=(n_k,),
                               two=(n_q, n_k), three=(h, n_q, n_k)))
    need = compute.attention_memory(n_q, n_k, d, d_v, heads=h)
    if need > memory_limit():
        raise LoadError(tr("attention.file.memory", where=where, h=h, n_q=n_q, n_k=n_k, need=gib_text(need)))
    return h, n_q, n_k, d, d_v


def _float_array(name: str, a: np.ndarray, where: str) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise LoadError(tr("attention.file.not_finite", where=where, name=name))
    return a[None] if a.ndim == 2 else a


def validate(q, k, v, mask, where: str) -> LoadedArrays:
    """Check shapes, dtypes and values of raw arrays; raise LoadError saying what is wrong."""
    q, k, v = (np.asarray(a) for a in (q, k, v))
    mask = None if mask is None else np.asarray(mask)
    check_layout(*((a.shape, a.dtype) for a in (q, k, v)), None if mask is None else (mask.shape, mask.dtype), where)
    q, k, v = (_float_array(n, a, where) for n, a in (("q", q), ("k", k), ("v", v)))
    return LoadedArrays(q, k, v, None if mask is None else mask.copy(), where)


def load_arrays(path: str | os.PathLike) -> LoadedArrays:
    """Read and validate a .npz (q, k, v, optional mask) or a .npy (3, [heads,] n, d) stack.

    Reads through the shared safe reader (:mod:`gui.model.npfile`): regular
    files only, headers checked against the limits (:func:`check_layout`)
    before any data is read, never unpickled.  Raises LoadError with a
    message naming the file, what is wrong and what was expected.
    """
    expected = _expected()
    with open_numpy(path, expected=expected) as f:
        where = f.where
        if f.kind == "npz":
            missing = [name for name in ("q", "k", "v") if name not in f.names]
            if missing:
                found = ", ".join(f.names[:12]) + (", ..." if len(f.names) > 12 else "") or tr("error.npfile.nothing")
                raise LoadError(tr("attention.file.missing", where=where, names=", ".join(repr(m) for m in missing),
                                   found=found, expected=expected))
            names = ("q", "k", "v", "mask") if "mask" in f.names else ("q", "k", "v")
            heads = {name: f.header(name) for name in names}
            mask_head = heads.get("mask")
            check_layout(*((heads[n].shape, heads[n].dtype) for n in ("q", "k", "v")),
                         None if mask_head is None else (mask_head.shape, mask_head.dtype), where)
            arrays = {name: f.read(name, max_bytes=heads[name].nbytes) for name in names}
            return validate(arrays["q"], arrays["k"], arrays["v"], arrays.get("mask"), where)
        head = f.header()
        if len(head.shape) not in (3, 4) or head.shape[0] != 3:
            raise LoadError(tr("attention.file.npy_shape", where=where, shape=head.shape))
        one = (head.shape[1:], head.dtype)  # each of q, k, v
        check_layout(one, one, one, None, where)
        stack = f.read(max_bytes=head.nbytes)
        return validate(stack[0], stack[1], stack[2], None, where)


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


def validate_tables(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> TableArrays:
    """Tables from saved arrays: 2-D, finite, q and k of one width, one value row per key, at most MAX_TABLE."""
    for name, a in (("q", q), ("k", k), ("v", v)):
        if a.ndim != 2 or not (1 <= a.shape[0] <= MAX_TABLE and 1 <= a.shape[1] <= MAX_TABLE):
            raise ValueError(tr("attention.state.table_shape", name=name, shape=a.shape, limit=MAX_TABLE))
        if not np.all(np.isfinite(a)):
            raise ValueError(tr("attention.state.table_not_finite", name=name))
    if q.shape != k.shape or k.shape[0] != v.shape[0]:
        raise ValueError(tr("attention.state.tables_misfit", q=q.shape, k=k.shape, v=v.shape))
    return TableArrays(q, k, v)


def default_tables(q: np.ndarray | None, k: np.ndarray | None, v: np.ndarray | None,
                   d_k: int, seed: int) -> TableArrays:
    """Head 1 of ``q, k, v`` (what is shown now) cut to MAX_TABLE tokens and d, or seeded random values."""
    if q is None or k is None or v is None:
        q, k, v = random_qkv(MAX_TABLE // 2, min(d_k, MAX_TABLE), 1, seed)
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


#: random_qkv keeps up to this many normals of its last seed's generator (32 MiB), so that a new n,
#: d_k or head count slices them instead of drawing them again (a d_k drag draws 3 x heads x n x d_k);
#: past them (n = 512, 8 heads, d_k 446) only the rest is drawn, from the state after them.
STREAM_MAX = 1 << 22
_STREAM = NormalStream(STREAM_MAX)


def random_qkv(n: int, d_k: int, heads: int, seed: int):
    """Q, K, V (heads, n, d_k): what three ``standard_normal((heads, n, d_k))`` draws of
    ``np.random.default_rng(seed)`` give, in that order."""
    size = heads * n * d_k
    values = _STREAM.first(seed, 3 * size)
    return tuple(values[i * size:(i + 1) * size].reshape(heads, n, d_k) for i in range(3))


def distinct_labels(tokens: list[str]) -> tuple[str, ...]:
    """Token labels; a repeated token gets its position, so every label is unique."""
    seen: dict[str, int] = {}
    for t in tokens:
        seen[t] = seen.get(t, 0) + 1
    return tuple(f"{t}·{i + 1}" if seen[t] > 1 else t for i, t in enumerate(tokens))
