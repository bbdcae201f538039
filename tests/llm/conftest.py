"""The real-model tests need the ``models`` extra; without it they are skipped, and the suite still passes.

The tiny models are built once per session (tests/llm/builders.py) into a
temporary folder and loaded through :func:`gui.model.llm.load`, the path a
user's folder takes.
"""

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

#: The architectures whose attention the lab recomputes, as built by builders.configs.
RECOMPUTED = ("gpt2", "gpt2_layer_scaled", "llama", "qwen2", "qwen3", "mistral")
PROMPT = "the cat sat on the mat 猫"


@pytest.fixture(scope="session")
def model_dirs(tmp_path_factory):
    from tests.llm.builders import build_all

    return build_all(tmp_path_factory.mktemp("tiny-models"))


@pytest.fixture(scope="session")
def hf_models(model_dirs):
    """name -> the model as transformers itself loads it (the reference), eager and float32."""
    import torch
    from transformers import AutoModelForCausalLM

    out = {}
    for name, folder in model_dirs.items():
        m = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32)
        out[name] = m.eval()
    return out


@pytest.fixture(scope="session")
def loaded(model_dirs):
    """name -> LoadedModel, through the lab's own loader."""
    from gui.model import llm

    return {name: llm.load(str(folder)) for name, folder in model_dirs.items()}
