"""Tiny random models and tokenizers, built here and saved to a folder the tests load like a user's model.

Two tokenizers, both trained in a moment on a few sentences with the
``tokenizers`` library: a byte-level BPE (GPT-2, Qwen: a space is ``Ġ``, a
Chinese character a few byte tokens) and a SentencePiece-style BPE with a
``<s>`` BOS and byte fallback (Llama, Mistral: a space is ``▁``, an unseen
character ``<0xE7>`` tokens).  The weights are random with an initialiser
range large enough that attention is far from uniform, so a wrong scale or
a q taken before the rotary embedding shows as a big difference.
"""

from __future__ import annotations

from pathlib import Path

SENTENCES = [
    "the cat sat on the mat",
    "a dog ran in the park and the cat ran after it",
    "softmax turns scores into weights that sum to one",
    "attention weights come from softmax of the scores",
    "猫坐在垫子上",
    "注意力权重来自分数的 softmax",
]
INIT = 0.15


def byte_level_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    # 猫 is left unmerged on purpose (not in the merges' budget): it stays split into byte tokens
    trainer = trainers.BpeTrainer(vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<|endoftext|>"], show_progress=False)
    tok.train_from_iterator(SENTENCES, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", bos_token="<|endoftext|>")


def sentencepiece_tokenizer():
    """A BPE over ``▁``-marked words whose vocabulary also holds the 256 ``<0xNN>`` byte tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    words = [s for s in SENTENCES if s.isascii()]
    base = Tokenizer(models.BPE(unk_token="<unk>"))
    base.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    trainer = trainers.BpeTrainer(vocab_size=120, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False)
    base.train_from_iterator(words, trainer)
    learned = base.get_vocab()
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for piece, _ in sorted(learned.items(), key=lambda kv: kv[1]):
        vocab.setdefault(piece, len(vocab))
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m)
              for m in __import__("json").loads(base.to_str())["model"]["merges"]]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>")


def configs(vocab_byte: int, vocab_sp: int, positions: int = 128) -> dict:
    """name -> (config, tokenizer kind): 2 layers, 2-4 heads, a few dozen dimensions each."""
    from transformers import GPT2Config, GPTNeoXConfig, LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config

    small = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "max_position_embeddings": positions,
             "initializer_range": INIT}
    return {
        "gpt2": (GPT2Config(vocab_size=vocab_byte, n_positions=positions, n_embd=32, n_layer=2, n_head=4,
                            initializer_range=INIT, bos_token_id=0, eos_token_id=0), "byte"),
        # GPT-2's own per-layer scaling: 1/sqrt(d_k) / (layer + 1)
        "gpt2_layer_scaled": (GPT2Config(vocab_size=vocab_byte, n_positions=positions, n_embd=24, n_layer=2, n_head=2,
                                         initializer_range=INIT, bos_token_id=0, eos_token_id=0,
                                         scale_attn_by_inverse_layer_idx=True), "byte"),
        # computes its weights outside the attention function: shown, not recomputed
        "gpt2_upcast": (GPT2Config(vocab_size=vocab_byte, n_positions=positions, n_embd=16, n_layer=2, n_head=2,
                                   initializer_range=INIT, bos_token_id=0, eos_token_id=0,
                                   reorder_and_upcast_attn=True), "byte"),
        # grouped-query attention: 4 query heads share 2 key/value heads
        "llama": (LlamaConfig(vocab_size=vocab_sp, num_attention_heads=4, num_key_value_heads=2,
                              bos_token_id=1, eos_token_id=2, **small), "sp"),
        # one key/value head for all 4 query heads, with q/k/v biases
        "qwen2": (Qwen2Config(vocab_size=vocab_byte, num_attention_heads=4, num_key_value_heads=1,
                              bos_token_id=0, eos_token_id=0, **small), "byte"),
        # q and k normalised per head before the rotary embedding
        "qwen3": (Qwen3Config(vocab_size=vocab_byte, num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                              bos_token_id=0, eos_token_id=0, **small), "byte"),
        # a sliding window shorter than the prompts
        "mistral": (MistralConfig(vocab_size=vocab_sp, num_attention_heads=2, num_key_value_heads=1,
                                  sliding_window=4, bos_token_id=1, eos_token_id=2, **small), "sp"),
        "neox": (GPTNeoXConfig(vocab_size=vocab_byte, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                               num_attention_heads=4, max_position_embeddings=positions, initializer_range=INIT,
                               bos_token_id=0, eos_token_id=0), "byte"),
    }


def build_all(root: Path, names: tuple[str, ...] | None = None, positions: int = 128) -> dict[str, Path]:
    """Save the tiny models (all, or ``names``) with their tokenizers under ``root``; name -> folder."""
    import torch
    from transformers import AutoModelForCausalLM

    toks = {"byte": byte_level_tokenizer(), "sp": sentencepiece_tokenizer()}
    folders = {}
    for i, (name, (config, kind)) in enumerate(configs(len(toks["byte"]), len(toks["sp"]), positions).items()):
        if names is not None and name not in names:
            continue
        torch.manual_seed(1234 + i)
        model = AutoModelForCausalLM.from_config(config)
        folder = root / name
        model.save_pretrained(folder)
        toks[kind].save_pretrained(folder)
        folders[name] = folder
    return folders
