"""Time compute.sampling at GPT-2 and large vocabulary sizes.

Run from the repository root::

    python bench/sampling_bench.py               # V = 50,257 and 200,000
    python bench/sampling_bench.py --repeat 50

For each vocabulary size ``V`` a Zipf-like row (:func:`compute.sampling.zipf_logits`,
seed 0) is filtered with several knob settings, and sampled with
``n = 1,000,000`` draws (inverse CDF, with and without top-k), Gumbel-max
with ``n = 10,000`` over a top-k=50 support, and the temperature curves at
100 temperatures.  Each entry is the median wall time in milliseconds over
``--repeat`` runs (after one warm-up run).

Prints one JSON document to stdout.  Nothing is asserted: it only measures.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compute import (  # noqa: E402
    filter_probs,
    gumbel_max_sample,
    sample,
    sample_counts,
    sampling_curves,
    zipf_logits,
)


def median_ms(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return round(statistics.median(times), 3)


def bench_size(v: int, repeat: int) -> dict[str, float]:
    """Median times (ms) at vocabulary size ``v``."""
    temps = np.geomspace(0.05, 5, 100)
    x = zipf_logits(v)
    x32 = x.astype(np.float32)
    few = max(3, repeat // 5)
    r = {
        "filter_probs T=1 (no cut)": median_ms(lambda: filter_probs(x), repeat),
        "filter_probs T=0.8 top_k=50": median_ms(lambda: filter_probs(x, 0.8, top_k=50), repeat),
        "filter_probs top_p=0.9": median_ms(lambda: filter_probs(x, top_p=0.9), repeat),
        "filter_probs T=0.7 top_p=0.9": median_ms(lambda: filter_probs(x, 0.7, top_p=0.9), repeat),
        "filter_probs top_p=0.5": median_ms(lambda: filter_probs(x, top_p=0.5), repeat),
        "filter_probs min_p=0.05": median_ms(lambda: filter_probs(x, min_p=0.05), repeat),
        "filter_probs T=0.8 top_k=50 top_p=0.9 min_p=0.05": median_ms(
            lambda: filter_probs(x, 0.8, top_k=50, top_p=0.9, min_p=0.05), repeat
        ),
        "filter_probs float32 top_p=0.9": median_ms(lambda: filter_probs(x32, top_p=0.9), repeat),
        "sample n=1e6 (no cut)": median_ms(lambda: sample(x, 1_000_000, 0), few),
        "sample n=1e6 top_k=50": median_ms(lambda: sample(x, 1_000_000, 0, top_k=50), few),
        "sample_counts n=1e6 (no cut)": median_ms(lambda: sample_counts(x, 1_000_000, 0), few),
        "gumbel_max_sample n=1e4 top_k=50": median_ms(
            lambda: gumbel_max_sample(x, 10_000, 0, top_k=50), few
        ),
        "gumbel_max_sample n=100 (no cut)": median_ms(lambda: gumbel_max_sample(x, 100, 0), few),
        "sampling_curves 100 temperatures": median_ms(lambda: sampling_curves(x, temps), few),
    }
    return r


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--sizes", type=int, nargs="+", default=[50_257, 200_000])
    args = parser.parse_args()
    out: dict = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "repeat": args.repeat,
        "unit": "ms (median)",
        "results": {},
    }
    for v in args.sizes:
        out["results"][str(v)] = bench_size(v, args.repeat)
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
