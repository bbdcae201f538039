"""The kernels' decomposition, replayed in NumPy (tests/compute/kernel_emulation), against compute.softmax.

The emulation takes its plan from kernels.launch_plan, so these tests check
the decomposition the GPU runs (paths, packets per thread, merge order,
split rows, attention tiles) in float64, where any mistake in the algorithm
shows far above rounding.  Path boundaries are moved down to small rows
with launch_plan's keyword thresholds, and blocks made small with
Plan.with_threads, so that every path runs on a few hundred elements.
"""

from __future__ import annotations

import math
import re
import sys
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compute
from compute.backends import kernels
from tests.compute import kernel_emulation as emulate
from tests.compute.support import INF, NAN, ref

KINDS = ("softmax", "log_softmax", "logsumexp")

# A small "device": the warp path up to 64, rows in shared memory up to 200
# float64 elements, streaming beyond, rows split when fewer than 8 and n >= 400.
SMALL = dict(warp_max=64, smem_limit=kernels.SMEM_RESERVE + 200 * 8, split_min=400, split_min_chunk=64, sm_count=4)


def small_plan(rows: int, n: int, threads: int = 64, aligned: bool = True, **kw) -> kernels.Plan:
    plan = kernels.launch_plan(rows, n, np.float64, aligned=aligned, **(SMALL | kw))
    return plan if plan.path == "warp" else plan.with_threads(threads)


def reference(x, kind: str, t: float = 1.0):
    if kind == "softmax":
        return ref(compute.softmax, x, temperature=t)
    if kind == "log_softmax":
        return ref(compute.log_softmax, x, temperature=t)
    return ref(compute.logsumexp, x)


def assert_matches(got, want, kind: str):
    """Same dtype and shape, the same special values exactly, finite values to rounding."""
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(want))
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(want))
    if kind != "logsumexp":
        np.testing.assert_array_equal(got == 0, want == 0)
    # compute.logsumexp keeps a rest below eps through log1p (logsumexp([0, -45]) is
    # 2.9e-20); the kernels' m + log(d) rounds it away: equal to an absolute eps there
    atol = {"log_softmax": 1e-12, "logsumexp": 1e-15}.get(kind, 1e-300)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=atol, equal_nan=True)


def run(x, kind, t=1.0, plan=None):
    return emulate.emulate_softmax(x, temperature=t if kind != "logsumexp" else 1.0, kind=kind, plan=plan)


# --------------------------------------------------------------------------
# the plan
# --------------------------------------------------------------------------
def test_plan_paths_at_the_real_boundaries():
    f32 = np.float32
    assert kernels.launch_plan(4096, 1024, f32).path == "warp"
    assert kernels.launch_plan(4096, 1024, f32).per == 32
    assert kernels.launch_plan(4096, 1025, f32).path == "block"
    limit = 227 * 1024 - kernels.SMEM_RESERVE  # H100/H200: rows up to here live in shared memory
    assert kernels.launch_plan(4096, limit // 4, f32).path == "block"
    assert kernels.launch_plan(4096, limit // 4 + 1, f32).path == "stream"
    assert kernels.launch_plan(4096, limit // 2, np.float16).path == "block"
    one = kernels.launch_plan(1, 1 << 20, f32)
    assert one.path == "split" and one.splits > 1 and one.splits * one.chunk >= 1 << 20
    assert (one.splits - 1) * one.chunk < 1 << 20 and one.chunk % one.vec == 0
    assert kernels.launch_plan(8, 1 << 20, f32).path == "split"
    assert kernels.launch_plan(300, 1 << 20, f32).path == "stream"  # enough rows to fill the GPU
    assert kernels.launch_plan(1, 1000, f32).path == "warp"  # short rows are never split
    # 16-byte packets only when aligned and n is a multiple of the packet
    assert kernels.launch_plan(10, 4096, f32).vec == 4
    assert kernels.launch_plan(10, 4096, np.float16).vec == 8
    assert kernels.launch_plan(10, 4096, np.float64).vec == 2
    assert kernels.launch_plan(10, 4098, f32).vec == 1
    assert kernels.launch_plan(10, 4096, f32, aligned=False).vec == 1
    # the split kernel's grid.y is the row count
    assert all(kernels.launch_plan(r, 1 << 20, f32).grid[1] < 65536 for r in (1, 7, 263) if r < 264)


def test_plan_rejects_what_the_kernels_cannot_do():
    with pytest.raises(TypeError):
        kernels.launch_plan(1, 10, np.int32)
    with pytest.raises(ValueError):
        kernels.launch_plan(0, 10, np.float32)
    with pytest.raises(ValueError):
        kernels.launch_plan(1, 2000, np.float32, warp_max=2048)
    with pytest.raises(ValueError, match="128"):
        kernels.attention_plan(1, 10, 129, 64, np.float32)


@pytest.mark.parametrize("t", [1.0, 0.5, 0.7, 3.0, 1e-30, 1e-50, 1e38, 1e50, 1e-300, 5e-324, 1.7e308])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_temperature_factors(t, dtype):
    a, b = kernels.temperature_factors(t, dtype)
    work = np.float64 if dtype == np.float64 else np.float32
    fa, fb = work(a), work(b)
    assert fa == a and fb == b, "the factors must be exact in the working precision"
    assert fa > 0 and fb > 0
    if t == 1.0:
        assert (a, b) == (1.0, 1.0)
    with np.errstate(all="ignore"):
        for diff in (work(-1.0), work(-1e-30), work(-3e38), work(-np.inf)):
            got = (diff * fa) * fb
            want = work(float(diff) / t) if np.isfinite(diff) else work(-np.inf)
            assert not np.isnan(got)
            if np.isfinite(want) and want != 0:
                assert abs(got - want) <= 1e-6 * abs(want) + 1e-37
            else:
                assert got == want or (abs(got) < 1e-30 and want == 0), (diff, t, got, want)


def test_attention_scale_factors():
    assert kernels.attention_scale_factors(1.0, np.float32) == (1.0, 1.0)
    assert kernels.attention_scale_factors(0.125, np.float32) == (0.125, 1.0)
    a, b = kernels.attention_scale_factors(1e-50, np.float32)
    assert a > 0 and b > 0 and math.isclose(a * b, 1e-50, rel_tol=1e-6)


# --------------------------------------------------------------------------
# targeted rows
# --------------------------------------------------------------------------
SPECIAL_ROWS = {
    "one": [3.5],
    "one -inf": [-INF],
    "one +inf": [INF],
    "one nan": [NAN],
    "all -inf": [-INF] * 70,
    "two +inf": [1.0, INF, -2.0, INF] + [0.5] * 70,
    "+inf and -inf": [-INF, INF] + [-INF] * 70,
    "nan late": [0.0] * 70 + [NAN],
    "nan and +inf": [INF] * 3 + [NAN] + [1.0] * 70,
    "huge": [1e308, -1e308, 1e308, 5.0] * 20,
    "-inf then finite": [-INF] * 40 + [-1e300, 2.0, 2.0],
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", sorted(SPECIAL_ROWS))
@pytest.mark.parametrize("path_n", [None, 120, 300, 700])
def test_special_rows_on_every_path(name, kind, path_n):
    """Each special row padded with -inf to a length that lands on each path (None: as is)."""
    row = np.array(SPECIAL_ROWS[name], dtype=np.float64)
    if path_n is not None:
        row = np.concatenate([np.full(path_n - row.size, -INF), row])
    x = np.stack([row, row[::-1]])
    plan = small_plan(2, row.size)
    got = run(x, kind, 0.7, plan)
    assert_matches(got, reference(x, kind, 0.7), kind)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "n",
    # real warp boundary, then the SMALL device's warp, shared-memory and split boundaries
    [1, 2, 31, 32, 33, 63, 64, 65, 199, 200, 201, 399, 400, 401, 1023, 1024, 1025],
)
@pytest.mark.parametrize("rows", [1, 3, 9])
def test_lengths_around_every_boundary(n, rows, kind):
    rng = np.random.default_rng(n * 31 + rows)
    x = rng.normal(scale=4.0, size=(rows, n))
    plan = small_plan(rows, n) if n < 1000 else kernels.launch_plan(rows, n, np.float64)
    if plan.path != "warp":
        plan = plan.with_threads(64)
    got = run(x, kind, 1.3, plan)
    assert_matches(got, reference(x, kind, 1.3), kind)
    if kind == "softmax":
        np.testing.assert_allclose(got.sum(axis=-1), 1.0, rtol=1e-13)


def test_each_small_boundary_lands_where_intended():
    paths = {n: small_plan(1, n).path for n in (64, 65, 200, 201, 399, 400)}
    assert paths == {64: "warp", 65: "block", 200: "block", 201: "stream", 399: "stream", 400: "split"}
    assert small_plan(8, 400).path == "stream"  # enough rows
    assert small_plan(1, 401).splits == 6


@pytest.mark.parametrize("aligned", [True, False])
@pytest.mark.parametrize("threads", [32, 64, 96, 1024])
def test_block_sizes_and_packets(threads, aligned):
    rng = np.random.default_rng(threads)
    for n in (130, 250, 600):
        x = rng.normal(size=(2, n)) * 10
        x[0, 7] = INF
        plan = small_plan(2, n, threads=threads, aligned=aligned)
        for kind in KINDS:
            assert_matches(run(x, kind, 0.9, plan), reference(x, kind, 0.9), kind)


def test_split_rows_merge_many_partials():
    """More than 32 partials per row: lanes merge several each before the butterfly."""
    rng = np.random.default_rng(5)
    n = 64 * 70 + 3
    x = rng.normal(size=(2, n)) * 30
    x[1, 100:] = -INF
    plan = kernels.launch_plan(2, n, np.float64, **(SMALL | dict(smem_limit=2048, sm_count=40))).with_threads(32)
    assert plan.path == "split" and plan.splits > 32
    for kind in KINDS:
        assert_matches(run(x, kind, 2.0, plan), reference(x, kind, 2.0), kind)
    m, d = emulate.split_partials(x, plan, 2.0)
    assert m.shape == (2, plan.splits)
    assert np.all(m[1, 2:] == -INF) and np.all(d[1, 2:] == 0)


def test_default_plan_is_the_launchers():
    x = np.random.default_rng(0).normal(size=(3, 1500))
    assert_matches(emulate.emulate_softmax(x), reference(x, "softmax"), "softmax")
    with pytest.raises(ValueError, match="plan"):
        emulate.emulate_softmax(x, plan=kernels.launch_plan(3, 1499, np.float64))
    with pytest.raises(ValueError, match="kind"):
        emulate.emulate_softmax(x, kind="softmin")


def test_shapes_dtypes_and_empty():
    x = np.arange(24.0).reshape(2, 3, 4)
    assert emulate.emulate_softmax(x).shape == (2, 3, 4)
    assert emulate.emulate_softmax(x, kind="logsumexp").shape == (2, 3)
    h = emulate.emulate_softmax(x.astype(np.float16))
    assert h.dtype == np.float16
    np.testing.assert_allclose(h, ref(compute.softmax, x.astype(np.float16)).astype(np.float32), rtol=1e-3)
    assert emulate.emulate_softmax(np.arange(5)).dtype == np.float64
    assert emulate.emulate_softmax(np.zeros((2, 0))).shape == (2, 0)
    np.testing.assert_array_equal(emulate.emulate_softmax(np.zeros((2, 0)), kind="logsumexp"), [-INF, -INF])


# --------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------
specials = st.sampled_from([INF, -INF, NAN])


@st.composite
def score_rows(draw):
    """Rows of 1..3 x n scores: random magnitudes, ties, and a few +inf/-inf/NaN and -inf runs."""
    rows = draw(st.integers(1, 3))
    n = draw(st.one_of(st.integers(1, 80), st.sampled_from([63, 64, 65, 199, 200, 201, 399, 400, 401, 700])))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = draw(st.sampled_from([1.0, 40.0, 1e300]))
    x = rng.normal(size=(rows, n)) * scale
    if draw(st.booleans()):  # ties at the max and exact zeros
        x[:, :: draw(st.integers(2, 5))] = x.max()
        x[0, 0] = 0.0
    for r, i, v in draw(st.lists(st.tuples(st.integers(0, rows - 1), st.integers(0, n - 1), specials), max_size=4)):
        x[r, i] = v
    if draw(st.booleans()):  # a run of -inf (masked scores)
        r, i = draw(st.integers(0, rows - 1)), draw(st.integers(0, n - 1))
        x[r, i : i + draw(st.integers(1, n))] = -INF
    return x


temperatures = st.one_of(st.just(1.0), st.floats(0.05, 20.0), st.sampled_from([1e-300, 1e-9, 1e9, 1e300]))


@settings(max_examples=150, deadline=None)
@given(x=score_rows(), t=temperatures, threads=st.sampled_from([32, 64, 128]), aligned=st.booleans())
def test_emulation_matches_compute_softmax(x, t, threads, aligned):
    plan = small_plan(*x.shape, threads=threads, aligned=aligned)
    for kind in KINDS:
        assert_matches(run(x, kind, t, plan), reference(x, kind, t), kind)


# --------------------------------------------------------------------------
# fused attention
# --------------------------------------------------------------------------
def attention_reference(q, k, v, scale, causal):
    _, out = ref(compute.attention, q, k, v, scale=scale, causal=causal)
    s = ref(compute.attention_scores, q, k, scale=scale)
    if causal:
        s = np.where(compute.causal_mask(q.shape[-2], k.shape[-2]), s, -INF)
    return out, ref(compute.logsumexp, s)


@settings(max_examples=60, deadline=None)
@given(
    n_q=st.integers(1, 70),
    n_k=st.integers(1, 90),
    d=st.integers(1, 40),
    d_v=st.integers(1, 24),
    causal=st.booleans(),
    scale=st.one_of(st.none(), st.floats(0.01, 4.0)),
    tile=st.sampled_from([32, 8, 5]),
    seed=st.integers(0, 2**32 - 1),
)
def test_flash_attention_matches_compute_attention(n_q, n_k, d, d_v, causal, scale, tile, seed):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(2, n_q, d)) * 2
    k = rng.normal(size=(2, n_k, d)) * 2
    v = rng.normal(size=(2, n_k, d_v))
    out, lse = emulate.emulate_flash_attention(q, k, v, scale=scale, causal=causal, tile=tile)
    want_out, want_lse = attention_reference(q, k, v, scale, causal)
    assert out.shape == want_out.shape and lse.shape == want_lse.shape
    np.testing.assert_allclose(out, want_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(lse, want_lse, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("causal", [False, True])
def test_flash_attention_special_rows(causal):
    n_q, n_k, d = 20, 45, 4
    rng = np.random.default_rng(1)
    q = rng.normal(size=(n_q, d))
    k = rng.normal(size=(n_k, d))
    v = rng.normal(size=(n_k, 3))
    k[:, 0] = np.abs(k[:, 0]) + 2.0
    k[:, 1:] = 0.0  # every score is q[i, 0] * k[j, 0] * scale
    q[3] = [1e308, 0, 0, 0]  # q . k overflows to +inf for every key: the ties at +inf share the mass
    q[9] = [-1e308, 0, 0, 0]  # every score -inf: no key counts
    q[5] = np.nan  # a NaN query row stays NaN
    out, lse = emulate.emulate_flash_attention(q, k, v, causal=causal)
    want_out, want_lse = attention_reference(q, k, v, None, causal)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(want_out))
    np.testing.assert_allclose(out, want_out, rtol=1e-10, atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(lse, want_lse, rtol=1e-12, equal_nan=True)
    assert np.all(out[9] == 0) and lse[9] == -INF  # a row with no allowed key: zeros, lse -inf
    assert np.all(np.isnan(out[5])) and np.isnan(lse[5])
    assert lse[3] == INF and np.all(np.isfinite(out[3]))


def test_flash_attention_causal_skips_whole_tiles():
    """A causal block never reads tiles right of its last query: a NaN there does not reach it.

    (compute.attention, a plain ``weights @ v``, spreads a NaN in ``v`` to
    every row; the kernel only where a row's block loaded that key.)
    """
    n = 80
    rng = np.random.default_rng(2)
    q, k, v = (rng.normal(size=(n, 8)) for _ in range(3))
    v[70] = np.nan  # key 70 sits in tile 64..95; the block of queries 0..7 stops after tile 0
    out, _ = emulate.emulate_flash_attention(q, k, v, causal=True)
    # queries 64.. share a block with the tile holding key 70: 0 * NaN reaches them, as in compute.attention
    assert np.all(np.isfinite(out[:64])) and np.all(np.isnan(out[64:]))
    want_out, _ = attention_reference(q, k, v, None, True)
    assert np.all(np.isnan(want_out))  # compute.attention's plain matmul: 0 * NaN everywhere
    v[70] = 0.0
    want_out, _ = attention_reference(q, k, v, None, True)
    np.testing.assert_allclose(out[:64], want_out[:64], rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------
# the launcher's plumbing, with a NumPy stand-in for CuPy whose "kernels"
# are the emulation: argument order and types, grids, shared memory,
# alignment, axis and dtype handling of cupy_backend, without a GPU
# --------------------------------------------------------------------------
class _FakeArray(np.ndarray):
    @property
    def data(self):
        return types.SimpleNamespace(ptr=self.__array_interface__["data"][0])

    def get(self):
        return np.array(self)


def _fake_cupy(sm_count: int, smem_optin: int, launches: list):
    wrap = lambda a: np.asarray(a).view(_FakeArray)  # noqa: E731
    work = {"half_t": np.float16, "float": np.float32, "double": np.float64}
    kinds = ("softmax", "log_softmax", "logsumexp")

    class Kernel:
        def __init__(self, name):
            self.name = name
            self.max_dynamic_shared_size_bytes = 48 * 1024

        def __call__(self, grid, block, args, shared_mem=0):
            launches.append(self.name)
            assert shared_mem <= self.max_dynamic_shared_size_bytes <= smem_optin or shared_mem <= 48 * 1024
            kname, ctype, vec, per = re.match(r"(\w+)<(\w+), (\d+)(?:, (\d+))?>", self.name).groups()
            dt, vec = np.dtype(work[ctype]), int(vec)
            cdt = np.float64 if dt == np.float64 else np.float32
            assert args[0].dtype == dt and args[0].flags.c_contiguous
            if kname == "flash_attention":
                q, k, v, out, lse, batch, nq, nk, d, dv, sa, sb, causal = args
                assert type(sa) is cdt and type(sb) is cdt and lse.dtype == cdt and out.dtype == dt
                assert q.shape == (batch, nq, d) and k.shape == (batch, nk, d) and v.shape == (batch, nk, dv)
                plan = kernels.attention_plan(int(batch), int(nq), int(d), int(dv), dt)
                assert grid == plan.grid and block == (plan.threads,) and shared_mem == plan.smem
                out[...], lse[...] = emulate.emulate_flash_attention(q, k, v, scale=float(sa) * float(sb),
                                                                     causal=bool(causal))
                return
            if kname == "softmax_split_partial":
                x, pm, pd, rows, n, chunk, ta, tb = args
            elif kname == "softmax_split_finish":
                x, y, pm, pd, rows, n, chunk, splits, ta, tb, kind = args
            else:
                x, y, rows, n, ta, tb, kind = args
                assert y.dtype == dt and y.flags.c_contiguous
            for i in (rows, n):
                assert type(i) is np.int64
            assert type(ta) is cdt and type(tb) is cdt
            t = 1.0 / (float(ta) * float(tb))
            rows, n = int(rows), int(n)
            if vec > 1:
                assert n % vec == 0 and all(a.data.ptr % 16 == 0 for a in args[:2])
            name = dt.name
            if kname == "softmax_warp":
                assert grid == (-(-rows // 4),) and block == (128,) and n <= 32 * int(per) and (int(per) == 1 or n > 16 * int(per))
                plan = kernels.Plan("warp", rows, n, name, vec, 128, grid, per=int(per))
            elif kname in ("softmax_block", "softmax_stream"):
                path = kname.split("_")[1]
                assert grid == (rows,) and (path == "stream" or shared_mem >= n * dt.itemsize)
                plan = kernels.Plan(path, rows, n, name, vec, block[0], grid)
            else:
                plan = kernels.Plan("split", rows, n, name, vec, block[0], grid, splits=grid[0] if kname.endswith(
                    "partial") else int(splits), chunk=int(chunk))
            if kname == "softmax_split_partial":
                assert grid == (plan.splits, rows) and pm.dtype == cdt and pm.size == rows * plan.splits
                m, d = emulate.split_partials(np.asarray(x, dtype=cdt), plan, t)
                pm[...], pd[...] = m.reshape(-1), d.reshape(-1)
                return
            if kname == "softmax_split_finish":  # the partials come from kernel 1: check them
                assert grid == ((1 if kinds[int(kind)] == "logsumexp" else plan.splits), rows)
                m, d = emulate.split_partials(np.asarray(x, dtype=cdt), plan, t)
                np.testing.assert_array_equal(np.asarray(pm).reshape(rows, -1), m)
            y[...] = emulate.emulate_softmax(np.asarray(x), t, kinds[int(kind)], plan=plan).reshape(y.shape)

    class RawModule:
        def __init__(self, code, options=(), name_expressions=()):
            assert not re.search(r'^#include "softmax_common', code, re.M)
            self.names = list(name_expressions)

        def compile(self):
            pass

        def get_function(self, name):
            assert name in self.names, name
            return Kernel(name)

    class Device:
        id = 0
        attributes = {"MultiProcessorCount": sm_count, "MaxSharedMemoryPerBlockOptin": smem_optin}

    fake = types.ModuleType("cupy")
    fake.ndarray = _FakeArray
    fake.asarray = lambda a, dtype=None: a if isinstance(a, _FakeArray) else wrap(np.array(a, dtype=dtype))
    fake.ascontiguousarray = lambda a: wrap(np.ascontiguousarray(a))
    fake.moveaxis = lambda a, s, d: wrap(np.moveaxis(a, s, d))
    fake.empty = lambda shape, dtype=np.float64: wrap(np.empty(shape, dtype))
    fake.zeros = lambda shape, dtype=np.float64: wrap(np.zeros(shape, dtype))
    fake.full = lambda shape, v, dtype=np.float64: wrap(np.full(shape, v, dtype))
    fake.broadcast_to = lambda a, shape: wrap(np.broadcast_to(a, shape))
    fake.RawModule = RawModule
    fake.cuda = types.SimpleNamespace(Device=Device)
    return fake


@pytest.fixture
def fake_gpu(monkeypatch):
    """cupy_backend on the fake: 4 SMs, 17 KB of shared memory (so every path runs on small rows)."""
    from compute.backends import cupy_backend

    launches: list[str] = []
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(4, kernels.SMEM_RESERVE + 16 * 1024, launches))
    monkeypatch.setattr(cupy_backend, "_modules", {})
    monkeypatch.setattr(cupy_backend, "_limits", {})
    return cupy_backend, launches


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32])
def test_cupy_backend_plumbing(fake_gpu, dtype):
    cb, launches = fake_gpu
    rng = np.random.default_rng(3)
    cases = [((3, 5), -1), ((2, 1500, 3), 1), ((20, 5000), -1), ((9, 9000), -1), ((2, 1 << 14), -1), ((3, 4097), 0), ((7,), 0),
             ((), 0), ((2, 0), -1)]
    for shape, axis in cases:
        h = (rng.standard_normal(shape) * 3).astype(dtype)
        if h.ndim == 2 and h.size:
            h[0, 0] = INF if dtype != np.int32 else h[0, 0]
        tol = dict(rtol=2e-3, atol=1e-4) if dtype == np.float16 else dict(rtol=1e-5, atol=1e-6)
        for name in ("softmax", "log_softmax"):
            got = getattr(cb, name)(sys.modules["cupy"].asarray(h), axis=axis, temperature=0.7)
            want = ref(getattr(compute, name), h, axis=axis, temperature=0.7)
            assert type(got) is _FakeArray and got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got.get().astype(float), want.astype(float), **tol)
        got = cb.logsumexp(sys.modules["cupy"].asarray(h), axis=axis)
        want = ref(compute.logsumexp, h, axis=axis)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got.get().astype(float), want.astype(float), **tol)
    kinds = {n.split("<")[0] for n in launches}
    assert kinds == {"softmax_warp", "softmax_block", "softmax_stream", "softmax_split_partial", "softmax_split_finish"}
    with pytest.raises(ValueError, match="temperature"):
        cb.softmax(sys.modules["cupy"].asarray(np.ones(3)), temperature=0.0)


def test_cupy_backend_misaligned_rows_take_the_scalar_kernels(fake_gpu):
    cb, launches = fake_gpu
    cp = sys.modules["cupy"]
    buf = np.random.default_rng(4).standard_normal(64 * 200 + 1).astype(np.float32)
    x = cp.asarray(buf)[1:].reshape(64, 200)  # contiguous, 4 bytes off a 16-byte boundary
    assert x.data.ptr % 16 and x.flags.c_contiguous
    cb._run_rows(x, "softmax", 1.0)
    assert launches[-1] == "softmax_warp<float, 1, 8>"
    got = cb.softmax(cp.asarray(buf[1:].reshape(64, 200)))  # a fresh, aligned copy
    assert launches[-1] == "softmax_warp<float, 4, 8>"
    np.testing.assert_allclose(got.get(), compute.softmax(buf[1:].reshape(64, 200)), rtol=1e-6)


def test_cupy_backend_flash_attention(fake_gpu):
    cb, launches = fake_gpu
    cp = sys.modules["cupy"]
    rng = np.random.default_rng(5)
    q = rng.standard_normal((2, 1, 37, 20)).astype(np.float32)
    k = rng.standard_normal((1, 3, 45, 20)).astype(np.float32)  # leading axes broadcast
    v = rng.standard_normal((2, 3, 45, 9)).astype(np.float32)
    for causal in (False, True):
        out, lse = cb.flash_attention(cp.asarray(q), cp.asarray(k), cp.asarray(v), scale=0.4, causal=causal)
        _, want = compute.attention(q, k, v, scale=0.4, causal=causal)
        assert out.shape == want.shape == (2, 3, 37, 9) and lse.shape == (2, 3, 37)
        np.testing.assert_allclose(out.get(), want, rtol=1e-5, atol=1e-6)
    assert launches[-1] == "flash_attention<float, 1, 4>"
    with pytest.raises(cb.KernelError, match="128"):
        cb.flash_attention(*(cp.asarray(np.ones((1, 4, 129), np.float32)),) * 3)
    with pytest.raises(ValueError, match="same last dimension"):
        cb.flash_attention(cp.asarray(q), cp.asarray(k[..., :5]), cp.asarray(v))
    with pytest.raises(TypeError):
        cb.flash_attention(cp.asarray(q), cp.asarray(k), cp.asarray(v), causal=1)
    empty_out, empty_lse = cb.flash_attention(cp.asarray(q), cp.asarray(k[..., :0, :]), cp.asarray(v[..., :0, :]))
    assert np.all(empty_out.get() == 0) and np.all(empty_lse.get() == -INF)


def test_cupy_backend_without_a_device_raises_kernel_error(monkeypatch):
    from compute.backends import cupy_backend

    broken = types.ModuleType("cupy")

    def no_device(*a, **k):
        raise RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected\nmore detail")

    broken.ndarray = _FakeArray
    broken.asarray = no_device
    broken.cuda = types.SimpleNamespace(Device=no_device)
    monkeypatch.setitem(sys.modules, "cupy", broken)
    monkeypatch.setattr(cupy_backend, "_limits", {})
    with pytest.raises(cupy_backend.KernelError, match="no CUDA-capable device") as info:
        cupy_backend.softmax(np.ones(3))
    assert "\n" not in str(info.value)
    with pytest.raises(cupy_backend.KernelError):
        cupy_backend.device_limits()
    monkeypatch.setitem(sys.modules, "cupy", None)  # not installed
    with pytest.raises(cupy_backend.KernelError, match="CuPy is not available"):
        cupy_backend.logsumexp(np.ones(3))
