"""The project's CUDA kernels on CuPy arrays.

``softmax``, ``log_softmax``, ``logsumexp`` and ``flash_attention`` take and
return CuPy arrays with compute's dtype rules: float16 is computed
in float32 and returned as float16, float32 and float64 stay as they are,
ints and bools become float64, complex and other dtypes raise
``TypeError``; the temperature is validated by
:func:`compute.check_temperature`; any ``axis`` (moved last and
made contiguous); a 0-d input is a one-element vector.  Offsets are 64-bit.

The kernels (``compute/backends/cuda/*.cu``) are compiled with NVRTC through
``cupy.RawModule`` on first use, once per device, and the path for each call
comes from :func:`compute.backends.kernels.launch_plan`.  Any failure to
compile or launch raises :class:`KernelError` with a one-line message.

CuPy is imported inside the functions: this module imports without it.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

from compute._checks import _check_bool, _check_scale, check_temperature
from compute._rows import _as_float_device
from compute.backends import kernels

__all__ = ["KernelError", "device_limits", "flash_attention", "log_softmax", "logsumexp", "softmax"]

_KIND = {"softmax": 0, "log_softmax": 1, "logsumexp": 2}
_DEFAULT_SMEM = 48 * 1024

_lock = threading.Lock()
_modules: dict[tuple[int, str], Any] = {}
_limits: dict[int, tuple[int, int]] = {}


class KernelError(RuntimeError):
    """A kernel failed to compile or to launch; the message is one line."""


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def _cupy():
    try:
        import cupy  # noqa: PLC0415 - optional dependency
    except Exception as exc:  # ImportError, or a broken CUDA installation
        raise KernelError(f"CuPy is not available ({_one_line(exc)})") from exc
    return cupy


def _module(source: str):
    """The compiled RawModule of ``source`` on the current device (cached)."""
    cupy = _cupy()
    try:
        dev = cupy.cuda.Device().id
    except Exception as exc:
        raise KernelError(f"no CUDA device answers ({_one_line(exc)})") from exc
    key = (dev, source)
    with _lock:
        mod = _modules.get(key)
        if mod is None:
            try:
                mod = cupy.RawModule(
                    code=kernels.kernel_source(source),
                    options=("-std=c++17",),
                    name_expressions=kernels.name_expressions(source),
                )
                mod.compile()
            except Exception as exc:
                raise KernelError(f"the {source} kernels do not compile on device {dev}: {_one_line(exc)}") from exc
            _modules[key] = mod
    return mod


def device_limits() -> tuple[int, int]:
    """``(SM count, opt-in dynamic shared memory per block in bytes)`` of the current device."""
    cupy = _cupy()
    try:
        dev = cupy.cuda.Device()
        if dev.id not in _limits:
            attrs = dev.attributes
            smem = int(attrs.get("MaxSharedMemoryPerBlockOptin", 0)) or _DEFAULT_SMEM
            _limits[dev.id] = (int(attrs["MultiProcessorCount"]), smem)
        return _limits[dev.id]
    except KernelError:
        raise
    except Exception as exc:
        raise KernelError(f"no CUDA device answers ({_one_line(exc)})") from exc


def _kernel(source: str, name: str):
    try:
        return _module(source).get_function(name)
    except KernelError:
        raise
    except Exception as exc:
        raise KernelError(f"kernel {name} is not available: {_one_line(exc)}") from exc


def _launch(fn, grid, block, args, shared_mem: int = 0) -> None:
    try:
        if shared_mem > _DEFAULT_SMEM and fn.max_dynamic_shared_size_bytes < shared_mem:
            fn.max_dynamic_shared_size_bytes = shared_mem
        fn(tuple(grid), tuple(block), args, shared_mem=shared_mem)
    except Exception as exc:
        raise KernelError(f"launch of a softmax-lab kernel failed: {_one_line(exc)}") from exc


# --------------------------------------------------------------------------
# dtype rules (compute's, on CuPy arrays)
# --------------------------------------------------------------------------
def _as_float(x):
    cupy = _cupy()
    if isinstance(x, cupy.ndarray):
        a = x
    else:
        try:
            a = cupy.asarray(x)
        except Exception as exc:  # no device, no driver, out of memory
            raise KernelError(f"cannot copy the input to a CUDA device ({_one_line(exc)})") from exc
    if a.dtype.kind == "f" and a.dtype not in (np.float16, np.float32, np.float64):
        raise TypeError(f"the CUDA kernels take float16, float32 or float64, got {a.dtype}")
    return _as_float_device(a)


def _rows(x, axis: int):
    """``(rows2d, axis, shape)``: ``x`` with ``axis`` last, C-contiguous, as (rows, n)."""
    cupy = _cupy()
    a = _as_float(x)
    shape = a.shape
    if a.ndim == 0:
        a = a.reshape(1)
        axis = 0
    axis = _normalize_axis(axis, a.ndim)
    moved = cupy.ascontiguousarray(cupy.moveaxis(a, axis, -1))
    n = moved.shape[-1]
    rows = math.prod(moved.shape[:-1])
    return moved.reshape(rows, n), axis, shape, moved.shape


def _normalize_axis(axis: int, ndim: int) -> int:
    from numpy.lib.array_utils import normalize_axis_index  # noqa: PLC0415

    return normalize_axis_index(axis, ndim)


def _ctype(dtype) -> type:
    return np.float64 if np.dtype(dtype) == np.float64 else np.float32


def _run_rows(x2, kind: str, temperature: float):
    """Run one of the three row kernels on the contiguous (rows, n) array ``x2``."""
    cupy = _cupy()
    rows, n = x2.shape
    dtype = x2.dtype
    out = cupy.empty((rows,) if kind == "logsumexp" else (rows, n), dtype=dtype)
    if rows == 0 or n == 0:
        if kind == "logsumexp":
            out.fill(-np.inf)
        return out
    sm_count, smem_limit = device_limits()
    aligned = x2.data.ptr % 16 == 0 and out.data.ptr % 16 == 0
    plan = kernels.launch_plan(rows, n, dtype, aligned=aligned, sm_count=sm_count, smem_limit=smem_limit)
    ct = _ctype(dtype)
    ta, tb = (ct(f) for f in kernels.temperature_factors(temperature, dtype))
    r64, n64, kid = np.int64(rows), np.int64(n), np.int32(_KIND[kind])
    names = plan.kernels
    if plan.path == "split":
        pm = cupy.empty(rows * plan.splits, dtype=ct)
        pd = cupy.empty(rows * plan.splits, dtype=ct)
        chunk = np.int64(plan.chunk)
        part = _kernel("softmax.cu", names[0])
        fin = _kernel("softmax.cu", names[1])
        _launch(part, plan.grid, (plan.threads,), (x2, pm, pd, r64, n64, chunk, ta, tb))
        grid = (1, rows) if kind == "logsumexp" else plan.grid
        _launch(fin, grid, (plan.threads,), (x2, out, pm, pd, r64, n64, chunk, np.int64(plan.splits), ta, tb, kid))
        return out
    fn = _kernel("softmax.cu", names[0])
    _launch(fn, plan.grid, (plan.threads,), (x2, out, r64, n64, ta, tb, kid), shared_mem=plan.smem)
    return out


def _row_function(x, axis: int, temperature: float, kind: str):
    cupy = _cupy()
    x2, ax, shape, moved_shape = _rows(x, axis)
    y = _run_rows(x2, kind, temperature)
    if kind == "logsumexp":
        return y.reshape(moved_shape[:-1])
    y = cupy.moveaxis(y.reshape(moved_shape), -1, ax)
    return cupy.ascontiguousarray(y).reshape(shape)


# --------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------
def softmax(x, axis: int = -1, temperature: float = 1.0):
    """:func:`compute.softmax` on a CuPy array, by the project's kernels."""
    t = check_temperature(temperature)
    return _row_function(x, axis, t, "softmax")


def log_softmax(x, axis: int = -1, temperature: float = 1.0):
    """:func:`compute.log_softmax` on a CuPy array, by the project's kernels."""
    t = check_temperature(temperature)
    return _row_function(x, axis, t, "log_softmax")


def logsumexp(x, axis: int = -1):
    """:func:`compute.logsumexp` on a CuPy array (``axis`` removed; an empty axis gives ``-inf``)."""
    return _row_function(x, axis, 1.0, "logsumexp")


def flash_attention(q, k, v, scale: float | None = None, causal: bool = False):
    """Fused attention: ``(out, lse)`` without storing the score matrix.

    ``q``: (..., n_q, d), ``k``: (..., n_k, d), ``v``: (..., n_k, d_v); the
    leading axes broadcast.  ``scale`` defaults to ``1/sqrt(d)``; ``causal``
    lets query ``i`` see keys ``j <= i`` (top-left, as
    :func:`compute.attention`).  ``out`` is (..., n_q, d_v) in the result
    dtype of ``q, k, v`` (float16 computed in float32); ``lse`` is
    (..., n_q), each query row's logsumexp of its scaled, masked scores, in
    the working precision (float32 for float16 input, so the view can
    rebuild weights as ``exp(s - lse)``).  A row with no allowed key has
    output 0 and lse ``-inf``.

    Limits: ``d`` and ``d_v`` at most 128 (:class:`KernelError` beyond).

    Raises
    ------
    ValueError
        bad shapes, ``d == 0`` or a bad ``scale``.
    TypeError
        non-real input or a non-bool ``causal``.
    KernelError
        beyond the kernel's limits, or compile/launch failure.
    """
    cupy = _cupy()
    _check_bool(causal, "causal")
    qa, ka, va = (_as_float(a) for a in (q, k, v))
    for name, a in (("q", qa), ("k", ka), ("v", va)):
        if a.ndim < 2:
            raise ValueError(f"{name} must have at least 2 dimensions (..., n, d), got shape {a.shape}")
    n_q, d = qa.shape[-2:]
    n_k, d_v = va.shape[-2:]
    if ka.shape[-1] != d:
        raise ValueError(f"q and k must have the same last dimension d, got shapes {qa.shape} and {ka.shape}")
    if ka.shape[-2] != n_k:
        raise ValueError(f"k and v must have the same number of keys n_k, got shapes {ka.shape} and {va.shape}")
    if d == 0:
        raise ValueError("the head dimension d must be >= 1, got 0")
    try:
        lead = np.broadcast_shapes(qa.shape[:-2], ka.shape[:-2], va.shape[:-2])
    except ValueError:
        raise ValueError(f"the leading axes of q {qa.shape}, k {ka.shape}, v {va.shape} do not broadcast") from None
    s = 1.0 / math.sqrt(d) if scale is None else _check_scale(scale)
    dtype = np.result_type(qa.dtype, ka.dtype, va.dtype)
    ct = _ctype(dtype)
    batch = math.prod(lead)
    if d_v == 0 or n_q == 0 or batch == 0:
        return cupy.zeros(lead + (n_q, d_v), dtype), cupy.full(lead + (n_q,), -np.inf, ct)
    try:
        plan = kernels.attention_plan(batch, n_q, d, d_v, dtype)
    except ValueError as exc:
        raise KernelError(str(exc)) from None

    def prep(a, rows, cols):
        b = cupy.broadcast_to(a.astype(dtype, copy=False), lead + (rows, cols))
        return cupy.ascontiguousarray(b).reshape(batch, rows, cols)

    q3, k3, v3 = prep(qa, n_q, d), prep(ka, n_k, d), prep(va, n_k, d_v)
    out = cupy.empty((batch, n_q, d_v), dtype)
    lse = cupy.empty((batch, n_q), ct)
    if n_k == 0:
        out.fill(0)
        lse.fill(-np.inf)
    else:
        sa, sb = (ct(f) for f in kernels.attention_scale_factors(s, dtype))
        fn = _kernel("attention.cu", plan.kernel)
        args = (q3, k3, v3, out, lse, np.int64(batch), np.int64(n_q), np.int64(n_k), np.int32(d), np.int32(d_v),
                sa, sb, np.int32(bool(causal)))
        _launch(fn, plan.grid, (plan.threads,), args, shared_mem=plan.smem)
    return out.reshape(lead + (n_q, d_v)), lse.reshape(lead + (n_q,))
