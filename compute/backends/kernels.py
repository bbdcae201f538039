"""The CUDA kernel sources, their template instantiations and the launch plan.

Pure Python and NumPy: nothing here needs CuPy or a GPU except
:func:`compile_ptx`, which needs only NVRTC (``cupy.cuda.nvrtc``; no device,
no driver).  The launcher (:mod:`compute.backends.cupy_backend`) and the
NumPy emulation (``tests/compute/kernel_emulation.py``) both take their
decomposition from :func:`launch_plan`, so the two cannot drift apart.

Paths for a row of ``n`` elements (``rows`` rows, storage dtype ``dtype``):

``warp``
    ``n <= 1024``: one warp per row, four rows per 128-thread block, the row
    in registers: each lane holds ``per`` elements (a power of two, the
    smallest with ``32 * per >= n``).
``split``
    few long rows (``rows < 2 * sm_count`` and ``n >= split_min``): each row
    is cut into ``splits`` chunks of ``chunk`` elements, one block each;
    kernel 1 writes each chunk's ``(m, d)``, kernel 2 merges a row's partials
    in every block and writes its chunk.
``block``
    the row fits in shared memory (``n * itemsize <= smem_limit - 1024``):
    one block per row, the row read once into dynamic shared memory.
``stream``
    longer rows: one block per row, pass 1 the running ``(m, d)``, pass 2
    the write (the row is read twice, the second time mostly from L2).

``vec`` is the number of elements per 16-byte packet (8 float16, 4 float32,
2 float64) when both arrays are 16-byte aligned and ``n % vec == 0``, else 1.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "ATTENTION_BLOCK_KEYS",
    "ATTENTION_MAX_HEAD_DIM",
    "SOURCES",
    "WARP_MAX",
    "AttentionPlan",
    "CompileError",
    "Plan",
    "attention_name_expressions",
    "attention_plan",
    "attention_scale_factors",
    "compile_ptx",
    "instantiation_source",
    "kernel_source",
    "launch_plan",
    "name_expressions",
    "nvrtc_options",
    "scale_factors",
    "temperature_factors",
    "vec_width",
]

CUDA_DIR = Path(__file__).resolve().parent / "cuda"
SOURCES = ("softmax.cu", "attention.cu")
HEADER = "softmax_common.cuh"

WARP_MAX = 1024  # longest row the warp path holds in registers (32 lanes x 32)
WARP_PER = (1, 2, 4, 8, 16, 32)  # elements per lane instantiated
WARP_THREADS = 128  # four rows per block
BLOCK_MIN, BLOCK_MAX = 128, 1024
STREAM_THREADS = 512
SMEM_RESERVE = 1024  # static shared memory and slack beside the row
SPLIT_MIN = 16384  # rows shorter than this are never split
SPLIT_MIN_CHUNK = 8192  # elements per split block, at least
SPLIT_MAX = 256  # splits per row, at most

ATTENTION_BLOCK_KEYS = 32  # keys per K/V tile (one per lane)
ATTENTION_MAX_HEAD_DIM = 128  # d and d_v, at most
ATTENTION_WARPS = 4

_CTYPES = {"float16": "half_t", "float32": "float", "float64": "double"}
_VEC = {"float16": 8, "float32": 4, "float64": 2}


class CompileError(RuntimeError):
    """NVRTC refused a kernel source; the message holds NVRTC's log."""


def _dtype_name(dtype: Any) -> str:
    name = np.dtype(dtype).name
    if name not in _CTYPES:
        raise TypeError(f"the CUDA kernels take float16, float32 or float64, got {name}")
    return name


def vec_width(dtype: Any) -> int:
    """Elements per 16-byte packet for ``dtype``."""
    return _VEC[_dtype_name(dtype)]


# --------------------------------------------------------------------------
# sources and instantiations
# --------------------------------------------------------------------------
def kernel_source(name: str, raw: str | None = None) -> str:
    """The source of ``name`` (one of :data:`SOURCES`) with the shared header inlined.

    ``raw`` replaces the file's text (the tests inject errors this way).
    """
    if name not in SOURCES:
        raise ValueError(f"unknown kernel source {name!r}; expected one of {SOURCES}")
    text = (CUDA_DIR / name).read_text(encoding="utf-8") if raw is None else raw
    header = (CUDA_DIR / HEADER).read_text(encoding="utf-8").replace("#pragma once", "")
    return re.sub(r'^#include "softmax_common\.cuh"[^\n]*$', lambda _: header, text, flags=re.M)


def _softmax_names(dtype: str) -> list[str]:
    ct, vw = _CTYPES[dtype], _VEC[dtype]
    names = []
    for vec in (1, vw):
        names += [f"softmax_warp<{ct}, {vec}, {per}>" for per in WARP_PER if per % vec == 0]
        names += [f"softmax_{k}<{ct}, {vec}>" for k in ("block", "stream", "split_partial", "split_finish")]
    return names


def _attention_names(dtype: str) -> list[str]:
    ct = _CTYPES[dtype]
    rpw = _attention_rows_per_warp(dtype)
    return [f"flash_attention<{ct}, {dpl}, {rpw}>" for dpl in (1, 2, 4)]


def name_expressions(source: str = "softmax.cu") -> list[str]:
    """Every template instantiation of ``source`` the launcher may ask for."""
    make = {"softmax.cu": _softmax_names, "attention.cu": _attention_names}[source]
    return [n for dt in _CTYPES for n in make(dt)]


def attention_name_expressions() -> list[str]:
    return name_expressions("attention.cu")


def instantiation_source(source: str) -> str:
    """The source plus a host function that names every instantiation.

    For ``nvcc -cubin`` (which has no name expressions): taking a kernel's
    address in host code instantiates its device code.
    """
    refs = "\n".join(f"    (void)&{n};" for n in name_expressions(source))
    return kernel_source(source) + f"\n\nvoid softmax_lab_instantiate_all() {{\n{refs}\n}}\n"


def nvrtc_options(arch: str | int = "sm_90") -> tuple[str, ...]:
    """NVRTC options for ``arch`` (``"sm_90"``, ``"90"`` or ``90``): PTX for that compute capability."""
    cc = str(arch).removeprefix("sm_").removeprefix("compute_")
    if not cc.isdigit():
        raise ValueError(f"bad architecture {arch!r}; expected e.g. 'sm_90'")
    return (f"--gpu-architecture=compute_{cc}", "-std=c++17")


def compile_ptx(source_name: str, arch: str | int = "sm_90", source: str | None = None) -> tuple[str, dict[str, str]]:
    """Compile a kernel source with NVRTC (no device needed).

    Returns ``(ptx, lowered)``: the PTX text and the mangled name of every
    name expression.  ``source`` replaces the file's text (see
    :func:`kernel_source`).  Raises :class:`CompileError` with NVRTC's log
    when the source does not compile, ``ImportError`` when NVRTC is missing.
    """
    from cupy.cuda import nvrtc  # noqa: PLC0415 - optional dependency

    code = kernel_source(source_name, source)
    names = name_expressions(source_name)
    prog = nvrtc.createProgram(code, source_name, [], [])
    try:
        add = getattr(nvrtc, "addNameExpression", None) or nvrtc.addAddNameExpression
        for n in names:
            add(prog, n)
        try:
            nvrtc.compileProgram(prog, list(nvrtc_options(arch)))
        except nvrtc.NVRTCError as exc:
            log = nvrtc.getProgramLog(prog)
            raise CompileError(f"{source_name} does not compile for {arch}: {exc}\n{log}") from None
        ptx = nvrtc.getPTX(prog)
        if isinstance(ptx, bytes):
            ptx = ptx.decode()
        lowered = {n: nvrtc.getLoweredName(prog, n) for n in names}
    finally:
        nvrtc.destroyProgram(prog)
    return ptx, lowered


# --------------------------------------------------------------------------
# the softmax launch plan
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    """How one (rows, n, dtype) softmax call is decomposed and launched.

    Fields the emulation reads: ``path``, ``vec``, ``per`` (warp path),
    ``threads`` (block, stream and split paths), ``splits`` and ``chunk``.
    """

    path: str  # "warp" | "block" | "stream" | "split"
    rows: int
    n: int
    dtype: str
    vec: int
    threads: int
    grid: tuple[int, ...]
    per: int = 0  # warp path: elements per lane
    smem: int = 0  # block path: dynamic shared memory bytes
    splits: int = 1
    chunk: int = 0  # split path: elements per split block

    @property
    def kernels(self) -> tuple[str, ...]:
        """The name expressions this plan launches, in order."""
        ct = _CTYPES[self.dtype]
        if self.path == "warp":
            return (f"softmax_warp<{ct}, {self.vec}, {self.per}>",)
        if self.path == "split":
            return (f"softmax_split_partial<{ct}, {self.vec}>", f"softmax_split_finish<{ct}, {self.vec}>")
        return (f"softmax_{self.path}<{ct}, {self.vec}>",)

    def with_threads(self, threads: int) -> Plan:
        """The same plan with another block size (the tests emulate with small blocks)."""
        return replace(self, threads=threads)


def _pow2ceil(v: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(1, v))))


def launch_plan(
    rows: int,
    n: int,
    dtype: Any,
    *,
    aligned: bool = True,
    sm_count: int = 132,
    smem_limit: int = 227 * 1024,
    warp_max: int = WARP_MAX,
    split_min: int = SPLIT_MIN,
    split_min_chunk: int = SPLIT_MIN_CHUNK,
    stream_threads: int = STREAM_THREADS,
    block_threads: tuple[int, int] = (BLOCK_MIN, BLOCK_MAX),
) -> Plan:
    """Choose the path and launch shape for ``rows`` rows of ``n`` elements.

    ``aligned``: both arrays start on a 16-byte boundary.  ``sm_count`` and
    ``smem_limit`` (the opt-in dynamic shared memory per block) describe the
    device; the defaults are an H100/H200's.  The keyword thresholds exist
    so that the tests can move every path boundary down to small rows.
    """
    dt = _dtype_name(dtype)
    if rows < 1 or n < 1:
        raise ValueError(f"launch_plan needs rows >= 1 and n >= 1, got {rows} x {n}")
    item = np.dtype(dt).itemsize
    vw = _VEC[dt]
    vec = vw if aligned and n % vw == 0 else 1
    if n <= warp_max:
        per = max(_pow2ceil(math.ceil(n / 32)), 1)
        if per > WARP_PER[-1]:
            raise ValueError(f"warp_max {warp_max} exceeds what the warp kernel holds ({32 * WARP_PER[-1]})")
        v = vec if per % vec == 0 else 1
        return Plan("warp", rows, n, dt, v, WARP_THREADS, (math.ceil(rows / (WARP_THREADS // 32)),), per=per)
    if rows < 2 * sm_count and n >= split_min:
        want = math.ceil(4 * sm_count / rows)  # about four blocks per SM in all
        splits = max(1, min(want, n // split_min_chunk, SPLIT_MAX))
        if splits > 1:
            chunk = math.ceil(math.ceil(n / splits) / vec) * vec
            splits = math.ceil(n / chunk)
            return Plan("split", rows, n, dt, vec, stream_threads, (splits, rows), splits=splits, chunk=chunk)
    if n * item <= smem_limit - SMEM_RESERVE:
        lo, hi = block_threads
        threads = min(hi, max(lo, _pow2ceil(math.ceil(n / vec / 8))))
        smem = math.ceil(n * item / 16) * 16
        return Plan("block", rows, n, dt, vec, threads, (rows,), smem=smem)
    return Plan("stream", rows, n, dt, vec, stream_threads, (rows,))


# --------------------------------------------------------------------------
# attention
# --------------------------------------------------------------------------
def _attention_rows_per_warp(dtype: str) -> int:
    return 2 if dtype == "float64" else 4  # float64 halves the Q tile to fit 48 KB


@dataclass(frozen=True)
class AttentionPlan:
    """Launch shape of :func:`flash_attention`: one block of 4 warps per ``block_q`` query rows."""

    dtype: str
    dpl: int  # head-dimension slots per lane: d, d_v <= 32 * dpl
    rows_per_warp: int
    block_q: int
    block_k: int
    smem: int
    grid: tuple[int, ...]
    threads: int = 32 * ATTENTION_WARPS

    @property
    def kernel(self) -> str:
        return f"flash_attention<{_CTYPES[self.dtype]}, {self.dpl}, {self.rows_per_warp}>"


def attention_plan(batch: int, n_q: int, d: int, d_v: int, dtype: Any) -> AttentionPlan:
    """The launch of the fused attention kernel; ``ValueError`` beyond its limits."""
    dt = _dtype_name(dtype)
    width = max(d, d_v)
    if d < 1 or d_v < 1:
        raise ValueError(f"head dimensions must be >= 1, got d={d}, d_v={d_v}")
    if width > ATTENTION_MAX_HEAD_DIM:
        raise ValueError(
            f"the fused attention kernel takes head dimensions up to {ATTENTION_MAX_HEAD_DIM}, got d={d}, d_v={d_v}"
        )
    dpl = next(p for p in (1, 2, 4) if 32 * p >= width)
    rpw = _attention_rows_per_warp(dt)
    block_q = ATTENTION_WARPS * rpw
    csize = 8 if dt == "float64" else 4
    dmax = 32 * dpl
    smem = (block_q * dmax + ATTENTION_BLOCK_KEYS * (dmax + 1)) * csize
    q_blocks = max(1, math.ceil(n_q / block_q))
    return AttentionPlan(dt, dpl, rpw, block_q, ATTENTION_BLOCK_KEYS, smem, (q_blocks * max(batch, 1),))


# --------------------------------------------------------------------------
# the temperature / scale as two factors
# --------------------------------------------------------------------------
def scale_factors(product: float, half: float, dtype: Any) -> tuple[float, float]:
    """``(a, b)`` with ``a * b = product`` for the kernels' ``(z * a) * b``.

    ``half`` is ``sqrt(product)``, computed by the caller without
    overflow.  When ``product`` is a normal number in the working precision
    of ``dtype`` (float32 for float16) the factors are ``(product, 1.0)``,
    so ``T = 1`` gives ``(1.0, 1.0)`` and exact results; otherwise (float32
    with ``T = 1e-50`` or ``1e50``) both are ``half`` rounded to that
    precision, with 0 raised to the smallest normal number: a product that
    should be huge stays huge (``inf`` is fine: ``x == m`` never reaches
    it), and one that should be tiny never becomes 0 (``-inf * 0`` would be
    NaN).
    """
    work = np.float64 if _dtype_name(dtype) == "float64" else np.float32
    fi = np.finfo(work)
    with np.errstate(all="ignore"):
        w = work(product)
        if np.isfinite(w) and w >= fi.tiny:
            return float(w), 1.0
        h = work(half)
    return (float(max(h, fi.tiny)),) * 2


def temperature_factors(temperature: float, dtype: Any) -> tuple[float, float]:
    """The kernels' two temperature factors: ``a * b = 1 / T`` (see :func:`scale_factors`)."""
    t = float(temperature)
    return scale_factors(1.0 / t, 1.0 / math.sqrt(t), dtype)


def attention_scale_factors(scale: float, dtype: Any) -> tuple[float, float]:
    """The attention kernel's two scale factors: ``a * b = scale``."""
    s = float(scale)
    return scale_factors(s, math.sqrt(s), dtype)
