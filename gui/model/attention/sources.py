"""The Attention view's data: where Q, K and V come from, and how big they may get.

``random``: seeded Gaussian Q, K, V of shape (heads, n, d_k) (d_v = d_k).
``sentence``: the whitespace tokens of a sentence; each token gets a random
embedding seeded by the CRC-32 of its text (the same token always gets the
same vector, across runs and machines), and seeded random projections W_q,
W_k, W_v per head turn the embeddings into Q, K, V.
``tables``: editable Q, K, V of at most 16 tokens and d <= 16 (one head).
``file``: arrays from a ``.npz`` (``q``, ``k``, ``v``, optionally a boolean
``mask``) or a ``.npy`` holding a (3, [heads,] n, d) stack; see
:func:`load_arrays`.  Never unpickled.
"""

from __future__ import annotations

import os
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SOURCES = ("random", "sentence", "file", "tables")
#: The tables source holds at most this many tokens and this d (d_v).
MAX_TABLE = 16
DEFAULT_SENTENCE = "the cat sat on the mat because it was tired"
MAX_N = 2048
MAX_HEADS = 16
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


def validate_tables(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> TableArrays:
    """Tables from saved arrays: 2-D, finite, q and k of one width, one value row per key, at most MAX_TABLE."""
    for name, a in (("q", q), ("k", k), ("v", v)):
        if a.ndim != 2 or not (1 <= a.shape[0] <= MAX_TABLE and 1 <= a.shape[1] <= MAX_TABLE):
            raise ValueError(f"attention: saved table {name} has shape {a.shape}; "
                             f"expected (n, d) with n and d from 1 to {MAX_TABLE}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"attention: saved table {name} holds inf or NaN")
    if q.shape != k.shape or k.shape[0] != v.shape[0]:
        raise ValueError(f"attention: saved tables q {q.shape}, k {k.shape}, v {v.shape} do not fit together")
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


def random_qkv(n: int, d_k: int, heads: int, seed: int):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((heads, n, d_k)) for _ in range(3))


def distinct_labels(tokens: list[str]) -> tuple[str, ...]:
    """Token labels; a repeated token gets its position, so every label is unique."""
    seen: dict[str, int] = {}
    for t in tokens:
        seen[t] = seen.get(t, 0) + 1
    return tuple(f"{t}·{i + 1}" if seen[t] > 1 else t for i, t in enumerate(tokens))
