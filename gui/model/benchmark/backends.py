"""The implementations the Benchmark view times, which of them this machine has, and why not (no Qt).

Host (NumPy arrays):

* ``numpy``: compute's NumPy path (what :func:`compute.softmax` runs for a
  NumPy array; called directly, so the Backend menu's CuPy choice, which
  sends large NumPy input to the device, does not change what is timed);
* ``scipy``: ``scipy.special.softmax``;
* ``torch_cpu``: ``torch.softmax`` on a tensor sharing the array's memory;
* ``copy``: ``np.copyto`` of the same bytes into a second array: the ceiling.

Device (CuPy arrays, on a CUDA machine):

* ``cupy``: the project's CUDA kernels (``compute.backends.cupy_backend``);
* ``cupyx``: ``cupyx.scipy.special.softmax``;
* ``torch_cuda``: ``torch.softmax`` on the same device memory (DLPack);
* ``copy_cuda``: ``cupy.copyto``: the device's ceiling.

:func:`status` says which are missing and why: a :class:`Reason` (a text
key and its values, formatted by the view in its language).  Importing
torch takes seconds, so the cheap status leaves torch's CUDA ``pending``
until a run has imported it (:func:`probe`, in the run's worker thread).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Every implementation, in the legend's order; host first.
HOST = ("numpy", "scipy", "torch_cpu", "copy")
DEVICE = ("cupy", "cupyx", "torch_cuda", "copy_cuda")
ALL = HOST + DEVICE
#: The copies: what a softmax of the same bytes could reach at best.
CEILINGS = ("copy", "copy_cuda")
#: Each implementation's ceiling.
CEILING_OF = {name: ("copy_cuda" if name in DEVICE else "copy") for name in ALL}
#: The fused attention kernel and the reference path (GPU only).
ATTENTION = ("fused", "reference")


@dataclass(frozen=True)
class Reason:
    """Why an implementation cannot run: a text key (``benchmark.reason.*``) and its values."""

    key: str
    values: tuple[tuple[str, str], ...] = ()

    @property
    def pending(self) -> bool:
        return self.key == "benchmark.reason.pending"


def _verbatim(text: str) -> Reason:
    return Reason("benchmark.reason.verbatim", (("text", text),))


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


_lock = threading.Lock()
_torch_cuda: Reason | None | bool = False  # False: not known yet (torch not imported by us)


@functools.cache
def _torch_spec() -> bool:
    return importlib.util.find_spec("torch") is not None


def _torch_installed() -> bool:
    return "torch" in sys.modules or _torch_spec()


def _torch_cuda_reason() -> Reason | None:
    """Import torch (seconds, the first time) and ask it for a CUDA device."""
    try:
        torch = importlib.import_module("torch")
    except Exception as exc:  # a broken install raises anything
        return _verbatim(_one_line(exc))
    try:
        return None if torch.cuda.is_available() else Reason("benchmark.reason.torch_no_cuda")
    except Exception as exc:
        return _verbatim(_one_line(exc))


#: compute.backends' reasons for CuPy, by how they begin, and the text that says each in the UI's language
#: (the rest of the reason is the library's or the driver's own words, quoted as they are).
_CUPY_REASONS = (("CuPy failed to import: ", "benchmark.reason.cupy_import"),
                 ("no CUDA device answered: ", "benchmark.reason.no_device"),
                 ("the CuPy kernels could not be loaded: ", "benchmark.reason.kernels"))


def _cupy_reason() -> Reason | None:
    from compute import backends

    reason = backends.unavailable_reasons().get("cupy")
    if reason is None:
        return None
    if reason == backends.NOT_INSTALLED:
        return Reason("benchmark.reason.cupy_missing")
    for start, key in _CUPY_REASONS:
        if reason.startswith(start):
            return Reason(key, (("text", reason[len(start):]),))
    return _verbatim(reason)


def status(*, full: bool = False) -> dict[str, Reason | None]:
    """``{implementation: None (it runs here) or the Reason it does not}``.

    Without ``full``, torch is not imported: torch's CUDA is ``pending``
    unless torch was already imported (or a run probed it).
    """
    global _torch_cuda
    out: dict[str, Reason | None] = {"numpy": None, "copy": None}
    try:
        importlib.import_module("scipy.special")
        out["scipy"] = None
    except Exception:
        out["scipy"] = Reason("benchmark.reason.scipy_missing")
    torch_missing = None if _torch_installed() else Reason("benchmark.reason.torch_missing")
    out["torch_cpu"] = torch_missing
    with _lock:
        if torch_missing is not None:
            out["torch_cuda"] = torch_missing
        elif _torch_cuda is not False:
            out["torch_cuda"] = _torch_cuda  # type: ignore[assignment]
        elif full or "torch" in sys.modules:
            _torch_cuda = _torch_cuda_reason()
            out["torch_cuda"] = _torch_cuda
        else:
            out["torch_cuda"] = Reason("benchmark.reason.pending")
    cupy = _cupy_reason()
    out["cupy"] = out["copy_cuda"] = cupy
    if cupy is None:
        try:
            importlib.import_module("cupyx.scipy.special")
            out["cupyx"] = None
        except Exception as exc:
            out["cupyx"] = _verbatim(_one_line(exc))
    else:
        out["cupyx"] = cupy
    return {name: out[name] for name in ALL}


def probe() -> dict[str, Reason | None]:
    """:func:`status` with torch imported (seconds, the first time): nothing is left pending."""
    return status(full=True)


def device_possible(reasons: dict[str, Reason | None] | None = None) -> bool:
    """Whether the project's CuPy kernels run here (the GPU-only attention plot needs them)."""
    reasons = status() if reasons is None else reasons
    return reasons["cupy"] is None


# -- timing ------------------------------------------------------------------------------------------
Measure = Callable[[Callable[[], Any]], float]


def host_measure(clock: Callable[[], float] = time.perf_counter) -> Measure:
    """Seconds one call takes by ``clock`` (a fake clock in tests)."""

    def measure(call: Callable[[], Any]) -> float:
        start = clock()
        call()
        return clock() - start

    return measure


def device_measure(cupy: Any) -> Measure:
    """Seconds one call takes on the device, by CUDA events around it on the current stream.

    Before each call a buffer twice the size of the L2 cache is written, so
    no call finds its input in L2 (as ``bench/gpu_softmax.py`` measures): the
    copy and the softmax kernels alike run from device memory.
    """
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    try:
        l2 = int(cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id).get("l2CacheSize", 64 << 20))
    except Exception:  # noqa: BLE001 - a guess is enough: the flush only has to be larger than L2
        l2 = 64 << 20
    flush = cupy.empty(max(2 * l2, 1 << 20) // 4, dtype=np.int32)

    def measure(call: Callable[[], Any]) -> float:
        flush.fill(0)
        start.record()
        call()
        stop.record()
        stop.synchronize()
        return cupy.cuda.get_elapsed_time(start, stop) / 1e3

    return measure


@dataclass(frozen=True)
class Implementation:
    """One implementation: ``prepare(x, shared)`` returns the call to time on host input ``x``
    (``shared`` holds what several implementations reuse per shape: the device copy), and
    ``measure(call)`` its seconds."""

    name: str
    prepare: Callable[[np.ndarray, dict], Callable[[], Any]]
    measure: Measure


def _device_input(cupy: Any, x: np.ndarray, shared: dict) -> Any:
    if "device" not in shared:
        shared["device"] = cupy.asarray(x)
        cupy.cuda.Device().synchronize()
    return shared["device"]


def implementations(names: tuple[str, ...], clock: Callable[[], float] = time.perf_counter
                    ) -> tuple[list[Implementation], dict[str, str]]:
    """The implementations of ``names`` that load here, and ``{name: one-line reason}`` for those that
    fail to (imports happen here: call it in the run's worker thread)."""
    out: list[Implementation] = []
    failed: dict[str, str] = {}
    measure = host_measure(clock)
    device: list[Measure] = []  # one device measure (and its L2 flush buffer) for all device implementations
    for name in names:
        try:
            out.append(_make(name, measure, device))
        except Exception as exc:  # noqa: BLE001 - one missing library never loses the others
            failed[name] = _one_line(exc)
    return out, failed


def _make(name: str, measure: Measure, device: list[Measure]) -> Implementation:
    if name == "numpy":
        from compute._softmax import _softmax_host  # compute.softmax's NumPy path, never offloaded

        return Implementation(name, lambda x, s: lambda: _softmax_host(x, -1, 1.0), measure)
    if name == "scipy":
        import scipy.special as sps

        return Implementation(name, lambda x, s: lambda: sps.softmax(x, axis=-1), measure)
    if name == "torch_cpu":
        import torch

        def torch_cpu(x: np.ndarray, shared: dict):
            t = torch.from_numpy(x)
            return lambda: torch.softmax(t, dim=-1)

        return Implementation(name, torch_cpu, measure)
    if name == "copy":
        def copy(x: np.ndarray, shared: dict):
            y = np.empty_like(x)

            def call() -> np.ndarray:
                np.copyto(y, x)
                return y

            return call

        return Implementation(name, copy, measure)
    cupy = importlib.import_module("cupy")
    if not device:
        device.append(device_measure(cupy))
    on_device = device[0]
    if name == "cupy":
        from compute.backends import cupy_backend

        return Implementation(name, lambda x, s: (lambda d: lambda: cupy_backend.softmax(d))(
            _device_input(cupy, x, s)), on_device)
    if name == "cupyx":
        special = importlib.import_module("cupyx.scipy.special")
        return Implementation(name, lambda x, s: (lambda d: lambda: special.softmax(d, axis=-1))(
            _device_input(cupy, x, s)), on_device)
    if name == "torch_cuda":
        import torch

        def torch_cuda(x: np.ndarray, shared: dict):
            t = torch.from_dlpack(_device_input(cupy, x, shared))
            return lambda: torch.softmax(t, dim=-1)

        return Implementation(name, torch_cuda, on_device)
    if name == "copy_cuda":
        def copy_cuda(x: np.ndarray, shared: dict):
            d = _device_input(cupy, x, shared)
            y = cupy.empty_like(d)

            def call():
                cupy.copyto(y, d)
                return y

            return call

        return Implementation(name, copy_cuda, on_device)
    raise ValueError(f"unknown implementation {name!r}")


def free_device_memory() -> None:
    """Give CuPy's cached device memory back after a run (nothing to do without CuPy)."""
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        try:
            cupy.get_default_memory_pool().free_all_blocks()
        except Exception:  # noqa: BLE001 - a device gone meanwhile: nothing to free
            pass


def attention_implementations() -> tuple[Any, dict[str, Callable], Measure]:
    """CuPy, ``{"fused": f(q, k, v), "reference": f(q, k, v)}`` and the device's measure."""
    cupy = importlib.import_module("cupy")
    import compute
    from compute.backends import cupy_backend

    return cupy, {"fused": lambda q, k, v: cupy_backend.flash_attention(q, k, v),
                  "reference": lambda q, k, v: compute.attention(q, k, v)}, device_measure(cupy)
