"""Tests for compute.backends: the probe, the active backend, dispatch and fallback.

No GPU is needed.  CuPy and the project's ``cupy_backend`` are replaced by
fakes in ``sys.modules``: a fake device array wraps a NumPy array (its type
lives in a ``cupy...`` module and, like CuPy's, it refuses implicit
conversion to NumPy), and the fake kernels compute with SciPy, so a result
that came from them is told apart from NumPy's by the call log and checked
against an independent reference.
"""

from __future__ import annotations

import gc
import importlib.abc
import importlib.machinery
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import scipy.special as sps

import compute
from compute import backends
from tests.compute.support import INF, NAN, ref

REPO_ROOT = Path(__file__).resolve().parents[2]
KERNELS = "compute.backends.cupy_backend"


# --------------------------------------------------------------------------
# fakes
# --------------------------------------------------------------------------
class FakeDeviceArray:
    """A stand-in for ``cupy.ndarray`` holding a NumPy array."""

    __array_ufunc__ = None  # NumPy operators defer to ours, as with CuPy

    def __init__(self, a):
        self._a = np.asarray(a)

    def __repr__(self):
        return f"FakeDeviceArray({self._a!r})"

    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed (fake CuPy)")

    def __getattr__(self, name):
        if name.startswith("__"):  # no __array_interface__ and friends: NumPy must not read it
            raise AttributeError(name)
        attr = getattr(self._a, name)
        if callable(attr):
            return lambda *a, **k: _wrap(attr(*_unwrap(a), **_unwrap(k)))
        return attr

    def __getitem__(self, key):
        return _wrap(self._a[_unwrap(key)])

    def __imul__(self, other):
        self._a *= _unwrap(other)
        return self

    def __len__(self):
        return len(self._a)


def _binary(name):
    def op(self, other):
        return _wrap(getattr(self._a, name)(_unwrap(other)))

    return op


for _name in ("add", "sub", "mul", "truediv", "matmul", "eq", "ne", "lt", "le", "gt", "ge",
              "radd", "rsub", "rmul", "rtruediv"):
    setattr(FakeDeviceArray, f"__{_name}__", _binary(f"__{_name}__"))
FakeDeviceArray.__module__ = "cupy._fake"  # how the dispatch recognises a device array


def _unwrap(x):
    if isinstance(x, FakeDeviceArray):
        return x._a
    if isinstance(x, tuple | list):
        return type(x)(_unwrap(v) for v in x)
    if isinstance(x, dict):
        return {k: _unwrap(v) for k, v in x.items()}
    return x


def _wrap(x):
    if isinstance(x, np.ndarray):
        return FakeDeviceArray(x)
    if isinstance(x, tuple):
        return tuple(_wrap(v) for v in x)
    return x


class FakeCUDARuntimeError(RuntimeError):
    """Like cupy_backends' CUDARuntimeError: a RuntimeError subclass."""


class FakeCupy(types.ModuleType):
    """``cupy``: NumPy's functions on fake device arrays, plus a device count."""

    def __init__(self, devices=1, error=None):
        super().__init__("cupy")
        self.ndarray = FakeDeviceArray
        self.device_queries = 0

        def get_device_count():
            self.device_queries += 1
            if error is not None:
                raise error
            return devices

        self.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=get_device_count))

    def __getattr__(self, name):
        fn = getattr(np, name)
        return lambda *a, **k: _wrap(fn(*_unwrap(a), **_unwrap(k)))

    @staticmethod
    def asarray(a, dtype=None):
        return a if isinstance(a, FakeDeviceArray) else FakeDeviceArray(np.array(a, dtype=dtype))

    @staticmethod
    def asnumpy(a):
        return np.array(_unwrap(a))


class FakeKernelError(RuntimeError):
    pass


def _scipy_lse(x, axis):
    return ref(sps.logsumexp, x, axis=axis)


class FakeKernels(types.ModuleType):
    """``cupy_backend``'s contract, computed with SciPy; logs its calls."""

    KernelError = FakeKernelError

    def __init__(self):
        super().__init__(KERNELS)
        self.calls = []
        self.fail = None  # an exception to raise instead of computing

    def _run(self, name, x, fn, **kwargs):
        assert isinstance(x, FakeDeviceArray), f"{name} got {type(x)} instead of a device array"
        self.calls.append((name, x.dtype, x.shape, kwargs))
        if self.fail is not None:
            raise self.fail
        return FakeDeviceArray(np.asarray(fn(x._a, **kwargs)).astype(x.dtype))

    def softmax(self, x, axis=-1, temperature=1.0):
        return self._run("softmax", x, lambda a, axis, temperature: ref(sps.softmax, a / temperature, axis=axis),
                         axis=axis, temperature=temperature)

    def log_softmax(self, x, axis=-1, temperature=1.0):
        return self._run("log_softmax", x,
                         lambda a, axis, temperature: ref(sps.log_softmax, a / temperature, axis=axis),
                         axis=axis, temperature=temperature)

    def logsumexp(self, x, axis=-1):
        return self._run("logsumexp", x, _scipy_lse, axis=axis)


@pytest.fixture(autouse=True)
def clean_backends():
    """Every test starts and ends on NumPy, with a fresh probe and no message."""

    def reset():
        backends.refresh()
        backends.set_backend("numpy")
        backends.take_fallback_message()

    reset()
    yield
    reset()


@pytest.fixture
def device(monkeypatch):
    """A fake CuPy with one device and fake kernels, installed in sys.modules."""
    cp = FakeCupy(devices=1)
    kernels = FakeKernels()
    monkeypatch.setitem(sys.modules, "cupy", cp)
    monkeypatch.setitem(sys.modules, KERNELS, kernels)
    backends.refresh()
    return cp, kernels


def _no_cupy_installed(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # `import cupy` -> ModuleNotFoundError


# --------------------------------------------------------------------------
# probe
# --------------------------------------------------------------------------
def test_fake_device_array_refuses_numpy_like_cupy():
    d = FakeDeviceArray(np.ones(3))
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.asarray(d)
    assert backends.is_device_array(d) and not backends.is_device_array(np.ones(3))
    assert not backends.is_device_array([1.0]) and not backends.is_device_array(None)


def test_probe_in_this_environment():
    """The real probe, whatever this machine has: the answer matches what
    importing CuPy and asking for devices gives independently."""
    try:
        import cupy
    except ModuleNotFoundError:
        assert backends.available_backends() == ["numpy"]
        assert backends.unavailable_reasons() == {"cupy": backends.NOT_INSTALLED}
        return
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # no driver / no device (the CI case)
        assert backends.available_backends() == ["numpy"]
        reason = backends.unavailable_reasons()["cupy"]
        assert reason.startswith("no CUDA device answered: ")
        assert str(exc).split(":")[0] in reason  # e.g. cudaErrorInsufficientDriver
        assert backends.set_backend("cupy") == reason
        assert backends.active() == "numpy"
        return
    assert count >= 1
    assert "cupy" in backends.available_backends()


def test_cupy_not_installed(monkeypatch):
    _no_cupy_installed(monkeypatch)
    backends.refresh()
    assert backends.available_backends() == ["numpy"]
    reason = backends.unavailable_reasons()["cupy"]
    assert reason == "CuPy is not installed (pip install -e '.[gpu]')"
    assert backends.set_backend("cupy") == reason
    assert backends.active() == "numpy"


class _BrokenCupyFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        return importlib.machinery.ModuleSpec(name, self) if name == "cupy" else None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        raise OSError("libcudart.so.13: cannot open shared object file")


def test_cupy_that_fails_to_import(monkeypatch):
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_BrokenCupyFinder(), *sys.meta_path])
    backends.refresh()
    reason = backends.unavailable_reasons()["cupy"]
    assert reason == "CuPy failed to import: OSError: libcudart.so.13: cannot open shared object file"
    assert backends.available_backends() == ["numpy"]


def test_cupy_without_a_device_names_the_cuda_error(monkeypatch):
    error = FakeCUDARuntimeError(
        "cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version"
    )
    monkeypatch.setitem(sys.modules, "cupy", FakeCupy(error=error))
    backends.refresh()
    assert backends.available_backends() == ["numpy"]
    assert backends.unavailable_reasons() == {
        "cupy": "no CUDA device answered: cudaErrorInsufficientDriver: "
        "CUDA driver version is insufficient for CUDA runtime version"
    }


def test_zero_devices(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", FakeCupy(devices=0))
    backends.refresh()
    assert backends.unavailable_reasons()["cupy"] == "no CUDA device answered: the driver reports 0 devices"


def test_kernels_module_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", FakeCupy(devices=1))
    monkeypatch.setitem(sys.modules, KERNELS, None)
    backends.refresh()
    assert backends.available_backends() == ["numpy"]
    assert backends.unavailable_reasons()["cupy"].startswith("the CuPy kernels could not be loaded: ")


def test_probe_is_cached_until_refresh(device):
    cp, _ = device
    queries = cp.device_queries
    assert backends.available_backends() == ["numpy", "cupy"]
    assert backends.unavailable_reasons() == {}
    backends.available_backends()
    backends.set_backend("cupy")
    assert cp.device_queries == queries  # refresh() in the fixture probed once already
    assert backends.refresh() == ["numpy", "cupy"]
    assert cp.device_queries == queries + 1


def test_refresh_drops_cupy_when_it_went_away(device, monkeypatch):
    assert backends.set_backend("cupy") is None
    _no_cupy_installed(monkeypatch)
    assert backends.active() == "cupy"  # cached until refresh
    assert backends.refresh() == ["numpy"]
    assert backends.active() == "numpy"


# --------------------------------------------------------------------------
# set_backend
# --------------------------------------------------------------------------
@pytest.mark.parametrize("bad", ["CuPy", "torch", "", None, 1])
def test_unknown_backend_is_value_error(bad):
    with pytest.raises(ValueError, match="unknown backend"):
        backends.set_backend(bad)
    assert backends.active() == "numpy"


def test_set_backend_and_back(device):
    assert backends.active() == "numpy"
    assert backends.set_backend("cupy") is None
    assert backends.active() == "cupy"
    assert backends.set_backend("numpy") is None
    assert backends.active() == "numpy"


def test_compute_imports_without_importing_cupy():
    code = (
        "import sys, numpy as np, compute; from compute import backends; "
        "compute.softmax(np.ones((300, 300))); compute.logsumexp([1.0, 2.0]); "
        "compute.attention(np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 2))); "
        "assert backends.active() == 'numpy'; "
        "assert 'cupy' not in sys.modules, 'cupy was imported'; "
        "backends.available_backends(); print('cupy' in sys.modules or 'absent')"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() in ("True", "absent")  # the probe itself may import it


# --------------------------------------------------------------------------
# dispatch of device arrays
# --------------------------------------------------------------------------
def test_device_input_runs_the_kernels_and_stays_on_device(device):
    _, kernels = device
    x = np.random.default_rng(0).normal(size=(3, 5)) * 4
    d = FakeDeviceArray(x.copy())
    p = compute.softmax(d, axis=0, temperature=0.5)
    assert isinstance(p, FakeDeviceArray)
    np.testing.assert_allclose(p._a, ref(sps.softmax, x / 0.5, axis=0), rtol=1e-13)
    lp = compute.log_softmax(d, temperature=2.0)
    assert isinstance(lp, FakeDeviceArray)
    np.testing.assert_allclose(lp._a, ref(sps.log_softmax, x / 2.0, axis=1), rtol=1e-13)
    lse = compute.logsumexp(d, axis=-2)
    assert isinstance(lse, FakeDeviceArray) and lse.shape == (5,)
    np.testing.assert_allclose(lse._a, ref(sps.logsumexp, x, axis=0), rtol=1e-13)
    # axes normalised, temperature validated and passed as a float
    assert kernels.calls == [
        ("softmax", np.float64, (3, 5), {"axis": 0, "temperature": 0.5}),
        ("log_softmax", np.float64, (3, 5), {"axis": 1, "temperature": 2.0}),
        ("logsumexp", np.float64, (3, 5), {"axis": 0}),
    ]
    assert backends.active() == "numpy"  # device input does not need the active backend
    assert backends.take_fallback_message() is None


def test_device_input_dtype_and_shape_rules(device):
    _, kernels = device
    p = compute.softmax(FakeDeviceArray(np.array([1, 2, 3], dtype=np.int32)))
    assert kernels.calls[-1][1] == np.float64  # ints become float64 before the kernel
    np.testing.assert_allclose(p._a, ref(sps.softmax, np.array([1.0, 2.0, 3.0])), rtol=1e-14)
    p16 = compute.softmax(FakeDeviceArray(np.array([1.0, 2.0], dtype=np.float16)))
    assert kernels.calls[-1][1] == np.float16 and p16.dtype == np.float16  # the kernel widens itself
    zero_d = compute.softmax(FakeDeviceArray(np.array(3.0)), axis=7)
    assert isinstance(zero_d, FakeDeviceArray) and zero_d.shape == () and float(zero_d._a) == 1.0
    assert compute.logsumexp(FakeDeviceArray(np.array(3.0))).shape == ()
    calls = len(kernels.calls)
    empty = compute.softmax(FakeDeviceArray(np.empty((2, 0), dtype=np.float32)))
    assert isinstance(empty, FakeDeviceArray) and empty.shape == (2, 0) and empty.dtype == np.float32
    lse = compute.logsumexp(FakeDeviceArray(np.empty((2, 0))))
    np.testing.assert_array_equal(lse._a, [-INF, -INF])
    assert len(kernels.calls) == calls  # no kernel for an empty axis


def test_device_input_is_validated_before_any_kernel(device):
    _, kernels = device
    d = FakeDeviceArray(np.ones((2, 3)))
    with pytest.raises(ValueError, match="temperature must be finite and > 0, got 0"):
        compute.softmax(d, temperature=0)
    with pytest.raises(np.exceptions.AxisError):
        compute.log_softmax(d, axis=2)
    with pytest.raises(TypeError, match="complex"):
        compute.softmax(FakeDeviceArray(np.ones(3, dtype=np.complex128)))
    assert kernels.calls == []


def test_small_numpy_input_stays_numpy_bit_for_bit_when_cupy_is_active(device):
    _, kernels = device
    x = np.random.default_rng(1).normal(size=(64, 100)) * 10  # 6400 < GPU_MIN_ELEMENTS
    want = [compute.softmax(x, temperature=0.7), compute.log_softmax(x), compute.logsumexp(x)]
    assert backends.set_backend("cupy") is None
    got = [compute.softmax(x, temperature=0.7), compute.log_softmax(x), compute.logsumexp(x)]
    for g, w in zip(got, want):
        assert type(g) is np.ndarray
        assert np.array_equal(g, w)
    assert kernels.calls == []
    row = np.array([2.0, 1.0, 0.5, -1.0])
    assert np.array_equal(compute.softmax(row), compute.softmax_steps(row).probs)


def test_large_numpy_input_offloads_when_cupy_is_active(device):
    _, kernels = device
    n = backends.GPU_MIN_ELEMENTS
    x = np.random.default_rng(2).normal(size=(n // 256, 256)).astype(np.float32)
    numpy_result = compute.softmax(x, axis=0)
    assert kernels.calls == []  # NumPy active: no offload
    assert backends.set_backend("cupy") is None
    p = compute.softmax(x, axis=0)
    assert type(p) is np.ndarray and p.dtype == np.float32 and p.shape == x.shape
    assert kernels.calls == [("softmax", np.float32, x.shape, {"axis": 0, "temperature": 1.0})]
    np.testing.assert_allclose(p, numpy_result, rtol=1e-5, atol=1e-9)
    lse = compute.logsumexp(x.astype(np.float16))
    assert type(lse) is np.ndarray and lse.dtype == np.float16 and kernels.calls[-1][0] == "logsumexp"
    compute.log_softmax(x[:, :-1])  # one row short of the threshold: stays in NumPy
    assert len(kernels.calls) == 2
    assert backends.active() == "cupy"


# --------------------------------------------------------------------------
# fallback
# --------------------------------------------------------------------------
class _Listener:
    def __init__(self):
        self.messages = []

    def __call__(self, message):
        self.messages.append(message)

    def method(self, message):
        self.messages.append(message)


def test_kernel_error_falls_back_to_numpy_once(device):
    _, kernels = device
    listener = _Listener()
    backends.add_fallback_listener(listener)
    x = np.random.default_rng(3).normal(size=(256, 512))
    want = compute.softmax(x, temperature=3.0)
    assert backends.set_backend("cupy") is None
    kernels.fail = FakeKernelError("NVRTC_ERROR_COMPILATION: softmax.cu(12): error: expected a ;")
    got = compute.softmax(x, temperature=3.0)  # no exception
    assert type(got) is np.ndarray and np.array_equal(got, want)
    assert len(kernels.calls) == 1
    assert backends.active() == "numpy"
    message = backends.take_fallback_message()
    assert "softmax" in message and "NumPy" in message and "expected a ;" in message
    assert "\n" not in message
    assert backends.take_fallback_message() is None
    assert listener.messages == [message]
    # remembered: CuPy stays refused, and device input skips the kernels quietly
    reason = backends.set_backend("cupy")
    assert reason is not None and "expected a ;" in reason
    assert backends.active() == "numpy"
    assert backends.unavailable_reasons() == {"cupy": reason}
    d = compute.log_softmax(FakeDeviceArray(x))
    assert isinstance(d, FakeDeviceArray) and np.array_equal(d._a, compute.log_softmax(x))
    assert len(kernels.calls) == 1 and backends.take_fallback_message() is None
    assert listener.messages == [message]
    # refresh() forgets it
    kernels.fail = None
    assert backends.refresh() == ["numpy", "cupy"]
    assert backends.set_backend("cupy") is None
    backends.remove_fallback_listener(listener)


def test_device_input_falls_back_and_stays_on_device(device):
    _, kernels = device
    kernels.fail = FakeKernelError("cuLaunchKernel: CUDA_ERROR_INVALID_VALUE")
    x = np.array([[1.0, -INF, 2.0], [NAN, 0.0, 1.0], [INF, INF, 0.0]])
    for fn in (compute.softmax, compute.log_softmax, compute.logsumexp):
        got = fn(FakeDeviceArray(x))
        assert isinstance(got, FakeDeviceArray)
        assert np.array_equal(got._a, fn(x), equal_nan=True)
    assert "CUDA_ERROR_INVALID_VALUE" in backends.take_fallback_message()
    assert backends.take_fallback_message() is None


@pytest.mark.parametrize(
    "error",
    [FakeCUDARuntimeError("cudaErrorLaunchFailure: unspecified launch failure"),
     MemoryError("Out of memory allocating 4,294,967,296 bytes")],
)
def test_other_device_errors_fall_back_but_are_not_remembered(device, error):
    _, kernels = device
    kernels.fail = error
    x = np.random.default_rng(4).normal(size=(512, 128))
    assert backends.set_backend("cupy") is None
    assert np.array_equal(compute.logsumexp(x), compute.logsumexp(x.copy()))  # second call on NumPy
    assert len(kernels.calls) == 1
    assert str(error) in backends.take_fallback_message()
    assert backends.active() == "numpy"
    kernels.fail = None
    assert backends.set_backend("cupy") is None  # try again
    compute.logsumexp(x)
    assert len(kernels.calls) == 2 and backends.take_fallback_message() is None


def test_bugs_in_the_kernels_module_are_not_hidden(device):
    _, kernels = device
    kernels.fail = TypeError("a bug, not a device failure")
    with pytest.raises(TypeError, match="a bug"):
        compute.softmax(FakeDeviceArray(np.ones(3)))


def test_listeners_are_weak_removable_and_isolated(device, caplog):
    _, kernels = device
    kernels.fail = FakeKernelError("boom")
    kept, gone, removed = _Listener(), _Listener(), _Listener()
    seen_by_gone = gone.messages
    backends.add_fallback_listener(kept.method)
    backends.add_fallback_listener(gone.method)
    backends.add_fallback_listener(removed)
    backends.remove_fallback_listener(removed)

    def broken(message):
        raise RuntimeError("listener bug")

    backends.add_fallback_listener(broken)
    del gone
    gc.collect()
    got = compute.softmax(FakeDeviceArray(np.array([1.0, 2.0])))
    np.testing.assert_array_equal(got._a, compute.softmax([1.0, 2.0]))
    assert len(kept.messages) == 1 and "boom" in kept.messages[0]
    assert seen_by_gone == [] and removed.messages == []
    assert "listener bug" in caplog.text
    backends.remove_fallback_listener(kept.method)
    backends.remove_fallback_listener(broken)

    strong = []
    backends.add_fallback_listener(lambda m: strong.append(m), weak=False)
    gc.collect()
    backends.refresh()
    compute.softmax(FakeDeviceArray(np.array([1.0, 2.0])))
    assert len(strong) == 1


# --------------------------------------------------------------------------
# attention
# --------------------------------------------------------------------------
def _qkv(seed, n_q=5, n_k=6, d=4, lead=(2,), dtype=np.float64):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=lead + (n, m)).astype(dtype) for n, m in ((n_q, d), (n_k, d), (n_k, 3))]


def _plain_attention(q, k, v, scale, allowed):
    """A loop over rows, independent of compute.attention."""
    lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    qb, kb, vb = (np.broadcast_to(a, lead + a.shape[-2:]) for a in (q, k, v))
    w = np.zeros(lead + (q.shape[-2], k.shape[-2]))
    out = np.zeros(lead + (q.shape[-2], v.shape[-1]))
    for idx in np.ndindex(*lead):
        for i in range(q.shape[-2]):
            keys = [j for j in range(k.shape[-2]) if allowed[i, j]]
            if not keys:
                continue
            s = np.array([qb[idx][i] @ kb[idx][j] * scale for j in keys])
            e = np.exp(s - s.max())
            w[idx + (i, keys)] = e / e.sum()
            out[idx + (i,)] = w[idx + (i,)] @ vb[idx]
    return w, out


def test_attention_on_device_arrays(device):
    _, kernels = device
    q, k, v = _qkv(5)
    allowed = np.tri(5, 6, dtype=bool)
    allowed[2] = False  # a fully masked row: zeros, not NaN
    w_ref, out_ref = _plain_attention(q, k, v, 0.5, allowed)
    w, out = compute.attention(FakeDeviceArray(q), FakeDeviceArray(k), FakeDeviceArray(v), scale=0.5,
                               mask=FakeDeviceArray(allowed))
    assert isinstance(w, FakeDeviceArray) and isinstance(out, FakeDeviceArray)
    np.testing.assert_allclose(w._a, w_ref, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out._a, out_ref, rtol=1e-12, atol=1e-15)
    assert [c[0] for c in kernels.calls] == ["softmax"]  # the weights come from the softmax kernel
    # causal alone, numpy mask, float16 computed in float32 on the device
    q16, k16, v16 = (a.astype(np.float16) for a in (q, k, v))
    w, out = compute.attention(FakeDeviceArray(q16), k16, v16, causal=True)
    assert w.dtype == np.float16 and out.dtype == np.float16 and w.shape == (2, 5, 6)
    assert kernels.calls[-1][1] == np.float32
    w_np, out_np = compute.attention(q16, k16, v16, causal=True)
    np.testing.assert_allclose(w._a.astype(np.float64), w_np.astype(np.float64), rtol=2e-3, atol=1e-4)
    np.testing.assert_allclose(out._a.astype(np.float64), out_np.astype(np.float64), rtol=2e-3, atol=2e-3)


def test_attention_on_device_validates_like_numpy(device):
    _, kernels = device
    q, k, v = _qkv(6)
    with pytest.raises(ValueError, match="same last dimension"):
        compute.attention(FakeDeviceArray(q), FakeDeviceArray(k[..., :3]), FakeDeviceArray(v))
    with pytest.raises(TypeError, match="mask must be boolean"):
        compute.attention(FakeDeviceArray(q), k, v, mask=FakeDeviceArray(np.ones((5, 6))))
    with pytest.raises(ValueError, match="scale must be finite"):
        compute.attention(FakeDeviceArray(q), k, v, scale=-1.0)
    assert kernels.calls == []


def test_attention_offload_and_fallback(device):
    _, kernels = device
    n = 256  # 256 x 256 score cells = GPU_MIN_ELEMENTS
    q, k, v = _qkv(7, n_q=n, n_k=n, d=8, lead=())
    w_np, out_np = compute.attention(q, k, v, causal=True)
    assert backends.set_backend("cupy") is None
    w, out = compute.attention(q, k, v, causal=True)
    assert type(w) is np.ndarray and type(out) is np.ndarray
    assert kernels.calls[-1][:3] == ("softmax", np.float64, (n, n))
    np.testing.assert_allclose(w, w_np, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(out, out_np, rtol=1e-12, atol=1e-15)
    kernels.fail = FakeKernelError("no kernel image is available for execution on the device")
    w, out = compute.attention(q, k, v, causal=True)
    assert np.array_equal(w, w_np) and np.array_equal(out, out_np)
    assert "no kernel image" in backends.take_fallback_message()
    assert backends.active() == "numpy"
    small = compute.attention(q[:8], k[:8], v[:8])
    assert np.array_equal(small[0], compute.attention(q[:8], k[:8], v[:8])[0])
