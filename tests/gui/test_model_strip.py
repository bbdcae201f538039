"""The shared real-model pieces without a model: text parameters, the model source's bookkeeping, the strip.

No torch needed: ``llm.load`` is replaced by a stand-in, so these run
whether or not the models extra is installed.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import pytest
from psygnal import evented
from PySide6.QtCore import Qt

from gui.model import llm, llm_source
from gui.model.base import ViewModel, drain, text_param
from gui.model.llm_source import LOAD_SHARE, ModelSource, Request
from gui.widgets.model_strip import ModelStrip


@evented
@dataclass
class _Texts(ViewModel):
    name = "texts"
    prompt: str = text_param("hello", max_length=10)


def test_a_text_param_takes_any_string_up_to_its_length_and_nothing_else():
    m = _Texts()
    assert m.params()["prompt"].kind == "text"
    m.set_param("prompt", "猫坐在垫子上")
    assert m.prompt == "猫坐在垫子上"
    for bad in (3, None, b"bytes", "x" * 11):
        with pytest.raises(ValueError):
            m.set_param("prompt", bad)
    assert m.prompt == "猫坐在垫子上"
    m.update_from_dict({"prompt": ""})
    assert m.to_dict() == {"prompt": ""}
    with pytest.raises(ValueError):
        text_param("too long", max_length=3)


def test_the_command_line_offers_text_params_as_text_options():
    import argparse

    from gui.cli import _add_param_option

    parser = argparse.ArgumentParser()
    for name in ("model", "prompt"):
        _add_param_option(parser, name, [("texts", _Texts.params()["prompt"])])
    actions = {a.dest: a for a in parser._actions}
    assert actions["model"].metavar == actions["prompt"].metavar == "TEXT"
    assert "10 characters" in actions["prompt"].help
    assert parser.parse_args(["--prompt", "猫 sat"]).prompt == "猫 sat"


class _Fake:
    name = "fake"


def _fake_load(monkeypatch, fail: set[str] = frozenset()):
    loads = []

    def load(source):
        loads.append(source)
        if source in fail:
            raise llm.ModelError(f"no model {source}")
        return SimpleNamespace(name=f"name of {source}")

    monkeypatch.setattr(llm, "load", load)
    return loads


def _count(loaded, prompt):
    yield 0.5
    return (loaded.name, len(prompt))


def test_steps_load_then_compute_with_progress_and_turn_model_errors_into_outcomes(monkeypatch):
    loads = _fake_load(monkeypatch, fail={"missing"})
    source = ModelSource(_count)
    steps = source.steps(Request(" tiny ", "abc"))
    fractions = []
    while True:
        try:
            fractions.append(next(steps))
        except StopIteration as stop:
            outcome = stop.value
            break
    assert loads == ["tiny"]  # the model field is stripped
    assert fractions == [0.0, LOAD_SHARE, LOAD_SHARE + (1 - LOAD_SHARE) * 0.5, 1.0]
    assert outcome.ok and outcome.result == ("name of tiny", 3) and outcome.name == "name of tiny"
    assert source.outcome(Request("tiny", "abc")) is None  # steps keep nothing: store does
    bad = drain(source.steps(Request("missing", "abc")))
    assert not bad.ok and bad.error == "no model missing" and bad.result is None
    # a plain function works as well as a generator
    plain = ModelSource(lambda loaded, prompt: prompt.upper())
    assert drain(plain.steps(Request("tiny", "abc"))).result == "ABC"


def test_store_keeps_a_few_outcomes_and_the_latest_good_one(monkeypatch):
    _fake_load(monkeypatch, fail={"missing"})
    source = ModelSource(_count)
    first = source.run_now(Request("a", "1"))
    assert source.latest is first and source.result(Request("a", "1")) == ("name of a", 1)
    assert source.run_now(Request("a", "1")) is first  # kept: not run again
    failed = source.run_now(Request("missing", "1"))
    assert source.latest is first and source.outcome(Request("missing", "1")) is failed
    assert source.result(Request("missing", "1")) is None
    for i in range(llm_source.KEEP + 1):
        source.run_now(Request("b", str(i)))
    assert source.outcome(Request("a", "1")) is None  # the oldest went
    assert source.latest.request == Request("b", str(llm_source.KEEP))
    source.forget(Request("b", "0"))
    assert source.outcome(Request("b", "0")) is None


def test_check_model_refuses_missing_folders_and_files_at_once(tmp_path):
    assert llm_source.check_model("  gpt2 ") == "gpt2"
    assert llm_source.check_model("Qwen/Qwen2.5-0.5B") == "Qwen/Qwen2.5-0.5B"
    assert llm_source.check_model("") == ""
    with pytest.raises(ValueError, match="no folder"):
        llm_source.check_model(str(tmp_path / "gone"))
    (tmp_path / "file.bin").write_bytes(b"x")
    with pytest.raises(ValueError, match="is a file"):
        llm_source.check_model(str(tmp_path / "file.bin"))
    with pytest.raises(ValueError, match="holds no model"):
        llm_source.check_model(str(tmp_path))
    (tmp_path / "config.json").write_text("{}")
    assert llm_source.check_model(str(tmp_path)) == str(tmp_path)


def test_cached_model_ids_reads_the_hub_cache_folders(tmp_path, monkeypatch):
    for name in ("models--gpt2", "models--Qwen--Qwen2.5-0.5B", "datasets--x--y"):
        (tmp_path / name).mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    assert llm_source.cached_model_ids() == ["Qwen/Qwen2.5-0.5B", "gpt2"]
    assert llm_source.cached_model_ids(tmp_path / "none") == []


def test_unavailable_reason_does_not_import_torch_to_ask(monkeypatch):
    import sys

    monkeypatch.setattr(llm, "unavailable_reason", lambda: "missing: pip install 'softmax-lab[models]'")
    monkeypatch.setattr(llm_source.importlib.util, "find_spec", lambda name: None)
    assert "softmax-lab[models]" in llm_source.unavailable_reason()
    monkeypatch.setattr(llm_source.importlib.util, "find_spec", lambda name: object())
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    assert llm_source.unavailable_reason() is None  # installed, not imported: not asked yet
    assert llm_source.unavailable_reason(import_now=True) is not None


def test_the_strip_asks_for_runs_and_says_why_it_is_disabled(qtbot):
    strip = ModelStrip(prompt_tooltip="at most 4 tokens")
    qtbot.addWidget(strip)
    asked = []
    strip.run_requested.connect(lambda m, p: asked.append((m, p)))
    strip.set_values("tiny", "猫坐在\n垫子上")
    assert asked == [] and strip.values() == ("tiny", "猫坐在\n垫子上")
    qtbot.mouseClick(strip.run_button, Qt.MouseButton.LeftButton)
    qtbot.keyClick(strip.prompt_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert asked == [("tiny", "猫坐在\n垫子上")] * 2
    assert strip.prompt_edit.toolTip() == "at most 4 tokens"
    strip.tell("no such folder", error=True)
    assert strip.message == "no such folder"
    strip.set_unavailable("needs torch: pip install 'softmax-lab[models]'")
    assert not strip.run_button.isEnabled() and not strip.model_edit.isEnabled()
    assert "softmax-lab[models]" in strip.message
    strip.run()
    assert len(asked) == 2
    strip.set_unavailable(None)
    assert strip.run_button.isEnabled() and strip.message == ""
