"""CPU softmax throughput: compute.softmax beside scipy.special.softmax (and torch).

Run from the repository root::

    python bench/cpu_softmax.py                      # all cases, JSON to stdout
    python bench/cpu_softmax.py --out bench.json     # ... and to a file
    python bench/cpu_softmax.py --repeats 5 --quick  # a quick look

Every implementation gets the very same input array in one run, along the
last axis, at temperature 1:

* ``compute``: :func:`compute.softmax` / :func:`compute.log_softmax` with the
  NumPy backend (the CuPy backend is switched off for the run);
* ``scipy``: ``scipy.special.softmax`` / ``log_softmax``;
* ``torch``: ``torch.softmax`` / ``log_softmax`` on the CPU, on a tensor
  sharing the array's memory, when torch is installed (it uses
  ``torch.get_num_threads()`` threads; NumPy and SciPy use one).

Cases: one that fits in the L2 cache (64 x 1024 float32, 256 KiB) and two
that do not (4096 x 8192 float32, 128 MiB, and float64, 256 MiB).  Each
implementation is called ``--warmup`` times, then timed ``--repeats`` times
(the implementations take turns within each round, so drifting clocks hit
all alike); the median is reported.  Every call allocates its output, as
real use does.

Throughput is ``2 * bytes / time`` (the input read once and the output
written once: what an ideal implementation moves), in GB/s (1e9 bytes).
``ratio_vs_scipy`` is scipy's median time over the implementation's, so
above 1 is faster than SciPy.  Each result is also checked against SciPy's
(``max_abs_diff``), so a fast wrong answer would show.

Prints one JSON document.  Nothing is asserted: it only measures.
"""

from __future__ import annotations

import argparse
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

CASES = [
    # (name, rows, cols, dtype, repeats multiplier)
    ("fits_in_cache", 64, 1024, "float32", 20),
    ("large", 4096, 8192, "float32", 1),
    ("large", 4096, 8192, "float64", 1),
]
QUICK_CASES = [("fits_in_cache", 64, 1024, "float32", 20), ("large", 1024, 8192, "float32", 1)]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _implementations(function: str):
    impls = {
        "compute": getattr(compute, function),
        "scipy": (lambda x: sps.softmax(x, axis=-1)) if function == "softmax" else (
            lambda x: sps.log_softmax(x, axis=-1)),
    }
    try:
        import torch
    except ImportError:
        return impls, None
    fn = torch.softmax if function == "softmax" else torch.log_softmax
    impls["torch"] = lambda x: fn(torch.from_numpy(x), dim=-1).numpy()
    return impls, torch


def _run_case(function, rows, cols, dtype, repeats, warmup, seed):
    x = (np.random.default_rng(seed).standard_normal((rows, cols)) * 4).astype(dtype)
    nbytes = x.nbytes
    impls, _ = _implementations(function)
    reference = impls["scipy"](x)
    results = {}
    for name, fn in impls.items():
        out = fn(x)
        with np.errstate(all="ignore"):
            diff = np.abs(out.astype(np.float64) - reference.astype(np.float64))
        results[name] = {"max_abs_diff": float(np.nanmax(diff))}
        del out
        for _ in range(warmup - 1):
            fn(x)
    times = {name: [] for name in impls}
    for _ in range(repeats):
        for name, fn in impls.items():
            start = time.perf_counter()
            fn(x)
            times[name].append(time.perf_counter() - start)
    scipy_median = statistics.median(times["scipy"])
    for name in impls:
        median = statistics.median(times[name])
        results[name].update(
            median_s=median,
            min_s=min(times[name]),
            throughput_gb_s=2 * nbytes / median / 1e9,
            ratio_vs_scipy=scipy_median / median,
        )
    return {
        "function": function,
        "shape": [rows, cols],
        "dtype": dtype,
        "bytes": nbytes,
        "repeats": repeats,
        "results": results,
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=15, help="timed calls per implementation (large cases)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed calls first")
    parser.add_argument("--functions", default="softmax,log_softmax", help="comma-separated: softmax, log_softmax")
    parser.add_argument("--quick", action="store_true", help="smaller large case (1024 x 8192 float32 only)")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args(argv)
    functions = [f.strip() for f in args.functions.split(",") if f.strip()]
    for f in functions:
        if f not in ("softmax", "log_softmax"):
            parser.error(f"unknown function {f!r}")
    backends.set_backend("numpy")
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
            "torch_threads": None if torch is None else torch.get_num_threads(),
        },
        "throughput": "2 * input bytes / median time, GB/s (1e9)",
        "cases": [],
    }
    for function in functions:
        for i, (name, rows, cols, dtype, mult) in enumerate(QUICK_CASES if args.quick else CASES):
            case = _run_case(function, rows, cols, dtype, args.repeats * mult, max(1, args.warmup), seed=i)
            case["case"] = name
            report["cases"].append(case)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return report


if __name__ == "__main__":
    main()
