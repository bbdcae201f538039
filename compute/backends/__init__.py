"""Compute backends: NumPy always, CuPy (the project's own CUDA kernels) when a device answers.

Nothing here imports Qt, and nothing imports CuPy until it is asked to: the
probe runs on the first call that needs it (:func:`available_backends`,
:func:`unavailable_reasons`, ``set_backend("cupy")``) and its answer is
cached until :func:`refresh`.

Which backend runs a call
-------------------------
The public functions :func:`compute.softmax`, :func:`compute.log_softmax`,
:func:`compute.logsumexp` and :func:`compute.attention` decide per call:

* **CuPy input** (any argument whose type lives in a ``cupy`` module) runs
  on the device, whatever :func:`active` says, and returns CuPy arrays.
* **NumPy input** runs in NumPy, unless the active backend is ``"cupy"``
  and the work is at least :data:`GPU_MIN_ELEMENTS` elements (the input for
  the row functions, the ``n_q x n_k`` score matrices for attention); then
  it is copied to the device, computed there and copied back as NumPy.
  Smaller inputs never leave NumPy, so every worked number the app shows
  stays bit for bit the NumPy result, whichever backend is active.

Input validation (temperature, dtype, axis, shapes) happens before the
dispatch, so a bad argument raises the same error on either backend.

Falling back
------------
If the CuPy kernels fail (:class:`compute.backends.cupy_backend.KernelError`
on compile or launch, a CUDA runtime/driver error, device memory
exhausted), the call is computed in NumPy instead and returns what it would
have returned (CuPy arrays for CuPy input), never raising.  At the same time
the active backend goes back to ``"numpy"`` and a one-line reason is
recorded: :func:`take_fallback_message` returns it once (the GUI puts it in
the status bar), and listeners added with :func:`add_fallback_listener` are
called with it at once.  A ``KernelError`` is remembered: until
:func:`refresh`, the kernels are not tried again (CuPy input goes straight
to the NumPy fallback, without a new message) and ``set_backend("cupy")``
returns that reason.  Other device errors (e.g. out of memory) are not
remembered; choosing CuPy again tries again.

For CuPy input the fallback needs the device to copy the input to the host
and the result back; if even that fails, the CUDA error is raised (there is
nothing else to return).

Threads: the state is guarded by a lock, so the GUI thread can switch
backends while a worker computes.  Listeners are called in the thread whose
call fell back (often a worker): a GUI must hand the message to its own
thread (a queued signal) before touching widgets.
"""

from __future__ import annotations

import importlib
import logging
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

__all__ = [
    "BACKENDS",
    "GPU_MIN_ELEMENTS",
    "active",
    "add_fallback_listener",
    "available_backends",
    "is_device_array",
    "refresh",
    "remove_fallback_listener",
    "set_backend",
    "take_fallback_message",
    "unavailable_reasons",
]

BACKENDS: tuple[str, ...] = ("numpy", "cupy")

#: NumPy inputs smaller than this stay in NumPy even when CuPy is active.
#: 65536 elements (256 KiB of float32): below it the two host-device copies
#: and the kernel launch cost more than NumPy takes for the whole row set,
#: and every array the app shows as numbers is far smaller.
GPU_MIN_ELEMENTS = 1 << 16

NOT_INSTALLED = "CuPy is not installed (pip install -e '.[gpu]')"

_log = logging.getLogger(__name__)
_lock = threading.RLock()
_BACKEND_MODULE = "compute.backends.cupy_backend"


class _State:
    # ``active`` is read without the lock on the hot path (one attribute read);
    # every write holds the lock.
    active: str = "numpy"
    probe: str | None | bool = False  # False: not probed; None: CuPy works; str: why not
    kernel_failure: str | None = None  # a KernelError's reason, until refresh()
    message: str | None = None  # the last fallback reason, until taken
    listeners: list[Any] = []


_state = _State()


# --------------------------------------------------------------------------
# probing
# --------------------------------------------------------------------------
def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _probe_cupy() -> str | None:
    """``None`` if CuPy imports and a CUDA device answers, else why not."""
    try:
        cupy = importlib.import_module("cupy")
    except ModuleNotFoundError as exc:
        if exc.name == "cupy":
            return NOT_INSTALLED
        return f"CuPy failed to import: {_one_line(exc)}"
    except Exception as exc:  # a broken install raises all sorts (ImportError, OSError, ...)
        return f"CuPy failed to import: {_one_line(exc)}"
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:  # CUDARuntimeError without a driver or device
        return f"no CUDA device answered: {' '.join(str(exc).split()) or type(exc).__name__}"
    if count < 1:
        return "no CUDA device answered: the driver reports 0 devices"
    try:
        importlib.import_module(_BACKEND_MODULE)
    except Exception as exc:
        return f"the CuPy kernels could not be loaded: {_one_line(exc)}"
    return None


def _probed() -> str | None:
    """The cached probe result (probing first if needed).  Hold the lock."""
    if _state.probe is False:
        _state.probe = _probe_cupy()
    return _state.probe  # type: ignore[return-value]


def _cupy_reason() -> str | None:
    """Why CuPy cannot be used now, or ``None``.  Hold the lock."""
    return _probed() or _state.kernel_failure


def refresh() -> list[str]:
    """Probe again (after installing CuPy, or a driver), forget a remembered
    kernel failure, and return :func:`available_backends`.  If CuPy was
    active and is no longer available, NumPy becomes active."""
    with _lock:
        _state.probe = False
        _state.kernel_failure = None
        if _cupy_reason() is not None:
            _state.active = "numpy"
        return available_backends()


def available_backends() -> list[str]:
    """``["numpy"]``, plus ``"cupy"`` when it imports and a CUDA device answers."""
    with _lock:
        return ["numpy"] if _cupy_reason() else ["numpy", "cupy"]


def unavailable_reasons() -> dict[str, str]:
    """``{backend: one-line reason}`` for each backend that cannot be used."""
    with _lock:
        reason = _cupy_reason()
        return {} if reason is None else {"cupy": reason}


def active() -> str:
    """The active backend's name: ``"numpy"`` (the default) or ``"cupy"``."""
    return _state.active


def set_backend(name: str) -> str | None:
    """Make ``name`` the active backend.

    Returns ``None`` on success, or the reason CuPy cannot be used, in which
    case NumPy is (or stays) active.

    Raises
    ------
    ValueError
        ``name`` is not one of :data:`BACKENDS`.
    """
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    with _lock:
        reason = None if name == "numpy" else _cupy_reason()
        _state.active = "numpy" if reason else name
        return reason


# --------------------------------------------------------------------------
# fallback messages
# --------------------------------------------------------------------------
def take_fallback_message() -> str | None:
    """The last fallback reason, once; ``None`` if there is none (or it was taken)."""
    with _lock:
        message, _state.message = _state.message, None
        return message


def add_fallback_listener(callback: Callable[[str], object], *, weak: bool = True) -> None:
    """Call ``callback(message)`` whenever a call falls back to NumPy.

    With ``weak=True`` (the default) the callback is held weakly (a bound
    method through :class:`weakref.WeakMethod`), so a listening window can
    be garbage-collected; keep a reference to a plain function or lambda,
    or pass ``weak=False``.  Called in the thread that fell back; an
    exception in a listener is logged and does not reach the computation.
    """
    if weak:
        ref: Any = weakref.WeakMethod(callback) if hasattr(callback, "__self__") else weakref.ref(callback)
    else:
        ref = lambda: callback  # noqa: E731 (the same call shape as a weakref)
    with _lock:
        _state.listeners = [r for r in _state.listeners if r() is not None] + [ref]


def remove_fallback_listener(callback: Callable[[str], object]) -> None:
    """Stop calling ``callback`` (no error if it was not added)."""
    with _lock:
        _state.listeners = [r for r in _state.listeners if r() is not None and r() != callback]


def _record_fallback(message: str) -> None:
    with _lock:
        _state.active = "numpy"
        _state.message = message
        listeners = [r() for r in _state.listeners]
    for callback in listeners:
        if callback is None:
            continue
        try:
            callback(message)
        except Exception:
            _log.exception("fallback listener %r failed", callback)


# --------------------------------------------------------------------------
# dispatch (used by compute.softmax and compute.attention)
# --------------------------------------------------------------------------
def is_device_array(x: object) -> bool:
    """Whether ``x`` is a CuPy array (judged by its type's module: no import)."""
    return type(x).__module__.startswith("cupy")


def any_device_array(*xs: object) -> bool:
    return any(is_device_array(x) for x in xs)


def offload_wanted(size: int) -> bool:
    """Whether NumPy work of ``size`` elements should run on the device now."""
    return _state.active == "cupy" and size >= GPU_MIN_ELEMENTS


def _device_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that mean "the device path failed", not "bad input".

    ``KernelError`` and CuPy's ``CUDARuntimeError``/``CUDADriverError`` are
    ``RuntimeError`` subclasses; device memory exhaustion is a
    ``MemoryError``; NVRTC's ``CompileException`` derives from neither.
    """
    errors: list[type[BaseException]] = [RuntimeError, MemoryError]
    compiler = sys.modules.get("cupy.cuda.compiler")
    compile_exc = getattr(compiler, "CompileException", None)
    if isinstance(compile_exc, type) and issubclass(compile_exc, BaseException):
        errors.append(compile_exc)
    return tuple(errors)


def _cupy() -> ModuleType:
    return importlib.import_module("cupy")


def _kernels() -> ModuleType:
    return importlib.import_module(_BACKEND_MODULE)


def _map(fn: Callable[[Any], Any], result: Any) -> Any:
    return tuple(fn(r) for r in result) if isinstance(result, tuple) else fn(result)


def run(
    op: str | Callable[..., Any],
    arrays: Sequence[Any],
    kwargs: dict[str, Any],
    numpy_fn: Callable[..., Any],
) -> Any:
    """Run one call on the device, falling back to ``numpy_fn``.

    ``op`` names a function of ``cupy_backend`` (called as
    ``op(*arrays, **kwargs)`` with every array on the device), or is a
    callable ``op(cupy, cupy_backend, *arrays, **kwargs)``.  If any of
    ``arrays`` is a CuPy array the result is returned on the device (as
    CuPy arrays); otherwise the arrays are copied to the device and the
    result comes back as NumPy.  On a device failure ``numpy_fn(*host_arrays,
    **kwargs)`` computes the result instead (see the module docstring).
    ``None`` entries of ``arrays`` pass through unchanged.
    """
    on_device = any_device_array(*arrays)
    with _lock:
        latched = _state.kernel_failure
    if latched is None:
        try:
            cp = _cupy()
            kernels = _kernels()
            dev = [a if a is None or is_device_array(a) else cp.asarray(a) for a in arrays]
            fn = getattr(kernels, op) if isinstance(op, str) else (lambda *a, **k: op(cp, kernels, *a, **k))
            result = fn(*dev, **kwargs)
            return result if on_device else _map(cp.asnumpy, result)
        except _device_errors() as exc:
            _fail(op, exc)
        except ImportError as exc:  # cupy_backend missing or broken: same as a kernel failure
            _fail(op, exc, latch=True)
    if not on_device:
        return numpy_fn(*arrays, **kwargs)
    cp = _cupy()  # CuPy input: CuPy is imported
    host = [cp.asnumpy(a) if is_device_array(a) else a for a in arrays]
    return _map(cp.asarray, numpy_fn(*host, **kwargs))


def _fail(op: str | Callable[..., Any], exc: BaseException, latch: bool = False) -> None:
    name = op if isinstance(op, str) else getattr(op, "__name__", "kernel").lstrip("_")
    kernel_error = getattr(sys.modules.get(_BACKEND_MODULE), "KernelError", None)
    if isinstance(kernel_error, type) and isinstance(exc, kernel_error):
        latch = True
    message = f"CuPy {name} failed, computed with NumPy instead: {_one_line(exc)}"
    if latch:
        with _lock:
            _state.kernel_failure = f"the CuPy kernels failed: {_one_line(exc)}"
    _record_fallback(message)
