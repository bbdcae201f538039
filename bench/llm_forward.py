"""Seconds for one real-model attention pass (forward + q/k capture + the lab's recomputation), by prompt length.

Run from the repository root (needs the ``models`` extra)::

    python bench/llm_forward.py                     # the tiny test models, built here
    python bench/llm_forward.py --model gpt2        # ... and a real model (folder or cached id)
    python bench/llm_forward.py --repeats 3 --lengths 16 64

For each model and prompt length it times :func:`gui.model.llm.attention`
(the path the Attention view takes: tokenise, one forward pass with
``output_attentions`` while every layer's q, k and v are captured, then
``compute.attention`` per layer and the largest difference) and, beside it,
the model's own forward pass with ``output_attentions`` alone
(``forward_s``), so the cost of the capture and recomputation shows.  The
tiny models are those of tests/llm/builders.py (2 layers, 2-4 heads,
hidden size 32), built in a temporary folder with room for 256 positions.
The prompt repeats a sentence until it has the length asked for (the
token count reported is the real one).  Each figure is the median (and
the minimum, ``*_min_s``: on a busy machine the better guide) of
``--repeats`` calls after one warm-up.  ``max_abs_diff`` is the
recomputation's largest difference, so a fast wrong answer would show.

Prints one JSON document.  Nothing is asserted: it only measures.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SENTENCE = "the cat sat on the mat and the dog ran in the park "


def prompt_of(model, n: int) -> str:
    """A prompt of about ``n`` tokens for this model's tokenizer (never more)."""
    words = (SENTENCE * (n // 4 + 8)).split(" ")
    lo, hi = 1, len(words)
    while lo < hi:  # the most words whose tokens still fit in n
        mid = (lo + hi + 1) // 2
        if len(model.tokenizer(" ".join(words[:mid]))["input_ids"]) <= n:
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo])


def seconds(fn, repeats: int) -> tuple[float, float]:
    """(median, min) seconds of ``repeats`` calls after one warm-up."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)


def bench_model(label: str, model, lengths: list[int], repeats: int) -> dict:
    import torch

    from gui.model import llm

    rows = {}
    for n in lengths:
        n = min(n, llm.MAX_PROMPT_TOKENS, model.context or n)
        prompt = prompt_of(model, n)
        result = llm.attention(model, prompt)
        ids = torch.tensor([list(result.ids)])

        def own_forward(ids=ids):
            with torch.inference_mode():
                model.model(input_ids=ids, output_attentions=True, use_cache=False)

        attention_s, attention_min = seconds(lambda p=prompt: llm.attention(model, p), repeats)
        forward_s, forward_min = seconds(own_forward, repeats)
        rows[str(result.n_tokens)] = {
            "attention_s": attention_s, "attention_min_s": attention_min,
            "forward_s": forward_s, "forward_min_s": forward_min,
            "max_abs_diff": result.max_abs_diff,
        }
    return {"model": label, "architecture": model.architecture, "layers": model.n_layers, "heads": model.n_heads,
            "head_dim": model.head_dim, "by_prompt_tokens": rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", default=[], help="a model folder or id (repeatable)")
    parser.add_argument("--lengths", type=int, nargs="+", default=[8, 32, 64, 128, 256])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--tiny", nargs="*", default=["gpt2", "llama"], help="tiny test models to build")
    args = parser.parse_args()

    from gui.model import llm

    reason = llm.unavailable_reason()
    if reason is not None:
        print(json.dumps({"error": reason}))
        return 1
    import torch
    import transformers

    from tests.llm.builders import build_all

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, folder in build_all(Path(tmp), tuple(args.tiny), positions=256).items():
            results.append(bench_model(f"tiny {name}", llm.load(str(folder)), args.lengths, args.repeats))
        for source in args.model:
            results.append(bench_model(source, llm.load(source), args.lengths, args.repeats))
    print(json.dumps({
        "command": "python bench/llm_forward.py " + " ".join(sys.argv[1:]),
        "torch": torch.__version__, "transformers": transformers.__version__,
        "torch_threads": torch.get_num_threads(), "python": platform.python_version(),
        "machine": platform.machine(), "repeats": args.repeats, "results": results,
    }, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
