"""GPU softmax bandwidth: the project's kernels beside a copy, CuPy, a three-pass kernel and torch.

Run from the repository root on a machine with an NVIDIA GPU::

    python bench/gpu_softmax.py --out bench/results/gpu_softmax.json
    python bench/gpu_softmax.py --repeat 20 --dtypes float32 --sizes 1024,32768

For every shape (N in 128 .. 151936 with M = 64Mi / N rows, plus M = 1 and
M = 8 at N = 1Mi) and dtype (float32, float16, float64) it times, with CUDA
events, the median of ``--repeat`` (>= 20) runs after ``--warmup`` runs,
flushing L2 (writing a buffer of twice its size) before every run:

* ``copy``: a device-to-device copy of the same bytes (the ceiling: softmax
  must read and write every element at least once);
* ``softmax_lab``: :func:`compute.backends.cupy_backend.softmax` (the path
  its launch plan chose is recorded);
* ``cupyx``: ``cupyx.scipy.special.softmax``;
* ``three_pass``: a plain kernel, one block per row, three passes over
  global memory (max, sum of exp, write);
* ``torch``: ``torch.softmax`` on the same memory (DLPack), when torch with
  CUDA is installed.

Effective bandwidth is ``2 * M * N * itemsize / time``.  Prints one JSON
document and writes it to ``--out`` when given.  Nothing is asserted; the
issue's targets are evaluated in the ``targets`` section.  Exits with
status 2 and a one-line message when CuPy is missing or no device answers.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import statistics
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import numpy as np  # noqa: E402

SIZES = [128, 256, 512, 1000, 1024, 1025, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 1048576,
         50257, 151936]
TOTAL = 64 * 1024 * 1024  # elements per shape: M = TOTAL // N
EXTRA_ROWS = [(1, 1048576), (8, 1048576)]  # (M, N): split rows
DTYPES = ["float32", "float16", "float64"]

THREE_PASS = r"""
template <typename T>
__global__ void three_pass(const T* __restrict__ x, T* __restrict__ y, long long n) {
    typedef typename Traits<T>::C C;
    __shared__ C red[32];
    const T* xr = x + (long long)blockIdx.x * n;
    T* yr = y + (long long)blockIdx.x * n;
    C m = neg_inf<C>();
    for (long long i = threadIdx.x; i < n; i += blockDim.x) m = nmax(m, to_c(xr[i]));
    m = block_max(m, red);
    C d = C(0);
    for (long long i = threadIdx.x; i < n; i += blockDim.x) d += sl_exp(to_c(xr[i]) - m);
    d = block_sum(d, red);
    for (long long i = threadIdx.x; i < n; i += blockDim.x) yr[i] = from_c<T>(sl_exp(to_c(xr[i]) - m) / d);
}
"""
_CT = {"float16": "half_t", "float32": "float", "float64": "double"}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=20, help="timed runs per case, median reported (>= 20; default 20)")
    p.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    p.add_argument("--dtypes", default=",".join(DTYPES), help="comma-separated subset of float32,float16,float64")
    p.add_argument("--sizes", default="", help="comma-separated subset of the row lengths N (default: all)")
    p.add_argument("--no-extra", action="store_true", help="skip the M = 1 and M = 8 rows at N = 1Mi")
    p.add_argument("--methods", default="copy,softmax_lab,cupyx,three_pass,torch",
                   help="comma-separated subset of copy,softmax_lab,cupyx,three_pass,torch")
    p.add_argument("--out", type=Path, help="also write the JSON here")
    args = p.parse_args(argv)
    if args.repeat < 20:
        p.error("--repeat must be at least 20 (the median of at least 20 runs)")
    for d in args.dtypes.split(","):
        if d not in DTYPES:
            p.error(f"unknown dtype {d!r}")
    return args


def _fail(msg: str) -> None:
    print(f"gpu_softmax: {msg}", file=sys.stderr)
    raise SystemExit(2)


def _device():
    try:
        import cupy
    except Exception as exc:
        _fail(f"CuPy is not available ({type(exc).__name__}: {exc}); pip install -e '.[gpu]'")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            _fail("no CUDA device answers (device count is 0)")
        dev = cupy.cuda.Device(0)
        dev.use()
        props = cupy.cuda.runtime.getDeviceProperties(dev.id)
    except SystemExit:
        raise
    except Exception as exc:
        _fail(f"no CUDA device answers ({type(exc).__name__}: {str(exc).splitlines()[0]})")
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    return cupy, dev, props, name


def _torch():
    try:
        import torch
    except Exception:
        return None
    return torch if torch.cuda.is_available() else None


def main(argv=None) -> int:
    args = parse_args(argv)
    cupy, dev, props, name = _device()
    import cupyx.scipy.special

    from compute.backends import cupy_backend, kernels

    torch = _torch() if "torch" in args.methods else None
    methods = [m for m in args.methods.split(",") if m != "torch" or torch is not None]
    sizes = [int(s) for s in args.sizes.split(",") if s] or SIZES
    shapes = [(TOTAL // n, n) for n in sizes]
    if not args.no_extra and not args.sizes:
        shapes += EXTRA_ROWS
    l2 = int(props.get("l2CacheSize", 64 << 20))
    flush = cupy.empty(max(2 * l2, 1 << 20) // 4, dtype=np.int32)

    three = cupy.RawModule(
        code=kernels.kernel_source("softmax.cu", raw='#include "softmax_common.cuh"\n' + THREE_PASS),
        options=("-std=c++17",),
        name_expressions=[f"three_pass<{c}>" for c in _CT.values()],
    )
    sm_count, smem = cupy_backend.device_limits()
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()

    def timed(fn) -> float:
        for _ in range(args.warmup):
            fn()
        times = []
        for _ in range(args.repeat):
            flush.fill(0)
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, stop))
        return statistics.median(times)

    results = []
    for dtype in args.dtypes.split(","):
        for m_rows, n in shapes:
            x = (cupy.random.standard_normal((m_rows, n), dtype=np.float32) * 3).astype(dtype)
            y = cupy.empty_like(x)
            nbytes = 2 * x.size * x.dtype.itemsize
            fns = {
                "copy": lambda x=x, y=y: cupy.copyto(y, x),
                "softmax_lab": lambda x=x: cupy_backend.softmax(x),
                "cupyx": lambda x=x: cupyx.scipy.special.softmax(x, axis=-1),
            }
            tp = three.get_function(f"three_pass<{_CT[dtype]}>")
            fns["three_pass"] = lambda x=x, y=y, tp=tp, m_rows=m_rows, n=n: tp((m_rows,), (256,), (x, y, np.int64(n)))
            if torch is not None:
                tx = torch.from_dlpack(x)
                fns["torch"] = lambda tx=tx: torch.softmax(tx, dim=-1)
            plan = kernels.launch_plan(m_rows, n, dtype, aligned=x.data.ptr % 16 == 0, sm_count=sm_count,
                                       smem_limit=smem)
            row = {"dtype": dtype, "M": m_rows, "N": n, "bytes": nbytes, "path": plan.path, "splits": plan.splits}
            for meth in methods:
                try:
                    ms = timed(fns[meth])
                    row[meth] = {"median_ms": round(ms, 5), "GBps": round(nbytes / ms / 1e6, 1)}
                except Exception as exc:  # one failing method never loses the others' numbers
                    row[meth] = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}
            copy = row.get("copy", {}).get("GBps")
            for meth in methods:
                if meth != "copy" and copy and "GBps" in row[meth]:
                    row[meth]["of_copy"] = round(row[meth]["GBps"] / copy, 3)
            results.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
            del x, y
            cupy.get_default_memory_pool().free_all_blocks()

    doc = {
        "benchmark": "gpu_softmax",
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "device": name,
        "compute_capability": f"{props['major']}.{props['minor']}",
        "sm_count": sm_count,
        "l2_bytes": l2,
        "smem_optin_bytes": smem,
        "cupy": cupy.__version__,
        "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion(),
        "torch": None if torch is None else torch.__version__,
        "repeat": args.repeat,
        "warmup": args.warmup,
        "bandwidth": "2 * M * N * itemsize / median time",
        "results": results,
        "targets": evaluate_targets(results),
    }
    text = json.dumps(doc, indent=2)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    return 0


def evaluate_targets(results: list[dict]) -> list[dict]:
    """The issue's targets, per row: the fraction of the copy reached, and torch beaten or not."""
    out = []
    for r in results:
        ours = r.get("softmax_lab", {}).get("of_copy")
        if ours is None:
            continue
        n, m, dt = r["N"], r["M"], r["dtype"]
        if m <= 8 and n >= 1 << 20:
            goal = 0.5
        elif 1024 <= n <= 32768 and dt in ("float32", "float16"):
            goal = 0.9
        elif 128 <= n <= 512:
            goal = 0.8
        elif n >= 262144:
            goal = 0.67
        else:
            continue
        entry = {"dtype": dt, "M": m, "N": n, "of_copy": ours, "goal": goal, "met": ours >= goal}
        torch_ms = r.get("torch", {}).get("median_ms")
        if torch_ms is not None and 1024 <= n <= 32768:
            entry["not_slower_than_torch"] = r["softmax_lab"]["median_ms"] <= torch_ms
        out.append(entry)
    return out


if __name__ == "__main__":
    raise SystemExit(main())
