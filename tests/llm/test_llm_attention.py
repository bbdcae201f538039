"""A real model's attention: the model's own weights, and the lab's recomputation of them from captured q and k.

The reference is transformers itself: the same folder loaded with
``AutoModelForCausalLM`` and run with ``output_attentions``; q before the
rotary embedding comes from a hook on the model's own ``q_proj``.
"""

import codecs

import numpy as np
import pytest
import torch

import compute
from gui.model import llm
from tests.llm.conftest import PROMPT, RECOMPUTED


def reference_attentions(hf_model, ids):
    with torch.no_grad():
        out = hf_model(input_ids=torch.tensor([list(ids)]), output_attentions=True)
    return np.stack([a[0].numpy() for a in out.attentions])


def piece_bytes(pieces):
    """The UTF-8 bytes the pieces stand for (a piece writes a lone byte as \\xNN)."""
    return b"".join(codecs.escape_decode(p.encode("utf-8"))[0] for p in pieces)


@pytest.mark.parametrize("name", [*RECOMPUTED, "gpt2_upcast", "neox"])
def test_weights_are_the_models_own_with_shape_rows_summing_to_one_and_causal_zeros(name, loaded, hf_models):
    m = loaded[name]
    a = llm.attention(m, PROMPT)
    n = len(a.ids)
    assert a.weights.dtype == np.float32
    assert a.weights.shape == (hf_models[name].config.num_hidden_layers, m.n_heads, n, n)
    assert a.n_layers == 2 and a.n_tokens == n == len(a.tokens) == len(a.pieces)
    np.testing.assert_array_equal(a.weights, reference_attentions(hf_models[name], a.ids))
    np.testing.assert_allclose(a.weights.sum(axis=-1), 1.0, atol=1e-6)
    upper = np.triu(np.ones((n, n), dtype=bool), k=1)
    assert (a.weights[..., upper] == 0).all()
    assert (a.weights[..., ~upper] > 0).any()


@pytest.mark.parametrize("name", RECOMPUTED)
def test_the_labs_recomputation_matches_every_layer_and_head_within_1e_5(name, loaded):
    a = llm.attention(loaded[name], PROMPT)
    assert a.recomputed
    assert a.recompute_max_abs_diff.shape == (a.n_layers,)
    assert (a.recompute_max_abs_diff < 1e-5).all(), a.recompute_max_abs_diff
    # independently of the stored differences: each head recomputed here from the captured q, k, v
    for layer in range(a.n_layers):
        for head in range(a.n_heads):
            w, _ = compute.attention(a.q[layer, head], a.k[layer, head], a.v[layer, head],
                                     scale=float(a.scale[layer]), mask=a.mask[layer])
            assert np.max(np.abs(w - a.weights[layer, head])) < 1e-5
    assert f"{a.max_abs_diff:.1e}" in a.note


@pytest.mark.parametrize("name", ["llama", "qwen3"])
def test_the_check_is_not_vacuous_a_wrong_scale_or_unrotated_q_misses_by_far(name, loaded, hf_models):
    m = loaded[name]
    a = llm.attention(m, PROMPT)
    wrong_scale, _ = compute.attention(a.q[0], a.k[0], a.v[0], scale=1.5 * float(a.scale[0]), causal=True)
    assert np.max(np.abs(wrong_scale - a.weights[0])) > 1e-3
    # q straight out of q_proj (before any norm and the rotary embedding), from a hook on the reference
    seen = {}
    proj = hf_models[name].model.layers[0].self_attn.q_proj
    handle = proj.register_forward_hook(lambda mod, inp, out: seen.setdefault("q", out))
    try:
        reference_attentions(hf_models[name], a.ids)
    finally:
        handle.remove()
    n, d = a.n_tokens, m.head_dim
    raw_q = seen["q"][0].reshape(n, m.n_heads, d).transpose(0, 1).numpy()
    if name == "llama":  # no q norm: position 0 is turned by angle 0, every later position is turned
        np.testing.assert_allclose(a.q[0, :, 0], raw_q[:, 0], rtol=1e-5, atol=1e-6)
        assert np.max(np.abs(a.q[0, :, 1:] - raw_q[:, 1:])) > 1e-2
    unrotated, _ = compute.attention(raw_q, a.k[0], a.v[0], scale=float(a.scale[0]), causal=True)
    assert np.max(np.abs(unrotated - a.weights[0])) > 1e-3


def test_grouped_query_attention_keys_are_repeated_per_group(loaded):
    a = llm.attention(loaded["llama"], PROMPT)  # 4 query heads, 2 key/value heads
    assert a.k.shape == a.q.shape == (2, 4, a.n_tokens, 8)
    np.testing.assert_array_equal(a.k[:, 0], a.k[:, 1])
    np.testing.assert_array_equal(a.v[:, 2], a.v[:, 3])
    assert np.max(np.abs(a.k[:, 1] - a.k[:, 2])) > 1e-3
    q1 = llm.attention(loaded["qwen2"], PROMPT)  # one key/value head for all four
    assert all(np.array_equal(q1.k[:, 0], q1.k[:, h]) for h in range(4))


def test_gpt2_layer_scaling_is_the_models_own(loaded):
    a = llm.attention(loaded["gpt2_layer_scaled"], PROMPT)  # head_dim 12, scale / (layer + 1)
    np.testing.assert_allclose(a.scale, [12 ** -0.5, 12 ** -0.5 / 2], rtol=1e-12)
    assert (a.recompute_max_abs_diff < 1e-5).all()


def test_the_sliding_window_is_masked_where_the_model_masks_it(loaded):
    a = llm.attention(loaded["mistral"], PROMPT)  # window 4 < n
    n = a.n_tokens
    i, j = np.indices((n, n))
    np.testing.assert_array_equal(a.mask[0], (j <= i) & (i - j < 4))
    assert (a.weights[..., i - j >= 4] == 0).all()
    assert (a.recompute_max_abs_diff < 1e-5).all()


def test_unsupported_architectures_show_their_weights_and_say_why_not(loaded):
    neox = llm.attention(loaded["neox"], PROMPT)
    assert not neox.recomputed and neox.q is None and np.isnan(neox.recompute_max_abs_diff).all()
    assert "gpt_neox" in neox.note and "Llama" in neox.note
    upcast = llm.attention(loaded["gpt2_upcast"], PROMPT)  # weights computed outside the attention function
    assert not upcast.recomputed and "could not be captured" in upcast.note


def test_tokens_are_the_decoded_pieces_made_readable(loaded):
    gpt2 = llm.attention(loaded["gpt2"], PROMPT)
    assert piece_bytes(gpt2.pieces) == PROMPT.encode("utf-8")  # byte-level pieces, 猫 split into bytes
    assert "·cat" in gpt2.tokens and not any("Ġ" in t or "\ufffd" in t for t in gpt2.tokens)
    assert any(t.startswith("\\x") for t in gpt2.tokens)
    llama = llm.attention(loaded["llama"], PROMPT)  # SentencePiece-style, a BOS, byte fallback for 猫
    assert llama.pieces[0] == "<s>" and llama.ids[0] == 1
    assert piece_bytes(llama.pieces[1:]) == (" " + PROMPT).encode("utf-8")
    assert llama.tokens[1] == "·the" and not any("▁" in t for t in llama.tokens)
    assert llm.readable(" a\tb\n") == "·a⇥b↵"


def test_the_generator_yields_progress_and_a_second_prompt_reuses_the_model(loaded, model_dirs):
    steps = llm.attention_steps(loaded["gpt2"], "the cat")
    fractions = []
    while True:
        try:
            fractions.append(next(steps))
        except StopIteration as stop:
            result = stop.value
            break
    assert fractions[0] == 0.0 and fractions[-1] == 1.0 and fractions == sorted(fractions)
    assert result.n_tokens == len(result.ids)
    assert llm.load(str(model_dirs["gpt2"])) is loaded["gpt2"]
