"""CPU softmax throughput: compute.softmax beside scipy.special.softmax and torch.

Run from the repository root::

    python bench/cpu_softmax.py                      # all cases, JSON to stdout
    python bench/cpu_softmax.py --out bench.json     # ... and to a file
    python bench/cpu_softmax.py --repeats 7 --quick  # a quick look

Every implementation gets the very same input array in one run, along the
last axis, at temperature 1:

* ``compute``: :func:`compute.softmax` / :func:`compute.log_softmax` with the
  NumPy backend (the CuPy backend is switched off for the run), on its
  default thread count (``compute_threads`` in the JSON: every core);
* ``compute_1t``: the same on one thread (``compute._pool.threads(1)``);
* ``scipy``: ``scipy.special.softmax`` / ``log_softmax`` (one thread);
* ``torch_1t`` and ``torch_<n>t``: ``torch.softmax`` / ``log_softmax`` on the
  CPU, on a tensor sharing the array's memory, after
  ``torch.set_num_threads(1)`` and ``(n)``, ``n`` being compute's thread
  count, when torch is installed (with ``OMP_WAIT_POLICY=PASSIVE`` unless
  the environment sets it: otherwise its OpenMP threads keep spinning after
  each call, and on a 2-core machine they slowed the next timed call of
  compute up to 2.5-fold, even 0.3 s later).

Cases (float32, and each again in float64): one that fits in the L2 cache
(64 x 1024), the large memory-bound one (4096 x 8192: 128 MiB in float32),
vocabulary rows (64 x 32000), attention rows (16384 x 128) and an LM head
(8 x 200000).  Each implementation is called ``--warmup`` times, then timed
``--repeats`` times (more for the small cases; the implementations take turns
within each round, so a drifting clock or a neighbour's load hits all alike);
the median is reported.  Every call allocates its output, as real use does.

Throughput is ``2 * bytes / time`` (the input read once and the output
written once: what an ideal implementation moves), in GB/s (1e9 bytes).
``ratio_vs_scipy`` is SciPy's median time over the implementation's, so
above 1 is faster than SciPy.  ``ratio_vs_torch`` compares compute with torch
on the same number of threads (``"1"``: ``compute_1t`` against ``torch_1t``;
``"<n>"``: ``compute`` against ``torch_<n>t``), above 1 again meaning compute
is faster.  Each result is also checked against SciPy's (``max_abs_diff``),
and compute's threaded result against its one-thread result
(``threads_bit_for_bit``), so a fast wrong answer would show.  The load
average (``os.getloadavg()``) is recorded before and after every case: on a
shared machine compare ratios within a run, not absolute figures.

Prints one JSON document.  Nothing is asserted: it only measures.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.special as sps  # noqa: E402

import compute  # noqa: E402
from compute import backends  # noqa: E402

try:  # the thread pool (absent before it was written: then one thread throughout)
    from compute import _pool
except ImportError:  # pragma: no cover - only when benchmarking an older tree
    _pool = None

SHAPES = [
    # (name, rows, cols, repeats multiplier)
    ("fits_in_cache", 64, 1024, 20),
    ("large", 4096, 8192, 1),
    ("vocabulary_rows", 64, 32000, 5),
    ("attention_rows", 16384, 128, 1),
    ("lm_head", 8, 200000, 5),
]
CASES = [(name, r, c, dtype, mult) for dtype in ("float32", "float64") for name, r, c, mult in SHAPES]
QUICK_CASES = [("fits_in_cache", 64, 1024, "float32", 20), ("large", 1024, 8192, "float32", 1)]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _load() -> list[float]:
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:  # pragma: no cover - not on every platform
        return []


def _compute_threads() -> int:
    return 1 if _pool is None else _pool.max_threads()


def _one_thread():
    return contextlib.nullcontext() if _pool is None else _pool.threads(1)


def _implementations(function: str):
    """``{name: (setup, fn)}``; ``setup`` runs untimed before each timed call."""
    cfn = getattr(compute, function)
    sfn = sps.softmax if function == "softmax" else sps.log_softmax

    def compute_1t(x):
        with _one_thread():
            return cfn(x)

    impls = {
        "compute": (None, cfn),
        "compute_1t": (None, compute_1t),
        "scipy": (None, lambda x: sfn(x, axis=-1)),
    }
    try:
        import torch
    except ImportError:
        return impls, None
    tfn = torch.softmax if function == "softmax" else torch.log_softmax
    for n in sorted({1, _compute_threads()}):
        impls[f"torch_{n}t"] = (lambda n=n: torch.set_num_threads(n),
                                lambda x: tfn(torch.from_numpy(x), dim=-1).numpy())
    return impls, torch


def _run_case(function, rows, cols, dtype, repeats, warmup, seed):
    x = (np.random.default_rng(seed).standard_normal((rows, cols)) * 4).astype(dtype)
    nbytes = x.nbytes
    impls, torch = _implementations(function)
    load_before = _load()
    reference = impls["scipy"][1](x)
    results = {}
    outputs = {}
    for name, (setup, fn) in impls.items():
        if setup is not None:
            setup()
        out = fn(x)
        with np.errstate(all="ignore"):
            diff = np.abs(out.astype(np.float64) - reference.astype(np.float64))
        results[name] = {"max_abs_diff": float(np.nanmax(diff))}
        if name.startswith("compute"):
            outputs[name] = out
        del out
        for _ in range(warmup - 1):
            fn(x)
    same_bits = bool(np.array_equal(outputs["compute"], outputs["compute_1t"], equal_nan=True))
    del outputs
    times = {name: [] for name in impls}
    order = list(impls)
    for r in range(repeats):
        for name in order[r % len(order):] + order[: r % len(order)]:  # each goes first in turn
            setup, fn = impls[name]
            if setup is not None:
                setup()
            start = time.perf_counter()
            fn(x)
            times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(t) for name, t in times.items()}
    for name in impls:
        results[name].update(
            median_s=medians[name],
            min_s=min(times[name]),
            throughput_gb_s=2 * nbytes / medians[name] / 1e9,
            ratio_vs_scipy=medians["scipy"] / medians[name],
        )
    n = _compute_threads()
    vs_torch = {}
    if torch is not None:
        vs_torch["1"] = medians["torch_1t"] / medians["compute_1t"]
        vs_torch[str(n)] = medians[f"torch_{n}t"] / medians["compute"]
    return {
        "function": function,
        "shape": [rows, cols],
        "dtype": dtype,
        "bytes": nbytes,
        "repeats": repeats,
        "ratio_vs_scipy": results["compute"]["ratio_vs_scipy"],
        "ratio_vs_scipy_1t": results["compute_1t"]["ratio_vs_scipy"],
        "ratio_vs_torch": vs_torch,
        "threads_bit_for_bit": same_bits,
        "load_before": load_before,
        "load_after": _load(),
        "results": results,
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=9,
                        help="timed calls per implementation (large cases; at least 7)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed calls first")
    parser.add_argument("--functions", default="softmax,log_softmax", help="comma-separated: softmax, log_softmax")
    parser.add_argument("--dtypes", default="float32,float64", help="comma-separated: float32, float64")
    parser.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    parser.add_argument("--quick", action="store_true", help="two small float32 cases only")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args(argv)
    functions = [f.strip() for f in args.functions.split(",") if f.strip()]
    for f in functions:
        if f not in ("softmax", "log_softmax"):
            parser.error(f"unknown function {f!r}")
    dtypes = {d.strip() for d in args.dtypes.split(",") if d.strip()}
    names = {c.strip() for c in args.cases.split(",") if c.strip()}
    cases = [c for c in (QUICK_CASES if args.quick else CASES)
             if c[3] in dtypes and (not names or c[0] in names)]
    backends.set_backend("numpy")
    # torch's OpenMP threads otherwise spin for a long while after each call
    # and, on a small machine, take a core from whatever is timed next (set
    # OMP_WAIT_POLICY=ACTIVE to time torch as it runs by default)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    _, torch = _implementations("softmax")
    report = {
        "benchmark": "cpu_softmax",
        "command": " ".join(["python", "bench/cpu_softmax.py", *(argv if argv is not None else sys.argv[1:])]),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpu": _cpu_model(),
            "logical_cpus": os.cpu_count(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "torch": None if torch is None else torch.__version__,
            "compute_threads": _compute_threads(),
        },
        "load_average_start": _load(),
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
        "throughput": "2 * input bytes / median time, GB/s (1e9)",
        "ratios": "ratio_vs_scipy: SciPy's median time / compute's; ratio_vs_torch[n]: torch's on n threads"
                  " / compute's on n threads; above 1 is compute faster",
        "cases": [],
    }
    for function in functions:
        for i, (name, rows, cols, dtype, mult) in enumerate(cases):
            case = _run_case(function, rows, cols, dtype, max(7, args.repeats) * mult, max(1, args.warmup), seed=i)
            case["case"] = name
            report["cases"].append(case)
    report["load_average_end"] = _load()
    report["summary"] = [
        {"function": c["function"], "case": c["case"], "shape": c["shape"], "dtype": c["dtype"],
         "vs_scipy": round(c["ratio_vs_scipy"], 2), "vs_scipy_1t": round(c["ratio_vs_scipy_1t"], 2),
         "vs_torch": {k: round(v, 2) for k, v in c["ratio_vs_torch"].items()},
         "load": c["load_after"][:1]}
        for c in report["cases"]
    ]
    text = json.dumps(report, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return report


if __name__ == "__main__":
    main()
