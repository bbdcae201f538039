"""What goes wrong is a ModelError with one line that says what to do; the app starts without the extra."""

import json
import shutil
import subprocess
import sys

import pytest

from gui.model import llm
from gui.model.llm import _attention, _env, _loading
from gui.model.texts import set_language
from tests.conftest import ROOT


def one_line(exc_info) -> str:
    text = str(exc_info.value)
    assert "\n" not in text and text.strip() == text and text
    return text


@pytest.fixture
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_a_missing_folder_says_so(tmp_path):
    with pytest.raises(llm.ModelError) as e:
        llm.load(str(tmp_path / "no" / "such" / "model"))
    assert "There is no folder" in one_line(e) and "model id" in one_line(e)


def test_a_folder_without_a_model_says_what_a_model_folder_holds(tmp_path):
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(llm.ModelError) as e:
        llm.load(str(tmp_path))
    assert "holds no model" in one_line(e) and "config.json" in one_line(e)


def test_a_config_without_weights_and_an_unreadable_file_give_the_cause(tmp_path, model_dirs):
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(model_dirs["gpt2"] / "config.json", bare / "config.json")
    with pytest.raises(llm.ModelError) as e:
        llm.load(str(bare))
    assert one_line(e).startswith("Could not load the model")
    broken = tmp_path / "broken"
    shutil.copytree(model_dirs["gpt2"], broken)
    (broken / "model.safetensors").write_bytes(b"this is not a safetensors file")
    with pytest.raises(llm.ModelError) as e:
        llm.load(str(broken))
    assert one_line(e).startswith("Could not load the model")
    garbled = tmp_path / "garbled"
    shutil.copytree(model_dirs["gpt2"], garbled)
    (garbled / "config.json").write_text("{ not json")
    with pytest.raises(llm.ModelError) as e:
        llm.load(str(garbled))
    assert one_line(e).startswith("Could not load the model")


def test_a_model_that_is_not_a_causal_lm_is_refused(tmp_path):
    from transformers import BertConfig

    folder = tmp_path / "bert"
    cfg = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=32, architectures=["BertForMaskedLM"])
    cfg.save_pretrained(folder)
    with pytest.raises(llm.ModelError) as e:
        llm.load(str(folder))
    assert "not a causal language model" in one_line(e) and "BertForMaskedLM" in one_line(e)


def test_an_unknown_id_offline_says_to_download_it_elsewhere_or_give_a_folder(offline, tmp_path):
    with pytest.raises(llm.ModelError) as e:
        llm.load("softmax-lab-tests/no-such-model", cache_dir=str(tmp_path / "hub"))
    text = one_line(e)
    assert "softmax-lab-tests/no-such-model" in text and "cache" in text and "folder" in text


def test_without_a_network_an_unknown_id_is_not_downloaded(monkeypatch, tmp_path):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(_loading, "_hub_reachable", lambda timeout=3.0: False)
    with pytest.raises(llm.ModelError, match="not in the local Hugging Face cache"):
        llm.load("softmax-lab-tests/another-missing-model", cache_dir=str(tmp_path / "hub"))


def test_an_id_is_found_in_the_local_cache_offline_and_loaded_once(offline, tmp_path, model_dirs):
    snapshot = tmp_path / "hub" / "models--softmax-lab--tiny-gpt2" / "snapshots" / "0123abcd"
    shutil.copytree(model_dirs["gpt2"], snapshot)
    (tmp_path / "hub" / "models--softmax-lab--tiny-gpt2" / "refs").mkdir()
    (tmp_path / "hub" / "models--softmax-lab--tiny-gpt2" / "refs" / "main").write_text("0123abcd")
    m = llm.load("softmax-lab/tiny-gpt2", cache_dir=str(tmp_path / "hub"))
    assert m.source == "softmax-lab/tiny-gpt2" and m.architecture == "gpt2" and m.n_layers == 2
    assert llm.load(" softmax-lab/tiny-gpt2 ", cache_dir=str(tmp_path / "hub")) is m
    assert llm.attention(m, "the cat").recomputed
    llm.forget("softmax-lab/tiny-gpt2")
    assert llm.load("softmax-lab/tiny-gpt2", cache_dir=str(tmp_path / "hub")) is not m


def test_prompts_and_limits(loaded, monkeypatch):
    m = loaded["gpt2"]
    with pytest.raises(llm.ModelError, match="The prompt is empty"):
        llm.attention(m, "")
    with pytest.raises(llm.ModelError, match="more than the 256 allowed"):
        llm.attention(m, "cat " * 300)
    with pytest.raises(llm.ModelError, match=r"more than gpt2 reads \(128 tokens at most\)"):
        llm.next_token(m, "cat " * 200)
    with pytest.raises(llm.ModelError, match="0 to 64 tokens"):
        llm.generate(m, "the cat", llm.MAX_GENERATE_TOKENS + 1)
    with pytest.raises(llm.ModelError, match=r"Token id 100000 is not in the vocabulary \(0 to 299\)"):
        llm.choose(m, "the cat", 100000)
    monkeypatch.setattr(_attention, "MAX_LAYERS", 1)
    with pytest.raises(llm.ModelError, match=r"2 layers × 4 heads; the attention view shows at most 1 × 64"):
        llm.attention(m, "the cat")


def test_messages_follow_the_language(tmp_path):
    set_language("zh")
    with pytest.raises(llm.ModelError) as e:
        llm.load(str(tmp_path / "missing"))
    assert "文件夹" in one_line(e) and "不存在" in one_line(e)


def test_unavailable_reason_is_none_here_and_names_the_extra_when_torch_is_hidden(monkeypatch):
    assert llm.unavailable_reason() is None
    real = _env._import

    def hide_torch(name):
        if name == "torch":
            raise ImportError("No module named 'torch'")
        return real(name)

    monkeypatch.setattr(_env, "_import", hide_torch)
    reason = llm.unavailable_reason()
    assert reason is not None and "\n" not in reason
    assert "pip install 'softmax-lab[models]'" in reason and "torch" in reason
    with pytest.raises(llm.ModelError) as e:
        llm.load("gpt2")
    assert str(e.value) == reason


def test_the_package_imports_without_torch_transformers_or_qt():
    code = (
        "import sys\n"
        "sys.modules['torch'] = None\n"  # import torch now raises ImportError, as if it were not installed
        "from gui.model import llm\n"
        "reason = llm.unavailable_reason()\n"
        "loaded = [m for m in ('torch', 'transformers', 'PySide6') if sys.modules.get(m) is not None]\n"
        "import json; print(json.dumps([reason, loaded]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                         env={"SOFTMAX_LAB_LANG": "en", "PATH": ""})
    assert out.returncode == 0, out.stderr
    reason, loaded = json.loads(out.stdout)
    assert loaded == []
    assert reason.startswith("Real models need PyTorch, transformers") and "softmax-lab[models]" in reason


def test_a_file_instead_of_a_folder_is_refused(tmp_path):
    weights = tmp_path / "model.gguf"
    weights.write_bytes(b"GGUF")
    with pytest.raises(llm.ModelError) as e:
        llm.load(str(weights))
    assert "is a file, not a model folder" in one_line(e)


def test_a_checkpoint_missing_weights_is_refused_not_filled_with_random_ones(tmp_path, model_dirs):
    from transformers import AutoConfig, LlamaModel

    config = AutoConfig.from_pretrained(model_dirs["llama"])  # lm_head not tied to the embedding
    body = LlamaModel(config)  # the transformer without its LM head
    folder = tmp_path / "headless"
    body.save_pretrained(folder)
    config.architectures = ["LlamaForCausalLM"]
    config.save_pretrained(folder)
    shutil.copy(model_dirs["llama"] / "tokenizer.json", folder / "tokenizer.json")
    with pytest.raises(llm.ModelError) as e:
        llm.load(str(folder))
    assert "lacks 1 of the model's weights (lm_head.weight)" in one_line(e)
