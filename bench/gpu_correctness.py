"""Correctness of every CUDA kernel against float64 NumPy, on a machine with an NVIDIA GPU.

Run from the repository root (bench/gpu_check.sh calls it)::

    python bench/gpu_correctness.py --out bench/results/gpu_correctness.json

Checks, for float16, float32 and float64 and shapes chosen so that every
path of the launch plan runs (warp, block, stream, split; 16-byte packets
and scalar, aligned and misaligned):

* softmax, log_softmax and logsumexp at several temperatures against
  compute.softmax & co. run in float64 on the same input values: max
  relative error <= 1e-5 (float32), <= 1e-3 (float16), <= 1e-12 (float64),
  relative to max(|reference|, the dtype's smallest normal) (log_softmax:
  to max(|reference|, 1));
* softmax rows sum to 1 (within the same bounds, 2e-3 for float16);
* rows with +inf, -inf, NaN and all -inf give exactly compute.softmax's
  special values (NaN, inf and exact-zero patterns);
* any axis, integer input (float64), a 0-d input and empty rows;
* flash_attention against compute.attention in float64 (output relative to
  the largest |output|; lse against compute.logsumexp of the scaled, masked
  scores), causal and not, d up to 128, n_q != n_k, and KernelError beyond
  d = 128.

Prints one JSON document (every check with its error and bound) and writes
it to ``--out``; exits 0 when all pass, 1 when any fails, 2 when CuPy is
missing or no device answers.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
import traceback
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import numpy as np  # noqa: E402

import compute  # noqa: E402

TOL = {"float16": 1e-3, "float32": 1e-5, "float64": 1e-12}
SUM_TOL = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-12}

# (rows, n): warp (n <= 1024), block (row in shared memory), stream, split (few long rows)
SHAPES = [(37, 1), (1000, 7), (513, 33), (300, 1000), (64, 1024), (64, 1025), (300, 4096), (120, 4097),
          (64, 32768), (300, 70000), (300, 150001), (1, 1 << 20), (8, 1 << 20), (3, 999_983)]
TEMPERATURES = [1.0, 0.5, 3.0]


def _fail(msg: str) -> None:
    print(f"gpu_correctness: {msg}", file=sys.stderr)
    raise SystemExit(2)


class Checks:
    def __init__(self) -> None:
        self.rows: list[dict] = []

    def add(self, name: str, ok: bool, **info) -> None:
        row = {"check": name, "ok": bool(ok), **{k: _jsonable(v) for k, v in info.items()}}
        self.rows.append(row)
        if not ok:
            print("FAIL " + json.dumps(row), file=sys.stderr, flush=True)

    def run(self, name: str, fn) -> None:
        """Run one group; an exception is a failed check, never the end of the run."""
        try:
            fn()
        except Exception as exc:
            self.add(name, False, error=f"{type(exc).__name__}: {exc}", trace=traceback.format_exc(limit=3))


def _jsonable(v):
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, float) and not np.isfinite(v):
        return str(v)
    return v


def _rel_err(got: np.ndarray, want: np.ndarray, floor: float) -> float:
    """Max |got - want| / max(|want|, floor) over the entries where both are finite."""
    both = np.isfinite(got) & np.isfinite(want)
    if not both.any():
        return 0.0
    g, w = got[both].astype(np.float64), want[both].astype(np.float64)
    return float(np.max(np.abs(g - w) / np.maximum(np.abs(w), floor)))


def _same_specials(got: np.ndarray, want: np.ndarray) -> bool:
    return (
        np.array_equal(np.isnan(got), np.isnan(want))
        and np.array_equal(np.isposinf(got), np.isposinf(want))
        and np.array_equal(np.isneginf(got), np.isneginf(want))
    )


def check_rows(cupy, cb, kernels, checks: Checks, quick: bool) -> None:
    sm_count, smem = cb.device_limits()
    rng = np.random.default_rng(0)
    shapes = SHAPES[::2] if quick else SHAPES
    for dtype in ("float32", "float16", "float64"):
        tol, tiny = TOL[dtype], float(np.finfo(dtype).tiny)
        for rows, n in shapes:
            host = (rng.standard_normal((rows, n)) * 4).astype(dtype)
            ref_in = host.astype(np.float64)
            for misaligned in (False, True):
                if misaligned and rows * n > 1 << 22:
                    continue
                if misaligned:  # same values, one element off a 16-byte boundary
                    buf = cupy.empty(rows * n + 1, dtype=dtype)
                    x = buf[1:].reshape(rows, n)
                    x[...] = cupy.asarray(host)
                else:
                    x = cupy.asarray(host)
                plan = kernels.launch_plan(rows, n, dtype, aligned=x.data.ptr % 16 == 0, sm_count=sm_count,
                                           smem_limit=smem)
                where = {"dtype": dtype, "rows": rows, "n": n, "path": plan.path, "vec": plan.vec,
                         "splits": plan.splits}
                temps = TEMPERATURES if rows * n <= 1 << 22 and not misaligned else TEMPERATURES[1:2]
                for t in temps:
                    p = cb.softmax(x, temperature=t).get()
                    want = compute.softmax(ref_in, temperature=t)
                    err = _rel_err(p, want, tiny)
                    checks.add("softmax", p.dtype == dtype and err <= tol, err=err, bound=tol, T=t, **where)
                    s = np.abs(p.astype(np.float64).sum(axis=-1) - 1).max()
                    checks.add("softmax rows sum to 1", s <= SUM_TOL[dtype] * max(1, n / 1e6), err=s,
                               bound=SUM_TOL[dtype], T=t, **where)
                    lp = cb.log_softmax(x, temperature=t).get()
                    want = compute.log_softmax(ref_in, temperature=t)
                    err = _rel_err(lp, want, 1.0)
                    checks.add("log_softmax", lp.dtype == dtype and err <= tol, err=err, bound=tol, T=t, **where)
                lse = cb.logsumexp(x).get()
                want = compute.logsumexp(ref_in)
                err = _rel_err(lse, want, tiny)
                checks.add("logsumexp", lse.shape == (rows,) and err <= tol, err=err, bound=tol, **where)


def check_specials(cupy, cb, checks: Checks) -> None:
    inf, nan = np.inf, np.nan
    for dtype in ("float32", "float16", "float64"):
        for n in (5, 1000, 3000, 100_000, 1 << 20):
            rows = [np.zeros(n) for _ in range(6)]
            rows[0][[1, n - 1]] = inf  # two +inf share the mass
            rows[1][:] = -inf  # all -inf: NaN
            rows[2][n // 2] = nan  # NaN anywhere: NaN row
            rows[3][::2] = -inf  # -inf entries: exactly 0
            rows[4][0], rows[4][-1] = inf, nan  # NaN and +inf: NaN
            rows[5][:] = np.linspace(-3e4, 3e4, n)  # beyond float16's exp range
            host = np.stack(rows).astype(dtype)
            # a few copies, so that the row count does not select a split path only
            for reps in (1, 50):
                xh = np.tile(host, (reps, 1))
                x = cupy.asarray(xh)
                for name, fn, ref in (
                    ("softmax", cb.softmax, compute.softmax),
                    ("log_softmax", cb.log_softmax, compute.log_softmax),
                    ("logsumexp", cb.logsumexp, compute.logsumexp),
                ):
                    got = fn(x).get()
                    want = ref(xh)
                    ok = _same_specials(got, want) and _rel_err(got, want, 1.0) <= TOL[dtype]
                    if name == "softmax":  # -inf scores get exactly 0 (where the row is not NaN)
                        minus = np.isneginf(xh) & ~np.isnan(want)
                        ok = ok and bool(np.all(got[minus] == 0))
                    checks.add(f"special values: {name}", ok, dtype=dtype, n=n, rows=xh.shape[0])


def check_api(cupy, cb, checks: Checks) -> None:
    rng = np.random.default_rng(1)
    h = rng.standard_normal((3, 700, 5)).astype(np.float32)
    x = cupy.asarray(h)
    for axis in (0, 1, 2, -1):
        got = cb.softmax(x, axis=axis, temperature=0.8).get()
        err = _rel_err(got, compute.softmax(h.astype(np.float64), axis=axis, temperature=0.8), 1e-30)
        checks.add("softmax any axis", got.shape == h.shape and err <= 1e-5, axis=axis, err=err)
        lse = cb.logsumexp(x, axis=axis).get()
        want = compute.logsumexp(h.astype(np.float64), axis=axis)
        checks.add("logsumexp any axis", lse.shape == want.shape and _rel_err(lse, want, 1.0) <= 1e-5, axis=axis)
    ints = cupy.arange(12).reshape(3, 4)
    got = cb.softmax(ints)
    checks.add("int input gives float64", got.dtype == np.float64 and np.allclose(got.get(), compute.softmax(np.arange(12).reshape(3, 4))))
    zero_d = cb.softmax(cupy.asarray(np.float32(3.0)))
    checks.add("0-d input", zero_d.shape == () and float(zero_d) == 1.0)
    empty = cb.logsumexp(cupy.zeros((4, 0), np.float32))
    checks.add("empty rows", empty.shape == (4,) and bool(cupy.all(empty == -np.inf)))
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        try:
            cb.softmax(x, temperature=bad)
            checks.add("bad temperature refused", False, T=str(bad))
        except ValueError:
            checks.add("bad temperature refused", True, T=str(bad))
    for t in (1e-50, 1e50):  # float32 temperatures outside float32's normal range
        got = cb.softmax(x, temperature=t).get()
        want = compute.softmax(h, temperature=t)
        ok = _same_specials(got, want) and _rel_err(got, want, 1e-30) <= 1e-5
        checks.add("extreme temperature (float32)", ok, T=t)


def check_attention(cupy, cb, checks: Checks, quick: bool) -> None:
    rng = np.random.default_rng(2)
    cases = [((2, 3), 200, 200, 64, 64), ((4,), 130, 257, 128, 128), ((1,), 1, 70, 16, 40),
             ((2,), 333, 333, 100, 100), ((8,), 1024, 1024, 64, 64), ((1,), 40, 41, 1, 1)]
    if quick:
        cases = cases[:3]
    for dtype in ("float32", "float16", "float64"):
        tol = TOL[dtype]
        for lead, n_q, n_k, d, d_v in cases:
            q = rng.standard_normal(lead + (n_q, d)).astype(dtype)
            k = rng.standard_normal(lead + (n_k, d)).astype(dtype)
            v = rng.standard_normal(lead + (n_k, d_v)).astype(dtype)
            q64, k64, v64 = (a.astype(np.float64) for a in (q, k, v))
            for causal in (False, True):
                for scale in (None, 0.3):
                    out, lse = cb.flash_attention(cupy.asarray(q), cupy.asarray(k), cupy.asarray(v),
                                                  scale=scale, causal=causal)
                    out, lse = out.get(), lse.get()
                    _, want = compute.attention(q64, k64, v64, scale=scale, causal=causal)
                    err = float(np.abs(out.astype(np.float64) - want).max() / np.abs(want).max())
                    s = compute.attention_scores(q64, k64, scale=scale)
                    if causal:
                        s = np.where(compute.causal_mask(n_q, n_k), s, -np.inf)
                    want_lse = compute.logsumexp(s)
                    lse_err = _rel_err(lse, want_lse, 1.0)
                    ok = out.dtype == dtype and out.shape == want.shape and err <= tol and lse_err <= tol
                    checks.add("flash_attention", ok, dtype=dtype, shape=[*lead, n_q, n_k, d, d_v], causal=causal,
                               scale=scale, err=err, lse_err=lse_err, bound=tol)
    # a fully masked row (every score overflows to -inf): output 0, lse -inf
    q = np.zeros((1, 4, 2), np.float32)
    k = np.ones((1, 5, 2), np.float32) * 2
    q[0, 1, 0] = -3e38
    out, lse = cb.flash_attention(cupy.asarray(q), cupy.asarray(k), cupy.asarray(k))
    out, lse = out.get(), lse.get()
    checks.add("flash_attention fully masked row", bool(np.all(out[0, 1] == 0) and lse[0, 1] == -np.inf))
    try:
        cb.flash_attention(*(cupy.ones((1, 8, 129), np.float32),) * 3)
        checks.add("flash_attention refuses d > 128", False)
    except cb.KernelError:
        checks.add("flash_attention refuses d > 128", True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="half the shapes (a smoke test)")
    ap.add_argument("--out", type=Path, help="also write the JSON here")
    args = ap.parse_args(argv)
    try:
        import cupy
    except Exception as exc:
        _fail(f"CuPy is not available ({type(exc).__name__}: {exc}); pip install -e '.[gpu]'")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            _fail("no CUDA device answers (device count is 0)")
        props = cupy.cuda.runtime.getDeviceProperties(0)
    except SystemExit:
        raise
    except Exception as exc:
        _fail(f"no CUDA device answers ({type(exc).__name__}: {str(exc).splitlines()[0]})")
    from compute.backends import cupy_backend as cb
    from compute.backends import kernels

    checks = Checks()
    checks.run("rows", lambda: check_rows(cupy, cb, kernels, checks, args.quick))
    checks.run("special values", lambda: check_specials(cupy, cb, checks))
    checks.run("api", lambda: check_api(cupy, cb, checks))
    checks.run("attention", lambda: check_attention(cupy, cb, checks, args.quick))
    failed = [c for c in checks.rows if not c["ok"]]
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    doc = {
        "benchmark": "gpu_correctness",
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "device": name,
        "compute_capability": f"{props['major']}.{props['minor']}",
        "cupy": cupy.__version__,
        "checks": len(checks.rows),
        "failed": len(failed),
        "results": checks.rows,
    }
    text = json.dumps(doc, indent=1)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    print(f"gpu_correctness: {len(checks.rows) - len(failed)} of {len(checks.rows)} checks pass", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
