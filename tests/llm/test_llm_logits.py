"""Next-token logits against the model's own forward pass, and generation against transformers' processors."""

import numpy as np
import pytest
import torch
from transformers import (
    LogitsProcessorList,
    MinPLogitsWarper,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

import compute
from gui.model import llm

PROMPT = "the cat sat on"
KNOBS = [
    {"temperature": 1.0},
    {"temperature": 0.7, "top_k": 10},
    {"temperature": 1.3, "top_p": 0.8},
    {"temperature": 1.0, "min_p": 0.05},
    {"temperature": 0.5, "top_k": 50, "top_p": 0.9, "min_p": 0.02},
]


def hf_filtered(logits, temperature=1.0, top_k=None, top_p=None, min_p=None):
    """The distribution transformers' generate samples from: its own processors, in its own order."""
    procs = LogitsProcessorList()
    if temperature != 1.0:
        procs.append(TemperatureLogitsWarper(temperature))
    if top_k is not None:
        procs.append(TopKLogitsWarper(top_k))
    if top_p is not None:
        procs.append(TopPLogitsWarper(top_p))
    if min_p is not None:
        procs.append(MinPLogitsWarper(min_p))
    scores = procs(torch.zeros((1, 1), dtype=torch.long), torch.tensor(logits, dtype=torch.float64)[None])
    return torch.softmax(scores, dim=-1)[0].numpy()


def reference_logits(hf_model, ids):
    with torch.no_grad():
        return hf_model(input_ids=torch.tensor([list(ids)])).logits[0, -1].double().numpy()


@pytest.mark.parametrize("name", ["gpt2", "llama", "qwen2"])
def test_logits_are_the_models_own_forward(name, loaded, hf_models):
    nt = llm.next_token(loaded[name], PROMPT)
    assert nt.logits.dtype == np.float64 and nt.logits.shape == (loaded[name].vocab_size,)
    ref = reference_logits(hf_models[name], nt.ids)
    np.testing.assert_allclose(nt.logits, ref, rtol=0, atol=1e-5)
    assert np.argmax(nt.logits) == np.argmax(ref)
    assert len(nt.tokens) == nt.logits.size and nt.context[-1] == "·on"
    cont = llm.next_token(loaded[name], PROMPT, continuation=[5, 7])
    np.testing.assert_allclose(cont.logits, reference_logits(hf_models[name], [*nt.ids, 5, 7]), atol=1e-5)


def test_the_token_strings_are_readable_pieces(loaded):
    m = loaded["gpt2"]
    tokens = llm.next_token(m, PROMPT).tokens
    assert tokens[m.tokenizer.convert_tokens_to_ids("Ġcat")] == "·cat"
    assert tokens[m.tokenizer.convert_tokens_to_ids("<|endoftext|>")] == "<|endoftext|>"
    assert not any("Ġ" in t for t in tokens)
    sp = loaded["llama"]
    sp_tokens = llm.next_token(sp, PROMPT).tokens
    assert sp_tokens[sp.tokenizer.convert_tokens_to_ids("<0x0A>")] == "↵"
    assert sp_tokens[sp.tokenizer.convert_tokens_to_ids("<0xE7>")] == "\\xe7"


@pytest.mark.parametrize("knob", KNOBS, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
def test_the_filtered_distribution_equals_transformers_logits_processors(knob, loaded):
    logits = llm.next_token(loaded["gpt2"], PROMPT).logits
    ours = compute.filter_probs(logits, **llm.knobs(**knob))
    theirs = hf_filtered(logits, **knob)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
    assert (ours > 0).sum() == (theirs > 0).sum()
    if len(knob) > 1:
        assert 0 < (ours > 0).sum() < logits.size  # the knobs really cut something


@pytest.mark.parametrize("knob", KNOBS[1:], ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
def test_each_generated_token_has_the_probability_transformers_gives_it(knob, loaded):
    m = loaded["qwen2"]
    g = llm.generate(m, PROMPT, 6, seed=11, **knob)
    for step in g.steps:
        logits = llm.next_token(m, PROMPT, continuation=g.ids[:step.position]).logits
        p = hf_filtered(logits, **knob)
        assert p[step.token_id] > 0 and step.kept and not step.chosen
        assert step.probability == pytest.approx(p[step.token_id], abs=1e-12)
        assert step.rank == 1 + int(np.sum(logits > logits[step.token_id]))
        assert step.logit == logits[step.token_id]


def test_generation_is_reproducible_by_seed_and_the_same_at_once_or_in_parts(loaded):
    m = loaded["gpt2"]
    a = llm.generate(m, PROMPT, 6, seed=3, temperature=1.2)
    b = llm.generate(m, PROMPT, 6, seed=3, temperature=1.2)
    assert a.ids == b.ids and len(a.steps) == 6
    assert [s.position for s in a.steps] == list(range(6))
    others = {llm.generate(m, PROMPT, 6, seed=s, temperature=1.2).ids for s in (4, 5, 6)}
    assert len(others | {a.ids}) > 1
    first = llm.generate(m, PROMPT, 2, seed=3, temperature=1.2)
    rest = llm.generate(m, PROMPT, 4, seed=3, temperature=1.2, continuation=first.ids)
    assert rest.ids == a.ids and [s.position for s in rest.steps] == [2, 3, 4, 5]
    assert a.text == m.tokenizer.decode(list(a.ids))


def test_the_draws_follow_the_filtered_distribution(loaded):
    """Many one-token generations (one per seed) against the filtered distribution, by chi-square."""
    m = loaded["gpt2"]
    knob = {"temperature": 1.0, "top_k": 5}
    p = hf_filtered(llm.next_token(m, PROMPT).logits, **knob)
    seeds = range(400)
    drawn = [llm.generate(m, PROMPT, 1, seed=s, **knob).steps[0].token_id for s in seeds]
    kept = np.flatnonzero(p > 0)
    assert set(drawn) <= set(kept)
    counts = np.array([drawn.count(int(i)) for i in kept])
    _, _, p_value = compute.chi_square_test(counts, p[kept] * len(drawn))
    assert p_value > 1e-4


def test_a_chosen_token_gets_its_probability_and_rank_and_the_strip_goes_on_from_it(loaded):
    m = loaded["llama"]
    logits = llm.next_token(m, PROMPT).logits
    worst = int(np.argmin(logits))
    step = llm.choose(m, PROMPT, worst, top_k=10)
    assert step.chosen and not step.kept and step.probability == 0.0 and step.position == 0
    assert step.rank == 1 + int(np.sum(logits > logits[worst]))
    best = llm.choose(m, PROMPT, int(np.argmax(logits)), top_k=10)
    assert best.rank == 1 and best.probability == pytest.approx(hf_filtered(logits, top_k=10).max(), abs=1e-12)
    on = llm.generate(m, PROMPT, 2, seed=1, continuation=[worst])
    assert on.ids[0] == worst and [s.position for s in on.steps] == [1, 2]
